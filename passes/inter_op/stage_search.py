"""The search of ``alpa-stage-construction``: which stages it considers, and the DP over them.

The candidates are (start layer, end layer, submesh shape) triples; a *family* of
them is what one run of the DP of Eq. 3-4 (``stage_dp.py``) may combine: every range
on every shape (``auto``), ranges of one length (``equal-layer``, one family per
length), or the user's stages (``manual``); of the first two only those some slicing of
all the layers onto all the devices holds (:func:`completable`). :func:`best_plan` keeps
the best of the families' plans.

With ``virtual-stages=v > 1`` (interleaved 1F1B) the DP still places one contiguous
layer range per mesh: the range stands for the ``v`` chunks the mesh will hold, which
have as many layers in all (``auto``: ranges of a multiple of ``v`` layers, cut into ``v``
equal chunks; ``equal-layer``: as many layers per range; ``manual``: mesh ``r`` gets the
layers of stages ``r, r+S, ..``). That prices a mesh right when its layers cost alike
wherever they sit, as repeated layers do. The DP minimises interleaved 1F1B's Eq. 2
(``stage_dp.pipeline_latency``) over numbers of meshes that divide the micro-batches.
:func:`virtual_stage_bounds` then cuts the layers into the ``S v`` stages themselves.

:func:`search_layering` is the whole search of one layering, given what costs a set of
candidates (``stage_costing.cost_stages``, which plans each one's IR; a model in the tests).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np

from .stage_dp import StageCosts, StageDPError, StagePlan, solve_stage_dp
from .submesh import submesh_shapes

LOG = logging.getLogger("alpa_mlir.stage_construction")
Candidate = tuple[int, int, tuple[int, int]]  # layers [start, end) on a submesh shape (hosts, devices)


@dataclass(frozen=True)
class SearchOptions:
    """What the search reads of ``alpa-stage-construction``'s options (named alike there),
    built once per run. ``bounded``: the option ``prune``, with costs a compute bound holds
    under (analytic ones)."""

    cluster_shape: tuple[int, int]
    num_micro_batches: int = 1
    stage_mode: Literal["auto", "equal-layer", "equal-operator", "manual"] = "auto"
    num_stages: int = 0
    stage_layers: tuple[int, ...] = ()
    stage_submeshes: tuple[int, ...] = ()
    submesh_space: Literal["power-of-two", "all"] = "power-of-two"
    logical_mesh_space: Literal["all", "physical"] = "all"
    max_costed_layers: int = 0
    epsilon: float = 0.0
    virtual_stages: int = 1
    bounded: bool = True
    forward_only: bool = False  # the step has no backward part (inference): Eq. 5 holds one micro-batch


class SearchSpace(NamedTuple):
    """The candidates of one layering to cost, and what their tables are indexed by."""

    candidates: list[Candidate]  # to plan
    composed: list[tuple[int, int]]  # (start, end) ranges composed from shorter ones (max-costed-layers)
    submeshes: list[tuple[int, int]]  # the tables' submesh axis
    views: dict[tuple[int, int], list[tuple[int, int]]]  # each submesh's logical meshes, the tables' last axis


class CostedSpace(NamedTuple):
    """A search space costed: Eq. 3-5's tables, and how many (range, logical mesh) entries a
    bound left unplanned (latency inf)."""

    costs: StageCosts
    pruned: int


# (space, bound) -> its tables, entries whose compute rules them out of a plan better than
# ``bound`` left at inf; None after an error (reported).
Costing = Callable[[SearchSpace, float], CostedSpace | None]


class SearchResult(NamedTuple):
    """The best plan of one layering, and what the search found it with."""

    plan: StagePlan
    costs: StageCosts  # the tables of the family the plan is of
    views: dict[tuple[int, int], list[tuple[int, int]]]  # each submesh's logical meshes (StagePlan.logical_mesh)
    stats: dict[str, float]  # candidates, composed_ranges, pruned_candidates, cost_seconds, dp_seconds
    bound: float  # the latency the candidates were pruned by (inf: none)


def search_layering(options: SearchOptions, num_layers: int, cost: Costing, bound: float = math.inf,
                    name: str = "") -> SearchResult | None:
    """Cost the candidates of one layering of ``num_layers`` layers (``name`` in the log)
    with ``cost`` and run the DP: the best plan, or None after an error (reported by
    ``cost``). Raises ``ValueError`` naming an option that allows no candidates, and
    ``StageDPError`` when the DP finds no plan. ``bound``: the latency of a plan found
    already (of an earlier layering; inf if none).

    The single-layer candidates (the cheapest to plan) are costed first, and where they
    make no plan (more layers than devices, or memory) the whole cluster's single stage
    with them (a plan between them always exists where memory allows); the best plan among
    them bounds the rest, which ``cost`` prunes by it. (The whole cluster's stage is the
    costliest to plan, and on XLA:CPU, whose devices share the host's cores, it is pruned:
    4-layer GPT-2 on 8 devices, 3 of its 83 plans and 1.6 of the search's 12 s.)"""
    families = candidate_families(options, num_layers)
    candidates, composed = costed_candidates(sorted({c for family in families for c in family}),
                                             options.max_costed_layers, num_layers)
    submeshes = sorted({k for _, _, k in candidates})
    views = {k: logical_shapes(k, options.logical_mesh_space) for k in submeshes}
    start = time.perf_counter()
    LOG.info("stage construction: costing %d %s layers on %d submesh shapes", num_layers, name, len(submeshes))
    cluster = options.cluster_shape

    def best(costs: StageCosts) -> tuple[StagePlan, StageCosts]:
        return best_plan(families, costs, cluster, options.num_micro_batches, options.epsilon,
                         options.virtual_stages, forward_only=options.forward_only)

    singles = [(i, j, k) for i, j, k in candidates if j - i == 1]
    whole = [(i, j, k) for i, j, k in candidates if j - i == num_layers and k == cluster]
    if not options.bounded or composed:
        bound = math.inf  # measured costs and composed ranges are not bounded by the compute
    else:
        for probe in (singles, singles + whole):
            if len(probe) == len(candidates):
                break
            probed = cost(SearchSpace(probe, [], submeshes, views), math.inf)
            if probed is None:
                return None
            try:
                bound = min(bound, best(probed.costs)[0].latency)
                break
            except StageDPError:  # no plan of those candidates (more layers than devices, memory)
                pass
    found = cost(SearchSpace(candidates, composed, submeshes, views), bound)
    if found is None:
        return None
    seconds = time.perf_counter() - start
    tic = time.perf_counter()
    plan, costs = best(found.costs)
    stats = {"candidates": len(candidates), "composed_ranges": len(composed), "pruned_candidates": found.pruned,
             "cost_seconds": seconds, "dp_seconds": time.perf_counter() - tic}
    return SearchResult(plan, costs, views, stats, bound)


def candidate_families(options: SearchOptions, num_layers: int) -> list[list[Candidate]]:
    """Families of (start, end, submesh) stages the mode allows; the DP runs once per family.
    Raises ``ValueError`` naming the option at fault."""
    cluster = options.cluster_shape
    v = options.virtual_stages
    if options.stage_mode == "manual":
        if sum(options.stage_layers) != num_layers or min(options.stage_layers) < 1:
            raise ValueError(f"option 'stage-layers' {list(options.stage_layers)} must be positive and add up to "
                             f"the {num_layers} layers")
        num_meshes = len(options.stage_layers) // v
        per_mesh = [sum(options.stage_layers[r::num_meshes]) for r in range(num_meshes)]
        bounds = np.cumsum((0, *per_mesh))
        shapes = [tuple(options.stage_submeshes[2 * s:2 * s + 2]) for s in range(num_meshes)]
        _check_manual_submeshes(shapes, cluster)
        return [[(int(bounds[s]), int(bounds[s + 1]), shapes[s]) for s in range(len(shapes))]]
    shapes = submesh_shapes(cluster, options.submesh_space)
    if options.stage_mode == "equal-layer":  # Sec. 8.3: every stage has the same number of layers
        # Without num-stages, interleaving (v > 1) only counts meshes S that divide B: it takes
        # the micro-batches in groups of S.
        counts = [num_layers // options.num_stages * v] if options.num_stages else \
            [n for n in range(v, num_layers + 1, v) if num_layers % n == 0
             and (v == 1 or options.num_micro_batches % (num_layers // n) == 0)]
        if options.num_stages and num_layers % options.num_stages:
            raise ValueError(f"option 'num-stages' {options.num_stages} does not divide the {num_layers} layers")
        if not counts:
            raise ValueError(f"option 'virtual-stages' {v} leaves no equal-layer slicing of the {num_layers} layers "
                             f"into {v} stages per mesh on a number of meshes that divides the "
                             f"{options.num_micro_batches} micro-batches")
        return [completable([(i, i + n, k) for i in range(0, num_layers, n) for k in shapes], num_layers, cluster, v)
                for n in counts]
    if num_layers % v:
        raise ValueError(f"option 'virtual-stages' {v} does not divide the {num_layers} layers: every mesh holds "
                         f"{v} stages of equally many layers")
    return [completable([(i, j, k) for i in range(num_layers) for j in range(i + v, num_layers + 1, v)
                         for k in shapes], num_layers, cluster, v)]


def _check_manual_submeshes(shapes: list[tuple[int, ...]], cluster: tuple[int, int]) -> None:
    """Each of ``stage-submeshes``' (hosts, devices per host) fits ``cluster``, and together
    they use its devices once each, as the placement (Appendix A) needs."""
    for hosts, devices in shapes:
        if not (1 <= hosts <= cluster[0] and 1 <= devices <= cluster[1]):
            raise ValueError(f"option 'stage-submeshes': a {hosts}x{devices} submesh (hosts x devices per host) does "
                             f"not fit the {cluster[0]}x{cluster[1]} cluster of option 'cluster-shape'")
    used = sum(hosts * devices for hosts, devices in shapes)
    if used != cluster[0] * cluster[1]:
        raise ValueError(f"option 'stage-submeshes': the submeshes hold {used} devices; the stages must use the "
                         f"{cluster[0]}x{cluster[1]} cluster's {cluster[0] * cluster[1]} devices once each")


def completable(family: list[Candidate], num_layers: int, cluster: tuple[int, int], v: int = 1) -> list[Candidate]:
    """The candidates of ``family`` that some slicing of all the layers onto all the cluster's
    devices may hold (Eq. 3's DP uses every device once, and a stage holds at least one
    layer, ``v`` with virtual stages): the layers before and after one fit the devices it
    leaves, as at most that many stages of the family's submesh sizes. The others would be
    planned for nothing (4-layer GPT-2 on 8 devices: a layer on all 8, or the whole model on
    4)."""
    total = cluster[0] * cluster[1]
    sizes = {rows * columns for _, _, (rows, columns) in family}
    fewest = [0] + [math.inf] * total  # the fewest stages of those sizes holding exactly d devices
    for d in range(1, total + 1):
        fewest[d] = min((fewest[d - size] + 1 for size in sizes if size <= d), default=math.inf)

    def fits(layers: int, devices: int) -> bool:
        return layers % v == 0 and fewest[devices] <= layers // v and (devices > 0) == (layers > 0)

    def left(k: tuple[int, int]) -> int:
        return total - k[0] * k[1]

    return [(i, j, k) for i, j, k in family
            if any(fits(i, d) and fits(num_layers - j, left(k) - d) for d in range(left(k) + 1))]


def costed_candidates(candidates: list[Candidate], max_costed_layers: int,
                      num_layers: int) -> tuple[list[Candidate], list[tuple[int, int]]]:
    """The candidates to plan, and the (start, end) ranges to compose from them instead
    (``max-costed-layers``: every candidate of at most that many layers is planned, and the
    ranges of at most that many that compose the longer ones on their submesh shapes;
    longer ones are composed, see :func:`compose_ranges`)."""
    m = max_costed_layers
    if not m or all(j - i <= m for i, j, _ in candidates):
        return candidates, []
    longer = [(i, j, k) for i, j, k in candidates if j - i > m]
    terms = {(a, b, k) for i, j, k in longer for last in range(i + m, j)
             for a, b in ((i, i + m), (last - m + 1, last + 1), (last - m + 1, last)) if b > a}
    return sorted({(i, j, k) for i, j, k in candidates if j - i <= m} | terms), sorted({(i, j) for i, j, _ in longer})


def compose_ranges(latency: np.ndarray, memories: tuple[np.ndarray, ...], composed: list[tuple[int, int]],
                   max_costed_layers: int) -> None:
    """Cost each composed range ``[i, j)`` of ``latency`` and of each of ``memories`` (indexed
    ``[start, end, ...]``, like it) in place from the ranges of at most ``m = max_costed_layers``
    layers, appending one layer at a time, each adding what it adds to the ``m``-layer range
    it ends: ``t(i, j) = t(i, i+m) + sum_{l=i+m}^{j-1} t(l-m+1, l+1) - t(l-m+1, l)``. Exact for
    costs that add up over layers. Where one of the terms has no latency (``inf``: a view the
    submesh lacks, a range not planned on it) the composed latency is ``inf`` and its memories 0."""
    m = max_costed_layers
    for i, j in composed:
        added = [(i, i + m)] + [(last - m + 1, last + 1) for last in range(i + m, j)]
        taken = [(last - m + 1, last) for last in range(i + m, j)] if m > 1 else []
        missing = np.logical_or.reduce([~np.isfinite(latency[a, b]) for a, b in added + taken])
        for table, empty in ((latency, np.inf), *((memory, 0.0) for memory in memories)):
            with np.errstate(invalid="ignore"):  # inf - inf where a term is missing: replaced below
                total = sum(table[a, b] for a, b in added) - sum((table[a, b] for a, b in taken), 0.0)
            table[i, j] = np.where(missing, empty, total)


def logical_shapes(submesh: tuple[int, int], space: str) -> list[tuple[int, int]]:
    """The logical views of a submesh: its physical shape, or every 2-D shape of its devices.

    On one host both axes have the same alpha and beta, so ``(n, 1)`` costs what ``(1, n)``
    costs and is not planned. (Other transposed views differ: a tensor dimension split
    over both axes orders the devices one way, and resharding from it to a split over
    either axis alone is a local slice on one view and a permute on the other.)"""
    if space == "physical":
        return [submesh]
    devices = submesh[0] * submesh[1]
    return [(a, devices // a) for a in range(1, devices + 1)
            if devices % a == 0 and (submesh[0] > 1 or a < devices or devices == 1)]


def best_plan(families: list[list[Candidate]], costs: StageCosts, cluster: tuple[int, int], num_micro_batches: int,
              epsilon: float, virtual_stages: int = 1, *, forward_only: bool = False) -> tuple[StagePlan, StageCosts]:
    """Eq. 2's best slicing over every family (one DP each, restricted to its
    candidates), and the costs it was found with; ``StageDPError`` when no family has one.
    With ``virtual_stages > 1``, interleaved 1F1B's Eq. 2 and Eq. 5 on a number of meshes that
    divides the micro-batches; ``forward_only``: see ``solve_stage_dp``."""
    plans, errors = [], []
    for family in families:
        allowed = np.zeros(costs.latency.shape[:3], dtype=bool)
        for i, j, k in family:
            allowed[i, j, costs.submeshes.index(k)] = True
        restricted = dataclasses.replace(costs, latency=np.where(allowed[..., None], costs.latency, np.inf))
        try:
            plans.append((solve_stage_dp(restricted, cluster, num_micro_batches, epsilon=epsilon,
                                         virtual_stages=virtual_stages, forward_only=forward_only), restricted))
        except StageDPError as error:
            errors.append(error)
    if not plans:
        raise errors[0]
    return min(plans, key=lambda found: found[0].latency)


def virtual_stage_bounds(options: SearchOptions, mesh_ranges: list[tuple[int, int]]) -> list[int]:
    """The layer bounds of the ``S v`` stages (stage ``k``: layers ``[b[k], b[k+1])``, on mesh
    ``k mod S``) for the ``S`` meshes whose layers the DP picked as ``mesh_ranges``."""
    v = options.virtual_stages
    if options.stage_mode == "manual":
        return [int(b) for b in np.cumsum((0, *options.stage_layers))]
    chunks = [(end - start) // v for start, end in mesh_ranges]  # a mesh's range: its v chunks' layers
    return [int(b) for b in np.cumsum((0, *(chunks[k % len(chunks)] for k in range(len(chunks) * v))))]
