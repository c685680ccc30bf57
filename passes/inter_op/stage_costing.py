"""Stage costing of ``alpa-stage-construction``: ``t_intra`` and memory of each candidate stage.

Every (layer range, logical mesh) candidate's forward and backward ops are extracted
into a module of their own and planned by ``alpa-auto-sharding`` (modules that print
alike, as repeated layers do, are planned once; ``jobs`` > 1 plans in processes). Its
latency is analytic (FLOPs over the devices' FLOP/s, or priced by a device profile:
``profile_pricing.py``; plus the plan's communication on the alpha-beta model) or
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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

import numpy as np
from jax._src.lib.mlir import ir

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
from ..intra_op.strategy_tables import TableCache
from .layer_construction import op_flops
from .outline import Extracted, extract
from .profile_pricing import compute_seconds, device_share, op_seconds, plan_tiles, sync_seconds, with_timed_dots
from .stage_dp import StageCosts
from .stage_search import CostedSpace, SearchSpace, compose_ranges
from .training_step import StepGraph

LOG = logging.getLogger("alpa_mlir.stage_construction")
# In a planning process (jobs > 1; it lives for one _plan_all), the tables its plans share.
_WORKER_TABLES = TableCache()
# cost-model=profile: (planned stage module, mesh, timed runs) -> the median seconds of one
# run on local devices; a ValueError when the mesh cannot run here.
StageTimer = Callable[[ir.Module, DeviceMesh, int], float]


@dataclass(frozen=True)
class CostingOptions:
    """What stage costing reads of ``alpa-stage-construction``'s options, built once per run:
    the cluster (its per-axis alpha-beta from the options or the device profile), Eq. 2's
    ``B`` and ``v`` (for the prune's bound), how candidates are planned (``jobs``,
    ``mip_gap``) and timed (``cost_model``, ``profile_repeats``, ``stage_timer``; the dots a
    ``local`` profile lacks with ``dot_timer``), ``device_flops`` without a profile,
    ``device_memory`` for Eq. 5 (0: unlimited) and ``max_costed_layers``."""

    cluster: PhysicalCluster
    num_micro_batches: int = 1
    virtual_stages: int = 1
    jobs: int = 1
    mip_gap: float = 0.01
    cost_model: Literal["analytic", "profile"] = "analytic"
    profile_repeats: int = 3
    device_flops: float = 1e13
    device_memory: float = 0.0
    max_costed_layers: int = 0
    time_dots: bool = False  # device-profile=local: time the dots the profile lacks with dot_timer
    stage_timer: StageTimer | None = None
    dot_timer: Callable[[list[Dot]], dict[str, float]] | None = None


class LayeredStep(NamedTuple):
    """``@main`` of a training step, with the layer and phase of each of its ops."""

    main: ir.Operation
    layer: list[int]
    phase: list[str]


class PlannedStage(NamedTuple):
    """A candidate stage module planned on its logical mesh."""

    plan: ShardingPlan
    shardings: list[list[str]]  # the result shardings of each op it copies, in copy order
    module: ir.Module  # the annotated module


class StageCost(NamedTuple):
    """What a candidate stage costs on its logical mesh."""

    latency: float  # t_intra, seconds
    params: float  # bytes per device of the parameters it reads
    params_whole: float  # their bytes unsharded
    activations: float  # bytes per device its backward reads from its forward (Eq. 5's mem_act)


class _Work(NamedTuple):
    """A distinct (stage module, logical mesh) to plan and cost."""

    stage: Extracted
    mesh: DeviceMesh
    indices: tuple[int, ...]  # the ops of @main it copies


class _CostingError(Exception):
    """A candidate that cannot be costed; the message is reported at ``@main``."""


@dataclass
class CostCache:
    """The stage modules extracted, planned and costed so far, shared by the costings of one
    search (its first candidates, then the rest; the layerings it compares): a range is
    extracted and planned once, however often and by whichever layering it is asked for."""

    planned: dict = field(default_factory=dict)  # key -> PlannedStage
    costed: dict = field(default_factory=dict)  # key -> StageCost
    extracted: dict = field(default_factory=dict)  # the ops of @main it copies -> (stage, its text)
    graph: StepGraph | None = None  # @main's dataflow
    compute: dict = field(default_factory=dict)  # (the ops of @main it copies, devices) -> analytic compute
    floors: dict = field(default_factory=dict)  # device counts -> op number -> floor under its compute (_floors)
    tables: TableCache = field(default_factory=TableCache)  # the intra-op plans' strategy and resharding tables


def cost_stages(options: CostingOptions, step: LayeredStep, space: SearchSpace, profile: DeviceProfile | None,
                cache: CostCache, diagnostics: Diagnostics, *, bound: float = math.inf) -> CostedSpace | None:
    """Eq. 3-5's tables for the DP: ``t_intra`` and the memories of every candidate of
    ``space`` on every logical view of its submesh, and of its composed ranges built from
    shorter ones; compute priced by ``profile`` where given. Stage modules in ``cache`` are
    not planned again; new ones are added.

    ``bound``: the Eq. 2 latency of a plan already found. Eq. 2 is at least ``B t_i`` plus
    the other stages' ``t_j`` (over ``v``, interleaved: ``stage_dp.pipeline_latency``) for
    each of its stages, a ``t`` is at least its stage's compute, and the other stages'
    compute at least their layers' floors (:func:`_floors`). So a candidate whose ``B``
    times compute and the floors of the layers it leaves exceed ``bound`` is in no better
    plan: it is not planned, and its latency stays inf. (So ``bound`` must be inf where the
    latencies are not compute plus a communication cost: measured, or composed.) Returns
    the tables and the number of (range, logical mesh) entries so skipped; None after an
    error (reported)."""
    main, layer, phase = step
    num_layers = max(layer) + 1
    width = max(len(v) for v in space.views.values())
    shape = (num_layers + 1, num_layers + 1, len(space.submeshes), width)
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
             for i, j in {(i, j) for i, j, _ in space.candidates}}
    work, entries = _stage_work(options, step, space, of_layer, cache)
    kept = entries
    if math.isfinite(bound):
        # Eq. 2 is at least B t_i plus the other stages' t_j (over v, interleaved); a t is at
        # least its stage's compute (the plan's communication, Eq. 1's value, is never
        # negative), and the stages that hold the other layers at least those layers' floors.
        floors, launches = _floors(options.device_flops, profile, cache, of_layer, phase, space.submeshes)
        kept = [(index, key) for index, key in entries if key in cache.costed or options.num_micro_batches *
                _compute_seconds(options.device_flops, profile, cache, work[key].indices, work[key].mesh.size) +
                (sum(floors[:index[0]]) + sum(floors[index[1]:]) +
                 launches * ((index[0] > 0) + (index[1] < num_layers))) / options.virtual_stages <= bound]
    new = {key: work[key] for _, key in kept if key not in cache.planned}
    if not _plan_all(options, new, cache, main.context, costing):
        # the planner's error is reported at its op
        diagnostics.failed = True
        return None
    planned, costed = cache.planned, cache.costed
    # Each dot's share under its stage's plan, timed (device-profile=local) where the profile lacks it.
    tiles = {key: plan_tiles(graph, work[key].indices, planned[key].shardings, DeviceMesh(work[key].mesh.shape))
             for _, key in kept if key not in costed}
    if profile is not None and options.time_dots:
        profile = with_timed_dots(profile, (device_share(graph.ops[n], work[key].mesh.size, profile.devices, t)
                                            for key, of_dots in tiles.items() for n, t in of_dots.items()),
                                  options.dot_timer)
    arguments = list(main.regions[0].blocks[0].arguments)
    for index, key in kept:
        if key not in costed:  # once per distinct stage and mesh (profiling runs it)
            try:
                seconds = _stage_latency(options, profile, cache, work[key], planned[key], tiles[key])
            except _CostingError as error:
                diagnostics.error(main, str(error))
                return None
            costed[key] = _stage_cost(seconds, graph, phase, arguments, work[key], planned[key])
        cost = costed[key]
        latency[index], act_mem[index] = cost.latency, cost.activations
        # Optimizer state (read by the updates only) is taken as sharded like the parameters.
        param_mem[index] = cost.params + state[index[:2]] * (cost.params / cost.params_whole if cost.params_whole
                                                             else 1 / work[key].mesh.size)
    compose_ranges(latency, (param_mem, act_mem), space.composed, options.max_costed_layers)  # max-costed-layers
    for location, message in dict.fromkeys((loc, message) for loc, severity, message in sink
                                           if severity == "warning"):
        diagnostics.warning(location, message)
    return CostedSpace(StageCosts(latency, tuple(space.submeshes), param_mem, act_mem,
                                  options.device_memory or math.inf), len(entries) - len(kept))


def _stage_work(options: CostingOptions, step: LayeredStep, space: SearchSpace, of_layer: list[list[int]],
                cache: CostCache) -> tuple[dict[tuple, _Work], list[tuple[tuple, tuple]]]:
    """The distinct stage modules of ``space`` (by module text and logical mesh), each
    extracted once into ``cache``, and each table entry's (index, work key)."""
    main, _, phase = step
    work: dict[tuple, _Work] = {}  # by (stage module text, logical mesh)
    entries = []  # (table index, work key)
    ranges: dict[tuple[int, int], tuple] = {}  # (start, end) -> (stage, its text, indices)
    i64 = ir.IntegerType.get_signless(64, main.context)
    for i, j, k in space.candidates:
        if (i, j) not in ranges:  # once per range, whatever the submesh
            indices = tuple(sorted(n for number in range(i, j) for n in of_layer[number]
                                   if phase[n] in (FORWARD, BACKWARD)))
            if indices not in cache.extracted:
                stage = extract(main, list(indices))
                for number, op in enumerate(stage.ops):  # layer numbers must not tell repeated layers apart
                    del op.attributes[LAYER_ATTR]
                    del op.attributes[PHASE_ATTR]
                    op.attributes[COPY_ATTR] = ir.IntegerAttr.get(i64, number)
                cache.extracted[indices] = (stage, str(stage.module))
            ranges[i, j] = (*cache.extracted[indices], indices)
        stage, text, indices = ranges[i, j]
        for p, view in enumerate(space.views[k]):
            mesh = options.cluster.logical_mesh(options.cluster.submesh(0, k[0], 0, k[1]), view)
            key = (text, mesh.shape, mesh.alpha, mesh.beta)
            work.setdefault(key, _Work(stage, mesh, indices))
            entries.append(((i, j, space.submeshes.index(k), p), key))
    return work, entries


