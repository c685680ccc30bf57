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
- **Common subexpressions**: ops of one kind on the same operands with the same
  attributes are one value, as XLA's CSE makes them (the backward pass broadcasts a
  layer norm's scale and its row statistics again: one broadcast, read by the forward
  and the backward op).
- **Fusion**: an elementwise op, a broadcast, a reshape, a transpose or a slice whose
  readers are all such ops or reductions has no buffer: its readers' fusion computes it,
  and its own operands stay live until those readers run. An "expensive" one (exp, log,
  tanh, divide, ...) or a broadcast read by two or more ops is materialised, as XLA does
  not compute it again in each. Values read by matmuls, convolutions, other ops or returned are
  materialised, but a transpose only matmuls read: XLA folds it into their dimension
  numbers.
- **Buffer sharing**: a fusion or an in-place update (scatter, dynamic_update_slice)
  writes into the buffer of an operand of its size that dies there.
- **Barriers**: an ``optimization_barrier``'s results are its operands' buffers.
- **Loops**: a ``while``'s loop-carried value is one buffer, which takes its operand's
  where the operand dies at the loop (a scan's zero-filled stack of residuals). An
  in-place update in the body (a scan writing its step's slice of that stack) that
  reads the carried value, is its last reader in the body and is what the body yields
  for it writes into that buffer, as XLA's buffer assignment of a while does.
- **Reshardings**: each (value, layout) the plan reshards is a buffer from its first
  reader to its last, but a slice of each device's own tile that only fusing ops read
  (XLA slices in their fusions).
- **Sliced broadcasts**: a broadcast that every reader reads resharded to a slice of
  each device's own tile has no buffer in its own layout: XLA's partitioner slices it for
  each reader and simplifies the slice to a broadcast of that reader's tile.
- **Convolution layouts**: XLA:CPU transposes a convolution's input, kernel and output
  into its canonical layout (batch, spatial, feature; spatial, input and output
  feature), so each one not in it has a copy, live at the convolution (the backward
  pass's convolutions are the ones that are not).
- **Output buffers**: before an output is computed, its buffer (a donated argument's,
  once the argument is last read) holds temporaries that fit in it, one at a time, as
  XLA's buffer assignment reuses allocations; they are no temporaries of the heap
  (largest first, each in the smallest buffer it fits).

Measured against ``memory_analysis`` (``test/unit/test_peak_memory.py``,
``benchmarks/plan_quality.py``'s "mem predicted / XLA", ``docs/auto_sharding.md``).
"""

from __future__ import annotations

import math
from bisect import bisect_left

import numpy as np
from jax._src.lib.mlir.dialects import hlo as stablehlo

from ...dialect.sharding import tile_bytes
from ...plans.sharding_plan import PeakMemory
from .cost_graph import BARRIER, Graph, Use
from .rules import itemsize_of, shape_of

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
# A transpose only matmuls read is folded into them (XLA's transpose folding: the dot's
# dimension numbers change instead; the tied head's wte.T of a GPT-2).
FOLDED_INTO = frozenset({"dot_general"})
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
# (XLA's buffer sharing), the in-place updates, and a while's carried values (their operands').
UPDATES = frozenset({"scatter", "dynamic_update_slice"})
IN_PLACE = FUSIBLE | UPDATES | {"carry"}
# Attributes that do not make two ops compute different values (CSE): the plan's own and shardings.
IGNORED_ATTRIBUTES = ("alpa.", "mhlo.sharding", "sdy.")


def peak_memory(graph: Graph, choices: tuple[int, ...], donated: set[int]) -> PeakMemory:
    """The memory of the plan ``choices`` of ``graph``; ``donated``: the argument numbers
    (= their node numbers) whose buffers XLA reuses for a result (``tf.aliasing_output``)."""
    nodes = graph.nodes
    sizes = [float(graph.memory(node)[choices[i]]) for i, node in enumerate(nodes)]
    life = Lifetimes(graph)
    results = [i for i, node in enumerate(nodes) if node.kind == "result"]
    outputs = sum(sizes[i] for i in results) + address_table_bytes(len(results))
    reshardings = [(use, steps, _moves(graph, use, steps)) for use, steps in graph.chosen_reshardings(list(choices))]
    sliced = _sliced_broadcasts(reshardings, life)
    made = [life.made[i] and sizes[i] > 0 and i not in sliced for i in range(len(nodes))]
    buffers = _value_buffers(life, made, sizes) + _resharding_buffers(graph, reshardings, life) + \
        _layout_copies(graph, choices)
    buffers = _outside_output_buffers(buffers, _output_windows(graph, life, sizes, donated))
    live = np.zeros(len(nodes) + 1)
    for start, end, size in buffers:
        live[start] += size
        live[end + 1] -= size
    live = np.cumsum(live)[:-1]
    at = int(np.argmax(live)) if len(live) else 0
    return PeakMemory(arguments=sum(sizes[i] for i, node in enumerate(nodes) if node.kind == "argument"),
                      outputs=outputs, aliased=sum(sizes[i] for i in donated),
                      temporaries=float(live[at]) if len(live) else 0.0, at=nodes[at].label if nodes else "")


def address_table_bytes(results: int) -> float:
    """The table of buffer addresses XLA allocates for the tuple of several results."""
    return float(POINTER_BYTES * results if results > 1 else 0)


def _output_windows(graph: Graph, life: Lifetimes, sizes: list[float], donated: set[int]) -> list[list]:
    """``[bytes, first, last]`` per output buffer: the program points before its value is
    computed (for a donated argument's buffer, after the argument's last reader too)."""
    aliased = {use.dst: use.src for use in graph.uses if use.kind == "alias" and use.src in donated}
    windows = []
    for use in graph.uses:
        sink = graph.nodes[use.dst]
        if sink.kind != "result" or use.kind != "operand" or graph.nodes[use.src].kind == "argument":
            continue
        first = life.horizon[aliased[use.dst]] + 1 if use.dst in aliased else 0
        if first < use.src and sizes[use.dst] > 0:
            windows.append([sizes[use.dst], first, use.src - 1])
    return windows


def _outside_output_buffers(buffers: list[list], windows: list[list]) -> list[list]:
    """The buffers that no output buffer holds (see the module docstring)."""
    windows.sort(key=lambda w: w[0])
    bounds = [w[0] for w in windows]
    starts: list[list[int]] = [[] for _ in windows]  # of the buffers each holds, in order
    ends: list[list[int]] = [[] for _ in windows]
    rest = []
    for buffer in sorted(buffers, key=lambda b: -b[2]):
        start, end, size = buffer
        for k in range(bisect_left(bounds, size), len(windows)):
            _, first, last = windows[k]
            at = bisect_left(starts[k], start)
            if first <= start and end <= last and (at == 0 or ends[k][at - 1] < start) \
                    and (at == len(starts[k]) or end < starts[k][at]):
                starts[k].insert(at, start)
                ends[k].insert(at, end)
                break
        else:
            rest.append(buffer)
    return rest


class Lifetimes:
    """What the model knows of each node's buffer before sizes: whether it is a temporary
    of its own (``made``: an op or loop value that is neither fused into its readers nor
    returned), when it is made and its last reader (``horizon``, through fused readers)."""

    def __init__(self, graph: Graph) -> None:
        nodes = graph.nodes
        self.same = _common_subexpressions(graph)
        self.readers: list[list[int]] = [[] for _ in nodes]
        for use in graph.uses:
            if use.kind != "alias":
                self.readers[self.same[use.src]].append(use.dst)
        self.kinds = [node.op.name.removeprefix("stablehlo.") if node.kind == "op" or node.op is not None
                      and node.op.name == BARRIER else node.kind for node in nodes]
        self.horizon, self.fused = _liveness(self.kinds, self.readers, _expensive(graph, self.kinds, self.same))
        self.early = _from_arguments(graph)
        carried = _updates_of_carried_values(graph, self.kinds, self.readers)
        self.made = [node.kind in ("op", "carry") and not self.fused[i] and self.same[i] == i and not carried[i]
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


def _updates_of_carried_values(graph: Graph, kinds: list[str], readers: list[list[int]]) -> list[bool]:
    """Per node, whether it is an update (scatter, dynamic_update_slice) a ``while`` body
    yields for a loop-carried value it reads and is the last in the body to read: it
    writes into that value's buffer (see the module docstring)."""
    nodes = graph.nodes
    reads: dict[int, set[int]] = {}
    for use in graph.uses:
        if use.kind == "operand":
            reads.setdefault(use.dst, set()).add(use.src)
    found = [False] * len(nodes)
    for use in graph.uses:
        carry, update = nodes[use.dst], use.src
        if use.kind != "yield" or carry.kind != "carry" or kinds[update] not in UPDATES \
                or use.dst not in reads.get(update, ()) \
                or (nodes[update].shapes, nodes[update].itemsizes) != (carry.shapes, carry.itemsizes):
            continue
        found[update] = all(r <= update or not _inside(nodes[r].op, carry.op) for r in readers[use.dst])
    return found


def _inside(op, loop) -> bool:
    """Whether ``op`` is nested in ``loop``'s regions."""
    while op is not None and op.name != "func.func":
        op = op.parent
        if op == loop:
            return True
    return False


def _common_subexpressions(graph: Graph) -> list[int]:
    """Per node, the first node computing the same value: a fusible op of the function's
    body whose kind, operands (as their first nodes) and attributes (but the plan's own,
    ``alpa.*``, and shardings) equal an earlier one's, as XLA's CSE merges them."""
    operands: dict[int, list[tuple[int, int, int]]] = {}
    for use in graph.uses:
        if use.kind == "operand" and use.user is not None:
            operands.setdefault(use.dst, []).append((use.operand, use.src, use.result))
    same = list(range(len(graph.nodes)))
    seen: dict[tuple, int] = {}
    for i, node in enumerate(graph.nodes):
        op = node.op
        if node.kind != "op" or op.name.removeprefix("stablehlo.") not in FUSIBLE or op.regions \
                or op.parent.name != "func.func" or len(operands.get(i, ())) != len(op.operands):
            continue
        key = (op.name, tuple((same[src], result) for _, src, result in sorted(operands.get(i, ()))),
               tuple(str(r.type) for r in op.results),
               tuple((name, str(op.attributes[name])) for name in op.attributes
                     if not name.startswith(IGNORED_ATTRIBUTES)))
        same[i] = seen.setdefault(key, i)
    return same


def _expensive(graph: Graph, kinds: list[str], same: list[int]) -> list[bool]:
    """Per node, whether it is one of XLA's expensive ops (:data:`EXPENSIVE`). A broadcast
    is not where it broadcasts one element (a scalar constant's), nor where only divides
    read it, as their divisor: XLA fuses those into every reader (dividing by a broadcast
    becomes multiplying by the broadcast reciprocal)."""
    expensive = [kind in EXPENSIVE for kind in kinds]
    divisor_only = [kind == "broadcast_in_dim" for kind in kinds]
    for use in graph.uses:
        if use.kind != "operand":
            continue
        if kinds[use.dst] == "broadcast_in_dim":
            expensive[use.dst] = expensive[use.dst] and math.prod(graph.nodes[use.src].shapes[use.result]) > 1
        src = same[use.src]
        if divisor_only[src] and not (kinds[use.dst] == "divide" and use.operand == 1):
            divisor_only[src] = False
    return [costly and not divisor for costly, divisor in zip(expensive, divisor_only)]


def _liveness(kinds: list[str], readers: list[list[int]], expensive: list[bool]) -> tuple[list[int], list[bool]]:
    """Per node, the last program point that reads its value (through fused readers), and
    whether XLA fuses it into its readers."""
    fused = [kind == PASS_THROUGH or kind in FUSIBLE and bool(rs) and all(kinds[r] in FUSING_READERS for r in rs)
             and not (costly and len(set(rs)) > 1) or kind == "transpose" and bool(rs)
             and all(kinds[r] in FOLDED_INTO for r in rs) for kind, rs, costly in zip(kinds, readers, expensive)]
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


def _layout_copies(graph: Graph, choices: tuple[int, ...]) -> list[list]:
    """``[at, at, bytes]`` per convolution, of the copies XLA:CPU's convolution
    canonicalisation makes of its input, kernel and output where their dimensions are
    not in canonical order (see the module docstring), each at its tile's size."""
    buffers = []
    for i, node in enumerate(graph.nodes):
        if node.kind != "op" or node.op.name != "stablehlo.convolution":
            continue
        dn = stablehlo.ConvDimensionNumbers(node.op.attributes["dimension_numbers"])
        orders = ((dn.input_batch_dimension, *dn.input_spatial_dimensions, dn.input_feature_dimension),
                  (*dn.kernel_spatial_dimensions, dn.kernel_input_feature_dimension,
                   dn.kernel_output_feature_dimension),
                  (dn.output_batch_dimension, *dn.output_spatial_dimensions, dn.output_feature_dimension))
        strategy = node.strategies[choices[i]]
        tensors = (*zip(node.op.operands, strategy.operands), (node.op.results[0], strategy.results[0]))
        size = sum(tile_bytes(spec, shape_of(value), itemsize_of(value), graph.mesh)
                   for order, (value, spec) in zip(orders, tensors)
                   if spec is not None and list(order) != sorted(order))
        if size:
            buffers.append([i, i, size])
    return buffers


def _sliced_broadcasts(reshardings: list[tuple[Use, tuple, bool]], life: Lifetimes) -> set[int]:
    """The broadcasts with a buffer that every reader reads resharded (``reshardings``:
    ``(use, steps, moves)`` per resharded use) to a slice of each device's own tile: XLA's
    partitioner slices the broadcast for each reader and simplifies the slice to a
    broadcast of the reader's tile, so there is no buffer of the broadcast's own layout
    (the layer norm's scale broadcast replicated and read batch-split by the forward and
    the backward multiply, fused into both; the cross-entropy's zeros, replicated, that its
    gradient's scatter writes into batch-split: the resharded copy's buffer is that tile).
    The broadcast's operand, mostly an argument, is not kept until those readers."""
    slicing: dict[int, set[int]] = {}  # per broadcast, the readers that slice it
    moved: set[int] = set()  # the broadcasts some reader reshards otherwise
    for use, _, moves in reshardings:
        src = life.same[use.src]
        if life.kinds[src] != "broadcast_in_dim" or not life.made[src]:
            continue
        if moves:
            moved.add(src)
        else:
            slicing.setdefault(src, set()).add(use.dst)
    return {src for src, readers in slicing.items() if src not in moved and readers == set(life.readers[src])}


def _moves(graph: Graph, use: Use, steps: tuple) -> bool:
    """Whether the resharding ``steps`` of ``use``'s value moves data (is more than each
    device slicing its own tile)."""
    node = graph.nodes[use.src]
    return any(graph.resharding_collectives(given, need, node.shapes[use.result], node.itemsizes[use.result])
               for given, need in steps)


def _resharding_buffers(graph: Graph, reshardings: list[tuple[Use, tuple, bool]], life: Lifetimes) -> list[list]:
    """``[start, end, bytes]`` of every resharded copy (``reshardings``: ``(use, steps,
    moves)`` per resharded use), one per (value, layout) as annotate_plan makes it, from
    just before its first reader (where a scheduler that saves memory puts it; from the
    start for a value made there) to its last. A copy that moves nothing (each device's
    tile a slice of its own) has no buffer where only fusing ops read it: XLA slices
    inside their fusions."""
    readers: dict[tuple, list[int]] = {}
    moved: dict[tuple, bool] = {}
    for use, steps, moves in reshardings:
        if life.kinds[use.dst] == "result":
            continue
        key = (use.src, use.result, steps[-1][1])
        readers.setdefault(key, []).append(use.dst)
        moved[key] = moved.get(key, False) or moves
    buffers = []
    for (src, result, layout), at in readers.items():
        if not moved[(src, result, layout)] and all(life.kinds[r] in FUSING_READERS for r in at):
            continue
        node = graph.nodes[src]
        size = tile_bytes(layout, node.shapes[result], node.itemsizes[result], graph.mesh)
        buffers.append([0 if life.early[src] else min(at),
                        max(life.horizon[r] if life.fused[r] else r for r in at), size])
    return buffers
