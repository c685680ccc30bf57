"""The readers of a pipelined step's IR: ``@main``'s stage calls and transfers, and each
mesh's schedule, read into the plain data of ``plans.schedules`` and ``plans.reshard_plan``.

``alpa-cross-mesh-resharding`` writes the transfers, ``alpa-pipeline-schedule`` reads the
step and writes the schedules, and the runtime executes all three; each is read here,
once, for all of them. A transfer is its ``alpa.send``, ``alpa.recv``,
``alpa.all_gather`` and ``alpa.assemble`` ops, tagged with one ``alpa.transfer`` id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np
from jax._src.lib.mlir import ir

from ..dialect.annotations import MESH_ATTR, MHLO_SHARDING, find_main, funcs, get_value_attrs, mesh_from_attr
from ..dialect.jax_interop import aval_of
from ..dialect.mesh import DeviceMesh
from ..dialect.names import (
    ACCUMULATE_ATTR,
    ACCUMULATIONS,
    ALL_GATHER_OP,
    APPLY,
    ASSEMBLE_OP,
    NUM_MICRO_BATCHES_ATTR,
    RECV_OP,
    SCHEDULE_ATTR,
    SEND_OP,
    STAGE_ATTR,
    TRANSFER_ATTR,
    TRANSFER_OPS,
    Accumulation,
    Phase,
)
from ..dialect.schedule_ops import SCHEDULE_PREFIX, Instruction, read_instruction, verify_schedule_op
from ..dialect.sharding import ShardingError, ShardingSpec
from .reshard_plan import LocalGather, ReshardPlan, Tile, TileMove, check_plan
from .schedules import StageCall, StepProgram, Transfer

# A stage part's name ends in _forward, _backward, _apply, or _apply<k> (a later apply part).
PART_NAME = re.compile(r"_(forward|backward|apply)(\d*)$")
REPLICATED = "{replicated}"


# ----------------------------------------------------------------------------- where values live


@dataclass(frozen=True)
class ValueLocation:
    """Where a value of ``@main`` lives: a mesh (and its ``alpa.mesh`` attribute) and an
    ``mhlo.sharding`` written against the mesh's shape; ``what`` names the annotation."""

    mesh: DeviceMesh
    mesh_attr: ir.Attribute
    sharding: str
    what: str

    def spec(self, rank: int) -> ShardingSpec:
        """The sharding as a spec; raises :class:`ShardingError` naming the annotation."""
        try:
            return ShardingSpec.from_mhlo(self.sharding, DeviceMesh(self.mesh.shape), rank)
        except ShardingError as error:
            raise ShardingError(f"the sharding of {self.what}: {error}") from None


def body(main: ir.Operation) -> list[ir.Operation]:
    """The ops of ``@main``'s body, in order."""
    return [op.operation for op in main.regions[0].blocks[0].operations]


def callee_name(call: ir.Operation) -> str:
    """The function a ``func.call`` calls."""
    return ir.FlatSymbolRefAttr(call.attributes["callee"]).value


def func_mesh(func: ir.Operation) -> DeviceMesh:
    """A stage function's ``alpa.mesh``; ``ValueError`` when it is not a mesh."""
    return mesh_from_attr(func.attributes[MESH_ATTR])


def sharding_text(attrs: dict[str, ir.Attribute]) -> str:
    """The ``mhlo.sharding`` of an argument's or result's attributes (none: replicated)."""
    return ir.StringAttr(attrs[MHLO_SHARDING]).value if MHLO_SHARDING in attrs else REPLICATED


