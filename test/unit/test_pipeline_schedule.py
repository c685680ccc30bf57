"""alpa-pipeline-schedule: the schedule ops (verifier, IR round trip), reading @main, and the pass on real stages."""

from __future__ import annotations

import jax
import pytest
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import func

from alpa_mlir import models
from alpa_mlir.dialect import make_context
from alpa_mlir.dialect.schedule_ops import (
    Accumulate,
    AllGather,
    Apply,
    Free,
    Move,
    Recv,
    Run,
    Send,
    build_instruction,
    describe,
    read_instruction,
    verify_schedule_op,
    verify_schedule_ops,
)
from alpa_mlir.passes import parse_pipeline, run_pipeline
from alpa_mlir.passes.schedule.pipeline_schedule import PipelineSchedulePass
from alpa_mlir.plans.schedules import Transfer, build_streams, simulate
from alpa_mlir.plans.step_reader import read_step, read_streams

INSTRUCTIONS = [
    Run("stage0_forward", 3), Apply("stage1_apply"),
    Send(0, 1), Recv(2), AllGather(4, 0), Send(Move("stage0_forward#0", 0, 1), 2), Recv(Move("stage1_apply#0", 1, 0)),
    Accumulate(("stage0_backward#0", "stage0_backward#1"), 1), Free(("transfer0",), 0), Free(("stage0_apply#0",)),
]


@pytest.fixture
def mlir():
    with make_context() as context, ir.Location.unknown():
        yield context


def in_function(build) -> ir.Module:
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        function = func.FuncOp("mesh0_schedule", ir.FunctionType.get([], []))
        with ir.InsertionPoint(function.add_entry_block()):
            build()
            func.ReturnOp([])
    return module


def test_instructions_round_trip_through_ir(mlir):
    module = in_function(lambda: [build_instruction(i) for i in INSTRUCTIONS])
    text = str(module)
    assert '"alpa.sched.run"() {callee = @stage0_forward, micro_batch = 3 : i64} : () -> ()' in text
    assert ('"alpa.sched.send"() {dst_mesh = 1 : i64, micro_batch = 2 : i64, src_mesh = 0 : i64, '
            'value = "stage0_forward#0"} : () -> ()') in text
    assert '"alpa.sched.free"() {values = ["stage0_apply#0"]} : () -> ()' in text
    reparsed = ir.Module.parse(text)
    assert verify_schedule_ops(reparsed.operation) == []
    ops = [op.operation for op in reparsed.body.operations[0].regions[0].blocks[0].operations][:-1]
    assert [read_instruction(op) for op in ops] == INSTRUCTIONS


def test_instructions_describe_themselves():
    assert [describe(i) for i in INSTRUCTIONS[:6]] == [
        "run @stage0_forward (micro-batch 3)", "apply @stage1_apply", "send transfer 0 (micro-batch 1)",
        "recv transfer 2", "all_gather transfer 4 (micro-batch 0)",
        "send stage0_forward#0 from mesh 0 to mesh 1 (micro-batch 2)"]


INVALID = {
    "run without callee": ('"alpa.sched.run"() {micro_batch = 0 : i64}', "requires attribute 'callee' (symbol)"),
    "run with a string callee": ('"alpa.sched.run"() {callee = "stage0_forward", micro_batch = 0 : i64}',
                                 "attribute 'callee' must be symbol"),
    "i32 micro-batch": ('"alpa.sched.run"() {callee = @f, micro_batch = 0 : i32}',
                        "attribute 'micro_batch' must be i64"),
    "negative micro-batch": ('"alpa.sched.free"() {micro_batch = -1 : i64, values = ["x"]}',
                             "micro_batch must not be negative, got -1"),
    "empty values": ('"alpa.sched.accumulate"() {micro_batch = 0 : i64, values = []}',
                     "attribute 'values' must be array of strings"),
    "accumulate without micro-batch": ('"alpa.sched.accumulate"() {values = ["x"]}',
                                       "requires attribute 'micro_batch' (i64)"),
    "send naming nothing": ('"alpa.sched.send"() {micro_batch = 0 : i64}', "names its transfer by 'transfer'"),
    "send naming both": ('"alpa.sched.send"() {transfer = 0 : i64, value = "v", src_mesh = 0 : i64, '
                         'dst_mesh = 1 : i64}', "names its transfer by 'transfer'"),
    "move without meshes": ('"alpa.sched.recv"() {value = "v"}', "names its transfer by 'transfer'"),
    "move to itself": ('"alpa.sched.recv"() {value = "v", src_mesh = 1 : i64, dst_mesh = 1 : i64}',
                       "moves a value from a mesh to itself"),
    "with a result": ('%0 = "alpa.sched.apply"() {callee = @f} : () -> i64',
                      "takes no operands and gives no results, got 0 and 1"),
    "unknown": ('"alpa.sched.jump"() {}', "unknown schedule op 'alpa.sched.jump'"),
}


