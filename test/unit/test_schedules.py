"""Pipeline schedules: clock tables (GPipe, 1F1B, inference), per-mesh streams and their simulation."""

from __future__ import annotations

import itertools
import re

import pytest

from alpa_mlir.dialect.schedule_ops import Accumulate, AllGather, Apply, Free, Move, Recv, Run, Send
from alpa_mlir.plans.schedules import (
    ScheduleError,
    StageCall,
    StepProgram,
    Task,
    Transfer,
    analyse,
    build_streams,
    clock_table,
    dependencies,
    interleave,
    reusable_arguments,
    simulate,
    stage_orders,
)

SIZES = [(s, b) for s in range(1, 6) for b in range(1, 9)]


def training_tasks(num_stages: int, num_micro_batches: int) -> set[Task]:
    return {Task(s, m, k) for s in range(num_stages) for m in range(num_micro_batches)
            for k in ("forward", "backward")}


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b", "inference"])
@pytest.mark.parametrize("num_stages,num_micro_batches", SIZES)
def test_every_task_once_one_per_stage_and_clock_after_its_dependencies(schedule, num_stages, num_micro_batches):
    table = clock_table(schedule, num_stages, num_micro_batches)
    tasks = [t for clock in table for t in clock]
    expected = training_tasks(num_stages, num_micro_batches)
    if schedule == "inference":
        expected = {t for t in expected if t.kind == "forward"}
    assert len(tasks) == len(set(tasks)) and set(tasks) == expected
    when = {t: c for c, clock in enumerate(table) for t in clock}
    for clock in table:
        assert len({t.stage for t in clock}) == len(clock) and clock == sorted(clock)
    for task, clock in when.items():
        assert all(when[d] < clock for d in dependencies(task, num_stages))


@pytest.mark.parametrize("num_stages,num_micro_batches", SIZES)
def test_clock_counts_are_eq_2_with_unit_stage_times(num_stages, num_micro_batches):
    # Eq. 2 with t_i = 2 (a forward and a backward): sum t_i + (B - 1) max t_j = 2 (S + B - 1).
    assert len(clock_table("gpipe", num_stages, num_micro_batches)) == 2 * (num_micro_batches + num_stages - 1)
    assert len(clock_table("1f1b", num_stages, num_micro_batches)) == 2 * (num_micro_batches + num_stages - 1)
    assert len(clock_table("inference", num_stages, num_micro_batches)) == num_micro_batches + num_stages - 1


def in_flight_peaks(tasks: list[Task]) -> int:
    """The most micro-batches forwarded and not yet backwarded along a stage's task order."""
    peak, flight = 0, set()
    for task in tasks:
        (flight.add if task.kind == "forward" else flight.discard)(task.micro_batch)
        peak = max(peak, len(flight))
    return peak


@pytest.mark.parametrize("num_stages,num_micro_batches", SIZES)
def test_1f1b_keeps_at_most_s_minus_i_micro_batches_in_flight(num_stages, num_micro_batches):
    table = clock_table("1f1b", num_stages, num_micro_batches)
    for i in range(num_stages):
        by_clock = [t for clock in table for t in clock if t.stage == i]
        assert by_clock == stage_orders("1f1b", num_stages, num_micro_batches)[i]
        assert in_flight_peaks(by_clock) == min(num_stages - i, num_micro_batches)


@pytest.mark.parametrize("num_stages,num_micro_batches", SIZES)
def test_gpipe_runs_every_forward_of_a_stage_before_its_backwards(num_stages, num_micro_batches):
    table = clock_table("gpipe", num_stages, num_micro_batches)
    for i in range(num_stages):
        kinds = [t.kind for clock in table for t in clock if t.stage == i]
        assert kinds == ["forward"] * num_micro_batches + ["backward"] * num_micro_batches


def test_1f1b_orders_warm_up_then_alternate():
    def names(tasks):
        return " ".join(f"{t.kind[0].upper()}{t.micro_batch}" for t in tasks)

    orders = stage_orders("1f1b", 4, 5)
    assert [names(o) for o in orders] == [
        "F0 F1 F2 F3 B0 F4 B1 B2 B3 B4",
        "F0 F1 F2 B0 F3 B1 F4 B2 B3 B4",
        "F0 F1 B0 F2 B1 F3 B2 F4 B3 B4",
        "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4",
    ]
    assert names(stage_orders("1f1b", 4, 2)[0]) == "F0 F1 B0 B1"  # fewer micro-batches than warm-up slots


