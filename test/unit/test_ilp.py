"""The intra-op ILP (Sec. 4.2, Eq. 1) against exhaustive search, plus its reduction and error paths."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ilp_oracle import brute_force

from alpa_mlir.passes.intra_op import ilp, ilp_model, ilp_solver
from alpa_mlir.passes.intra_op.ilp import solve
from alpa_mlir.passes.intra_op.ilp_graph import (
    CostGraph,
    Edge,
    EdgeMemory,
    Follow,
    IlpError,
    InfeasibleError,
    local_search,
    memory_loads,
    objective,
    reduced_objective,
)

GIB = float(2**30)


def random_graph(seed: int) -> CostGraph:
    """2-7 nodes, 1-4 strategies, random edges (parallel, reversed, self, cycles), inf entries, followers."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 8))
    k = rng.integers(1, 5, n)
    costs = tuple(np.where(rng.random(kv) < 0.15, np.inf, rng.random(kv)) for kv in k)
    edges = []
    for _ in range(int(rng.integers(0, 3 * n))):
        a, b = (int(x) for x in rng.integers(0, n, 2))
        edges.append(Edge(a, b, np.where(rng.random((k[a], k[b])) < 0.1, np.inf, rng.random((k[a], k[b])))))
    follows = []
    for v in range(1, n):
        if rng.random() < 0.25:  # leaders come earlier, so chains of followers appear but no cycles
            leader = int(rng.integers(0, v))
            follows.append(Follow(v, leader, rng.integers(0, k[v], k[leader])))
    memory = tuple(rng.integers(1, 5, kv) * GIB for kv in k)
    live = tuple(tuple(int(x) for x in rng.choice(n, int(rng.integers(1, n + 1)), replace=False)) for _ in range(3))
    copies = []  # resharded copies: bytes for some pairs of choices, in some rows
    for _ in range(int(rng.integers(0, n))):
        a, b = (int(x) for x in rng.integers(0, n, 2))
        rows = tuple(int(r) for r in rng.choice(3, int(rng.integers(1, 4)), replace=False))
        copies.append(EdgeMemory(a, b, rng.integers(0, 3, (k[a], k[b])) * GIB, rows))
    return CostGraph(costs, tuple(edges), tuple(follows), memory, live, tuple(copies))


def check_against_brute_force(graph: CostGraph, budget: float | None) -> None:
    best_choices, best = brute_force(graph, budget)
    if math.isinf(best):
        with pytest.raises(InfeasibleError):
            solve(graph, budget)
        return
    sol = solve(graph, budget)
    assert sol.optimal
    assert sol.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    assert objective(graph, sol.choices) == pytest.approx(sol.objective, rel=1e-12)
    assert sol.stats.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    for f in graph.follows:
        assert sol.choices[f.node] == f.mapping[sol.choices[f.leader]]
    if budget is not None:
        assert memory_loads(graph, sol.choices).max() <= budget


@pytest.mark.parametrize("seed", range(50))
def test_random_graph_matches_brute_force(seed: int) -> None:
    check_against_brute_force(random_graph(seed), None)


@pytest.mark.parametrize("seed", range(50))
def test_random_graph_with_memory_budget_matches_brute_force(seed: int) -> None:
    graph = random_graph(seed)
    peak = max(sum(graph.node_memory[v].max() for v in live) for live in graph.live_sets) + \
        sum(t.bytes.max() for t in graph.edge_memory)
    check_against_brute_force(graph, float(np.random.default_rng(seed).uniform(0.3, 1.0)) * peak)


