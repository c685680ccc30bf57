"""Conversions between :class:`ShardingSpec` and Shardy's ``sdy`` attributes, and of a
whole module's ``mhlo.sharding`` annotations into ``sdy`` form.

``#sdy.sharding<@mesh, [{"x"}, {}]>`` names its mesh axes; the spec numbers them. The
``sdy.mesh`` symbol supplies the mapping, and its ``device_ids`` (when present) the
device order. Built through jaxlib's ``sdy`` attribute bindings, so what we emit is
exactly what the dialect parses.
"""

from __future__ import annotations

from collections.abc import Iterable

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import sdy

from .annotations import (
    MESH_ATTR,
    MHLO_SHARDING,
    SDY_SHARDING,
    funcs,
    get_value_attrs,
    is_sharding_custom_call,
    rank_of,
    set_value_attrs,
    sharded_ops,
    sharding_text,
    value_types,
)
from .mesh import DeviceMesh, MeshError
from .sharding import Maximal, ShardingError, ShardingSpec, parse_mhlo_sharding, spec_from_sharding

# Ops whose regions run the enclosing function's dataflow (not per-element bodies such
# as a reduction's): an op directly inside them may get a sharding constraint.
_CONTROL_FLOW = ("func.func", "stablehlo.while", "stablehlo.case", "stablehlo.if")


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


def tensor_sharding(mesh_name: str, dims: list[list[str]], unreduced: Iterable[str] = ()) -> ir.Attribute:
    """``#sdy.sharding<@mesh_name, [{"x"}, {}], unreduced={...}>``: the named axes of each
    dimension, every dimension closed."""
    return sdy.TensorShardingAttr.get(
        mesh_name, [sdy.DimensionShardingAttr.get([sdy.AxisRefAttr.get(a) for a in axes], is_closed=True)
                    for axes in dims],
        unreduced_axes=[sdy.AxisRefAttr.get(a) for a in unreduced])


def dimension_axes(sharding: ir.Attribute) -> list[list[str]]:
    """The axis names of each dimension of a ``#sdy.sharding``."""
    return [[sdy.AxisRefAttr(a).name for a in sdy.DimensionShardingAttr(d).axes]
            for d in sdy.TensorShardingAttr(sharding).dimension_shardings]


def spec_to_sdy(spec: ShardingSpec, mesh: DeviceMesh, mesh_name: str) -> ir.Attribute:
    """``#sdy.sharding<@mesh_name, [...]>`` with closed dimensions."""
    spec.check_mesh(mesh)
    return tensor_sharding(mesh_name, [[mesh.axis_names[a] for a in axes] for axes in spec.dims])


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


def export_shardings(module: ir.Operation, mesh: DeviceMesh | None, mesh_name: str = "mesh",
                     constrain_results: bool = False) -> list[tuple[ir.Operation, str]]:
    """Rewrite the ``mhlo.sharding`` annotations of ``module`` as ``sdy`` shardings on
    ``mesh`` (named ``@mesh_name``; ``@maximal_mesh_N`` for values on device N).

    ``stablehlo.custom_call @Sharding`` becomes ``sdy.sharding_constraint``; ``alpa.mesh``
    is removed. With
    ``constrain_results``, every op result that has a tiled or replicated sharding is
    also routed through an ``sdy.sharding_constraint`` of that sharding: XLA imports a
    module for Shardy through HLO and keeps ``sdy.sharding`` only on arguments, results
    and a few custom calls, so without constraints Shardy would propagate the ops'
    shardings afresh instead of taking the plan's. A constraint that is its input's only
    user gives that input its sharding (Shardy's import), so each op keeps its sharding.
    A ``stablehlo.while``'s block arguments are pinned to its shardings the same way:
    otherwise a constraint on a loop-carried value (a resharding the plan makes inside
    the loop) would become the sharding of the value itself.

    Returns (op, message) for every annotation that cannot be converted; the module is
    then partly converted and holds no ``sdy.mesh``.
    """
    export = _Exporter(mesh, mesh_name)
    errors = []
    for func in funcs(module):
        for which, label in (("arg_attrs", "argument"), ("res_attrs", "result")):
            types = value_types(func, which)
            dicts = get_value_attrs(func, which)
            for index, attrs in enumerate(dicts):
                if MHLO_SHARDING not in attrs:
                    continue
                try:
                    attrs[SDY_SHARDING] = export.sharding(attrs.pop(MHLO_SHARDING), types[index])
                except ValueError as error:
                    errors.append((func, f"{label} #{index}: {error}"))
            set_value_attrs(func, which, dicts)
    for op in list(sharded_ops(module)):
        if MHLO_SHARDING not in op.attributes:
            continue
        try:
            export.op(op, constrain_results)
        except ValueError as error:
            errors.append((op, str(error)))
    if not errors:
        export.insert_meshes(module)
        if MESH_ATTR in module.attributes:
            del module.attributes[MESH_ATTR]
    return errors