def fewest_clocks(num_stages: int, num_micro_batches: int) -> int:
    """Brute force: the fewest clocks of any schedule running one task per stage per clock."""
    everything = frozenset(training_tasks(num_stages, num_micro_batches))
    level, clocks = {frozenset()}, 0
    while everything not in level:
        following = set()
        for done in level:
            choices = [[None] + [t for t in everything - done if t.stage == s
                                 and all(d in done for d in dependencies(t, num_stages))]
                       for s in range(num_stages)]
            following.update(done | {t for t in pick if t} for pick in itertools.product(*choices))
        level, clocks = following, clocks + 1
    return clocks


@pytest.mark.parametrize("num_stages,num_micro_batches", [(1, 1), (1, 3), (2, 1), (2, 2), (2, 3), (3, 1), (3, 2)])
def test_training_schedules_take_the_fewest_clocks_possible(num_stages, num_micro_batches):
    best = fewest_clocks(num_stages, num_micro_batches)
    assert best == 2 * (num_micro_batches + num_stages - 1)
    assert len(clock_table("1f1b", num_stages, num_micro_batches)) == best
    assert len(clock_table("gpipe", num_stages, num_micro_batches)) == best


def test_bad_schedule_arguments_are_rejected():
    with pytest.raises(ValueError, match="unknown schedule 'pipedream'"):
        stage_orders("pipedream", 2, 2)
    with pytest.raises(ValueError, match="at least one stage and one micro-batch"):
        clock_table("1f1b", 2, 0)


# ----------------------------------------------------------------------------- streams


def chain(num_stages: int, *, training: bool = True, explicit: bool = True, all_gather: bool = False,
          meshes: tuple[int, ...] = ()) -> StepProgram:
    """An S-stage pipeline: stage s's forward reads the previous activation and parameter
    ``arg<s+1>`` and keeps a residual for its backward; backwards pass gradients down;
    applies update the parameters. Returns the new parameters and the loss. ``meshes``:
    stage s runs on mesh ``meshes[s]`` (default s); two stages of one mesh need no transfer."""
    calls, transfers = [], []
    mesh = meshes or tuple(range(num_stages))

    def cross(value: str, src: int, dst: int) -> str:
        if not explicit or mesh[src] == mesh[dst]:
            return value
        transfers.append(Transfer(len(transfers), value, mesh[src], mesh[dst], all_gather))
        return f"transfer{len(transfers) - 1}"

    activation = "arg0"
    inputs = []
    for s in range(num_stages):
        last = s == num_stages - 1
        inputs.append(activation)
        calls.append(StageCall(f"stage{s}_forward", s, "forward", (activation, f"arg{s + 1}"), 1 if last else 2))
        if not last:
            activation = cross(f"stage{s}_forward#0", s, s + 1)
    if not training:
        return StepProgram(tuple(calls), tuple(transfers), (f"stage{num_stages - 1}_forward#0",), meshes)
    gradient = None
    for s in reversed(range(num_stages)):
        saved = inputs[s] if s == num_stages - 1 else f"stage{s}_forward#1"
        operands = ((gradient,) if gradient else ()) + (saved, f"arg{s + 1}")
        calls.append(StageCall(f"stage{s}_backward", s, "backward", operands, 2 if s else 1))
        if s:
            gradient = cross(f"stage{s}_backward#1", s, s - 1)
    calls += [StageCall(f"stage{s}_apply", s, "apply", (f"stage{s}_backward#0", f"arg{s + 1}"), 1)
              for s in range(num_stages)]
    returned = tuple(f"stage{s}_apply#0" for s in range(num_stages)) + (f"stage{num_stages - 1}_forward#0",)
    return StepProgram(tuple(calls), tuple(transfers), returned, meshes)


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
@pytest.mark.parametrize("num_stages,num_micro_batches", [(s, b) for s in range(1, 5) for b in range(1, 7)])
def test_emitted_streams_never_deadlock_and_free_everything(schedule, num_stages, num_micro_batches):
    for explicit, all_gather in ((True, False), (True, True), (False, False)):
        program = chain(num_stages, explicit=explicit, all_gather=all_gather)
        streams = build_streams(program, schedule, num_micro_batches)
        assert simulate(program, streams, num_micro_batches) is None
        for k, stream in streams.items():
            runs = [i for i in stream if isinstance(i, Run)]
            assert sorted(runs, key=lambda r: r.callee) == sorted(
                (Run(f"stage{k}_{kind}", m) for kind in ("forward", "backward") for m in range(num_micro_batches)),
                key=lambda r: r.callee)
            assert [i for i in stream if isinstance(i, Apply)] == [Apply(f"stage{k}_apply")]
            apply = stream.index(Apply(f"stage{k}_apply"))
            assert all(not isinstance(i, Run | Accumulate) for i in stream[apply:])
            if schedule == "1f1b":
                order = [Task(k, r.micro_batch, r.callee.split("_")[1]) for r in runs]
                assert in_flight_peaks(order) <= num_stages - k