def plan_stage(module: ir.Module, mesh: DeviceMesh, diagnostics: Diagnostics,
               state: tuple[tuple[int, int], ...] = (), mip_gap: float = HIGHS_MIP_GAP,
               tables: TableCache | None = None) -> ShardingPlan | None:
    """``module`` (a stage) annotated with its intra-op plan on ``mesh``, its ``state``
    (argument, result) pairs each in one sharding, within ``mip_gap`` of the optimum (its
    strategy tables shared through ``tables``); the plan, or None after an error. A tensor
    dimension may take every axis of the submesh (S^{01}: data parallelism within a stage
    on a 2-D submesh)."""
    planner = AutoShardingPass(mesh_shape=mesh.shape, mesh_alpha=mesh.alpha, mesh_beta=mesh.beta,
                               allow_flattened_mesh=True, state=state, mip_gap=mip_gap, strategy_tables=tables)
    return planner.plan_module(module.operation, diagnostics)


def _plan_all(options: CostingOptions, work: dict[tuple, _Work], cache: CostCache, context: ir.Context,
              diagnostics: Diagnostics) -> bool:
    """Each distinct stage module (``work``, by its text and logical mesh) planned on its
    logical mesh within the option ``mip_gap`` of its optimum, from a fresh copy, into
    ``cache.planned``. ``jobs`` > 1 plans in that many processes. False after an error
    (reported)."""
    jobs, mip_gap, planned = options.jobs, options.mip_gap, cache.planned
    progress = _Progress("stage construction: planned", len(work))
    if jobs > 1 and work:
        keys = list(work)
        try:
            with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) \
                    as pool:
                remote = pool.map(_plan_remotely, [key[0] for key in keys],
                                  [tuple(work[key].mesh.shape) for key in keys],
                                  [work[key].mesh.alpha for key in keys], [work[key].mesh.beta for key in keys],
                                  [mip_gap] * len(keys))
                for key, answer in zip(keys, remote):
                    if answer is not None:
                        module = ir.Module.parse(answer[0], context=context)
                        planned[key] = PlannedStage(ShardingPlan.from_json(answer[1]), _copy_shardings(module), module)
                    progress.step()
        except concurrent.futures.process.BrokenProcessPool as error:
            LOG.warning("stage construction: option 'jobs': a planning process died (%s); planning the other "
                        "candidates here. (A script whose passes start processes must run its top level under "
                        "`if __name__ == \"__main__\":`, or each process starts the script again.)", error)
    for key, item in work.items():
        if key not in planned:  # serially (or again, so that a failure is reported at its op)
            module = ir.Module.parse(key[0], context=context)
            plan = plan_stage(module, item.mesh, diagnostics, mip_gap=mip_gap, tables=cache.tables)
            if plan is None:
                progress.close()
                return False
            planned[key] = PlannedStage(plan, _copy_shardings(module), module)
            progress.step()
    progress.close()
    return True