class _Exporter:
    """Converts shardings on one mesh and remembers which ``sdy.mesh`` symbols they need."""

    def __init__(self, mesh: DeviceMesh | None, mesh_name: str):
        self.mesh = mesh
        self.mesh_name = mesh_name
        self.used_mesh = False
        self.maximal_devices: set[int] = set()

    def sharding(self, attr: ir.Attribute, value_type: ir.Type) -> ir.Attribute:
        text = sharding_text(attr)
        parsed = parse_mhlo_sharding(text)
        if isinstance(parsed, tuple):
            raise ShardingError(f"sharding '{text}' is a tuple but the value is a single tensor")
        return self._one(parsed, text, value_type)

    def _one(self, parsed, text: str, value_type: ir.Type | None) -> ir.Attribute:
        if isinstance(parsed, Maximal):  # of any value (a token too), or of an op with no results
            self.maximal_devices.add(parsed.device)
            # Shardy's maximal shardings have no dimension entries.
            return sdy.TensorShardingAttr.get(f"maximal_mesh_{parsed.device}", [])
        rank = rank_of(value_type)
        if rank is None:
            raise ShardingError(f"sharding '{text}' is on a non-tensor value, which sdy cannot annotate")
        if self.mesh is None:
            raise ShardingError(f"sharding '{text}' needs a device mesh: pass mesh-shape or set "
                                "mhlo.num_partitions on the module")
        self.used_mesh = True
        return spec_to_sdy(spec_from_sharding(parsed, self.mesh, rank, text), self.mesh, self.mesh_name)

    def op(self, op: ir.Operation, constrain_results: bool) -> None:
        text = sharding_text(op.attributes[MHLO_SHARDING])
        parsed = parse_mhlo_sharding(text)
        results = [r.type for r in op.results]
        elements = parsed if isinstance(parsed, tuple) else (parsed,) * len(results)
        if len(elements) != len(results):
            raise ShardingError(f"sharding '{text}' has {len(elements)} elements but the op has "
                                f"{len(results)} results")
        shardings = [self._one(p, text, t) for p, t in zip(elements, results)]
        if not results and isinstance(parsed, Maximal):  # a host callback with no results: Shardy places
            shardings = [self._one(parsed, text, None)]  # the op by one sharding, as JAX writes it
        if is_sharding_custom_call(op):
            with ir.InsertionPoint(op), op.location:
                op.results[0].replace_all_uses_with(sharding_constraint(op.operands[0], shardings[0]))
            op.erase()
            return
        del op.attributes[MHLO_SHARDING]
        op.attributes[SDY_SHARDING] = sdy.TensorShardingPerValueAttr.get(shardings)
        if not constrain_results or op.parent.name not in _CONTROL_FLOW:
            return
        pinned = list(zip(elements, shardings))
        for result, (element, sharding) in zip(op.results, pinned):
            if not isinstance(element, Maximal):
                _pin(result, sharding, op.parent, ir.InsertionPoint.after(op), op.location)
        if op.name == "stablehlo.while":  # the loop-carried values, whose sharding is the loop's
            for block in (region.blocks[0] for region in op.regions):
                for argument, (element, sharding) in zip(block.arguments, pinned):
                    if not isinstance(element, Maximal):
                        _pin(argument, sharding, op, ir.InsertionPoint.at_block_begin(block), op.location)

    def insert_meshes(self, module: ir.Operation) -> None:
        meshes = []
        if self.used_mesh:
            meshes.append((self.mesh_name, mesh_to_sdy(self.mesh)))
        for device in sorted(self.maximal_devices):
            meshes.append((f"maximal_mesh_{device}", sdy.MeshAttr.get([], [device])))
        body = module.regions[0].blocks[0]
        with ir.InsertionPoint.at_block_begin(body), module.location:
            for name, attr in meshes:
                ir.Operation.create("sdy.mesh", attributes={
                    "sym_name": ir.StringAttr.get(name), "mesh": attr})


def sharding_constraint(value: ir.Value, sharding: ir.Attribute) -> ir.Value:
    """The result of an ``sdy.sharding_constraint`` of ``value`` to ``sharding``, at the
    current insertion point and location."""
    return ir.Operation.create("sdy.sharding_constraint", results=[value.type], operands=[value],
                               attributes={"sharding": sharding}).results[0]


def _pin(value: ir.Value, sharding: ir.Attribute, scope: ir.Operation, where: ir.InsertionPoint,
         location: ir.Location) -> None:
    """Route the uses of ``value`` (defined in a region of ``scope``) through a constraint
    to ``sharding`` inserted at ``where``; not those in a body XLA outlines (a sort's
    comparator, a reduction's body): XLA sinks a constant such a body reads into it, but
    not a constraint of it, and cannot translate a body that reads an outside value."""
    uses = [(use.owner, use.operand_number) for use in value.uses if _in_dataflow_of(use.owner, scope)]
    if not uses:
        return
    with where, location:
        constrained = sharding_constraint(value, sharding)
    for user, index in uses:
        user.operands[index] = constrained


def _in_dataflow_of(user: ir.Operation, scope: ir.Operation) -> bool:
    """Whether ``user`` is in ``scope``'s regions, at most through control flow."""
    parent, scope = user.parent.operation, scope.operation
    while parent.name in _CONTROL_FLOW and parent != scope:
        parent = parent.parent.operation
    return parent == scope
