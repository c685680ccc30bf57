"""Interleaved 1F1B (virtual stages per mesh): its clock table against references, its streams, its errors."""

from __future__ import annotations

import itertools

import pytest
from test_schedules import chain

from alpa_mlir.dialect.schedule_ops import Apply, Recv, Run, Send
from alpa_mlir.plans.clock_tables import (
    Task,
    bubble_fraction,
    clock_table,
    dependencies,
    in_flight,
    mesh_orders,
    stage_meshes,
)
from alpa_mlir.plans.schedules import ScheduleError, StepProgram, build_streams, simulate

INTERLEAVED = "interleaved-1f1b"
SIZES = [(s, v, b) for s in range(1, 5) for v in range(1, 4) for b in range(s, 3 * s + 1, s)]


def all_tasks(num_stages: int, num_micro_batches: int) -> set[Task]:
    return {Task(s, m, k) for s in range(num_stages) for m in range(num_micro_batches)
            for k in ("forward", "backward")}


def reference_times(orders: list[list[Task]], num_stages: int) -> dict[Task, int]:
    """Event simulation, independent of ``clock_table``: each mesh takes its tasks in order,
    a task's clock is one after the later of its mesh's previous task and its dependencies."""
    done: dict[Task, int] = {}
    position, free = [0] * len(orders), [0] * len(orders)
    while any(p < len(o) for p, o in zip(position, orders)):
        moved = False
        for k, order in enumerate(orders):
            while position[k] < len(order) and all(d in done for d in dependencies(order[position[k]], num_stages)):
                task = order[position[k]]
                done[task] = free[k] = max([free[k], *(done[d] + 1 for d in dependencies(task, num_stages))])
                free[k] += 1
                position[k] += 1
                moved = True
        assert moved, "the orders wait on each other"
    return done


@pytest.mark.parametrize("num_meshes,virtual,num_micro_batches", SIZES)
def test_every_task_once_on_its_mesh_after_its_dependencies(num_meshes, virtual, num_micro_batches):
    stages = num_meshes * virtual
    table = clock_table(INTERLEAVED, stages, num_micro_batches, virtual)
    tasks = [t for clock in table for t in clock]
    assert len(tasks) == len(set(tasks)) and set(tasks) == all_tasks(stages, num_micro_batches)
    meshes = stage_meshes(stages, virtual)
    for clock in table:
        assert len({meshes[t.stage] for t in clock}) == len(clock)  # one task per mesh and clock
    when = {t: c for c, clock in enumerate(table) for t in clock}
    for task, clock in when.items():
        assert all(when[d] < clock for d in dependencies(task, stages))
    # The table is the as-soon-as-possible execution of the mesh orders.
    orders = mesh_orders(INTERLEAVED, num_meshes, num_micro_batches, virtual)
    assert when == reference_times(orders, stages)
    for k, order in enumerate(orders):
        assert all(meshes[t.stage] == k for t in order)
        assert [t for clock in table for t in clock if meshes[t.stage] == k] == order


@pytest.mark.parametrize("num_meshes,virtual,num_micro_batches", SIZES)
def test_clocks_bubble_and_activations_in_flight(num_meshes, virtual, num_micro_batches):
    stages, total = num_meshes * virtual, num_micro_batches * virtual
    clocks = len(clock_table(INTERLEAVED, stages, num_micro_batches, virtual))
    # The bubble is 2 (S - 1) clocks of one chunk, against 1F1B's 2 (S - 1) clocks of a whole stage.
    assert clocks == 2 * (total + num_meshes - 1)
    assert len(clock_table("1f1b", num_meshes, num_micro_batches)) == 2 * (num_micro_batches + num_meshes - 1)
    assert bubble_fraction(INTERLEAVED, stages, num_micro_batches, virtual) == pytest.approx(
        (num_meshes - 1) / (total + num_meshes - 1))
    # Mesh i: its warm-up forwards and one more, in chunks (1/v of a stage each).
    expected = [min(total, 1 + (num_meshes - i - 1) if virtual == 1 else 2 * (num_meshes - i - 1)
                    + (virtual - 1) * num_meshes + 1) for i in range(num_meshes)]
    assert in_flight(INTERLEAVED, stages, num_micro_batches, virtual) == expected
    # The same walked along each mesh's own order (a mesh runs its tasks one after another).
    walked = []
    for order in mesh_orders(INTERLEAVED, num_meshes, num_micro_batches, virtual):
        live = peak = 0
        for task in order:
            live += 1 if task.kind == "forward" else -1
            peak = max(peak, live)
        walked.append(peak)
    assert walked == expected


@pytest.mark.parametrize("num_meshes,num_micro_batches", [(s, b) for s in range(1, 5) for b in range(s, 3 * s + 1, s)])
def test_one_virtual_stage_is_1f1b(num_meshes, num_micro_batches):
    assert mesh_orders(INTERLEAVED, num_meshes, num_micro_batches, 1) == mesh_orders("1f1b", num_meshes,
                                                                                     num_micro_batches)


def test_orders_take_groups_of_s_micro_batches_through_the_chunks():
    def names(tasks):
        return " ".join(f"{t.kind[0].upper()}{t.stage}.{t.micro_batch}" for t in tasks)

    orders = mesh_orders(INTERLEAVED, 2, 4, 2)
    # Mesh 0 (stages 0, 2): 2 (S-1) + (v-1) S = 4 warm-up forwards, then one forward and one backward in turn.
    assert names(orders[0]) == ("F0.0 F0.1 F2.0 F2.1 F0.2 B2.0 F0.3 B2.1 F2.2 B0.0 F2.3 B0.1 "
                                "B2.2 B2.3 B0.2 B0.3")
    assert names(orders[1]) == ("F1.0 F1.1 F3.0 B3.0 F3.1 B3.1 F1.2 B1.0 F1.3 B1.1 F3.2 B3.2 "
                                "F3.3 B3.3 B1.2 B1.3")


