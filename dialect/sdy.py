"""Conversions between :class:`ShardingSpec` and Shardy's ``sdy`` attributes.

``#sdy.sharding<@mesh, [{"x"}, {}]>`` names its mesh axes; the spec numbers them. The
``sdy.mesh`` symbol supplies the mapping, and its ``device_ids`` (when present) the
device order. Built through jaxlib's ``sdy`` attribute bindings, so what we emit is
exactly what the dialect parses.
"""

from __future__ import annotations

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import sdy

from .mesh import DeviceMesh, MeshError
from .sharding import ShardingError, ShardingSpec


def mesh_from_sdy(attr: ir.Attribute, alpha: tuple[float, ...] = (),
                  beta: tuple[float, ...] = ()) -> DeviceMesh:
    """The :class:`DeviceMesh` of an ``#sdy.mesh`` attribute."""
    mesh = sdy.MeshAttr(attr)
    axes = [sdy.MeshAxisAttr(a) for a in mesh.axes]
    if not axes:
        raise ShardingError(f"sdy mesh {attr} has no axes (a maximal mesh); alpa needs a device mesh")
    return DeviceMesh(tuple(a.size for a in axes), tuple(mesh.device_ids),
                      tuple(a.name for a in axes), alpha, beta)


def mesh_to_sdy(mesh: DeviceMesh) -> ir.Attribute:
    """The ``#sdy.mesh`` attribute of ``mesh`` (device ids only when not iota).

    Shardy requires the ids to be a permutation of ``0..size-1``; a mesh of other
    (global) ids raises :class:`MeshError` instead of building an attribute that
    does not parse back.
    """
    if sorted(mesh.device_ids) != list(range(mesh.size)):
        raise MeshError(
            f"mesh device_ids {list(mesh.device_ids)} are not a permutation of 0..{mesh.size - 1}, "
            "which an sdy mesh requires"
        )
    axes = [sdy.MeshAxisAttr.get(name, size) for name, size in zip(mesh.axis_names, mesh.shape)]
    return sdy.MeshAttr.get(axes, [] if mesh.is_iota else list(mesh.device_ids))


def spec_to_sdy(spec: ShardingSpec, mesh: DeviceMesh, mesh_name: str) -> ir.Attribute:
    """``#sdy.sharding<@mesh_name, [...]>`` with closed dimensions."""
    spec.check_mesh(mesh)
    dims = [
        sdy.DimensionShardingAttr.get(
            [sdy.AxisRefAttr.get(mesh.axis_names[a]) for a in axes], is_closed=True)
        for axes in spec.dims
    ]
    return sdy.TensorShardingAttr.get(mesh_name, dims)


def spec_from_sdy(attr: ir.Attribute, mesh: DeviceMesh, rank: int) -> ShardingSpec | None:
    """The spec of a ``#sdy.sharding``; ``None`` when every dimension is open and empty
    (the user pinned nothing). A scalar's ``[]`` has no open dimension: it is replicated.

    Sub-axes (``"x":(1)2``), unreduced axes and dimensions that are open but already
    sharded have no spec equivalent and raise :class:`ShardingError`.
    """
    sharding = sdy.TensorShardingAttr(attr)
    dims = [sdy.DimensionShardingAttr(d) for d in sharding.dimension_shardings]
    if len(dims) != rank:
        raise ShardingError(f"sharding {attr} has {len(dims)} dimensions but the value has rank {rank}")
    if list(sharding.unreduced_axes):
        raise ShardingError(f"sharding {attr} has unreduced axes, which alpa does not support")
    if dims and all(not d.is_closed and not list(d.axes) for d in dims):
        return None
    spec_dims = []
    for d in dims:
        refs = [sdy.AxisRefAttr(a) for a in d.axes]
        if not d.is_closed and refs:
            raise ShardingError(
                f"sharding {attr} has an open dimension that is already sharded; "
                "close it ('{\"x\"}') or leave it empty ('{?}')"
            )
        if any(r.sub_axis_info is not None for r in refs):
            raise ShardingError(f"sharding {attr} uses a sub-axis, which alpa does not support")
        spec_dims.append(tuple(mesh.axis_index(r.name) for r in refs))
    return ShardingSpec(tuple(spec_dims))
