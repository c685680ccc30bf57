"""``alpa-pipeline-schedule``: one static instruction stream per mesh (Sec. 6), under GPipe, 1F1B (Sec. 2.2) or
interleaved 1F1B."""

from __future__ import annotations

from dataclasses import dataclass, field

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import func

from ...dialect.annotations import MESH_ATTR, funcs
from ...dialect.names import (
    ACCUMULATE_ATTR,
    BACKWARD,
    FORWARD,
    NUM_MICRO_BATCHES_ATTR,
    SCHEDULE_ATTR,
    STAGE_ATTR,
    Accumulation,
    check_accumulation,
)
from ...dialect.pass_registry import Diagnostics, Pass, register
from ...dialect.schedule_ops import build_instruction
from ...plans.schedules import INTERLEAVED, ScheduleError, ScheduleName, analyse, build_streams, simulate
from ...plans.step_reader import Step, StepError, read_step

# The schedules written into the module hold O(B * stages) instructions; pipelines use
# tens to hundreds of micro-batches (Alpa's benchmarks: up to 1024).
MAX_MICRO_BATCHES = 1 << 14


@register
@dataclass(frozen=True)
class PipelineSchedulePass(Pass):
    """Write each mesh's instructions for one training (or inference) step: runs, transfers, accumulations, frees.

    Runs after ``alpa-stage-construction`` and, optionally, ``alpa-cross-mesh-resharding``;
    it is the last pass before lowering. ``@main`` is one micro-batch of the step: calls to
    ``@stage<s>_forward`` / ``_backward`` / ``_apply`` (``alpa.stage``, ``alpa.mesh`` on
    the callee; stages whose parts name the same devices share a mesh, numbered by its
    first stage) and transfer ops tagged ``alpa.transfer = t``
    (``alpa.send`` of a call's result, ``alpa.recv``, optional ``alpa.all_gather``, and the
    ``alpa.assemble`` whose result the consumer reads). ``@main`` stays as it is; the pass
    adds ``@mesh<k>_schedule`` per mesh: the projection of one global order of the clock
    table (``schedules.py``), so the streams cannot deadlock. Forward and backward parts
    run once per micro-batch, apply parts once per step after the last accumulation;
    values that apply parts or the return read are accumulated (the runtime sums and
    divides by ``num-micro-batches``, a mean; ``accumulate=sum``, for a step whose loss
    is a sum over examples, leaves the sum, and the schedules say so as
    ``alpa.accumulate = "sum"``). A value read on another mesh without
    transfer ops is moved whole (``value``, ``src_mesh``, ``dst_mesh`` instead of
    ``transfer``). The instructions are ``dialect/schedule_ops.py``'s; :func:`read_streams`
    reads them back.

    Under ``schedule=interleaved-1f1b virtual-stages=v`` (Narayanan et al., SC'21; beyond
    the paper) ``S`` meshes hold ``v`` stages each, stage ``k`` on mesh ``k mod S``
    (``alpa-stage-construction{virtual-stages=v}`` builds them): each mesh interleaves its
    chunks' forwards and backwards (``clock_tables.py``), for a bubble ``1/v`` as long as
    1F1B's and more activations in flight; ``num-micro-batches`` must be a multiple of
    ``S``. A value passed between two stages of one mesh needs no transfer. The other
    schedules run one stage per mesh.

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
        "help": "1f1b (synchronous 1F1B), gpipe (all forwards, then all backwards), interleaved-1f1b (1F1B over "
                "virtual-stages stages per mesh) or inference (forwards only)"})
    num_micro_batches: int = field(default=1, metadata={"help": "micro-batches B per step"})
    accumulate: Accumulation = field(default="mean", metadata={
        "help": "how the micro-batches' accumulated values (gradients, a loss) combine: mean (a loss averaged over "
                "examples) or sum (a loss summed over examples)"})
    virtual_stages: int = field(default=1, metadata={
        "help": "interleaved-1f1b: stages per mesh v (stage k on mesh k mod S)"})

    def __post_init__(self) -> None:
        if not 1 <= self.num_micro_batches <= MAX_MICRO_BATCHES:
            raise ValueError(f"option 'num-micro-batches' must be between 1 and {MAX_MICRO_BATCHES}; got "
                             f"{self.num_micro_batches}")
        if self.virtual_stages < 1:
            raise ValueError(f"option 'virtual-stages' must be positive; got {self.virtual_stages}")
        check_accumulation(self.accumulate)
        if self.virtual_stages > 1 and self.schedule != INTERLEAVED:
            raise ValueError(f"option 'virtual-stages' is for schedule={INTERLEAVED}; schedule={self.schedule} runs "
                             "one stage per mesh")

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
        if self.schedule == INTERLEAVED and not self._check_interleaved(step, diagnostics):
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
                if self.accumulate == "sum":
                    schedule.attributes[ACCUMULATE_ATTR] = ir.StringAttr.get(self.accumulate)
                with ir.InsertionPoint(schedule.add_entry_block()):
                    for instruction in stream:
                        build_instruction(instruction)
                    func.ReturnOp([])

    def _check_interleaved(self, step: Step, diagnostics: Diagnostics) -> bool:
        """Whether the stages and micro-batches fit ``virtual-stages`` and interleaved 1F1B
        (errors reported at ``@main``)."""
        try:
            flow = analyse(step.program)
        except ScheduleError:
            return True  # build_streams reports it at its call
        if flow.num_stages and flow.virtual_stages != self.virtual_stages:
            diagnostics.error(step.main, f"pipeline schedule: option 'virtual-stages' is {self.virtual_stages}, but "
                                         f"@main has {flow.num_stages} stages on {flow.num_meshes} meshes: build "
                                         f"{self.virtual_stages} stages per mesh (alpa-stage-construction"
                                         f"{{virtual-stages={self.virtual_stages}}}) or set the option to match")
            return False
        if self.num_micro_batches % max(flow.num_meshes, 1):
            diagnostics.error(step.main, f"pipeline schedule: option 'num-micro-batches' ({self.num_micro_batches}) "
                                         f"must be a multiple of the {flow.num_meshes} meshes under schedule="
                                         f"{INTERLEAVED}, which takes the micro-batches in groups of one per mesh")
            return False
        return True
