"""The stage/mesh DP (Sec. 5.2, Algorithm 1) against exhaustive search, plus Eq. 5 levels and error paths."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from alpa_mlir.passes.inter_op.stage_dp import (
    InfeasiblePlanError,
    StageCosts,
    StageDPError,
    StagePlan,
    pipeline_latency,
    solve_stage_dp,
    t_intra_table,
)
from alpa_mlir.passes.inter_op.submesh import submesh_shapes
from alpa_mlir.plans.clock_tables import in_flight

Cluster = tuple[int, int]


def brute_force(costs: StageCosts, cluster: Cluster, B: int, v: int = 1, counts: set[int] | None = None,
                memory_v: int | None = None, *, forward_only: bool = False) -> float:
    """Eq. 2 (interleaved over ``v`` chunks per mesh: ``sum / v + (B - 1/v) max``) minimised over every
    slicing (into a number of stages in ``counts``, if given), submesh per stage and logical mesh per
    stage, Eq. 5 checked (activations: of as many micro-batches as stages from the stage to the last,
    or, interleaved, 1/v of the chunks the schedule's clock table keeps in flight on its mesh;
    ``memory_v``: the v of Eq. 5's count, if not ``v``; ``forward_only``: one micro-batch's)."""
    layers, devices = costs.num_layers, cluster[0] * cluster[1]
    sizes = [n * m for n, m in costs.submeshes]
    num_logical = costs.latency.shape[3]
    best = math.inf
    for cuts in itertools.product((False, True), repeat=layers - 1):
        bounds = [0] + [i + 1 for i, cut in enumerate(cuts) if cut] + [layers]
        ranges = list(zip(bounds[:-1], bounds[1:]))
        if counts is not None and len(ranges) not in counts:
            continue
        for subs in itertools.product(range(len(sizes)), repeat=len(ranges)):
            if sum(sizes[k] for k in subs) != devices:
                continue
            held = [1] * len(ranges) if forward_only else held_activations(len(ranges), B,
                                                                          v if memory_v is None else memory_v)
            for logical in itertools.product(range(num_logical), repeat=len(ranges)):
                times = []
                for q, ((i, j), k, p) in enumerate(zip(ranges, subs, logical)):
                    if costs.param_mem[i, j, k, p] + held[q] * costs.act_mem[i, j, k, p] > costs.device_memory:
                        break
                    times.append(costs.latency[i, j, k, p])
                else:
                    if math.isfinite(sum(times)):
                        best = min(best, sum(times) / v + (B - 1 / v) * max(times))
    return best


def held_activations(num_stages: int, B: int, v: int) -> list[float]:
    """Per stage, the micro-batches' worth of its activations it holds at once."""
    if v == 1:
        return [num_stages - q for q in range(num_stages)]  # 1F1B: the stages from it to the last
    return [chunks / v for chunks in in_flight("interleaved-1f1b", num_stages * v, B, v)]


def check_plan(plan: StagePlan, costs: StageCosts, cluster: Cluster, B: int, v: int = 1) -> None:
    """The stages cover the layers in order on all devices, and each one is its own best fitting choice."""
    stages = plan.stages
    held = held_activations(len(stages), B, v)
    assert [s.start for s in stages] == [0] + [s.end for s in stages[:-1]]
    assert stages[-1].end == costs.num_layers and all(s.start < s.end for s in stages)
    assert sum(s.num_devices for s in stages) == cluster[0] * cluster[1]
    for q, stage in enumerate(stages):
        i, j, k = stage.start, stage.end, stage.submesh
        assert stage.shape == costs.submeshes[k]
        fits = costs.param_mem[i, j, k] + held[q] * costs.act_mem[i, j, k] <= costs.device_memory
        assert fits[stage.logical_mesh]
        assert stage.latency == costs.latency[i, j, k, stage.logical_mesh] == costs.latency[i, j, k][fits].min()
        assert stage.latency <= plan.t_max
    assert plan.latency == pipeline_latency([s.latency for s in stages], B, v)


