"""``parallelize``: run a JAX function on a device mesh with a plan the compiler searched for.

On the first call with a new signature (argument structure, shapes, dtypes, static
values) the function is lowered with ``jax.jit``, planned by ``alpa-auto-sharding``,
partitioned by XLA's SPMD partitioner and cached; later calls with the same signature
only run. Donated arguments are consumed as under ``jax.jit``.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np
from jax._src.lib.mlir import ir

from .accumulation import micro_batching
from .dialect.context import make_context
from .dialect.mesh import DeviceMesh
from .exported import export_planned
from .jax_shardings import named_sharding
from .lowering.spmd import compile_module, read_signature
from .markers import lower, lower_traced
from .methods import ShardParallel, device_memory_budget
from .pipeline import (
    AutoShardingError,
    AutoShardingWarning,
    accumulate_gradients,
    host_callbacks,
    module_text,
    parse_lowered,
    plan_module,
)
from .pipeshard import PipeshardFunction, PipeshardParallel
from .planned_function import PlannedFunction
from .plans.plan_summary import byte_text
from .plans.sharding_plan import PlanError, ShardingPlan
from .runtime.mesh_executable import MeshExecutable
from .saved_plan import SavedPipeline, SavedPlan, check_fits
from .saved_plan import load_plan as read_plan
from .signature import (
    CallSignature,
    leaves_of,
    micro_batch_args,
    normalize_argnums,
    output_names,
    parameters_of,
    positional_call,
    training_state,
    weak_outputs,
    with_argnames,
    with_weak_types,
)
from .traced_call import is_traced, traced_call

_PYTHON_SCALARS = (bool, int, float, complex)
# Under a memory budget the planned step is compiled at once and XLA's own figure checked
# (memory_analysis: arguments + outputs - aliased + temporaries); where it is over, the
# step is planned again against a budget less the excess, at most this many times.
# What XLA's scheduler and copy insertion do beside the plan's model is then covered:
# GPT-3 6.7B with every layer recomputed on (8,) within 24 GiB, predicted 23.56 GiB,
# took 25.52 (copies XLA makes of donated replicated weights, live from the step's start).
MAX_MEMORY_REPLANS = 2
# What XLA adds to the prediction differs between the plans of one step by a small part of
# itself (GPT of test_rematerialize.py under a budget: 24.86 MB, then 24.89 MB on the plan
# asked for 24.86 MB less): the replan asks for this much of it more, so that one round does.
REPLAN_MARGIN = 0.01


def allocated_bytes(executable: MeshExecutable) -> float:
    """What XLA allocates per device for ``executable`` (its ``memory_analysis``)."""
    stats = executable.compiled.executable.get_compiled_memory_stats()
    return float(stats.argument_size_in_bytes + stats.output_size_in_bytes - stats.alias_size_in_bytes
                 + stats.temp_size_in_bytes)


@dataclass
class Program:
    """What one signature compiles to: the plan, the annotated module and (once run) the executable."""

    out_tree: Any  # jax.tree_util.PyTreeDef of the outputs
    plan: ShardingPlan
    module_text: str  # annotated StableHLO
    mesh: DeviceMesh
    devices: tuple[Any, ...]
    donated: tuple[bool, ...]  # per flat argument
    weak_outputs: tuple[int, ...]  # flat outputs jax.jit returns weakly typed (a Python scalar's type)
    host_callbacks: tuple[Callable, ...] = ()  # what the module's jax.debug.print and io_callback call
    _executable: MeshExecutable | None = field(default=None, repr=False)

    @property
    def executable(self) -> MeshExecutable:
        """The SPMD executable, compiled by XLA on first use (planning alone does not need it)."""
        if self._executable is None:
            compiled = compile_module(self.module_text, self.mesh, self.devices, self.host_callbacks)
            self._executable = MeshExecutable(compiled, donated=self.donated)
        return self._executable

    def run(self, leaves: Sequence[Any]) -> list[jax.Array]:
        executable = self.executable
        # numpy inputs arrive in numpy's dtype (float64); jit canonicalizes them, so do we.
        flat = [leaf if isinstance(leaf, (jax.Array, *_PYTHON_SCALARS)) else np.asarray(leaf, dtype=aval.dtype)
                for leaf, aval in zip(leaves, executable.in_avals)]
        return with_weak_types(executable(*flat), self.weak_outputs)


class ParallelizedFunction(PlannedFunction):
    """A function planned on one mesh and compiled per call signature; see :func:`parallelize`."""

    def __init__(self, fn: Callable, method: ShardParallel, *, static_argnums: int | Sequence[int],
                 donate_argnums: int | Sequence[int], batch_argnums: int | Sequence[int] | None) -> None:
        if not isinstance(method, ShardParallel):
            raise TypeError(f"method must be a ShardParallel (or DataParallel, Zero2Parallel, Zero3Parallel); "
                            f"got {type(method).__name__}")
        super().__init__(fn, method, static_argnums=static_argnums, donate_argnums=donate_argnums,
                         batch_argnums=batch_argnums)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if is_traced(args, kwargs):  # jax.eval_shape and the like: shapes only
            return traced_call(self._name, self._jitted, args, kwargs)
        program, signature = self._program(args, kwargs)
        return jax.tree_util.tree_unflatten(program.out_tree, program.run(signature.leaves))

    # ------------------------------------------------------------------ inspection

    def get_hlo_text(self, *args: Any, **kwargs: Any) -> str:
        """The HLO module after XLA's SPMD partitioner: the per-device program with its collectives."""
        return self._program(args, kwargs)[0].executable.compiled.hlo_text

    def get_executable(self, *args: Any, **kwargs: Any) -> MeshExecutable:
        """The compiled executable for these arguments (flat arrays in, flat arrays out)."""
        return self._program(args, kwargs)[0].executable

    def lower(self, *args: Any, **kwargs: Any) -> jax.stages.Lowered:
        """The unplanned ``jax.jit`` lowering of the function: the compiler's input."""
        return lower(self._jitted, *args, **kwargs)

    def export(self, *args: Any, **kwargs: Any) -> jax.export.Exported:
        """The planned step for these arguments as a ``jax.export.Exported`` (see
        :mod:`alpa_mlir.exported`): the annotated module with the plan's shardings, mesh and
        device count. Its ``call`` takes the dynamic (non-static) arguments, on
        ``in_shardings_jax(mesh)`` or inside a ``jax.jit``; ``serialize()`` and
        ``jax.export.deserialize`` carry it to another process. Keyword arguments are
        passed positionally (an export's shardings cover positional arguments)."""
        program, _ = self._program(args, kwargs)
        args, kwargs = positional_call(self._parameters, args, kwargs, self._name)
        if kwargs:
            raise TypeError(f"export: {self._name} takes keyword arguments {sorted(kwargs)} that cannot be passed "
                            "positionally; an export's shardings cover positional arguments only")
        static = self._static(args)
        jax_mesh = program.mesh.to_jax_mesh(program.devices)
        dynamic = tuple(a for i, a in enumerate(args) if i not in static)
        in_shardings = jax.tree_util.tree_unflatten(
            jax.tree_util.tree_structure(dynamic),
            [named_sharding(a.spec, program.mesh, jax_mesh) for a in program.plan.arguments])
        out_shardings = jax.tree_util.tree_unflatten(
            program.out_tree, [named_sharding(v.spec, program.mesh, jax_mesh) for v in program.plan.results])
        jitted = jax.jit(self.fn, static_argnums=static, in_shardings=in_shardings, out_shardings=out_shardings,
                         keep_unused=True)
        return export_planned(jitted, args, program.module_text, program.mesh, self._name)

    def save_plan(self, path: str | os.PathLike, *args: Any, details: bool = False, **kwargs: Any) -> SavedPlan:
        """Save the plan for these arguments with its annotated module; reload with ``load_plan=path``.
        ``details=True`` also writes the per-op entries (strategies, predicted collectives, source
        locations: most of the bytes), which loading does not need; it is not passed to the function."""
        program = self._program(args, kwargs)[0]
        saved = SavedPlan(program.plan, program.module_text, self._name)
        saved.save(path, details)
        return saved

    # ------------------------------------------------------------------ planning

    def _compile(self, args: tuple[Any, ...], kwargs: dict[str, Any], signature: CallSignature,
                 static: tuple[int, ...]) -> Program:
        batch = normalize_argnums(self.batch_argnums, len(args), "batch_argnums", self._name, self._batch_strict,
                                  self._declared)
        micro_batches = self.method.num_micro_batches
        full_args = args
        if micro_batches > 1:  # plan for one micro-batch, as Alpa plans its accumulation program
            args = tuple(micro_batch_args(args, static, batch, micro_batches, self._name))
        traced = self._jitted.trace(*args, **kwargs)
        lowered = lower_traced(traced)
        weak = weak_outputs(traced)
        module = parse_lowered(lowered)
        donate = normalize_argnums(self.donate_argnums, len(args), "donate_argnums", self._name,
                                   declared=self._declared)
        donated_leaves = set(leaves_of(signature, donate))
        donated = tuple(i in donated_leaves for i in range(len(signature.leaves)))
        result_names = output_names(lowered.out_tree)
        saved = self.method.plan
        if isinstance(saved, SavedPlan) and saved.module_text is not None:
            mesh, devices = self._saved_mesh(saved.plan)
            check_fits(saved.plan, module, signature.leaf_names, result_names, self._saved_where(saved))
            annotated = ir.Module.parse(saved.module_text, context=make_context())
            if read_signature(annotated).donated != read_signature(module).donated:
                raise PlanError(f"the plan {self._saved_where(saved)} was saved with other donated arguments "
                                f"than donate_argnums={self.donate_argnums!r}; use the donate_argnums it was "
                                "saved with")
            return Program(lowered.out_tree, saved.plan, module_text(annotated), mesh, devices, donated, weak,
                           host_callbacks(lowered))
        pinned = saved.plan if isinstance(saved, SavedPlan) else saved
        if pinned is not None:
            mesh, devices = self._saved_mesh(pinned)
            check_fits(pinned, module, signature.leaf_names, result_names, "given as method.plan")
        else:
            mesh, devices = self.method.device_mesh()
        dynamic = [i for i in range(len(args)) if i not in static]
        state = training_state(lowered, [dynamic.index(i) for i in batch if i in dynamic])
        batch_leaves = self._batch_leaves(signature, static, batch, len(args))
        batching = micro_batching(self._jitted, lowered, full_args, kwargs, batch_leaves, micro_batches,
                                  function=self._name) if micro_batches > 1 else None
        budget = self.method.memory_budget if self.method.memory_budget is not None else device_memory_budget(devices)

        def program_for(asked: float, module: ir.Module, stacklevel: int = 6) -> Program:
            plan = plan_module(module, self.method, mesh, batch_leaves, self._name, pinned, state=state,
                               devices=devices, memory_budget=asked, stacklevel=stacklevel)
            if batching is not None:
                accumulate_gradients(module, mesh, micro_batches, batch_leaves, batching.accumulate,
                                     batching.concatenated, function=self._name)
            return Program(lowered.out_tree, plan, module_text(module), mesh, devices, donated, weak,
                           host_callbacks(lowered))

        program = program_for(budget, module)
        if not budget:
            return program
        return self._within_budget(program, budget, lambda asked: program_for(asked, parse_lowered(lowered), 8))

    def _within_budget(self, program: Program, budget: float, replan: Callable[[float], Program]) -> Program:
        """``program``, or where XLA allocates more than ``budget`` for it, the program
        ``replan`` plans against a budget less the excess (at most MAX_MEMORY_REPLANS
        times): the first XLA allocates within the budget for, else the one that comes
        nearest, with a warning."""
        held = best_held = allocated_bytes(program.executable)
        best, asked = program, budget
        for _ in range(MAX_MEMORY_REPLANS):
            if held <= budget:
                return program
            # Less the excess, or less what XLA added to the prediction (and REPLAN_MARGIN of
            # it), whichever asks more (what XLA adds grew as the plan sharded more, at
            # 6.7B), but not below half.
            added = held - (program.plan.peak_memory or 0.0)
            asked = max(asked / 2, min(asked - (held - budget), budget - (1 + REPLAN_MARGIN) * added))
            try:
                program = replan(asked)
            except AutoShardingError:  # nothing fits the lower budget: keep the nearest plan
                break
            held = allocated_bytes(program.executable)
            if held < best_held:
                best, best_held = program, held
        if best_held > budget:
            warnings.warn(f"{self._name}: XLA allocates {byte_text(best_held)} per device for the plan, over the "
                          f"memory budget of {byte_text(budget)} (the plan predicted "
                          f"{byte_text(best.plan.peak_memory or 0.0)}; planned again against budgets less the "
                          "excess, which did not help)", AutoShardingWarning, stacklevel=5)
        return best

    def _batch_leaves(self, signature: CallSignature, static: tuple[int, ...], batch: tuple[int, ...],
                      count: int) -> tuple[int, ...]:
        if set(batch) & set(static):
            raise ValueError(f"batch_argnums {sorted(set(batch) & set(static))} of {self._name} are static; "
                             "a batch argument must be an array")
        leaves = leaves_of(signature, batch)
        method = self.method
        splits = method.force_data_parallel or method.force_batch_dim_to_mesh_dim >= 0
        if splits and not any(len(getattr(signature.leaves[i], "shape", ())) for i in leaves):
            raise ValueError(f"{type(method).__name__} splits the batch, but batch_argnums="
                             f"{self.batch_argnums!r} names no array argument of {self._name} (called with "
                             f"{count} positional arguments); pass batch_argnums= the positions of the batch")
        return leaves

    def _saved_mesh(self, plan: ShardingPlan) -> tuple[DeviceMesh, tuple[Any, ...]]:
        wanted = self.method.mesh_shape
        if wanted is not None and tuple(wanted) != plan.mesh.shape:
            raise PlanError(f"the plan was made for mesh {list(plan.mesh.shape)} but the method asks for "
                            f"{list(wanted)}; drop mesh_shape or the plan")
        mesh, devices = self.method.device_mesh(plan.mesh.shape)
        return dataclasses.replace(mesh, axis_names=plan.mesh.axis_names), devices

    def _saved_where(self, saved: SavedPlan) -> str:
        return f"saved for {saved.function}" if saved.function else "loaded"


