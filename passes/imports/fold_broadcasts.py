"""``alpa-fold-broadcasts``: a broadcast of a broadcast becomes one broadcast."""

from __future__ import annotations

from dataclasses import dataclass

from jax._src.lib.mlir import ir

from ...dialect.annotations import MHLO_SHARDING, op_sharding
from ...dialect.context import walk
from ...dialect.pass_registry import Diagnostics, Pass, register
from ...dialect.sharding import ShardingError

BROADCAST = "stablehlo.broadcast_in_dim"
SDY_SHARDING = "sdy.sharding"


@register
@dataclass(frozen=True)
class FoldBroadcastsPass(Pass):
    """Compose ``broadcast_in_dim(broadcast_in_dim(x))`` into ``broadcast_in_dim(x)``.

    JAX adds a bias as ``b[n] -> [1, n] -> [B, n]``: two broadcasts, the second
    expanding a size-1 dimension. Planned as two ops, the ``[1, n]`` value has few
    layouts (its size-1 dimension cannot be split) and the second broadcast follows
    it (Sec. 4.2's merging), so the ``[B, n]`` result cannot take the layout its user
    needs and is resharded after broadcasting (B times the bytes of gathering ``b``).
    XLA's partitioner also splits the size-1 dimension itself, with collective
    permutes over groups that are no mesh axis. One broadcast straight from ``b``
    has neither problem and computes the same value: an operand dimension of size 1
    may map to any result dimension, and otherwise the sizes match through both.

    The inner broadcast stays where it has other users, or a sharding the user
    pinned on it (the outer one is folded only if the inner carries no pin). Runs
    in ``alpa-import-pipeline`` after ``alpa-import-sharding``.

    Input::

        %0 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<1x8xf32>
        %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>

    Output::

        %1 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
    """

    name = "alpa-fold-broadcasts"

    def apply(self, module: ir.Operation, diagnostics: Diagnostics) -> None:
        for op in [op for op in walk(module) if op.name == BROADCAST]:
            inner = op.operands[0].owner
            if isinstance(inner, ir.Block) or inner.operation.name != BROADCAST:
                continue
            inner = inner.operation
            for read in (op, inner):  # the outer sharding stays; the inner one's keeps the inner op
                try:
                    op_sharding(read)
                except ShardingError as error:
                    diagnostics.error(read, str(error))
                    return
            if MHLO_SHARDING in inner.attributes or SDY_SHARDING in inner.attributes:
                continue
            inner_dims = list(ir.DenseI64ArrayAttr(inner.attributes["broadcast_dimensions"]))
            outer_dims = list(ir.DenseI64ArrayAttr(op.attributes["broadcast_dimensions"]))
            op.attributes["broadcast_dimensions"] = ir.DenseI64ArrayAttr.get(
                [outer_dims[d] for d in inner_dims], context=op.context)
            op.operands[0] = inner.operands[0]
            if not list(inner.results[0].uses):
                inner.erase()
