"""Conversions between the IR and JAX: :class:`ShardingSpec` and ``jax.sharding`` objects,
tensor types and ``jax.ShapeDtypeStruct``."""

from __future__ import annotations

import functools

import jax
import ml_dtypes
import numpy as np
from jax._src.interpreters import mlir as jax_mlir
from jax._src.lib.mlir import ir
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


@functools.cache
def _dtypes_by_mlir_name() -> dict[str, np.dtype]:
    names = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
             "float32", "float64", "complex64", "complex128"]
    candidates = [np.dtype(n) for n in names]
    candidates += [np.dtype(getattr(ml_dtypes, n)) for n in (
        "bfloat16", "int4", "uint4", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
        "float8_e4m3b11fnuz") if hasattr(ml_dtypes, n)]
    with jax_mlir.make_ir_context():
        return {str(jax_mlir.dtype_to_ir_type(d)): d for d in candidates}


def aval_of(tensor_type: ir.Type, what: str) -> jax.ShapeDtypeStruct:
    """The JAX shape and dtype of a static tensor type; ``what`` names it in the error."""
    ranked = tensor_type.maybe_downcast()
    if not isinstance(ranked, ir.RankedTensorType) or not ranked.has_static_shape:
        raise ValueError(f"{what} has type {tensor_type}; only statically shaped tensors can be placed on a mesh")
    dtype = _dtypes_by_mlir_name().get(str(ranked.element_type))
    if dtype is None:
        raise ValueError(f"{what} has element type {ranked.element_type}, which has no JAX dtype")
    return jax.ShapeDtypeStruct(tuple(ranked.shape), dtype)
