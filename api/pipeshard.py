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
the same arguments; process 0 alone runs the passes, and every process uses the plan it
publishes (:mod:`alpa_mlir.shared_plan`). Each process then compiles the stage parts of
its own meshes. Outputs are global ``jax.Array`` s on the meshes that produced them
(JAX's convention; see :mod:`alpa_mlir.runtime.pipeshard`): :func:`to_host` brings them
to numpy on every process, and the next step takes them as they are.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import jax
from jax._src.lib.mlir import ir

from .accumulation import MicroBatching, micro_batching
from .dialect.context import make_context
from .dialect.names import Accumulation
from .host_values import to_host  # noqa: F401 (alpa_mlir.pipeshard.to_host)
from .markers import lower_traced
from .methods import device_memory_budget
from .passes import PipelineError, run_pipeline
from .passes.pipelines import ImportPipeline
from .pipeline import AutoShardingError, diagnostics_text, host_callbacks, module_text, parse_lowered, warn_reported
from .pipeshard_options import (  # noqa: F401 (alpa_mlir.pipeshard's API)
    AutoLayerOption,
    AutoStageOption,
    ManualLayerOption,
    ManualStageOption,
    PipeshardParallel,
    StageOption,
    UniformStageOption,
)
from .planned_function import PlannedFunction
from .plans.device_profile import DeviceProfile
from .plans.pipeline_plan import PipelinePlan
from .plans.sharding_plan import PlanError
from .runtime.device_profile import local_profile
from .runtime.pipeshard import PipeshardExecutable, PipeshardStepError  # noqa: F401 (API)
from .runtime.step_model import predicted_step
from .saved_plan import SavedPipeline, check_same_signature
from .services import provide
from .shared_plan import shared_plan
from .signature import (
    CallSignature,
    leaves_of,
    micro_batch_args,
    normalize_argnums,
    training_state,
    weak_outputs,
    with_weak_types,
)
from .traced_call import is_traced, traced_call

LOG = logging.getLogger("alpa_mlir.pipeshard")


@dataclass
class PipeshardProgram:
    """What one call signature compiles to."""

    out_tree: Any
    plan: PipelinePlan
    module_text: str
    executable: PipeshardExecutable
    weak_outputs: tuple[int, ...]  # flat outputs jax.jit returns weakly typed (a Python scalar's type)
    ran: bool = False  # the first step is done


class PipeshardFunction(PlannedFunction):
    """A training step pipelined over submeshes; see :func:`alpa_mlir.parallelize`."""

    _jit_donates = False  # the runtime frees the donated arguments the apply parts did not update

    def __init__(self, fn: Callable, method: PipeshardParallel, *, static_argnums: int | Sequence[int],
                 donate_argnums: int | Sequence[int], batch_argnums: int | Sequence[int] | None,
                 saved: SavedPipeline | None = None) -> None:
        super().__init__(fn, method, static_argnums=static_argnums, donate_argnums=donate_argnums,
                         batch_argnums=batch_argnums)
        self._saved = saved
        if saved is not None and saved.plan.num_micro_batches != method.num_micro_batches:
            raise PlanError(f"the plan{_saved_for(saved)} runs {saved.plan.num_micro_batches} micro-batches but "
                            f"PipeshardParallel asks for num_micro_batches={method.num_micro_batches}")

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

    def save_plan(self, path: str | os.PathLike, *args: Any, **kwargs: Any) -> SavedPipeline:
        """Save the stage plan and the compiled module for these arguments; reuse them with
        ``parallelize(..., method=PipeshardParallel(...), load_plan=path)`` (no search)."""
        program = self._program(args, kwargs)[0]
        saved = SavedPipeline(program.plan, program.module_text, self._name)
        saved.save(path)
        return saved

    def _compiling(self) -> contextlib.AbstractContextManager:
        return _progress_on_stderr(self.method.progress)

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
            micro_batching(self._jitted, lowered, args, kwargs, batch_leaves, method.num_micro_batches,
                           function=self._name)
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
                                         method.instruction_timeout, self._donated(signature),
                                         host_callbacks=host_callbacks(lowered),
                                         concurrent_meshes=method.concurrent_meshes, concatenated=batching.concatenated)
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
        """Process 0's compiled module and plan, on every process (``shared_plan.py``)."""
        identity = "\n".join([module_text(module), repr(self.method), repr((hosts, per_host)),
                               repr([d.id for d in devices])])
        return shared_plan(identity, lambda: self._run_passes(module, hosts, per_host, state, accumulate),
                           self._name)


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