@pytest.mark.parametrize("seed", range(30))
def test_memory_priced_plans_fit_the_budget_and_cost_no_less_than_the_optimum(seed: int) -> None:
    # The fallback where the ILP with memory rows stops before any plan: one price per
    # byte in problems without rows. It must fit whenever some price finds a fit, and the
    # optimum within the budget bounds it from below.
    graph = random_graph(seed)
    if graph.node_memory is None or not graph.live_sets:
        return
    peak = max(sum(graph.node_memory[v].max() for v in live) for live in graph.live_sets) + \
        sum(t.bytes.max() for t in graph.edge_memory)
    budget = float(np.random.default_rng(seed).uniform(0.3, 1.0)) * peak
    try:
        free = solve(graph)
    except InfeasibleError:
        return
    options = {"solver": "HIGHS", "time_limit": None, "presolve": False, "mip_gap": ilp.HIGHS_MIP_GAP,
               "tie_repeated": False}
    priced = ilp._memory_priced(graph, budget, free, options)
    _, best = brute_force(graph, budget)
    if priced is None:
        return
    assert memory_loads(graph, priced.choices).max() <= budget * (1 + 1e-9)
    assert math.isfinite(best) and priced.objective >= best * (1 - 1e-9) - 1e-9
    assert priced.objective == pytest.approx(objective(graph, priced.choices))
    assert priced.stats.method.startswith("memory-priced")


def test_random_graphs_include_every_path() -> None:
    # Guards the two tests above against degenerate generators: some solve through the
    # ILP, some reduce away entirely, some are infeasible.
    statuses = []
    for seed in range(50):
        try:
            statuses.append(solve(random_graph(seed)).stats.status)
        except InfeasibleError:
            statuses.append("infeasible")
    assert {"optimal", "trivial", "infeasible"} <= set(statuses)



def one_sided(graph: CostGraph, seed: int) -> CostGraph:
    """``graph`` with each edge's cost made to depend on one end only (its first row or
    column repeated, inf entries kept), and some edges left as they are."""
    rng = np.random.default_rng(seed + 2000)
    edges = []
    for e in graph.edges:
        pick = rng.random()
        cost = e.cost if pick < 0.2 else np.broadcast_to(e.cost[:1] if pick < 0.6 else e.cost[:, :1], e.cost.shape)
        edges.append(Edge(e.src, e.dst, np.array(cost)))
    return CostGraph(graph.node_costs, tuple(edges), graph.follows, graph.node_memory, graph.live_sets)


@pytest.mark.parametrize("seed", range(40))
def test_one_sided_edges_match_brute_force(seed: int) -> None:
    # Folded into their end's costs before the ILP is built, with no e variables.
    graph = one_sided(random_graph(seed), seed)
    check_against_brute_force(graph, None)
    peak = max(sum(graph.node_memory[v].max() for v in live) for live in graph.live_sets)
    check_against_brute_force(graph, 0.7 * peak)


def test_one_sided_edges_need_no_edge_variables() -> None:
    # Memory rows in the ILP keep every node (no elimination): of the triangle's three
    # edges, the two one-sided ones are folded, the third stays with its 2x2 e variables.
    # (solve() adds rows only where a plan breaks them; this budget breaks none.)
    rng = np.random.default_rng(5)
    costs = tuple(rng.random(2) for _ in range(3))
    edges = (Edge(0, 1, np.array([[1.0, 2.0], [1.0, 2.0]])), Edge(1, 2, np.array([[3.0, 3.0], [0.5, 0.5]])),
             Edge(0, 2, np.array([[0.0, 1.0], [1.0, 0.0]])))
    memory = tuple(np.ones(2) * GIB for _ in range(3))
    graph = CostGraph(costs, edges, (), memory, ((0, 1, 2),))
    sol = ilp._solve_rows(graph, 3 * GIB, "HIGHS", None, False, ilp.HIGHS_MIP_GAP, tie_repeated=False)
    assert sol.stats.edges_after_reduction == 1
    assert sol.stats.variables == 3 * 2 + 4
    assert sol.objective == pytest.approx(brute_force(graph, 3 * GIB)[1])

def chain(n: int, k: int, seed: int) -> list[Edge]:
    rng = np.random.default_rng(seed)
    return [Edge(i, i + 1, rng.random((k, k))) for i in range(n - 1)]


