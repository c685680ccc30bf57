"""Reading and writing sharding annotations in IR, shared by the sharding passes.

Where shardings live in a StableHLO module:

- function arguments and results: ``mhlo.sharding`` (string) or ``sdy.sharding``
  in ``arg_attrs`` / ``res_attrs``;
- op results: ``mhlo.sharding`` (string, a tuple for several results) or
  ``sdy.sharding`` (``#sdy.sharding_per_value``);
- constraints: ``stablehlo.custom_call @Sharding`` (mhlo) or
  ``sdy.sharding_constraint`` / ``sdy.reshard``;
- the mesh: ``sdy.mesh`` symbols, or ``alpa.mesh`` on the module (our canonical form,
  a dictionary with ``shape``, ``axes``, ``device_ids``, ``alpha``, ``beta``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from jax._src.lib.mlir import ir

from .context import walk
from .mesh import DeviceMesh
from .mesh_attr import MESH_ATTR, mesh_from_attr, mesh_to_attr  # noqa: F401 (shared)
from .sharding import Sharding, ShardingError, TiledSharding, mhlo_tuple_elements, parse_mhlo_sharding

MHLO_SHARDING = "mhlo.sharding"
SDY_SHARDING = "sdy.sharding"
NUM_PARTITIONS = "mhlo.num_partitions"
SHARDING_CUSTOM_CALL = "Sharding"
SDY_CONSTRAINT_OPS = ("sdy.sharding_constraint", "sdy.reshard")


@dataclass(frozen=True)
class MeshOptions:
    """Options shared by passes that need the device mesh; empty means "from the module"."""

    mesh_shape: tuple[int, ...] = field(
        default=(), metadata={"help": "logical mesh shape, e.g. 2,4 (default: the module's mesh)"})
    mesh_axes: tuple[str, ...] = field(
        default=(), metadata={"help": "mesh axis names (default x,y,z,...)"})

    def __post_init__(self) -> None:
        if self.mesh_axes and not self.mesh_shape:
            raise ValueError("option 'mesh-axes' needs 'mesh-shape'")
        if self.mesh_shape:
            try:
                DeviceMesh(self.mesh_shape, axis_names=self.mesh_axes)  # validates sizes and names
            except ValueError as error:
                which = "'mesh-axes'" if self.mesh_axes and "axis names" in str(error) else "'mesh-shape'"
                raise ValueError(f"option {which}: {error}") from None

    def option_mesh(self) -> DeviceMesh | None:
        return DeviceMesh(self.mesh_shape, axis_names=self.mesh_axes) if self.mesh_shape else None


# Float element types whose split contractions sum their partials in f32: the lowering
# computes such dots in f32 (alpa-widen-split-contractions) and the dot rule prices
# their all-reduces at 4 bytes per element.
WIDENED_FLOATS = (ir.BF16Type, ir.F16Type)


def funcs(module: ir.Operation) -> Iterator[ir.Operation]:
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name == "func.func":
            yield op.operation


def _dicts(func: ir.Operation, which: str, count: int) -> list[dict[str, ir.Attribute]]:
    if which not in func.attributes:
        return [{} for _ in range(count)]
    array = ir.ArrayAttr(func.attributes[which])
    return [{n.name: n.attr for n in ir.DictAttr(d)} for d in array]


def value_types(func: ir.Operation, which: str) -> list[ir.Type]:
    """Argument (``arg_attrs``) or result (``res_attrs``) types of ``func``."""
    function_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    return list(function_type.inputs if which == "arg_attrs" else function_type.results)


def get_value_attrs(func: ir.Operation, which: str) -> list[dict[str, ir.Attribute]]:
    """``which`` is ``arg_attrs`` or ``res_attrs``: one dict per argument / result."""
    return _dicts(func, which, len(value_types(func, which)))


def set_value_attrs(func: ir.Operation, which: str, dicts: list[dict[str, ir.Attribute]]) -> None:
    if all(not d for d in dicts):
        if which in func.attributes:
            del func.attributes[which]
        return
    func.attributes[which] = ir.ArrayAttr.get([ir.DictAttr.get(d) for d in dicts])


def rank_of(value_type: ir.Type) -> int | None:
    """Rank of a ranked tensor type, ``None`` for anything else (tokens, tuples)."""
    if isinstance(value_type, ir.RankedTensorType):
        return value_type.rank
    return None


def is_sharding_custom_call(op: ir.Operation) -> bool:
    return (op.name == "stablehlo.custom_call"
            and ir.StringAttr(op.attributes["call_target_name"]).value == SHARDING_CUSTOM_CALL)


def sharded_ops(module: ir.Operation) -> Iterator[ir.Operation]:
    """Ops nested in functions (not the functions themselves)."""
    for func in funcs(module):
        for op in walk(func):
            if op is not func and op.name != "func.func":
                yield op


def string_attr(text: str) -> ir.Attribute:
    return ir.StringAttr.get(text)


def replace_with_operand(op: ir.Operation) -> None:
    """Erase a one-operand, one-result op, forwarding its operand to its users."""
    op.results[0].replace_all_uses_with(op.operands[0])
    op.erase()


# ----------------------------------------------------------------------------- the mesh


def set_module_mesh(module: ir.Operation, mesh: DeviceMesh) -> None:
    module.attributes[MESH_ATTR] = mesh_to_attr(mesh)
    module.attributes[NUM_PARTITIONS] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), mesh.size)


def num_partitions(module: ir.Operation) -> int | None:
    if NUM_PARTITIONS not in module.attributes:
        return None
    return ir.IntegerAttr(module.attributes[NUM_PARTITIONS]).value


def module_mesh(module: ir.Operation, options: MeshOptions) -> DeviceMesh | None:
    """The mesh from the options, else ``alpa.mesh``, else a 1-D mesh of
    ``mhlo.num_partitions`` devices; ``None`` if the module names no device count."""
    mesh = options.option_mesh()
    if mesh is not None:
        return mesh
    if MESH_ATTR in module.attributes:
        return mesh_from_attr(module.attributes[MESH_ATTR])
    count = num_partitions(module)
    return DeviceMesh((count,)) if count else None


def sdy_meshes(module: ir.Operation) -> dict[str, ir.Attribute]:
    """``sdy.mesh`` symbols of the module: name -> ``#sdy.mesh`` attribute."""
    return {
        ir.StringAttr(op.attributes["sym_name"]).value: op.attributes["mesh"]
        for op in module.regions[0].blocks[0].operations
        if op.operation.name == "sdy.mesh"
    }


