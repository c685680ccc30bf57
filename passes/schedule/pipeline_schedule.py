"""``alpa-pipeline-schedule``: one static instruction stream per mesh (Sec. 6), under GPipe or 1F1B (Sec. 2.2)."""

from __future__ import annotations

from dataclasses import dataclass, field

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import func

from ...dialect.annotations import MESH_ATTR, find_main, funcs, mesh_from_attr
from ...dialect.mesh import DeviceMesh
from ...dialect.names import APPLY, BACKWARD, FORWARD, NUM_MICRO_BATCHES_ATTR, SCHEDULE_ATTR, STAGE_ATTR, TRANSFER_ATTR
from ...dialect.pass_registry import Diagnostics, Pass, register
from ...dialect.schedule_ops import Instruction, build_instruction, read_instruction, verify_schedule_op
from ...plans.schedules import ScheduleError, ScheduleName, StageCall, StepProgram, Transfer, build_streams, simulate

TRANSFER_OPS = ("alpa.send", "alpa.recv", "alpa.all_gather", "alpa.assemble")
PART_SUFFIXES = {"_forward": FORWARD, "_backward": BACKWARD, "_apply": APPLY}


@register
@dataclass(frozen=True)
class PipelineSchedulePass(Pass):
    """Write each mesh's instructions for one training (or inference) step: runs, transfers, accumulations, frees.

    Runs after ``alpa-stage-construction`` and, optionally, ``alpa-cross-mesh-resharding``;
    it is the last pass before lowering. ``@main`` is one micro-batch of the step: calls to
    ``@stage<s>_forward`` / ``_backward`` / ``_apply`` (``alpa.stage``, ``alpa.mesh`` on
    the callee; stage ``s`` runs on mesh ``s``) and transfer ops tagged ``alpa.transfer = t``
    (``alpa.send`` of a call's result, ``alpa.recv``, optional ``alpa.all_gather``, and the
    ``alpa.assemble`` whose result the consumer reads). ``@main`` stays as it is; the pass
    adds ``@mesh<k>_schedule`` per mesh: the projection of one global order of the clock
    table (``schedules.py``), so the streams cannot deadlock. Forward and backward parts
    run once per micro-batch, apply parts once per step after the last accumulation;
    values that apply parts or the return read are accumulated (the runtime sums and
    divides by ``num-micro-batches``, a mean). A value read on another mesh without
    transfer ops is moved whole (``value``, ``src_mesh``, ``dst_mesh`` instead of
    ``transfer``). The instructions are ``dialect/schedule_ops.py``'s; :func:`read_streams`
    reads them back.

    Input (after resharding)::

        %0:2 = call @stage0_forward(%arg2, %arg0) : (...) -> (...)
        "alpa.send"(%0#0) {alpa.transfer = 0 : i64, channel_id = 0 : i64, ...} : (tensor<4x16xf32>) -> ()
        %1 = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 0 : i64, ...} : () -> tensor<4x16xf32>
        %2 = "alpa.assemble"(%1) {alpa.transfer = 0 : i64, alpa.mesh = {...}, ...} : (...) -> tensor<4x16xf32>
        %3 = call @stage1_forward(%2, %arg1) : (...) -> tensor<f32>

    Output (``schedule=1f1b num-micro-batches=2``), for mesh 1::

        func.func private @mesh1_schedule() attributes {alpa.mesh = {...}, alpa.num_micro_batches = 2 : i64,
                                                        alpa.schedule = "1f1b", alpa.stage = 1 : i64} {
          "alpa.sched.recv"() {micro_batch = 0 : i64, transfer = 0 : i64} : () -> ()
          "alpa.sched.run"() {callee = @stage1_forward, micro_batch = 0 : i64} : () -> ()
          "alpa.sched.accumulate"() {micro_batch = 0 : i64, values = ["stage1_forward#0"]} : () -> ()
          "alpa.sched.free"() {micro_batch = 0 : i64, values = ["stage1_forward#0"]} : () -> ()
          ...
          "alpa.sched.apply"() {callee = @stage1_apply} : () -> ()
          "alpa.sched.free"() {values = ["stage1_backward#0"]} : () -> ()
          return
        }
    """

    name = "alpa-pipeline-schedule"

    schedule: ScheduleName = field(default="1f1b", metadata={
        "help": "1f1b (synchronous 1F1B), gpipe (all forwards, then all backwards) or inference (forwards only)"})
    num_micro_batches: int = field(default=1, metadata={"help": "micro-batches B per step"})

    def __post_init__(self) -> None:
        if self.num_micro_batches < 1:
            raise ValueError(f"option 'num-micro-batches' must be positive; got {self.num_micro_batches}")

    def apply(self, module: ir.Operation, diagnostics: Diagnostics) -> None:
        try:
            step = read_step(module)
        except StepError as error:
            diagnostics.error(error.op or module, f"pipeline schedule: {error}")
            return
        existing = [f for f in funcs(module) if SCHEDULE_ATTR in f.attributes]
        if existing:
            diagnostics.error(existing[0], "pipeline schedule: the module already has schedules; the pass runs once")
            return
        program = step.program
        training = [c for c in program.calls if c.kind != FORWARD]
        if self.schedule == "inference" and training:
            diagnostics.error(step.call_ops[training[0].callee], f"pipeline schedule: schedule=inference runs "
                              f"forward parts only, but @{training[0].callee} is a {training[0].kind} part: use "
                              "schedule=1f1b or schedule=gpipe")
            return
        if self.schedule != "inference" and not any(c.kind == BACKWARD for c in program.calls):
            diagnostics.error(step.main, f"pipeline schedule: schedule={self.schedule} needs backward parts and "
                                         "@main has none: use schedule=inference for a forward-only step")
            return
        try:
            streams = build_streams(program, self.schedule, self.num_micro_batches)
        except ScheduleError as error:
            diagnostics.error(step.call_ops.get(error.callee, step.main), f"pipeline schedule: {error}")
            return
        problem = simulate(program, streams, self.num_micro_batches)
        if problem:  # a dataflow the schedule's order cannot run (a stage reading a later stage's forward)
            diagnostics.error(step.main, f"pipeline schedule: the {self.schedule} order cannot run @main: {problem}")
            return
        i64 = ir.IntegerType.get_signless(64, module.context)
        with ir.InsertionPoint(module.regions[0].blocks[0]), step.main.location:
            for k, stream in streams.items():
                schedule = func.FuncOp(f"mesh{k}_schedule", ir.FunctionType.get([], []), visibility="private")
                schedule.attributes[MESH_ATTR] = step.meshes[k]
                schedule.attributes[STAGE_ATTR] = ir.IntegerAttr.get(i64, k)
                schedule.attributes[SCHEDULE_ATTR] = ir.StringAttr.get(self.schedule)
                schedule.attributes[NUM_MICRO_BATCHES_ATTR] = ir.IntegerAttr.get(i64, self.num_micro_batches)
                with ir.InsertionPoint(schedule.add_entry_block()):
                    for instruction in stream:
                        build_instruction(instruction)
                    func.ReturnOp([])