def random_costs(seed: int) -> tuple[StageCosts, Cluster, int]:
    """1-5 layers, a small cluster, 1-3 logical meshes, inf entries, ties, and memory that often binds."""
    rng = np.random.default_rng(seed)
    cluster = [(1, 1), (1, 2), (1, 3), (1, 4), (2, 2), (2, 3), (2, 4), (2, 4)][rng.integers(8)]
    space = "all" if cluster[0] * cluster[1] <= 4 and rng.random() < 0.4 else "power-of-two"
    shapes = submesh_shapes(cluster, space)
    layers = int(rng.integers(1 if cluster == (1, 1) else 2, 6))
    num_logical = int(rng.integers(1, 4))
    shape = (layers + 1, layers + 1, len(shapes), num_logical)
    latency = rng.uniform(0.1, 1.0, shape)
    if rng.random() < 0.7:  # grows with the layers and shrinks with the devices, so pipelines pay off
        layers_in = np.maximum(np.arange(layers + 1)[None, :] - np.arange(layers + 1)[:, None], 0)
        devices = np.array([n * m for n, m in shapes], dtype=float) ** rng.uniform(0.3, 0.9)
        latency *= layers_in[:, :, None, None] / devices[None, None, :, None]
    if rng.random() < 0.5:
        latency = np.round(latency, 1)  # ties between stages and between t_max candidates
    latency[rng.random(shape) < 0.15] = np.inf
    param, act = rng.uniform(0.0, 1.0, shape), rng.uniform(0.0, 0.5, shape)
    memory = math.inf if rng.random() < 0.2 else float(rng.uniform(0.6, 2.0))
    B = int(rng.choice([1, 4, 8, 16, 32]))
    return StageCosts(latency, shapes, param, act, memory), cluster, B


@pytest.mark.parametrize("early_pruning", [True, False])
def test_matches_brute_force(early_pruning: bool) -> None:
    feasible = pipelined = 0
    for seed in range(100):
        costs, cluster, B = random_costs(seed)
        expected = brute_force(costs, cluster, B)
        if not math.isfinite(expected):
            with pytest.raises(InfeasiblePlanError):
                solve_stage_dp(costs, cluster, B, epsilon=0.0, early_pruning=early_pruning)
            continue
        plan = solve_stage_dp(costs, cluster, B, epsilon=0.0, early_pruning=early_pruning)
        assert plan.latency == pytest.approx(expected, rel=1e-12), seed
        check_plan(plan, costs, cluster, B)
        feasible += 1
        pipelined += len(plan.stages) > 1
    assert feasible >= 60 and pipelined >= 30  # most instances have a plan, many with several stages


@pytest.mark.parametrize("early_pruning", [True, False])
def test_interleaved_eq2_matches_brute_force(early_pruning: bool) -> None:
    # Interleaved 1F1B: the same least sums per t_max, combined as sum / v + (B - 1/v) t_max,
    # which can pick another slicing than 1F1B's (a smaller bubble makes more stages pay);
    # the number of meshes divides B (the schedule takes the micro-batches in such groups), and
    # Eq. 5 counts the chunks in flight on each mesh (the first holds more than 1F1B's S stages).
    differs = binds = 0
    for seed in range(100):
        costs, cluster, B = random_costs(seed)
        v, counts = 2 + seed % 3, {S for S in range(1, 9) if B % S == 0}
        expected = brute_force(costs, cluster, B, v, counts)
        if not math.isfinite(expected):
            continue
        plan = solve_stage_dp(costs, cluster, B, epsilon=0.0, early_pruning=early_pruning, virtual_stages=v,
                              stage_counts=counts)
        assert plan.latency == pytest.approx(expected, rel=1e-12), seed
        check_plan(plan, costs, cluster, B, v)
        assert len(plan.stages) in counts
        # Without stage_counts the DP takes only the numbers of meshes that divide B itself.
        assert solve_stage_dp(costs, cluster, B, epsilon=0.0, early_pruning=early_pruning, virtual_stages=v) == plan
        differs += plan.stages != solve_stage_dp(costs, cluster, B, epsilon=0.0).stages
        binds += expected > brute_force(costs, cluster, B, v, counts, memory_v=1)  # 1F1B's Eq. 5 would fit more
    assert differs >= 2 and binds >= 1