def value_location(value: ir.Value, stages: dict[str, ir.Operation]) -> ValueLocation | None:
    """Where ``value`` lives: a stage call's result, or an earlier transfer's
    ``alpa.assemble`` (so the pass may run twice); None for an argument of ``@main``.
    Raises ``ValueError`` for any other producer."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    owner = owner.operation
    if owner.name == ASSEMBLE_OP:
        return ValueLocation(mesh_from_attr(owner.attributes[MESH_ATTR]), owner.attributes[MESH_ATTR],
                             ir.StringAttr(owner.attributes[MHLO_SHARDING]).value, "an alpa.assemble")
    if owner.name != "func.call" or callee_name(owner) not in stages:
        raise ValueError(f"it is produced by '{owner.name}', which is not a stage call")
    producer, number = stages[callee_name(owner)], ir.OpResult(value).result_number
    return ValueLocation(func_mesh(producer), producer.attributes[MESH_ATTR],
                         sharding_text(get_value_attrs(producer, "res_attrs")[number]),
                         f"result #{number} of @{callee_name(owner)}")


# ----------------------------------------------------------------------------- reading @main


def _part_kind(callee: str) -> Phase | None:
    """The part a stage function's name says it is (None: not a part's name)."""
    match = PART_NAME.search(callee)
    if match is None or (match[2] and match[1] != APPLY):
        return None
    return match[1]  # the phase's own name


class StepError(ValueError):
    """``@main`` is not in the form the pass reads; ``op`` is where."""

    def __init__(self, op: ir.Operation | None, message: str):
        super().__init__(message)
        self.op = op


@dataclass(frozen=True)
class Step:
    """``@main`` read as a :class:`StepProgram`, with each mesh's ``alpa.mesh`` and the call ops.

    Stages whose parts name the same devices share a mesh (``interleaved-1f1b``'s virtual
    stages); meshes are numbered by their first stage."""

    main: ir.Operation
    program: StepProgram
    meshes: dict[int, ir.Attribute]
    call_ops: dict[str, ir.Operation]


def _stage_part(op: ir.Operation, functions: dict[str, ir.Operation],
                ) -> tuple[str, int, Phase, ir.Attribute, DeviceMesh]:
    """A call of ``@main``: its callee, stage, part, ``alpa.mesh`` and that mesh."""
    callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
    function = functions.get(callee)
    if function is None or STAGE_ATTR not in function.attributes or MESH_ATTR not in function.attributes:
        raise StepError(op, f"@{callee} is not a stage part (no alpa.stage and alpa.mesh): run "
                            "alpa-stage-construction first")
    kind = _part_kind(callee)
    if kind is None:
        raise StepError(op, f"@{callee} is not named as a stage part: @stage<s>_forward, _backward, _apply "
                            "or _apply<k>")
    try:
        mesh = mesh_from_attr(function.attributes[MESH_ATTR])
    except ValueError as error:
        raise StepError(op, f"@{callee}: {error}") from None
    return callee, ir.IntegerAttr(function.attributes[STAGE_ATTR]).value, kind, function.attributes[MESH_ATTR], mesh


def _mesh_numbers(main: ir.Operation, stages: list[int],
                  meshes: dict[int, tuple[ir.Attribute, DeviceMesh, ir.Operation]]) -> dict[frozenset, int]:
    """Each distinct device set of the ``stages`` (``meshes``: per stage its mesh and first
    call) numbered by its first stage; stages share a mesh whole or not at all."""
    if stages != list(range(len(stages))):
        raise StepError(main, f"stages are numbered 0, 1, ...; @main calls stages {stages}")
    mesh_of: dict[frozenset, int] = {}  # devices -> mesh number
    for s in stages:
        devices = frozenset(meshes[s][1].device_ids)
        for other in stages[:s]:
            shared = devices & set(meshes[other][1].device_ids)
            if shared and devices != set(meshes[other][1].device_ids):
                raise StepError(meshes[s][2], f"stages {other} and {s} share devices {sorted(shared)}; each stage "
                                              "needs a mesh of its own, or the very mesh of the stages it shares it "
                                              "with")
        mesh_of.setdefault(devices, len(mesh_of))
    return mesh_of


def read_step(module: ir.Operation) -> Step:
    """Read ``@main``'s stage calls, transfers and return; raise :class:`StepError` at the op at fault."""
    try:
        main = find_main(module)
    except ValueError as error:
        raise StepError(None, str(error)) from None
    functions = {ir.StringAttr(f.attributes["sym_name"]).value: f for f in funcs(module)}
    block = main.regions[0].blocks[0]
    names: dict[ir.Value, str] = {a: f"arg{i}" for i, a in enumerate(block.arguments)}
    calls, call_ops, returned = [], {}, ()
    meshes: dict[int, tuple[ir.Attribute, DeviceMesh, ir.Operation]] = {}
    transfers = transfer_ops(main)
    names.update((ops.assemble.results[0], f"transfer{t}") for t, ops in transfers.items())

    def name_of(value: ir.Value, op: ir.Operation) -> str:
        if value not in names:
            raise StepError(op, "reads a value that is not an argument of @main, a stage call's result or an "
                                "alpa.assemble's result")
        return names[value]

    for op in (o.operation for o in block.operations):
        if op.name == "func.call":
            callee, stage, kind, mesh_attr, mesh = _stage_part(op, functions)
            _, known, _ = meshes.setdefault(stage, (mesh_attr, mesh, op))
            if set(known.device_ids) != set(mesh.device_ids):
                raise StepError(op, f"@{callee} runs on devices {list(mesh.device_ids)}, but other parts of stage "
                                    f"{stage} on {list(known.device_ids)}; a stage has one mesh")
            calls.append(StageCall(callee, stage, kind, tuple(name_of(v, op) for v in op.operands), len(op.results)))
            call_ops[callee] = op
            names.update((r, f"{callee}#{k}") for k, r in enumerate(op.results))
        elif op.name in TRANSFER_OPS:
            continue  # read whole by transfer_ops above
        elif op.name == "func.return":
            returned = tuple(name_of(v, op) for v in op.operands)
        else:
            raise StepError(op, f"unexpected '{op.name}' in @main: the pass expects stage calls, transfers and the "
                                "return (run alpa-stage-construction first)")
    stages = sorted(meshes)
    mesh_of = _mesh_numbers(main, stages, meshes)
    stage_meshes = tuple(mesh_of[frozenset(meshes[s][1].device_ids)] for s in stages)
    producers = {r: stage_meshes[c.stage] for c in calls for r in c.results}
    program = StepProgram(tuple(calls), tuple(_step_transfer(ops, names, producers, mesh_of)
                                              for ops in transfers.values()), returned,
                          stage_meshes if stage_meshes != tuple(stages) else ())
    return Step(main, program, {stage_meshes[s]: meshes[s][0] for s in reversed(stages)}, call_ops)


