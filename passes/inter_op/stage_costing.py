"""Stage costing of ``alpa-stage-construction``: ``t_intra`` and memory of each candidate stage.

Every (layer range, logical mesh) candidate's forward and backward ops are extracted
into a module of their own and planned by ``alpa-auto-sharding`` (modules that print
alike, as repeated layers do, are planned once; ``jobs`` > 1 plans in processes). Its
latency is analytic (FLOPs over the devices' FLOP/s, or priced by a device profile:
``compute_seconds`` and the collectives' waits, ``sync_seconds``; plus the plan's
communication on the alpha-beta model) or
measured (``cost-model=profile``: the planned module timed by the ``stage_timer`` the
pass is given). Memory for Eq. 5: the per-device bytes of the parameters the stage
reads (optimizer state taken as sharded like them) and of the activations its backward
reads from its forward.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import gc
import logging
import math
import multiprocessing
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import hlo

from ...dialect.annotations import find_main, result_shardings
from ...dialect.context import make_context
from ...dialect.host_callbacks import is_host_callback
from ...dialect.mesh import DeviceMesh, PhysicalCluster
from ...dialect.names import APPLY, BACKWARD, COPY_ATTR, FORWARD, LAYER_ATTR, PHASE_ATTR
from ...dialect.pass_registry import Diagnostics
from ...dialect.sharding import ShardingSpec, tile_bytes
from ...plans.device_profile import DeviceProfile, Dot
from ...plans.sharding_plan import ShardingPlan
from ..intra_op.auto_sharding import AutoShardingPass
from ..intra_op.ilp import HIGHS_MIP_GAP
from ..intra_op.rules import itemsize_of, shape_of
from .layer_construction import op_flops
from .outline import extract
from .stage_dp import StageCosts
from .stage_search import Candidate, compose_ranges
from .training_step import StepGraph

if TYPE_CHECKING:
    from .stage_construction import StageConstructionPass

LOG = logging.getLogger("alpa_mlir.stage_construction")


@dataclass
class CostCache:
    """The stage modules extracted, planned and costed so far, shared by the costings of one
    search (its first candidates, then the rest; the layerings it compares): a range is
    extracted and planned once, however often and by whichever layering it is asked for."""

    planned: dict = field(default_factory=dict)  # key -> (plan, shardings of the copied ops, planned module)
    costed: dict = field(default_factory=dict)  # key -> (t_intra, parameter bytes per device and whole, activations)
    extracted: dict = field(default_factory=dict)  # the ops of @main it copies -> (stage, its text)
    graph: StepGraph | None = None  # @main's dataflow
    compute: dict = field(default_factory=dict)  # (the ops of @main it copies, devices) -> analytic compute
    floors: dict = field(default_factory=dict)  # device counts -> op number -> floor under its compute (_floors)


def cost_stages(options: StageConstructionPass, main: ir.Operation, layer: list[int], phase: list[str],
                candidates: list[Candidate], composed: list[tuple[int, int]], submeshes: list[tuple[int, int]],
                views: dict[tuple[int, int], list[tuple[int, int]]], cluster: PhysicalCluster,
                profile: DeviceProfile | None, cache: CostCache, diagnostics: Diagnostics,
                bound: float = math.inf) -> tuple[StageCosts, int] | None:
    """Eq. 3-5's tables for the DP: ``t_intra`` and the memories of every candidate on every
    logical view of its submesh (``views``), and of the ``composed`` ranges built from
    shorter ones; compute priced by ``profile`` where given. ``layer``/``phase``: of each
    op of ``@main``. Stage modules in ``cache`` are not planned again; new ones are added.

    ``bound``: the Eq. 2 latency of a plan already found. Eq. 2 is at least ``B t_i`` plus
    the other stages' ``t_j`` (over ``v``, interleaved: ``stage_dp.pipeline_latency``) for
    each of its stages, a ``t`` is at least its stage's compute, and the other stages'
    compute at least their layers' floors (:func:`_floors`). So a candidate whose ``B``
    times compute and the floors of the layers it leaves exceed ``bound`` is in no better
    plan: it is not planned, and its latency stays inf. (So ``bound`` must be inf where the
    latencies are not compute plus a communication cost: measured, or composed.) Returns
    the tables and the number of (range, logical mesh) entries so skipped; None after an
    error (reported)."""
    num_layers = max(layer) + 1
    width = max(len(v) for v in views.values())
    shape = (num_layers + 1, num_layers + 1, len(submeshes), width)
    latency, param_mem, act_mem = np.full(shape, np.inf), np.zeros(shape), np.zeros(shape)
    # Every candidate plans the same ops again: their warnings are reported once, below.
    sink: list = []
    costing = Diagnostics(sink)
    if cache.graph is None:
        cache.graph = StepGraph(main)
    graph = cache.graph
    of_layer: list[list[int]] = [[] for _ in range(num_layers)]  # op numbers by layer, in order
    for n, number in enumerate(layer):
        of_layer[number].append(n)
    state = {(i, j): _state_bytes(graph, phase, [n for number in range(i, j) for n in of_layer[number]])
             for i, j in {(i, j) for i, j, _ in candidates}}
    work: dict[tuple, tuple] = {}  # distinct (stage module, logical mesh) -> (stage, mesh, indices)
    entries = []  # (table index, work key)
    ranges: dict[tuple[int, int], tuple] = {}  # (start, end) -> (stage, its text, indices)
    for i, j, k in candidates:
        if (i, j) not in ranges:  # once per range, whatever the submesh
            indices = tuple(sorted(n for number in range(i, j) for n in of_layer[number]
                                   if phase[n] in (FORWARD, BACKWARD)))
            if indices not in cache.extracted:
                stage = extract(main, list(indices))
                for number, op in enumerate(stage.ops):  # layer numbers must not tell repeated layers apart
                    del op.attributes[LAYER_ATTR]
                    del op.attributes[PHASE_ATTR]
                    op.attributes[COPY_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64, main.context),
                                                                  number)
                cache.extracted[indices] = (stage, str(stage.module))
            ranges[i, j] = (*cache.extracted[indices], indices)
        stage, text, indices = ranges[i, j]
        for p, view in enumerate(views[k]):
            mesh = cluster.logical_mesh(cluster.submesh(0, k[0], 0, k[1]), view)
            key = (text, mesh.shape, mesh.alpha, mesh.beta)
            work.setdefault(key, (stage, mesh, indices))
            entries.append(((i, j, submeshes.index(k), p), key))
    kept = entries
    if math.isfinite(bound):
        # Eq. 2 is at least B t_i plus the other stages' t_j (over v, interleaved); a t is at
        # least its stage's compute (the plan's communication, Eq. 1's value, is never
        # negative), and the stages that hold the other layers at least those layers' floors.
        floors, launches = _floors(options, profile, cache, of_layer, phase, submeshes)
        kept = [(index, key) for index, key in entries if key in cache.costed or options.num_micro_batches *
                _compute_seconds(options, profile, cache, work[key][2], work[key][1].size) +
                (sum(floors[:index[0]]) + sum(floors[index[1]:]) +
                 launches * ((index[0] > 0) + (index[1] < num_layers))) / options.virtual_stages <= bound]
    new = {key: work[key] for _, key in kept if key not in cache.planned}
    if not _plan_all(options.jobs, options.mip_gap, new, main.context, costing, cache.planned):
        # the planner's error is reported at its op
        diagnostics.failed = True
        return None
    planned, costed = cache.planned, cache.costed
    # Each dot's share under its stage's plan, timed (device-profile=local) where the profile lacks it.
    tiles = {key: plan_tiles(graph, work[key][2], planned[key][1], DeviceMesh(work[key][1].shape))
             for _, key in kept if key not in costed}
    if profile is not None and options.device_profile == "local":
        profile = with_timed_dots(profile, (device_share(graph.ops[n], work[key][1].size, profile.devices, t)
                                            for key, of_dots in tiles.items() for n, t in of_dots.items()),
                                  options.dot_timer)
    for index, key in kept:
        stage, mesh, indices = work[key]
        if key not in costed:  # once per distinct stage and mesh (profiling runs it)
            cost = _stage_cost(options, profile, stage, mesh, *planned[key], cache, indices, phase, main,
                               tiles[key], diagnostics)
            if cost is None:
                return None
            costed[key] = cost
        latency[index], params, params_whole, act_mem[index] = costed[key]
        # Optimizer state (read by the updates only) is taken as sharded like the parameters.
        param_mem[index] = params + state[index[:2]] * (params / params_whole if params_whole else 1 / mesh.size)
    compose_ranges(latency, (param_mem, act_mem), composed, options.max_costed_layers)  # max-costed-layers
    for location, message in dict.fromkeys((loc, message) for loc, severity, message in sink
                                           if severity == "warning"):
        diagnostics.warning(location, message)
    return StageCosts(latency, tuple(submeshes), param_mem, act_mem, options.device_memory or math.inf), \
        len(entries) - len(kept)


def plan_stage(module: ir.Module, mesh: DeviceMesh, diagnostics: Diagnostics,
               state: tuple[tuple[int, int], ...] = (), mip_gap: float = HIGHS_MIP_GAP) -> ShardingPlan | None:
    """``module`` (a stage) annotated with its intra-op plan on ``mesh``, its ``state``
    (argument, result) pairs each in one sharding, within ``mip_gap`` of the optimum; the
    plan, or None after an error."""
    return _stage_planner(mesh.shape, mesh.alpha, mesh.beta, state, mip_gap).plan_module(module.operation,
                                                                                         diagnostics)


def _plan_all(jobs: int, mip_gap: float, work: dict, context: ir.Context, diagnostics: Diagnostics,
              planned: dict) -> bool:
    """Each distinct stage module planned on its logical mesh within ``mip_gap`` of its
    optimum, from a fresh copy, into ``planned``: key -> (plan, shardings of its copied
    ops' results, the planned module).
    ``jobs`` > 1 plans in that many processes. False after an error (reported)."""
    progress = _Progress("stage construction: planned", len(work))
    if jobs > 1 and work:
        keys = list(work)
        try:
            with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) \
                    as pool:
                remote = pool.map(_plan_remotely, [key[0] for key in keys],
                                  [tuple(work[key][1].shape) for key in keys],
                                  [work[key][1].alpha for key in keys], [work[key][1].beta for key in keys],
                                  [mip_gap] * len(keys))
                for key, answer in zip(keys, remote):
                    if answer is not None:
                        module = ir.Module.parse(answer[0], context=context)
                        planned[key] = (ShardingPlan.from_json(answer[1]), _copy_shardings(module), module)
                    progress.step()
        except concurrent.futures.process.BrokenProcessPool as error:
            LOG.warning("stage construction: option 'jobs': a planning process died (%s); planning the other "
                        "candidates here. (A script whose passes start processes must run its top level under "
                        "`if __name__ == \"__main__\":`, or each process starts the script again.)", error)
    for key, (_, mesh, _) in work.items():
        if key not in planned:  # serially (or again, so that a failure is reported at its op)
            module = ir.Module.parse(key[0], context=context)
            plan = plan_stage(module, mesh, diagnostics, mip_gap=mip_gap)
            if plan is None:
                progress.close()
                return False
            planned[key] = (plan, _copy_shardings(module), module)
            progress.step()
    progress.close()
    return True


def _stage_cost(options: StageConstructionPass, profile: DeviceProfile | None, stage, mesh: DeviceMesh,
                plan: ShardingPlan,
                shardings: list[list[str]],
                planned: ir.Module, cache: CostCache, indices, phase, main, tiles: dict[int, tuple[int, ...]],
                diagnostics: Diagnostics) -> tuple[float, float, float, float] | None:
    """``t_intra``, parameter bytes per device and in all, and activation bytes per device of one
    stage on ``mesh`` under ``plan`` (``shardings``: of each copied op's results; ``planned``:
    the annotated module; ``tiles``: :func:`plan_tiles`)."""
    if options.cost_model == "profile":
        if options.stage_timer is None:
            diagnostics.error(main, "option 'cost-model=profile' times stages with a stage timer the pass is not "
                                    "given: build it with stage_timer= (alpa-opt and alpa_mlir give the runtime's)")
            return None
        try:
            latency = options.stage_timer(planned, DeviceMesh(mesh.shape), options.profile_repeats)
        except ValueError as error:
            diagnostics.error(main, f"option 'cost-model=profile': {error}")
            return None
    elif profile is None:
        latency = plan.objective + _compute_seconds(options, None, cache, indices, mesh.size)
    else:
        latency = plan.objective + compute_seconds(cache.graph, indices, mesh.size, profile, tiles) + \
            sync_seconds(plan, mesh, profile)
    arguments = list(main.regions[0].blocks[0].arguments)
    read = [(value, v) for value, v in zip(stage.inputs, plan.arguments)
            if value in arguments and v.spec is not None]
    params = sum(tile_bytes(v.spec, v.shape, itemsize_of(value), mesh) for value, v in read)
    params_whole = sum(math.prod(v.shape) * itemsize_of(value) for value, v in read)
    graph = cache.graph
    backward = {n for n in indices if phase[n] == BACKWARD}
    saved = 0.0  # activations the stage's backward reads from its forward (Eq. 5's mem_act)
    for n, texts in zip(sorted(indices), shardings):
        if phase[n] != FORWARD:
            continue
        for result, text in zip(graph.ops[n].results, texts):
            shape = shape_of(result)
            if shape is not None and backward.intersection(graph.value_users.get(result, ())):
                spec = (ShardingSpec.replicated(len(shape)) if is_host_callback(graph.ops[n])  # whole, as read
                        else ShardingSpec.from_mhlo(text, DeviceMesh(mesh.shape), len(shape)))
                saved += tile_bytes(spec, shape, itemsize_of(result), mesh)
    return latency, params, params_whole, saved


def sync_seconds(plan: ShardingPlan, mesh: DeviceMesh, profile: DeviceProfile) -> float:
    """What ``plan``'s collectives on ``mesh`` cost inside a stage's program beyond the
    alpha-beta model its Eq. 1 priced them on: each its wait for the slowest peer, the
    profile's ``collective_sync`` for as many devices less the alpha already counted."""
    return sum(c.count * max(0.0, profile.sync_seconds(math.prod(mesh.shape[a] for a in c.mesh_axes)) -
                             max(mesh.alpha[a] for a in c.mesh_axes))
               for c in plan.communication if c.mesh_axes)


def _compute_seconds(options: StageConstructionPass, profile: DeviceProfile | None, cache: CostCache,
                     indices: tuple[int, ...], devices: int) -> float:
    """The analytic compute of a stage (``cache.graph``'s ops ``indices``) on ``devices``
    devices: priced by ``profile``, or its FLOPs at the option ``device-flops``. Once per
    search for each stage and device count (the logical views of a submesh share it)."""
    key = (indices, devices)
    if key not in cache.compute:
        graph = cache.graph
        cache.compute[key] = compute_seconds(graph, indices, devices, profile) if profile is not None else \
            sum(op_flops(graph.ops[n]) for n in indices) / (devices * options.device_flops)
    return cache.compute[key]


def _floors(options: StageConstructionPass, profile: DeviceProfile | None, cache: CostCache,
            of_layer: list[list[int]], phase: list[str], submeshes: list[tuple[int, int]]) -> tuple[list[float], float]:
    """A floor under what each layer's forward and backward ops add to the analytic compute
    (:func:`_compute_seconds`) of any stage that holds them on any of ``submeshes``, and one
    under the launches of a stage: each op at the least, over the submeshes' device counts,
    of its price in a stage of every forward and backward op (where its results leave their
    fused chains least; matmuls at the fastest FLOP/s), the launches at the fewest seconds."""
    sizes = tuple(sorted({rows * columns for rows, columns in submeshes}))
    steps = [n for n, p in enumerate(phase) if p in (FORWARD, BACKWARD)]
    if sizes not in cache.floors:
        graph = cache.graph
        if profile is None:
            cache.floors[sizes] = {n: op_flops(graph.ops[n]) / (sizes[-1] * options.device_flops) for n in steps}
        else:
            inside = set(steps)
            cache.floors[sizes] = {n: min(op_seconds(graph, n, d, profile, inside) for d in sizes) for n in steps}
    floor = cache.floors[sizes]
    launches = 0.0 if profile is None else 2 * min(profile.launch_seconds(d) for d in sizes)
    return [sum(floor.get(n, 0.0) for n in ops) for ops in of_layer], launches


# Ops XLA fuses into their readers or turns into views: they write nothing of their own.
_FREE_OPS = frozenset({"stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.constant", "stablehlo.iota",
                       "stablehlo.bitcast_convert", "stablehlo.get_tuple_element", "stablehlo.tuple"})
# Element-wise ops: XLA fuses a chain of them (with the free ops) into one loop that writes
# only what leaves the chain.
_ELEMENTWISE = frozenset(f"stablehlo.{name}" for name in (
    "abs add and cbrt ceil clamp compare convert cosine divide exponential exponential_minus_one floor is_finite "
    "log log_plus_one logistic maximum minimum multiply negate not or power remainder round_nearest_even rsqrt "
    "select sign sine sqrt subtract tan tanh xor").split())
_MATMULS = frozenset({"stablehlo.dot_general", "stablehlo.dot", "stablehlo.convolution"})
_DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16", "f64": "float64"}


def device_share(op: ir.Operation, devices: int, host_devices: int, tiles: Sequence[int]) -> Dot | None:
    """One device's share of a ``dot_general`` on ``devices`` devices (``host_devices`` of
    them at once) under a plan that splits its result dimensions into ``tiles``; None for
    other ops and non-float dots. The batch and free dimensions are split as the result
    is, and the devices that hold the same result tile split the contracting dimensions
    (partial sums: the intra-op pass keeps no algorithm that repeats a dot's work on a mesh
    axis), so the share has the dot's FLOPs over the devices (more where a dimension does
    not divide: it is rounded up, as XLA pads it)."""
    if op.name != "stablehlo.dot_general":
        return None
    lhs, rhs = list(shape_of(op.operands[0]) or ()), list(shape_of(op.operands[1]) or ())
    dtypes = [str(ir.RankedTensorType(v.type).element_type) for v in (op.operands[0], op.results[0])]
    if not lhs or not rhs or not all(dtype in _DTYPES for dtype in dtypes):
        return None
    numbers = hlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    lhs_batch, rhs_batch = tuple(numbers.lhs_batching_dimensions), tuple(numbers.rhs_batching_dimensions)
    lhs_contracting, rhs_contracting = tuple(numbers.lhs_contracting_dimensions), \
        tuple(numbers.rhs_contracting_dimensions)
    partner = {**dict(zip(lhs_batch, rhs_batch)), **dict(zip(lhs_contracting, rhs_contracting))}
    lhs_free = [d for d in range(len(lhs)) if d not in lhs_batch + lhs_contracting]
    rhs_free = [d for d in range(len(rhs)) if d not in rhs_batch + rhs_contracting]

    def split_lhs(d: int, count: int) -> None:
        lhs[d] = -(-lhs[d] // count)
        if d in partner:
            rhs[partner[d]] = lhs[d]

    for d, count in zip([*lhs_batch, *lhs_free], tiles):  # the result's dimensions: batch, lhs free, rhs free
        split_lhs(d, count)
    for d, count in zip(rhs_free, tiles[len(lhs_batch) + len(lhs_free):]):
        rhs[d] = -(-rhs[d] // count)
    rest = devices // math.prod(tiles)
    if rest > 1 and lhs_contracting:
        split_lhs(next((d for d in lhs_contracting if lhs[d] % rest == 0), max(lhs_contracting, key=lambda d: lhs[d])),
                  rest)
    return Dot(tuple(lhs), tuple(rhs), lhs_batch, rhs_batch, lhs_contracting, rhs_contracting,
               _DTYPES[dtypes[0]], _DTYPES[dtypes[1]], min(devices, host_devices))


def with_timed_dots(profile: DeviceProfile, dots: Iterable[Dot | None],
                    timer: Callable[[list[Dot]], dict[str, float]] | None) -> DeviceProfile:
    """``profile`` with the seconds ``timer`` gives for those of ``dots`` its table lacks
    (all at once; None entries skipped); ``profile`` itself without a timer."""
    missing = list({dot.key: dot for dot in dots if dot is not None and dot.key not in profile.dots}.values())
    if not missing or timer is None:
        return profile
    seconds = timer(missing)
    return profile.with_dots({dot: seconds[dot.key] for dot in missing})


def plan_tiles(graph: StepGraph, indices: Sequence[int], shardings: list[list[str]],
               mesh: DeviceMesh) -> dict[int, tuple[int, ...]]:
    """The shards of each result dimension of the dots among ``graph``'s ops ``indices``
    (``shardings``: each op's result shardings, in op order) on ``mesh``, by op number."""
    tiles = {}
    for n, texts in zip(sorted(indices), shardings):
        shape = shape_of(graph.ops[n].results[0]) if graph.ops[n].name == "stablehlo.dot_general" else None
        if shape is not None:
            spec = ShardingSpec.from_mhlo(texts[0], mesh, len(shape))
            tiles[n] = tuple(spec.num_shards(d, mesh) for d in range(len(shape)))
    return tiles


def compute_seconds(graph: StepGraph, indices: Sequence[int], devices: int, profile: DeviceProfile,
                    tiles: dict[int, tuple[int, ...]] | None = None) -> float:
    """The compute of a stage (``graph``'s ops ``indices``) on ``devices`` devices as
    ``profile`` prices it, the work split evenly over the devices: each op's
    :func:`op_seconds`, and two program launches (the forward's and the backward's)."""
    inside = set(indices)
    return 2 * profile.launch_seconds(devices) + sum(op_seconds(graph, n, devices, profile, inside, tiles)
                                                     for n in indices)


def op_seconds(graph: StepGraph, n: int, devices: int, profile: DeviceProfile, inside: set[int],
               tiles: dict[int, tuple[int, ...]] | None = None) -> float:
    """Op ``n``'s compute in a stage of the ops ``inside`` on ``devices`` devices: under a plan
    (``tiles``: the shards of each dot's result, by op number) a ``dot_general`` at the
    profile's time of one device's share (:func:`device_share`); other matmuls and
    convolutions at its FLOP/s for their result type. Without a plan every matmul is taken
    at the profile's fastest FLOP/s, a bound for the prune below what any plan's dots were
    measured to take. Other ops at its memory bandwidth for the bytes they write, where an
    element-wise op writes only what leaves its fused chain (a result read outside the stage
    or by an op that is not element-wise) and views and broadcasts write nothing."""
    op = graph.ops[n]
    dot = device_share(op, devices, profile.devices, tiles[n]) if tiles is not None and n in tiles else None
    if dot is not None:
        return profile.dot_seconds(dot)
    if op.name in _MATMULS:
        dtype = str(ir.RankedTensorType(op.results[0].type).element_type)
        price = profile.fastest_matmul_seconds if tiles is None else profile.matmul_seconds
        return price(op_flops(op), _DTYPES.get(dtype, dtype), devices)
    if op.name in _FREE_OPS:
        return 0.0
    fused = _FREE_OPS | _ELEMENTWISE
    written = [r for r in op.results if shape_of(r) is not None and (
        op.name not in _ELEMENTWISE or not graph.value_users.get(r) or
        any(u not in inside or graph.ops[u].name not in fused for u in graph.value_users[r]))]
    return profile.elementwise_seconds(sum(math.prod(shape_of(r)) * itemsize_of(r) for r in written), devices)


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """The objects alive before the stage search set aside from Python's garbage collector
    while it runs (``gc.freeze``): its full collections walk every live object, and a traced
    model leaves hundreds of thousands (JAX, Flax, the model's state) that the search never
    frees (4-layer GPT-2: 390k objects, 1.0 of the search's 11.9 s in full collections).
    Collections still run, over what the search makes. Left alone where the application
    froze objects itself (its freeze is not ours to undo)."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


class _Progress:
    """A one-line progress bar on an interactive stderr (``planned 12/60 (8.1 s)``); nothing
    otherwise, where the log lines of each phase say how far the search is."""

    def __init__(self, what: str, total: int) -> None:
        self.what, self.total, self.done = what, total, 0
        self.start = time.perf_counter()
        self.shown = sys.stderr.isatty() and total > 1

    def step(self) -> None:
        self.done += 1
        if self.shown:
            width = 30
            bar = "#" * (width * self.done // self.total)
            sys.stderr.write(f"\r{self.what} [{bar:<{width}}] {self.done}/{self.total} "
                             f"({time.perf_counter() - self.start:.1f} s)")
            sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")


def _stage_planner(shape: tuple[int, ...], alpha: tuple[float, ...], beta: tuple[float, ...],
                   state: tuple[tuple[int, int], ...], mip_gap: float) -> AutoShardingPass:
    """The intra-op pass a stage is planned with; a tensor dimension may take every axis of
    its submesh (S^{01}: data parallelism within a stage on a 2-D submesh); ``state``: its
    (argument, result) pairs kept in one sharding."""
    return AutoShardingPass(mesh_shape=shape, mesh_alpha=alpha, mesh_beta=beta, allow_flattened_mesh=True,
                            state=state, mip_gap=mip_gap)


def _plan_remotely(text: str, shape: tuple[int, ...], alpha: tuple[float, ...],
                   beta: tuple[float, ...], mip_gap: float) -> tuple[str, dict] | None:
    """In a worker process: plan a stage module; its annotated text and plan, or None on failure."""
    with make_context():
        module = ir.Module.parse(text)
        plan = _stage_planner(shape, alpha, beta, (), mip_gap).plan_module(module.operation, Diagnostics([]))
        return None if plan is None else (str(module), plan.to_json())


def _copy_shardings(module: ir.Module) -> list[list[str]]:
    """The result shardings of a planned stage's copied ops, in copy order (found by COPY_ATTR
    among the ops of its ``@main``'s body, where ``extract`` put them)."""
    found = {ir.IntegerAttr(op.attributes[COPY_ATTR]).value: result_shardings(op)
             for op in find_main(module.operation).regions[0].blocks[0].operations if COPY_ATTR in op.attributes}
    return [found[n] for n in range(len(found))]


def _state_bytes(graph: StepGraph, phase: list[str], indices: list[int]) -> float:
    """Bytes of the @main arguments that only the stage's apply ops read (optimizer state)."""
    read: dict[int, set[str]] = {}
    for n in indices:
        for argument in graph.args_read[n]:
            read.setdefault(argument, set()).add(phase[n])
    arguments = list(graph.arg_number)
    return float(sum(math.prod(shape_of(arguments[a]) or ()) * itemsize_of(arguments[a])
                     for a, phases in read.items() if phases == {APPLY}))
