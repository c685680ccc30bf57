"""The plan's memory per device, as XLA's buffer assignment allocates it.

XLA reports a compiled program's memory (``compiled.memory_analysis()``) as its
arguments, plus its outputs, less the outputs that reuse a donated argument's buffer,
plus its temporaries: the largest sum of buffers live at one point of its schedule.
:func:`peak_memory` predicts the same four figures for a plan from the cost graph and
the chosen algorithms, each value at the size of its tile (Table 1). Arguments,
outputs (with the tuple's table of addresses) and donated buffers are exact; the
temporaries model what XLA:CPU does with a training step:

- **Schedule**: program order, which XLA keeps for a step's dependent chain; a buffer
  lives from the op that makes it to its last reader.
- **Fusion**: an elementwise op, a broadcast, a reshape, a transpose or a slice whose
  readers are all such ops or reductions has no buffer: its readers' fusion computes it,
  and its own operands stay live until those readers run. An "expensive" one (exp, log,
  tanh, divide, ...) or a broadcast read by two or more ops is materialised, as XLA does
  not compute it again in each. Values read by matmuls, convolutions, other ops or returned are
  materialised.
- **Buffer sharing**: a fusion or an in-place update (scatter, dynamic_update_slice)
  writes into the buffer of an operand of its size that dies there.
- **Barriers**: an ``optimization_barrier``'s results are its operands' buffers.
- **Reshardings**: each (value, layout) the plan reshards is a buffer from its first
  reader to its last.

Measured against ``memory_analysis`` (``test/unit/test_peak_memory.py``,
``benchmarks/plan_quality.py``'s "mem predicted / XLA", ``docs/auto_sharding.md``).
"""

from __future__ import annotations

import numpy as np

from ...dialect.sharding import tile_bytes
from ...plans.sharding_plan import PeakMemory
from .cost_graph import BARRIER, Graph

# A tuple of results holds one address per element.
POINTER_BYTES = 8
# Ops XLA's loop fusion computes inside their readers (stablehlo names, without the prefix).
FUSIBLE = frozenset({
    "abs", "add", "and", "atan2", "bitcast_convert", "broadcast_in_dim", "cbrt", "ceil", "clamp", "compare",
    "complex", "concatenate", "constant", "convert", "cosine", "divide", "exponential", "exponential_minus_one",
    "floor", "imag", "iota", "is_finite", "log", "log_plus_one", "logistic", "maximum", "minimum", "multiply",
    "negate", "not", "or", "pad", "popcnt", "power", "real", "reduce_precision", "remainder", "reshape", "reverse",
    "round_nearest_afz", "round_nearest_even", "rsqrt", "select", "shift_left", "shift_right_arithmetic",
    "shift_right_logical", "sign", "sine", "slice", "sqrt", "subtract", "tan", "tanh", "transpose", "xor",
})
# Readers a fusible producer fuses into: other fusible ops and reductions (input fusion).
FUSING_READERS = FUSIBLE | {"reduce"}
# Fusible ops XLA does not compute again in each of several readers (its "expensive" ops,
# and broadcasts, which XLA:CPU makes a buffer of their own): read by two or more ops,
# their value is materialised (softmax's exp: its sum and its normalisation read it; the
# causal mask broadcast to the scores' shape: the forward and the backward select).
EXPENSIVE = frozenset({"atan2", "broadcast_in_dim", "cbrt", "cosine", "divide", "exponential",
                       "exponential_minus_one", "log", "log_plus_one", "logistic", "power", "remainder", "rsqrt",
                       "sine", "sqrt", "tan", "tanh"})
# An optimization barrier's results are its operands' buffers (jax.checkpoint's fence,
# which XLA deletes before it fuses): its operands live while its results are read.
PASS_THROUGH = "optimization_barrier"
# Ops whose output may take the buffer of an operand of its size that dies there: fusions
# (XLA's buffer sharing) and the in-place updates.
IN_PLACE = FUSIBLE | {"scatter", "dynamic_update_slice"}


def peak_memory(graph: Graph, choices: tuple[int, ...], donated: set[int]) -> PeakMemory:
    """The memory of the plan ``choices`` of ``graph``; ``donated``: the argument numbers
    (= their node numbers) whose buffers XLA reuses for a result (``tf.aliasing_output``)."""
    nodes = graph.nodes
    sizes = [float(graph.memory(node)[choices[i]]) for i, node in enumerate(nodes)]
    life = Lifetimes(graph)
    results = [i for i, node in enumerate(nodes) if node.kind == "result"]
    # Several results are a tuple, whose table of buffer addresses XLA allocates too.
    outputs = sum(sizes[i] for i in results) + (POINTER_BYTES * len(results) if len(results) > 1 else 0)
    made = [life.made[i] and sizes[i] > 0 for i in range(len(nodes))]
    buffers = _value_buffers(life, made, sizes) + _resharding_buffers(graph, choices, life)
    live = np.zeros(len(nodes) + 1)
    for start, end, size in buffers:
        live[start] += size
        live[end + 1] -= size
    live = np.cumsum(live)[:-1]
    at = int(np.argmax(live)) if len(live) else 0
    return PeakMemory(arguments=sum(sizes[i] for i, node in enumerate(nodes) if node.kind == "argument"),
                      outputs=outputs, aliased=sum(sizes[i] for i in donated),
                      temporaries=float(live[at]) if len(live) else 0.0, at=nodes[at].label if nodes else "")


