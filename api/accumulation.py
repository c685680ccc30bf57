"""How a micro-batched step's outputs come together: averaged, added up, or joined.

A step run on ``B`` micro-batches (``num_micro_batches``) is traced on one micro-batch; what
its forward and backward parts hand on (the gradients, a loss, other outputs) is combined
over the micro-batches. Their mean is the whole batch's value when the step divides by the
batch size, as a loss averaged over examples does (``jnp.mean``: its divisor is the
micro-batch's size in the trace); their sum is, when the loss is a sum over examples
(``.sum()``, ``optax.l2_loss(...).sum()``, a sum over a constant, a sum of per-example
means). Alpa takes the mean whatever the loss, so a summed loss came out ``1/B`` of
``jax.jit``'s.

:func:`accumulation` tells the two apart from the step traced on the whole batch as well
(tracing and lowering only, no compilation). Where its ops and live constants are the
micro-batch trace's, nothing depends on the batch size, and unless the step divides by a
scalar it computes from the batch (a masked mean, ``(e * mask).sum() / mask.sum()``,
whose micro-batches' ratios average to about the batch's), it sums over examples. (With
``jax.grad`` a division of the gradients by their global norm, ``clip_by_global_norm``,
looks like one and keeps the mean; ``alpa_mlir.grad`` marks where the gradients end.) A step
that mixes examples otherwise (batch norm's statistics, a max over the batch) is the
batch's for neither; it keeps the mean.

:func:`micro_batching` also finds the per-example outputs (logits returned beside the
loss): those whose leading dimension is the batch's in the whole trace and the
micro-batch's in the other. The runtimes join the micro-batches' copies of those instead.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jax
from jax._src.lib.mlir import ir

from .dialect.annotations import find_main
from .dialect.context import walk
from .dialect.names import GRAD, MARKER_KIND, Accumulation
from .markers import lower_traced
from .passes import run_pipeline
from .passes.imports.lower_pipeline_markers import is_marker
from .pipeline import AutoShardingError, parse_lowered

LOG = logging.getLogger(__name__)

# Ops that pass a value on unchanged but for its shape or type, looked through to find
# what a divisor is.
_VIEWS = frozenset({"stablehlo.broadcast_in_dim", "stablehlo.convert", "stablehlo.reshape"})


@dataclass(frozen=True)
class MicroBatching:
    """How a micro-batched step's outputs come together: the mean or the sum of the
    micro-batches' values (``accumulate``), but for the flat outputs ``concatenated``, which
    are per-example (their leading dimension the batch's): the micro-batches' copies joined."""

    accumulate: Accumulation = "mean"
    concatenated: tuple[int, ...] = ()


def micro_batching(jitted: jax.stages.Wrapped, micro: jax.stages.Lowered, args: Sequence[Any],
                   kwargs: dict[str, Any], batch_args: Sequence[int], num_micro_batches: int, *,
                   function: str = "the function") -> MicroBatching:
    """:func:`accumulation` of ``micro`` (``jitted`` lowered on one micro-batch) and ``jitted``
    traced on the whole batch (``args``), and the outputs whose leading dimension is
    ``num_micro_batches`` times as long there; the mean and nothing joined where the step
    refuses the whole batch (its own code may check the batch's shape).

    Raises:
      AutoShardingError: an output's shape depends on the batch size otherwise (the
        batch in a later dimension, a shape computed from the batch size).
    """
    try:
        whole = lower_traced(jitted.trace(*args, **kwargs))
    except Exception as error:  # whatever the step's own code raises
        LOG.info("%s: traced on the whole batch it fails (%s: %s); its micro-batches' values are averaged",
                 function, type(error).__name__, error)
        return MicroBatching()
    concatenated = []
    for k, ((path, small), large) in enumerate(zip(jax.tree_util.tree_flatten_with_path(micro.out_info)[0],
                                                   jax.tree.leaves(whole.out_info))):
        if small.shape == large.shape:
            continue
        if small.shape and large.shape == (small.shape[0] * num_micro_batches, *small.shape[1:]):
            concatenated.append(k)
            continue
        raise AutoShardingError(
            f"{function}: output{jax.tree_util.keystr(path)} has shape {list(small.shape)} on a micro-batch and "
            f"{list(large.shape)} on the whole batch: micro-batches join an output along its leading dimension "
            "(per-example values) or combine it as the mean (or sum) of theirs, neither of which rebuilds this "
            "one; return it batch-major, or run the step with num_micro_batches=1")
    return MicroBatching(accumulation(micro, whole, batch_args, function), tuple(concatenated))


def accumulation(micro: jax.stages.Lowered, whole: jax.stages.Lowered, batch_args: Sequence[int],
                 function: str = "the function") -> Accumulation:
    """``"sum"`` where ``whole`` (the step lowered on the whole batch) has the ops and the
    live constant values of ``micro`` (lowered on one micro-batch), shapes aside, and
    ``micro`` divides by no scalar computed from its batch arguments (``@main``'s flat
    ``batch_args``): each accumulated value is then a sum over the batch's examples.
    ``"mean"`` otherwise, as Alpa takes it: where a constant differs (a mean's divisor
    scales with the batch), where the ops differ (Python control flow on the batch size),
    and where the step normalises by its data (a masked mean)."""
    modules = [_inlined(lowered) for lowered in (micro, whole)]
    ops = [list(walk(module.operation)) for module in modules]
    if [op.name for op in ops[0]] != [op.name for op in ops[1]]:
        LOG.info("%s: traced on the whole batch it runs other ops than on a micro-batch; its micro-batches' "
                 "values are averaged", function)
        return "mean"
    live = _live(ops[0])
    if any(used and a.name == "stablehlo.constant" and _constant(a) != _constant(b)
           for a, b, used in zip(*ops, live)):
        return "mean"
    divide = _divides_by_batch_scalar(find_main(modules[0].operation), batch_args)
    if divide is not None:
        LOG.info("%s: divides by a scalar computed from the batch (%s); its micro-batches' values are averaged",
                 function, divide.location)
        return "mean"
    LOG.info("%s: no value depends on the batch size (a loss summed over examples): its micro-batches' gradients "
             "and outputs are added up, not averaged", function)
    return "sum"


def _inlined(lowered: jax.stages.Lowered) -> ir.Module:
    """``lowered``'s module as the compiler reads it, its private functions inlined."""
    module = parse_lowered(lowered)
    run_pipeline(module, ["inline", "symbol-dce"])
    return module


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


def _divides_by_batch_scalar(main: ir.Operation, batch_args: Sequence[int]) -> ir.Operation | None:
    """The first ``divide`` (or ``rsqrt``) of ``main`` by a scalar that depends on a batch
    argument (a count or sum over the batch, seen through broadcasts and conversions), or None."""
    arguments = main.regions[0].blocks[0].arguments
    tainted: set[ir.Value] = {arguments[i] for i in batch_args if i < len(arguments)}
    _taint(main.regions[0].blocks[0], tainted)
    for op in walk(main):
        if op.name in ("stablehlo.divide", "stablehlo.rsqrt"):
            value = op.operands[-1]
            while (producer := _producer(value)) is not None and producer.name in _VIEWS:
                value = producer.operands[0]
            if value in tainted and isinstance(value.type, ir.RankedTensorType) and value.type.rank == 0:
                return op
    return None


def _producer(value: ir.Value) -> ir.Operation | None:
    """The op whose result ``value`` is; None for a block argument."""
    return None if isinstance(value.owner, ir.Block) else value.owner.operation


def _marks_gradients(op: ir.Operation) -> bool:
    """Whether ``op`` is ``alpa_mlir.grad``'s marker: what reads the gradients is the apply
    part, which runs once on the accumulated values (a division there, global-norm clipping's,
    reads the batch's sums or means either way)."""
    return is_marker(op) and MARKER_KIND in op.attributes and ir.StringAttr(op.attributes[MARKER_KIND]).value == GRAD


def _taint(block: ir.Block, tainted: set[ir.Value]) -> bool:
    """Add to ``tainted`` every value of ``block`` computed from one in it (an op with regions:
    from what it or its regions read), but the gradients ``alpa_mlir.grad`` marks; whether
    any op of the block read one."""
    read_any = False
    for op in block.operations:
        reads = any(value in tainted for value in op.operands)
        for region in op.regions:
            for inner in region.blocks:
                if reads:
                    tainted.update(inner.arguments)
                reads = _taint(inner, tainted) or reads
        if reads and not _marks_gradients(op):
            tainted.update(op.results)
        read_any = read_any or reads
    return read_any