@pytest.mark.parametrize("case", list(INVALID))
def test_verifier_rejects(mlir, case):
    body, message = INVALID[case]
    if "->" not in body:
        body += " : () -> ()"
    module = ir.Module.parse(f"func.func @f() {{\n {body}\n return\n}}")
    (op, got), = verify_schedule_ops(module.operation)
    assert got.startswith(f"'{op.name}' op {message}"), got
    assert verify_schedule_op(op) == got.split(" op ", 1)[1]


def test_pass_options_parse():
    (element,) = parse_pipeline("alpa-pipeline-schedule{schedule=gpipe num-micro-batches=4}")
    assert element == PipelineSchedulePass(schedule="gpipe", num_micro_batches=4)
    with pytest.raises(ValueError, match="'num-micro-batches' must be between 1 and 16384"):
        PipelineSchedulePass(num_micro_batches=0)


# ----------------------------------------------------------------------------- on real stages


@pytest.fixture(scope="module")
def staged_mlp() -> str:
    """A 3-layer MLP step, staged on 1x4 devices and resharded: the text of the module."""
    model = models.mlp(models.MLPConfig(sizes=(16, 16, 16, 16)))
    text = jax.jit(model.train_step).lower(*model.init(jax.random.key(0), 8)).as_text(debug_info=True)
    with make_context():
        module = ir.Module.parse(text)
        run_pipeline(module, "builtin.module(alpa-import-pipeline, alpa-layer-construction{layers=3}, "
                             "alpa-stage-construction{cluster-shape=1,4 stage-mode=manual stage-layers=1,1,1 "
                             "stage-submeshes=1,1,1,1,1,2})")
        return str(module)


@pytest.mark.parametrize("reshard", [True, False])
@pytest.mark.parametrize("schedule,num_micro_batches", [("1f1b", 4), ("gpipe", 3), ("1f1b", 1)])
def test_pass_on_staged_mlp(staged_mlp, reshard, schedule, num_micro_batches):
    with make_context():
        module = ir.Module.parse(staged_mlp)
        if reshard:
            run_pipeline(module, "builtin.module(alpa-cross-mesh-resharding)")
        step = read_step(module.operation)
        assert [c.stage for c in step.program.calls if c.kind == "forward"] == [0, 1, 2]
        assert bool(step.program.transfers) == reshard
        run_pipeline(module, f"builtin.module(alpa-pipeline-schedule{{schedule={schedule} "
                             f"num-micro-batches={num_micro_batches}}})")
        assert verify_schedule_ops(module.operation) == []
        schedules = read_streams(module.operation)
        expected = build_streams(step.program, schedule, num_micro_batches)
        assert {k: list(s.instructions) for k, s in schedules.items()} == expected
        assert simulate(step.program, expected, num_micro_batches) is None
        assert [s.mesh.device_ids for s in schedules.values()] == [(0,), (1,), (2, 3)]
        assert {(s.schedule, s.num_micro_batches) for s in schedules.values()} == {(schedule, num_micro_batches)}
        for k, s in schedules.items():
            runs = [i for i in s.instructions if isinstance(i, Run)]
            assert len(runs) == 2 * num_micro_batches and s.instructions.count(Apply(f"stage{k}_apply")) == 1
            moves = [i for i in s.instructions if isinstance(i, Send | Recv) and isinstance(i.transfer, Move)]
            assert bool(moves) == (not reshard)


def test_pass_reads_all_gather_transfers(mlir):
    # Stage 1 on two devices wants the activation replicated: the local all-gather rewrite.
    module = ir.Module.parse("""
      func.func private @stage0_forward(tensor<4x8xf32>) -> tensor<4x8xf32>
          attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1, 1>}, alpa.stage = 0 : i64}
      func.func private @stage1_forward(tensor<4x8xf32> {mhlo.sharding = "{replicated}"}) -> tensor<4x8xf32>
          attributes {alpa.mesh = {device_ids = array<i64: 1, 2>, shape = array<i64: 1, 2>}, alpa.stage = 1 : i64}
      func.func public @main(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
        %0 = call @stage0_forward(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
        %1 = call @stage1_forward(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
        return %1 : tensor<4x8xf32>
      }""")
    run_pipeline(module, "builtin.module(alpa-cross-mesh-resharding)")
    step = read_step(module.operation)
    assert step.program.transfers == (Transfer(0, "stage0_forward#0", 0, 1, all_gather=True),)
    assert step.program.calls[1].operands == ("transfer0",)
    run_pipeline(module, "builtin.module(alpa-pipeline-schedule{schedule=inference num-micro-batches=2})")
    streams = read_streams(module.operation)
    assert list(streams[1].instructions[:3]) == [Recv(0, 0), AllGather(0, 0), Run("stage1_forward", 0)]
