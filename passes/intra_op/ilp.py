"""The intra-operator auto-sharding ILP (Sec. 4.2, Eq. 1), independent of MLIR.

A ``CostGraph`` (``ilp_graph.py``) has one node per op with ``k_v`` candidate parallel
algorithms (cost ``c_v + d_v``), resharding-cost matrices ``R_vu`` on its edges,
optional followers (trivial ops merged into an operand, Sec. 4.2) and optional
per-program-point memory. :func:`solve` picks one algorithm per node minimising

    sum_v s_v^T (c_v + d_v) + sum_(v,u) s_v^T R_vu s_u                      (Eq. 1)

in two steps: the exact reductions of ``ilp_graph.py`` (followers folded onto their
leaders; without a memory budget, degree-0/1/2 nodes eliminated and dominated
strategies pruned; one-sided edges folded into node costs; optionally, repeated layers
tied to one choice, ``ilp_tying.py``), then what remains is linearised
(``ilp_model.py``) and handed to a CVXPY MILP solver, HiGHS by default
(``ilp_solver.py``: the LP relaxation first). A memory budget's rows join the ILP as
plans break them; where the ILP with them stops before any plan, memory is priced into
Eq. 1 instead (:func:`solve`). ``np.inf`` marks a forbidden strategy or resharding pair.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from ...plans.plan_summary import byte_text
from .ilp_graph import (
    BudgetError,
    CostGraph,
    Edge,
    IlpError,
    InfeasibleError,
    counted_nodes,
    eliminate,
    fold_followers,
    fold_one_sided,
    local_search,
    memory_loads,
    memory_subset,
    objective,
    prune_dominated,
    reduced_objective,
    resolve_followers,
    validate,
)
from .ilp_model import IlpModel, build_ilp, live_incidence
from .ilp_solver import (
    HIGHS_MIP_GAP,
    Solved,
    SolverLimitError,
    SolverSettings,
    dive,
    fractional,
    rounded_picks,
    run_solver,
    solve_fractional,
    solver_options,
    time_limit_for,
)
from .ilp_tying import repeated_classes, tie


@dataclass(frozen=True)
class SolverStats:
    nodes: int
    nodes_after_reduction: int  # with tie_repeated: the classes left
    edges_after_reduction: int
    variables: int
    constraints: int
    build_seconds: float  # validation, follower folding, reduction, sparse matrices
    solve_seconds: float  # CVXPY's canonicalisation plus the solver
    solver: str
    status: str  # "optimal" | "feasible" (time limit, incumbent kept) | "trivial" (nothing left to solve)
    method: str  # "lp-relaxation" (its optimum was integral) | "lp-local-search" (see solve) | "milp" |
    # "elimination" (nothing left to solve)
    objective: float  # solver objective plus the folded constants; equals Eq. 1 up to solver tolerance


@dataclass(frozen=True)
class Solution:
    choices: tuple[int, ...]
    objective: float  # Eq. 1 recomputed exactly from the graph
    stats: SolverStats

    @property
    def optimal(self) -> bool:
        return self.stats.status in ("optimal", "trivial")


# Memory rows added per round (the most broken), and rounds before giving up.
ROWS_PER_ROUND = 16
MAX_ROW_ROUNDS = 12
# Plans solved with memory priced in (see _memory_priced): prices doubled until one fits,
# then halved towards the cheapest that fits.
PRICE_ROUNDS = 12
PRICE_REFINEMENTS = 6


def solve(graph: CostGraph, memory_budget: float | None = None, solver: str = "HIGHS",
          time_limit: float | None = None, presolve: bool = False, mip_gap: float = HIGHS_MIP_GAP,
          *, tie_repeated: bool = False, cost_unit: float = 1.0) -> Solution:
    """The strategy per node minimising Eq. 1 (followers included) within ``memory_budget`` bytes per device.

    ``presolve``: HiGHS presolves the LP relaxation (see ``run_solver``). ``mip_gap``
    (HiGHS): the plan's Eq. 1 may exceed the optimum by this fraction of itself, as
    HiGHS's ``mip_rel_gap`` means it; a local optimum near the LP relaxation's optimum
    that the relaxation's bound proves that close is taken without branch and bound.
    ``tie_repeated``: nodes whose neighbourhoods look alike (repeated layers) share one
    choice (``ilp_tying.py``), and the tied optimum is then improved one node at a time
    on the untied graph (without a budget); optimal for the tied graph, an upper bound
    for the untied one. ``cost_unit``: the costs are solved in multiples of it (the
    mesh's least beta, one byte's transfer time): the solver's tolerances are absolute, and
    in seconds per byte (3.3e-12 on NVLink) a real cost is below them."""
    if cost_unit != 1.0:
        in_units = replace(graph, node_costs=tuple(np.asarray(c, dtype=float) / cost_unit for c in graph.node_costs),
                           edges=tuple(Edge(e.src, e.dst, np.asarray(e.cost, dtype=float) / cost_unit)
                                       for e in graph.edges))
        found = solve(in_units, memory_budget, solver, time_limit, presolve, mip_gap, tie_repeated=tie_repeated)
        return replace(found, objective=objective(graph, found.choices),
                       stats=replace(found.stats, objective=found.stats.objective * cost_unit))
    options = {"solver": solver, "time_limit": time_limit, "presolve": presolve, "mip_gap": mip_gap,
               "tie_repeated": tie_repeated}
    if memory_budget is None or not graph.live_sets:
        return _solve_rows(graph, None, **options)
    # Memory rows are added as plans break them (lazy constraints): the plan without a
    # budget first, which mostly fits; then the rows it breaks, and those the next plan
    # breaks. A training step has thousands of rows, mostly far from the peak, and the LP
    # with all of them is many times slower (docs/auto_sharding.md, "Memory budgets").
    validate(graph, memory_budget)
    solution = _solve_rows(replace(graph, live_sets=(), edge_memory=(), node_memory=None), None, **options)
    active: set[int] = set()
    for _ in range(MAX_ROW_ROUNDS):
        loads = memory_loads(graph, solution.choices)
        broken = np.nonzero(loads > memory_budget * (1 + 1e-9))[0]
        if not len(broken):
            return solution
        active.update(int(r) for r in broken[np.argsort(-loads[broken])][:ROWS_PER_ROUND])
        try:
            solution = _solve_rows(memory_subset(graph, sorted(active)), memory_budget, **options)
        except SolverLimitError:
            priced = _memory_priced(graph, memory_budget, solution, options)
            if priced is None:
                raise
            return priced
    raise BudgetError(f"no plan found within the memory budget of {byte_text(memory_budget)} per device "
                          f"after {MAX_ROW_ROUNDS} rounds of memory rows; the last needs "
                          f"{byte_text(float(memory_loads(graph, solution.choices).max()))}")


def _memory_priced(graph: CostGraph, memory_budget: float, free: Solution, options: dict) -> Solution | None:
    """A plan within ``memory_budget`` from problems without memory rows (Lagrangian
    relaxation with one price): every byte a memory row counts costs ``price`` in Eq. 1
    (node bytes in the node costs, resharded copies as parallel edges), solved as fast as
    the plan ``free`` without a budget; the price starts at ``free``'s objective per
    budget, doubles until a plan fits and is then bisected towards the cheapest plan that
    fits. Where the ILP with the rows stops at its time limit before any plan (its dense
    rows make the simplex slow). ``None`` if no price fits. Not exact: the plans of one
    price jump over the plans between them (docs/auto_sharding.md, "Memory budgets", has
    a case)."""
    counted = counted_nodes(graph)

    def priced(price: float) -> Solution:
        costs = tuple(c + price * np.asarray(m, dtype=float) if v in counted else c
                      for v, (c, m) in enumerate(zip(graph.node_costs, graph.node_memory)))
        copies = tuple(Edge(t.src, t.dst, price * np.asarray(t.bytes, dtype=float)) for t in graph.edge_memory)
        plain = replace(graph, node_costs=costs, edges=graph.edges + copies, live_sets=(), edge_memory=())
        found = _solve_rows(plain, None, **options)
        return replace(found, objective=objective(graph, found.choices),
                       stats=replace(found.stats, status="feasible", method=f"memory-priced-{found.stats.method}"))

    def fits(solution: Solution) -> bool:
        return bool(memory_loads(graph, solution.choices).max() <= memory_budget * (1 + 1e-9))

    low, high, best = 0.0, max(abs(free.objective), 1e-12) / memory_budget, None
    for _ in range(PRICE_ROUNDS):
        best = priced(high)
        if fits(best):
            break
        low, high = high, 2 * high
    else:
        return None
    for _ in range(PRICE_REFINEMENTS):
        middle = (low + high) / 2
        found = priced(middle)
        if fits(found):
            high = middle
            best = min(best, found, key=lambda s: s.objective)
        else:
            low = middle
    return best


def _solve_rows(graph: CostGraph, memory_budget: float | None, solver: str, time_limit: float | None,
                presolve: bool, mip_gap: float, *, tie_repeated: bool) -> Solution:
    """:func:`solve` with every memory row of ``graph`` in the ILP."""
    start = time.perf_counter()
    solver = solver.upper()  # CVXPY's solver names are upper case
    if not 0 <= mip_gap < 1:
        raise IlpError(f"mip_gap must be in [0, 1); got {mip_gap}")
    solver_opts = solver_options(solver, time_limit) | ({"mip_rel_gap": mip_gap} if solver == "HIGHS" else {})
    validate(graph, memory_budget)
    r = _reduced(graph, memory_budget, tie_repeated=tie_repeated)
    nodes = sorted(r.costs)
    if not nodes:
        solved, n_con = Solved({}, 0.0, 0, "trivial", "elimination"), 0
        build_seconds, solve_seconds = time.perf_counter() - start, 0.0
    else:
        model = build_ilp(nodes, r.costs, r.edges, r.memory, memory_budget, graph)
        n_con, build_seconds = model.num_constraints, time.perf_counter() - start
        tic = time.perf_counter()
        settings = SolverSettings(solver, solver_opts, presolve, mip_gap, r.constant,
                                  time_limit_for(time_limit, r.memory is not None, solver))
        solved = _run_ilp(model, r, nodes, settings, memory_budget)
        solve_seconds = time.perf_counter() - tic
    picks, value = dict(solved.picks), solved.objective + r.constant
    if r.untied is not None:
        full_costs, full_edges, classes = r.untied
        picks = {v: picks[c] for v, c in classes.items()}
        if r.memory is None:  # the search does not see memory rows
            picks = local_search(full_costs, full_edges, picks)
        value = reduced_objective(full_costs, full_edges, picks) + r.constant
    for v, neighbours, table in reversed(r.records):
        picks[v] = int(table[tuple(picks[u] for u in neighbours)])
    choices = tuple(int(r.maps[v][picks[int(r.leader[v])]]) for v in range(len(graph.node_costs)))
    total = objective(graph, choices)
    if not math.isfinite(total):
        raise InfeasibleError("no sharding plan avoids the forbidden (inf) strategies and resharding pairs: "
                              "each combination of allowed strategies meets a forbidden pair; relax a pinned sharding")
    stats = SolverStats(len(graph.node_costs), len(nodes), len(r.edges), solved.num_variables, n_con, build_seconds,
                        solve_seconds, solver, solved.status, solved.method, value)
    return Solution(choices, total, stats)


class _Reduced(NamedTuple):
    """What the exact reductions leave of a graph for the ILP, and how to undo them."""

    costs: dict[int, np.ndarray]  # per remaining node
    edges: dict  # (a, b) -> its resharding matrix
    memory: tuple | None  # (live incidence, leader or tied class per node, strategy maps) under a budget
    leader: np.ndarray  # per node: the node it follows (itself if none)
    maps: list  # per node: its strategy per strategy of its leader
    records: list  # eliminations, undone in reverse: (node, neighbours, best strategy per their picks)
    constant: float  # the objective folded away
    untied: tuple | None  # with tie_repeated: (costs, edges, classes) before tying


def _reduced(graph: CostGraph, memory_budget: float | None, *, tie_repeated: bool) -> _Reduced:
    leader, maps = resolve_followers(graph)
    costs, edges = fold_followers(graph, leader, maps)
    memory = None
    if memory_budget is not None and graph.live_sets:
        memory = live_incidence(graph), leader, maps
        # The memory rows couple every node live at their program points, so such a
        # node's cheapest strategy for its neighbours may break the budget: they are kept
        # (and nothing is pruned); the nodes no row counts are eliminated as without one.
        counted = counted_nodes(graph) | {v for term in graph.edge_memory for v in (term.src, term.dst)}
        records, constant = eliminate(costs, edges, keep=frozenset(int(leader[v]) for v in counted))
    else:
        records, constant = eliminate(costs, edges)
        prune_dominated(costs, edges)
    untied = None
    if tie_repeated and costs:
        classes = repeated_classes(costs, edges)
        untied = costs, edges, classes
        costs, edges = tie(costs, edges, classes)
        if memory is not None:
            memory = memory[0], np.array([classes.get(int(u), -1) for u in leader]), maps
    edges = fold_one_sided(costs, edges)
    return _Reduced(costs, edges, memory, leader, maps, records, constant, untied)


def _run_ilp(model: IlpModel, r: _Reduced, nodes: list[int], settings: SolverSettings,
             memory_budget: float | None) -> Solved:
    """``model`` (what the reductions ``r`` left: ``nodes``) solved by ``run_solver``."""

    def rounded(x: np.ndarray) -> dict[int, int]:
        return rounded_picks(x, model.s_id, nodes)

    def near_lp(x: np.ndarray) -> tuple[dict[int, int], float] | None:
        # The LP optimum rounded, its fractional nodes solved again with the others
        # fixed, then improved by local search (which does not see memory rows). Under a
        # budget, a dive: the LP solved again with more nodes fixed until it is integral.
        picks, loose = rounded(x), fractional(x, model.s_id, nodes)
        if r.memory is None:
            picks.update(solve_fractional(r.costs, r.edges, picks, loose, settings.solver, settings.opts))
            found = local_search(r.costs, r.edges, picks)
            return found, reduced_objective(r.costs, r.edges, found)
        return dive(model.make, x, model.s_id, nodes, settings.solver, settings.opts)

    return run_solver(model.make, settings, memory_budget, model.need, rounded, near_lp)