def fewest_clocks(num_meshes: int, virtual: int, num_micro_batches: int) -> int:
    """Brute force: the fewest clocks of any schedule running one task per mesh per clock."""
    stages = num_meshes * virtual
    meshes = stage_meshes(stages, virtual)
    everything = frozenset(all_tasks(stages, num_micro_batches))
    level, clocks = {frozenset()}, 0
    while everything not in level:
        following = set()
        for done in level:
            choices = [[None] + [t for t in everything - done if meshes[t.stage] == k
                                 and all(d in done for d in dependencies(t, stages))]
                       for k in range(num_meshes)]
            following.update(done | {t for t in pick if t} for pick in itertools.product(*choices))
        level, clocks = following, clocks + 1
    return clocks


@pytest.mark.parametrize("num_meshes,virtual,num_micro_batches", [(1, 2, 1), (1, 2, 2), (2, 2, 2), (2, 3, 2)])
def test_interleaved_takes_the_fewest_clocks_possible(num_meshes, virtual, num_micro_batches):
    best = fewest_clocks(num_meshes, virtual, num_micro_batches)
    assert len(clock_table(INTERLEAVED, num_meshes * virtual, num_micro_batches, virtual)) == best


def test_bad_sizes_are_rejected():
    with pytest.raises(ValueError, match="3 micro-batches are not a multiple of the 2 meshes"):
        mesh_orders(INTERLEAVED, 2, 3, 2)
    with pytest.raises(ValueError, match="the 1f1b schedule runs one stage per mesh, not 2"):
        mesh_orders("1f1b", 2, 2, 2)
    with pytest.raises(ValueError, match="5 stages do not make 2 virtual stages on each mesh"):
        clock_table(INTERLEAVED, 5, 2, 2)


# ----------------------------------------------------------------------------- streams


def interleaved_chain(num_meshes: int, virtual: int, explicit: bool = True) -> StepProgram:
    """``S v`` stages, stage k on mesh k mod S; explicit transfers between meshes (none
    between two stages of one mesh: S = 1), applies update each stage's parameter."""
    stages = num_meshes * virtual
    return chain(stages, explicit=explicit, meshes=stage_meshes(stages, virtual))


@pytest.mark.parametrize("num_meshes,virtual,num_micro_batches", [c for c in SIZES if c[2] <= 2 * c[0]])
def test_interleaved_streams_never_deadlock_and_run_the_clock_table(num_meshes, virtual, num_micro_batches):
    stages = num_meshes * virtual
    table = clock_table(INTERLEAVED, stages, num_micro_batches, virtual)
    for explicit in (True, False):
        program = interleaved_chain(num_meshes, virtual, explicit)
        streams = build_streams(program, INTERLEAVED, num_micro_batches)
        assert simulate(program, streams, num_micro_batches) is None
        assert sorted(streams) == list(range(num_meshes))
        for k, stream in streams.items():
            runs = [Task(int(i.callee[5:].split("_")[0]), i.micro_batch, i.callee.split("_")[1])
                    for i in stream if isinstance(i, Run)]
            assert runs == [t for clock in table for t in clock if t.stage % num_meshes == k]
            assert [i for i in stream if isinstance(i, Apply)] == [Apply(f"stage{s}_apply")
                                                                   for s in range(k, stages, num_meshes)]
            for i in stream:  # every transfer leaves or enters this mesh from another one
                if isinstance(i, Send | Recv):
                    t = next(t for t in program.transfers if t.key == i.transfer) if explicit else i.transfer
                    assert t.src_mesh != t.dst_mesh and k in (t.src_mesh, t.dst_mesh)


def test_stages_of_one_mesh_pass_values_without_transfers():
    # One mesh, three chunks: everything stays where it is.
    program = interleaved_chain(1, 3, explicit=False)
    streams = build_streams(program, INTERLEAVED, 2)
    assert simulate(program, streams, 2) is None
    assert not any(isinstance(i, Send | Recv) for i in streams[0])


def test_schedules_check_the_stage_meshes():
    program = interleaved_chain(2, 2)
    with pytest.raises(ScheduleError, match="stages 0 and 2 share mesh 0; schedule=1f1b runs one stage per mesh: "
                                            "use schedule=interleaved-1f1b for several") as error:
        build_streams(program, "1f1b", 2)
    assert error.value.callee == "stage2_forward"
    with pytest.raises(ScheduleError, match="2 meshes"):
        build_streams(program, INTERLEAVED, 3)
    implicit = interleaved_chain(2, 2, explicit=False)
    blocked = StepProgram(implicit.calls, (), implicit.returned, (0, 0, 1, 1))  # consecutive stages on one mesh
    with pytest.raises(ScheduleError, match="runs stage k on mesh k mod 2, but stage 1 is on mesh 0"):
        build_streams(blocked, INTERLEAVED, 2)
    with pytest.raises(ScheduleError, match=r"the stages' meshes \[0, 2, 0, 2\] must name meshes 0, 1, \.\.\."):
        build_streams(StepProgram(implicit.calls, (), implicit.returned, (0, 2, 0, 2)), INTERLEAVED, 2)