def parallelize(fn: Callable | None = None, *, method: ShardParallel | None = None,
                static_argnums: int | Sequence[int] = (), donate_argnums: int | Sequence[int] = (),
                batch_argnums: int | Sequence[int] | None = None,
                load_plan: str | os.PathLike | SavedPlan | ShardingPlan | None = None,
                static_argnames: str | Sequence[str] = (), donate_argnames: str | Sequence[str] = ()) -> Any:
    """Parallelize ``fn`` over a device mesh (Alpa's ``@parallelize``).

    Usable as ``@parallelize`` and ``@parallelize(method=DataParallel())``.

    Args:
      fn: the function; it must be traceable by ``jax.jit``.
      method: how to parallelize (``ShardParallel()``: auto-sharding on ``(1, n)`` devices;
        ``PipeshardParallel(...)``: pipelined over submeshes, each stage auto-sharded).
      static_argnums: positional arguments that are compile-time constants (hashable);
        passed by keyword too, as under ``jax.jit``.
      donate_argnums: positional arguments whose buffers the call may consume; they are
        invalid after the call (deleted, under ``PipeshardParallel``, once the step succeeds).
      batch_argnums: positional arguments whose leaves have the batch as leading
        dimension (default: the method's, ``(1,)``).
      static_argnames, donate_argnames: the same by parameter name (positional parameters).
      load_plan: a plan saved by ``save_plan`` (path or object) to use instead of
        searching: ``ParallelizedFunction``'s for ``ShardParallel``,
        ``PipeshardFunction``'s (a :class:`SavedPipeline`) for ``PipeshardParallel``;
        calls with other shapes raise ``PlanError``.
    """
    if fn is None:
        return functools.partial(parallelize, method=method, static_argnums=static_argnums,
                                 donate_argnums=donate_argnums, batch_argnums=batch_argnums, load_plan=load_plan,
                                 static_argnames=static_argnames, donate_argnames=donate_argnames)
    name, parameters = getattr(fn, "__qualname__", None) or repr(fn), parameters_of(fn)
    static_argnums = with_argnames(static_argnums, static_argnames, parameters, "static_argnames", name)
    donate_argnums = with_argnames(donate_argnums, donate_argnames, parameters, "donate_argnames", name)
    method = method if method is not None else ShardParallel()
    if isinstance(method, PipeshardParallel):
        saved = read_plan(load_plan) if isinstance(load_plan, (str, os.PathLike)) else load_plan
        if saved is not None and not isinstance(saved, SavedPipeline):
            raise PlanError(f"PipeshardParallel needs a plan saved by a pipelined function's save_plan; "
                            f"load_plan is a {type(saved).__name__} (ShardParallel's)")
        return PipeshardFunction(fn, method, static_argnums=static_argnums, donate_argnums=donate_argnums,
                                 batch_argnums=batch_argnums, saved=saved)
    if isinstance(load_plan, (str, os.PathLike)):
        load_plan = read_plan(load_plan)
        if isinstance(load_plan, SavedPipeline):
            raise PlanError("load_plan is a pipeline plan (saved by PipeshardParallel); use it with "
                            "method=PipeshardParallel(...)")
    if load_plan is not None:
        method = dataclasses.replace(method, plan=load_plan)
    return ParallelizedFunction(fn, method, static_argnums=static_argnums, donate_argnums=donate_argnums,
                                batch_argnums=batch_argnums)
