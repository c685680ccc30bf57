"""The pass registry, the passes (grouped by phase) and a Python entry point to run them."""

from __future__ import annotations

from jax._src.lib.mlir import ir

from .registry import (
    Diagnostics,
    Pass,
    Pipeline,
    PipelineError,
    build_pass_manager,
    parse_pipeline,
    register,
    registered,
)


def run_pipeline(module: ir.Module, pipeline: str) -> list[tuple[ir.Location, str, str]]:
    """Run ``pipeline`` (``builtin.module(...)`` text, as for ``alpa-opt --pass-pipeline``)
    on ``module`` in place, in the module's context.

    Returns the warnings and remarks of alpa passes as (location, severity, message).
    Raises :class:`PipelineError` for a bad pipeline and ``ir.MLIRError`` (with the
    diagnostics) when a pass fails.
    """
    warnings: list[tuple[ir.Location, str, str]] = []
    with module.context:
        build_pass_manager(parse_pipeline(pipeline), warnings).run(module.operation)
    return warnings


__all__ = [
    "Diagnostics",
    "Pass",
    "Pipeline",
    "PipelineError",
    "build_pass_manager",
    "parse_pipeline",
    "register",
    "registered",
    "run_pipeline",
]
