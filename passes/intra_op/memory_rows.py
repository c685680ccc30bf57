"""The memory budget in the ILP: its rows, the least memory a step needs, and the error.

:func:`memory_rows` makes the model of ``peak_memory.py`` linear in the choices, as
``CostGraph.live_sets`` and ``.edge_memory``; :func:`within` keeps a plan within the
budget as ``peak_memory`` predicts it; :func:`least_memory` and :func:`budget_message`
say what a step needs when no plan fits.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from typing import NamedTuple, TypeVar

import numpy as np

from ...dialect.sharding import tile_bytes
from ...plans.plan_summary import byte_text
from .cost_graph import Graph
from .ilp import InfeasibleError
from .ilp_graph import EdgeMemory
from .peak_memory import Lifetimes, address_table_bytes

# Rounds of solving again, against the budget less the excess, where a plan within the
# rows is over the budget as peak_memory predicts it (copies counted once per value and
# layout, buffers shared by size rather than by type).
MAX_BUDGET_ROUNDS = 4


class MemoryRows(NamedTuple):
    """The ILP's memory constraint for a plan of a graph (``CostGraph.live_sets`` and
    ``.edge_memory``): no row's bytes, with ``fixed``, may exceed the budget."""
    live_sets: tuple[tuple[int, ...], ...]
    edge_memory: tuple[EdgeMemory, ...]
    fixed: float  # bytes every row holds whatever the plan: the outputs' tuple of addresses


def memory_rows(graph: Graph, donated: set[int]) -> MemoryRows:
    """The rows of the ILP's memory constraint under the model of :func:`peak_memory`: per
    program point where the peak may be, the nodes whose bytes count there, and the
    resharded copies live there as edge terms (a copy exists where the consumer's layout
    is not the producer's).

    Every row holds the arguments but the donated ones (a donated buffer is the output's)
    and the result sinks (XLA counts outputs whole), plus the temporaries live at the
    point. A row per point where a buffer ends after one started since the last row: any
    other point's buffers are a subset of a row's. An op that may write in place (by type)
    counts from the point after its own. A copy read through a shared resharding lives
    from its first reader to its last; any other, from its value's first reader to its own.
    Several results' table of addresses (``peak_memory``'s outputs) is in every row."""
    life = Lifetimes(graph)
    nodes = graph.nodes
    fixed = address_table_bytes(sum(node.kind == "result" for node in nodes))
    copies = _copies(graph, life)
    always = [i for i, node in enumerate(nodes)
              if (node.kind == "argument" and i not in donated) or node.kind == "result"]
    starts: dict[int, list[int]] = {}
    ends: set[int] = {end for _, _, _, (_, end) in copies}
    first = {start for _, _, _, (start, _) in copies}
    for i in range(len(nodes)):
        start = i + 1 if life.in_place[i] else life.start(i)  # in place: its operand's buffer, to its own point
        if life.made[i] and start <= life.horizon[i]:
            starts.setdefault(start, []).append(i)
            ends.add(life.horizon[i])
    rows: list[tuple[int, ...]] = []
    points: list[int] = []
    live: set[int] = set()
    started = False
    for point in range(len(nodes)):
        live.update(starts.get(point, ()))
        started = started or point in starts or point in first
        if point in ends and started:
            rows.append(tuple(always) + tuple(sorted(live)))
            points.append(point)
            started = False
        live = {i for i in live if life.horizon[i] > point}
    if not rows:
        return MemoryRows((tuple(always),), (), fixed)
    edge_memory = tuple(EdgeMemory(src, dst, matrix, tuple(range(bisect_left(points, lo), bisect_right(points, hi))))
                        for src, dst, matrix, (lo, hi) in copies)
    return MemoryRows(tuple(rows), tuple(m for m in edge_memory if m.rows), fixed)


class LeastMemory(NamedTuple):
    """A lower bound on any plan's memory per device (each value at its smallest tile, no
    copies), at the memory row where it is largest, split into the bytes of values that
    scale with the batch and the others (parameters, optimizer state, ...)."""
    total: float
    batch: float  # bytes of values computed from the batch (what micro-batches divide)
    at: str  # the op at that row


def least_memory(graph: Graph, donated: set[int]) -> LeastMemory:
    """The least memory per device any plan of ``graph`` needs, under :func:`memory_rows`."""
    memory = memory_rows(graph, donated)
    rows = memory.live_sets
    smallest = [float(np.min(np.where(np.isfinite(node.costs), graph.memory(node), np.inf))) for node in graph.nodes]
    totals = [memory.fixed + sum(smallest[v] for v in row) for row in rows]
    worst = int(np.argmax(totals))
    batch = sum(smallest[v] for v in rows[worst] if graph.nodes[v].batch_loops)
    temporaries = [v for v in rows[worst] if graph.nodes[v].kind in ("op", "carry")]
    return LeastMemory(totals[worst], batch, graph.nodes[max(temporaries)].label if temporaries else "")