class Lifetimes:
    """What the model knows of each node's buffer before sizes: whether it is a temporary
    of its own (``made``: an op or loop value that is neither fused into its readers nor
    returned), when it is made and its last reader (``horizon``, through fused readers)."""

    def __init__(self, graph: Graph) -> None:
        nodes = graph.nodes
        self.readers: list[list[int]] = [[] for _ in nodes]
        for use in graph.uses:
            if use.kind != "alias":
                self.readers[use.src].append(use.dst)
        self.kinds = [node.op.name.removeprefix("stablehlo.") if node.kind == "op" or node.op is not None
                      and node.op.name == BARRIER else node.kind for node in nodes]
        self.horizon, self.fused = _liveness(self.kinds, self.readers)
        self.early = _from_arguments(graph)
        self.made = [node.kind in ("op", "carry") and not self.fused[i]
                     and any(shape is not None for shape in node.shapes)
                     and not any(self.kinds[r] == "result" for r in self.readers[i]) for i, node in enumerate(nodes)]
        # In place (by shape, as the ILP's rows see it): an op that may write into the buffer
        # of a temporary of its type that dies there; that buffer covers the op's own point.
        self.in_place = [False] * len(nodes)
        ending: dict[int, list[int]] = {}
        for i, node in enumerate(nodes):
            if not self.made[i]:
                continue
            kind = (node.shapes, node.itemsizes)
            same = [j for j in ending.get(i, ()) if (nodes[j].shapes, nodes[j].itemsizes) == kind]
            if self.kinds[i] in IN_PLACE and same:
                ending[i].remove(same[0])
                self.in_place[i] = True
            ending.setdefault(self.horizon[i], []).append(i)

    def start(self, node: int) -> int:
        return 0 if self.early[node] else node


def _liveness(kinds: list[str], readers: list[list[int]]) -> tuple[list[int], list[bool]]:
    """Per node, the last program point that reads its value (through fused readers), and
    whether XLA fuses it into its readers."""
    fused = [kind == PASS_THROUGH or kind in FUSIBLE and bool(rs) and all(kinds[r] in FUSING_READERS for r in rs)
             and not (kind in EXPENSIVE and len(set(rs)) > 1) for kind, rs in zip(kinds, readers)]
    horizon = list(range(len(kinds)))
    for i in reversed(range(len(kinds))):
        for r in readers[i]:
            horizon[i] = max(horizon[i], horizon[r] if fused[r] else r)
    return horizon, fused


def _from_arguments(graph: Graph) -> list[bool]:
    """Per node, whether it computes from arguments and constants without a matmul or
    convolution on the way. XLA's schedule makes such values first (the one-hot gradient
    of a cross-entropy, a scatter of the labels as wide as the logits, is made before the
    forward pass), so their buffers live from the program's start."""
    sources: list[list[int]] = [[] for _ in graph.nodes]
    for use in graph.uses:
        if use.kind == "operand":
            sources[use.dst].append(use.src)
    early = []
    for i, node in enumerate(graph.nodes):
        early.append(node.kind == "argument" or node.kind == "op" and not node.heavy
                     and all(early[s] for s in sources[i]))
    return early


def _value_buffers(life: Lifetimes, made: list[bool], sizes: list[float]) -> list[list]:
    """``[start, end, bytes]`` of the temporaries ``made``. A fusion or an in-place update
    writes into the buffer of an operand of its size that dies there (XLA's buffer
    sharing): that buffer lives on instead of a new one."""
    buffers: list[list] = []
    ending: dict[int, list[list]] = {}
    for i, kind in enumerate(life.kinds):
        if not made[i]:
            continue
        end = life.horizon[i]
        shared = next((b for b in ending.get(i, ()) if b[2] == sizes[i]), None) if kind in IN_PLACE else None
        if shared is not None:
            ending[i].remove(shared)
            shared[1] = end
            ending.setdefault(end, []).append(shared)
            continue
        buffer = [life.start(i), end, sizes[i]]
        buffers.append(buffer)
        ending.setdefault(end, []).append(buffer)
    return buffers


def _resharding_buffers(graph: Graph, choices: tuple[int, ...], life: Lifetimes) -> list[list]:
    """``[start, end, bytes]`` of every resharded copy, one per (value, layout) as
    annotate_plan makes it, from just before its first reader (where a scheduler that saves
    memory puts it) to its last."""
    readers: dict[tuple, list[int]] = {}
    for use, steps in graph.chosen_reshardings(list(choices)):
        if life.kinds[use.dst] != "result":
            readers.setdefault((use.src, use.result, steps[-1][1]), []).append(use.dst)
    buffers = []
    for (src, result, layout), at in readers.items():
        node = graph.nodes[src]
        size = tile_bytes(layout, node.shapes[result], node.itemsizes[result], graph.mesh)
        buffers.append([min(at), max(life.horizon[r] if life.fused[r] else r for r in at), size])
    return buffers
