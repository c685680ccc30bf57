"""The ``alpa`` ops that the cross-mesh passes insert, defined in one place.

They are unregistered MLIR ops (generic form), so they print and parse back
unchanged; :func:`verify_alpa_ops` is their verifier. They live in ``@main`` after
``alpa-cross-mesh-resharding`` and take the global view: a value is the whole
(unsharded) tensor, held in tiles by the devices of a mesh. Device ids are global ids
of the physical cluster; a tile is ``[start0, limit0, start1, limit1, ...]`` in the
coordinates of the global tensor. Every op carries ``alpa.transfer = t : i64``, the
cross-mesh transfer (one value to one destination mesh and sharding) it belongs to;
``channel_id`` is unique in the module.

``alpa.send``::

    "alpa.send"(%x) {alpa.transfer = 0 : i64, channel_id = 3 : i64, src_device = 0 : i64,
                     dst_device = 4 : i64, tile = array<i64: 0, 4, 0, 8>} : (tensor<8x8xf32>) -> ()

``%x`` is the global (sharded) value on the source mesh; device ``src_device``, which
holds ``tile`` of it, sends that tile to ``dst_device``. The matching ``alpa.recv``
has the same ``channel_id``.

``alpa.recv``::

    %t = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 3 : i64, src_device = 0 : i64,
                        dst_device = 4 : i64, tile = array<i64: 0, 4, 0, 8>} : () -> tensor<4x8xf32>

The tile as ``dst_device`` receives it: the result's shape is the tile's extents.

``alpa.all_gather``::

    %g = "alpa.all_gather"(%p0, %p1) {all_gather_dim = 1 : i64, devices = array<i64: 4, 5>,
                                      alpa.transfer = 0 : i64}
         : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>

Operand ``k`` is the piece device ``devices[k]`` holds; afterwards every device of
``devices`` holds the concatenation of the pieces along ``all_gather_dim`` (the
second step of the local all-gather rewrite, Sec. 6). The pieces have one type.

``alpa.assemble``::

    %w = "alpa.assemble"(%g0, %g0, %g1, %g1) {devices = array<i64: 4, 5, 6, 7>,
             tiles = array<i64: 0, 8, 0, 16, 0, 8, 0, 16, 8, 16, 0, 16, 8, 16, 0, 16>,
             mhlo.sharding = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}",
             alpa.mesh = {shape = array<i64: 2, 2>, device_ids = array<i64: 4, 5, 6, 7>, ...},
             alpa.transfer = 0 : i64}
         : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>

Operand ``k`` is a piece held by device ``devices[k]`` whose global tile is
``tiles[2*rank*k : 2*rank*(k+1)]``; a device may hold several pieces. The pieces of
every device of ``alpa.mesh`` exactly partition its tile of ``mhlo.sharding`` (a
sharding written against the mesh's shape, device ids from its ``device_ids``), and
the result is the global value with that sharding on that mesh.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from jax._src.lib.mlir import ir

from .context import walk
from .mesh import DeviceMesh
from .mesh_attr import MESH_ATTR, mesh_from_attr
from .names import ALL_GATHER_OP, ASSEMBLE_OP, DIALECT_PREFIX, RECV_OP, SEND_OP, TRANSFER_ATTR
from .schedule_ops import SCHEDULE_PREFIX, verify_schedule_op
from .sharding import ShardingError, ShardingSpec
from .tile_map import tile_map

I64 = "i64"
I64_ARRAY = "array<i64>"
STRING = "string"
DICTIONARY = "dictionary"
SHARDING = "mhlo.sharding"


Bounds = list[tuple[int, int]]


@dataclass(frozen=True, slots=True)
class AlpaOpDef:
    """Name, arity and required attributes of one ``alpa`` op (``num_operands=None``:
    variadic, at least one)."""

    name: str
    num_operands: int | None
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


def _bounds(flat: list[int]) -> Bounds:
    return list(zip(flat[0::2], flat[1::2]))


def _flat_list(bounds: Bounds) -> list[int]:
    """Bounds as the attributes write them: ``[start0, limit0, start1, limit1, ...]``."""
    return [b for pair in bounds for b in pair]


def _extents(bounds: Bounds) -> list[int]:
    return [limit - start for start, limit in bounds]


def _volume(bounds: Bounds) -> int:
    volume = 1
    for extent in _extents(bounds):
        volume *= extent
    return volume


def _check_bounds(flat: list[int], shape: list[int], what: str) -> str | None:
    """Why ``flat`` is not a tile of a tensor of ``shape``, or ``None``."""
    if len(flat) != 2 * len(shape):
        return f"{what} has {len(flat)} entries; a rank-{len(shape)} tensor needs {2 * len(shape)}"
    if any(s < 0 or s > lim for s, lim in _bounds(flat)):
        return f"{what} {flat} has a negative start or a start beyond its limit"
    if any(lim > size for (_, lim), size in zip(_bounds(flat), shape)):
        return f"{what} {flat} exceeds the global shape {shape}"
    return None


def _verify_tile(op: ir.Operation, tensor: ir.Value, global_shape: bool) -> str | None:
    """The checks shared by send and recv; ``global_shape``: ``tensor`` is the global value."""
    tile = _ints(op, "tile")
    shaped = _shaped(tensor)
    if shaped is None:
        return "expects a ranked tensor"
    if len(tile) != 2 * shaped.rank:
        return f"tile has {len(tile)} entries; a rank-{shaped.rank} tensor needs {2 * shaped.rank}"
    if any(s < 0 or s > lim for s, lim in _bounds(tile)):
        return f"tile {tile} has a negative start or a start beyond its limit"
    if global_shape and any(lim > size for (_, lim), size in zip(_bounds(tile), shaped.shape)):
        return f"tile {tile} exceeds the global shape {list(shaped.shape)} of the sent value"
    if _int(op, "src_device") == _int(op, "dst_device"):
        return "src_device and dst_device are the same device"
    return None


def _verify_recv(op: ir.Operation) -> str | None:
    error = _verify_tile(op, op.results[0], global_shape=False)
    if error:
        return error
    extents = _extents(_bounds(_ints(op, "tile")))
    shape = list(ir.RankedTensorType(op.results[0].type).shape)
    if extents != shape:
        return f"result shape {shape} does not match the tile's extents {extents}"
    return None


def _verify_all_gather(op: ir.Operation) -> str | None:
    operand, result = _shaped(op.operands[0]), _shaped(op.results[0])
    if operand is None or result is None:
        return "expects ranked tensors"
    if any(value.type != op.operands[0].type for value in op.operands):
        return "expects operands of one type (equal pieces)"
    devices = _ints(op, "devices")
    if len(devices) != len(op.operands):
        return f"has {len(op.operands)} operand(s) but {len(devices)} device(s); one piece per device"
    if len(set(devices)) != len(devices):
        return f"devices {devices} lists a device twice"
    dim = _int(op, "all_gather_dim")
    if not 0 <= dim < operand.rank:
        return f"all_gather_dim {dim} is out of range for a rank-{operand.rank} operand"
    expected = list(operand.shape)
    expected[dim] *= len(devices)
    if list(result.shape) != expected or result.element_type != operand.element_type:
        return f"result type {result} should be {expected} of {operand.element_type}"
    return None


def _verify_assemble(op: ir.Operation) -> str | None:
    result = _shaped(op.results[0])
    if result is None or not result.has_static_shape:
        return "expects a statically shaped ranked tensor result"
    devices, flat = _ints(op, "devices"), _ints(op, "tiles")
    if len(devices) != len(op.operands):
        return f"has {len(op.operands)} operand(s) but {len(devices)} device(s); one device per piece"
    shape, width = list(result.shape), 2 * result.rank
    if len(flat) != width * len(devices):
        return f"tiles has {len(flat)} entries; {len(devices)} rank-{result.rank} pieces need {width * len(devices)}"
    pieces: dict[int, list[Bounds]] = {}
    for k, (device, value) in enumerate(zip(devices, op.operands)):
        tile = flat[width * k:width * (k + 1)]
        error = _check_bounds(tile, shape, f"tile of piece {k}")
        if error:
            return error
        piece = _shaped(value)
        if piece is None or list(piece.shape) != _extents(_bounds(tile)) or piece.element_type != result.element_type:
            return (f"piece {k} has type {value.type}; its tile {tile} needs "
                    f"{_extents(_bounds(tile))} of {result.element_type}")
        pieces.setdefault(device, []).append(_bounds(tile))
    return _verify_partition(op, shape, pieces)


def _verify_partition(op: ir.Operation, shape: list[int], pieces: dict[int, list[Bounds]]) -> str | None:
    """Whether the pieces of every device of ``alpa.mesh`` partition its tile of ``mhlo.sharding``."""
    try:
        mesh = mesh_from_attr(op.attributes[MESH_ATTR])
    except ValueError as error:
        return str(error)
    text = ir.StringAttr(op.attributes[SHARDING]).value
    try:
        spec = ShardingSpec.from_mhlo(text, DeviceMesh(mesh.shape), len(shape))
        tiles = tile_map(spec, mesh, tuple(shape))
    except ShardingError as error:
        return f"{SHARDING}: {error}"
    outside = sorted(set(pieces) - set(tiles))
    if outside:
        return f"device {outside[0]} is not on the mesh {list(mesh.device_ids)}"
    for device, slices in tiles.items():
        tile = [(s.start, s.stop) for s in slices]
        found = pieces.get(device, [])
        if not _partitions(tile, found):
            return (f"the pieces of device {device} {[_flat_list(p) for p in found]} do not partition "
                    f"its tile {_flat_list(tile)} of {text}")
    return None


def _partitions(tile: Bounds, pieces: list[Bounds]) -> bool:
    """Whether ``pieces`` lie inside ``tile``, do not overlap and cover it."""
    def meet(a: Bounds, b: Bounds) -> Bounds:
        return [(max(sa, sb), min(la, lb)) for (sa, la), (sb, lb) in zip(a, b)]

    def empty(bounds: Bounds) -> bool:
        return any(start >= limit for start, limit in bounds)

    inside = all(empty(p) or meet(p, tile) == p for p in pieces)
    disjoint = all(empty(meet(a, b)) for i, a in enumerate(pieces) for b in pieces[i + 1:])
    return inside and disjoint and sum(_volume(p) for p in pieces) == _volume(tile)


_TILE_ATTRS = {"channel_id": I64, "src_device": I64, "dst_device": I64, "tile": I64_ARRAY, TRANSFER_ATTR: I64}

ALPA_OPS: dict[str, AlpaOpDef] = {
    d.name: d for d in (
        AlpaOpDef(SEND_OP, 1, 0, _TILE_ATTRS, lambda op: _verify_tile(op, op.operands[0], global_shape=True)),
        AlpaOpDef(RECV_OP, 0, 1, _TILE_ATTRS, _verify_recv),
        AlpaOpDef(ALL_GATHER_OP, None, 1,
                  {"all_gather_dim": I64, "devices": I64_ARRAY, TRANSFER_ATTR: I64}, _verify_all_gather),
        AlpaOpDef(ASSEMBLE_OP, None, 1,
                  {"devices": I64_ARRAY, "tiles": I64_ARRAY, SHARDING: STRING, MESH_ATTR: DICTIONARY,
                   TRANSFER_ATTR: I64}, _verify_assemble),
    )
}


def _attr_matches(attr: ir.Attribute, kind: str) -> bool:
    if kind == I64:
        return _isa(ir.IntegerAttr, attr) and str(ir.IntegerAttr(attr).type) == "i64"
    if kind == I64_ARRAY:
        return _isa(ir.DenseI64ArrayAttr, attr)
    if kind == STRING:
        return _isa(ir.StringAttr, attr)
    return _isa(ir.DictAttr, attr)


def verify_op(op: ir.Operation) -> str | None:
    """Why ``op`` (an ``alpa.*`` op) is invalid, or ``None``. The ``alpa.sched.*``
    instructions have their own verifier (``dialect/schedule_ops.py``)."""
    if op.name.startswith(SCHEDULE_PREFIX):
        return verify_schedule_op(op)
    definition = ALPA_OPS.get(op.name)
    if definition is None:
        return f"unknown alpa op '{op.name}'; alpa ops are {', '.join(sorted(ALPA_OPS))}"
    variadic = definition.num_operands is None
    operands_ok = len(op.operands) >= 1 if variadic else len(op.operands) == definition.num_operands
    if not operands_ok or len(op.results) != definition.num_results:
        expected = "one or more operands" if variadic else f"{definition.num_operands} operand(s)"
        return (f"expects {expected} and {definition.num_results} "
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
        if op.name.startswith(DIALECT_PREFIX):
            error = verify_op(op)
            if error:
                problems.append((op, f"'{op.name}' op {error}"))
    return problems


def _i64(value: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)


def _flat(tiles: Sequence[Sequence[tuple[int, int]]]) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get([b for tile in tiles for bounds in tile for b in bounds])


def _tile_attrs(channel_id: int, src_device: int, dst_device: int,
                tile: Sequence[tuple[int, int]], transfer: int) -> dict[str, ir.Attribute]:
    return {
        TRANSFER_ATTR: _i64(transfer),
        "channel_id": _i64(channel_id),
        "src_device": _i64(src_device),
        "dst_device": _i64(dst_device),
        "tile": _flat([tile]),
    }


def build_send(value: ir.Value, channel_id: int, src_device: int, dst_device: int,
               tile: Sequence[tuple[int, int]], transfer: int) -> ir.Operation:
    """Insert an ``alpa.send`` of ``tile`` ((start, limit) per dim) of the global ``value``
    at the current insertion point."""
    return ir.Operation.create(SEND_OP, operands=[value],
                               attributes=_tile_attrs(channel_id, src_device, dst_device, tile, transfer))


def build_recv(result_type: ir.Type, channel_id: int, src_device: int, dst_device: int,
               tile: Sequence[tuple[int, int]], transfer: int) -> ir.Operation:
    """Insert an ``alpa.recv`` producing ``result_type`` (the tile's shape) at the current insertion point."""
    return ir.Operation.create(RECV_OP, results=[result_type],
                               attributes=_tile_attrs(channel_id, src_device, dst_device, tile, transfer))


def build_all_gather(pieces: Sequence[ir.Value], result_type: ir.Type, all_gather_dim: int,
                     devices: Sequence[int], transfer: int) -> ir.Operation:
    """Insert an ``alpa.all_gather`` of ``pieces[k]`` (held by ``devices[k]``) at the current insertion point."""
    return ir.Operation.create(ALL_GATHER_OP, operands=list(pieces), results=[result_type], attributes={
        TRANSFER_ATTR: _i64(transfer),
        "all_gather_dim": _i64(all_gather_dim),
        "devices": ir.DenseI64ArrayAttr.get(list(devices)),
    })


def build_assemble(pieces: Sequence[ir.Value], devices: Sequence[int],
                   tiles: Sequence[Sequence[tuple[int, int]]], result_type: ir.Type, sharding: str,
                   mesh: ir.Attribute, *, transfer: int) -> ir.Operation:
    """Insert an ``alpa.assemble`` at the current insertion point: ``pieces[k]`` is the
    ``tiles[k]`` ((start, limit) per dim) that ``devices[k]`` holds; ``sharding`` (an
    ``mhlo.sharding`` string) and ``mesh`` (an ``alpa.mesh`` attribute) say how the
    result is laid out."""
    return ir.Operation.create(ASSEMBLE_OP, operands=list(pieces), results=[result_type], attributes={
        TRANSFER_ATTR: _i64(transfer),
        "devices": ir.DenseI64ArrayAttr.get(list(devices)),
        "tiles": _flat(tiles),
        SHARDING: ir.StringAttr.get(sharding),
        MESH_ATTR: mesh,
    })
