"""Eq. 1's input, the cost graph the ILP solves, and its exact reductions.

A :class:`CostGraph` has per node the cost of each strategy, per edge the resharding
cost of each pair, and followers (Sec. 4.2's merged ops: a node whose strategy is a
function of its leader's). Before anything is handed to a solver, ``ilp.solve``
reduces it exactly: followers are folded onto their leaders; without a memory budget,
degree-0/1/2 nodes are eliminated (their best strategy for every choice of their
neighbours is folded into the neighbours' costs) and dominated strategies pruned;
edges that depend on one end only become that end's costs. ``np.inf`` marks a
forbidden strategy or resharding pair.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np


@dataclass(frozen=True)
class Edge:
    src: int
    dst: int
    cost: np.ndarray  # (k_src, k_dst): R_vu of Eq. 1; np.inf = forbidden pair


@dataclass(frozen=True)
class EdgeMemory:
    """Bytes per device a pair of choices of ``src`` and ``dst`` keeps live in the memory
    rows ``rows`` (indices into ``CostGraph.live_sets``): a resharded copy, where ``dst``
    needs a layout that ``src`` does not give."""
    src: int
    dst: int
    bytes: np.ndarray  # (k_src, k_dst)
    rows: tuple[int, ...]


@dataclass(frozen=True)
class Follow:
    node: int
    leader: int
    mapping: np.ndarray  # (k_leader,): if the leader picks i, the node picks mapping[i]


@dataclass(frozen=True)
class CostGraph:
    node_costs: tuple[np.ndarray, ...]  # c_v + d_v, shape (k_v,); np.inf = forbidden strategy
    edges: tuple[Edge, ...] = ()  # parallel edges add up
    follows: tuple[Follow, ...] = ()
    node_memory: tuple[np.ndarray, ...] | None = None  # bytes per device kept live per strategy
    live_sets: tuple[tuple[int, ...], ...] = ()  # per program point, the nodes live there
    edge_memory: tuple[EdgeMemory, ...] = ()  # per resharding, the bytes its copy adds to live sets


class IlpError(ValueError):
    """The graph or the solver settings cannot be solved; the message is for end users."""


class InfeasibleError(IlpError):
    """No plan avoids the forbidden strategies/pairs and fits the memory budget."""


class BudgetError(InfeasibleError):
    """No plan fits the memory budget."""


Edges = dict[tuple[int, int], np.ndarray]  # (a, b) with a < b -> R of shape (k_a, k_b)


def objective(graph: CostGraph, choices: Sequence[int]) -> float:
    """Eq. 1 for ``choices``; inf if a forbidden entry is used or a follower does not follow."""
    c = [int(x) for x in choices]
    if any(c[f.node] != int(f.mapping[c[f.leader]]) for f in graph.follows):
        return math.inf
    total = math.fsum(float(cost[c[v]]) for v, cost in enumerate(graph.node_costs))
    return total + math.fsum(float(e.cost[c[e.src], c[e.dst]]) for e in graph.edges)


def memory_loads(graph: CostGraph, choices: Sequence[int]) -> np.ndarray:
    """Bytes per device of each memory row (``graph.live_sets``, with ``edge_memory``) under ``choices``."""
    chosen = np.array([float(m[c]) for m, c in zip(graph.node_memory, choices)])
    loads = np.array([chosen[list(live)].sum() for live in graph.live_sets])
    for term in graph.edge_memory:
        loads[list(term.rows)] += term.bytes[choices[term.src], choices[term.dst]]
    return loads


def counted_nodes(graph: CostGraph) -> set[int]:
    """The nodes some memory row counts."""
    return {v for live in graph.live_sets for v in live}


def memory_subset(graph: CostGraph, rows: Sequence[int]) -> CostGraph:
    """``graph`` with the memory rows ``rows`` only (renumbered in that order)."""
    number = {r: k for k, r in enumerate(rows)}
    terms = tuple(EdgeMemory(t.src, t.dst, t.bytes, tuple(number[r] for r in t.rows if r in number))
                  for t in graph.edge_memory if any(r in number for r in t.rows))
    return replace(graph, live_sets=tuple(graph.live_sets[r] for r in rows), edge_memory=terms)


def validate(graph: CostGraph, memory_budget: float | None) -> None:
    """Raise IlpError for a malformed graph, InfeasibleError for one with no allowed plan."""
    n = len(graph.node_costs)
    allowed = []  # per node, its strategies of finite cost
    for v, cost in enumerate(graph.node_costs):
        cost = np.asarray(cost, dtype=float)
        if cost.ndim != 1 or cost.size == 0 or not (cost > -np.inf).all():  # NaN and -inf fail the comparison
            raise IlpError(f"node {v}: costs must be a non-empty vector without NaN or -inf")
        allowed.append(np.isfinite(cost))
        if not allowed[v].any():
            raise InfeasibleError(f"node {v} has no allowed strategy: all its {cost.size} costs are inf "
                                  "(forbidden); relax the sharding pinned on it")
    for e in graph.edges:
        if not (0 <= e.src < n and 0 <= e.dst < n):
            raise IlpError(f"edge {e.src} -> {e.dst} names a node outside 0..{n - 1}")
        r = np.asarray(e.cost, dtype=float)
        if r.shape != (len(allowed[e.src]), len(allowed[e.dst])) or not (r > -np.inf).all():
            raise IlpError(f"edge {e.src} -> {e.dst}: resharding cost must be a (k_src, k_dst) matrix without NaN "
                           "or -inf")
        if np.isinf(r[allowed[e.src]][:, allowed[e.dst]]).all():
            raise InfeasibleError(f"edge {e.src} -> {e.dst} admits no pair of allowed strategies: every such "
                                  "entry of its resharding cost is inf")
    _validate_memory(graph, memory_budget)


def _validate_memory(graph: CostGraph, memory_budget: float | None) -> None:
    n = len(graph.node_costs)
    if memory_budget is not None and graph.live_sets and graph.node_memory is None:
        raise IlpError("a memory budget with live sets needs node_memory (bytes per strategy of each node)")
    if graph.node_memory is not None and [np.shape(m) for m in graph.node_memory] != \
            [np.shape(c) for c in graph.node_costs]:
        raise IlpError("node_memory must have one vector per node, of the same length as its node_costs")
    if any(not 0 <= v < n for live in graph.live_sets for v in live):
        raise IlpError(f"a live set names a node outside 0..{n - 1}")
    for m in graph.edge_memory:
        if not (0 <= m.src < n and 0 <= m.dst < n) or \
                np.shape(m.bytes) != (len(graph.node_costs[m.src]), len(graph.node_costs[m.dst])):
            raise IlpError(f"edge memory {m.src} -> {m.dst} needs a (k_src, k_dst) matrix between nodes of the graph")
        if any(not 0 <= r < len(graph.live_sets) for r in m.rows):
            raise IlpError(f"edge memory {m.src} -> {m.dst} names a live set outside 0..{len(graph.live_sets) - 1}")


def resolve_followers(graph: CostGraph) -> tuple[np.ndarray, list[np.ndarray]]:
    """Each node's ultimate leader and the map from that leader's strategy to its own (chains composed)."""
    n = len(graph.node_costs)
    follow: dict[int, Follow] = {}
    for f in graph.follows:
        m = np.asarray(f.mapping)
        if f.node in follow or not (0 <= f.node < n and 0 <= f.leader < n):
            raise IlpError(f"follow {f.node} -> {f.leader}: a node follows at most one leader among 0..{n - 1}")
        if m.shape != (len(graph.node_costs[f.leader]),) or m.min() < 0 or m.max() >= len(graph.node_costs[f.node]):
            raise IlpError(f"follow {f.node} -> {f.leader}: mapping needs one strategy of node {f.node} per "
                           f"strategy of node {f.leader}")
        follow[f.node] = f
    leader = np.arange(n)
    maps = [np.arange(len(c)) for c in graph.node_costs]
    for v in follow:
        u, m, seen = v, np.arange(len(graph.node_costs[v])), {v}
        while u in follow:
            m, u = m[np.asarray(follow[u].mapping, dtype=np.int64)], follow[u].leader
            if u in seen:
                raise IlpError(f"follows form a cycle through node {v}")
            seen.add(u)
        leader[v], maps[v] = u, m
    return leader, maps


def add_edge(edges: Edges, a: int, b: int, r: np.ndarray) -> None:
    key, r = ((a, b), r) if a < b else ((b, a), r.T)
    edges[key] = edges[key] + r if key in edges else r


def oriented(edges: Edges, a: int, b: int) -> np.ndarray:
    return edges[(a, b)] if a < b else edges[(b, a)].T


def fold_followers(graph: CostGraph, leader: np.ndarray, maps: list[np.ndarray]) -> tuple[dict, Edges]:
    """Sec. 4.2 merging: a follower's costs and edges become its leader's, read through the mapping."""
    costs = {int(v): np.zeros(len(graph.node_costs[v])) for v in range(len(leader)) if leader[v] == v}
    for v, cost in enumerate(graph.node_costs):
        costs[int(leader[v])] += np.asarray(cost, dtype=float)[maps[v]]
    edges: Edges = {}
    for e in graph.edges:
        a, b, r = int(leader[e.src]), int(leader[e.dst]), np.asarray(e.cost, dtype=float)
        if a == b:  # both ends move with one leader choice i: the diagonal R[m_src[i], m_dst[i]]
            costs[a] = costs[a] + r[maps[e.src], maps[e.dst]]
        elif leader[e.src] == e.src and leader[e.dst] == e.dst:  # leaders' maps are the identity
            add_edge(edges, a, b, r)
        else:
            add_edge(edges, a, b, r[np.ix_(maps[e.src], maps[e.dst])])
    for v, cost in costs.items():
        if np.isinf(cost).all():
            merged = [u for u in range(len(leader)) if leader[u] == v and u != v]
            raise InfeasibleError(f"node {v} has no allowed strategy once its followers {merged} are merged "
                                  "into it: every strategy is forbidden for it or for a follower")
    return costs, edges


def eliminate(costs: dict[int, np.ndarray], edges: Edges, keep: frozenset[int] = frozenset()) -> tuple[list, float]:
    """Exact degree-0/1/2 elimination to a fixpoint; returns argmin tables (reverse order rebuilds choices).
    The nodes ``keep`` stay (under a memory budget: those its rows count).

    Degree 1 (neighbour u):     c_u[a] += min_b R_uv[a, b] + c_v[b].
    Degree 2 (neighbours u, w): R'_uw[a, c] = min_b R_uv[a, b] + c_v[b] + R_vw[b, c], summed into any u-w edge.
    Both keep Eq. 1's optimum: v touches nothing else, so its best choice depends only on its neighbours'.
    """
    nbrs: dict[int, set[int]] = {v: set() for v in costs}
    for a, b in edges:
        nbrs[a].add(b)
        nbrs[b].add(a)
    records: list[tuple[int, tuple[int, ...], np.ndarray]] = []
    constant = 0.0
    work = [v for v in costs if len(nbrs[v]) <= 2]
    while work:
        v = work.pop()
        if v not in costs or len(nbrs[v]) > 2 or v in keep:
            continue
        c, around = costs.pop(v), tuple(sorted(nbrs.pop(v)))
        for u in around:
            nbrs[u].discard(v)
        if not around:
            records.append((v, (), np.asarray(np.argmin(c))))
            constant += float(c.min())
            continue
        r_uv = oriented(edges, around[0], v)
        del edges[(min(around[0], v), max(around[0], v))]
        if len(around) == 1:
            total = r_uv + c[None, :]
            costs[around[0]] = costs[around[0]] + total.min(axis=1)
        else:
            r_vw = oriented(edges, v, around[1])
            del edges[(min(around[1], v), max(around[1], v))]
            total = r_uv[:, :, None] + c[None, :, None] + r_vw[None, :, :]
            add_edge(edges, around[0], around[1], total.min(axis=1))
            nbrs[around[0]].add(around[1])
            nbrs[around[1]].add(around[0])
        records.append((v, around, total.argmin(axis=1)))
        work.extend(around)
    return records, constant


def prune_dominated(costs: dict[int, np.ndarray], edges: Edges) -> None:
    """Forbid every strategy another one of its node beats or ties on its own cost and on
    every resharding cost with every neighbour strategy: some optimum never uses it.
    (Without a memory budget only: a dominated strategy may need less memory.)"""
    nbrs: dict[int, list[int]] = {v: [] for v in costs}
    for a, b in edges:
        nbrs[a].append(b)
        nbrs[b].append(a)
    for v, cost in costs.items():
        rows = np.concatenate([cost[:, None]] + [oriented(edges, v, u) for u in nbrs[v]], axis=1)
        below = np.all(rows[:, None, :] <= rows[None, :, :], axis=2)  # below[j, i]: row j <= row i
        np.fill_diagonal(below, False)
        # i goes if some j is <= everywhere and j is strictly better somewhere or, on a
        # tie, comes first (so exactly one of equal rows survives).
        order = np.arange(len(cost))
        beaten = below & (~below.T | (order[:, None] < order[None, :]))
        dominated = beaten.any(axis=0) & np.isfinite(cost)
        if dominated.any():
            costs[v] = np.where(dominated, np.inf, cost)


def fold_one_sided(costs: dict[int, np.ndarray], edges: Edges) -> Edges:
    """The edges left once those whose cost, over the strategies still allowed, depends on
    one end's choice only (equal rows: on the second end's; equal columns: on the
    first's) are added to that end's costs in ``costs``. Exact; such an edge (a consumer
    whose strategies all need one layout, a producer whose strategies all give one)
    then needs no e variables or marginal rows in the ILP."""
    kept = {}
    for (a, b), r in edges.items():
        ok_a, ok_b = np.isfinite(costs[a]), np.isfinite(costs[b])
        sub = r[np.ix_(ok_a, ok_b)]
        if sub.size and (sub == sub[:1]).all():
            costs[b] = costs[b] + np.where(ok_b, r[np.argmax(ok_a)], 0.0)
        elif sub.size and (sub == sub[:, :1]).all():
            costs[a] = costs[a] + np.where(ok_a, r[:, np.argmax(ok_b)], 0.0)
        else:
            kept[(a, b)] = r
    return kept


def local_search(costs: dict[int, np.ndarray], edges: Edges, picks: dict[int, int],
                 sweeps: int = 100) -> dict[int, int]:
    """``picks`` improved one node at a time (iterated conditional modes): each node takes
    its cheapest strategy given its neighbours' picks, until no single change lowers
    Eq. 1, or for at most ``sweeps`` rounds over the nodes (each change lowers Eq. 1, but
    by amounts that rounding could make cycle). The result is a local optimum, whose
    distance to the global one :func:`ilp.solve` bounds by the LP relaxation."""
    nbrs: dict[int, list[tuple[int, np.ndarray]]] = {v: [] for v in costs}
    for (a, b), r in edges.items():
        nbrs[a].append((b, r))
        nbrs[b].append((a, r.T))
    picks = dict(picks)
    for _ in range(sweeps):
        changed = False
        for v, cost in costs.items():
            local = cost + sum((r[:, picks[u]] for u, r in nbrs[v]), np.zeros_like(cost))
            best = int(np.argmin(local))
            if local[best] < local[picks[v]]:
                picks[v], changed = best, True
        if not changed:
            break
    return picks


def reduced_objective(costs: dict[int, np.ndarray], edges: Edges, picks: dict[int, int]) -> float:
    """Eq. 1 over the nodes and edges left by the reductions (their folded constant excluded)."""
    return math.fsum(float(c[picks[v]]) for v, c in costs.items()) + \
        math.fsum(float(r[picks[a], picks[b]]) for (a, b), r in edges.items())