@dataclass(frozen=True)
class TransferOps:
    """The ops of transfer ``transfer`` in ``@main``: its sends, its recvs in channel
    order, its local all-gathers and its one assemble."""

    transfer: int
    sends: tuple[ir.Operation, ...]
    recvs: tuple[ir.Operation, ...]
    all_gathers: tuple[ir.Operation, ...]
    assemble: ir.Operation


def transfer_ops(main: ir.Operation) -> dict[int, TransferOps]:
    """Every transfer of ``@main`` by its ``alpa.transfer`` id, in id order; raises
    :class:`StepError` at a transfer op without the id, or at a transfer that has no
    sends, not one assemble, or not a recv for each send."""
    found: dict[int, list[ir.Operation]] = {}
    for op in body(main):
        if op.name not in TRANSFER_OPS:
            continue
        if TRANSFER_ATTR not in op.attributes:
            raise StepError(op, f"'{op.name}' has no {TRANSFER_ATTR}: the pass reads transfers as "
                                "alpa-cross-mesh-resharding writes them")
        found.setdefault(ir.IntegerAttr(op.attributes[TRANSFER_ATTR]).value, []).append(op)
    return {t: _transfer_ops(t, ops) for t, ops in sorted(found.items())}


def _transfer_ops(t: int, ops: list[ir.Operation]) -> TransferOps:
    by_kind: dict[str, list[ir.Operation]] = {name: [] for name in TRANSFER_OPS}
    for op in ops:
        by_kind[op.name].append(op)
    sends, recvs, assembles = by_kind[SEND_OP], by_kind[RECV_OP], by_kind[ASSEMBLE_OP]
    if not sends or len(assembles) != 1:
        raise StepError(ops[0], f"transfer {t} needs alpa.send ops and one alpa.assemble; it has {len(sends)} and "
                                f"{len(assembles)}")
    if len(recvs) != len(sends):
        raise StepError(sends[0], f"transfer {t} has {len(sends)} alpa.send ops but {len(recvs)} alpa.recv ops")
    recvs.sort(key=lambda op: ir.IntegerAttr(op.attributes["channel_id"]).value)
    return TransferOps(t, tuple(sends), tuple(recvs), tuple(by_kind[ALL_GATHER_OP]), assembles[0])