# ----------------------------------------------------------------------------- reading @main


class StepError(ValueError):
    """``@main`` is not in the form the pass reads; ``op`` is where."""

    def __init__(self, op: ir.Operation | None, message: str):
        super().__init__(message)
        self.op = op


@dataclass(frozen=True)
class Step:
    """``@main`` read as a :class:`StepProgram`, with each stage's ``alpa.mesh`` and the call ops."""

    main: ir.Operation
    program: StepProgram
    meshes: dict[int, ir.Attribute]
    call_ops: dict[str, ir.Operation]


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
    transfer_ops: dict[int, list[ir.Operation]] = {}

    def name_of(value: ir.Value, op: ir.Operation) -> str:
        if value not in names:
            raise StepError(op, "reads a value that is not an argument of @main, a stage call's result or an "
                                "alpa.assemble's result")
        return names[value]

    for op in (o.operation for o in block.operations):
        if op.name == "func.call":
            callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
            function = functions.get(callee)
            if function is None or STAGE_ATTR not in function.attributes or MESH_ATTR not in function.attributes:
                raise StepError(op, f"@{callee} is not a stage part (no alpa.stage and alpa.mesh): run "
                                    "alpa-stage-construction first")
            kind = next((k for s, k in PART_SUFFIXES.items() if callee.endswith(s)), None)
            if kind is None:
                raise StepError(op, f"@{callee} is not named as a stage part: @stage<s>_forward, _backward or _apply")
            stage = ir.IntegerAttr(function.attributes[STAGE_ATTR]).value
            try:
                mesh = mesh_from_attr(function.attributes[MESH_ATTR])
            except ValueError as error:
                raise StepError(op, f"@{callee}: {error}") from None
            _, known, _ = meshes.setdefault(stage, (function.attributes[MESH_ATTR], mesh, op))
            if set(known.device_ids) != set(mesh.device_ids):
                raise StepError(op, f"@{callee} runs on devices {list(mesh.device_ids)}, but other parts of stage "
                                    f"{stage} on {list(known.device_ids)}; a stage has one mesh")
            calls.append(StageCall(callee, stage, kind, tuple(name_of(v, op) for v in op.operands), len(op.results)))
            call_ops[callee] = op
            names.update((r, f"{callee}#{k}") for k, r in enumerate(op.results))
        elif op.name in TRANSFER_OPS:
            if TRANSFER_ATTR not in op.attributes:
                raise StepError(op, f"'{op.name}' has no {TRANSFER_ATTR}: the pass reads transfers as "
                                    "alpa-cross-mesh-resharding writes them")
            t = ir.IntegerAttr(op.attributes[TRANSFER_ATTR]).value
            transfer_ops.setdefault(t, []).append(op)
            if op.name == "alpa.assemble":
                names[op.results[0]] = f"transfer{t}"
        elif op.name == "func.return":
            returned = tuple(name_of(v, op) for v in op.operands)
        else:
            raise StepError(op, f"unexpected '{op.name}' in @main: the pass expects stage calls, transfers and the "
                                "return (run alpa-stage-construction first)")
    stages = sorted(meshes)
    if stages != list(range(len(stages))):
        raise StepError(main, f"stages are numbered 0, 1, ...; @main calls stages {stages}")
    for s in stages:
        for other in stages[:s]:
            shared = set(meshes[s][1].device_ids) & set(meshes[other][1].device_ids)
            if shared:
                raise StepError(meshes[s][2], f"stages {other} and {s} share devices {sorted(shared)}; each stage "
                                              "needs a mesh of its own")
    stage_of = {frozenset(m.device_ids): s for s, (_, m, _) in meshes.items()}
    producers = {r: c.stage for c in calls for r in c.results}
    transfers = [_read_transfer(t, ops, names, producers, stage_of) for t, ops in sorted(transfer_ops.items())]
    return Step(main, StepProgram(tuple(calls), tuple(transfers), returned), {s: meshes[s][0] for s in stages},
                call_ops)


