"""Repeated layers solved once: nodes of Eq. 1 whose neighbourhoods look alike share one choice.

A model of ``L`` identical layers gives a cost graph of ``L`` copies of one layer's
nodes, with equal strategy costs and equal resharding matrices. Its ILP is ``L``
times larger than one layer's, and HiGHS's simplex time grows faster than that
(GPT-3 1.3B, 24 layers, (2, 4): 28 s of a 40 s plan). Interior layers see the same
neighbourhood, so their optimal choices coincide; :func:`repeated_classes` finds such
nodes without knowing what a layer is, by colour refinement (1-dimensional
Weisfeiler-Lehman) of the cost graph: a node's colour starts as its cost vector and
becomes, round after round, its colour with the multiset of (resharding matrix,
neighbour colour) around it. After ``rounds`` rounds two nodes share a colour when
their neighbourhoods of that radius are equal, costs and matrices included. Layers
near the ends of the stack (the embedding, the loss) differ within that radius and
keep choices of their own.

:func:`tie` builds the graph whose nodes are the classes: a class's cost is the sum of
its members', an edge between members of two classes adds to the edge between the
classes, an edge inside a class is paid on its diagonal (both ends pick the same
strategy). Every plan of the tied graph is a plan of the original with the same
Eq. 1, so the tied optimum bounds the original's from above; ``ilp.solve`` then
improves it one node at a time on the original graph (``local_search``). Tests
compare it with the untied optimum on small models; the benchmarks, on the large ones.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from .ilp_graph import Edges, add_edge

# Rounds of refinement: the radius within which tied nodes look alike; the layers within
# that many hops of the stack's ends keep choices of their own. With 4, the tied ILP of a
# GPT-3 1.3B step stops growing at 381 nodes from 8 layers on (benchmarks/ilp_scaling.py --tie).
TIE_ROUNDS = 4
# Equal-coloured nodes are tied only every PERIOD-th one in program order: identical
# layers need not take identical plans. A stack of equal matmuls alternates column- and
# row-split weights (Megatron's pairs); tying all layers cost a 12-layer MLP training
# step on (2, 4) 4% more than the untied optimum, tying every second one nothing.
TIE_PERIOD = 2


def repeated_classes(costs: dict[int, np.ndarray], edges: Edges, rounds: int = TIE_ROUNDS,
                     period: int = TIE_PERIOD) -> dict[int, int]:
    """Each node's class: its representative, the smallest node of its class. A class is
    the nodes of one colour after ``rounds`` rounds whose ranks among that colour's nodes
    (in node order: program order) are equal modulo ``period``. An unrolled loop puts one
    node of each colour per layer in layer order (backward: reversed), so a class holds
    every ``period``-th layer's node, and plans of that period stay possible."""
    labels: dict[bytes, int] = {}

    def label(array: np.ndarray) -> int:
        return labels.setdefault(array.shape.__repr__().encode() + array.tobytes(), len(labels))

    around: dict[int, list[tuple[int, int]]] = defaultdict(list)  # node -> (matrix as it sees it, neighbour)
    for (a, b), r in edges.items():
        around[a].append((label(r), b))
        around[b].append((label(r.T), a))
    colour = {v: label(np.asarray(c, dtype=float)) for v, c in costs.items()}
    for _ in range(rounds):
        seen: dict[tuple, int] = {}
        refined = {v: seen.setdefault((colour[v], tuple(sorted((m, colour[u]) for m, u in around[v]))), len(seen))
                   for v in costs}
        if len(seen) == len(set(colour.values())):  # nothing split: the partition is stable
            break
        colour = refined
    rank: dict[int, int] = defaultdict(int)
    first: dict[tuple[int, int], int] = {}
    classes = {}
    for v in sorted(costs):
        key = colour[v], rank[colour[v]] % period
        rank[colour[v]] += 1
        classes[v] = first.setdefault(key, v)
    return classes


def tie(costs: dict[int, np.ndarray], edges: Edges, classes: dict[int, int]) -> tuple[dict[int, np.ndarray], Edges]:
    """The cost graph of the classes (see the module docstring); nodes keep their representatives' numbers."""
    tied: dict[int, np.ndarray] = {}
    for v, cost in costs.items():
        c = classes[v]
        tied[c] = tied[c] + cost if c in tied else np.asarray(cost, dtype=float)
    tied_edges: Edges = {}
    for (a, b), r in edges.items():
        ca, cb = classes[a], classes[b]
        if ca == cb:  # both ends pick the class's one strategy
            tied[ca] = tied[ca] + np.diagonal(r)
        else:
            add_edge(tied_edges, ca, cb, r)
    return tied, tied_edges
