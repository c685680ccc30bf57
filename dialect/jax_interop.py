"""Conversions between :class:`ShardingSpec` and ``jax.sharding`` objects."""

from __future__ import annotations

from jax.sharding import NamedSharding, PartitionSpec

from .mesh import DeviceMesh
from .sharding import ShardingError, ShardingSpec


def spec_to_partition_spec(spec: ShardingSpec, mesh: DeviceMesh) -> PartitionSpec:
    """``PartitionSpec`` with the mesh's axis names: ``S^{01}R`` is ``P(('x', 'y'), None)``."""
    spec.check_mesh(mesh)
    entries = []
    for axes in spec.dims:
        names = tuple(mesh.axis_names[a] for a in axes)
        entries.append(None if not names else names[0] if len(names) == 1 else names)
    return PartitionSpec(*entries)


def spec_to_named_sharding(spec: ShardingSpec, mesh: DeviceMesh, devices=None) -> NamedSharding:
    """``NamedSharding`` over the JAX devices whose ids are the mesh's device ids."""
    return NamedSharding(mesh.to_jax_mesh(devices), spec_to_partition_spec(spec, mesh))


def spec_from_partition_spec(pspec: PartitionSpec, mesh: DeviceMesh, rank: int) -> ShardingSpec:
    """The spec of a ``PartitionSpec`` for a value of ``rank`` (missing trailing entries are
    replicated, as in JAX)."""
    entries = tuple(pspec)
    if len(entries) > rank:
        raise ShardingError(f"{pspec} has {len(entries)} entries but the value has rank {rank}")
    dims = []
    for entry in entries + (None,) * (rank - len(entries)):
        names = () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
        dims.append(tuple(mesh.axis_index(n) for n in names))
    return ShardingSpec(tuple(dims))