def node_costs(n: int, k: int, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed + 1000)
    return tuple(rng.random(k) for _ in range(n))


def test_chain_reduces_to_trivial() -> None:
    graph = CostGraph(node_costs(7, 3, 0), tuple(chain(7, 3, 0)))
    sol = solve(graph)
    assert sol.stats.status == "trivial" and sol.optimal
    assert (sol.stats.nodes_after_reduction, sol.stats.variables) == (0, 0)
    assert sol.objective == pytest.approx(brute_force(graph)[1])


def test_tree_reduces_to_trivial() -> None:
    rng = np.random.default_rng(1)
    parent = [0, 0, 0, 1, 1, 2, 5, 5]  # node i + 1 hangs below parent[i]
    edges = tuple(Edge(p, i + 1, rng.random((3, 3))) for i, p in enumerate(parent))
    graph = CostGraph(node_costs(9, 3, 1), edges)
    sol = solve(graph)
    assert sol.stats.status == "trivial"
    assert sol.objective == pytest.approx(brute_force(graph)[1])


def test_simple_cycle_reduces_through_degree_two() -> None:
    # A ring has only degree-2 nodes: folding one adds a chord, and the ring shrinks to nothing.
    rng = np.random.default_rng(2)
    edges = tuple(Edge(i, (i + 1) % 5, rng.random((3, 3))) for i in range(5))
    graph = CostGraph(node_costs(5, 3, 2), edges)
    sol = solve(graph)
    assert sol.stats.status == "trivial"
    assert sol.objective == pytest.approx(brute_force(graph)[1])


def test_complete_graph_keeps_its_nodes() -> None:
    # K4 has no node of degree <= 2, so the reduction leaves it whole; the pendant chain goes.
    rng = np.random.default_rng(3)
    pairs = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3), (3, 4), (4, 5)]
    graph = CostGraph(node_costs(6, 3, 3), tuple(Edge(a, b, rng.random((3, 3))) for a, b in pairs))
    sol = solve(graph)
    assert sol.stats.status == "optimal"
    assert (sol.stats.nodes_after_reduction, sol.stats.edges_after_reduction) == (4, 6)
    assert sol.stats.variables == 4 * 3 + 6 * 9
    assert sol.objective == pytest.approx(brute_force(graph)[1])


K4 = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]


def test_integral_lp_relaxation_is_the_optimum() -> None:
    # Neighbours pay 1 to differ and every node prefers strategy 0: the LP's optimum is
    # the all-zero vertex, integral, so no branch-and-bound is needed.
    differ = np.array([[0.0, 1.0], [1.0, 0.0]])
    graph = CostGraph(tuple(np.array([0.0, 0.5]) for _ in range(4)), tuple(Edge(a, b, differ) for a, b in K4))
    sol = solve(graph)
    assert (sol.stats.status, sol.stats.method) == ("optimal", "lp-relaxation")
    assert sol.choices == (0, 0, 0, 0) and sol.objective == 0.0


def test_fractional_lp_relaxation_falls_back_to_the_milp() -> None:
    # Neighbours pay 1 to agree: the LP splits every node half and half at cost 0, but
    # two strategies on K4 leave at least two agreeing pairs.
    agree = np.array([[1.0, 0.0], [0.0, 1.0]])
    graph = CostGraph(tuple(np.zeros(2) for _ in range(4)), tuple(Edge(a, b, agree) for a, b in K4))
    sol = solve(graph)
    assert (sol.stats.status, sol.stats.method) == ("optimal", "milp")
    assert sol.objective == 2.0 == brute_force(graph)[1]