def test_epsilon_stays_within_its_bound() -> None:
    epsilon = 0.05
    for seed in range(100, 140):
        costs, cluster, B = random_costs(seed)
        expected = brute_force(costs, cluster, B)
        if not math.isfinite(expected):
            continue
        plan = solve_stage_dp(costs, cluster, B, epsilon=epsilon)
        assert expected - 1e-12 <= plan.latency <= expected + (B - 1) * epsilon + 1e-12
        check_plan(plan, costs, cluster, B)


def transformer_like(layers: int, cluster: Cluster, seed: int) -> StageCosts:
    """Near-uniform layers; data parallel replicates weights, model parallel shards them but runs slower."""
    rng = np.random.default_rng(seed)
    shapes = submesh_shapes(cluster)
    flops, weights, acts = (np.r_[0.0, np.cumsum(rng.uniform(0.8, 1.2, layers))] for _ in range(3))
    span = lambda c: c[None, :] - c[:, None]  # noqa: E731 - [i, j] = sum over layers [i, j)
    shape = (layers + 1, layers + 1, len(shapes), 2)
    latency, param, act = np.full(shape, np.inf), np.zeros(shape), np.zeros(shape)
    for k, (n, m) in enumerate(shapes):
        devices, hops = n * m, 1.0 if n == 1 else 3.0
        latency[..., k, 0] = span(flops) / devices + (devices > 1) * 0.05 * hops * span(weights)
        latency[..., k, 1] = 1.3 * span(flops) / devices + (devices > 1) * 0.03 * hops * span(acts)
        param[..., k, 0], param[..., k, 1] = span(weights), span(weights) / devices
        act[..., k, :] = 0.3 * span(acts)[..., None] / devices
    latency *= rng.uniform(0.97, 1.03, shape)
    latency[np.tril_indices(layers + 1)] = np.inf
    return StageCosts(latency, shapes, np.maximum(param, 0), np.maximum(act, 0), device_memory=6.0)


def larger_costs(seed: int) -> tuple[StageCosts, Cluster, int]:
    """6-10 layers on 8 or 4 devices: hundreds of t_max candidates, too many for the brute force."""
    rng = np.random.default_rng(seed)
    cluster = [(2, 4), (1, 8), (2, 2), (4, 2)][seed % 4]
    shapes = submesh_shapes(cluster)
    layers = int(rng.integers(6, 11))
    shape = (layers + 1, layers + 1, len(shapes), int(rng.integers(1, 3)))
    layers_in = np.maximum(np.arange(layers + 1)[None, :] - np.arange(layers + 1)[:, None], 0)
    devices = np.array([n * m for n, m in shapes], dtype=float) ** rng.uniform(0.3, 0.9)
    latency = rng.uniform(0.5, 1.5, shape) * layers_in[:, :, None, None] / devices[None, None, :, None]
    param, act = rng.uniform(0.0, 1.0, shape), rng.uniform(0.0, 0.3, shape)
    costs = StageCosts(latency, shapes, param, act, float(rng.uniform(1.5, 4.0)))
    return costs, cluster, int(rng.choice([2, 4, 8, 32]))


