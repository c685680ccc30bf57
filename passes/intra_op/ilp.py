"""The intra-operator auto-sharding ILP (Sec. 4.2, Eq. 1), independent of MLIR.

A ``CostGraph`` (``ilp_graph.py``) has one node per op with ``k_v`` candidate parallel
algorithms (cost ``c_v + d_v``), resharding-cost matrices ``R_vu`` on its edges,
optional followers (trivial ops merged into an operand, Sec. 4.2) and optional
per-program-point memory. :func:`solve` picks one algorithm per node minimising

    sum_v s_v^T (c_v + d_v) + sum_(v,u) s_v^T R_vu s_u                      (Eq. 1)

in two steps: the exact reductions of ``ilp_graph.py`` (followers folded onto their
leaders; without a memory budget, degree-0/1/2 nodes eliminated and dominated
strategies pruned; one-sided edges folded into node costs; optionally, repeated layers
tied to one choice, ``ilp_tying.py``), then what remains is linearised and handed to a
CVXPY MILP solver (HiGHS by default). With HiGHS the LP relaxation is solved first:
when its optimum is integral, it is the MILP's optimum too; when it is fractional, its
fractional nodes are solved again with the others fixed, and a plan the LP's bound
proves within the mip gap is taken without branch and bound. ``np.inf`` marks a
forbidden strategy or resharding pair.
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
from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from cvxpy.reductions.solvers.defines import MI_SOLVERS

from ...plans.plan_summary import byte_text
from .ilp_graph import (
    CostGraph,
    Edges,
    IlpError,
    InfeasibleError,
    eliminate,
    fold_followers,
    fold_one_sided,
    local_search,
    objective,
    prune_dominated,
    reduced_objective,
    resolve_followers,
    validate,
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
        memory = _live_incidence(graph), leader, maps
        # Elimination is skipped: the memory rows couple every node live at a program
        # point, so a node's cheapest strategy for its neighbours may break the budget.
        records, constant = [], 0.0
    else:
        records, constant = eliminate(costs, edges)
        prune_dominated(costs, edges)
    untied = None
    if tie_repeated and costs:
        classes = repeated_classes(costs, edges)
        untied = costs, edges, classes
        costs, edges = tie(costs, edges, classes)
        if memory is not None:
            memory = memory[0], np.array([classes[int(u)] for u in leader]), maps
    edges = fold_one_sided(costs, edges)
    nodes = sorted(costs)
    picks: dict[int, int] = {}
    if not nodes:
        solve_seconds, n_var, n_con, status, method, value = 0.0, 0, 0, "trivial", "elimination", constant
        build_seconds = time.perf_counter() - start
    else:
        make, s_id, n_con, need = _build_ilp(nodes, costs, edges, memory, memory_budget, graph)
        build_seconds = time.perf_counter() - start

        def rounded(x: np.ndarray) -> dict[int, int]:
            return _rounded(x, s_id, nodes)

        def near_lp(x: np.ndarray, bound: float) -> tuple[dict[int, int], float] | None:
            # The LP optimum rounded, its fractional nodes solved again with the others
            # fixed, then improved by local search; kept when the LP bound proves it within
            # mip_gap of the optimum. (The search does not see memory rows, so not with a budget.)
            picks = rounded(x)
            picks.update(_solve_fractional(costs, edges, picks, _fractional(x, s_id, nodes), solver, solver_opts))
            found = local_search(costs, edges, picks)
            value = reduced_objective(costs, edges, found)
            return (found, value) if value - bound <= mip_gap * abs(value + constant) else None

        tic = time.perf_counter()
        picks, value, n_var, status, method = _run_solver(
            make, solver, solver_opts, memory_budget, need, presolve, rounded,
            None if memory is not None else near_lp)
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
            make, s_id, _, _ = _build_ilp(rest, sub_costs, sub_edges, None, None, None)
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


def _live_incidence(graph: CostGraph) -> sp.csr_matrix:
    rows = np.repeat(np.arange(len(graph.live_sets)), [len(set(live)) for live in graph.live_sets])
    cols = np.fromiter((v for live in graph.live_sets for v in sorted(set(live))), dtype=np.int64)
    return sp.csr_matrix((np.ones(len(cols)), (rows, cols)), shape=(len(graph.live_sets), len(graph.node_costs)))


def _build_ilp(nodes: list[int], costs: dict[int, np.ndarray], edges: Edges, memory: tuple | None,
               memory_budget: float | None, graph: CostGraph | None) -> tuple[Callable, np.ndarray, int, Any]:
    """Eq. 1 linearised, as a few sparse matrices over s (node strategies) and e (edge strategy pairs).

    Returns ``make(integer)``, which builds the CVXPY problem and its s: the MILP, or
    with ``integer=False`` its LP relaxation (0 <= s <= 1).
    Forbidden (inf) strategies and pairs get no variable, so inf never reaches the objective.
    Also returns the memory lower bound per program point (None without a budget): the sum
    over its live results of their smallest footprint under a strategy their leader may pick.
    """
    pos = {v: i for i, v in enumerate(nodes)}
    k_max = max(len(costs[v]) for v in nodes)
    cost = np.full((len(nodes), k_max), np.inf)
    for i, v in enumerate(nodes):
        cost[i, :len(costs[v])] = costs[v]
    allowed = np.isfinite(cost)
    if not allowed.any(axis=1).all():
        v = nodes[int(np.argmin(allowed.any(axis=1)))]
        raise InfeasibleError(f"no sharding plan avoids the forbidden (inf) costs: every strategy of node {v} "
                              "meets a forbidden resharding pair with its neighbours")
    s_id = np.full(cost.shape, -1)
    s_id[allowed] = np.arange(allowed.sum())
    n_s, n_nodes = int(allowed.sum()), len(nodes)
    one_hot = sp.csr_matrix((np.ones(n_s), (np.nonzero(allowed)[0], s_id[allowed])), shape=(n_nodes, n_s))
    # Marginals: sum_j e_ij = s_vi and sum_i e_ij = s_uj. Once s is one-hot (v picks a,
    # u picks b) every row i != a and column j != b of e sums to 0, so e >= 0 is zero
    # there, and row a forces e_ab = 1: e is the outer product s_v s_u^T without being
    # declared integer, which keeps HiGHS's branch-and-bound on the s variables only.
    # Strategies of v whose rows of R_vu are equal cost the same whatever u picks (and
    # likewise for columns), so e is defined over classes of equal rows x classes of
    # equal columns, with class sums of s as marginals: still exact, and far smaller,
    # since many algorithms of an op give or need the same sharding of one value.
    e_rows, e_cols, s_rows, s_cols, e_cost = [], [], [], [], []
    n_e = n_marg = 0
    for (a, b), r in edges.items():
        ia, ib = pos[a], pos[b]
        ok_a, ok_b = allowed[ia, :r.shape[0]], allowed[ib, :r.shape[1]]
        sub = r[np.ix_(ok_a, ok_b)]
        row_first, row_class = _equal_rows(sub.dtype.str, sub.shape, sub.tobytes())
        col_first, col_class = _equal_rows(sub.dtype.str, sub.shape[::-1], sub.T.tobytes())
        classes = sub[np.ix_(row_first, col_first)]
        ii, jj = np.nonzero(np.isfinite(classes))
        n_a, n_b = len(row_first), len(col_first)
        ids = n_e + np.arange(len(ii))
        e_rows += [n_marg + ii, n_marg + n_a + jj]
        e_cols += [ids, ids]
        s_rows += [n_marg + row_class, n_marg + n_a + col_class]
        s_cols += [s_id[ia, :len(ok_a)][ok_a], s_id[ib, :len(ok_b)][ok_b]]
        e_cost.append(classes[ii, jj])
        n_e, n_marg = n_e + len(ii), n_marg + n_a + n_b
    if n_e:
        marg_e = sp.csr_matrix((np.ones(2 * n_e), (np.concatenate(e_rows), np.concatenate(e_cols))),
                               shape=(n_marg, n_e))
        marg_s = sp.csr_matrix((np.ones(sum(len(c) for c in s_cols)), (np.concatenate(s_rows),
                                np.concatenate(s_cols))), shape=(n_marg, n_s))
        e_cost = np.concatenate(e_cost)
    n_rows = n_nodes + n_marg
    need = memory_rows = None
    if memory is not None:
        live, leader, maps = memory
        # A live follower v contributes memory_v[map_v[i]] when its leader picks i (Sec. 4.2 merging).
        w_rows, w_cols, w_vals = [], [], []
        for v in range(len(graph.node_costs)):
            i = pos[int(leader[v])]
            ok = allowed[i, :len(maps[v])]
            w_rows.append(np.full(int(ok.sum()), v))
            w_cols.append(s_id[i, :len(maps[v])][ok])
            w_vals.append(np.asarray(graph.node_memory[v], dtype=float)[maps[v]][ok])
        w = sp.csr_matrix((np.concatenate(w_vals), (np.concatenate(w_rows), np.concatenate(w_cols))),
                          shape=(len(graph.node_costs), n_s))
        smallest = np.array([vals.min() for vals in w_vals])
        need = live @ smallest
        if need.max() > memory_budget:
            raise InfeasibleError(_memory_message(memory_budget, need))
        memory_rows = live @ w
        n_rows += live.shape[0]

    def make(integer: bool) -> tuple[cp.Problem, cp.Variable]:
        s = cp.Variable(n_s, boolean=True) if integer else cp.Variable(n_s, bounds=[0, 1])
        obj = cost[allowed] @ s
        constraints = [one_hot @ s == 1]
        if n_e:
            e = cp.Variable(n_e, nonneg=True)
            obj = obj + e_cost @ e
            constraints.append(marg_e @ e == marg_s @ s)
        if memory_rows is not None:
            constraints.append(memory_rows @ s <= memory_budget)
        return cp.Problem(cp.Minimize(obj), constraints), s

    return make, s_id, n_rows, need


@functools.lru_cache(maxsize=2048)
def _equal_rows(dtype: str, shape: tuple[int, int], data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """The classes of equal rows of a matrix (given by its dtype, shape and C-order bytes):
    each class's first row and each row's class, numbered as ``np.unique`` sorts them.
    By content, because the stage search meets the same few resharding matrices in every
    candidate (4-layer GPT-2: 15.5k edges, 1.5k distinct matrices, 1.5 MB in all; at most
    2048 are kept, 2048 k_a k_b 8 bytes: 40 MB for 50 strategies a side)."""
    matrix = np.frombuffer(data, dtype=np.dtype(dtype)).reshape(shape)
    first, inverse = np.unique(matrix, axis=0, return_index=True, return_inverse=True)[1:]
    inverse = inverse.ravel()
    first.flags.writeable = inverse.flags.writeable = False
    return first, inverse


def _run_solver(make: Callable, solver: str, opts: dict, memory_budget: float | None, need: np.ndarray | None,
                presolve: bool, rounded: Callable[[np.ndarray], dict[int, int]],
                near_lp: Callable[[np.ndarray, float], tuple[dict[int, int], float] | None] | None,
                ) -> tuple[dict[int, int], float, int, str, str]:
    """The strategy picked per node, the solver's objective, the number of variables, the
    status ("optimal" | "feasible") and the method ("lp-relaxation" | "lp-local-search" |
    "milp"). ``rounded``: picks from a solution vector; ``near_lp``: picks from a
    fractional LP optimum and its bound, if they are close enough to optimal."""
    # The marginal linearisation is tight on these graphs: the LP relaxation mostly has
    # an integral optimum, which is then optimal for the MILP too (its bound is the
    # MILP's). HiGHS's simplex solves that LP without presolve several times faster than
    # its MIP run (GPT-3 1.3B, 24 layers, (2, 4): 6 s against 42 s). Otherwise, or if the
    # LP stops at the time limit, the MILP runs as usual. Presolve is off unless asked
    # for: on that LP it costs time (9.6 against 16.1 s), while with the copy nodes of
    # share-reshardings it saves more (86.8 against 29.9 s; measured 2026-11-26).
    # Where the LP optimum is fractional, a local search from its rounding mostly lands
    # within the LP's own gap of the MILP optimum (GPT-2 stages on (2, 4): 0.3-0.5% above
    # the LP bound, the MILP's optimum to 1e-6, in 3 ms against 1-5 s of branch and bound).
    if solver == "HIGHS":
        start = time.perf_counter()
        problem, s = make(integer=False)
        _solve(problem, solver, dict(opts, presolve="on" if presolve else "off"))
        if problem.status == cp.OPTIMAL:
            x = np.asarray(s.value, dtype=float).ravel()
            if np.abs(x - np.round(x)).max() < INTEGRALITY_TOLERANCE:
                return rounded(x), float(problem.value), _num_variables(problem), "optimal", "lp-relaxation"
            if near_lp is not None and (found := near_lp(x, float(problem.value))) is not None:
                return *found, _num_variables(problem), "optimal", "lp-local-search"
        if "time_limit" in opts:  # the limit is for both solves together
            opts = dict(opts, time_limit=max(opts["time_limit"] - (time.perf_counter() - start), 0.0))
    problem, s = make(integer=True)
    _solve(problem, solver, opts)
    status = problem.status
    if status == cp.OPTIMAL:
        return rounded(np.asarray(s.value, dtype=float).ravel()), float(problem.value), _num_variables(problem), \
            "optimal", "milp"
    if status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE, "infeasible_or_unbounded"):
        if need is not None:
            raise InfeasibleError(_memory_message(memory_budget, need) +
                                  " (or the forbidden (inf) strategies rule out every plan within it)")
        raise InfeasibleError("no sharding plan avoids the forbidden (inf) strategies and resharding pairs")
    extra = problem.solver_stats.extra_stats
    has_incumbent = s.value is not None and np.isfinite(s.value).all() and \
        getattr(extra, "primal_solution_status", 2) == 2  # HiGHS: 2 = feasible solution kept
    if status in (cp.USER_LIMIT, cp.OPTIMAL_INACCURATE) and has_incumbent:
        return rounded(np.asarray(s.value, dtype=float).ravel()), float(problem.value), _num_variables(problem), \
            "feasible", "milp"
    raise IlpError(f"solver {solver} stopped with status {status!r} before finding a plan; "
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


def _memory_message(budget: float, need: np.ndarray) -> str:
    point = int(np.argmax(need))
    return (f"no sharding plan fits the memory budget of {byte_text(budget)} per device: program point "
            f"{point} needs at least {byte_text(float(need[point]))} (lower bound: its live results with their "
            "smallest strategies); raise the budget or use more devices")