@pytest.mark.parametrize("num_stages,num_micro_batches", [(s, b) for s in range(1, 5) for b in range(1, 7)])
def test_inference_streams_never_deadlock(num_stages, num_micro_batches):
    program = chain(num_stages, training=False)
    streams = build_streams(program, "inference", num_micro_batches)
    assert simulate(program, streams, num_micro_batches) is None
    assert not any(isinstance(i, Apply) for stream in streams.values() for i in stream)


def test_two_stage_1f1b_streams():
    program = chain(2)
    streams = build_streams(program, "1f1b", 2)
    # Mesh 0 forwards twice (one warm-up), freeing each activation once sent; then it
    # receives each gradient and runs its backward, after which the residual and the
    # gradient go.
    assert streams[0] == [
        Run("stage0_forward", 0), Send(0, 0), Free(("stage0_forward#0",), 0),
        Run("stage0_forward", 1), Send(0, 1), Free(("stage0_forward#0",), 1),
        Recv(1, 0), Run("stage0_backward", 0), Free(("stage0_forward#1", "transfer1"), 0),
        Accumulate(("stage0_backward#0",), 0), Free(("stage0_backward#0",), 0),
        Recv(1, 1), Run("stage0_backward", 1), Free(("stage0_forward#1", "transfer1"), 1),
        Accumulate(("stage0_backward#0",), 1), Free(("stage0_backward#0",), 1),
        Apply("stage0_apply"), Free(("stage0_backward#0",)),
    ]
    # Mesh 1 alternates; the loss is accumulated and kept (returned), the gradient freed after the apply.
    assert streams[1] == [
        Recv(0, 0), Run("stage1_forward", 0), Accumulate(("stage1_forward#0",), 0), Free(("stage1_forward#0",), 0),
        Recv(0, 1),
        Run("stage1_backward", 0), Free(("transfer0",), 0),
        Accumulate(("stage1_backward#0",), 0), Free(("stage1_backward#0",), 0),
        Send(1, 0), Free(("stage1_backward#1",), 0),
        Run("stage1_forward", 1), Accumulate(("stage1_forward#0",), 1), Free(("stage1_forward#0",), 1),
        Run("stage1_backward", 1), Free(("transfer0",), 1),
        Accumulate(("stage1_backward#0",), 1), Free(("stage1_backward#0",), 1),
        Send(1, 1), Free(("stage1_backward#1",), 1),
        Apply("stage1_apply"), Free(("stage1_backward#0",)),
    ]


def test_implicit_moves_name_the_value_and_meshes():
    streams = build_streams(chain(2, explicit=False), "gpipe", 1)
    move = Move("stage0_forward#0", 0, 1)
    assert streams[0][:2] == [Run("stage0_forward", 0), Send(move, 0)]
    assert streams[1][:2] == [Recv(move, 0), Run("stage1_forward", 0)]


def test_all_gather_follows_its_recv():
    streams = build_streams(chain(2, all_gather=True), "1f1b", 1)
    assert streams[1][:3] == [Recv(0, 0), AllGather(0, 0), Run("stage1_forward", 0)]


def tied_weights(through: str) -> StepProgram:
    """Two stages; stage 1's backward also makes a gradient of stage 0's parameter (a tied
    embedding), which stage 0's apply reads through transfer 2 (``through="transfer"``)
    or an implicit move."""
    base = chain(2)
    calls = [c if c.callee != "stage1_backward" else StageCall(c.callee, 1, "backward", c.operands, 3)
             for c in base.calls]
    tied = "transfer2" if through == "transfer" else "stage1_backward#2"
    calls = [c if c.callee != "stage0_apply" else StageCall(c.callee, 0, "apply", c.operands + (tied,), 1)
             for c in calls]
    transfers = base.transfers + ((Transfer(2, "stage1_backward#2", 1, 0),) if through == "transfer" else ())
    return StepProgram(tuple(calls), transfers, base.returned)


