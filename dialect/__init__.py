"""The vocabulary every pass shares: meshes, sharding specs, tile maps, ``alpa`` ops."""

from .context import make_context
from .mesh import DeviceMesh, MeshError, PhysicalCluster
from .sharding import (
    Maximal,
    Replicated,
    ShardingError,
    ShardingSpec,
    TiledSharding,
    format_mhlo_sharding,
    parse_mhlo_sharding,
    spec_from_sharding,
)
from .tile_map import tile_map

__all__ = [
    "DeviceMesh",
    "Maximal",
    "MeshError",
    "PhysicalCluster",
    "Replicated",
    "ShardingError",
    "ShardingSpec",
    "TiledSharding",
    "format_mhlo_sharding",
    "make_context",
    "parse_mhlo_sharding",
    "spec_from_sharding",
    "tile_map",
]
