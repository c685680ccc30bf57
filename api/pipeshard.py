"""``PipeshardParallel``: inter- and intra-operator parallelism together (Alpa's full system).

``parallelize(train_step, method=PipeshardParallel(...))`` traces the step on one
micro-batch (the batch arguments' leading dimension divided by ``num_micro_batches``),
then runs the whole compiler:

  alpa-import-pipeline → alpa-layer-construction (Sec. 5.2's clustering, or one layer
  per ``mark_pipeline_boundary`` segment) → alpa-stage-construction (Algorithm 1) →
  alpa-cross-mesh-resharding (Sec. 6) → alpa-pipeline-schedule (GPipe or 1F1B)

and runs the result with :class:`alpa_mlir.runtime.pipeshard.PipeshardExecutable`:
every stage part compiled by XLA's SPMD partitioner for its own mesh, the
micro-batches pipelined, gradients accumulated and applied once per step.

Accumulated values (what forward and backward give the apply-gradient part, and the
step's outputs they produce, such as the loss) are the mean over micro-batches, the
batch's value for a loss averaged over examples, or their sum for a loss summed over
examples (Alpa takes the mean); per-example outputs are joined (:mod:`alpa_mlir.accumulation`).

**Several processes** (one per host, after ``alpa_mlir.runtime.distributed.initialize()``;
``python -m alpa_mlir.runtime.launch`` starts them): every process calls the step with
the same arguments. Process 0 alone runs the passes and publishes the compiled module
and plan in the coordination service's key-value store (``runtime.distributed.publish``),
keyed by a hash of the traced module, the options and the devices; the others parse
what it published (a step compiled again finds its key taken and uses the first plan).
Re-running the search on every process would work only as long as the whole compiler
(ILP solver, DPs, their tie-breaking) is deterministic across processes, and a single
difference would leave processes waiting in different collectives; one published plan
removes the question. A compile error on
process 0 is published too, so every process raises it. Each process then compiles the
stage parts of its own meshes. Outputs are global ``jax.Array`` s on the meshes that
produced them (JAX's convention; see :mod:`alpa_mlir.runtime.pipeshard`):
:func:`to_host` brings them to numpy on every process, and the next step takes them as
they are.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import logging
import math
import os
import sys
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import jax
from jax._src.lib.mlir import ir

from .accumulation import MicroBatching, micro_batching
from .dialect.context import make_context
from .dialect.names import Accumulation
from .host_values import to_host  # noqa: F401 (alpa_mlir.pipeshard.to_host)
from .markers import lower_traced
from .methods import device_memory_budget
from .passes import PipelineError, run_pipeline
from .passes.inter_op.layer_construction import LayerConstructionPass
from .passes.inter_op.stage_construction import StageConstructionPass
from .passes.pipelines import ImportPipeline
from .passes.reshard.cross_mesh_resharding import CrossMeshReshardingPass
from .passes.schedule.pipeline_schedule import PipelineSchedulePass
from .passes.schedule.rematerialize import RematerializePass
from .pipeline import AutoShardingError, diagnostics_text, host_callbacks, module_text, parse_lowered, warn_reported
from .pipeshard_options import (  # noqa: F401 (alpa_mlir.pipeshard's API)
    AutoLayerOption,
    AutoStageOption,
    ManualLayerOption,
    ManualStageOption,
    StageOption,
    UniformStageOption,
)
from .plans.device_profile import DeviceProfile
from .plans.pipeline_plan import PipelinePlan
from .plans.sharding_plan import PlanError
from .runtime import distributed
from .runtime.device_profile import local_profile
from .runtime.pipeshard import PipeshardExecutable, PipeshardStepError  # noqa: F401 (API)
from .runtime.step_model import predicted_step
from .saved_plan import SavedPipeline, check_same_signature
from .services import provide
from .signature import (
    CallSignature,
    batch_argnums_strict,
    call_signature,
    leaves_of,
    micro_batch_args,
    normalize_argnums,
    parameters_of,
    positional_call,
    positional_parameters,
    training_state,
    weak_outputs,
    with_weak_types,
)
from .traced_call import is_traced, traced_call

LOG = logging.getLogger("alpa_mlir.pipeshard")
# How long processes wait for process 0's plan (the search can take a while at scale).
PLAN_TIMEOUT_S = 3600.0


@dataclass(frozen=True)
class PipeshardParallel:
    """Pipeline the step over submeshes, each stage auto-sharded on its own mesh (Sec. 5-6).

    Args:
      num_micro_batches: B; the batch arguments' leading dimension must divide by it.
      layer_option: how the forward pass is cut into layers.
      stage_option: how layers become stages on submeshes.
      pipeline_schedule: ``1f1b`` (at most S - i micro-batches in flight on stage i),
        ``gpipe`` (all forwards, then all backwards), ``interleaved-1f1b`` (v stages per mesh,
        stage k on mesh k mod S: a bubble 1/v as long, more activations in flight). (Forward-only
        steps are not planned by the API: ``alpa-pipeline-schedule{schedule=inference}`` schedules
        modules whose stages are outlined otherwise.)
      virtual_stages: v under ``interleaved-1f1b``: the stage DP (``AutoStageOption``) gives each
        of S meshes a multiple of v layers and minimises interleaved 1F1B's Eq. 2 over S that
        divide B; or ``UniformStageOption(num_stages=S v)``, or a ``ManualStageOption`` of S v
        layer counts on S submeshes; B a multiple of S.
      cluster_shape: (hosts, devices per host). When omitted: one host per process that
        owns some of the devices (``(1, len(devices))`` in one process; with
        ``jax.distributed``, (processes, devices per process)).
      devices: the JAX devices, host-major (``jax.devices()``).
      batch_argnums: positional arguments whose leaves have the batch as leading dimension.
      local_all_gather: Sec. 6's rewrite of cross-mesh transfers to replicated destinations.
      instruction_timeout: seconds one instruction of a step (a stage run, a transfer)
        may take before a watchdog prints where the step was and ends the process with
        exit code 124, so that a dead or stuck peer cannot hang the cluster. ``None``: 600
        s with several processes, off in one; ``0``: off. The first step's first transfers
        also wait for the other processes to finish compiling.
      device_profile: what the stage costs (and the plan's predicted latencies) assume of
        the devices: ``local`` (this machine's, measured on first use and cached; see
        ``runtime.device_profile``), the path of a saved profile, or ``""`` for
        ``alpa-stage-construction``'s constant FLOP/s and bandwidths.
      concurrent_meshes: on CPU, run each mesh's instructions in a thread of its own, so
        that the meshes compute at once and meet at transfers (``runtime/mesh_threads.py``);
        ``None``: on with one process, off with several (each process drives its own
        meshes); on GPUs the meshes run at once either way.
      progress: while a signature is compiled and first run, write a line per phase
        (lowering, the stage search's phases, compiling, the first step) on stderr:
        the ``alpa_mlir`` loggers' INFO lines, unless the application configured
        logging (then they go where it says).
    """

    num_micro_batches: int = 1
    layer_option: AutoLayerOption | ManualLayerOption = field(default_factory=ManualLayerOption)
    stage_option: StageOption = field(default_factory=AutoStageOption)
    pipeline_schedule: Literal["1f1b", "gpipe", "interleaved-1f1b"] = "1f1b"
    virtual_stages: int = 1
    cluster_shape: tuple[int, int] | None = None
    devices: tuple[Any, ...] | None = None
    batch_argnums: tuple[int, ...] = (1,)
    local_all_gather: bool = True
    instruction_timeout: float | None = None
    device_profile: str = "local"
    concurrent_meshes: bool | None = None
    progress: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.num_micro_batches, int) or self.num_micro_batches < 1:
            raise ValueError(f"PipeshardParallel option 'num_micro_batches' must be a positive integer; got "
                             f"{self.num_micro_batches!r}")
        if not isinstance(self.layer_option, (AutoLayerOption, ManualLayerOption)):
            raise ValueError("PipeshardParallel option 'layer_option' must be AutoLayerOption(layer_num=...) or "
                             f"ManualLayerOption(); got {self.layer_option!r}")
        if not isinstance(self.stage_option, (AutoStageOption, UniformStageOption, ManualStageOption)):
            raise ValueError("PipeshardParallel option 'stage_option' must be AutoStageOption, UniformStageOption "
                             f"or ManualStageOption; got {self.stage_option!r}")
        if self.pipeline_schedule == "inference":
            raise ValueError("PipeshardParallel option 'pipeline_schedule': 'inference' is not planned by the API: "
                             "its layer and stage construction take training steps (a loss and its gradients); use "
                             "ShardParallel for a forward-only step")
        if self.pipeline_schedule not in ("1f1b", "gpipe", "interleaved-1f1b"):
            raise ValueError(f"PipeshardParallel option 'pipeline_schedule' must be '1f1b', 'gpipe' or "
                             f"'interleaved-1f1b'; got {self.pipeline_schedule!r}")
        self._check_virtual_stages()
        timeout = self.instruction_timeout
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout < 0):
            raise ValueError(f"PipeshardParallel option 'instruction_timeout' must be a number of seconds >= 0 "
                             f"(0: no watchdog) or None; got {timeout!r}")
        if not (self.concurrent_meshes is None or isinstance(self.concurrent_meshes, bool)):
            raise ValueError(f"PipeshardParallel option 'concurrent_meshes' must be True, False or None; got "
                             f"{self.concurrent_meshes!r}")
        if self.devices is not None:
            object.__setattr__(self, "devices", tuple(self.devices))
        batch = (self.batch_argnums,) if isinstance(self.batch_argnums, int) else tuple(self.batch_argnums)
        object.__setattr__(self, "batch_argnums", batch)
        self.passes(*(self.cluster_shape or (1, 1)))  # the passes check their options now, not at the first call

    def _check_virtual_stages(self) -> None:
        v, stage = self.virtual_stages, self.stage_option
        if not isinstance(v, int) or v < 1 or (v > 1 and self.pipeline_schedule != "interleaved-1f1b"):
            raise ValueError(f"PipeshardParallel option 'virtual_stages' must be a positive integer, and 1 unless "
                             f"pipeline_schedule='interleaved-1f1b'; got {v!r} with {self.pipeline_schedule!r}")
        meshes = (len(stage.submeshes) if isinstance(stage, ManualStageOption) else
                  stage.num_stages // v if isinstance(stage, UniformStageOption) else 0)
        if self.pipeline_schedule == "interleaved-1f1b" and meshes and self.num_micro_batches % meshes:
            raise ValueError(f"PipeshardParallel option 'num_micro_batches' ({self.num_micro_batches}) must be a "
                             f"multiple of the {meshes} meshes under interleaved-1f1b, which takes the "
                             "micro-batches in groups of one per mesh")

    def device_list(self) -> tuple[Any, ...]:
        return self.devices if self.devices is not None else tuple(jax.devices())

    def cluster(self) -> tuple[int, int]:
        """The physical cluster the stages are placed on: (hosts, devices per host). Its device
        ``i`` (host-major) is ``device_list()[i]``."""
        devices = self.device_list()
        hosts = len({d.process_index for d in devices})
        shape = tuple(self.cluster_shape or (hosts, len(devices) // hosts))
        if len(shape) != 2 or min(shape) < 1 or math.prod(shape) != len(devices):
            raise ValueError(f"PipeshardParallel option 'cluster_shape' {list(shape)} must be (hosts, devices per "
                             f"host) covering the {len(devices)} devices")
        stage = self.stage_option
        asked = sum(h * d for h, d in stage.submeshes) if isinstance(stage, ManualStageOption) else len(devices)
        if asked != len(devices):
            raise ValueError(f"PipeshardParallel: ManualStageOption's submeshes {[tuple(m) for m in stage.submeshes]} "
                             f"hold {asked} devices, but the cluster "
                             f"({shape[0]}x{shape[1]}) has {len(devices)}; the stages' submeshes must use every "
                             "device once")
        return shape

    def passes(self, hosts: int, per_host: int, on_plan: Callable[[PipelinePlan], None] | None = None,
               state: tuple[tuple[int, int], ...] = (), accumulate: Accumulation = "mean",
               device_memory: float = 0.0) -> list:
        """The compiler's passes after the import pipeline, for a cluster of hosts x per_host;
        ``on_plan`` receives the stage plan; ``state``: the step's (flat argument, flat result)
        pairs of training state (``signature.training_state``); ``accumulate``: how the micro-
        batches combine (``accumulation``); ``device_memory``: see ``AutoStageOption``."""
        layer = self.layer_option
        layers = [LayerConstructionPass(**layer.pass_options()), *([RematerializePass()] if layer.remat_layer else [])]
        stage = self.stage_option
        options: dict[str, Any] = {"cluster_shape": (hosts, per_host), "num_micro_batches": self.num_micro_batches,
                                   "device_profile": self.device_profile, "state": state, "on_plan": on_plan}
        if isinstance(stage, AutoStageOption):
            options.update(stage.pass_options(device_memory))
        elif isinstance(stage, UniformStageOption):
            options.update(stage_mode="equal-layer", num_stages=stage.num_stages)
        else:
            options.update(stage_mode="manual", stage_layers=tuple(stage.stage_layers),
                           stage_submeshes=tuple(n for pair in stage.submeshes for n in pair))
        options["virtual_stages"] = self.virtual_stages
        try:
            return [*layers, StageConstructionPass(**options),
                    CrossMeshReshardingPass(local_all_gather=self.local_all_gather),
                    PipelineSchedulePass(schedule=self.pipeline_schedule, num_micro_batches=self.num_micro_batches,
                                         accumulate=accumulate, virtual_stages=self.virtual_stages)]
        except ValueError as error:
            raise ValueError(f"PipeshardParallel: {error}") from None


@dataclass
class PipeshardProgram:
    """What one call signature compiles to."""

    out_tree: Any
    plan: PipelinePlan
    module_text: str
    executable: PipeshardExecutable
    weak_outputs: tuple[int, ...]  # flat outputs jax.jit returns weakly typed (a Python scalar's type)
    ran: bool = False  # the first step is done


class PipeshardFunction:
    """A training step pipelined over submeshes; see :func:`alpa_mlir.parallelize`."""

    def __init__(self, fn: Callable, method: PipeshardParallel, static_argnums: int | Sequence[int],
                 batch_argnums: int | Sequence[int] | None, saved: SavedPipeline | None = None,
                 donate_argnums: int | Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.method = method
        self.static_argnums = static_argnums
        self.batch_argnums = method.batch_argnums if batch_argnums is None else batch_argnums
        self._batch_strict = batch_argnums_strict(batch_argnums, method.batch_argnums)
        self._name = getattr(fn, "__qualname__", None) or repr(fn)
        self._parameters = parameters_of(fn)
        self._declared = positional_parameters(self._parameters)
        self._jitted = jax.jit(fn, static_argnums=static_argnums, keep_unused=True)
        self._programs: dict[Hashable, PipeshardProgram] = {}
        self._saved = saved
        self.donate_argnums = donate_argnums
        if saved is not None and saved.plan.num_micro_batches != method.num_micro_batches:
            raise PlanError(f"the plan{_saved_for(saved)} runs {saved.plan.num_micro_batches} micro-batches but "
                            f"PipeshardParallel asks for num_micro_batches={method.num_micro_batches}")

    @property
    def num_compilations(self) -> int:
        """How many signatures have been compiled (cache misses) so far."""
        return len(self._programs)

    def __repr__(self) -> str:
        return f"parallelize({self._name}, method={self.method!r})"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if is_traced(args, kwargs):  # jax.eval_shape and the like: shapes only
            return traced_call(self._name, self._jitted, args, kwargs)
        program, signature = self._program(args, kwargs)
        donated = self._donated(signature)
        leaves = signature.leaves
        for i in donated:
            if isinstance(leaves[i], jax.Array) and leaves[i].is_deleted():
                raise ValueError(f"{signature.leaf_names[i]} of {self._name} is a deleted array (was it donated to "
                                 "an earlier call?)")
            twins = [signature.leaf_names[j] for j, leaf in enumerate(leaves) if leaf is leaves[i] and j != i]
            if twins and isinstance(leaves[i], jax.Array):  # the update would overwrite what another reads
                raise ValueError(f"{signature.leaf_names[i]} of {self._name} is donated but the same array is also "
                                 f"passed as {', '.join(twins)}; pass a copy")
        with _progress_on_stderr(self.method.progress and not program.ran):
            start = time.perf_counter()
            outputs = with_weak_types(program.executable(*signature.leaves), program.weak_outputs)
            if not program.ran:
                LOG.info("%s: first step in %.1f s", self._name, time.perf_counter() - start)
                program.ran = True
        # Donated arguments are invalid after the step, as under jax.jit: those the apply parts
        # did not write their updates into are freed now.
        returned = {id(out) for out in outputs}
        for i in donated:
            leaf = signature.leaves[i]
            if isinstance(leaf, jax.Array) and not leaf.is_deleted() and id(leaf) not in returned:
                leaf.delete()
        return jax.tree_util.tree_unflatten(program.out_tree, outputs)

    def _donated(self, signature: CallSignature) -> tuple[int, ...]:
        """The flat leaves of the donated arguments."""
        return leaves_of(signature, normalize_argnums(self.donate_argnums, signature.num_args, "donate_argnums",
                                                      self._name, declared=self._declared))

    def eval_shape(self, *args: Any, **kwargs: Any) -> Any:
        """The outputs' shapes and dtypes (``jax.ShapeDtypeStruct``s) for these arguments, as
        ``jax.jit(f).eval_shape``: nothing is planned; static arguments may be given by name."""
        return self._jitted.eval_shape(*args, **kwargs)

    def get_plan(self, *args: Any, **kwargs: Any) -> PipelinePlan:
        """The pipeline plan (stages, submeshes, predicted latency) for these arguments."""
        return self._program(args, kwargs)[0].plan

    def get_module_text(self, *args: Any, **kwargs: Any) -> str:
        """The compiled module: stage functions, cross-mesh transfers and per-mesh schedules."""
        return self._program(args, kwargs)[0].module_text

    def get_executable(self, *args: Any, **kwargs: Any) -> PipeshardExecutable:
        return self._program(args, kwargs)[0].executable

    def save_plan(self, path: str | os.PathLike, *args: Any, **kwargs: Any) -> SavedPipeline:
        """Save the stage plan and the compiled module for these arguments; reuse them with
        ``parallelize(..., method=PipeshardParallel(...), load_plan=path)`` (no search)."""
        program = self._program(args, kwargs)[0]
        saved = SavedPipeline(program.plan, program.module_text, self._name)
        saved.save(path)
        return saved

    def _program(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[PipeshardProgram, CallSignature]:
        args, kwargs = positional_call(self._parameters, args, kwargs, self._name)
        static = normalize_argnums(self.static_argnums, len(args), "static_argnums", self._name,
                                   declared=self._declared)
        signature = call_signature(args, kwargs, static, self._name)
        program = self._programs.get(signature.key)
        if program is None:
            with _progress_on_stderr(self.method.progress):
                program = self._compile(args, kwargs, signature, static)
            self._programs[signature.key] = program
        return program, signature

    def _compile(self, args: tuple[Any, ...], kwargs: dict[str, Any], signature: CallSignature,
                 static: tuple[int, ...]) -> PipeshardProgram:
        method = self.method
        batch_positions = normalize_argnums(self.batch_argnums, len(args), "batch_argnums", self._name,
                                            self._batch_strict, self._declared)
        batch_leaves = leaves_of(signature, batch_positions)
        micro = micro_batch_args(args, static, batch_positions, method.num_micro_batches, self._name)
        start = time.perf_counter()
        traced = self._jitted.trace(*micro, **kwargs)
        lowered = lower_traced(traced)
        module = parse_lowered(lowered, ordered_effects=False, function=self._name)
        LOG.info("%s: traced and lowered in %.1f s", self._name, time.perf_counter() - start)
        dynamic = [i for i in range(len(args)) if i not in static]
        state = training_state(lowered, [dynamic.index(i) for i in batch_positions if i in dynamic])
        hosts, per_host = method.cluster()
        devices = method.device_list()
        batching = MicroBatching() if method.num_micro_batches == 1 else \
            micro_batching(self._jitted, lowered, args, kwargs, batch_leaves, method.num_micro_batches, self._name)
        if self._saved is not None:
            plan, text = self._saved.plan, self._saved.module_text
            if plan.cluster != (hosts, per_host):
                raise PlanError(f"the plan{_saved_for(self._saved)} is for a {plan.cluster[0]} x {plan.cluster[1]} "
                                f"cluster, but PipeshardParallel runs on {hosts} x {per_host}")
            saved = ir.Module.parse(text, context=make_context())
            check_same_signature(saved, module, signature.leaf_names, f"the plan{_saved_for(self._saved)}")
            module = saved
        elif len({d.process_index for d in devices}) > 1:
            text, plan = self._shared_compile(module, hosts, per_host, devices, state, batching.accumulate)
            module = ir.Module.parse(text, context=make_context())
        else:
            text, plan = self._run_passes(module, hosts, per_host, state, batching.accumulate)
        start = time.perf_counter()
        executable = PipeshardExecutable(module, method.num_micro_batches, batch_leaves, devices,
                                         method.instruction_timeout, self._donated(signature), host_callbacks(lowered),
                                         method.concurrent_meshes, batching.concatenated)
        seconds = time.perf_counter() - start
        plan = dataclasses.replace(plan, step=self._predicted_step(executable, plan))
        LOG.info("%s: %d stages, predicted %.3g s per step (Eq. 2; %s as this runtime runs it); compiled %d stage "
                 "programs and %d transfers (%d programs loaded from an equal one) in %.1f s", self._name,
                 len(plan.stages), plan.latency, "unknown" if plan.step is None else f"{plan.step:.3g} s",
                 len(executable.executables), len({id(t) for t in executable.transfers.values()}),
                 executable.shared.loaded, seconds)
        return PipeshardProgram(lowered.out_tree, plan, text, executable, weak_outputs(traced))

    def _predicted_step(self, executable: PipeshardExecutable, plan: PipelinePlan) -> float | None:
        """The step as ``executable`` runs it, priced by the method's device profile (with
        several processes, every process the coordinator's); None without one."""
        if not self.method.device_profile:
            return None
        profile = local_profile() if self.method.device_profile == "local" else \
            DeviceProfile.load(self.method.device_profile)
        return predicted_step(executable, plan, profile)

    def _run_passes(self, module: ir.Module, hosts: int, per_host: int, state: tuple[tuple[int, int], ...],
                    accumulate: Accumulation) -> tuple[str, PipelinePlan]:
        """Run the compiler on ``module`` in place; the module's text and the stage plan."""
        plans: list[PipelinePlan] = []
        try:
            reported = run_pipeline(module, provide([ImportPipeline(), *self.method.passes(
                hosts, per_host, plans.append, state, accumulate, device_memory_budget(self.method.device_list()))]))
        except ir.MLIRError as error:
            raise AutoShardingError(f"pipelining {self._name} failed:\n  " + diagnostics_text(error)) from None
        except PipelineError as error:
            raise AutoShardingError(f"pipelining {self._name}: {error}") from None
        warn_reported(reported, self._name, 5)  # from __call__ through _program, _compile and here
        return module_text(module), dataclasses.replace(plans[-1], schedule=self.method.pipeline_schedule)

    def _shared_compile(self, module: ir.Module, hosts: int, per_host: int, devices: Sequence[Any],
                        state: tuple[tuple[int, int], ...], accumulate: Accumulation) -> tuple[str, PipelinePlan]:
        """Process 0's compiled module and plan, on every process (see the module docstring)."""
        identity = "\n".join([module_text(module), repr(self.method), repr((hosts, per_host)),
                               repr([d.id for d in devices])])
        key = "pipeshard/" + hashlib.sha256(identity.encode()).hexdigest()[:32]
        if jax.process_index() == 0:
            try:
                text, plan = self._run_passes(module, hosts, per_host, state, accumulate)
            except Exception as error:
                _publish_or_fetch(key, json.dumps({"error": f"{type(error).__name__}: {error}"}))
                raise
            payload = _publish_or_fetch(key, json.dumps({"module": text, "plan": plan.to_json()}))
        else:
            try:
                payload = distributed.fetch(key, PLAN_TIMEOUT_S)
            except TimeoutError:
                raise TimeoutError(f"pipelining {self._name}: process 0 published no plan within {PLAN_TIMEOUT_S:g} "
                                   "s; check that it is alive and runs the same step with the same arguments and "
                                   "options") from None
        shared = json.loads(payload)
        if "error" in shared:
            raise AutoShardingError(f"pipelining {self._name}: process 0 could not compile the step: "
                                    f"{shared['error']}")
        return shared["module"], PipelinePlan.from_json(shared["plan"])


@contextlib.contextmanager
def _progress_on_stderr(wanted: bool) -> Iterator[None]:
    """The ``alpa_mlir`` loggers' INFO lines on stderr for a while, if ``wanted`` and the
    application configured no logging that would take them (a handler of its own)."""
    logger = logging.getLogger("alpa_mlir")
    if not wanted or logger.handlers or logging.getLogger().handlers:
        yield
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("alpa-mlir: %(message)s"))
    level, propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate


def _saved_for(saved: SavedPipeline) -> str:
    return f" saved for {saved.function}" if saved.function else " loaded"


def _publish_or_fetch(key: str, payload: str) -> str:
    """Publish ``payload`` under ``key``, or, if the same step was compiled before, what was
    published then (every process must use the same)."""
    try:
        distributed.publish(key, payload)
        return payload
    except RuntimeError as error:
        if "already published" not in str(error):
            raise
        return distributed.fetch(key, PLAN_TIMEOUT_S)
