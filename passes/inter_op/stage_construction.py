"""``alpa-stage-construction``: slice the layers into stages on submeshes (Sec. 5.2, Algorithm 1)."""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from jax._src.lib.mlir import ir

from ...dialect.annotations import (
    MESH_ATTR,
    MHLO_SHARDING,
    find_main,
    funcs,
    get_value_attrs,
    mesh_to_attr,
    result_shardings,
    set_value_attrs,
)
from ...dialect.host_callbacks import is_host_callback
from ...dialect.mesh import MAX_DEVICES, DeviceMesh, PhysicalCluster
from ...dialect.names import APPLY, BACKWARD, FORWARD, LAYER_ATTR, PHASE_ATTR, SEGMENT_ATTR, STAGE_ATTR
from ...dialect.pass_registry import Diagnostics, Pass, provided, register
from ...plans.device_profile import DeviceProfile, DeviceProfileError, Dot
from ...plans.pipeline_plan import PipelinePlan, StagePlacement
from ..intra_op.auto_sharding import check_state
from .layer_construction import LayerConstructionPass
from .outline import OutlineError, extract, outline
from .stage_costing import CostCache, CostingOptions, LayeredStep, StageTimer, cost_stages, frozen_heap, plan_stage
from .stage_dp import StageDPError
from .stage_parts import part_numbers, rematerialize_free_ops, sum_per_stage
from .stage_search import (
    CostedSpace,
    SearchOptions,
    SearchResult,
    SearchSpace,
    search_layering,
    virtual_stage_bounds,
)
from .submesh import cover_submeshes
from .training_step import step_ops

LOG = logging.getLogger("alpa_mlir.stage_construction")
MAX_JOBS = 256  # planning processes; more than any host has cores


class Layering(NamedTuple):
    """The layer of each op of ``@main`` under one layering the search compares, by name."""

    name: str  # clustered (alpa-layer-construction's) or equal-operator
    layer: list[int]


