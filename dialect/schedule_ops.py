"""The ``alpa.sched.*`` instructions of a per-mesh pipeline schedule (Sec. 6), in IR and in Python.

``alpa-pipeline-schedule`` writes one ``func.func private @mesh<k>_schedule()`` per
mesh whose body is a flat list of these ops, then ``func.return``. They take no
operands and give no results: everything they name is in their attributes. Values are
named as in ``@main`` (one micro-batch of the step): ``"arg<N>"`` for its arguments,
``"<callee>#<k>"`` for result ``k`` of a stage call, ``"transfer<t>"`` for the value a
cross-mesh transfer assembles. ``micro_batch = m`` says which micro-batch's copy of the
values; an op without it works on step-level values (accumulated gradients, apply
results, transfers of either)::

    "alpa.sched.run"() {callee = @stage0_forward, micro_batch = 0 : i64} : () -> ()
    "alpa.sched.send"() {micro_batch = 0 : i64, transfer = 0 : i64} : () -> ()
    "alpa.sched.recv"() {micro_batch = 0 : i64, transfer = 0 : i64} : () -> ()
    "alpa.sched.all_gather"() {micro_batch = 0 : i64, transfer = 0 : i64} : () -> ()
    "alpa.sched.accumulate"() {micro_batch = 0 : i64, values = ["stage0_backward#0"]} : () -> ()
    "alpa.sched.free"() {micro_batch = 0 : i64, values = ["stage0_forward#1"]} : () -> ()
    "alpa.sched.apply"() {callee = @stage0_apply} : () -> ()

- ``run``: call the stage part ``callee`` on micro-batch ``m``; its inputs and outputs
  are the operands and results of ``@main``'s call to it, micro-batch ``m``'s copies.
- ``send`` / ``recv``: the two sides of transfer ``t`` (the ``alpa.*`` ops of ``@main``
  with ``alpa.transfer = t``), on the source and on the destination mesh. Both meshes
  enter it together (a rendezvous: one collective program over both meshes).
  ``all_gather`` follows the ``recv`` on the destination when the transfer has a local
  all-gather. A transfer that ``@main`` reads across meshes without ``alpa`` transfer
  ops (``alpa-cross-mesh-resharding`` did not run) is a :class:`Move` of the whole value
  instead of ``transfer = t``: ``value = "stage0_forward#0", src_mesh = 0 : i64,
  dst_mesh = 1 : i64``; the destination then holds the value under the same name.
- ``accumulate``: add micro-batch ``m``'s ``values`` into their accumulators; a
  step-level read of the name reads the accumulator. The runtime divides the sum by
  the number of micro-batches, a mean, which for a mean loss is the full batch's value.
- ``free``: drop ``values`` (micro-batch ``m``'s copies, or step-level values).
- ``apply``: call the apply-gradient part ``callee`` once per step.

:class:`Run`, :class:`Send`, ... are the same instructions as plain Python values;
:func:`build_instruction` and :func:`read_instruction` convert, and
:func:`verify_schedule_op` is the ops' verifier (``dialect/alpa_ops.py`` reports
through it).
"""

from __future__ import annotations

from dataclasses import dataclass

from jax._src.lib.mlir import ir

from .context import walk

SCHEDULE_PREFIX = "alpa.sched."


@dataclass(frozen=True, slots=True)
class Move:
    """An implicit transfer: ``value`` copied whole from ``src_mesh`` to ``dst_mesh``."""

    value: str
    src_mesh: int
    dst_mesh: int


TransferKey = int | Move  # ``alpa.transfer = t`` of @main's transfer ops, or an implicit move


@dataclass(frozen=True, slots=True)
class Run:
    """Run stage part ``callee`` (forward or backward) on ``micro_batch``."""

    callee: str
    micro_batch: int


@dataclass(frozen=True, slots=True)
class Send:
    """The source side of ``transfer`` for ``micro_batch`` (``None``: step-level)."""

    transfer: TransferKey
    micro_batch: int | None = None


@dataclass(frozen=True, slots=True)
class Recv:
    """The destination side of ``transfer`` for ``micro_batch`` (``None``: step-level)."""

    transfer: TransferKey
    micro_batch: int | None = None


