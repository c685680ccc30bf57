"""Rematerialisation chosen with the plan: which layers ``alpa-rematerialize`` recomputes.

Under a memory budget that no plan of the step meets, the planner recomputes layers'
activations in the backward pass instead of keeping them (``rematerialize=auto``),
as Mist and Galvatron choose checkpointing jointly with sharding. The candidates are
whole programs: ``alpa-rematerialize``'s rewrite of ``@main`` for a set of layers,
planned by the ILP like any step. Its clones are ops of the cost graph, so their
memory is in the memory rows as XLA will allocate it (the kept activations die in the
forward pass; the recomputed ones live from the clone to the backward reader), their
FLOPs are in the objective (``flop_cost`` bytes' time on the mesh's fastest axis per FLOP
each device computes again) and the collectives they need are priced as any op's.

The search plans at most three programs: the step as it is; every layer recomputed
(if even that does not fit, no plan does: the error says what the step needs with and
without); and the fewest first layers that the lower bounds say fit, where the
budget less what full recompute's plan holds above its bound leaves room. The cheaper
of the last two plans in Eq. 1 + recompute FLOPs wins: recomputing fewer layers costs
fewer FLOPs, but may leave the ILP less room for cheap layouts. The first layers are
recomputed first: their activations are kept longest (the backward pass reaches them
last), while the last layer's backward reads its activations at once.

``rematerialize=all`` recomputes every layer, as Alpa's ``remat_layer=True`` does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

from jax._src.lib.mlir import ir

from ..schedule.rematerialize import rematerialize
from . import ilp
from .cost_graph import Graph
from .memory_rows import budget_message, least_memory
from .peak_memory import peak_memory


class Attempt(NamedTuple):
    """A program planned: its function, cost graph and donated arguments, and its plan
    (``solution`` None where none fits the memory budget: ``error`` says why)."""
    func: ir.Operation
    graph: Graph
    donated: set[int]
    solution: ilp.Solution | None
    error: str = ""
    recomputed: tuple[int, ...] = ()


class RematerializationError(ValueError):
    """No plan fits the memory budget, with or without recompute."""


def choose_rematerialization(func: ir.Operation, attempt: Callable[[ir.Operation], Attempt | None],
                             layers: Sequence[int], mode: str, budget: float) -> Attempt | None:
    """The plan of ``func`` or of its rewrite with some ``layers`` recomputed (``mode``:
    none, auto or all; see the module docstring). ``attempt`` plans a function (None
    after an error it reported). The function planned replaces ``func`` in its module."""
    if mode == "all":
        return _fitted(_adopt(func, _rematerialized(func, layers, attempt)), budget)
    first = attempt(func)
    if first is None or first.solution is not None or mode == "none" or not layers:
        if first is not None and first.solution is None:
            raise RematerializationError(_message(first, budget, None, bool(layers)))
        return first
    full = _rematerialized(func, layers, attempt)
    if full is None or full.solution is None:
        if full is None:
            return None
        message = _message(first, budget, full, True)  # before the graph's ops go
        full.func.erase()
        raise RematerializationError(message)
    fewest = _fewest_layers(first, full, len(layers), budget)
    best = full
    if fewest < len(full.recomputed):  # the last layer is never recomputed: all but it is full recompute
        partial = _rematerialized(func, layers[:fewest], attempt)
        if partial is not None and partial.solution is not None and \
                partial.solution.objective <= full.solution.objective:
            best = partial
        for loser in (partial, full):
            if loser is not None and loser is not best:
                loser.func.erase()
    return _adopt(func, best)


def _rematerialized(func: ir.Operation, layers: Sequence[int], attempt: Callable) -> Attempt | None:
    """``attempt`` of a copy of ``func`` (beside it in its module) with ``layers`` recomputed."""
    copy = func.clone(ip=ir.InsertionPoint(func))
    recomputed = rematerialize(copy, layers)
    planned = attempt(copy)
    if planned is None:
        copy.erase()
        return None
    return planned._replace(recomputed=recomputed)


def _adopt(func: ir.Operation, planned: Attempt | None) -> Attempt | None:
    """The copy ``planned`` stands in for ``func``, which goes."""
    if planned is not None and planned.func is not func:
        func.erase()
    return planned


def _fitted(planned: Attempt | None, budget: float) -> Attempt | None:
    if planned is not None and planned.solution is None:
        raise RematerializationError(_message(planned, budget, None, True))
    return planned


def _fewest_layers(first: Attempt, full: Attempt, count: int, budget: float) -> int:
    """How many first layers to recompute so that the lower bounds fit the budget, scaled by
    how far full recompute's plan sits above its own bound."""
    bound = least_memory(first.graph, first.donated).total
    bound_full = least_memory(full.graph, full.donated).total
    held = peak_memory(full.graph, full.solution.choices, full.donated).total
    target = budget * bound_full / max(held, bound_full)
    if bound <= bound_full:
        return count
    return max(1, min(count, math.ceil(count * (bound - target) / (bound - bound_full))))


def _message(first: Attempt, budget: float, full: Attempt | None, layered: bool) -> str:
    """Why no plan fits: ``budget_message`` of the step as it is, with the least memory
    of every layer recomputed where that was tried."""
    least = least_memory(first.graph, first.donated)
    recomputed = least_memory(full.graph, full.donated).total if full is not None else None
    text = budget_message(budget, least, first.graph.mesh.size, recomputed, layered)
    return f"{text} ({first.error})" if first.error and "memory budget" not in first.error else text
