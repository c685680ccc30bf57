"""From a lowered JAX function to an annotated module and its plan: the compiler, run for the API.

``plan_module`` runs ``alpa-import-pipeline`` (and ``alpa-mark-apply-gradients`` for
micro-batches) then ``alpa-auto-sharding`` on the module
``jax.jit(f).lower(...)`` gave (``accumulate_gradients`` then loops it over
micro-batches), and turns what MLIR reports into Python: a failed pass into one
:class:`AutoShardingError` with the diagnostics as text, warnings (ops without a
sharding rule, a solver stopped at its time limit) into ``AutoShardingWarning``.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import jax
from jax._src.lib.mlir import ir

from .dialect.annotations import MHLO_SHARDING, funcs, get_value_attrs, set_value_attrs, string_attr
from .dialect.context import make_context
from .dialect.mesh import DeviceMesh
from .dialect.names import Accumulation
from .effect_tokens import start_tokens_in_step
from .methods import ShardParallel, device_memory_budget
from .passes import PipelineError, run_pipeline
from .passes.export.export_sdy import ExportSdyPass
from .passes.pipelines import ImportPipeline
from .passes.schedule.accumulate_gradients import AccumulateGradientsPass
from .passes.schedule.mark_apply_gradients import MarkApplyGradientsPass
from .plans.sharding_plan import ShardingPlan
from .saved_plan import value_names
from .services import provide

_FILE_LOCATION = re.compile(r'"([^"]+)":(\d+):(\d+)')
_NAME_LOCATION = re.compile(r'loc\("([^"]+)"')


class AutoShardingError(ValueError):
    """The compiler could not plan the function; the message carries its diagnostics."""


class AutoShardingWarning(UserWarning):
    """Something the plan had to compromise on (an op without a sharding rule runs replicated, ...)."""


def parse_lowered(lowered: jax.stages.Lowered, ordered_effects: bool = True,
                  function: str = "the function") -> ir.Module:
    """The StableHLO of ``lowered`` in the compiler's context, with source locations for messages,
    its ordered effects' tokens started in the step (:mod:`.effect_tokens`).

    Raises:
      AutoShardingError: ``ordered_effects=False`` and ``function`` has ordered effects.
    """
    module = ir.Module.parse(lowered.as_text(debug_info=True), context=make_context())
    if start_tokens_in_step(module) and not ordered_effects:
        raise AutoShardingError(f"{function} has ordered host callbacks (io_callback(..., ordered=True)), whose "
                                "order PipeshardParallel cannot keep across its meshes; pass ordered=False, or "
                                "use ShardParallel")
    return module


def host_callbacks(lowered: jax.stages.Lowered) -> tuple[Callable[..., Any], ...]:
    """The Python callables of the function's host callbacks (``jax.debug.print``,
    ``jax.debug.callback``, ``io_callback``, ...), in the order its module's callback custom
    calls index them; what XLA must be given to compile the module."""
    return tuple(lowered._lowering.compile_args.get("host_callbacks", ()))


def module_text(module: ir.Module) -> str:
    """The module as a reader wants it: no debug locations."""
    return module.operation.get_asm(enable_debug_info=False)


def plan_module(module: ir.Module, method: ShardParallel, mesh: DeviceMesh, batch_args: tuple[int, ...],
                function: str = "the function", pinned: ShardingPlan | None = None,
                *, stacklevel: int = 5, state: tuple[tuple[int, int], ...] = (),
                devices: Sequence[Any] = (), memory_budget: float | None = None) -> ShardingPlan:
    """Annotate ``module`` in place with a plan for ``mesh``, and return the plan.

    Args:
      module: a module from ``jax.jit(...).lower(...)``, parsed by :func:`parse_lowered`.
      method: the options of the search.
      mesh: the logical mesh (its shape, axis names and alpha/beta are what the pass sees).
      batch_args: flat argument numbers whose leading dimension is the batch.
      state: (flat argument, flat result) pairs of the training state (``method.steady_state``
        ties them).
      function: the user's function, for messages.
      pinned: a plan whose argument and result shardings the new plan must keep.
      stacklevel: of the warnings, so that they point at the user's call.
      devices: the devices the plan runs on; with ``method.memory_budget=None`` their
        memory less a reserve is the budget (``device_memory_budget``).
      memory_budget: the budget to plan for instead of the method's (bytes per device).

    Raises:
      AutoShardingError: the pass rejected the module; the message has its diagnostics.
    """
    names = value_names(module)  # read before the passes rewrite @main
    overrides: dict[str, Any] = {}
    if memory_budget is not None:
        overrides["memory_budget"] = memory_budget
    elif method.memory_budget is None:
        overrides["memory_budget"] = device_memory_budget(devices)
    if pinned is not None:
        _pin_arguments_and_results(module, pinned)
        if method.keep_user_shardings == "none":
            overrides["keep_user_shardings"] = "io"
    plans: list[ShardingPlan] = []
    auto_sharding = method.auto_sharding_pass(mesh.shape, batch_args, state=state, mesh_axes=mesh.axis_names,
                                              mesh_alpha=mesh.alpha, mesh_beta=mesh.beta, on_plan=plans.append,
                                              **overrides)
    importer = ImportPipeline(mesh_shape=mesh.shape, mesh_axes=mesh.axis_names)
    # Micro-batches: the parts to loop and to apply once, found before planning (jax.grad steps).
    marks = [MarkApplyGradientsPass()] if method.num_micro_batches > 1 else []
    layers = method.layer_construction(auto_sharding.memory_budget)
    try:
        reported = run_pipeline(module, provide([importer, *marks, *([layers] if layers else []), auto_sharding]))
    except ir.MLIRError as error:
        raise AutoShardingError(f"auto-sharding of {function} failed:\n  " + diagnostics_text(error)) from None
    except PipelineError as error:  # an option the method let through; a bug on our side
        raise AutoShardingError(f"auto-sharding of {function}: {error}") from None
    warn_reported(reported, function, stacklevel)
    return plans[-1].with_names(*names)


def warn_reported(reported: list[tuple[ir.Location, str, str]], function: str, stacklevel: int) -> None:
    """The passes' warnings (``run_pipeline``'s report) as :class:`AutoShardingWarning` s,
    at ``stacklevel`` as the caller would give ``warnings.warn`` (the user's call)."""
    for location, severity, message in reported:
        if severity == "warning":
            warnings.warn(f"{function}: {_where(location)}{message}", AutoShardingWarning, stacklevel=stacklevel + 1)


def accumulate_gradients(module: ir.Module, mesh: DeviceMesh, num_micro_batches: int, batch_args: tuple[int, ...],
                         accumulate: Accumulation = "mean", concat_results: tuple[int, ...] = (),
                         *, function: str = "the function") -> None:
    """Turn a module planned for one micro-batch into the accumulation step over ``num_micro_batches``.

    Runs ``alpa-export-sdy`` then ``alpa-accumulate-gradients`` on the output of
    :func:`plan_module`; the batch arguments (flat numbers ``batch_args``) grow to the
    whole batch; ``accumulate``: the micro-batches' mean or sum, ``concat_results``: the
    per-example results, joined (:mod:`.accumulation`).

    Raises:
      AutoShardingError: the step cannot be accumulated; the message says why.
    """
    passes = [ExportSdyPass(mesh_shape=mesh.shape, mesh_axes=mesh.axis_names),
              AccumulateGradientsPass(num_micro_batches=num_micro_batches, batch_args=batch_args,
                                      accumulate=accumulate, concat_results=concat_results)]
    try:
        run_pipeline(module, passes)
    except ir.MLIRError as error:
        raise AutoShardingError(f"gradient accumulation of {function} failed:\n  "
                                + diagnostics_text(error)) from None


def _pin_arguments_and_results(module: ir.Module, plan: ShardingPlan) -> None:
    """Write ``plan``'s argument and result shardings on ``@main``, where the import pass reads pins."""
    main = next(f for f in funcs(module.operation) if ir.StringAttr(f.attributes["sym_name"]).value == "main")
    with module.context:
        for which, values in (("arg_attrs", plan.arguments), ("res_attrs", plan.results)):
            dicts = get_value_attrs(main, which)
            for attrs, value in zip(dicts, values):
                attrs[MHLO_SHARDING] = string_attr(value.sharding)
            set_value_attrs(main, which, dicts)


def diagnostics_text(error: ir.MLIRError) -> str:
    """The diagnostics of a failed pass, one per line (with their notes), for an exception message."""
    return "\n  ".join([_diagnostic_text(d) for d in error.error_diagnostics] or [str(error)])


def _diagnostic_text(diagnostic: ir.DiagnosticInfo) -> str:
    text = _where(diagnostic.location) + diagnostic.message
    for note in diagnostic.notes:
        text += f"\n    note: {_where(note.location)}{note.message}"
    return text


def _where(location: ir.Location) -> str:
    """``file:line: `` of the user's code (the innermost frame JAX recorded), or the op's name."""
    text = str(location)
    found = _FILE_LOCATION.search(text)
    if found:
        return f"{found[1]}:{found[2]}: "
    named = _NAME_LOCATION.match(text)
    return f"{named[1]}: " if named else ""
