"""One run of a CVXPY MILP solver on the linearised Eq. 1 (``ilp_model.py``).

HiGHS solves the LP relaxation first: when its optimum is integral, it is the MILP's
optimum too; when it is fractional, the plan near it (its fractional nodes solved again
with the others fixed, or under a memory budget a dive) is taken where the LP's bound
proves it within the mip gap, and is otherwise the incumbent the MILP must beat. Also:
each solver's time-limit option, and the solver's native output kept off stdout.
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
from typing import TYPE_CHECKING, Literal, NamedTuple

import numpy as np

from .ilp_graph import BudgetError, Edges, IlpError, InfeasibleError, eliminate, fold_one_sided
from .ilp_model import build_ilp, memory_message

if TYPE_CHECKING:
    import cvxpy as cp

# CVXPY is imported where a problem is solved, not with the module: it is most of a
# pass tool's start-up (0.6-0.8 s of alpa-opt's 2.9 s), and most alpa-opt runs solve none.

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


class SolverLimitError(IlpError):
    """The solver stopped at its time limit before it found any plan."""


def dive(make: Callable, x: np.ndarray, s_id: np.ndarray, nodes: list[int], solver: str,
         opts: dict) -> tuple[dict[int, int], float] | None:
    """A plan near the fractional LP optimum ``x`` that keeps the memory rows: its integral
    nodes and its most decided fractional node are fixed, and the LP is solved again,
    until it is integral. Where that leaves the LP infeasible, the integral nodes are left
    free, then the node's next strategy is tried. ``None`` when no strategy of some node
    leaves the LP feasible."""
    import cvxpy as cp
    position = {v: i for i, v in enumerate(nodes)}
    fixed: dict[int, int] = {}
    value = math.nan
    while True:
        weights = np.where(s_id >= 0, x[np.maximum(s_id, 0)], -np.inf)
        free = [v for v in nodes if v not in fixed]
        loose = [v for v in free if weights[position[v]].max() < 1 - INTEGRALITY_TOLERANCE]
        if not loose:
            return rounded_picks(x, s_id, nodes), value
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


def rounded_picks(x: np.ndarray, s_id: np.ndarray, nodes: list[int]) -> dict[int, int]:
    """Each node's strategy of largest value in ``x``. One-hot rows make argmax robust to
    solver tolerances (values like 0.9999999); on a fractional row it is the heaviest."""
    best = np.argmax(np.where(s_id >= 0, x[np.maximum(s_id, 0)], -np.inf), axis=1)
    return {v: int(b) for v, b in zip(nodes, best)}


def fractional(x: np.ndarray, s_id: np.ndarray, nodes: list[int]) -> set[int]:
    """The nodes whose row of ``x`` is not one-hot."""
    top = np.where(s_id >= 0, x[np.maximum(s_id, 0)], -np.inf).max(axis=1)
    return {v for v, t in zip(nodes, top) if t < 1 - INTEGRALITY_TOLERANCE}


def solve_fractional(costs: dict[int, np.ndarray], edges: Edges, picks: dict[int, int], loose: set[int],
                     solver: str, opts: dict) -> dict[int, int]:
    """The MILP's optimum over the nodes ``loose`` with every other node fixed at ``picks``
    (empty when there is nothing to fix, or no such optimum). Where the LP relaxation is
    fractional, it mostly is on a few nodes: fixed, the rest of the graph falls apart into
    pieces that elimination solves, and what is left is a small MILP. (GPT-3 6.7B on
    (2, 4): 0.09% above the LP bound after rounding and local search, which sent it to a
    28 s MILP; fixing and solving its fractional nodes lands within the mip gap.)"""
    import cvxpy as cp
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
            model = build_ilp(rest, sub_costs, sub_edges, None, None, None)
        except IlpError:
            return {}
        problem, s = model.make(integer=True)
        _solve(problem, solver, opts)
        if problem.status != cp.OPTIMAL:
            return {}
        found = rounded_picks(np.asarray(s.value, dtype=float).ravel(), model.s_id, rest)
    for v, neighbours, table in reversed(records):
        found[v] = int(table[tuple(found[u] for u in neighbours)])
    return found


@functools.cache
def _milp_solvers() -> tuple[str, ...]:
    import cvxpy as cp
    from cvxpy.reductions.solvers.defines import MI_SOLVERS

    # CVXPY probes every solver package on each call (a stage search plans hundreds of stages).
    return tuple(name for name in cp.installed_solvers() if name in MI_SOLVERS)


def solver_options(solver: str, time_limit: float | None) -> dict:
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
class SolverSettings:
    solver: str
    opts: dict  # the solver's options (mip gap and time limit included)
    presolve: bool  # HiGHS presolves the LP relaxation
    mip_gap: float
    constant: float  # the objective's part folded away by the reductions (for the relative gap)
    time_limit: float | None


def time_limit_for(asked: float | None, budget: bool, solver: str) -> float | None:
    """The MILP's time limit: the one asked for; under a memory budget without one,
    BUDGET_TIME_LIMIT (its rows make branch and bound slow, and a plan from the LP is kept)."""
    if asked is not None or not budget or solver not in _TIME_LIMIT_OPTIONS:
        return asked
    return BUDGET_TIME_LIMIT


class Solved(NamedTuple):
    """What a solve gives."""

    picks: dict[int, int]  # the strategy picked per node
    objective: float  # the solver's
    num_variables: int
    status: Literal["optimal", "feasible", "trivial"]  # trivial: the reductions left nothing to solve
    method: Literal["lp-relaxation", "lp-local-search", "milp", "elimination"]


def run_solver(make: Callable, settings: SolverSettings, memory_budget: float | None, need: np.ndarray | None,
               rounded: Callable[[np.ndarray], dict[int, int]],
               near_lp: Callable[[np.ndarray], tuple[dict[int, int], float] | None],
               ) -> Solved:
    """The problem ``make`` builds, solved. ``rounded``: picks from a solution vector;
    ``near_lp``: picks and their objective from a fractional LP optimum (``None`` if it
    finds none)."""
    import cvxpy as cp
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
        found, incumbent = _relaxation(make, settings, opts, rounded, near_lp)
        if found is not None:
            return found
        if settings.time_limit is not None:  # the limit is for all solves together
            opts.update(_TIME_LIMIT_OPTIONS[solver](max(settings.time_limit - (time.perf_counter() - start), 0.0)))
    problem, s = make(integer=True)
    try:
        _solve(problem, solver, opts)
    except IlpError:
        if incumbent is None:
            raise
        return Solved(*incumbent, _num_variables(problem), "feasible", "lp-local-search")
    status = problem.status
    if status == cp.OPTIMAL:
        return Solved(rounded(np.asarray(s.value, dtype=float).ravel()), float(problem.value),
                      _num_variables(problem), "optimal", "milp")
    if status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE, "infeasible_or_unbounded"):
        if need is not None:
            raise BudgetError(memory_message(memory_budget, need) +
                                  " (or the forbidden (inf) strategies rule out every plan within it)")
        raise InfeasibleError("no sharding plan avoids the forbidden (inf) strategies and resharding pairs")
    return _stopped(problem, s, incumbent, rounded, solver)


def _relaxation(make: Callable, settings: SolverSettings, opts: dict,
                rounded: Callable[[np.ndarray], dict[int, int]],
                near_lp: Callable[[np.ndarray], tuple[dict[int, int], float] | None],
                ) -> tuple[Solved | None, tuple[dict[int, int], float] | None]:
    """HiGHS's LP relaxation: the plan (and no incumbent) when it is integral, or when the plan
    near it is within the mip gap of its bound; else no plan, and that near plan as the MILP's
    incumbent."""
    import cvxpy as cp
    problem, s = make(integer=False)
    _solve(problem, settings.solver, dict(opts, presolve="on" if settings.presolve else "off"))
    if problem.status != cp.OPTIMAL:
        return None, None
    x = np.asarray(s.value, dtype=float).ravel()
    if np.abs(x - np.round(x)).max() < INTEGRALITY_TOLERANCE:
        return Solved(rounded(x), float(problem.value), _num_variables(problem), "optimal", "lp-relaxation"), None
    bound, incumbent = float(problem.value), near_lp(x)
    if incumbent is not None and incumbent[1] - bound <= settings.mip_gap * abs(incumbent[1] + settings.constant):
        return Solved(*incumbent, _num_variables(problem), "optimal", "lp-local-search"), None
    return None, incumbent


def _stopped(problem: cp.Problem, s: cp.Variable, incumbent: tuple[dict[int, int], float] | None,
             rounded: Callable[[np.ndarray], dict[int, int]], solver: str) -> Solved:
    """The plan of a MILP stopped at its limit: its incumbent if it kept one better than the
    relaxation's, else the relaxation's."""
    import cvxpy as cp
    extra = problem.solver_stats.extra_stats
    has_incumbent = s.value is not None and np.isfinite(s.value).all() and \
        getattr(extra, "primal_solution_status", 2) == 2  # HiGHS: 2 = feasible solution kept
    if problem.status in (cp.USER_LIMIT, cp.OPTIMAL_INACCURATE) and has_incumbent and (
            incumbent is None or float(problem.value) < incumbent[1]):
        return Solved(rounded(np.asarray(s.value, dtype=float).ravel()), float(problem.value),
                      _num_variables(problem), "feasible", "milp")
    if incumbent is not None:
        return Solved(*incumbent, _num_variables(problem), "feasible", "lp-local-search")
    raise SolverLimitError(f"solver {solver} stopped with status {problem.status!r} before finding a plan; "
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
    import cvxpy as cp
    try:
        shown = SOLVER_LOG.isEnabledFor(logging.DEBUG)
        with _native_output(shown), warnings.catch_warnings():  # "may be inaccurate" after a time limit: "feasible"
            warnings.simplefilter("ignore", UserWarning)
            # The SciPy canonicalisation backend compiles these large, very sparse
            # constraints ~2x faster than CVXPY's default backend.
            problem.solve(solver=solver, canon_backend=cp.SCIPY_CANON_BACKEND, verbose=shown, **opts)
    except cp.error.SolverError as err:
        raise IlpError(f"solver {solver} failed: {err}") from err