def test_a_local_optimum_the_lp_proves_close_skips_branch_and_bound() -> None:
    # The K4 above with 100 on every strategy: the LP bound is 400, the optimum 402 (two
    # agreeing pairs). Rounding the half-and-half LP optimum picks strategy 0 everywhere
    # (406); local search moves two nodes to 402, which the bound proves within 0.5%.
    agree = np.array([[1.0, 0.0], [0.0, 1.0]])
    graph = CostGraph(tuple(np.full(2, 100.0) for _ in range(4)), tuple(Edge(a, b, agree) for a, b in K4))
    sol = solve(graph, mip_gap=0.01)
    assert (sol.stats.status, sol.stats.method) == ("optimal", "lp-local-search")
    assert sol.objective == 402.0 == brute_force(graph)[1]
    assert solve(graph, mip_gap=0.004).stats.method == "milp"  # 0.5% is more than that gap


@pytest.mark.parametrize("seed", range(30))
def test_dense_random_graph_within_the_gap_of_brute_force(seed: int) -> None:
    # K7, 3 strategies each: nothing reduces, and most LP optima are fractional (20 of
    # these 30 end in local search, 11 of them above the optimum, all within the gap).
    rng = np.random.default_rng(seed)
    graph = CostGraph(tuple(1 + rng.random(3) for _ in range(7)),
                      tuple(Edge(a, b, rng.random((3, 3))) for a in range(7) for b in range(a + 1, 7)))
    best = brute_force(graph)[1]
    sol = solve(graph, mip_gap=0.2)
    assert best - 1e-9 <= sol.objective <= best + 0.2 * sol.objective + 1e-9
    assert objective(graph, sol.choices) == sol.objective
    exact = solve(graph, mip_gap=0.0)
    assert exact.objective == pytest.approx(best, rel=1e-9)


@pytest.mark.parametrize("seed", range(20))
def test_fractional_nodes_solved_with_the_rest_fixed_complete_the_optimum(seed: int) -> None:
    # Fix some nodes of a dense random graph at an optimum's picks, scramble the others:
    # solving those again (elimination, then a MILP) gives back an optimum.
    rng = np.random.default_rng(seed)
    n, k = 7, 3
    graph = CostGraph(tuple(1 + rng.random(k) for _ in range(n)),
                      tuple(Edge(a, b, rng.random((k, k))) for a in range(n) for b in range(a + 1, n)))
    best_choices, best = brute_force(graph)
    costs = {v: np.asarray(c) for v, c in enumerate(graph.node_costs)}
    edges = {(e.src, e.dst): e.cost for e in graph.edges}
    loose = {int(v) for v in rng.choice(n, int(rng.integers(1, n)), replace=False)}
    picks = {v: (best_choices[v] if v not in loose else int(rng.integers(k))) for v in range(n)}
    found = ilp_solver.solve_fractional(costs, edges, picks, loose, "HIGHS", {})
    assert set(found) == loose
    assert reduced_objective(costs, edges, picks | found) == pytest.approx(best, rel=1e-9)
    assert ilp_solver.solve_fractional(costs, edges, picks, set(range(n)), "HIGHS", {}) == {}  # nothing fixed


