"""The exhaustive reference for Eq. 1: every assignment of strategies, for small cost graphs."""

from __future__ import annotations

import itertools
import math

import numpy as np

from alpa_mlir.passes.intra_op.ilp_graph import CostGraph


def brute_force(graph: CostGraph, memory_budget: float | None = None) -> tuple[tuple[int, ...], float]:
    """Exhaustive minimum of Eq. 1 over the leaders' strategies; ``((), inf)`` if none is feasible."""
    n = len(graph.node_costs)
    pending = {f.node: f for f in graph.follows}
    free = [v for v in range(n) if v not in pending]
    grid = np.array(list(itertools.product(*(range(len(graph.node_costs[v])) for v in free))), dtype=np.int64)
    c = np.zeros((len(grid), n), dtype=np.int64)
    c[:, free] = grid.reshape(len(grid), len(free))
    while pending:
        ready = [v for v, f in pending.items() if f.leader not in pending]
        for v in ready:
            f = pending.pop(v)
            c[:, v] = np.asarray(f.mapping)[c[:, f.leader]]
    total = np.zeros(len(c))
    for v, cost in enumerate(graph.node_costs):
        total += np.asarray(cost, dtype=float)[c[:, v]]
    for e in graph.edges:
        total += np.asarray(e.cost, dtype=float)[c[:, e.src], c[:, e.dst]]
    if memory_budget is not None and graph.node_memory is not None:
        for row, live in enumerate(graph.live_sets):
            peak = sum(np.asarray(graph.node_memory[v], dtype=float)[c[:, v]] for v in set(live))
            peak = peak + sum(np.asarray(t.bytes, dtype=float)[c[:, t.src], c[:, t.dst]]
                              for t in graph.edge_memory if row in t.rows)
            total[np.asarray(peak) > memory_budget] = np.inf
    best = int(np.argmin(total))
    return ((), math.inf) if not np.isfinite(total[best]) else (tuple(int(x) for x in c[best]), float(total[best]))
