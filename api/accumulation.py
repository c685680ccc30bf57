"""Whether a micro-batched step's accumulated values add up over its micro-batches or average.

A step run on ``B`` micro-batches (``num_micro_batches``) is traced on one micro-batch; what
its forward and backward parts hand on (the gradients, a loss, other outputs) is combined
over the micro-batches. Their mean is the whole batch's value when the step divides by the
batch size, as a loss averaged over examples does (``jnp.mean``: its divisor is the
micro-batch's size in the trace); their sum is, when nothing in the step depends on the
batch size, as a loss summed over examples (``.sum()``, ``optax.l2_loss(...).sum()``, a sum
divided by a constant) does. Alpa takes the mean whatever the loss, so a summed loss came
out ``1/B`` of ``jax.jit``'s.

:func:`accumulation` tells the two apart from the step traced on the whole batch as well
(tracing and lowering only, no compilation): where its ops and constants are the micro-batch
trace's, the step is a sum over examples. A step that mixes examples (batch norm's statistics)
or normalises by the batch anywhere keeps the mean.
"""

from __future__ import annotations

import logging

import jax
from jax._src.lib.mlir import ir

from .dialect.context import walk
from .dialect.names import Accumulation

LOG = logging.getLogger(__name__)


def accumulation(micro: jax.stages.Lowered, whole: jax.stages.Lowered, function: str = "the function"
                 ) -> Accumulation:
    """``"sum"`` where ``whole`` (the step lowered on the whole batch) has the ops and constant
    values of ``micro`` (lowered on one micro-batch), shapes aside: no value of the step
    scales with the batch size, so each accumulated value is a sum over the batch's examples.
    ``"mean"`` where a constant differs (a mean's divisor scales with the batch), and where
    the ops differ (Python control flow on the batch size): the mean, as Alpa takes it."""
    ops = [list(walk(lowered.compiler_ir("stablehlo").operation)) for lowered in (micro, whole)]
    if [op.name for op in ops[0]] != [op.name for op in ops[1]]:
        LOG.info("%s: traced on the whole batch it runs other ops than on a micro-batch; its micro-batches' "
                 "values are averaged", function)
        return "mean"
    live = _live(ops[0])
    if all(_constant(a) == _constant(b) for a, b, used in zip(*ops, live) if used and a.name == "stablehlo.constant"):
        LOG.info("%s: no value depends on the batch size (a loss summed over examples): its micro-batches' "
                 "gradients and outputs are added up, not averaged", function)
        return "sum"
    return "mean"


def _live(ops: list[ir.Operation]) -> list[bool]:
    """Per op of ``ops`` (a pre-order walk, so users after producers): whether it counts
    towards the results. A constant of dead code (a mean computed and never used) does not
    make a step average; ops without results, custom calls and terminators all count."""
    live: set[ir.Operation] = set()
    for op in reversed(ops):
        if (not op.results or op.name == "stablehlo.custom_call"
                or any(use.owner in live for result in op.results for use in result.uses)):
            live.add(op)
    return [op in live for op in ops]


def _constant(op: ir.Operation) -> str:
    """A constant's value, whatever its shape: the element of a splat, else the whole attribute."""
    value = op.attributes["value"]
    if isinstance(value, ir.DenseElementsAttr) and value.is_splat:
        return str(value.get_splat_value())
    return str(value)