def _stage_latency(options: CostingOptions, profile: DeviceProfile | None, cache: CostCache, work: _Work,
                   planned: PlannedStage, tiles: dict[int, tuple[int, ...]]) -> float:
    """``t_intra`` of one stage on its logical mesh under its plan (``tiles``:
    :func:`~.profile_pricing.plan_tiles`): measured (``cost-model=profile``), or its compute
    (priced by ``profile`` where given) plus the plan's communication. Raises
    ``_CostingError`` where it cannot be timed."""
    mesh = work.mesh
    if options.cost_model == "profile":
        if options.stage_timer is None:
            raise _CostingError("option 'cost-model=profile' times stages with a stage timer the pass is not "
                                "given: build it with stage_timer= (alpa-opt and alpa_mlir give the runtime's)")
        try:
            return options.stage_timer(planned.module, DeviceMesh(mesh.shape), options.profile_repeats)
        except ValueError as error:
            raise _CostingError(f"option 'cost-model=profile': {error}") from None
    if profile is None:
        return planned.plan.objective + _compute_seconds(options.device_flops, None, cache, work.indices, mesh.size)
    return planned.plan.objective + compute_seconds(cache.graph, work.indices, mesh.size, profile, tiles) + \
        sync_seconds(planned.plan, mesh, profile)


