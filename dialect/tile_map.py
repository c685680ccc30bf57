"""Tile maps: which slice of the global tensor each device holds (the paper's Table 1).

Dimensions that do not divide by their number of shards follow XLA's rule: every
shard has ``ceil(size / shards)`` elements, the last shards are padded, so their
real extent is shorter (and may be empty).
"""

from __future__ import annotations

import math

import numpy as np

from .mesh import DeviceMesh
from .sharding import ShardingError, ShardingSpec

Tile = tuple[slice, ...]


def shard_extent(size: int, shards: int, index: int) -> slice:
    """The slice of a dimension of ``size`` held by shard ``index`` of ``shards``."""
    step = math.ceil(size / shards)
    start = min(index * step, size)
    return slice(start, min(start + step, size))


def tile_map(spec: ShardingSpec, mesh: DeviceMesh, shape: tuple[int, ...]) -> dict[int, Tile]:
    """For every device of ``mesh``, the index slices of a tensor of ``shape`` it holds."""
    if spec.rank != len(shape):
        raise ShardingError(f"sharding spec {spec} has rank {spec.rank} but the shape {list(shape)} "
                            f"has rank {len(shape)}")
    spec.check_mesh(mesh)
    result: dict[int, Tile] = {}
    for flat, device in enumerate(mesh.device_ids):
        coords = np.unravel_index(flat, mesh.shape)
        tile = []
        for dim, axes in enumerate(spec.dims):
            # Mixed radix over the dimension's axes, the first axis most significant.
            index = 0
            for axis in axes:
                index = index * mesh.shape[axis] + int(coords[axis])
            tile.append(shard_extent(shape[dim], spec.num_shards(dim, mesh), index))
        result[device] = tuple(tile)
    return result


def uneven_dims(spec: ShardingSpec, mesh: DeviceMesh, shape: tuple[int, ...]) -> list[int]:
    """Tensor dimensions of ``shape`` that do not divide by their number of shards."""
    return [d for d in range(spec.rank) if shape[d] % spec.num_shards(d, mesh)]