@dataclass(frozen=True, slots=True)
class AllGather:
    """The destination mesh's local all-gather completing ``transfer`` (Sec. 6)."""

    transfer: TransferKey
    micro_batch: int | None = None


@dataclass(frozen=True, slots=True)
class Accumulate:
    """Add ``micro_batch``'s copies of ``values`` into their accumulators."""

    values: tuple[str, ...]
    micro_batch: int


@dataclass(frozen=True, slots=True)
class Free:
    """Drop ``micro_batch``'s copies of ``values`` (``None``: the step-level values)."""

    values: tuple[str, ...]
    micro_batch: int | None = None


@dataclass(frozen=True, slots=True)
class Apply:
    """Run apply-gradient part ``callee`` once, after every accumulation."""

    callee: str


Instruction = Run | Send | Recv | AllGather | Accumulate | Free | Apply

OP_NAMES: dict[type, str] = {
    Run: "alpa.sched.run", Send: "alpa.sched.send", Recv: "alpa.sched.recv",
    AllGather: "alpa.sched.all_gather", Accumulate: "alpa.sched.accumulate", Free: "alpa.sched.free",
    Apply: "alpa.sched.apply",
}
_CLASSES = {name: cls for cls, name in OP_NAMES.items()}

# Attribute kinds, as the verifier names them.
I64, SYMBOL, STRINGS = "i64", "symbol", "array of strings"


@dataclass(frozen=True, slots=True)
class ScheduleOpDef:
    """Required and optional attributes of one ``alpa.sched`` op."""

    name: str
    required: dict[str, str]
    optional: dict[str, str]


_TRANSFER = {"transfer": I64, "value": "string", "src_mesh": I64, "dst_mesh": I64}
SCHEDULE_OPS: dict[str, ScheduleOpDef] = {d.name: d for d in (
    ScheduleOpDef("alpa.sched.run", {"callee": SYMBOL, "micro_batch": I64}, {}),
    ScheduleOpDef("alpa.sched.send", {}, {**_TRANSFER, "micro_batch": I64}),
    ScheduleOpDef("alpa.sched.recv", {}, {**_TRANSFER, "micro_batch": I64}),
    ScheduleOpDef("alpa.sched.all_gather", {}, {**_TRANSFER, "micro_batch": I64}),
    ScheduleOpDef("alpa.sched.accumulate", {"values": STRINGS, "micro_batch": I64}, {}),
    ScheduleOpDef("alpa.sched.free", {"values": STRINGS}, {"micro_batch": I64}),
    ScheduleOpDef("alpa.sched.apply", {"callee": SYMBOL}, {}),
)}


def _kind_matches(attr: ir.Attribute, kind: str) -> bool:
    try:
        if kind == I64:
            return str(ir.IntegerAttr(attr).type) == "i64"
        if kind == SYMBOL:
            ir.FlatSymbolRefAttr(attr)
        elif kind == "string":
            ir.StringAttr(attr)
        else:
            values = ir.ArrayAttr(attr)
            return len(values) > 0 and all(_kind_matches(v, "string") for v in values)
    except (ValueError, TypeError):
        return False
    return True


def _int(op: ir.Operation, name: str) -> int:
    return ir.IntegerAttr(op.attributes[name]).value


def verify_schedule_op(op: ir.Operation) -> str | None:
    """Why ``op`` (an ``alpa.sched.*`` op) is invalid, or ``None``."""
    definition = SCHEDULE_OPS.get(op.name)
    if definition is None:
        return f"unknown schedule op '{op.name}'; schedule ops are {', '.join(sorted(SCHEDULE_OPS))}"
    if len(op.operands) or len(op.results):
        return f"takes no operands and gives no results, got {len(op.operands)} and {len(op.results)}"
    for name, kind in definition.required.items():
        if name not in op.attributes:
            return f"requires attribute '{name}' ({kind})"
    for name, kind in {**definition.required, **definition.optional}.items():
        if name in op.attributes and not _kind_matches(op.attributes[name], kind):
            return f"attribute '{name}' must be {kind}, got {op.attributes[name]}"
    if "micro_batch" in op.attributes and _int(op, "micro_batch") < 0:
        return f"micro_batch must not be negative, got {_int(op, 'micro_batch')}"
    if "transfer" in definition.optional:
        move = [n for n in ("value", "src_mesh", "dst_mesh") if n in op.attributes]
        if ("transfer" in op.attributes) == bool(move) or 0 < len(move) < 3:
            return ("names its transfer by 'transfer' (i64) or, for an implicit move, by 'value', 'src_mesh' "
                    "and 'dst_mesh'")
        if move and _int(op, "src_mesh") == _int(op, "dst_mesh"):
            return "moves a value from a mesh to itself"
    return None


