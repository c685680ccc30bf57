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
(``ilp_model.py``) and handed to a CVXPY MILP solver (HiGHS by default). With HiGHS
the LP relaxation is solved first: when its optimum is integral, it is the MILP's
optimum too; when it is fractional, its fractional nodes are solved again with the
others fixed (under a memory budget: a dive), and a plan the LP's bound proves within
the mip gap is taken without branch and bound. A memory budget's rows join the ILP as
plans break them (:func:`solve`). ``np.inf`` marks a forbidden strategy or resharding
pair.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace

import cvxpy as cp
import numpy as np
from cvxpy.reductions.solvers.defines import MI_SOLVERS

from ...plans.plan_summary import byte_text
from .ilp_graph import (
    BudgetError,
    CostGraph,
    Edge,
    Edges,
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
from .ilp_model import build_ilp, live_incidence, memory_message
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


# How each MILP solver's CVXPY interface takes a wall-clock limit in seconds.
_TIME_LIMIT_OPTIONS: dict[str, Callable[[float], dict]] = {
    "HIGHS": lambda t: {"time_limit": t},
    "SCIPY": lambda t: {"scipy_options": {"time_limit": t}},
    "GUROBI": lambda t: {"TimeLimit": t},
    "CBC": lambda t: {"maximumSeconds": t},
    "SCIP": lambda t: {"scip_params": {"limits/time": t}},
}

# A relaxed s within this of 0 or 1 everywhere is taken as integral (HiGHS's own
# default for integer feasibility is 1e-6).
INTEGRALITY_TOLERANCE = 1e-6
# HiGHS's default relative MIP gap (its option mip_rel_gap).
HIGHS_MIP_GAP = 1e-4
# Seconds of branch and bound under a memory budget when no time limit is given. Where
# the LP relaxation is fractional, the plan from its rounding (fractional nodes solved
# with the rest fixed) is kept unless the MILP beats it in that time: on GPT-3 1.3B on
# (8,) with a 14.9 GiB budget, HiGHS's branch and bound ran 7 minutes and failed.
BUDGET_TIME_LIMIT = 30.0
# Memory rows added per round (the most broken), and rounds before giving up.
ROWS_PER_ROUND = 16
MAX_ROW_ROUNDS = 12
# Plans solved with memory priced in (see _memory_priced): prices doubled until one fits,
# then halved towards the cheapest that fits.
PRICE_ROUNDS = 12
PRICE_REFINEMENTS = 6


class SolverLimitError(IlpError):
    """The solver stopped at its time limit before it found any plan."""

def solve(graph: CostGraph, memory_budget: float | None = None, solver: str = "HIGHS",
          time_limit: float | None = None, presolve: bool = False, mip_gap: float = HIGHS_MIP_GAP,
          tie_repeated: bool = False) -> Solution:
    """The strategy per node minimising Eq. 1 (followers included) within ``memory_budget`` bytes per device.

    ``presolve``: HiGHS presolves the LP relaxation (see ``_run_solver``). ``mip_gap``
    (HiGHS): the plan's Eq. 1 may exceed the optimum by this fraction of itself, as
    HiGHS's ``mip_rel_gap`` means it; a local optimum near the LP relaxation's optimum
    that the relaxation's bound proves that close is taken without branch and bound.
    ``tie_repeated``: nodes whose neighbourhoods look alike (repeated layers) share one
    choice (``ilp_tying.py``), and the tied optimum is then improved one node at a time
    on the untied graph (without a budget); optimal for the tied graph, an upper bound
    for the untied one."""
    options = {"solver": solver, "time_limit": time_limit, "presolve": presolve, "mip_gap": mip_gap,
               "tie_repeated": tie_repeated}
    if memory_budget is None or not graph.live_sets:
        return _solve_rows(graph, None, **options)
    # Memory rows are added as plans break them (lazy constraints): the plan without a
    # budget first, which mostly fits; then the rows it breaks, and those the next plan
    # breaks. A training step has thousands of rows, mostly far from the peak, and the LP
    # with all of them is many times slower (GPT-3 350M width, 4 layers: 30 s against 1 s).
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
    rows make the simplex slow). ``None`` if no price fits."""
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
                presolve: bool, mip_gap: float, tie_repeated: bool) -> Solution:
    """:func:`solve` with every memory row of ``graph`` in the ILP."""
    start = time.perf_counter()
    solver = solver.upper()  # CVXPY's solver names are upper case
    if not 0 <= mip_gap < 1:
        raise IlpError(f"mip_gap must be in [0, 1); got {mip_gap}")
    solver_opts = _solver_options(solver, time_limit) | ({"mip_rel_gap": mip_gap} if solver == "HIGHS" else {})
    validate(graph, memory_budget)
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
    nodes = sorted(costs)
    picks: dict[int, int] = {}
    if not nodes:
        solve_seconds, n_var, n_con, status, method, value = 0.0, 0, 0, "trivial", "elimination", constant
        build_seconds = time.perf_counter() - start
    else:
        make, s_id, n_con, need = build_ilp(nodes, costs, edges, memory, memory_budget, graph)
        build_seconds = time.perf_counter() - start

        def rounded(x: np.ndarray) -> dict[int, int]:
            return _rounded(x, s_id, nodes)

        def near_lp(x: np.ndarray) -> tuple[dict[int, int], float] | None:
            # The LP optimum rounded, its fractional nodes solved again with the others
            # fixed, then improved by local search (which does not see memory rows). Under a
            # budget, a dive: the LP solved again with more nodes fixed until it is integral.
            picks, loose = rounded(x), _fractional(x, s_id, nodes)
            if memory is None:
                picks.update(_solve_fractional(costs, edges, picks, loose, solver, solver_opts))
                found = local_search(costs, edges, picks)
                return found, reduced_objective(costs, edges, found)
            return _dive(make, x, s_id, nodes, solver, solver_opts)

        tic = time.perf_counter()
        picks, value, n_var, status, method = _run_solver(
            make, _SolverSettings(solver, solver_opts, presolve, mip_gap, constant,
                                  _time_limit(time_limit, memory is not None, solver)),
            memory_budget, need, rounded, near_lp)
        solve_seconds = time.perf_counter() - tic
        value += constant
    if untied is not None:
        full_costs, full_edges, classes = untied
        picks = {v: picks[c] for v, c in classes.items()}
        if memory is None:  # the search does not see memory rows
            picks = local_search(full_costs, full_edges, picks)
        value = reduced_objective(full_costs, full_edges, picks) + constant
    for v, neighbours, table in reversed(records):
        picks[v] = int(table[tuple(picks[u] for u in neighbours)])
    choices = tuple(int(maps[v][picks[int(leader[v])]]) for v in range(len(graph.node_costs)))
    total = objective(graph, choices)
    if not math.isfinite(total):
        raise InfeasibleError("no sharding plan avoids the forbidden (inf) strategies and resharding pairs: "
                              "each combination of allowed strategies meets a forbidden pair; relax a pinned sharding")
    stats = SolverStats(len(graph.node_costs), len(nodes), len(edges), n_var, n_con, build_seconds,
                        solve_seconds, solver, status, method, value)
    return Solution(choices, total, stats)


def _dive(make: Callable, x: np.ndarray, s_id: np.ndarray, nodes: list[int], solver: str,
          opts: dict) -> tuple[dict[int, int], float] | None:
    """A plan near the fractional LP optimum ``x`` that keeps the memory rows: its integral
    nodes and its most decided fractional node are fixed, and the LP is solved again,
    until it is integral. Where that leaves the LP infeasible, the integral nodes are left
    free, then the node's next strategy is tried. ``None`` when no strategy of some node
    leaves the LP feasible."""
    position = {v: i for i, v in enumerate(nodes)}
    fixed: dict[int, int] = {}
    value = math.nan
    while True:
        weights = np.where(s_id >= 0, x[np.maximum(s_id, 0)], -np.inf)
        free = [v for v in nodes if v not in fixed]
        loose = [v for v in free if weights[position[v]].max() < 1 - INTEGRALITY_TOLERANCE]
        if not loose:
            return _rounded(x, s_id, nodes), value
        settled = {v: int(np.argmax(weights[position[v]])) for v in free if v not in loose}
        pick = max(loose, key=lambda v: weights[position[v]].max())
        found = None
        for choice in np.argsort(-weights[position[pick]]):
            if found is not None or not np.isfinite(weights[position[pick], choice]):
                break
            for kept in (settled, {}):
                trial = fixed | kept | {pick: int(choice)}
                problem, s = make(integer=False, fixed=np.array([s_id[position[v], c] for v, c in trial.items()]))
                try:
                    _solve(problem, solver, dict(opts, presolve="on"))
                except IlpError:  # HiGHS's presolve finds some fixings infeasible and stops with an error
                    continue
                if problem.status == cp.OPTIMAL:
                    found = trial, np.asarray(s.value, dtype=float).ravel(), float(problem.value)
                    break
        if found is None:
            return None
        fixed, x, value = found


def _rounded(x: np.ndarray, s_id: np.ndarray, nodes: list[int]) -> dict[int, int]:
    """Each node's strategy of largest value in ``x``. One-hot rows make argmax robust to
    solver tolerances (values like 0.9999999); on a fractional row it is the heaviest."""
    best = np.argmax(np.where(s_id >= 0, x[np.maximum(s_id, 0)], -np.inf), axis=1)
    return {v: int(b) for v, b in zip(nodes, best)}


def _fractional(x: np.ndarray, s_id: np.ndarray, nodes: list[int]) -> set[int]:
    """The nodes whose row of ``x`` is not one-hot."""
    top = np.where(s_id >= 0, x[np.maximum(s_id, 0)], -np.inf).max(axis=1)
    return {v for v, t in zip(nodes, top) if t < 1 - INTEGRALITY_TOLERANCE}


def _solve_fractional(costs: dict[int, np.ndarray], edges: Edges, picks: dict[int, int], loose: set[int],
                      solver: str, opts: dict) -> dict[int, int]:
    """The MILP's optimum over the nodes ``loose`` with every other node fixed at ``picks``
    (empty when there is nothing to fix, or no such optimum). Where the LP relaxation is
    fractional, it mostly is on a few nodes: fixed, the rest of the graph falls apart into
    pieces that elimination solves, and what is left is a small MILP. (GPT-3 6.7B on
    (2, 4): 0.09% above the LP bound after rounding and local search, which sent it to a
    28 s MILP; fixing and solving its fractional nodes lands within the mip gap.)"""
    if not loose or len(loose) == len(costs):
        return {}
    sub_costs = {v: costs[v] for v in loose}
    sub_edges: Edges = {}
    for (a, b), r in edges.items():
        if a in loose and b in loose:
            sub_edges[(a, b)] = r
        elif a in loose:
            sub_costs[a] = sub_costs[a] + r[:, picks[b]]
        elif b in loose:
            sub_costs[b] = sub_costs[b] + r[picks[a], :]
    records, _ = eliminate(sub_costs, sub_edges)
    sub_edges = fold_one_sided(sub_costs, sub_edges)
    rest = sorted(sub_costs)
    found: dict[int, int] = {}
    if rest:
        try:
            make, s_id, _, _ = build_ilp(rest, sub_costs, sub_edges, None, None, None)
        except IlpError:
            return {}
        problem, s = make(integer=True)
        _solve(problem, solver, opts)
        if problem.status != cp.OPTIMAL:
            return {}
        found = _rounded(np.asarray(s.value, dtype=float).ravel(), s_id, rest)
    for v, neighbours, table in reversed(records):
        found[v] = int(table[tuple(found[u] for u in neighbours)])
    return found


@functools.cache
def _milp_solvers() -> tuple[str, ...]:
    # CVXPY probes every solver package on each call (a stage search plans hundreds of stages).
    return tuple(name for name in cp.installed_solvers() if name in MI_SOLVERS)


def _solver_options(solver: str, time_limit: float | None) -> dict:
    milp = _milp_solvers()
    if solver not in milp:
        raise IlpError(f"solver {solver!r} is not an installed CVXPY MILP solver; installed ones: {', '.join(milp)}")
    if time_limit is None:
        return {}
    if solver not in _TIME_LIMIT_OPTIONS:
        raise IlpError(f"time_limit is not supported with solver {solver!r}; use one of "
                       f"{', '.join(_TIME_LIMIT_OPTIONS)} or time_limit=None")
    return _TIME_LIMIT_OPTIONS[solver](float(time_limit))


@dataclass(frozen=True)
class _SolverSettings:
    solver: str
    opts: dict  # the solver's options (mip gap and time limit included)
    presolve: bool  # HiGHS presolves the LP relaxation
    mip_gap: float
    constant: float  # the objective's part folded away by the reductions (for the relative gap)
    time_limit: float | None


def _time_limit(asked: float | None, budget: bool, solver: str) -> float | None:
    """The MILP's time limit: the one asked for; under a memory budget without one,
    BUDGET_TIME_LIMIT (its rows make branch and bound slow, and a plan from the LP is kept)."""
    if asked is not None or not budget or solver not in _TIME_LIMIT_OPTIONS:
        return asked
    return BUDGET_TIME_LIMIT


def _run_solver(make: Callable, settings: _SolverSettings, memory_budget: float | None, need: np.ndarray | None,
                rounded: Callable[[np.ndarray], dict[int, int]],
                near_lp: Callable[[np.ndarray], tuple[dict[int, int], float] | None],
                ) -> tuple[dict[int, int], float, int, str, str]:
    """The strategy picked per node, the solver's objective, the number of variables, the
    status ("optimal" | "feasible") and the method ("lp-relaxation" | "lp-local-search" |
    "milp"). ``rounded``: picks from a solution vector; ``near_lp``: picks and their
    objective from a fractional LP optimum (``None`` if it finds none)."""
    # The marginal linearisation is tight on these graphs: the LP relaxation mostly has
    # an integral optimum, which is then optimal for the MILP too (its bound is the
    # MILP's). HiGHS's simplex solves that LP without presolve several times faster than
    # its MIP run. Otherwise, or if the LP stops at the time limit, the MILP runs as usual.
    # Presolve is off unless asked for: on that LP it costs time, while with the copy
    # nodes of share-reshardings it saves more (docs/auto_sharding.md has the figures).
    # Where the LP optimum is fractional, the plan near it is kept when the LP's bound
    # proves it within the mip gap; else it is the incumbent the MILP must beat, and the
    # plan if the MILP stops at its time limit without a better one.
    solver, opts, incumbent = settings.solver, dict(settings.opts), None
    if settings.time_limit is not None:
        opts.update(_TIME_LIMIT_OPTIONS[solver](float(settings.time_limit)))
    start = time.perf_counter()
    if solver == "HIGHS":
        problem, s = make(integer=False)
        _solve(problem, solver, dict(opts, presolve="on" if settings.presolve else "off"))
        if problem.status == cp.OPTIMAL:
            x = np.asarray(s.value, dtype=float).ravel()
            if np.abs(x - np.round(x)).max() < INTEGRALITY_TOLERANCE:
                return rounded(x), float(problem.value), _num_variables(problem), "optimal", "lp-relaxation"
            bound, incumbent = float(problem.value), near_lp(x)
            if incumbent is not None and incumbent[1] - bound <= settings.mip_gap * abs(
                    incumbent[1] + settings.constant):
                return *incumbent, _num_variables(problem), "optimal", "lp-local-search"
        if settings.time_limit is not None:  # the limit is for all solves together
            opts.update(_TIME_LIMIT_OPTIONS[solver](max(settings.time_limit - (time.perf_counter() - start), 0.0)))
    problem, s = make(integer=True)
    try:
        _solve(problem, solver, opts)
    except IlpError:
        if incumbent is None:
            raise
        return *incumbent, _num_variables(problem), "feasible", "lp-local-search"
    status = problem.status
    if status == cp.OPTIMAL:
        return rounded(np.asarray(s.value, dtype=float).ravel()), float(problem.value), _num_variables(problem), \
            "optimal", "milp"
    if status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE, "infeasible_or_unbounded"):
        if need is not None:
            raise BudgetError(memory_message(memory_budget, need) +
                                  " (or the forbidden (inf) strategies rule out every plan within it)")
        raise InfeasibleError("no sharding plan avoids the forbidden (inf) strategies and resharding pairs")
    extra = problem.solver_stats.extra_stats
    has_incumbent = s.value is not None and np.isfinite(s.value).all() and \
        getattr(extra, "primal_solution_status", 2) == 2  # HiGHS: 2 = feasible solution kept
    if status in (cp.USER_LIMIT, cp.OPTIMAL_INACCURATE) and has_incumbent and (
            incumbent is None or float(problem.value) < incumbent[1]):
        return rounded(np.asarray(s.value, dtype=float).ravel()), float(problem.value), _num_variables(problem), \
            "feasible", "milp"
    if incumbent is not None:
        return *incumbent, _num_variables(problem), "feasible", "lp-local-search"
    raise SolverLimitError(f"solver {solver} stopped with status {status!r} before finding a plan; "
                           "raise time_limit or try another solver")


def _num_variables(problem: cp.Problem) -> int:
    return sum(v.size for v in problem.variables())


# The solver's own log: on stderr when this logger is enabled for DEBUG (``alpa-opt
# --solver-log``, or the application's logging configuration), otherwise nowhere.
SOLVER_LOG = logging.getLogger("alpa_mlir.solver")


@contextlib.contextmanager
def _native_output(shown: bool):
    """Native solvers print on file descriptor 1 whatever their verbosity (HiGHS's
    banner, "Running HiGHS ...", at every construction); a tool's stdout must carry
    only its result, so that output goes to stderr when shown and is dropped otherwise."""
    sys.stdout.flush()
    saved = os.dup(1)
    target = os.dup(2) if shown else os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(target, 1)
        yield
    finally:
        sys.stdout.flush()  # CVXPY's verbose lines, printed through sys.stdout
        os.dup2(saved, 1)
        os.close(saved)
        os.close(target)


def _solve(problem: cp.Problem, solver: str, opts: dict) -> None:
    try:
        shown = SOLVER_LOG.isEnabledFor(logging.DEBUG)
        with _native_output(shown), warnings.catch_warnings():  # "may be inaccurate" after a time limit: "feasible"
            warnings.simplefilter("ignore", UserWarning)
            # The SciPy canonicalisation backend compiles these large, very sparse
            # constraints ~2x faster than CVXPY's default backend.
            problem.solve(solver=solver, canon_backend=cp.SCIPY_CANON_BACKEND, verbose=shown, **opts)
    except cp.error.SolverError as err:
        raise IlpError(f"solver {solver} failed: {err}") from err
