"""Operator clustering (Sec. 5.2, "Performance optimization #2"), independent of MLIR.

The ops ``o_1 .. o_K`` (program order) are cut into ``L`` contiguous layers so that
the most data any layer receives from earlier layers is minimal, subject to every
layer's FLOPs staying within ``(1 + delta)`` of the average:

    G(k, r) = min_{1 <= i <= k} { max(G(i-1, r-1), C(i, k))
                                  | FLOP(o_i .. o_k) <= (1 + delta) FLOP_total / L }

``C(i, k)`` is "the total size of inputs of (o_i, ..., o_k) received from
(o_1, ..., o_{i-1})": every value produced by an op before ``o_i`` and read by at least
one op of ``o_i .. o_k`` counts once, however many ops of the layer read it. Function
arguments are not produced by any op and never count. Among the clusterings with the
optimal ``G(K, L)``, the one with the least variance of per-layer FLOPs wins.

Exactness. A lexicographic (max, variance) DP is not exact: a prefix with a larger
max but a smaller variance can win once a later layer dominates the max. So the
clustering is solved in two exact passes: the G recurrence above gives ``G* = G(K, L)``;
then a second DP minimises ``sum_l FLOP(l)^2`` over clusterings whose layers all
receive at most ``G*`` (exactly the clusterings with max ``G*``). With ``L`` and the
FLOP total fixed, ``Var = sum_l FLOP(l)^2 / L - mean^2``, so this minimises the variance.

Speed (K ~ 10^4 ops). Layers may only start at op 0, after a mandatory cut (user
``mark_pipeline_boundary``) or after a caller-given candidate op; with no candidates
every position is allowed and the result is the exact optimum over all clusterings.
With ``n`` allowed positions, ``E`` (value, consumer) pairs and ``w`` the longest run of
positions a layer can span under the FLOP bound, ``C`` is built in O(E + n w) (a
difference array over, per value, the span of layer starts for which each consumer is
its first reader) and each DP pass costs O(L n w) with numpy over ``n`` -- instead of
the paper's O(K^2 L). Nothing is approximated besides the candidate restriction.
Long zero-FLOP stretches widen ``w`` (up to ``n``); byte counts add up in float64, exact
for integral counts below 2^53.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

# Sec. 5.2 leaves delta unstated; 0.6 is the default of the authors' implementation.
DEFAULT_DELTA = 0.6
# Relative slack on the FLOP bound, so a layer that meets it up to rounding passes.
FLOP_SLACK = 1e-9


@dataclass(frozen=True)
class Value:
    """A value made by op ``producer`` and read by ops ``consumers`` (all later ops)."""

    producer: int
    consumers: tuple[int, ...]
    nbytes: float


@dataclass(frozen=True)
class Clustering:
    """The layers ``l_1 .. l_L`` of Sec. 5.2: layer ``l`` is ops ``[starts[l], starts[l+1])``."""

    starts: tuple[int, ...]  # first op of each layer; starts[0] == 0
    num_ops: int
    layer_flops: tuple[float, ...]
    layer_received: tuple[float, ...]  # C(i, k) of each layer
    max_received: float  # G(K, L)
    flop_variance: float  # population variance of layer_flops

    @property
    def layer_of_op(self) -> tuple[int, ...]:
        """The layer id of every op."""
        ends = (*self.starts[1:], self.num_ops)
        return tuple(layer for layer, (s, e) in enumerate(zip(self.starts, ends)) for _ in range(s, e))


class ClusteringInfeasibleError(ValueError):
    """No clustering into ``num_layers`` layers meets the FLOP bound of Sec. 5.2."""

    def __init__(self, message: str, delta: float, required_delta: float) -> None:
        super().__init__(message)
        self.delta = delta
        self.required_delta = required_delta  # math.inf: no delta helps


def cluster_operators(
    flops: Sequence[float],
    values: Iterable[Value | tuple[int, int, float]],
    num_layers: int,
    *,
    delta: float = DEFAULT_DELTA,
    boundaries: Iterable[int] = (),
    candidates: Iterable[int] | None = None,
) -> Clustering:
    """Cluster ops into ``num_layers`` layers by the DP of Sec. 5.2.

    Args:
      flops: FLOPs of each op, in program order.
      values: the dataflow; a ``(src, dst, nbytes)`` triple is a value read by one op.
      num_layers: ``L``.
      delta: each layer's FLOPs must be at most ``(1 + delta) * FLOP_total / L``.
      boundaries: ops after which a cut is mandatory (user boundaries win).
      candidates: ops after which a cut is allowed; ``None`` allows all.
    """
    flop = np.asarray(flops, dtype=np.float64)
    num_ops = len(flop)
    if num_ops == 0 or num_layers < 1 or delta < 0:
        raise ValueError("operator clustering needs at least one op, num_layers >= 1 and delta >= 0")
    if not np.all(np.isfinite(flop)) or np.any(flop < 0):
        raise ValueError("op FLOPs must be finite and non-negative")
    mandatory = _cut_set(boundaries, num_ops, "boundary")
    allowed = set(range(num_ops - 1)) if candidates is None else _cut_set(candidates, num_ops, "candidate")
    starts = np.array([0, *sorted(c + 1 for c in allowed | mandatory)], dtype=np.int64)
    n = len(starts)  # positions 0..n-1 start a layer; position n is the end of the program
    forced = np.zeros(n + 1, dtype=bool)
    forced[0] = forced[n] = True
    forced[np.searchsorted(starts, [c + 1 for c in mandatory])] = True
    prefix = np.concatenate([[0.0], np.cumsum(flop)])[np.append(starts, num_ops)]
    total = float(prefix[-1])
    bound = (1 + delta) * total / num_layers * (1 + FLOP_SLACK)

    # lo[b]: the earliest start of a layer ending at position b (FLOP bound, no forced cut inside).
    ends = np.arange(n + 1)
    last_forced = np.maximum.accumulate(np.where(forced, ends, 0))
    lo = np.maximum(np.searchsorted(prefix, prefix - bound, side="left"), np.append(0, last_forced[:-1]))
    width = max(1, int(np.max(ends[1:] - lo[1:])))
    span = range(1, width + 1)
    # received[d-1, a] = C of the layer of positions a..a+d-1; inf where that layer is not allowed.
    received = _received_bytes(values, starts, num_ops, width)
    for d in span:
        row = received[d - 1]
        row[n + 1 - d :] = np.inf
        row[: n + 1 - d][lo[d:] > ends[: n + 1 - d]] = np.inf

    # The G(k, r) recurrence of Sec. 5.2, over layer lengths d (in positions).
    g = np.full(n + 1, np.inf)
    g[0] = 0.0
    for _ in range(num_layers):
        g_next = np.full(n + 1, np.inf)
        for d in span:
            np.minimum(g_next[d:], np.maximum(g[: n + 1 - d], received[d - 1, : n + 1 - d]), out=g_next[d:])
        g = g_next
    best = float(g[n])
    if math.isinf(best):
        needed = _required_delta(prefix, forced, num_layers, total)
        hint = f"delta >= {needed:.4g}" if math.isfinite(needed) else "more cut positions or fewer layers"
        raise ClusteringInfeasibleError(
            f"operator clustering: no way to cut {num_ops} ops into {num_layers} layers with every layer's "
            f"FLOPs <= (1 + delta) * average at delta = {delta} (Sec. 5.2); it needs {hint}",
            delta,
            needed,
        )

    layer_starts = _balanced_layers(prefix, received, best, num_layers)
    bounds = (*layer_starts, n)
    per_layer = tuple(float(prefix[e] - prefix[s]) for s, e in zip(bounds, bounds[1:]))
    return Clustering(
        starts=tuple(int(starts[s]) for s in layer_starts),
        num_ops=num_ops,
        layer_flops=per_layer,
        layer_received=tuple(float(received[e - s - 1, s]) for s, e in zip(bounds, bounds[1:])),
        max_received=best,
        flop_variance=float(np.var(per_layer)),
    )


def _balanced_layers(prefix: np.ndarray, received: np.ndarray, best: float, num_layers: int) -> list[int]:
    """Ties in G: the layers (their first positions) of least sum of squared normalised
    FLOPs among those whose every layer receives at most ``best`` = G*. ``prefix``: FLOPs
    before each position; ``received[d-1, a]``: C of the layer of positions a..a+d-1."""
    n = len(prefix) - 1
    total = float(prefix[-1])
    avg = total / num_layers if total > 0 else 1.0
    cost = np.full(n + 1, np.inf)
    cost[0] = 0.0
    choice = np.zeros((num_layers, n + 1), dtype=np.int64)
    for r in range(num_layers):
        cost_next = np.full(n + 1, np.inf)
        for d in range(1, received.shape[0] + 1):
            layer_flop = (prefix[d:] - prefix[: n + 1 - d]) / avg
            square = np.where(received[d - 1, : n + 1 - d] <= best, layer_flop * layer_flop, np.inf)
            cand = cost[: n + 1 - d] + square
            better = cand < cost_next[d:]
            np.copyto(cost_next[d:], cand, where=better)
            np.copyto(choice[r, d:], d, where=better)
        cost = cost_next
    layer_starts: list[int] = []
    b = n
    for r in reversed(range(num_layers)):
        b -= int(choice[r, b])
        layer_starts.append(b)
    layer_starts.reverse()
    return layer_starts


def equal_operator_layers(num_ops: int, num_layers: int) -> tuple[int, ...]:
    """Sec. 8.3's "equal operator" baseline: the layer of each of ``num_ops`` ops when every
    layer holds as many ops (up to one), whatever their FLOPs and the bytes they send."""
    if num_layers < 1 or num_ops < num_layers:
        raise ValueError(f"{num_ops} ops cannot form {num_layers} non-empty layers")
    return tuple(k * num_layers // num_ops for k in range(num_ops))


def _cut_set(ops: Iterable[int], num_ops: int, what: str) -> set[int]:
    cuts = {int(op) for op in ops}
    bad = sorted(c for c in cuts if not 0 <= c < num_ops - 1)
    if bad:
        raise ValueError(f"layer {what} after op {bad[0]}: cuts go after ops 0..{num_ops - 2}")
    return cuts


def _received_bytes(
    values: Iterable[Value | tuple[int, int, float]], starts: np.ndarray, num_ops: int, width: int
) -> np.ndarray:
    """``C`` for every layer of at most ``width`` positions: ``[d-1, a]`` is positions a..a+d-1.

    A value read by ops ``c_1 < .. < c_m`` and made by ``p`` is received by the layer
    starting at position ``a`` iff its first reader at or after ``starts[a]`` lies in the
    layer. Reader ``c_j`` is that first reader for the starts in ``(c_{j-1}, c_j]``
    (``c_0 = p``); positions ``A1..A2`` in that range all see it in position ``A2``.
    """
    anchors: list[int] = []
    readers: list[int] = []
    sizes: list[float] = []
    for value in values:
        if not isinstance(value, Value):
            src, dst, nbytes = value
            value = Value(int(src), (int(dst),), float(nbytes))
        uses = sorted(set(value.consumers))
        if not uses or not 0 <= value.producer < uses[0] or uses[-1] >= num_ops or value.nbytes < 0:
            raise ValueError(f"value {value}: needs 0 <= producer < consumers < {num_ops} and nbytes >= 0")
        anchors += [value.producer, *uses[:-1]]
        readers += uses
        sizes += [float(value.nbytes)] * len(uses)
    n = len(starts)
    first = np.searchsorted(starts, np.asarray(anchors, dtype=np.int64), side="right")  # A1
    last = np.searchsorted(starts, np.asarray(readers, dtype=np.int64), side="right") - 1  # A2
    size = np.asarray(sizes, dtype=np.float64)
    keep = first <= last
    first, last, size = first[keep], last[keep], size[keep]
    # table[t, j]: bytes first seen at position j by the layer starting at j - t, built as
    # a difference array over t (t in [0, A2 - A1] gets the value), in place to save memory.
    table = np.zeros((width + 1, n))
    np.add.at(table[0], last, size)
    tail = last - first + 1
    cut = tail < width
    np.add.at(table, (tail[cut], last[cut]), -size[cut])
    table = table[:width]
    np.cumsum(table, axis=0, out=table)
    for t in range(1, width):  # re-index by the layer's start a = j - t
        table[t, : n - t] = table[t, t:].copy()
        table[t, n - t :] = 0.0
    return np.cumsum(table, axis=0, out=table)  # C(a, a + d) sums t < d


def _required_delta(prefix: np.ndarray, forced: np.ndarray, num_layers: int, total: float) -> float:
    """The least delta admitting ``num_layers`` layers (bisection on the FLOP bound)."""
    n = len(prefix) - 1
    forced_at = np.flatnonzero(forced)

    def fewest_layers(bound: float) -> float:
        a, count = 0, 0
        while a < n:
            reach = int(np.searchsorted(prefix, prefix[a] + bound, side="right")) - 1
            b = min(reach, int(forced_at[np.searchsorted(forced_at, a, side="right")]))
            if b <= a:
                return math.inf
            a, count = b, count + 1
        return count

    # Fewer layers than L can always be split further (FLOPs are non-negative) while n >= L.
    if n < num_layers or fewest_layers(total) > num_layers or total == 0:
        return math.inf
    low, high = 0.0, total
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (low, mid) if fewest_layers(mid) <= num_layers else (mid, high)
    return max(0.0, high * num_layers / total - 1)
