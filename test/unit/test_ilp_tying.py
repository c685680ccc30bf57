"""Repeated layers solved once (``ilp_tying.py``): which nodes tie, and the tied ILP
against the untied optimum and exhaustive search."""

from __future__ import annotations

import dataclasses
import functools

import jax
import numpy as np
import pytest
from ilp_oracle import brute_force
from jax._src.lib.mlir import ir

from alpa_mlir import models
from alpa_mlir.dialect import make_context
from alpa_mlir.dialect.pass_registry import Diagnostics
from alpa_mlir.passes import run_pipeline
from alpa_mlir.passes.intra_op import ilp
from alpa_mlir.passes.intra_op.auto_sharding import AutoShardingPass
from alpa_mlir.passes.intra_op.ilp import solve
from alpa_mlir.passes.intra_op.ilp_graph import CostGraph, Edge, objective
from alpa_mlir.passes.intra_op.ilp_tying import repeated_classes, tie


def layered_graph(seed: int, layers: int, width: int = 4, max_strategies: int = 3) -> CostGraph:
    """``layers`` copies of one random layer of ``width`` nodes, all pairs of them joined,
    each layer's last two nodes feeding the next layer's first two, between a head and a
    tail node of their own costs. Every node has degree 3 or more, so the exact
    elimination leaves the graph whole and the ILP sees every layer."""
    rng = np.random.default_rng(seed)
    k = rng.integers(2, max_strategies + 1, width)
    layer_costs = [rng.random(kv) for kv in k]
    inner = [(a, b, rng.random((k[a], k[b]))) for a in range(width) for b in range(a + 1, width)]
    links = [(width - 1, 0, rng.random((k[-1], k[0]))), (width - 2, 1, rng.random((k[-2], k[1])))]
    costs = [rng.random(k[0])]  # head
    edges = [Edge(0, 1, rng.random((k[0], k[0]))), Edge(0, 2, rng.random((k[0], k[1])))]
    for layer in range(layers):
        base = 1 + layer * width
        costs += layer_costs
        edges += [Edge(base + a, base + b, r) for a, b, r in inner]
        if layer + 1 < layers:
            edges += [Edge(base + a, base + width + b, r) for a, b, r in links]
    tail = len(costs)
    costs.append(rng.random(k[-1]))
    edges += [Edge(tail - 1, tail, rng.random((k[-1], k[-1]))), Edge(tail - 2, tail, rng.random((k[-2], k[-1])))]
    return CostGraph(tuple(costs), tuple(edges))


def as_dicts(graph: CostGraph) -> tuple[dict, dict]:
    costs = {v: np.asarray(c, dtype=float) for v, c in enumerate(graph.node_costs)}
    edges = {}
    for e in graph.edges:
        edges[(e.src, e.dst)] = edges.get((e.src, e.dst), 0) + e.cost
    return costs, edges


def test_interior_layers_tie_and_the_ends_do_not() -> None:
    graph = layered_graph(0, layers=12)
    width = 4

    def node(layer: int, position: int) -> int:
        return 1 + layer * width + position

    for period in (1, 2):
        classes = repeated_classes(*as_dicts(graph), rounds=2, period=period)
        for position in range(width):
            # Layers more than two hops from the head and the tail look alike, position by
            # position; they tie every period-th layer.
            for parity in range(period):
                assert len({classes[node(layer, position)] for layer in range(2 + parity, 10, period)}) == 1
            assert len({classes[node(layer, position)] for layer in range(2, 10)}) == period
            assert classes[node(0, position)] != classes[node(5, position)]
            assert classes[node(11, position)] != classes[node(5, position)]
        # Roles inside a layer stay apart.
        assert len({classes[node(5, p)] for p in range(width)}) == width


def test_nodes_of_unequal_costs_never_tie() -> None:
    costs = {0: np.array([1.0, 2.0]), 1: np.array([1.0, 2.0]), 2: np.array([1.0, 2.5])}
    classes = repeated_classes(costs, {}, period=1)
    assert classes[0] == classes[1] == 0
    assert classes[2] == 2


def test_tied_graph_sums_members_and_pays_inner_edges_on_the_diagonal() -> None:
    costs = {0: np.array([1.0, 2.0]), 1: np.array([1.0, 2.0]), 2: np.array([0.0, 5.0])}
    r = np.array([[3.0, 7.0], [11.0, 13.0]])
    edges = {(0, 1): r, (1, 2): r}
    tied_costs, tied_edges = tie(costs, edges, {0: 0, 1: 0, 2: 2})
    assert tied_costs[0] == pytest.approx([2.0 + 3.0, 4.0 + 13.0])
    assert list(tied_edges) == [(0, 2)]
    assert tied_edges[(0, 2)] == pytest.approx(r)