def test_early_pruning_agrees_on_larger_models() -> None:
    # The bisection and both of its skips run here, unlike on the tiny instances; the full scan is the reference.
    pipelined = 0
    for seed in range(40):
        costs, cluster, B = larger_costs(seed)
        try:
            full = solve_stage_dp(costs, cluster, B, epsilon=0.0, early_pruning=False)
        except InfeasiblePlanError:
            with pytest.raises(InfeasiblePlanError):
                solve_stage_dp(costs, cluster, B, epsilon=0.0)
            continue
        pruned = solve_stage_dp(costs, cluster, B, epsilon=0.0)
        assert pruned.latency == pytest.approx(full.latency, rel=1e-12), seed
        check_plan(pruned, costs, cluster, B)
        pipelined += len(pruned.stages) > 1
    for seed in range(4):
        cluster = ((2, 4), (1, 8))[seed % 2]
        costs, B = transformer_like(8 + seed, cluster, seed), (16, 64)[seed // 2]
        pruned = solve_stage_dp(costs, cluster, B, epsilon=0.0)
        assert pruned.latency == pytest.approx(solve_stage_dp(costs, cluster, B, epsilon=0.0,
                                                              early_pruning=False).latency, rel=1e-12), seed
        check_plan(pruned, costs, cluster, B)
        pipelined += len(pruned.stages) > 1
    assert pipelined >= 25


def test_epsilon_keeps_plans_inside_a_skipped_window() -> None:
    # Two 1-layer stages take 1.0 and 1.005; the single 2-layer stage 1.9. Within epsilon = 0.01, 1.0 and
    # 1.005 form one window, evaluated at 1.005: evaluating it at 1.0 would lose the pipeline.
    latency = np.full((3, 3, 2), np.inf)
    latency[0, 1, 0], latency[1, 2, 0], latency[0, 2, 1] = 1.0, 1.005, 1.9
    plan = solve_stage_dp(StageCosts(latency, ((1, 1), (1, 2))), (1, 2), 8, epsilon=0.01)
    assert len(plan.stages) == 2 and plan.t_max == 1.005
    assert plan.latency == pytest.approx(2.005 + 7 * 1.005)


def two_layer_costs(device_memory: float) -> StageCosts:
    """Two layers on (1, 2); logical mesh 0 is faster but keeps more activations per micro-batch."""
    shape = (3, 3, 2, 2)
    latency, param, act = np.full(shape, np.inf), np.zeros(shape), np.zeros(shape)
    for i in range(2):
        latency[i, i + 1, 0] = (0.5, 0.6)
        param[i, i + 1, 0], act[i, i + 1, 0] = (1.0, 0.5), (1.0, 0.5)
    return StageCosts(latency, ((1, 1), (1, 2)), param, act, device_memory)


def test_eq5_picks_the_logical_mesh_by_stages_after() -> None:
    # Stage 0 keeps 2 micro-batches (1 + 2 * 1 > 2.5): it falls back to logical mesh 1; stage 1 keeps one.
    costs = two_layer_costs(2.5)
    plan = solve_stage_dp(costs, (1, 2), 4)
    assert [(s.start, s.end, s.shape, s.logical_mesh, s.latency) for s in plan.stages] == [
        (0, 1, (1, 1), 1, 0.6), (1, 2, (1, 1), 0, 0.5)]
    assert plan.latency == pytest.approx(0.6 + 0.5 + 3 * 0.6)
    assert plan.t_max == 0.6


def test_a_forward_only_pipeline_holds_one_micro_batch_per_stage() -> None:
    # Under 1F1B stage 0 keeps 2 micro-batches and falls back to the slower logical mesh;
    # forwards only, it keeps one, and both stages take the faster mesh.
    plan = solve_stage_dp(two_layer_costs(2.5), (1, 2), 4, forward_only=True)
    assert [(s.logical_mesh, s.latency) for s in plan.stages] == [(0, 0.5), (0, 0.5)]
    assert plan.latency == pytest.approx(0.5 + 0.5 + 3 * 0.5)
    with pytest.raises(StageDPError, match="one stage per mesh"):
        solve_stage_dp(two_layer_costs(2.5), (1, 2), 4, forward_only=True, virtual_stages=2)


def test_forward_only_matches_brute_force() -> None:
    binding = 0
    for seed in range(60):
        costs, cluster, B = random_costs(seed)
        expected = brute_force(costs, cluster, B, forward_only=True)
        binding += expected < brute_force(costs, cluster, B)
        if math.isinf(expected):
            with pytest.raises(InfeasiblePlanError):
                solve_stage_dp(costs, cluster, B, epsilon=0.0, forward_only=True)
            continue
        plan = solve_stage_dp(costs, cluster, B, epsilon=0.0, forward_only=True)
        assert plan.latency == pytest.approx(expected)
    assert binding >= 3  # cases where holding one micro-batch admits a faster plan


def test_t_intra_table_levels() -> None:
    table, logical = t_intra_table(two_layer_costs(2.5), max_stages=2)
    assert table.shape == (2, 3, 3, 2)  # s = 1 and s = 2 differ
    assert table[:, 0, 1, 0].tolist() == [0.5, 0.6] and logical[:, 0, 1, 0].tolist() == [0, 1]
    assert logical[0, 0, 2, 1] == -1 and table[0, 0, 2, 1] == math.inf
    table, _ = t_intra_table(two_layer_costs(math.inf), max_stages=2)
    assert table.shape[0] == 1  # no memory limit: one level serves every s


def test_infeasible_memory_says_so() -> None:
    with pytest.raises(InfeasiblePlanError, match="memory.*Eq. 5"):
        solve_stage_dp(two_layer_costs(0.9), (1, 2), 4)


def test_infeasible_latencies_say_so() -> None:
    costs = StageCosts(np.full((3, 3, 1), np.inf), ((1, 1),))
    with pytest.raises(InfeasiblePlanError, match="finite latenc"):
        solve_stage_dp(costs, (1, 1), 2)
    # One device but two 1-layer stages, or a 2-layer stage that is missing: no cover either way.
    latency = np.full((3, 3, 1), np.inf)
    latency[0, 1, 0] = latency[1, 2, 0] = 1.0
    with pytest.raises(InfeasiblePlanError):
        solve_stage_dp(StageCosts(latency, ((1, 1),)), (1, 1), 2)


def test_single_logical_mesh_arrays_and_defaults() -> None:
    latency = np.full((3, 3, 2), np.inf)
    latency[0, 2] = (3.0, 1.8)
    latency[0, 1, 0], latency[1, 2, 0] = 1.0, 1.1
    plan = solve_stage_dp(StageCosts(latency, ((1, 1), (1, 2))), (1, 2), 8)
    assert [(s.start, s.end, s.submesh) for s in plan.stages] == [(0, 1, 0), (1, 2, 0)]
    assert plan.latency == pytest.approx(2.1 + 7 * 1.1)
    plan = solve_stage_dp(StageCosts(latency, ((1, 1), (1, 2))), (1, 2), 1)
    assert [(s.start, s.end, s.submesh) for s in plan.stages] == [(0, 2, 1)]  # B = 1: the least sum


def test_pipeline_latency_is_eq2() -> None:
    assert pipeline_latency([1.0, 2.0, 3.0], 4) == 6.0 + 3 * 3.0
    assert pipeline_latency([2.0], 1) == 2.0
    # Interleaved over 2 chunks: 4 equal meshes take (B + (S - 1)/v) t, against 1F1B's (B + S - 1) t.
    assert pipeline_latency([1.0] * 4, 8, 2) == pytest.approx(8 + 3 / 2)
    assert pipeline_latency([1.0] * 4, 8) == 8 + 3
    with pytest.raises(StageDPError, match="at least one stage"):
        pipeline_latency([], 2)
    with pytest.raises(StageDPError, match="micro-batches"):
        pipeline_latency([1.0], 0)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"latency": np.zeros((3, 2, 1))}, "shape"),
    ({"latency": np.full((3, 3, 1), np.nan)}, "NaN"),
    ({"latency": -np.ones((3, 3, 1))}, "non-negative"),
    ({"submeshes": ((1, 1), (1, 2))}, "2 submeshes"),
    ({"param_mem": np.zeros((3, 3, 2))}, "param_mem"),
    ({"act_mem": -np.ones((3, 3, 1))}, "act_mem"),
    ({"device_memory": 0.0}, "device_memory"),
])
def test_bad_costs(kwargs: dict, match: str) -> None:
    args = {"latency": np.ones((3, 3, 1)), "submeshes": ((1, 1),)} | kwargs
    with pytest.raises(StageDPError, match=match):
        StageCosts(**args)


@pytest.mark.parametrize(("cluster", "B", "epsilon", "match"), [
    ((1, 2), 0, 0.0, "micro-batches"),
    ((1, 2), 2, -1.0, "epsilon"),
    ((1, 0), 2, 0.0, "cluster"),
    ((1, 1), 2, 0.0, "does not fit"),
])
def test_bad_options(cluster: Cluster, B: int, epsilon: float, match: str) -> None:
    costs = StageCosts(np.ones((2, 2, 2)), ((1, 1), (1, 2)))
    with pytest.raises(StageDPError, match=match):
        solve_stage_dp(costs, cluster, B, epsilon=epsilon)
    with pytest.raises(StageDPError, match="virtual_stages 0 must be a positive integer"):
        solve_stage_dp(costs, (1, 2), 2, virtual_stages=0)
