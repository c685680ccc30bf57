"""The inter-operator stage/mesh DP (Sec. 5.2, Eq. 2-5, Algorithm 1), independent of MLIR.

The model is a sequence of ``L`` layers (after operator clustering). A stage is a layer range ``[i, j)``
run on one submesh shape ``(n, m)`` of the ``N x M`` cluster, viewed as one of ``P`` logical meshes.
:class:`StageCosts` holds what the intra-op pass profiled for every (range, submesh, logical mesh): the
latency ``t_l`` and the per-device memory of weights and optimizer state (``mem_stage``) and of one
micro-batch's activations (``mem_act``). A layer already holds its forward and its backward operators
(Sec. 5.1 colocates them; the caller clusters them together), so latencies are forward plus backward and
nothing here tells the two apart. :func:`solve_stage_dp` returns the :class:`StagePlan` minimising

    T* = sum_i t_i + (B - 1) * max_j t_j                                                 (Eq. 2)

(or its interleaved form, :func:`pipeline_latency`) over every slicing of the layers into consecutive
stages whose submeshes hold exactly ``N * M`` devices.

1. ``t_intra(stage, submesh, s)`` (Algorithm 1, lines 8-21): the fastest logical mesh that fits Eq. 5,
   ``mem_stage + s * mem_act <= mem_device``, where ``s`` counts the stages from this one to the last
   (1F1B keeps ``s`` micro-batches in flight). It changes with ``s`` at a few points only; the table
   keeps levels ``s = 1 .. C`` (``C`` the last change) and larger ``s`` read level ``C``. Interleaved
   1F1B keeps more in flight, and how many depends on the number of meshes ``S`` too
   (:func:`interleaved_in_flight`): its DP runs once per ``S``.
2. For a bound ``t_max``, Eq. 3 runs backwards from the last layer: ``F(s, k, d)`` is the least sum of
   stage latencies slicing layers ``k .. L-1`` into ``s`` stages on ``d`` devices, each stage at most
   ``t_max``; ``Sigma(t_max) = min_s F(s, 0, N*M)`` is the first term of Eq. 4. We run it as a shortest
   path, one level per ``s``, over the states ``(k, d)`` where layers ``k .. L-1`` fit ``d`` devices and
   layers ``0 .. k-1`` the other ``N*M - d`` within ``t_max`` -- a narrow band near the optimal ``t_max``.
3. Algorithm 1 tries ``t_max`` over the sorted distinct ``t_intra`` values, skips those within ``epsilon``
   of the last one, and stops once ``B * t_max >= T*``. ``Sigma`` only falls as ``t_max`` grows, so we
   also skip every ``t_max`` between two evaluated ones with the same ``Sigma`` or whose lower bound
   cannot beat ``T*``, bisecting the rest; ``early_pruning=False`` evaluates them all.

Complexity. One DP costs ``O(S * L^2 * K * NM)`` at worst (``S = min(L, NM)`` levels, ``K = O(N + log M)``
submeshes): the paper's ``O(L^3 NM (N + log M))``; on the band it is far less. There are ``O(L^2 K P)``
candidate ``t_max``; the bisection evaluates ``O(log)`` of them per change of ``Sigma`` between the first
feasible ``t_max`` and ``T*/B``. ``L = 48`` layers, an ``8 x 8`` cluster and ``B = 64`` take a fraction of
a second.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import partial
from numbers import Integral

import numpy as np

from ...plans.clock_tables import in_flight

Shape = tuple[int, int]


class StageDPError(ValueError):
    """Costs or options the stage DP cannot use; the message says which."""


class InfeasiblePlanError(StageDPError):
    """No slicing into stages fits: every one has an infeasible stage (inf latency or Eq. 5)."""


@dataclass(frozen=True, eq=False)
class StageCosts:
    """The intra-op pass's report for every stage-mesh pair (Algorithm 1, lines 8-21).

    Args:
      latency: ``(L+1, L+1, K, P)``; ``[i, j, k, p]`` is ``t_l`` of layers ``[i, j)`` on submesh ``k`` viewed
        as logical mesh ``p``, ``np.inf`` where missing. Entries with ``i >= j`` are ignored. A
        ``(L+1, L+1, K)`` array means one logical mesh per submesh.
      submeshes: the ``K`` submesh shapes ``(n, m)``, e.g. from ``submesh_shapes``.
      param_mem: like ``latency``: bytes per device of weights and optimizer state; zeros if omitted.
      act_mem: like ``latency``: bytes per device of one micro-batch's activations; zeros if omitted.
      device_memory: bytes per device; ``inf`` turns Eq. 5 off.
    """

    latency: np.ndarray
    submeshes: tuple[Shape, ...]
    param_mem: np.ndarray | None = None
    act_mem: np.ndarray | None = None
    device_memory: float = math.inf

    def __post_init__(self) -> None:
        latency = np.array(self.latency, dtype=np.float64)
        if latency.ndim == 3:
            latency = latency[..., None]
        if latency.ndim != 4 or latency.shape[0] != latency.shape[1] or latency.shape[0] < 2 or 0 in latency.shape:
            raise StageDPError(f"latency has shape {np.shape(self.latency)}; expected (L+1, L+1, K, P) or "
                               f"(L+1, L+1, K) with L >= 1 layers")
        if np.isnan(latency).any() or (latency < 0).any():
            raise StageDPError("latency must be non-negative (np.inf where missing), without NaN")
        submeshes = tuple((int(n), int(m)) for n, m in self.submeshes)
        if len(submeshes) != latency.shape[2] or any(min(s) < 1 for s in submeshes):
            raise StageDPError(f"{len(submeshes)} submeshes {list(submeshes)} for a latency array with "
                               f"{latency.shape[2]} submesh entries; shapes must be positive")
        arrays = {"latency": latency, "submeshes": submeshes}
        for name in ("param_mem", "act_mem"):
            value = getattr(self, name)
            mem = np.zeros_like(latency) if value is None else np.array(value, dtype=np.float64)
            if mem.ndim == 3:
                mem = mem[..., None]
            if mem.shape != latency.shape or np.isnan(mem).any() or (mem < 0).any():
                raise StageDPError(f"{name} must be non-negative without NaN and shaped like latency "
                                   f"{latency.shape}; got shape {np.shape(value)}")
            arrays[name] = mem
        if not self.device_memory > 0:
            raise StageDPError(f"device_memory {self.device_memory!r} must be positive (inf turns Eq. 5 off)")
        for name, value in arrays.items():
            if isinstance(value, np.ndarray):
                value.flags.writeable = False
            object.__setattr__(self, name, value)
        object.__setattr__(self, "device_memory", float(self.device_memory))

    @property
    def num_layers(self) -> int:
        return self.latency.shape[0] - 1


@dataclass(frozen=True, slots=True)
class Stage:
    start: int  # first layer
    end: int  # one past the last layer
    submesh: int  # index into StageCosts.submeshes
    shape: Shape  # that submesh's (n, m)
    logical_mesh: int  # index p: the fastest logical mesh that fits Eq. 5 for this stage's place
    latency: float  # t_intra of the stage

    @property
    def num_devices(self) -> int:
        return self.shape[0] * self.shape[1]


@dataclass(frozen=True, slots=True)
class StagePlan:
    stages: tuple[Stage, ...]
    latency: float  # Eq. 2 for these stages and B micro-batches
    t_max: float  # the bound of the DP run that found the stages; at least every stage's latency


def pipeline_latency(stage_latencies: Sequence[float], num_micro_batches: int, virtual_stages: int = 1) -> float:
    """Eq. 2: ``sum_i t_i + (B - 1) * max_j t_j``, the 1F1B/GPipe latency of ``B`` micro-batches.

    With ``v = virtual_stages > 1`` (interleaved 1F1B, Narayanan et al. 2021) each ``t_i`` is
    a mesh's, over the ``v`` chunks it holds, and a chunk is ``1/v`` of it: filling and
    draining the pipeline passes every mesh once per chunk, so the bubble shrinks ``v``-fold,
    ``sum_i t_i / v + (B - 1/v) * max_j t_j`` (on equal meshes ``(B + (S-1)/v) t``, against
    1F1B's ``(B + S - 1) t``)."""
    _check_micro_batches(num_micro_batches)
    if len(stage_latencies) == 0:
        raise StageDPError("a pipeline needs at least one stage")
    return _eq2(float(sum(stage_latencies)), float(max(stage_latencies)), num_micro_batches, virtual_stages)


def _eq2(total: float, t_max: float, num_micro_batches: int, virtual_stages: int) -> float:
    """Eq. 2 from the stages' sum and their slowest (:func:`pipeline_latency`)."""
    return total / virtual_stages + (num_micro_batches - 1 / virtual_stages) * t_max


def t_intra_table(costs: StageCosts, max_stages: int,
                  in_flight: Sequence[float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``t_intra`` and its logical mesh for every stage and submesh, by ``s`` (Algorithm 1, lines 8-21).

    ``in_flight[s - 1]``: how many micro-batches' activations of the whole stage a stage with ``s``
    stages from it to the last holds at once, growing with ``s`` (None: ``s``, 1F1B's; see
    :func:`interleaved_in_flight`).

    Returns ``(latency, logical)`` shaped ``(C, L+1, L+1, K)``: index ``min(s, C) - 1`` holds the stages
    with ``s`` stages from them to the last, ``s <= max_stages``; ``logical`` is -1 where nothing fits.
    """
    in_flight = range(1, max_stages + 1) if in_flight is None else in_flight
    size = costs.latency.shape[0]
    rows, cols = np.triu_indices(size, 1)
    lat, param, act = (a[rows, cols] for a in (costs.latency, costs.param_mem, costs.act_mem))
    fits = np.zeros(lat.shape, dtype=np.int64)  # the largest s that Eq. 5 admits
    for s in range(1, max_stages + 1):
        fits += param + in_flight[s - 1] * act <= costs.device_memory
    lat = np.where(fits >= 1, lat, np.inf)
    changes = fits[np.isfinite(lat) & (fits < max_stages)]
    levels = int(changes.max()) + 1 if changes.size else 1
    by_level = np.where(fits >= np.arange(1, levels + 1)[:, None, None, None], lat, np.inf)
    choice = by_level.argmin(axis=-1)
    best = np.take_along_axis(by_level, choice[..., None], axis=-1)[..., 0]
    table = np.full((levels, size, size, lat.shape[1]), np.inf)
    logical = np.full(table.shape, -1, dtype=np.int64)
    table[:, rows, cols] = best
    logical[:, rows, cols] = np.where(np.isfinite(best), choice, -1)
    return table, logical


def solve_stage_dp(costs: StageCosts, cluster: Shape, num_micro_batches: int, *, epsilon: float = 1e-6,
                   early_pruning: bool = True, virtual_stages: int = 1,
                   stage_counts: Collection[int] | None = None, forward_only: bool = False) -> StagePlan:
    """The stages, submeshes and logical meshes minimising Eq. 2 (Algorithm 1's DP).

    Args:
      costs: the profiled stage-mesh pairs; every submesh must fit ``cluster``.
      cluster: the cluster mesh ``(N, M)``; the stages' submeshes use exactly ``N * M`` devices.
      num_micro_batches: ``B`` of Eq. 2.
      epsilon: evaluate one ``t_max`` per run of candidates within ``epsilon`` of the run's first (same unit
        as the latencies; the paper's 1e-6 s); the result is then within ``(B - 1) * epsilon`` of the
        optimum, and exact for 0.
      early_pruning: stop and skip as in step 3 of the module docstring; False evaluates every ``t_max``.
      virtual_stages: ``v`` of interleaved 1F1B (:func:`pipeline_latency`): a stage is a mesh's layers,
        which it runs as ``v`` chunks. Eq. 4's sum is still least for each ``t_max``: only how the sum
        and ``t_max`` add up changes.
      stage_counts: the numbers of stages a plan may have (None: any); interleaved 1F1B takes the
        micro-batches in groups of as many as there are meshes, so it only takes numbers ``S`` that
        divide ``B``, and Eq. 5 counts the chunks its schedule keeps in flight on each mesh
        (:func:`interleaved_in_flight`), one DP per ``S``.
      forward_only: the stages run forwards only (``schedule=inference``): a stage holds one
        micro-batch's activations at a time, whatever its place (Eq. 5 with ``in_flight`` 1).

    Raises ``InfeasiblePlanError`` when no slicing has only finite, memory-fitting stages.
    """
    _check_micro_batches(num_micro_batches)
    if isinstance(virtual_stages, bool) or not isinstance(virtual_stages, Integral) or virtual_stages < 1:
        raise StageDPError(f"virtual_stages {virtual_stages!r} must be a positive integer")
    if (len(cluster) != 2 or any(isinstance(x, bool) or not isinstance(x, Integral) for x in cluster)
            or min(cluster) < 1):
        raise StageDPError(f"cluster {cluster!r} must be (hosts, devices per host), two positive integers")
    num_hosts, per_host = int(cluster[0]), int(cluster[1])
    for n, m in costs.submeshes:
        if n > num_hosts or m > per_host:
            raise StageDPError(f"submesh ({n}, {m}) does not fit the {num_hosts}x{per_host} cluster")
    if not (epsilon >= 0 and math.isfinite(epsilon)):
        raise StageDPError(f"epsilon {epsilon!r} must be a non-negative number")
    devices = num_hosts * per_host
    max_stages = min(costs.num_layers, devices)  # every stage has a layer and a device
    sizes = np.array([n * m for n, m in costs.submeshes])
    B, v = int(num_micro_batches), int(virtual_stages)
    counts = frozenset(range(1, max_stages + 1) if stage_counts is None else stage_counts)
    solve = partial(_solve, costs, sizes, devices, B, v, epsilon, early_pruning=early_pruning)
    if forward_only and v > 1:
        raise StageDPError("a forward-only pipeline runs one stage per mesh: virtual_stages must be 1")
    if v == 1:
        plans = [solve(max_stages=max_stages, counts=counts, in_flight=[1] * max_stages if forward_only else None)]
    else:  # what a mesh holds in flight depends on the number of meshes: one DP per number
        plans = [solve(max_stages=S, counts=frozenset({S}), in_flight=interleaved_in_flight(S, B, v))
                 for S in sorted(counts) if S <= max_stages and B % S == 0]
    found = [plan for plan in plans if plan is not None]
    if not found:
        raise InfeasiblePlanError(_infeasible_message(costs, sizes, devices, cluster, v))
    return min(found, key=lambda plan: plan.latency)


def interleaved_in_flight(num_meshes: int, num_micro_batches: int, virtual_stages: int) -> list[float]:
    """``in_flight`` of :func:`t_intra_table` under interleaved 1F1B on ``num_meshes`` meshes: by
    ``s`` (meshes from this one to the last), the most chunks its schedule keeps forwarded and not
    yet backwarded (``plans/clock_tables.py``, 2(s - 1) + (v - 1) S + 1 where B allows), each
    ``1/v`` of the mesh's layers."""
    chunks = in_flight("interleaved-1f1b", num_meshes * virtual_stages, num_micro_batches, virtual_stages)
    return [chunks[num_meshes - s] / virtual_stages for s in range(1, num_meshes + 1)]


def _solve(costs: StageCosts, sizes: np.ndarray, devices: int, B: int, v: int, epsilon: float,
           *, early_pruning: bool, max_stages: int, counts: frozenset[int],
           in_flight: Sequence[float] | None) -> StagePlan | None:
    """:func:`solve_stage_dp` over slicings into a number of stages in ``counts`` (at most
    ``max_stages``), Eq. 5 by ``in_flight`` (:func:`t_intra_table`); None if none fits."""
    table, logical = t_intra_table(costs, max_stages, in_flight)
    firsts, tops = _candidates(table, epsilon)
    if not early_pruning:
        totals = [_eq2(_min_sum(table, sizes, devices, max_stages, counts, t), t, B, v) for t in tops]
        group = int(np.argmin(totals)) if totals and math.isfinite(min(totals)) else None
    else:
        start = int(np.searchsorted(tops, _bottleneck(table[0], sizes, devices)))
        value = partial(_min_sum, table, sizes, devices, max_stages, counts)
        group = _search(value, firsts, tops, partial(_eq2, num_micro_batches=B, virtual_stages=v), B, start) \
            if start < tops.size else None
    if group is None:
        return None
    stages = []
    for start, end, k, s in _least_sum_stages(table, sizes, devices, max_stages, counts, float(tops[group])):
        level = min(s, table.shape[0]) - 1
        stages.append(Stage(start, end, k, costs.submeshes[k], int(logical[level, start, end, k]),
                            float(table[level, start, end, k])))
    return StagePlan(tuple(stages), pipeline_latency([s.latency for s in stages], B, v), float(tops[group]))


def _candidates(table: np.ndarray, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1's SortedAndFilter: one ``t_max`` per run of values within ``epsilon`` of its first.

    A run is evaluated at its largest value, so every plan whose slowest stage lies in the run stays
    feasible; that is what bounds the error by ``(B - 1) * epsilon`` (the paper's ``B * epsilon``).
    Returns the runs' first and last values.
    """
    values = np.unique(table[np.isfinite(table)])
    if epsilon == 0 or values.size == 0:
        return values, values
    sorted_values, firsts, tops, i = values.tolist(), [], [], 0
    while i < len(sorted_values):
        j = bisect.bisect_right(sorted_values, sorted_values[i] + epsilon, lo=i)
        firsts.append(sorted_values[i])
        tops.append(sorted_values[j - 1])
        i = j
    return np.array(firsts), np.array(tops)


def _search(value: Callable[[float], float], firsts: np.ndarray, tops: np.ndarray,
            eq2: Callable[[float, float], float], B: int, start: int) -> int | None:
    """The run whose ``T*(t_max) = eq2(Sigma(t_max), t_max)`` (Eq. 4: ``Sigma + (B - 1) t_max``) is least, or
    None if none is finite. ``eq2`` grows with both, and is at least ``B t_max`` where ``Sigma >= t_max``.

    ``Sigma`` never rises with ``t_max``. The first feasible run is found by galloping from ``start`` and
    bisecting; then, over the runs below Algorithm 1's break (``B * t_max >= T*``), an interval between two
    evaluated runs ``a < b`` is dropped when ``Sigma(a) == Sigma(b)`` (the runs inside cost more than ``a``)
    or when no run inside can beat ``T*``: one that improves on ``a`` has a stage slower than ``tops[a]``,
    so its sum is at least ``max(Sigma(b), firsts[a+1])``; the rest is bisected.
    """
    sigma: dict[int, float] = {}

    def total(g: int) -> float:
        if g not in sigma:
            sigma[g] = value(float(tops[g]))
        return eq2(sigma[g], float(tops[g]))

    bad, g, step = start - 1, start, 1
    while not math.isfinite(total(g)):
        if g == tops.size - 1:
            return None
        bad, g, step = g, min(g + step, tops.size - 1), 2 * step
    while g - bad > 1:
        mid = (bad + g) // 2
        bad, g = (bad, mid) if math.isfinite(total(mid)) else (mid, g)
    best_group, best = g, total(g)
    last = int(np.searchsorted(B * firsts, best, side="left")) - 1  # Algorithm 1: break once B t_max >= T*
    intervals = [(g, last)] if last > g else []
    if intervals and total(last) < best:
        best_group, best = last, total(last)
    while intervals:
        a, b = intervals.pop()
        if b - a < 2 or sigma[a] == sigma[b]:
            continue
        if eq2(max(sigma[b], firsts[a + 1]), float(tops[a + 1])) >= best:
            continue
        mid = (a + b) // 2
        if total(mid) < best:
            best_group, best = mid, total(mid)
        intervals += [(mid, b), (a, mid)]
    return best_group


def _shifts(sizes: np.ndarray, devices: int) -> tuple[np.ndarray, np.ndarray]:
    """Index ``[k, d] -> d - sizes[k]`` and where it is valid, to read a row at ``d - n*m`` for every submesh."""
    index = np.arange(devices + 1)[None, :] - sizes[:, None]
    return np.maximum(index, 0), index >= 0


def _bottleneck(latency: np.ndarray, sizes: np.ndarray, devices: int) -> float:
    """The least ``max_j t_j`` over slicings that use every device, with ``latency[i, j, k]`` per stage.

    With the ``s = 1`` level it bounds the first feasible ``t_max`` from below (later levels are slower).
    """
    layers = latency.shape[0] - 1
    index, valid = _shifts(sizes, devices)
    worst = np.full((layers + 1, devices + 1), np.inf)
    shifted = np.full((layers + 1, sizes.size, devices + 1), np.inf)  # [j, k, d] = worst[j, d - sizes[k]]
    worst[layers, 0] = 0.0
    shifted[layers] = np.where(valid, worst[layers][index], np.inf)
    for k in range(layers - 1, -1, -1):
        worst[k] = np.maximum(latency[k, k + 1:, :, None], shifted[k + 1:]).min(axis=(0, 1))
        shifted[k] = np.where(valid, worst[k][index], np.inf)
    return float(worst[0, devices])


@dataclass(frozen=True, eq=False)
class _Band:
    """The DP states ``(k, d)`` useful under one ``t_max`` and the stages between them (edges by source)."""

    root: int  # state (0, N*M)
    sink: int  # state (L, 0), where F(0, L, 0) = 0
    num_states: int
    start: np.ndarray  # per edge: the stage is layers [start, end) on submesh `submesh`
    end: np.ndarray
    submesh: np.ndarray
    src: np.ndarray  # (start, d), sorted
    dst: np.ndarray  # (end, d - n*m)
    first: np.ndarray  # where each source's run of edges begins
    sources: np.ndarray  # the source of each run


def _band(allowed: np.ndarray, sizes: np.ndarray, devices: int) -> _Band | None:
    """The band for the stages ``allowed[i, j, k]`` (within ``t_max``), or None if nothing covers the devices."""
    layers = allowed.shape[0] - 1
    useful = _useful_states(allowed, sizes, devices)
    if not useful[0, devices]:
        return None
    state_of = np.full(useful.shape, -1)
    state_of[useful] = np.arange(int(useful.sum()))
    any_useful = useful.any(axis=1)
    start, end, sub = np.nonzero(allowed & any_useful[:, None, None] & any_useful[None, :, None])
    index, valid = _shifts(sizes, devices)
    edge, d = np.nonzero(useful[start] & (useful[:, index] & valid)[end, sub])
    src = state_of[start[edge], d]
    order = np.argsort(src, kind="stable")
    src, edge, d = src[order], edge[order], d[order]
    start, end, sub = start[edge], end[edge], sub[edge]
    first = np.flatnonzero(np.r_[True, src[1:] != src[:-1]])
    return _Band(int(state_of[0, devices]), int(state_of[layers, 0]), int(useful.sum()), start, end, sub,
                 src, state_of[end, d - sizes[sub]], first, src[first])


def _min_sums(band: _Band, table: np.ndarray, t_max: float, max_stages: int, counts: frozenset[int],
              keep: bool) -> tuple[float, list[np.ndarray], Callable[[int], np.ndarray]]:
    """``min_s F(s, 0, N*M)`` over the stage counts ``s`` in ``counts``, ``F(s, ., .)`` on the band for
    ``s = 0, 1, ...`` (Eq. 3; every level if ``keep``, else the last) and the edges' latencies for a
    given ``s``."""
    cache: dict[int, np.ndarray] = {}

    def latency(s: int) -> np.ndarray:  # the edges' t_intra for a stage with s stages from it to the last
        level = min(s, table.shape[0]) - 1
        if level not in cache:
            t = table[level][band.start, band.end, band.submesh]
            cache[level] = np.where(t <= t_max, t, np.inf)
        return cache[level]

    f = np.full(band.num_states, np.inf)
    f[band.sink] = 0.0
    levels, best = [f], math.inf
    for s in range(1, max_stages + 1):
        f = np.full(band.num_states, np.inf)
        f[band.sources] = np.minimum.reduceat(latency(s) + levels[-1][band.dst], band.first)
        levels = levels + [f] if keep else [f]
        if s in counts:
            best = min(best, float(f[band.root]))
        if not np.isfinite(f).any():
            break
    return best, levels, latency


def _min_sum(table: np.ndarray, sizes: np.ndarray, devices: int, max_stages: int, counts: frozenset[int],
             t_max: float) -> float:
    """``Sigma(t_max) = min_s F(s, 0, N*M; t_max)`` over ``s`` in ``counts``, the first term of Eq. 4."""
    band = _band(table[0] <= t_max, sizes, devices)  # level s = 1 is the fastest: it admits all others do
    return math.inf if band is None else _min_sums(band, table, t_max, max_stages, counts, keep=False)[0]


def _least_sum_stages(table: np.ndarray, sizes: np.ndarray, devices: int, max_stages: int, counts: frozenset[int],
                      t_max: float) -> list[tuple[int, int, int, int]]:
    """``(start, end, submesh, s)`` of the stages of a slicing whose sum is ``Sigma(t_max)``."""
    band = _band(table[0] <= t_max, sizes, devices)
    _, levels, latency = _min_sums(band, table, t_max, max_stages, counts, keep=True)
    state, s = band.root, int(np.argmin([f[band.root] if s in counts else np.inf for s, f in enumerate(levels)]))
    stages = []
    while s > 0:
        run = int(np.searchsorted(band.sources, state))
        edges = np.arange(band.first[run], band.first[run + 1] if run + 1 < band.first.size else band.src.size)
        e = edges[np.argmin(latency(s)[edges] + levels[s - 1][band.dst[edges]])]
        stages.append((int(band.start[e]), int(band.end[e]), int(band.submesh[e]), s))
        state, s = band.dst[e], s - 1
    return stages


def _useful_states(allowed: np.ndarray, sizes: np.ndarray, devices: int) -> np.ndarray:
    """``[k, d]``: layers ``k..L-1`` fit on ``d`` devices and layers ``0..k-1`` on the other ``N*M - d``."""
    layers = allowed.shape[0] - 1
    index, valid = _shifts(sizes, devices)
    suffix = np.zeros((layers + 1, devices + 1), dtype=bool)
    prefix = np.zeros_like(suffix)
    suffix_shifted = np.zeros((layers + 1, sizes.size, devices + 1), dtype=bool)  # [j, k, d] = suffix[j, d - n*m]
    prefix_shifted = np.zeros_like(suffix_shifted)
    suffix[layers, 0] = prefix[0, 0] = True
    suffix_shifted[layers] = suffix[layers][index] & valid
    prefix_shifted[0] = prefix[0][index] & valid
    for k in range(layers - 1, -1, -1):
        suffix[k] = (allowed[k, k + 1:, :, None] & suffix_shifted[k + 1:]).any(axis=(0, 1))
        suffix_shifted[k] = suffix[k][index] & valid
    for j in range(1, layers + 1):
        prefix[j] = (allowed[:j, j, :, None] & prefix_shifted[:j]).any(axis=(0, 1))
        prefix_shifted[j] = prefix[j][index] & valid
    return suffix & prefix[:, ::-1]


def _infeasible_message(costs: StageCosts, sizes: np.ndarray, devices: int, cluster: Shape, v: int) -> str:
    fastest = costs.latency[np.triu_indices(costs.latency.shape[0], 1)].min(axis=-1)
    table = np.full(costs.latency.shape[:3], np.inf)
    table[np.triu_indices(table.shape[0], 1)] = fastest
    where = f"the {costs.num_layers} layers onto the {cluster[0]}x{cluster[1]} cluster's {devices} devices"
    if not math.isfinite(_bottleneck(table, sizes, devices)):
        return (f"no stage plan: the finite latencies cannot slice {where} (the stages' submeshes must use "
                f"every device); give more (layer range, submesh) pairs a finite latency")
    held = "s = stages from it to the last" if v == 1 else \
        f"s = the interleaved schedule's chunks in flight on its mesh, over v = {v}"
    return (f"no stage plan fits device memory: every slicing of {where} has a stage with no logical mesh "
            f"meeting Eq. 5 (param_mem + s * act_mem <= device_memory = {costs.device_memory:g}, {held}); "
            f"raise device_memory or profile logical meshes that shard more")


def _check_micro_batches(num_micro_batches: int) -> None:
    if isinstance(num_micro_batches, bool) or not isinstance(num_micro_batches, Integral) or num_micro_batches < 1:
        raise StageDPError(f"number of micro-batches {num_micro_batches!r} must be a positive integer")