@pytest.mark.parametrize("seed", range(20))
def test_local_search_ends_where_no_single_change_helps(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, k = 6, 3
    costs = {v: rng.random(k) for v in range(n)}
    edges = {(a, b): rng.random((k, k)) for a in range(n) for b in range(a + 1, n) if rng.random() < 0.6}
    start = {v: int(rng.integers(k)) for v in range(n)}
    found = local_search(costs, edges, start)
    value = reduced_objective(costs, edges, found)
    assert value <= reduced_objective(costs, edges, start)
    for v in range(n):
        for other in range(k):
            assert reduced_objective(costs, edges, found | {v: other}) >= value - 1e-12


def test_bad_gap_is_an_error() -> None:
    with pytest.raises(IlpError, match="mip_gap must be in"):
        solve(CostGraph((np.zeros(1),)), mip_gap=1.0)


def test_memory_budget_skips_reduction_and_binds() -> None:
    # Unconstrained, both nodes take their big-but-cheap strategy 0; 3 GiB allows one of them.
    graph = CostGraph((np.array([0.0, 1.0]), np.array([0.0, 2.0])), (Edge(0, 1, np.zeros((2, 2))),),
                      node_memory=(np.array([2.0, 1.0]) * GIB, np.array([2.0, 1.0]) * GIB), live_sets=((0, 1),))
    assert solve(graph).choices == (0, 0)
    sol = solve(graph, memory_budget=3 * GIB)
    assert sol.choices == (1, 0) and sol.objective == 1.0
    assert sol.stats.nodes_after_reduction == 2


def test_follower_chain_is_folded_onto_its_leader() -> None:
    # 2 follows 1 follows 0; the edge 2 -> 0 becomes a node cost of 0 via the composed mapping.
    costs = (np.array([1.0, 0.0, 0.0]), np.array([5.0, 0.0]), np.array([0.0, 1.0, 9.0]))
    follows = (Follow(1, 0, np.array([1, 0, 1])), Follow(2, 1, np.array([2, 0])))
    edge = Edge(2, 0, np.array([[0.0, 3.0, 2.0], [0.0, 0.0, 7.0], [0.0, 0.0, 0.0]]))
    graph = CostGraph(costs, (edge,), follows)
    sol = solve(graph)
    # Leader choice 0 -> (0, 1, 0): 1 + R[0, 0]; 1 -> (1, 0, 2): 5 + 9 + R[2, 1]; 2 -> (2, 1, 0): R[0, 2] = 2.
    assert (sol.choices, sol.objective) == ((0, 1, 0), 1.0)
    assert brute_force(graph) == ((0, 1, 0), 1.0)


def test_follower_memory_counts_through_the_mapping() -> None:
    # Follower 1 is live alone; its memory under leader choice i is memory_1[mapping[i]].
    graph = CostGraph((np.array([0.0, 1.0]), np.array([0.0, 0.0])), follows=(Follow(1, 0, np.array([1, 0])),),
                      node_memory=(np.zeros(2), np.array([1.0, 8.0]) * GIB), live_sets=((1,),))
    assert solve(graph).choices == (0, 1)
    assert solve(graph, memory_budget=4 * GIB).choices == (1, 0)


def test_infeasible_budget_reports_budget_and_lower_bound() -> None:
    memory = (np.array([3.0, 1.5]) * GIB, np.array([2.0, 4.0]) * GIB, np.array([1.0, 1.0]) * GIB)
    graph = CostGraph(node_costs(3, 2, 4), tuple(chain(3, 2, 4)), node_memory=memory, live_sets=((0, 1), (1, 2)))
    # Lower bound: max(1.5 + 2, 2 + 1) = 3.5 GiB.
    with pytest.raises(InfeasibleError, match=r"budget of 3 GiB .* at least 3.5 GiB"):
        solve(graph, memory_budget=3 * GIB)
    assert solve(graph, memory_budget=3.5 * GIB).choices[:2] == (1, 0)


def test_infeasible_budget_above_lower_bound_still_reports_it() -> None:
    # Each node alone fits at 1 GiB, but the only allowed pairs need 5 GiB: the solver proves it.
    memory = (np.array([1.0, 4.0]) * GIB, np.array([1.0, 4.0]) * GIB)
    edge = Edge(0, 1, np.array([[np.inf, 0.0], [0.0, 0.0]]))
    graph = CostGraph((np.zeros(2), np.zeros(2)), (edge,), node_memory=memory, live_sets=((0, 1),))
    with pytest.raises(InfeasibleError, match=r"budget of 4 GiB .* at least 2 GiB"):
        solve(graph, memory_budget=4 * GIB)


def test_node_with_every_strategy_forbidden_is_named() -> None:
    graph = CostGraph((np.zeros(2), np.zeros(2), np.full(2, np.inf)), tuple(chain(3, 2, 5)))
    with pytest.raises(IlpError, match=r"node 2 has no allowed strategy"):
        solve(graph)


def test_edge_admitting_no_pair_is_named() -> None:
    edge = Edge(1, 0, np.array([[np.inf, 0.0], [np.inf, np.inf]]))
    graph = CostGraph((np.array([0.0, np.inf]), np.zeros(2)), (edge,))
    with pytest.raises(InfeasibleError, match=r"edge 1 -> 0 admits no pair"):
        solve(graph)


@pytest.mark.parametrize("bad", [np.nan, -np.inf])
def test_nan_or_minus_inf_costs_are_rejected_on_nodes_and_edges(bad) -> None:
    with pytest.raises(IlpError, match=r"node 1: costs must be a non-empty vector without NaN or -inf"):
        solve(CostGraph((np.zeros(2), np.array([0.0, bad]))))
    edge = Edge(0, 1, np.array([[0.0, 1.0], [bad, np.inf]]))
    with pytest.raises(IlpError, match=r"edge 0 -> 1: resharding cost must be .* without NaN or -inf"):
        solve(CostGraph((np.zeros(2), np.zeros(2)), (edge,)))


def test_equal_rows_are_classed_as_numpy_sorts_them_and_told_apart_by_shape() -> None:
    # The ILP's edge variables are per class of equal rows (and columns) of a resharding
    # matrix, remembered by the matrix's content: numbered as np.unique numbers them.
    rng = np.random.default_rng(3)
    for _ in range(20):
        rows = rng.choice([0.0, -0.0, 1.5, 2.0, np.inf], size=(3, 3))
        matrix = rows[rng.integers(0, 3, rng.integers(1, 7))]  # repeated rows
        first, inverse = ilp_model.equal_rows(matrix.dtype.str, matrix.shape, matrix.tobytes())
        want = np.unique(matrix, axis=0, return_index=True, return_inverse=True)[1:]
        assert first.tolist() == want[0].tolist() and inverse.tolist() == want[1].ravel().tolist()
    data = np.array([1.0, 1.0, 2.0, 2.0, 3.0, 3.0]).tobytes()  # 3x2: three classes; 2x3: two rows, one class each
    assert ilp_model.equal_rows("<f8", (3, 2), data)[1].tolist() == [0, 1, 2]
    assert ilp_model.equal_rows("<f8", (2, 3), data)[1].tolist() == [0, 1]
    assert ilp_model.equal_rows("<f8", (6, 1), data)[1].tolist() == [0, 0, 1, 1, 2, 2]


def test_unknown_solver_is_named_with_the_installed_ones() -> None:
    graph = CostGraph(node_costs(2, 2, 6), tuple(chain(2, 2, 6)))
    with pytest.raises(IlpError, match=r"'NO_SUCH_SOLVER'.*HIGHS"):
        solve(graph, solver="NO_SUCH_SOLVER")


def test_other_milp_solver_and_time_limit_pass_through() -> None:
    rng = np.random.default_rng(7)
    pairs = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    graph = CostGraph(node_costs(4, 3, 7), tuple(Edge(a, b, rng.random((3, 3))) for a, b in pairs))
    best = brute_force(graph)[1]
    for solver in ("HIGHS", "SCIPY"):
        sol = solve(graph, solver=solver, time_limit=30.0)
        assert (sol.stats.solver, sol.stats.status) == (solver, "optimal")
        assert sol.objective == pytest.approx(best)


def test_objective_is_inf_for_forbidden_or_unfollowed_choices() -> None:
    graph = CostGraph((np.array([1.0, np.inf]), np.array([2.0, 3.0])), (Edge(0, 1, np.array([[0.5, 0.0]] * 2)),),
                      (Follow(1, 0, np.array([0, 1])),))
    assert objective(graph, (0, 0)) == 3.5
    assert math.isinf(objective(graph, (1, 1)))
    assert math.isinf(objective(graph, (0, 1)))