@pytest.mark.parametrize("seed", range(12))
def test_tied_ilp_of_repeated_layers_matches_brute_force(seed: int) -> None:
    graph = layered_graph(seed, layers=3, max_strategies=2)  # 14 nodes: 2^14 plans
    _, best = brute_force(graph)
    tied = solve(graph, tie_repeated=True)
    assert tied.objective == pytest.approx(best, rel=1e-9)
    assert tied.objective == pytest.approx(solve(graph).objective, rel=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_tied_ilp_of_deep_stacks_matches_the_untied_optimum(seed: int) -> None:
    graph = layered_graph(seed, layers=16)
    untied, tied = solve(graph), solve(graph, tie_repeated=True)
    assert tied.objective == pytest.approx(untied.objective, rel=1e-9)
    assert untied.stats.nodes_after_reduction == len(graph.node_costs) - 2  # all but the head and the tail
    assert tied.stats.nodes_after_reduction < untied.stats.nodes_after_reduction / 2


def test_local_search_undoes_a_tie_the_optimum_breaks(monkeypatch: pytest.MonkeyPatch) -> None:
    # Nodes 0 and 1 look alike (equal costs, equal edges to 2 and 3: degree 3 everywhere,
    # so nothing is eliminated), but their own edge charges equal choices: tied (period
    # 1), both pick one strategy (cost 10); the search on the untied graph moves one.
    monkeypatch.setattr(ilp, "repeated_classes", functools.partial(repeated_classes, period=1))
    graph = CostGraph((np.zeros(2), np.zeros(2), np.array([0.0, 0.0, 1.0]), np.array([0.0, 1.0])),
                      (Edge(0, 1, np.array([[10.0, 0.0], [0.0, 10.0]])), Edge(0, 2, np.ones((2, 3))),
                       Edge(1, 2, np.ones((2, 3))), Edge(0, 3, np.ones((2, 2))), Edge(1, 3, np.ones((2, 2))),
                       Edge(2, 3, np.array([[0.0, 2.0], [3.0, 0.0], [1.0, 1.0]]))))
    tied = solve(graph, tie_repeated=True)
    assert tied.stats.nodes_after_reduction == 3
    assert tied.objective == pytest.approx(brute_force(graph)[1])
    assert tied.choices[0] != tied.choices[1]
    assert objective(graph, tied.choices) == pytest.approx(tied.objective)


@pytest.mark.parametrize("mesh", ["2,4", "8"])
def test_small_gpt_plans_the_same_objective_tied_and_untied(mesh: str) -> None:
    config = dataclasses.replace(models.GPT3["350M"], hidden=64, heads=4, layers=6, seq_len=32, vocab=128)
    args = models.abstract_args(config, batch_size=8)
    text = jax.jit(models.build(config).train_step).lower(*args).as_text()
    batch = len(jax.tree.leaves(args)) - 2  # tokens and targets are the last two arguments
    plans = {}
    for tied in (False, True):
        module = ir.Module.parse(text, context=make_context())
        run_pipeline(module, f"builtin.module(alpa-import-pipeline{{mesh-shape={mesh}}})")
        pass_ = AutoShardingPass(mesh_shape=tuple(int(x) for x in mesh.split(",")), batch_args=(batch, batch + 1),
                                 allow_flattened_mesh=True, tie_repeated_layers=tied)
        with module.context:
            plans[tied] = pass_.plan_module(module.operation, Diagnostics([]))
    assert plans[True].solver["nodes_after_reduction"] < plans[False].solver["nodes_after_reduction"]
    assert plans[True].objective == pytest.approx(plans[False].objective, rel=1e-4)  # the mip gap


@pytest.mark.parametrize("seed", range(8))
def test_tied_ilp_keeps_the_memory_budget(seed: int) -> None:
    graph = layered_graph(seed, layers=3, max_strategies=2)
    rng = np.random.default_rng(seed)
    memory = tuple(np.asarray(rng.integers(1, 4, len(c)), dtype=float) for c in graph.node_costs)
    n = len(graph.node_costs)
    live = tuple(tuple(range(i, min(i + 4, n))) for i in range(n - 3))
    graph = dataclasses.replace(graph, node_memory=memory, live_sets=live)
    budget = float(np.median([sum(memory[v].max() for v in s) for s in live]))
    _, best = brute_force(graph, budget)
    tied = solve(graph, budget, tie_repeated=True)
    assert all(sum(memory[v][tied.choices[v]] for v in s) <= budget for s in live)
    assert tied.objective >= best - 1e-9
    assert objective(graph, tied.choices) == pytest.approx(tied.objective)
