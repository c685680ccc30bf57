"""Eq. 1 linearised for a MILP solver, as CVXPY problems over sparse matrices.

:func:`build_ilp` turns the reduced cost graph (``ilp.py`` runs the reductions of
``ilp_graph.py`` first) into the MILP and its LP relaxation: one-hot node variables
``s``, pair variables ``e`` over classes of equal rows and columns of each resharding
matrix, their marginals, and the memory rows (``CostGraph.live_sets``, with resharded
copies through the pair variables) against a budget.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import scipy.sparse as sp

from ...plans.plan_summary import byte_text
from .ilp_graph import BudgetError, CostGraph, Edges, InfeasibleError

if TYPE_CHECKING:
    import cvxpy as cp


class IlpModel(NamedTuple):
    """Eq. 1 linearised, ready to build as a CVXPY problem."""

    # make(integer) -> the problem and its s: the MILP, or with integer=False its LP
    # relaxation (0 <= s <= 1)
    make: Callable[..., tuple[cp.Problem, cp.Variable]]
    s_id: np.ndarray  # [node position, strategy] -> its variable in s (-1: forbidden, none)
    num_constraints: int
    # The memory lower bound per program point (None without a budget): the sum over its live
    # results of their smallest footprint under a strategy their leader may pick.
    need: np.ndarray | None


def build_ilp(nodes: list[int], costs: dict[int, np.ndarray], edges: Edges, memory: tuple | None,
              memory_budget: float | None, graph: CostGraph | None) -> IlpModel:
    """Eq. 1 linearised, as a few sparse matrices over s (node strategies) and e (edge strategy pairs).
    Forbidden (inf) strategies and pairs get no variable, so inf never reaches the objective."""
    s = _strategies(nodes, costs)
    pair_memory, node_terms = _copy_terms(memory, graph)
    e = _pairs(s, costs, edges, pair_memory)
    n_rows = len(nodes) + e.num_marginals
    need = memory_rows = copy_rows = None
    if memory is not None:
        need, held_bytes = _memory_rows(s, memory, graph, node_terms)
        if need.max() > memory_budget:
            raise BudgetError(memory_message(memory_budget, need))
        memory_rows = held_bytes / memory_budget
        copy_rows = _sparse(*e.copies, (memory_rows.shape[0], e.count)) / memory_budget
        n_rows += memory_rows.shape[0]

    def make(integer: bool, fixed: np.ndarray | None = None) -> tuple[cp.Problem, cp.Variable]:
        import cvxpy as cp  # with the first problem, not the module (see ilp_solver.py)

        n_s = len(s.costs)
        x = cp.Variable(n_s, boolean=True) if integer else cp.Variable(n_s, bounds=[0, 1])
        obj = s.costs @ x
        constraints = [s.one_hot @ x == 1]
        if fixed is not None and len(fixed):
            constraints.append(x[fixed] == 1)
        if e.count:
            y = cp.Variable(e.count, nonneg=True)
            obj = obj + e.costs @ y
            constraints.append(e.marginal_e @ y == e.marginal_s @ x)
        if memory_rows is not None:  # in budgets: bytes beside costs of 1e8 and more trouble HiGHS's LP
            held = memory_rows @ x + (copy_rows @ y if e.count and copy_rows.nnz else 0)
            constraints.append(held <= 1)
        return cp.Problem(cp.Minimize(obj), constraints), x

    return IlpModel(make, s.s_id, n_rows, need)


class _Strategies(NamedTuple):
    """The s variables: one per allowed (finite-cost) strategy of each node."""

    pos: dict[int, int]  # node -> its row
    allowed: np.ndarray  # [row, strategy] -> finite cost
    s_id: np.ndarray  # [row, strategy] -> its variable in s (-1: none)
    costs: np.ndarray  # per variable
    one_hot: sp.csr_matrix  # [row, variable]: each row picks one


def _strategies(nodes: list[int], costs: dict[int, np.ndarray]) -> _Strategies:
    pos = {v: i for i, v in enumerate(nodes)}
    cost = np.full((len(nodes), max(len(costs[v]) for v in nodes)), np.inf)
    for i, v in enumerate(nodes):
        cost[i, :len(costs[v])] = costs[v]
    allowed = np.isfinite(cost)
    if not allowed.any(axis=1).all():
        v = nodes[int(np.argmin(allowed.any(axis=1)))]
        raise InfeasibleError(f"no sharding plan avoids the forbidden (inf) costs: every strategy of node {v} "
                              "meets a forbidden resharding pair with its neighbours")
    s_id = np.full(cost.shape, -1)
    n_s = int(allowed.sum())
    s_id[allowed] = np.arange(n_s)
    one_hot = sp.csr_matrix((np.ones(n_s), (np.nonzero(allowed)[0], s_id[allowed])), shape=(len(nodes), n_s))
    return _Strategies(pos, allowed, s_id, cost[allowed], one_hot)


class _Pairs(NamedTuple):
    """The e variables over classes of strategy pairs, and the marginals tying them to s."""

    count: int
    num_marginals: int
    costs: np.ndarray | None  # per variable
    marginal_e: sp.csr_matrix | None  # marginal_e @ e == marginal_s @ s
    marginal_s: sp.csr_matrix | None
    copies: tuple[list, list, list]  # (memory row, e variable, bytes) of resharded copies


def _pairs(s: _Strategies, costs: dict[int, np.ndarray], edges: Edges, pair_memory: dict) -> _Pairs:
    """Marginals: sum_j e_ij = s_vi and sum_i e_ij = s_uj. Once s is one-hot (v picks a,
    u picks b) every row i != a and column j != b of e sums to 0, so e >= 0 is zero
    there, and row a forces e_ab = 1: e is the outer product s_v s_u^T without being
    declared integer, which keeps HiGHS's branch-and-bound on the s variables only.
    Strategies of v whose rows of R_vu are equal cost the same whatever u picks (and
    likewise for columns), so e is defined over classes of equal rows x classes of
    equal columns, with class sums of s as marginals: still exact, and far smaller,
    since many algorithms of an op give or need the same sharding of one value.
    Resharded copies (CostGraph.edge_memory) count in memory rows through the same
    pair variables: their bytes join the cost in telling classes of rows and columns apart."""
    e_rows, e_cols, s_rows, s_cols, e_cost = [], [], [], [], []
    m_rows, m_cols, m_vals = [], [], []
    n_e = n_marg = 0
    for a, b in [*edges, *(pair for pair in pair_memory if pair not in edges)]:
        r = edges[(a, b)] if (a, b) in edges else np.zeros((len(costs[a]), len(costs[b])))
        ia, ib = s.pos[a], s.pos[b]
        ok_a, ok_b = s.allowed[ia, :r.shape[0]], s.allowed[ib, :r.shape[1]]
        sub = r[np.ix_(ok_a, ok_b)]
        copies = [(m[np.ix_(ok_a, ok_b)], rows) for m, rows in pair_memory.get((a, b), ())]
        by_row = np.hstack([sub, *(m for m, _ in copies)]) if copies else sub
        by_col = np.vstack([sub, *(m for m, _ in copies)]).T if copies else sub.T
        row_first, row_class = equal_rows(by_row.dtype.str, by_row.shape, by_row.tobytes())
        col_first, col_class = equal_rows(by_col.dtype.str, by_col.shape, by_col.tobytes())
        classes = sub[np.ix_(row_first, col_first)]
        ii, jj = np.nonzero(np.isfinite(classes))
        n_a, n_b = len(row_first), len(col_first)
        ids = n_e + np.arange(len(ii))
        for m, rows in copies:
            values = m[np.ix_(row_first, col_first)][ii, jj]
            kept = np.nonzero(values)[0]
            for row in rows:
                m_rows.append(np.full(len(kept), row))
                m_cols.append(ids[kept])
                m_vals.append(values[kept])
        e_rows += [n_marg + ii, n_marg + n_a + jj]
        e_cols += [ids, ids]
        s_rows += [n_marg + row_class, n_marg + n_a + col_class]
        s_cols += [s.s_id[ia, :len(ok_a)][ok_a], s.s_id[ib, :len(ok_b)][ok_b]]
        e_cost.append(classes[ii, jj])
        n_e, n_marg = n_e + len(ii), n_marg + n_a + n_b
    if not n_e:
        return _Pairs(0, n_marg, None, None, None, (m_rows, m_cols, m_vals))
    marginal_e = _sparse(e_rows, e_cols, [np.ones(len(c)) for c in e_cols], (n_marg, n_e))
    marginal_s = _sparse(s_rows, s_cols, [np.ones(len(c)) for c in s_cols], (n_marg, len(s.costs)))
    return _Pairs(n_e, n_marg, np.concatenate(e_cost), marginal_e, marginal_s, (m_rows, m_cols, m_vals))


def _memory_rows(s: _Strategies, memory: tuple, graph: CostGraph,
                 node_terms: list) -> tuple[np.ndarray, sp.csr_matrix]:
    """Bytes per program point over s, and its lower bound per point (the live results with
    their smallest footprint). A live follower v contributes memory_v[map_v[i]] when its
    leader picks i (Sec. 4.2 merging)."""
    live, leader, maps = memory
    n_s = len(s.costs)
    w_rows, w_cols, w_vals = [], [], []
    smallest = np.zeros(len(graph.node_costs))
    for v in np.unique(live.indices):  # the nodes the rows count (the others may be eliminated)
        i = s.pos[int(leader[v])]
        ok = s.allowed[i, :len(maps[v])]
        w_rows.append(np.full(int(ok.sum()), v))
        w_cols.append(s.s_id[i, :len(maps[v])][ok])
        w_vals.append(np.asarray(graph.node_memory[v], dtype=float)[maps[v]][ok])
        smallest[v] = w_vals[-1].min()
    w = _sparse(w_rows, w_cols, w_vals, (len(graph.node_costs), n_s))
    t_rows, t_cols, t_vals = [], [], []
    for a, vector, rows in node_terms:  # copies between a leader's own followers
        ok = s.allowed[s.pos[a], :len(vector)]
        for row in rows:
            t_rows.append(np.full(int(ok.sum()), row))
            t_cols.append(s.s_id[s.pos[a], :len(vector)][ok])
            t_vals.append(vector[ok])
    return live @ smallest, live @ w + _sparse(t_rows, t_cols, t_vals, (live.shape[0], n_s))


def _copy_terms(memory: tuple | None, graph: CostGraph | None) -> tuple[dict, list]:
    """``graph.edge_memory`` on the solved nodes (leaders, or tied classes): per pair
    ``(a, b)``, ``a < b``, its ``(bytes, rows)`` over their strategies; and where both
    ends move with one solved node, ``(node, bytes per strategy, rows)``."""
    pairs: dict[tuple[int, int], list] = {}
    on_one: list = []
    if memory is None:
        return pairs, on_one
    _, solved, maps = memory
    for term in graph.edge_memory:
        a, b = int(solved[term.src]), int(solved[term.dst])
        matrix = np.asarray(term.bytes, dtype=float)[np.ix_(maps[term.src], maps[term.dst])]
        if a == b:
            on_one.append((a, matrix.diagonal(), term.rows))
        else:
            pairs.setdefault((a, b) if a < b else (b, a), []).append((matrix if a < b else matrix.T, term.rows))
    return pairs, on_one


def _sparse(rows: list, cols: list, values: list, shape: tuple[int, int]) -> sp.csr_matrix:
    if not rows:
        return sp.csr_matrix(shape)
    return sp.csr_matrix((np.concatenate(values), (np.concatenate(rows), np.concatenate(cols))), shape=shape)


@functools.lru_cache(maxsize=2048)
def equal_rows(dtype: str, shape: tuple[int, int], data: bytes) -> tuple[np.ndarray, np.ndarray]:
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


def live_incidence(graph: CostGraph) -> sp.csr_matrix:
    rows = np.repeat(np.arange(len(graph.live_sets)), [len(set(live)) for live in graph.live_sets])
    cols = np.fromiter((v for live in graph.live_sets for v in sorted(set(live))), dtype=np.int64)
    return sp.csr_matrix((np.ones(len(cols)), (rows, cols)), shape=(len(graph.live_sets), len(graph.node_costs)))


def memory_message(budget: float, need: np.ndarray) -> str:
    point = int(np.argmax(need))
    return (f"no sharding plan fits the memory budget of {byte_text(budget)} per device: program point "
            f"{point} needs at least {byte_text(float(need[point]))} (lower bound: its live results with their "
            "smallest strategies); raise the budget or use more devices")




