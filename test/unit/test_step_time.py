"""plans/step_time.py: a step's seconds walked over the runtime's order, by hand and against Eq. 2."""

from __future__ import annotations

import pytest
from test_schedules import chain

from alpa_mlir.dialect.schedule_ops import Apply, Run, Send
from alpa_mlir.passes.inter_op.stage_dp import pipeline_latency
from alpa_mlir.plans.schedules import analyse, build_streams, interleave
from alpa_mlir.plans.step_time import step_seconds

PRICES = {"a": 1.0, "b": 2.0, "c": 3.0, "t": 0.5}


def by_name(mesh, instruction) -> float:
    return PRICES[instruction.callee] if isinstance(instruction, Run | Apply) else PRICES["t"]


def ends(mesh, instruction) -> tuple[int, ...]:
    return (0, 1) if isinstance(instruction, Send) else (mesh,)


def one_clock(mesh, instruction) -> tuple[int, ...]:
    return (0,)


def test_meshes_on_one_clock_add_up() -> None:
    order = [(0, Run("a", 0)), (1, Run("b", 0)), (0, Send(0, 0)), (1, Apply("c"))]
    assert step_seconds(order, by_name, one_clock) == 6.5


def test_meshes_at_once_meet_at_transfers() -> None:
    # Mesh 1's 3 s run keeps the transfer waiting after mesh 0's 1 s run: 3 + 0.5, then 2.
    order = [(0, Run("a", 0)), (1, Run("c", 0)), (0, Send(0, 0)), (1, Run("b", 0))]
    assert step_seconds(order, by_name, ends) == 5.5
    # Without the transfer the meshes never meet: the slower one's 3 + 2.
    assert step_seconds([order[0], order[1], order[3]], by_name, ends) == 5.0
    assert step_seconds([], by_name, ends) == 0.0


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
@pytest.mark.parametrize("stages,micro_batches", [(1, 1), (2, 4), (3, 2), (4, 8)])
def test_equal_stages_with_free_transfers_take_eq2(schedule, stages, micro_batches) -> None:
    # Every forward and backward in one unit of time, transfers and applies free: the
    # order's 2 (B + S - 1) clocks, which is Eq. 2 with t_i = 2. One program at a time:
    # 2 B S.
    program = chain(stages)
    flow = analyse(program)
    order = list(interleave(flow, build_streams(program, schedule, micro_batches)))

    def unit(mesh, instruction) -> float:
        return 1.0 if isinstance(instruction, Run) else 0.0

    def meshes(mesh, instruction) -> tuple[int, ...]:
        if isinstance(instruction, Send):
            return flow.transfers[instruction.transfer].src_mesh, flow.transfers[instruction.transfer].dst_mesh
        return (mesh,)

    assert step_seconds(order, unit, meshes) == pipeline_latency([2.0] * stages, micro_batches)
    assert step_seconds(order, unit, one_clock) == 2 * stages * micro_batches