def _copies(graph: Graph, life: Lifetimes) -> list[tuple[int, int, np.ndarray, tuple[int, int]]]:
    """``(src, dst, bytes, (first, last))`` per priced use that may reshard: the bytes of the
    copy per pair of choices (the layout ``dst`` needs where ``src`` gives another), and
    the program points it is live at."""
    readers: dict[int, list[int]] = {}  # of each copy node
    first: dict[tuple[int, int], int] = {}  # each value's first reader
    priced = list(graph.priced_uses())
    for src, result, use in priced:
        if graph.nodes[src].kind == "copy":
            readers.setdefault(src, []).append(use.dst)
        if use.kind == "operand":
            first[(src, result)] = min(first.get((src, result), use.dst), use.dst)
    matrices: dict[tuple, np.ndarray | None] = {}
    copies = []
    for src, result, use in priced:
        dst = graph.nodes[use.dst]
        if use.kind != "operand" or dst.kind == "result":
            continue
        node = graph.nodes[src]
        key = (node.signature, len(node.strategies), result, dst.signature, len(dst.strategies), use.slot)
        if key not in matrices:
            matrices[key] = _copy_bytes(graph, [s.results[result] for s in node.strategies], use.needs(dst),
                                        node.shapes[result], node.itemsizes[result])
        if matrices[key] is None:
            continue
        # A shared resharding's copy lives while its readers read it; another reader's copy
        # may be made for an earlier reader that needs the same layout, so it is counted
        # from the value's first reader (the readers' layouts are not known here).
        at = readers.get(use.dst, [first[(src, result)], use.dst])
        span = (min(at), max(life.horizon[r] if life.fused[r] else r for r in at))
        copies.append((src, use.dst, matrices[key], span))
    return copies


def _copy_bytes(graph: Graph, given: list, needs: list, shape: tuple[int, ...] | None,
                itemsize: int) -> np.ndarray | None:
    """Per (given, needed) pair, the bytes of the needed layout's tile where it differs
    from the given one; ``None`` where no pair differs."""
    if shape is None:
        return None
    rows: dict = {}
    cols: dict = {}
    row_index = [rows.setdefault(g, len(rows)) for g in given]
    col_index = [cols.setdefault(n, len(cols)) for n in needs]
    small = np.array([[tile_bytes(n, shape, itemsize, graph.mesh) if g is not None and n is not None and g != n
                       else 0.0 for n in cols] for g in rows])
    if not small.any():
        return None
    matrix = small[np.ix_(row_index, col_index)]
    matrix.flags.writeable = False
    return matrix


Found = TypeVar("Found")  # what a solve gives: a plan, and what it was planned on


def within(solve: Callable[[float], Found], peak: Callable[[Found], float], budget: float) -> Found:
    """``solve(budget)``'s plan, solved again against the budget less the excess while
    its ``peak`` exceeds ``budget`` (at most MAX_BUDGET_ROUNDS times)."""
    asked = budget
    for _ in range(MAX_BUDGET_ROUNDS):
        try:
            found = solve(asked)
        except InfeasibleError:
            if asked == budget:
                raise
            break
        over = peak(found) - budget
        if over <= 0:
            return found
        asked -= over
    raise InfeasibleError(f"no sharding plan found within the memory budget of {byte_text(budget)} per device: "
                          f"the last plan's resharded copies take it to {byte_text(budget + over)}")


def budget_message(budget: float, least: LeastMemory, devices: int, recomputed: float | None = None,
                   layered: bool = False) -> str:
    """Why no plan fits ``budget``, and what would help, with figures (lower bounds, as
    ``least`` is: each value at its smallest tile). ``recomputed``: the least memory
    with every layer's activations recomputed, where that was tried; ``layered``: the
    step has layers to recompute."""
    fixed = least.total - least.batch
    where = [f"at {least.at}"] if least.at else []
    if least.batch:
        where.append(f"{byte_text(least.batch)} of it scales with the batch")
    remedies = []
    if least.batch:
        figures = ", ".join(f"{b}: {byte_text(fixed + least.batch / b)}" for b in (2, 4, 8))
        remedies.append(f"with B micro-batches (num_micro_batches=B) or a batch B times smaller, B = {figures}")
    remedies.append(f"on twice the devices ({2 * devices}), about {byte_text(least.total / 2)}")
    if recomputed is not None:
        remedies.append(f"with every layer's activations recomputed in the backward pass, {byte_text(recomputed)}")
    elif layered:
        remedies.append("less with the layers' activations recomputed (option rematerialize=auto)")
    else:
        remedies.append("less with the layers' activations recomputed: cut the step into layers (alpa-layer-"
                        "construction before this pass, or ShardParallel's layer_option) and let the plan recompute "
                        "them (rematerialize=auto)")
    return (f"no sharding plan fits the memory budget of {byte_text(budget)} per device: the step needs at least "
            f"{byte_text(least.total)} per device" + (f" ({'; '.join(where)})" if where else "") +
            ". It would need at least: " + "; ".join(remedies) + ". Or raise the budget")
