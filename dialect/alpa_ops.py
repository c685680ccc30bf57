"""The ``alpa`` ops that the cross-mesh passes insert, defined in one place.

They are unregistered MLIR ops (generic form), so they print and parse back
unchanged; :func:`verify_alpa_ops` is their verifier. Device ids are global ids of
the physical cluster; ``tile`` is ``[start0, limit0, start1, limit1, ...]`` in the
coordinates of the global (unsharded) tensor.

``alpa.send``::

    "alpa.send"(%x) {channel_id = 3 : i64, src_device = 0 : i64, dst_device = 4 : i64,
                     tile = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> ()

Sends the ``tile`` slice that device ``src_device`` holds in ``%x`` (the source's local
shard) to ``dst_device``. The matching ``alpa.recv`` has the same ``channel_id``.

``alpa.recv``::

    %t = "alpa.recv"() {channel_id = 3 : i64, src_device = 0 : i64, dst_device = 4 : i64,
                        tile = array<i64: 0, 4, 0, 8>} : () -> tensor<4x8xf32>

``alpa.all_gather``::

    %g = "alpa.all_gather"(%t) {all_gather_dim = 0 : i64,
                                replica_groups = dense<[[4, 5], [6, 7]]> : tensor<2x2xi64>}
         : (tensor<4x8xf32>) -> tensor<8x8xf32>

Concatenates along ``all_gather_dim`` the operands of the devices in each group,
in group order (the second step of the local all-gather rewrite, Sec. 6).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from jax._src.lib.mlir import ir

from .context import walk

I64 = "i64"
I64_ARRAY = "array<i64>"
I64_ELEMENTS = "dense i64 tensor"


@dataclass(frozen=True, slots=True)
class AlpaOpDef:
    """Name, arity and required attributes of one ``alpa`` op."""

    name: str
    num_operands: int
    num_results: int
    attributes: dict[str, str]
    verify: Callable[[ir.Operation], str | None]


def _int(op: ir.Operation, name: str) -> int:
    return ir.IntegerAttr(op.attributes[name]).value


def _ints(op: ir.Operation, name: str) -> list[int]:
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def _isa(cls: type, value: ir.Attribute | ir.Type) -> bool:
    """Whether ``value`` casts to ``cls`` (jaxlib's bindings have no ``cls.isinstance``)."""
    try:
        cls(value)
    except (ValueError, TypeError):
        return False
    return True


def _shaped(value: ir.Value) -> ir.RankedTensorType | None:
    return ir.RankedTensorType(value.type) if _isa(ir.RankedTensorType, value.type) else None


def _verify_tile(op: ir.Operation, tensor: ir.Value) -> str | None:
    tile = _ints(op, "tile")
    shaped = _shaped(tensor)
    if shaped is None:
        return "expects a ranked tensor"
    if len(tile) != 2 * shaped.rank:
        return f"tile has {len(tile)} entries; a rank-{shaped.rank} tensor needs {2 * shaped.rank}"
    starts, limits = tile[0::2], tile[1::2]
    if any(s < 0 or s > lim for s, lim in zip(starts, limits)):
        return f"tile {tile} has a negative start or a start beyond its limit"
    if _int(op, "src_device") == _int(op, "dst_device"):
        return "src_device and dst_device are the same device"
    return None


def _verify_recv(op: ir.Operation) -> str | None:
    error = _verify_tile(op, op.results[0])
    if error:
        return error
    tile = _ints(op, "tile")
    extents = [lim - s for s, lim in zip(tile[0::2], tile[1::2])]
    shape = list(ir.RankedTensorType(op.results[0].type).shape)
    if extents != shape:
        return f"result shape {shape} does not match the tile's extents {extents}"
    return None


def _verify_all_gather(op: ir.Operation) -> str | None:
    operand, result = _shaped(op.operands[0]), _shaped(op.results[0])
    if operand is None or result is None:
        return "expects ranked tensors"
    groups = np.asarray(ir.DenseIntElementsAttr(op.attributes["replica_groups"]))
    if groups.ndim != 2 or groups.size == 0:
        return "replica_groups must be a non-empty 2-D array of device ids"
    if len(np.unique(groups)) != groups.size:
        return "replica_groups lists a device twice"
    dim = _int(op, "all_gather_dim")
    if not 0 <= dim < operand.rank:
        return f"all_gather_dim {dim} is out of range for a rank-{operand.rank} operand"
    expected = list(operand.shape)
    expected[dim] *= groups.shape[1]
    if list(result.shape) != expected or result.element_type != operand.element_type:
        return f"result type {result} should be {expected} of {operand.element_type}"
    return None


_TILE_ATTRS = {"channel_id": I64, "src_device": I64, "dst_device": I64, "tile": I64_ARRAY}

ALPA_OPS: dict[str, AlpaOpDef] = {
    d.name: d for d in (
        AlpaOpDef("alpa.send", 1, 0, _TILE_ATTRS, lambda op: _verify_tile(op, op.operands[0])),
        AlpaOpDef("alpa.recv", 0, 1, _TILE_ATTRS, _verify_recv),
        AlpaOpDef("alpa.all_gather", 1, 1,
                  {"all_gather_dim": I64, "replica_groups": I64_ELEMENTS}, _verify_all_gather),
    )
}


def _attr_matches(attr: ir.Attribute, kind: str) -> bool:
    if kind == I64:
        return _isa(ir.IntegerAttr, attr) and str(ir.IntegerAttr(attr).type) == "i64"
    if kind == I64_ARRAY:
        return _isa(ir.DenseI64ArrayAttr, attr)
    return (_isa(ir.DenseIntElementsAttr, attr)
            and str(ir.DenseIntElementsAttr(attr).type.element_type) == "i64")


def verify_op(op: ir.Operation) -> str | None:
    """Why ``op`` (an ``alpa.*`` op) is invalid, or ``None``."""
    definition = ALPA_OPS.get(op.name)
    if definition is None:
        return f"unknown alpa op '{op.name}'; alpa ops are {', '.join(sorted(ALPA_OPS))}"
    if len(op.operands) != definition.num_operands or len(op.results) != definition.num_results:
        return (f"expects {definition.num_operands} operand(s) and {definition.num_results} "
                f"result(s), got {len(op.operands)} and {len(op.results)}")
    for name, kind in definition.attributes.items():
        if name not in op.attributes:
            return f"requires attribute '{name}' ({kind})"
        if not _attr_matches(op.attributes[name], kind):
            return f"attribute '{name}' must be {kind}, got {op.attributes[name]}"
    return definition.verify(op)


def verify_alpa_ops(root: ir.Operation) -> list[tuple[ir.Operation, str]]:
    """Every invalid ``alpa.*`` op under ``root`` with the reason: (op, message)."""
    problems = []
    for op in walk(root):
        if op.name.startswith("alpa."):
            error = verify_op(op)
            if error:
                problems.append((op, f"'{op.name}' op {error}"))
    return problems


def _i64(value: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)


def _tile_attrs(channel_id: int, src_device: int, dst_device: int,
                tile: Sequence[tuple[int, int]]) -> dict[str, ir.Attribute]:
    return {
        "channel_id": _i64(channel_id),
        "src_device": _i64(src_device),
        "dst_device": _i64(dst_device),
        "tile": ir.DenseI64ArrayAttr.get([b for bounds in tile for b in bounds]),
    }


def build_send(value: ir.Value, channel_id: int, src_device: int, dst_device: int,
               tile: Sequence[tuple[int, int]]) -> ir.Operation:
    """Insert an ``alpa.send`` at the current insertion point. ``tile`` is (start, limit) per dim."""
    return ir.Operation.create("alpa.send", operands=[value],
                               attributes=_tile_attrs(channel_id, src_device, dst_device, tile))


def build_recv(result_type: ir.Type, channel_id: int, src_device: int, dst_device: int,
               tile: Sequence[tuple[int, int]]) -> ir.Operation:
    """Insert an ``alpa.recv`` producing ``result_type`` at the current insertion point."""
    return ir.Operation.create("alpa.recv", results=[result_type],
                               attributes=_tile_attrs(channel_id, src_device, dst_device, tile))


def build_all_gather(value: ir.Value, result_type: ir.Type, all_gather_dim: int,
                     replica_groups: Sequence[Sequence[int]]) -> ir.Operation:
    """Insert an ``alpa.all_gather`` at the current insertion point."""
    groups = np.asarray(replica_groups, dtype=np.int64)
    return ir.Operation.create("alpa.all_gather", operands=[value], results=[result_type], attributes={
        "all_gather_dim": _i64(all_gather_dim),
        "replica_groups": ir.DenseIntElementsAttr.get(groups),
    })