def _step_transfer(ops: TransferOps, names: dict[ir.Value, str], producers: dict[str, int],
                   mesh_of: dict[frozenset, int]) -> Transfer:
    """The transfer as the schedule sees it: which stage call's result (``producers``: its
    mesh) goes to which mesh."""
    t, assemble = ops.transfer, ops.assemble
    sources = {names.get(op.operands[0], "") for op in ops.sends}
    if len(sources) != 1 or next(iter(sources)) not in producers:
        raise StepError(ops.sends[0], f"transfer {t} must send one result of a stage call")
    if MESH_ATTR not in assemble.attributes:
        raise StepError(assemble, f"the alpa.assemble of transfer {t} needs {MESH_ATTR}, its destination mesh")
    try:
        devices = frozenset(mesh_from_attr(assemble.attributes[MESH_ATTR]).device_ids)
    except ValueError as error:
        raise StepError(assemble, str(error)) from None
    if devices not in mesh_of:
        raise StepError(assemble, f"transfer {t} delivers to devices {sorted(devices)}, which are no stage's mesh")
    (source,) = sources
    if mesh_of[devices] == producers[source]:
        raise StepError(assemble, f"transfer {t} delivers to the mesh it starts from (mesh {producers[source]})")
    return Transfer(t, source, producers[source], mesh_of[devices], bool(ops.all_gathers))


# ----------------------------------------------------------------------------- reading transfers


@dataclass(frozen=True)
class TransferSpec:
    """One transfer of ``@main`` read back from its ``alpa`` ops: what the runtime executes."""

    plan: ReshardPlan
    src_mesh: DeviceMesh
    src_spec: ShardingSpec
    dst_mesh: DeviceMesh
    dst_spec: ShardingSpec
    dtype: np.dtype


def _tile(op: ir.Operation) -> Tile:
    flat = list(ir.DenseI64ArrayAttr(op.attributes["tile"]))
    return tuple(zip(flat[0::2], flat[1::2]))


def read_transfers(module: ir.Operation) -> dict[int, TransferSpec]:
    """Every transfer of ``@main`` (by ``alpa.transfer`` id) as the pass wrote it: the inverse
    of the emission, so a hand-edited transfer runs as written. The module must pass the
    ``alpa`` verifier; raises ``ValueError`` for a transfer that is not whole."""
    main = find_main(module)
    stages = {ir.StringAttr(op.attributes["sym_name"]).value: op for op in funcs(module)}
    return {t: _transfer_spec(ops, stages) for t, ops in transfer_ops(main).items()}


def _transfer_spec(ops: TransferOps, stages: dict[str, ir.Operation]) -> TransferSpec:
    t, assemble = ops.transfer, ops.assemble
    first = ir.IntegerAttr(ops.recvs[0].attributes["channel_id"]).value
    received = {}  # recv result -> its move's index
    moves = []
    for index, op in enumerate(ops.recvs):
        moves.append(TileMove(ir.IntegerAttr(op.attributes["channel_id"]).value - first,
                              ir.IntegerAttr(op.attributes["src_device"]).value,
                              ir.IntegerAttr(op.attributes["dst_device"]).value, _tile(op)))
        received[op.results[0]] = index
    gathers = []
    for g, op in enumerate(ops.all_gathers):
        dim = ir.IntegerAttr(op.attributes["all_gather_dim"]).value
        pieces = [received[value] for value in op.operands]
        for index in pieces:
            moves[index] = replace(moves[index], gather=g)
        tiles = [moves[index].tile for index in pieces]
        tile = tuple((tiles[0][d][0], tiles[-1][d][1]) if d == dim else tiles[0][d] for d in range(len(tiles[0])))
        gathers.append(LocalGather(tuple(ir.DenseI64ArrayAttr(op.attributes["devices"])), dim, tile))
    rank = len(moves[0].tile)
    flat = list(ir.DenseI64ArrayAttr(assemble.attributes["tiles"]))
    dst_tiles: dict[int, list[tuple[int, int]]] = {}
    for k, device in enumerate(ir.DenseI64ArrayAttr(assemble.attributes["devices"])):
        bounds = list(zip(flat[2 * rank * k:2 * rank * (k + 1):2], flat[2 * rank * k + 1:2 * rank * (k + 1):2]))
        known = dst_tiles.setdefault(device, bounds)
        dst_tiles[device] = [(min(a[0], b[0]), max(a[1], b[1])) for a, b in zip(known, bounds)]
    value = ops.sends[0].operands[0]
    shape = tuple(ir.RankedTensorType(value.type).shape)
    source = value_location(value, stages)
    destination = ValueLocation(mesh_from_attr(assemble.attributes[MESH_ATTR]), assemble.attributes[MESH_ATTR],
                                ir.StringAttr(assemble.attributes[MHLO_SHARDING]).value,
                                f"transfer {t}'s destination")
    plan = ReshardPlan(shape, tuple(moves), tuple(gathers), {d: tuple(b) for d, b in dst_tiles.items()})
    check_plan(plan)
    return TransferSpec(plan, source.mesh, source.spec(len(shape)), destination.mesh, destination.spec(len(shape)),
                        aval_of(value.type, f"the value of transfer {t}").dtype)