def _stage_cost(latency: float, graph: StepGraph, phase: list[str], arguments: list[ir.Value], work: _Work,
                planned: PlannedStage) -> StageCost:
    """One stage's cost on its logical mesh under its plan: ``latency`` (its ``t_intra``)
    with its parameter bytes per device and in all, and its activation bytes per device
    (what its backward reads from its forward, Eq. 5's ``mem_act``); ``arguments``:
    ``@main``'s."""
    mesh = work.mesh
    read = [(value, v) for value, v in zip(work.stage.inputs, planned.plan.arguments)
            if value in arguments and v.spec is not None]
    params = sum(tile_bytes(v.spec, v.shape, itemsize_of(value), mesh) for value, v in read)
    params_whole = sum(math.prod(v.shape) * itemsize_of(value) for value, v in read)
    backward = {n for n in work.indices if phase[n] == BACKWARD}
    saved = 0.0
    for n, texts in zip(sorted(work.indices), planned.shardings):
        if phase[n] != FORWARD:
            continue
        for result, text in zip(graph.ops[n].results, texts):
            shape = shape_of(result)
            if shape is not None and backward.intersection(graph.value_users.get(result, ())):
                spec = (ShardingSpec.replicated(len(shape)) if is_host_callback(graph.ops[n])  # whole, as read
                        else ShardingSpec.from_mhlo(text, DeviceMesh(mesh.shape), len(shape)))
                saved += tile_bytes(spec, shape, itemsize_of(result), mesh)
    return StageCost(latency, params, params_whole, saved)


def _compute_seconds(device_flops: float, profile: DeviceProfile | None, cache: CostCache,
                     indices: tuple[int, ...], devices: int) -> float:
    """The analytic compute of a stage (``cache.graph``'s ops ``indices``) on ``devices``
    devices: priced by ``profile``, or its FLOPs at ``device_flops`` each. Once per search
    for each stage and device count (the logical views of a submesh share it)."""
    key = (indices, devices)
    if key not in cache.compute:
        graph = cache.graph
        cache.compute[key] = compute_seconds(graph, indices, devices, profile) if profile is not None else \
            sum(op_flops(graph.ops[n]) for n in indices) / (devices * device_flops)
    return cache.compute[key]


def _floors(device_flops: float, profile: DeviceProfile | None, cache: CostCache,
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
            cache.floors[sizes] = {n: op_flops(graph.ops[n]) / (sizes[-1] * device_flops) for n in steps}
        else:
            inside = set(steps)
            cache.floors[sizes] = {n: min(op_seconds(graph, n, d, profile, inside) for d in sizes) for n in steps}
    floor = cache.floors[sizes]
    launches = 0.0 if profile is None else 2 * min(profile.launch_seconds(d) for d in sizes)
    return [sum(floor.get(n, 0.0) for n in ops) for ops in of_layer], launches


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


def _plan_remotely(text: str, shape: tuple[int, ...], alpha: tuple[float, ...],
                   beta: tuple[float, ...], mip_gap: float) -> tuple[str, dict] | None:
    """In a worker process: plan a stage module; its annotated text and plan, or None on failure."""
    with make_context():
        module = ir.Module.parse(text)
        plan = plan_stage(module, DeviceMesh(shape, alpha=alpha, beta=beta), Diagnostics([]), mip_gap=mip_gap,
                          tables=_WORKER_TABLES)
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