def verify_schedule_ops(root: ir.Operation) -> list[tuple[ir.Operation, str]]:
    """Every invalid ``alpa.sched.*`` op under ``root`` with the reason: (op, message)."""
    return [(op, f"'{op.name}' op {error}") for op in walk(root)
            if op.name.startswith(SCHEDULE_PREFIX) and (error := verify_schedule_op(op))]


# ----------------------------------------------------------------------------- conversion


def _i64(value: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)


def _strings(values: tuple[str, ...]) -> ir.Attribute:
    return ir.ArrayAttr.get([ir.StringAttr.get(v) for v in values])


def build_instruction(instruction: Instruction) -> ir.Operation:
    """Insert ``instruction`` as its ``alpa.sched`` op at the current insertion point."""
    attributes: dict[str, ir.Attribute] = {}
    match instruction:
        case Run(callee, micro_batch):
            attributes = {"callee": ir.FlatSymbolRefAttr.get(callee), "micro_batch": _i64(micro_batch)}
        case Apply(callee):
            attributes = {"callee": ir.FlatSymbolRefAttr.get(callee)}
        case Send() | Recv() | AllGather():
            key = instruction.transfer
            if isinstance(key, Move):
                attributes = {"value": ir.StringAttr.get(key.value), "src_mesh": _i64(key.src_mesh),
                              "dst_mesh": _i64(key.dst_mesh)}
            else:
                attributes = {"transfer": _i64(key)}
        case Accumulate(values) | Free(values):
            attributes = {"values": _strings(values)}
    micro_batch = getattr(instruction, "micro_batch", None)
    if micro_batch is not None:
        attributes["micro_batch"] = _i64(micro_batch)
    return ir.Operation.create(OP_NAMES[type(instruction)], attributes=attributes)


def read_instruction(op: ir.Operation) -> Instruction:
    """The instruction a verified ``alpa.sched`` op stands for."""
    cls = _CLASSES[op.name]
    micro_batch = _int(op, "micro_batch") if "micro_batch" in op.attributes else None
    if cls in (Run, Apply):
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        return Run(callee, micro_batch) if cls is Run else Apply(callee)
    if cls in (Accumulate, Free):
        values = tuple(ir.StringAttr(v).value for v in ir.ArrayAttr(op.attributes["values"]))
        return cls(values, micro_batch)
    if "transfer" in op.attributes:
        key: TransferKey = _int(op, "transfer")
    else:
        key = Move(ir.StringAttr(op.attributes["value"]).value, _int(op, "src_mesh"), _int(op, "dst_mesh"))
    return cls(key, micro_batch)


def describe(instruction: Instruction) -> str:
    """``send transfer 0 (micro-batch 1)``: an instruction in words, for diagnostics."""
    match instruction:
        case Run(callee, _) | Apply(callee):
            what = f"{type(instruction).__name__.lower()} @{callee}"
        case Accumulate(values) | Free(values):
            what = f"{type(instruction).__name__.lower()} {', '.join(values)}"
        case _:
            key = instruction.transfer
            target = (f"transfer {key}" if isinstance(key, int)
                      else f"{key.value} from mesh {key.src_mesh} to mesh {key.dst_mesh}")
            what = f"{OP_NAMES[type(instruction)].removeprefix(SCHEDULE_PREFIX)} {target}"
    micro_batch = getattr(instruction, "micro_batch", None)
    return what + (f" (micro-batch {micro_batch})" if micro_batch is not None else "")
