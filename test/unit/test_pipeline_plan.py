"""PipelinePlan: the stage plan's JSON round trip, its predicted timeline (Eq. 2), its picture."""

from __future__ import annotations

import dataclasses
import json

import pytest

from alpa_mlir import PipelinePlan, PipelinePlanError
from alpa_mlir.plans.pipeline_plan import StagePlacement


def plan(latencies: list[float], micro_batches: int) -> PipelinePlan:
    stages = tuple(StagePlacement((i, i + 1), (1, 2), (2 * i, 2 * i + 1), (1, 2), t, 1024.0, 256.0)
                   for i, t in enumerate(latencies))
    total = sum(latencies) + (micro_batches - 1) * max(latencies)
    return PipelinePlan((1, 2 * len(latencies)), micro_batches, total, max(latencies), stages, {"intra_op_plans": 3})


def test_save_and_load_round_trip(tmp_path) -> None:
    original = plan([1.0, 2.0, 3.0], 4)
    original.save(tmp_path / "plan.json")
    assert PipelinePlan.load(tmp_path / "plan.json") == original


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_the_timeline_lasts_eq_2(schedule) -> None:
    # Eq. 2: (1 + 2 + 3) + (4 - 1) * 3 = 15; every micro-batch runs forward then backward on every stage.
    found = dataclasses.replace(plan([1.0, 2.0, 3.0], 4), schedule=schedule)
    events = found.timeline()
    assert max(end for *_, end in events) == pytest.approx(found.latency) == pytest.approx(15.0)
    assert len(events) == 2 * 3 * 4
    for s, _, phase, start, end in events:
        assert end - start == pytest.approx(found.stages[s].latency * (1 / 3 if phase == "forward" else 2 / 3))
    # A stage never runs two things at once.
    for s in range(3):
        spans = sorted((start, end) for stage, _, _, start, end in events if stage == s)
        assert all(a[1] <= b[0] + 1e-12 for a, b in zip(spans, spans[1:]))


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b", "inference"])
def test_the_timeline_runs_the_plans_schedule(schedule) -> None:
    # Each stage takes its tasks in the schedule's order: under 1F1B stage 0 (3 stages,
    # 4 micro-batches) warms up with 2 forwards and then alternates; GPipe runs every
    # forward first; inference has no backward.
    found = dataclasses.replace(plan([1.0, 2.0, 3.0], 4), schedule=schedule)
    first = [(kind[0].upper(), m) for s, m, kind, _, _ in sorted(found.timeline(), key=lambda e: e[3]) if s == 0]
    expected = {"gpipe": "F0 F1 F2 F3 B0 B1 B2 B3", "1f1b": "F0 F1 F2 B0 F3 B1 B2 B3", "inference": "F0 F1 F2 F3"}
    assert " ".join(f"{k}{m}" for k, m in first) == expected[schedule]
    assert PipelinePlan.from_json(found.to_json()).schedule == schedule


def test_draw_writes_a_png(tmp_path) -> None:
    plan([1.0, 2.0, 3.0], 4).draw(tmp_path / "plan.png")
    assert (tmp_path / "plan.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("schedule, peaks", [("1f1b", ["1.75 KiB", "1.5 KiB", "1.25 KiB"]),
                                              ("gpipe", ["2 KiB", "2 KiB", "2 KiB"])])
def test_the_summary_has_every_stage(schedule, peaks) -> None:
    # Eq. 5: 1 KiB of parameters and 256 B of activations per micro-batch; under 1F1B stage s of
    # 3 holds the activations of 3 - s micro-batches, under GPipe of all 4.
    found = dataclasses.replace(plan([1.0, 2.0, 0.003], 4), schedule=schedule)
    lines = str(found).splitlines()
    assert lines[0] == f"PipelinePlan: 3 stages on 1 x 6 devices (hosts x devices per host), {schedule}, " \
                       "4 micro-batches"
    assert lines[1] == f"predicted step latency (Eq. 2): {found.latency:.3g} s; slowest stage 2 s"
    rows = [line.split() for line in lines[3:6]]
    assert [r[:5] for r in rows] == [["0", "[0,1)", "1x2", "1x2", "0,1"], ["1", "[1,2)", "1x2", "1x2", "2,3"],
                                     ["2", "[2,3)", "1x2", "1x2", "4,5"]]
    assert [" ".join(r[5:7]) for r in rows] == ["1 s", "2 s", "3 ms"]
    assert [" ".join(r[7:11]) for r in rows] == ["1 KiB 256 B"] * 3
    assert [" ".join(r[11:]) for r in rows] == peaks
    assert lines[-1] == "search: intra_op_plans 3"


def test_unreadable_plans_say_why(tmp_path) -> None:
    path = tmp_path / "plan.json"
    with pytest.raises(PipelinePlanError, match="cannot read a pipeline plan"):
        PipelinePlan.load(path)
    path.write_text(json.dumps({"version": 99}))
    with pytest.raises(PipelinePlanError, match="version 99"):
        PipelinePlan.load(path)
    path.write_text(json.dumps({"version": 1, "cluster": [1, 2]}))
    with pytest.raises(PipelinePlanError, match="malformed pipeline plan"):
        PipelinePlan.load(path)


def interleaved_plan(micro_batches: int) -> PipelinePlan:
    """Four unit-latency stages on two meshes, stage k on mesh k mod 2."""
    stages = tuple(StagePlacement((k, k + 1), (1, 2), (2 * (k % 2), 2 * (k % 2) + 1), (1, 2), 1.0, 1024.0, 256.0)
                   for k in range(4))
    return PipelinePlan((1, 4), micro_batches, 0.0, 1.0, stages, {}, "interleaved-1f1b", 2)


def test_an_interleaved_timeline_keeps_each_mesh_to_one_task_at_a_time(tmp_path) -> None:
    found = interleaved_plan(4)
    found.draw(tmp_path / "plan.png")
    assert (tmp_path / "plan.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert PipelinePlan.from_json(found.to_json()) == found
    events = found.timeline()
    assert len(events) == 2 * 4 * 4
    for mesh in range(2):
        spans = sorted((start, end) for stage, _, _, start, end in events if stage % 2 == mesh)
        assert all(a[1] <= b[0] + 1e-12 for a, b in zip(spans, spans[1:]))
    # Mesh 0 warms up with 2 (S-1) + (v-1) S = 4 forwards: micro-batches 0, 1 through stage 0, then stage 2.
    first = [(s, m, kind[0]) for s, m, kind, _, _ in sorted(events, key=lambda e: e[3]) if s % 2 == 0][:5]
    assert first == [(0, 0, "f"), (0, 1, "f"), (2, 0, "f"), (2, 1, "f"), (0, 2, "f")]
    lines = str(found).splitlines()
    assert "interleaved-1f1b (2 per mesh)" in lines[0]
    # Eq. 5's share of a stage: 1 KiB of parameters and, of the 5 and 3 chunks in flight on meshes 0 and 1,
    # half each (two stages per mesh) of 256 B.
    assert [" ".join(line.split()[11:]) for line in lines[3:7]] == ["1.625 KiB", "1.375 KiB", "1.625 KiB",
                                                                  "1.375 KiB"]


def test_a_plan_whose_stages_do_not_fill_its_meshes_is_malformed() -> None:
    data = json.loads(interleaved_plan(2).to_json())
    data["virtual_stages"] = 3
    with pytest.raises(PipelinePlanError, match="malformed pipeline plan"):
        PipelinePlan.from_json(json.dumps(data))