@pytest.mark.parametrize("through", ["transfer", "move"])
def test_a_gradient_for_another_mesh_moves_once_after_accumulation(through):
    program = tied_weights(through)
    streams = build_streams(program, "1f1b", 3)
    assert simulate(program, streams, 3) is None
    key = 2 if through == "transfer" else Move("stage1_backward#2", 1, 0)
    accumulates = [i for i in streams[1] if isinstance(i, Accumulate)]
    assert Accumulate(("stage1_backward#0", "stage1_backward#2"), 2) in accumulates
    # Step-level: no micro-batch, after mesh 1's last accumulation, before mesh 0's apply.
    assert Send(key) in streams[1] and Recv(key) in streams[0]
    last = max(i for i, x in enumerate(streams[1]) if isinstance(x, Accumulate))
    assert streams[1].index(Send(key)) > last
    assert streams[0].index(Recv(key)) < streams[0].index(Apply("stage0_apply"))
    assert not any(isinstance(i, Send | Recv) and i.transfer == key and i.micro_batch is not None
                   for stream in streams.values() for i in stream)


def test_an_apply_result_moves_between_the_applies():
    base = chain(2)
    calls = [c if c.callee != "stage1_apply" else StageCall(c.callee, 1, "apply", c.operands + ("transfer2",), 1)
             for c in base.calls]
    program = StepProgram(tuple(calls), base.transfers + (Transfer(2, "stage0_apply#0", 0, 1),), base.returned)
    streams = build_streams(program, "gpipe", 2)
    assert simulate(program, streams, 2) is None
    # The new parameter of stage 0 is returned, so kept; the copy mesh 1 received is freed.
    assert streams[0][-3:] == [Apply("stage0_apply"), Free(("stage0_backward#0",)), Send(2)]
    assert streams[1][-3:] == [Recv(2), Apply("stage1_apply"), Free(("stage1_backward#0", "transfer2"))]


def test_a_returned_transfer_result_is_accumulated_on_its_destination():
    base = chain(2)
    program = StepProgram(base.calls, base.transfers, base.returned + ("transfer0",))
    streams = build_streams(program, "1f1b", 2)
    assert simulate(program, streams, 2) is None
    assert streams[1][:3] == [Recv(0, 0), Accumulate(("transfer0",), 0), Run("stage1_forward", 0)]


def test_crossed_sends_deadlock():
    program = chain(2)
    streams = {0: [Run("stage0_forward", 0), Send(0, 0), Recv(1, 0)],
               1: [Send(1, 0), Recv(0, 0)]}
    assert simulate(program, streams, 1) == (
        "deadlock: mesh 0 waits at send transfer 0 (micro-batch 0); mesh 1 waits at send transfer 1 (micro-batch 0)")


def test_mismatched_micro_batches_deadlock():
    program = chain(2, training=False)
    streams = {0: [Run("stage0_forward", 0), Run("stage0_forward", 1), Send(0, 1), Send(0, 0)],
               1: [Recv(0, 0), Recv(0, 1)]}
    assert simulate(program, streams, 2).startswith("deadlock: mesh 0 waits at send transfer 0 (micro-batch 1)")


@pytest.mark.parametrize("streams,problem", [
    ({0: [Run("stage0_forward", 0)], 1: [Run("stage1_forward", 0)]},
     "mesh 1: run @stage1_forward (micro-batch 0) reads transfer0 (micro-batch 0), which is not on the mesh"),
    ({0: [Run("stage0_forward", 0), Free(("stage0_forward#0",), 0), Free(("stage0_forward#0",), 0)], 1: []},
     "mesh 0: free stage0_forward#0 (micro-batch 0) frees stage0_forward#0, which is not on the mesh"),
    ({0: [Run("stage0_forward", 0)], 1: []}, "mesh 0 never frees stage0_forward#0 (micro-batch 0)"),
    ({0: [Run("stage1_forward", 0)], 1: []}, "mesh 0: run @stage1_forward (micro-batch 0): @main has no such part"),
    ({0: [Recv(0, 0)], 1: []}, "mesh 0: recv transfer 0 (micro-batch 0) does not start or end on this mesh"),
])
def test_simulate_reports_bad_streams(streams, problem):
    assert simulate(chain(2, training=False), streams, 1).startswith(problem)


