"""The whole inter-op search, clustering included, against exhaustive search on small random op graphs.

``alpa-layer-construction`` cuts the ops into layers (Sec. 5.2's clustering, or Sec. 8.3's equal
operator counts), ``alpa-stage-construction`` costs every candidate (layer range, submesh, logical
mesh) and runs the DP of Eq. 3-4 per family of candidates. Here the ops are plain numbers and a
stage's costs a function of its op range (FLOPs over devices, the bytes it receives from earlier
ops, a per-stage overhead, a view-dependent all-reduce, Eq. 5's memories), so the search is
checked against every partition of the ops into stages on every submesh assignment:

1. with one layer per op, it is the optimum over every partition of the ops;
2. with fewer layers, the clustering is the optimum of its own objective (Sec. 5.2), and the
   plan is the optimum over the partitions that cut only where a layering the search compares
   (the clustered one, the equal-operator one) does;
3. ``auto`` is never worse than ``equal-layer`` or ``equal-operator`` (Sec. 8.3's ablation),
   with ``max-costed-layers`` composition too, which is exact on costs that add up over layers.

The test runs the pass's own search of a layering (``stage_search.search_layering``), after the
real ``cluster_operators`` and ``equal_operator_layers``; only the costing of a candidate (IR
planning, ``stage_costing.cost_stages``) is the model's.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np
import pytest
from test_layer_clustering import brute_force as clustering_brute_force
from test_layer_clustering import received

from alpa_mlir.passes.inter_op.layer_clustering import (
    ClusteringInfeasibleError,
    Value,
    cluster_operators,
    equal_operator_layers,
)
from alpa_mlir.passes.inter_op.stage_dp import StageCosts, StageDPError, StagePlan, pipeline_latency
from alpa_mlir.passes.inter_op.stage_search import (
    CostedSpace,
    SearchOptions,
    SearchSpace,
    completable,
    compose_ranges,
    logical_shapes,
    search_layering,
)
from alpa_mlir.passes.inter_op.submesh import submesh_shapes

Shape = tuple[int, int]
CLUSTERS: tuple[Shape, ...] = ((1, 2), (1, 3), (1, 4), (2, 2), (2, 4))


@dataclass(frozen=True, eq=False)
class Instance:
    """Ops ``0..K-1`` with FLOPs, a dataflow, weights and activations, on a cluster."""

    flops: tuple[float, ...]
    values: tuple[Value, ...]
    weights: tuple[float, ...]  # parameter bytes each op reads
    activations: tuple[float, ...]  # bytes each op keeps for the backward, per micro-batch
    cluster: Shape
    num_micro_batches: int
    device_memory: float
    overhead: float  # seconds per stage (launches): not additive over layers
    per_byte: float  # seconds per byte a stage receives from earlier ops: not additive either
    missing: frozenset[tuple[int, int, Shape]]  # op ranges with no plan on a submesh

    @property
    def num_ops(self) -> int:
        return len(self.flops)

    @functools.cache  # noqa: B019 - a few hundred small instances per test
    def stage(self, start: int, end: int, shape: Shape, view: Shape) -> tuple[float, float, float]:
        """(t_intra, parameter bytes, activation bytes) per device of ops ``[start, end)`` on
        ``shape`` seen as ``view``: its first axis shards the weights, its second the batch."""
        devices = shape[0] * shape[1]
        shards, replicas = view[0], devices // view[0]
        weights, acts = sum(self.weights[start:end]), sum(self.activations[start:end])
        hosts = 1.0 if shape[0] == 1 else 4.0
        latency = (sum(self.flops[start:end]) / devices ** 0.6 + self.overhead
                   + self.per_byte * hosts * received(list(self.values), start, end)
                   + 0.02 * hosts * (weights / shards) * (replicas - 1) / replicas  # gradient all-reduce
                   + 0.01 * hosts * acts * (shards - 1))  # activations gathered across the weight shards
        return math.inf if (start, end, shape) in self.missing else latency, weights / shards, acts / replicas


def random_instance(seed: int, additive: bool = False) -> Instance:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 7))
    flops = tuple(float(f) for f in rng.integers(0, 20, size=k))
    values = []
    for producer in range(k - 1):
        for _ in range(int(rng.integers(0, 3))):
            readers = rng.choice(np.arange(producer + 1, k), size=int(rng.integers(1, k - producer)), replace=False)
            values.append(Value(producer, tuple(sorted(int(r) for r in readers)), float(rng.integers(1, 50))))
    cluster = CLUSTERS[int(rng.integers(len(CLUSTERS)))]
    shapes = submesh_shapes(cluster)
    missing = frozenset() if additive else frozenset(
        (a, b, s) for a in range(k) for b in range(a + 1, k + 1) for s in shapes if rng.random() < 0.05)
    weights = tuple(float(w) for w in rng.uniform(0, 10, k))
    activations = tuple(float(a) for a in rng.uniform(0, 5, k))
    memory = math.inf if rng.random() < 0.3 else float(rng.uniform(0.3, 1.0) * (sum(weights) + sum(activations)))
    return Instance(flops, tuple(values), weights, activations, cluster, int(rng.choice([1, 4, 8, 16, 32])), memory,
                    0.0 if additive else float(rng.uniform(0, 0.5)), 0.0 if additive else float(rng.uniform(0, 0.2)),
                    missing)


def layer_costs(inst: Instance, starts: tuple[int, ...], space: SearchSpace, max_costed_layers: int) -> CostedSpace:
    """What ``cost_stages`` builds, with the model's costs for each candidate's ops."""
    bounds = (*starts, inst.num_ops)
    size = len(starts) + 1
    shape = (size, size, len(space.submeshes), max(len(v) for v in space.views.values()))
    latency, param, act = np.full(shape, np.inf), np.zeros(shape), np.zeros(shape)
    for i, j, k in space.candidates:
        for p, view in enumerate(space.views[k]):
            index = (i, j, space.submeshes.index(k), p)
            latency[index], param[index], act[index] = inst.stage(bounds[i], bounds[j], k, view)
    compose_ranges(latency, (param, act), space.composed, max_costed_layers)
    return CostedSpace(StageCosts(latency, tuple(space.submeshes), param, act, inst.device_memory), 0)


def search(inst: Instance, starts: tuple[int, ...], mode: str = "auto", num_stages: int = 0,
           max_costed_layers: int = 0) -> StagePlan | None:
    """The pass's own search of one layering (layer ``l`` is ops from ``starts[l]``), its
    candidates costed by the model."""
    options = SearchOptions(inst.cluster, inst.num_micro_batches, mode, num_stages,
                            max_costed_layers=max_costed_layers)
    try:
        found = search_layering(options, len(starts),
                                lambda space, bound: layer_costs(inst, starts, space, max_costed_layers))
    except StageDPError:
        return None
    if not max_costed_layers:
        check_plan(inst, starts, found.plan, found.views)
    return found.plan


def check_plan(inst: Instance, starts: tuple[int, ...], plan: StagePlan, views) -> None:
    """The plan's stages, mapped back to ops, cost what it says (Eq. 2) and fit memory (Eq. 5)."""
    bounds = (*starts, inst.num_ops)
    ranges = [(s.start, s.end) for s in plan.stages]
    assert ranges[0][0] == 0 and ranges[-1][1] == len(starts) and all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    assert sum(s.num_devices for s in plan.stages) == inst.cluster[0] * inst.cluster[1]
    for q, stage in enumerate(plan.stages):
        latency, param, act = inst.stage(bounds[stage.start], bounds[stage.end], stage.shape,
                                         views[stage.shape][stage.logical_mesh])
        assert stage.latency == latency
        assert param + (len(plan.stages) - q) * act <= inst.device_memory
    assert plan.latency == pipeline_latency([s.latency for s in plan.stages], inst.num_micro_batches)