def _read_transfer(t: int, ops: list[ir.Operation], names: dict[ir.Value, str], producers: dict[str, int],
                   stage_of: dict[frozenset, int]) -> Transfer:
    sends = [op for op in ops if op.name == "alpa.send"]
    assembles = [op for op in ops if op.name == "alpa.assemble"]
    if not sends or len(assembles) != 1:
        raise StepError(ops[0], f"transfer {t} needs alpa.send ops and one alpa.assemble; it has {len(sends)} and "
                                f"{len(assembles)}")
    sources = {names.get(op.operands[0], "") for op in sends}
    if len(sources) != 1 or next(iter(sources)) not in producers:
        raise StepError(sends[0], f"transfer {t} must send one result of a stage call")
    if MESH_ATTR not in assembles[0].attributes:
        raise StepError(assembles[0], f"the alpa.assemble of transfer {t} needs {MESH_ATTR}, its destination mesh")
    try:
        devices = frozenset(mesh_from_attr(assembles[0].attributes[MESH_ATTR]).device_ids)
    except ValueError as error:
        raise StepError(assembles[0], str(error)) from None
    if devices not in stage_of:
        raise StepError(assembles[0], f"transfer {t} delivers to devices {sorted(devices)}, which are no stage's mesh")
    (source,) = sources
    if stage_of[devices] == producers[source]:
        raise StepError(assembles[0], f"transfer {t} delivers to the mesh it starts from (stage {producers[source]})")
    return Transfer(t, source, producers[source], stage_of[devices],
                    any(op.name == "alpa.all_gather" for op in ops))


# ----------------------------------------------------------------------------- reading schedules


@dataclass(frozen=True, slots=True)
class MeshSchedule:
    """One mesh's stream, as ``@mesh<k>_schedule`` holds it: mesh ``k`` runs stage ``k``."""

    stage: int
    mesh: DeviceMesh
    schedule: str
    num_micro_batches: int
    instructions: tuple[Instruction, ...]


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
            error = verify_schedule_op(op) if op.name.startswith("alpa.sched.") else "is not a schedule op"
            if error:
                raise ValueError(f"{function.attributes['sym_name']}: '{op.name}' {error}")
            instructions.append(read_instruction(op))
        stage = ir.IntegerAttr(function.attributes[STAGE_ATTR]).value
        result[stage] = MeshSchedule(stage, mesh_from_attr(function.attributes[MESH_ATTR]),
                                     ir.StringAttr(function.attributes[SCHEDULE_ATTR]).value,
                                     ir.IntegerAttr(function.attributes[NUM_MICRO_BATCHES_ATTR]).value,
                                     tuple(instructions))
    return dict(sorted(result.items()))