def sdy_mesh_name(sharding: ir.Attribute) -> str:
    """The mesh symbol a ``#sdy.sharding`` refers to (inlined meshes are lifted first by
    the ``sdy-lift-inlined-meshes`` pass)."""
    from jax._src.lib.mlir.dialects import sdy

    ref = sdy.TensorShardingAttr(sharding).mesh_or_ref
    if not isinstance(ref, ir.FlatSymbolRefAttr):
        raise ValueError(f"sharding {sharding} has an inlined mesh; run sdy-lift-inlined-meshes first")
    return ref.value


def find_main(module: ir.Operation) -> ir.Operation:
    """The function a pass plans: the public ``@main``, else the only public function."""
    public = [f for f in funcs(module) if "sym_visibility" not in f.attributes
              or ir.StringAttr(f.attributes["sym_visibility"]).value == "public"]
    named = [f for f in public if ir.StringAttr(f.attributes["sym_name"]).value == "main"]
    if named:
        return named[0]
    if len(public) == 1:
        return public[0]
    raise ValueError(f"the module needs a public @main (found {len(public)} public functions)")


def sharding_text(attr: ir.Attribute) -> str:
    """The text of an ``mhlo.sharding`` attribute; a ``ShardingError`` saying what it must be
    when it is not a string."""
    if not isinstance(attr, ir.StringAttr):
        raise ShardingError(f'mhlo.sharding must be a string such as "{{replicated}}"; got {attr}')
    return ir.StringAttr(attr).value


def op_sharding(op: ir.Operation) -> Sharding | tuple[Sharding, ...] | None:
    """The parsed ``mhlo.sharding`` of ``op`` (``None`` without one); a ``ShardingError``
    that quotes it where it is not a sharding (``"garbage"``, ``"{unknown}"``), or tiles
    another number of dimensions than a one-result op's result has."""
    if MHLO_SHARDING not in op.attributes:
        return None
    text = sharding_text(op.attributes[MHLO_SHARDING])
    try:
        sharding = parse_mhlo_sharding(text)
    except ShardingError as error:
        raise ShardingError(f"{MHLO_SHARDING} {text!r} is not a sharding: {error}") from None
    rank = rank_of(op.results[0].type) if len(op.results) == 1 else None
    if isinstance(sharding, TiledSharding) and rank is not None and sharding.tensor_rank != rank:
        raise ShardingError(f"{MHLO_SHARDING} {text!r} tiles {sharding.tensor_rank} dimensions of a rank-{rank} result")
    return sharding


def value_sharding(value: ir.Value) -> Sharding | None:
    """The parsed ``mhlo.sharding`` of ``value``: its producer's (a tuple's element for a
    result of several), or its function argument's; ``None`` without one, for another
    block's argument (a loop body's) and for a string that is not a sharding."""
    try:
        if isinstance(value.owner, ir.Block):
            func = value.owner.owner
            if func is None or func.operation.name != "func.func":
                return None
            attrs = get_value_attrs(func.operation, "arg_attrs")[ir.BlockArgument(value).arg_number]
            return parse_mhlo_sharding(sharding_text(attrs[MHLO_SHARDING])) if MHLO_SHARDING in attrs else None
        sharding = op_sharding(value.owner)
    except ShardingError:
        return None
    if isinstance(sharding, tuple):
        number = ir.OpResult(value).result_number
        return sharding[number] if number < len(sharding) else None
    return sharding


def result_shardings(op: ir.Operation) -> list[str]:
    """The ``mhlo.sharding`` text of each result of an annotated op: a tuple's elements, or
    one sharding for all."""
    text = sharding_text(op.attributes[MHLO_SHARDING])
    return mhlo_tuple_elements(text) or [text] * len(op.results)