def latency(plan: StagePlan | None) -> float:
    return math.inf if plan is None else plan.latency


def brute_force(inst: Instance, cuts: set[int], layers_per_stage: int = 0) -> float:
    """Eq. 2 minimised over every partition of the ops into stages starting only at ``cuts`` (with
    ``layers_per_stage``: at every that many-th cut), every submesh per stage (using every device
    once) and each stage on its fastest view that fits Eq. 5 where it sits (Eq. 2 grows with
    every stage's latency, so that view is the best for it)."""
    devices = inst.cluster[0] * inst.cluster[1]
    shapes = submesh_shapes(inst.cluster)
    inner, n = sorted(cuts - {0}), layers_per_stage
    partitions = [inner[n - 1::n]] if n else \
        [chosen for count in range(len(inner) + 1) for chosen in itertools.combinations(inner, count)]
    best = math.inf
    for chosen in partitions:
        bounds = (0, *chosen, inst.num_ops)
        stages = len(bounds) - 1
        for subs in itertools.product(shapes, repeat=stages if stages <= devices else 0):
            if sum(n * m for n, m in subs) != devices:
                continue
            times = []
            for q, (a, b, shape) in enumerate(zip(bounds, bounds[1:], subs)):
                fitting = [t for t, param, act in (inst.stage(a, b, shape, v) for v in logical_shapes(shape, "all"))
                           if param + (stages - q) * act <= inst.device_memory]
                times.append(min(fitting, default=math.inf))
            if math.isfinite(sum(times)):
                best = min(best, pipeline_latency(times, inst.num_micro_batches))
    return best