@register
@dataclass(frozen=True)
class StageConstructionPass(Pass):
    """Pick stages, submeshes and logical meshes by the DP of Eq. 3-4; outline one function per part.

    Runs after ``alpa-layer-construction`` (every op of ``@main`` has ``alpa.layer`` and
    ``alpa.phase``). For every layer range ``[i, j)``, submesh shape of the cluster
    (Sec. 5.2's ``(1, 2^k)`` and ``(n, M)``, or all) and logical view of it, the range's
    forward and backward ops are extracted into a module of their own and planned by
    ``alpa-auto-sharding`` on that logical mesh; the stage latency ``t_intra`` is its
    compute (FLOPs / (devices x ``device-flops``)) plus the ILP's communication cost,
    with each mesh axis's alpha-beta from the hosts it spans. With ``device-profile``
    (the API's default is ``local``) a measured profile of the devices prices the compute
    (matmul FLOP/s by size and dtype, memory bandwidth, program launches) and the
    intra-host alpha-beta (``plans/device_profile.py``); ``cost-model=profile`` instead
    times the planned module compiled and run on local devices. A range whose modules
    print alike (repeated layers) is planned once. The chosen stages are planned whole,
    apply parts included, each ``state`` pair (a parameter and its update; the API passes
    the step's training state) kept in one sharding, so that the apply part can update it
    in place. Memory for Eq. 5: the per-device bytes of the parameters the stage reads and
    of the activations its backward reads from its forward. The DP (``stage_dp.py``) then picks the slicing minimising
    Eq. 2 for ``num-micro-batches``. The paper's ablation baselines (Sec. 8.3) restrict
    it: ``equal-layer`` to stages of equally many layers (``num-stages`` of them, or the
    best count), ``equal-operator`` to layers of equally many forward ops instead of the
    clustering's; ``manual`` takes the user's stages (``stage-layers``,
    ``stage-submeshes``) and picks only their logical meshes. ``auto`` also searches the
    ``equal-operator`` layering and keeps the better plan (``compare-layerings``): the
    clustering minimises what layers send each other, not stage latency, and lost to
    equal op counts on Wide-ResNet 4B on 2x8 (55.6 s against 50.0 s, exact costs); with
    both, neither baseline beats ``auto``.

    ``max-costed-layers=m`` (0: off) is an approximation for deep models, where planning
    every one of the ``L (L + 1) / 2`` ranges is too slow: only ranges of at most ``m``
    layers are planned; a longer range ``[i, j)`` is costed by appending its layers one
    at a time, each adding what it adds to the ``m``-layer range it ends
    (``t(i, j) = t(i, i+m) + sum_{l=i+m}^{j-1} t(l-m+1, l+1) - t(l-m+1, l)``, likewise
    for the memories). It is exact for ranges of up to ``m`` layers and for costs that
    add up over layers; it misses resharding between layers more than ``m - 1`` apart.

    Input: ``@main`` after ``alpa-layer-construction``, each op with its layer and phase::

        %0 = stablehlo.dot_general %x, %w0 ... {alpa.layer = 0 : i64, alpa.phase = "forward"}
        %1 = stablehlo.dot_general %0, %w1 ... {alpa.layer = 1 : i64, alpa.phase = "forward"}

    Output: the chosen stages are placed on the cluster (Appendix A's covering) and
    planned once more as a whole stage (forward, backward and apply-gradient ops);
    every op keeps that plan's ``mhlo.sharding``. Each stage's parts become
    ``func.func private @stage<s>_forward`` / ``_backward`` / ``_apply`` with
    ``alpa.stage = s`` and ``alpa.mesh`` (the logical mesh on its devices), their
    arguments and results annotated; ``@main`` calls them in dependency order.
    Scalar apply ops (step counts, learning rates) are copied into every stage that
    reads them, as constants are. Apply ops that read a scalar another stage's apply
    part computed (a global norm summed over every stage's gradients) run in a later
    apply part of their stage, ``@stage<s>_apply<k>`` after ``k`` such hops, so the
    parts never wait on each other in a cycle::

        func.func private @stage0_forward(%arg0: tensor<8x64xf32> {mhlo.sharding = "{replicated}"}, ...)
            attributes {alpa.mesh = {shape = array<i64: 1, 4>, device_ids = array<i64: 0, 1, 2, 3>, ...},
                        alpa.stage = 0 : i64}
        func.func public @main(...) {
          %0:3 = call @stage0_forward(...)
          %1:2 = call @stage1_forward(...)

    A forward-only step (``alpa-layer-construction{forward-only=true}``: no backward ops;
    ``alpa-pipeline-schedule{schedule=inference}``) has only ``@stage<s>_forward`` parts,
    and each stage holds one micro-batch's activations at a time (Eq. 5 with one in flight).

    ``virtual-stages=v`` (for ``alpa-pipeline-schedule{schedule=interleaved-1f1b}``) makes
    ``S v`` stages on the ``S`` submeshes, stage ``k`` on mesh ``k mod S`` with that mesh's
    logical mesh: ``auto`` and ``equal-operator`` give each mesh a multiple of ``v``
    layers, cut into ``v`` chunks of as many; ``equal-layer`` cuts the layers into
    ``num-stages`` (``S v``; 0: the DP picks ``S``) stages of equally many layers; ``manual``
    takes ``S v`` counts in ``stage-layers`` and ``S`` pairs in ``stage-submeshes``. The DP
    prices mesh ``r`` on one contiguous range of as many layers as its chunks hold
    (``stage_search.py``) and minimises interleaved 1F1B's Eq. 2, ``sum_r t_r / v + (B -
    1/v) max_r t_r`` (its bubble is ``v`` times smaller), over numbers of meshes ``S`` that
    divide ``B``.

    The report (``report``) holds the stages (layers, submesh, devices, logical mesh,
    latency, memory), Eq. 2's latency and the search's statistics; it loads as
    ``alpa_mlir.PipelinePlan.load(path)``, whose ``draw(png)`` pictures it. The search logs
    a line per phase (``alpa-opt`` prints them), and on an interactive terminal a progress
    bar counts the intra-op plans. Resharding between
    stages on different meshes is ``alpa-cross-mesh-resharding``'s job.
    """

    name = "alpa-stage-construction"

    cluster_shape: tuple[int, ...] = field(default=(), metadata={"help": "hosts, devices per host (e.g. 1,8)"})
    num_micro_batches: int = field(default=1, metadata={"help": "micro-batches B of Eq. 2"})
    stage_mode: Literal["auto", "equal-layer", "equal-operator", "manual"] = field(default="auto", metadata={
        "help": "auto (the DP), equal-layer (the DP with as many layers in every stage), equal-operator (the DP "
                "over layers of equal op counts), manual"})
    num_stages: int = field(default=0, metadata={"help": "equal-layer: the number of stages (0: the DP picks)"})
    stage_layers: tuple[int, ...] = field(default=(), metadata={"help": "manual: layers per stage, e.g. 2,2"})
    stage_submeshes: tuple[int, ...] = field(default=(), metadata={
        "help": "manual: each stage's submesh as hosts,devices pairs, e.g. 1,4,1,4"})
    submesh_space: Literal["power-of-two", "all"] = field(default="power-of-two", metadata={
        "help": "submesh shapes: Sec. 5.2's (1, 2^k) and (n, M), or all"})
    logical_mesh_space: Literal["all", "physical"] = field(default="all", metadata={
        "help": "logical views of a submesh: every 2-D shape of its devices (on one host not (n,1), which costs "
                "what (1,n) costs), or its physical shape"})
    cost_model: Literal["analytic", "profile"] = field(default="analytic", metadata={
        "help": "analytic (FLOPs and the ILP's communication) or profile (compile and time each candidate on "
                "local devices)"})
    profile_repeats: int = field(default=3, metadata={"help": "profile: timed runs per candidate (median)"})
    jobs: int = field(default=1, metadata={"help": "processes planning candidates at once (analytic costs)"})
    prune: bool = field(default=True, metadata={
        "help": "skip the candidates whose compute (and the other layers' least) rules them out of a better plan "
                "than one already costed (the plan found is the same); off: cost every candidate, e.g. for each "
                "one's latency in the report"})
    mip_gap: float = field(default=0.01, metadata={
        "help": "the candidates' intra-op plans may cost this fraction more than their optimum (alpa-auto-sharding's "
                "mip-gap; well inside the cost model's own error); the chosen stages are planned to 1e-4"})
    device_memory: float = field(default=0.0, metadata={"help": "bytes per device for Eq. 5 (0: unlimited)"})
    device_flops: float = field(default=1e13, metadata={"help": "FLOP/s of one device (without device-profile)"})
    device_profile: str = field(default="", metadata={
        "help": "what prices compute, launches and collectives inside a host: empty (device-flops and the "
                "intra-host bandwidth and latency), 'local' (this machine's profile, measured once and cached), or "
                "the path of a saved profile (JSON)"})
    intra_host_bandwidth: float = field(default=1e11, metadata={"help": "bytes/s between devices of a host"})
    inter_host_bandwidth: float = field(default=3.125e9, metadata={"help": "bytes/s between hosts"})
    intra_host_latency: float = field(default=5e-6, metadata={"help": "seconds per collective in a host"})
    inter_host_latency: float = field(default=2e-5, metadata={"help": "seconds per collective across hosts"})
    max_costed_layers: int = field(default=0, metadata={
        "help": "plan only ranges of at most this many layers and compose longer ones from them (0: plan all)"})
    epsilon: float = field(default=0.0, metadata={
        "help": "seconds; t_max candidates closer than this merge (a faster DP within (B-1)*epsilon; 0: exact)"})
    compare_layerings: bool = field(default=True, metadata={
        "help": "auto: also search the equal-operator layering of as many layers and keep the better plan (the "
                "clustering alone can lose to it; costs up to twice the intra-op plans)"})
    state: tuple[tuple[int, int], ...] = field(default=(), metadata={
        "help": "argument:result pairs of @main's training state, e.g. 0:0,1:1; the stage that updates a pair "
                "keeps one sharding for it in and out, so its apply part can write the update in place and the "
                "next step takes the state as this one returns it"})
    virtual_stages: int = field(default=1, metadata={
        "help": "stages per mesh v for interleaved 1F1B (equal-layer or manual): stage k on mesh k mod S"})
    report: str = field(default="", metadata={"help": "path of a JSON stage-plan report"})
    stage_timer: StageTimer | None = provided(
        "cost-model=profile: the seconds one run of a planned module takes on local devices "
        "(runtime.profiling.time_module)")
    device_profiler: Callable[[], DeviceProfile] | None = provided(
        "device-profile=local: this machine's device profile (runtime.device_profile.local_profile)")
    dot_timer: Callable[[list[Dot]], dict[str, float]] | None = provided(
        "device-profile=local: seconds of dots the profile lacks, by key (runtime.device_profile.local_dot_seconds; "
        "without it they are priced at the profile's FLOP/s)")
    on_plan: Callable[[PipelinePlan], None] | None = provided("receives the stage plan, as the report file would")

    def __post_init__(self) -> None:
        self._check_stages()
        self._check_costing()

    def _check_stages(self) -> None:
        """The cluster, micro-batch and stage options."""
        if len(self.cluster_shape) != 2 or min(self.cluster_shape, default=0) < 1:
            raise ValueError("option 'cluster-shape' must be two positive sizes: hosts, devices per host")
        if math.prod(self.cluster_shape) > MAX_DEVICES:
            raise ValueError(f"option 'cluster-shape' holds {math.prod(self.cluster_shape)} devices; at most "
                             f"{MAX_DEVICES} are supported")
        if self.num_micro_batches < 1:
            raise ValueError(f"option 'num-micro-batches' must be positive; got {self.num_micro_batches}")
        if self.num_stages < 0 or (self.num_stages and self.stage_mode != "equal-layer"):
            raise ValueError("option 'num-stages' is a positive number of stages for stage-mode=equal-layer")
        if self.virtual_stages < 1:
            raise ValueError(f"option 'virtual-stages' must be positive; got {self.virtual_stages}")
        if self.num_stages % self.virtual_stages:
            raise ValueError(f"option 'num-stages' {self.num_stages} must be a multiple of option 'virtual-stages' "
                             f"{self.virtual_stages}: every mesh holds as many stages")
        if self.stage_mode == "manual" and (not self.stage_layers or len(self.stage_layers) % self.virtual_stages
                                            or self.virtual_stages * len(self.stage_submeshes)
                                            != 2 * len(self.stage_layers)):
            raise ValueError("option 'stage-mode=manual' needs 'stage-layers' and one hosts,devices pair per mesh "
                             "in 'stage-submeshes' (a mesh per stage, or per 'virtual-stages' stages)")
        meshes = len(self.stage_layers) // self.virtual_stages
        if self.virtual_stages > 1 and self.stage_mode == "manual" and self.num_micro_batches % meshes:
            raise ValueError(f"option 'num-micro-batches' {self.num_micro_batches} must be a multiple of the {meshes} "
                             "meshes with 'virtual-stages' > 1: interleaved 1F1B takes them in such groups")

    def _check_costing(self) -> None:
        """The cost model's options."""
        for label, value in (("device-flops", self.device_flops), ("intra-host-bandwidth", self.intra_host_bandwidth),
                             ("inter-host-bandwidth", self.inter_host_bandwidth)):
            if not value > 0:
                raise ValueError(f"option '{label}' must be positive")
        if not 1 <= self.jobs <= MAX_JOBS or (self.jobs > 1 and self.cost_model == "profile"):
            raise ValueError(f"option 'jobs' must be between 1 and {MAX_JOBS}, and 1 with cost-model=profile "
                             "(timings would compete for the devices)")
        if not 0 <= self.mip_gap < 1:
            raise ValueError(f"option 'mip-gap' is a fraction in [0, 1); got {self.mip_gap}")
        if self.profile_repeats < 1:
            raise ValueError(f"option 'profile-repeats' must be positive; got {self.profile_repeats}")
        if self.max_costed_layers < 0:
            raise ValueError(f"option 'max-costed-layers' must not be negative; got {self.max_costed_layers}")
        if self.device_memory < 0 or self.epsilon < 0 or self.intra_host_latency < 0 or self.inter_host_latency < 0:
            raise ValueError("options 'device-memory', 'epsilon' and the latencies must not be negative")
        if self.device_profile not in ("", "local"):
            try:  # a file that does not read is an option error, before any module is read
                DeviceProfile.load(self.device_profile)
            except DeviceProfileError as error:
                raise ValueError(f"option 'device-profile': {error}") from None

    def apply(self, module: ir.Operation, diagnostics: Diagnostics) -> None:
        try:
            main = find_main(module)
        except ValueError as error:
            diagnostics.error(module, f"stage construction: {error}")
            return
        try:
            check_state(main, self.state)
        except ValueError as error:
            diagnostics.error(main, str(error))
            return
        ops = step_ops(main)
        missing = [op for op in ops if LAYER_ATTR not in op.attributes or PHASE_ATTR not in op.attributes]
        if missing:
            diagnostics.error(missing[0], "stage construction needs alpa.layer and alpa.phase on every op of @main: "
                                          "run alpa-layer-construction first")
            return
        layerings = self._layerings(module, ops, diagnostics)
        if layerings is None:
            return
        phase = [ir.StringAttr(op.attributes[PHASE_ATTR]).value for op in ops]
        try:
            profile = self._profile()
        except ValueError as error:  # DeviceProfileError too
            diagnostics.error(main, f"option 'device-profile': {error}")
            return
        alpha, beta = profile.intra_host_link() if profile is not None and profile.collectives else \
            (self.intra_host_latency, 1.0 / self.intra_host_bandwidth)
        cluster = PhysicalCluster(*self.cluster_shape, intra_host_alpha=alpha, intra_host_beta=beta,
                                  inter_host_alpha=self.inter_host_latency,
                                  inter_host_beta=1.0 / self.inter_host_bandwidth)
        found = self._search(main, layerings, phase, self._costing_options(cluster), profile, diagnostics)
        if found is not None:
            self._place(module, main, *found, cluster=cluster, diagnostics=diagnostics)

    def _place(self, module: ir.Operation, main: ir.Operation, layering: Layering, found: SearchResult, stats: dict,
               *, cluster: PhysicalCluster, diagnostics: Diagnostics) -> None:
        """The stages of the plan ``found`` for ``layering`` placed on the cluster, planned
        whole on their meshes and outlined; the report written."""
        plan, costs, views = found.plan, found.costs, found.views
        ops = step_ops(main)
        i64 = ir.IntegerType.get_signless(64, module.context)
        for op, number in zip(ops, layering.layer):
            op.attributes[LAYER_ATTR] = ir.IntegerAttr.get(i64, number)
        try:
            placements = cover_submeshes(tuple(self.cluster_shape), [s.shape for s in plan.stages])
        except ValueError as error:
            diagnostics.error(main, f"stage construction: option 'stage-submeshes': {error}")
            return
        meshes = [cluster.logical_mesh(cluster.submesh(pl.host_start, pl.host_count, pl.device_start,
                                                       pl.device_count), views[s.shape][s.logical_mesh])
                  for s, pl in zip(plan.stages, placements)]
        bounds = [st.start for st in plan.stages] + [plan.stages[-1].end]
        if self.virtual_stages > 1:  # interleaved 1F1B: stage k on mesh k mod S
            bounds = virtual_stage_bounds(self._search_options(), [(st.start, st.end) for st in plan.stages])
            meshes = [meshes[k % len(meshes)] for k in range(len(bounds) - 1)]

        def stage_of_layer(number: int) -> int:
            return next(s for s in range(len(bounds) - 1) if bounds[s] <= number < bounds[s + 1])

        def op_stage(op: ir.Operation) -> int:
            return stage_of_layer(ir.IntegerAttr(op.attributes[LAYER_ATTR]).value)

        sum_per_stage(main, op_stage)
        rematerialize_free_ops(main, lambda op: (op_stage(op), ir.StringAttr(op.attributes[PHASE_ATTR]).value))
        ops = step_ops(main)
        phase = [ir.StringAttr(op.attributes[PHASE_ATTR]).value for op in ops]
        stage_of = [stage_of_layer(ir.IntegerAttr(op.attributes[LAYER_ATTR]).value) for op in ops]
        input_shardings = []  # per stage: (value it reads from outside, the sharding its plan wants)
        for s, mesh in enumerate(meshes):
            wanted = self._annotate_stage(main, [n for n in range(len(ops)) if stage_of[n] == s], mesh, diagnostics)
            if wanted is None:
                return
            input_shardings.append(wanted)
        part = part_numbers(main, phase, stage_of)
        parts = [FORWARD, BACKWARD] + [APPLY + (str(k) if k else "") for k in range(max(part) - 1)]
        groups = [stage_of[n] * len(parts) + part[n] for n in range(len(ops))]
        names = [f"stage{s}_{name}" for s in range(len(meshes)) for name in parts]
        i64 = ir.IntegerType.get_signless(64, module.context)
        attributes = [{STAGE_ATTR: ir.IntegerAttr.get(i64, s), MESH_ATTR: mesh_to_attr(mesh)}
                      for s, mesh in enumerate(meshes) for _ in parts]
        try:
            outlined = outline(main, groups, names, attributes)
        except OutlineError as error:
            diagnostics.error(main, f"stage construction: {error}; the layers' ops depend on each other across "
                                    "stages (e.g. one value computed from every gradient): mark the stages by hand")
            return
        for part in outlined:
            _annotate_signature(part.func, part.inputs, part.outputs, input_shardings[part.group // len(parts)])
        if self.report or self.on_plan is not None:
            self._write_report(module, diagnostics, plan, placements, meshes, costs=costs, stats=stats, bounds=bounds)

    def _layerings(self, module: ir.Operation, ops: list[ir.Operation],
                   diagnostics: Diagnostics) -> list[Layering] | None:
        """The layer of each op of ``@main`` under each layering the search compares, by name:
        ``clustered`` (alpa-layer-construction's), ``equal-operator`` (as many forward ops per
        layer; Sec. 8.3's baseline), or in ``auto`` mode both, unless they agree, the option
        ``compare-layerings`` is off, or the user marked boundaries (mandatory cuts).
        Auto compares them because the clustering's cuts do not look at stage latency and
        can lose to plain op counts (Wide-ResNet 4B on 2x8, exact costs: 55.6 s against
        50.0 s). None after an error (reported)."""
        clustered = [ir.IntegerAttr(op.attributes[LAYER_ATTR]).value for op in ops]
        if self.stage_mode not in ("auto", "equal-operator") or (self.stage_mode == "auto" and (
                not self.compare_layerings or any(SEGMENT_ATTR in op.attributes for op in ops))):
            return [Layering("clustered", clustered)]
        # The baseline's layering must exist; auto goes on without it when it does not.
        relayering = diagnostics if self.stage_mode == "equal-operator" else Diagnostics([])
        LayerConstructionPass(layers=max(clustered) + 1, clustering="equal-operator").apply(module, relayering)
        if relayering.failed:
            return None if self.stage_mode == "equal-operator" else [Layering("clustered", clustered)]
        equal = [ir.IntegerAttr(op.attributes[LAYER_ATTR]).value for op in step_ops(find_main(module))]
        if self.stage_mode == "equal-operator":
            return [Layering("equal-operator", equal)]
        return [Layering("clustered", clustered)] + ([Layering("equal-operator", equal)] if equal != clustered else [])

    def _profile(self) -> DeviceProfile | None:
        """The device profile the option names (None: the constant options); raises a
        ``ValueError`` (a ``DeviceProfileError`` for a file) saying why there is none."""
        if not self.device_profile:
            return None
        if self.device_profile != "local":
            return DeviceProfile.load(self.device_profile)
        if self.device_profiler is None:
            raise ValueError("'local' measures this machine with a device profiler the pass is not given: build it "
                             "with device_profiler= (alpa-opt and alpa_mlir give the runtime's)")
        return self.device_profiler()

    def _search_options(self) -> SearchOptions:
        return SearchOptions(tuple(self.cluster_shape), self.num_micro_batches, self.stage_mode, self.num_stages,
                             tuple(self.stage_layers), tuple(self.stage_submeshes), self.submesh_space,
                             self.logical_mesh_space, self.max_costed_layers, self.epsilon, self.virtual_stages,
                             bounded=self.prune and self.cost_model != "profile")

    def _costing_options(self, cluster: PhysicalCluster) -> CostingOptions:
        return CostingOptions(cluster, self.num_micro_batches, self.virtual_stages, self.jobs, self.mip_gap,
                              self.cost_model, self.profile_repeats, self.device_flops, self.device_memory,
                              self.max_costed_layers, time_dots=self.device_profile == "local",
                              stage_timer=self.stage_timer, dot_timer=self.dot_timer)

    def _search(self, main: ir.Operation, layerings: list[Layering], phase: list[str], costing: CostingOptions,
                profile: DeviceProfile | None, diagnostics: Diagnostics) -> tuple[Layering, SearchResult, dict] | None:
        """The best plan over ``layerings`` (each searched by ``stage_search.search_layering``,
        its candidates costed by ``stage_costing.cost_stages`` from one cache, the best plan of
        the earlier ones bounding the later's), its layering and the search's statistics;
        None after an error (reported)."""
        options = dataclasses.replace(self._search_options(), forward_only=BACKWARD not in phase)
        cache = CostCache()
        found: list[tuple[Layering, SearchResult]] = []
        errors = []
        stats = dict.fromkeys(("candidates", "composed_ranges", "pruned_candidates"), 0)
        stats.update(cost_seconds=0.0, dp_seconds=0.0)
        with frozen_heap():
            for layering in layerings:
                step = LayeredStep(main, layering.layer, phase)

                def cost(space: SearchSpace, bound: float, step: LayeredStep = step) -> CostedSpace | None:
                    return cost_stages(costing, step, space, profile, cache, diagnostics, bound=bound)

                bound = min((result.plan.latency for _, result in found), default=math.inf)
                try:
                    result = search_layering(options, max(layering.layer) + 1, cost, bound, layering.name)
                except StageDPError as error:  # no plan of this layering
                    errors.append(error)
                    continue
                except ValueError as error:  # an option that allows no candidates
                    diagnostics.error(main, str(error))
                    return None
                if result is None:
                    return None
                LOG.info("stage construction: %d intra-op plans so far, %d (layer range, submesh) candidates in "
                         "%.1f s%s", len(cache.planned), result.stats["candidates"], result.stats["cost_seconds"],
                         f" ({result.stats['pruned_candidates']} on a logical mesh not planned: "
                         f"{self.num_micro_batches} times their compute, and the other layers' least, exceed a "
                         f"plan's latency, {result.bound:.4g} s)" if result.stats["pruned_candidates"] else "")
                LOG.info("stage construction: DP over the %s layers: %d stages, predicted latency %.4g s",
                         layering.name, len(result.plan.stages), result.plan.latency)
                for key, value in result.stats.items():
                    stats[key] += value
                found.append((layering, result))
        if not found:
            diagnostics.error(main, f"stage construction: {errors[0]}")
            return None
        layering, result = min(found, key=lambda f: f[1].plan.latency)
        stats.update(intra_op_plans=len(cache.planned), layering=layering.name,
                     layerings=[other.name for other in layerings])
        return layering, result, stats

    def _annotate_stage(self, main: ir.Operation, indices: list[int], mesh: DeviceMesh,
                        diagnostics: Diagnostics) -> list[tuple[ir.Value, ir.Attribute]] | None:
        """Plan the whole stage (apply part included) on its mesh, each pair of ``state`` it
        reads and returns kept in one sharding; its ops take the plan's shardings. Returns the
        sharding the plan wants for each value the stage reads from outside (an @main argument
        or another stage's result), on its own mesh."""
        stage = extract(main, indices)
        arguments = list(main.regions[0].blocks[0].arguments)
        returned = list(main.regions[0].blocks[0].operations[-1].operands)
        ties = tuple((stage.inputs.index(arguments[a]), stage.outputs.index(returned[r])) for a, r in self.state
                     if arguments[a] in stage.inputs and returned[r] in stage.outputs)
        if plan_stage(stage.module, mesh, diagnostics, ties) is None:
            return None
        ops = step_ops(main)
        for n, copy in zip(indices, stage.ops):
            if MHLO_SHARDING in copy.attributes:
                ops[n].attributes[MHLO_SHARDING] = copy.attributes[MHLO_SHARDING]
        func = next(iter(funcs(stage.module.operation)))
        return [(value, attrs[MHLO_SHARDING])
                for value, attrs in zip(stage.inputs, get_value_attrs(func, "arg_attrs")) if MHLO_SHARDING in attrs]

    def _write_report(self, module, diagnostics, plan, placements, meshes, *, costs, stats, bounds) -> None:
        # Under virtual stages a stage is 1/v of its mesh's range: its share of the range's costs.
        v, size = self.virtual_stages, len(plan.stages)
        report = PipelinePlan(tuple(self.cluster_shape), self.num_micro_batches, plan.latency, plan.t_max, tuple(
            StagePlacement((bounds[k], bounds[k + 1]), s.shape, tuple(pl.device_ids), tuple(meshes[k].shape),
                           s.latency / v, float(costs.param_mem[s.start, s.end, s.submesh, s.logical_mesh]) / v,
                           float(costs.act_mem[s.start, s.end, s.submesh, s.logical_mesh]) / v)
            for k, (s, pl) in enumerate((plan.stages[k % size], placements[k % size]) for k in range(size * v))),
            stats, virtual_stages=v)
        if self.on_plan is not None:
            self.on_plan(report)
        if not self.report:
            return
        try:
            report.save(self.report)
        except OSError as error:
            diagnostics.error(module, f"option 'report': cannot write {self.report}: {error.strerror}")

def _annotate_signature(func: ir.Operation, inputs: tuple[ir.Value, ...], outputs: tuple[ir.Value, ...],
                        input_shardings: list[tuple[ir.Value, ir.Attribute]]) -> None:
    """A part's arguments and results carry the shardings their values have on the part's
    mesh: a value from outside the stage (an @main argument, another stage's result) as
    the stage's plan wants it (moving it there is the cross-mesh resharding's job, Sec. 6),
    any other as the producing op makes it."""
    def sharding(value: ir.Value) -> ir.Attribute | None:
        wanted = next((attr for read, attr in input_shardings if read == value), None)
        if wanted is not None or isinstance(value.owner, ir.Block):
            return wanted
        producer = value.owner
        if MHLO_SHARDING not in producer.attributes:
            return None
        if is_host_callback(producer):  # runs on one device, whose results every reader takes whole
            return ir.StringAttr.get("{replicated}", func.context)
        return ir.StringAttr.get(result_shardings(producer)[ir.OpResult(value).result_number], func.context)

    for which, values in (("arg_attrs", inputs), ("res_attrs", outputs)):
        dicts = get_value_attrs(func, which)
        for attrs, value in zip(dicts, values):
            found = sharding(value)
            if found is not None:
                attrs[MHLO_SHARDING] = found
        set_value_attrs(func, which, dicts)
