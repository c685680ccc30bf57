"""``alpa-mark-apply-gradients``: find the apply-gradient part of a step written with ``jax.grad``."""

from __future__ import annotations

from dataclasses import dataclass

from jax._src.lib.mlir import ir

from ...dialect.annotations import find_main
from ...dialect.names import APPLY, APPLY_GRAD_ATTR, BACKWARD, SEGMENT_ATTR
from ...dialect.pass_registry import Diagnostics, Pass, register
from ..inter_op.training_step import analyze_training_step, step_ops


@register
@dataclass(frozen=True)
class MarkApplyGradientsPass(Pass):
    """Mark what ``alpa_mlir.grad`` would: the ops of ``@main`` that apply the gradients.

    ``alpa-accumulate-gradients`` runs a step's forward and backward parts once per
    micro-batch and its apply part once; it reads the parts from ``alpa.segment`` and
    ``alpa.apply_grad`` (``alpa-lower-pipeline-markers`` writes them for a step that
    computed its gradients with ``alpa_mlir.grad``). For a step that used ``jax.grad``,
    ``jax.value_and_grad`` or optax, this pass finds the parts the way layer construction
    does (``training_step.analyze_training_step``: JAX's name stacks, or the dataflow
    rule without them) and writes the same attributes: ``alpa.segment = 0`` on every
    top-level op of ``@main``, and ``alpa.apply_grad`` on the apply part. A step whose
    gradients are marked already is left alone. Run it after ``alpa-import-pipeline``
    and before planning, so that a step that cannot be split is refused before any
    planning starts.

    Input::

        func.func @main(%w: tensor<4x2xf32>, %x: tensor<8x4xf32>) -> (tensor<4x2xf32>, tensor<f32>) {
          %y = stablehlo.dot_general %x, %w ...            // forward
          %l = stablehlo.reduce(%y init: %zero) ...         // the loss
          %dy = stablehlo.broadcast_in_dim %one ...         // backward, from the seed 1.0
          %g = stablehlo.dot_general %x, %dy ...
          %u = stablehlo.subtract %w, %g                    // apply
          return %u, %l

    Output::

          %y = stablehlo.dot_general %x, %w ... {alpa.segment = 0 : i64}
          ...
          %u = stablehlo.subtract %w, %g {alpa.apply_grad, alpa.segment = 0 : i64}

    Errors (at ``@main``): the function is no training step (no loss, or no backward
    pass after it, for the dataflow rule); it has no backward part, so there is nothing
    to accumulate.
    """

    name = "alpa-mark-apply-gradients"

    def apply(self, module: ir.Operation, diagnostics: Diagnostics) -> None:
        try:
            main = find_main(module)
        except ValueError as error:
            diagnostics.error(module, f"marking the apply-gradient part: {error}")
            return
        ops = step_ops(main)
        if any(SEGMENT_ATTR in op.attributes for op in ops):
            return  # marked by alpa_mlir.grad
        try:
            step = analyze_training_step(main)
        except ValueError as error:
            diagnostics.error(main, f"gradient accumulation needs a training step: {error}")
            return
        if not step.ops(BACKWARD):
            diagnostics.error(main, "gradient accumulation needs a training step: the function computes no "
                                    "gradients (no backward pass), so micro-batches have nothing to accumulate")
            return
        i64 = ir.IntegerType.get_signless(64, module.context)
        for op, phase in zip(ops, step.phase):
            op.attributes[SEGMENT_ATTR] = ir.IntegerAttr.get(i64, 0)
            if phase == APPLY:
                op.attributes[APPLY_GRAD_ATTR] = ir.UnitAttr.get(module.context)