def test_simulate_reads_accumulators_only_when_complete():
    program = chain(1)
    streams = {0: [Run("stage0_forward", 0), Run("stage0_backward", 0), Free(("stage0_forward#0",), 0),
                   Accumulate(("stage0_backward#0",), 0), Free(("stage0_backward#0",), 0), Apply("stage0_apply")]}
    assert simulate(program, streams, 2) == (
        "mesh 0: apply @stage0_apply reads stage0_backward#0, which is not on the mesh")


def bad(program: StepProgram, **changes) -> StepProgram:
    return StepProgram(**{"calls": program.calls, "transfers": program.transfers, "returned": program.returned,
                          **changes})


@pytest.mark.parametrize("program,message,callee", [
    (bad(chain(1), calls=chain(1).calls + (StageCall("stage0_forward", 0, "forward", ("arg0",), 1),)),
     "@main calls @stage0_forward twice", "stage0_forward"),
    (bad(chain(1), calls=(StageCall("stage0_forward", 0, "forward", ("nowhere#0",), 1),)),
     "@stage0_forward reads nowhere#0, which no stage call or transfer of @main produces", "stage0_forward"),
    (bad(chain(1), calls=(StageCall("stage0_apply", 0, "apply", (), 1),
                          StageCall("stage0_forward", 0, "forward", ("stage0_apply#0",), 1))),
     "@stage0_forward reads stage0_apply#0, a result of @stage0_apply", "stage0_forward"),
    (bad(chain(2), transfers=(Transfer(0, "stage0_forward#0", 0, 0),)),
     "transfer 0 must move a stage call's result from its mesh to another mesh", None),
    (bad(chain(2), calls=chain(2).calls[:1] + (StageCall("stage1_forward", 1, "forward", ("transfer7",), 1),),
         transfers=()),
     "@stage1_forward reads transfer7, which no stage call", "stage1_forward"),
    (bad(chain(2), returned=("stage5_apply#0",)), "@main returns stage5_apply#0, which no stage call", None),
    (bad(chain(2), calls=chain(2).calls[2:]), "stage 0 has 0 forward and 1 backward parts", None),
])
def test_steps_the_schedule_cannot_run_are_rejected(program, message, callee):
    with pytest.raises(ScheduleError, match=re.escape(message)) as caught:
        build_streams(program, "1f1b", 2)
    assert caught.value.callee == callee


def step_order(program: StepProgram, num_micro_batches: int = 2) -> list:
    return list(interleave(analyse(program), build_streams(program, "1f1b", num_micro_batches)))


def test_an_apply_part_reuses_the_donated_arguments_it_reads_last():
    program = chain(2)  # stage s reads arg(s+1) forward, backward and in its apply part
    order = step_order(program)
    assert reusable_arguments(program, order, frozenset({1, 2})) == {"stage0_apply": (1,), "stage1_apply": (1,)}
    assert reusable_arguments(program, order, frozenset({2})) == {"stage0_apply": (), "stage1_apply": (1,)}
    # arg0, the batch, is read by forwards only; nothing is donated that the caller keeps.
    assert reusable_arguments(program, order, frozenset({0})) == {"stage0_apply": (), "stage1_apply": ()}
    assert reusable_arguments(program, order, frozenset()) == {"stage0_apply": (), "stage1_apply": ()}


def test_no_apply_part_reuses_an_argument_read_after_it_twice_or_returned():
    base = chain(2)
    # Both apply parts read arg1 (shared state): only the one that runs last may reuse it.
    shared = StepProgram(tuple(c if c.callee != "stage1_apply" else StageCall(
        c.callee, 1, "apply", (*c.operands, "arg1"), 1) for c in base.calls), base.transfers, base.returned)
    order = step_order(shared)
    first, last = [i.callee for _, i in order if isinstance(i, Apply)]
    position = {"stage0_apply": 1, "stage1_apply": 2}  # of arg1 among the part's operands
    assert reusable_arguments(shared, order, frozenset({1})) == {first: (), last: (position[last],)}
    # An argument read twice by the part, or returned by @main, keeps its buffer.
    twice = StepProgram(tuple(c if c.callee != "stage1_apply" else StageCall(
        c.callee, 1, "apply", (*c.operands, "arg2"), 1) for c in base.calls), base.transfers, base.returned)
    assert reusable_arguments(twice, step_order(twice), frozenset({2}))["stage1_apply"] == ()
    returned = StepProgram(base.calls, base.transfers, (*base.returned, "arg2"))
    assert reusable_arguments(returned, step_order(returned), frozenset({2}))["stage1_apply"] == ()