def layer_starts(layer_of_op: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(k for k, layer in enumerate(layer_of_op) if k == 0 or layer != layer_of_op[k - 1])


def test_one_layer_per_op_is_the_optimum_over_every_partition() -> None:
    feasible = pipelined = 0
    for seed in range(80):
        inst = random_instance(seed)
        k = inst.num_ops
        clustering = cluster_operators(inst.flops, inst.values, k, delta=float(k))  # any op fits the bound
        assert clustering.starts == tuple(range(k))
        plan = search(inst, clustering.starts)
        expected = brute_force(inst, set(range(k)))
        assert latency(plan) == pytest.approx(expected, rel=1e-12), seed
        feasible += plan is not None
        pipelined += plan is not None and len(plan.stages) > 1
    assert feasible >= 50 and pipelined >= 25


def test_fewer_layers_are_the_optimum_at_the_layerings_cuts() -> None:
    checked = differ = 0
    for seed in range(100, 180):
        inst = random_instance(seed)
        rng = np.random.default_rng(seed)
        num_layers = int(rng.integers(2, inst.num_ops))
        delta = float(rng.choice([0.3, 0.6, 1.5]))
        best_clustering = clustering_brute_force(list(inst.flops), list(inst.values), num_layers, delta)
        try:
            clustering = cluster_operators(inst.flops, inst.values, num_layers, delta=delta)
        except ClusteringInfeasibleError:
            assert best_clustering is None, seed
            continue
        # Sec. 5.2's objective: the least max bytes received, then the least FLOP variance.
        assert (clustering.max_received, clustering.flop_variance) == pytest.approx(best_clustering, abs=1e-9)
        layers = list(zip((*clustering.starts, inst.num_ops), (*clustering.starts[1:], inst.num_ops)))
        assert clustering.max_received == max(received(list(inst.values), a, b) for a, b in layers)  # as reported
        assert clustering.flop_variance == pytest.approx(np.var([sum(inst.flops[a:b]) for a, b in layers]))
        clustered = search(inst, clustering.starts)
        assert latency(clustered) == pytest.approx(brute_force(inst, set(clustering.starts)), rel=1e-12), seed
        # auto compares the equal-operator layering too (compare-layerings) and keeps the better plan.
        equal_cuts = layer_starts(equal_operator_layers(inst.num_ops, num_layers))
        equal = search(inst, equal_cuts)
        auto = min(latency(clustered), latency(equal))
        assert auto == pytest.approx(min(brute_force(inst, set(clustering.starts)), brute_force(inst, set(equal_cuts))),
                                     rel=1e-12), seed
        checked += math.isfinite(auto)
        differ += latency(equal) != latency(clustered)
    assert checked >= 45 and differ >= 8  # often, the layering the plan is searched on matters


@pytest.mark.parametrize("max_costed_layers", [0, 1, 2])
def test_auto_is_never_worse_than_equal_layer_or_equal_operator(max_costed_layers: int) -> None:
    m, beaten, clustering_lost = max_costed_layers, 0, 0
    for seed in range(200, 240):
        inst = random_instance(seed)
        num_layers = int(np.random.default_rng(seed).integers(2, inst.num_ops + 1))
        clustered = cluster_operators(inst.flops, inst.values, num_layers, delta=float(num_layers)).starts
        equal = layer_starts(equal_operator_layers(inst.num_ops, num_layers))
        alone = latency(search(inst, clustered, max_costed_layers=m))  # compare-layerings=false
        auto = min(alone, latency(search(inst, equal, max_costed_layers=m)))
        equal_layer = {n: latency(search(inst, clustered, "equal-layer", n, max_costed_layers=m))
                       for n in range(1, num_layers + 1) if num_layers % n == 0}
        # num-stages=0: the best number of stages; each number: the best stages of as many layers.
        assert latency(search(inst, clustered, "equal-layer", max_costed_layers=m)) == min(equal_layer.values())
        for n, found in equal_layer.items() if not m else ():
            assert found == pytest.approx(brute_force(inst, set(clustered), num_layers // n), rel=1e-12), (seed, n)
        baselines = [latency(search(inst, equal, "equal-operator", max_costed_layers=m)), *equal_layer.values()]
        assert all(auto <= b for b in baselines), (seed, auto, baselines)
        beaten += sum(auto < b for b in baselines)
        clustering_lost += alone > baselines[0]
    assert beaten >= 20  # the baselines' restrictions do cost
    assert clustering_lost >= 2  # why auto also searches the equal-operator layering


def test_composed_ranges_are_exact_on_costs_that_add_up() -> None:
    for seed in range(300, 320):
        inst = random_instance(seed, additive=True)
        starts = tuple(range(inst.num_ops))
        exact = search(inst, starts)
        for m in range(1, inst.num_ops):
            composed = search(inst, starts, max_costed_layers=m)
            assert latency(composed) == pytest.approx(latency(exact), rel=1e-9), (seed, m)


def test_a_missing_term_leaves_a_composed_range_missing() -> None:
    table, memory = np.zeros((4, 4)), np.zeros((4, 4))
    table[0, 2], table[1, 3], table[1, 2] = 2.0, 2.5, math.inf
    memory[0, 2], memory[1, 3], memory[1, 2] = 1.0, 1.0, 3.0
    compose_ranges(table, (memory,), [(0, 3)], 2)  # t(0, 2) + t(1, 3) - t(1, 2), and t(1, 2) is missing
    assert table[0, 3] == math.inf and memory[0, 3] == 0.0  # not 1 + 1 - 3
    table[1, 2] = 1.5
    compose_ranges(table, (memory,), [(0, 3)], 2)
    assert table[0, 3] == 2.0 + 2.5 - 1.5 and memory[0, 3] == 1.0 + 1.0 - 3.0


@pytest.mark.parametrize("cluster", CLUSTERS + ((1, 8), (2, 8)))
def test_the_candidates_kept_are_those_some_slicing_holds(cluster: Shape) -> None:
    # Every slicing of L layers into consecutive stages, each on a submesh, the submeshes
    # holding every device once: the candidates that appear in one are the ones kept.
    shapes, total = submesh_shapes(cluster), cluster[0] * cluster[1]
    for num_layers in range(1, 6):
        every = [(i, j, k) for i in range(num_layers) for j in range(i + 1, num_layers + 1) for k in shapes]
        held = set()
        for count in range(num_layers):
            for cuts in itertools.combinations(range(1, num_layers), count):
                bounds = (0, *cuts, num_layers)
                for meshes in itertools.product(shapes, repeat=len(bounds) - 1):
                    if sum(a * b for a, b in meshes) == total:
                        held.update((bounds[s], bounds[s + 1], k) for s, k in enumerate(meshes))
        kept = completable(every, num_layers, cluster)
        assert set(kept) == held, (cluster, num_layers)
        assert kept == [c for c in every if c in held]  # in their order