# ----------------------------------------------------------------------------- reading schedules


@dataclass(frozen=True, slots=True)
class MeshSchedule:
    """One mesh's stream, as ``@mesh<k>_schedule`` holds it: ``stage`` is ``k``, the mesh's first stage."""

    stage: int
    mesh: DeviceMesh
    schedule: str
    num_micro_batches: int
    instructions: tuple[Instruction, ...]
    accumulate: Accumulation = "mean"


def read_streams(module: ir.Operation) -> dict[int, MeshSchedule]:
    """Every ``@mesh<k>_schedule`` of ``module`` by mesh ``k``; ``ValueError`` on an invalid instruction."""
    result = {}
    for function in funcs(module):
        if SCHEDULE_ATTR not in function.attributes:
            continue
        instructions = []
        for op in (o.operation for o in function.regions[0].blocks[0].operations):
            if op.name == "func.return":
                continue
            error = verify_schedule_op(op) if op.name.startswith(SCHEDULE_PREFIX) else "is not a schedule op"
            if error:
                raise ValueError(f"{function.attributes['sym_name']}: '{op.name}' {error}")
            instructions.append(read_instruction(op))
        stage = ir.IntegerAttr(function.attributes[STAGE_ATTR]).value
        result[stage] = MeshSchedule(stage, mesh_from_attr(function.attributes[MESH_ATTR]),
                                     ir.StringAttr(function.attributes[SCHEDULE_ATTR]).value,
                                     ir.IntegerAttr(function.attributes[NUM_MICRO_BATCHES_ATTR]).value,
                                     tuple(instructions), _accumulation(function))
    return dict(sorted(result.items()))


def _accumulation(function: ir.Operation) -> Accumulation:
    """A schedule's ``alpa.accumulate``: ``"sum"``, or ``"mean"`` where it has none."""
    if ACCUMULATE_ATTR not in function.attributes:
        return "mean"
    value = function.attributes[ACCUMULATE_ATTR]
    text = ir.StringAttr(value).value if isinstance(value, ir.StringAttr) else str(value)
    if text not in ACCUMULATIONS:
        raise ValueError(f"{function.attributes['sym_name']}: {ACCUMULATE_ATTR} must be one of "
                         f"{', '.join(map(repr, ACCUMULATIONS))}; got {value}")
    return text


def accumulation(streams: dict[int, MeshSchedule]) -> Accumulation:
    """How ``streams`` combine micro-batches (``"mean"`` where there are none); ``ValueError``
    where they disagree, which one ``alpa-pipeline-schedule`` never writes."""
    kinds = sorted({s.accumulate for s in streams.values()})
    if len(kinds) > 1:
        raise ValueError(f"the schedules combine micro-batches differently ({ACCUMULATE_ATTR} {' and '.join(kinds)})")
    return kinds[0] if kinds else "mean"
