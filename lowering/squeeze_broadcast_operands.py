"""``alpa-squeeze-broadcast-operands``: size-1 operand dimensions a broadcast widens are reshaped away first."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import hlo

from ..dialect.annotations import MHLO_SHARDING, op_sharding, string_attr
from ..dialect.context import walk
from ..dialect.pass_registry import Diagnostics, Pass, register
from ..dialect.sharding import Replicated, ShardingError, TiledSharding, format_mhlo_sharding

# A sharding XLA knows but that alpa does not plan (a shard_map body's {manual}).
_UNPLANNED = re.compile(r"\{\s*(manual|unknown)\s*\}")


@register
@dataclass(frozen=True)
class SqueezeBroadcastOperandsPass(Pass):
    """Rewrite every ``stablehlo.broadcast_in_dim`` whose operand has a size-1 dimension
    that becomes a larger one as a ``stablehlo.reshape`` dropping those dimensions,
    then a ``stablehlo.broadcast_in_dim`` of the rest.

    Both compute the same value. The reshape takes the broadcast's sharding restricted
    to the dimensions it keeps (the others replicate), which is the operand sharding
    XLA's SPMD partitioner asks of a broadcast; the broadcast keeps its attributes. It
    runs last, on a module about to be compiled for a mesh
    (``lowering.spmd.compile_module`` runs it). The reason is XLA (jaxlib 0.10.2): for a
    broadcast split along a dimension its operand has as size 1 (layer norm's
    ``[b, s, 1]`` mean, an attention mask ``[b, 1, 1, s]`` broadcast over the heads of a
    head-split score), the partitioner splits that size-1 operand dimension too,
    padding it, and assembles the operand with an all-reduce: a collective per
    broadcast that the plan does not have (a tensor-parallel BERT layer on 4 devices:
    two all-reduces of ``[8, 1, 1, 8]``, where Megatron's plan has none).

    Input::

        %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1, 2, 3] {mhlo.sharding = "{devices=[1,4,1,1]<=[4]}"}
            : (tensor<8x1x1x8xf32>) -> tensor<8x8x8x8xf32>

    Output::

        %r = stablehlo.reshape %0 {mhlo.sharding = "{replicated}"} : (tensor<8x1x1x8xf32>) -> tensor<8x8xf32>
        %1 = stablehlo.broadcast_in_dim %r, dims = [0, 3] {mhlo.sharding = "{devices=[1,4,1,1]<=[4]}"}
            : (tensor<8x8xf32>) -> tensor<8x8x8x8xf32>

    A broadcast whose sharding is not one tiled or replicated sharding (a tuple,
    ``{manual}``) is left as it is; one that is no sharding at all is an error at the op.
    """

    name = "alpa-squeeze-broadcast-operands"

    def apply(self, module: ir.Operation, diagnostics: Diagnostics) -> None:
        broadcasts = [op for op in walk(module) if op.name == "stablehlo.broadcast_in_dim"]
        for op in broadcasts:
            operand, result = op.operands[0].type, op.results[0].type
            if not (isinstance(operand, ir.RankedTensorType) and operand.has_static_shape
                    and isinstance(result, ir.RankedTensorType) and result.has_static_shape):
                continue
            dims = list(ir.DenseI64ArrayAttr(op.attributes["broadcast_dimensions"]))
            kept = [i for i, d in enumerate(dims) if not (operand.shape[i] == 1 and result.shape[d] != 1)]
            if len(kept) == len(dims):
                continue
            try:
                parsed = op_sharding(op)
            except ShardingError as error:
                attr = op.attributes[MHLO_SHARDING]
                if isinstance(attr, ir.StringAttr) and _UNPLANNED.search(attr.value):
                    continue  # {manual} or {unknown}: as it is
                diagnostics.error(op, str(error))
                return
            sharding = None
            if parsed is not None:
                sharding = _restricted(parsed, ir.StringAttr(op.attributes[MHLO_SHARDING]).value,
                                       [dims[i] for i in kept])
                if sharding is None:
                    continue
            with ir.InsertionPoint(op), op.location:
                squeezed = ir.RankedTensorType.get([operand.shape[i] for i in kept], operand.element_type)
                reshape = hlo.ReshapeOp(squeezed, op.operands[0])
            if sharding is not None:
                reshape.attributes[MHLO_SHARDING] = string_attr(sharding)
            op.operands[0] = reshape.result
            op.attributes["broadcast_dimensions"] = ir.DenseI64ArrayAttr.get([dims[i] for i in kept])


def _restricted(sharding, text: str, kept: list[int]) -> str | None:
    """Sharding ``sharding`` (``text``) of the broadcast's result restricted to its
    dimensions ``kept`` (in that order), the others folded into replication; ``None`` if it
    is not one tiled or replicated sharding."""
    if isinstance(sharding, Replicated):
        return text
    if not isinstance(sharding, TiledSharding):
        return None
    devices = sharding.device_array()
    others = [d for d in range(len(sharding.shape)) if d not in kept]  # dropped, new and replicated dims
    replicas = math.prod(sharding.shape[d] for d in others)
    tiles = tuple(sharding.shape[d] for d in kept)
    if math.prod(tiles) == 1:
        return "{replicated}"
    order = np.transpose(devices, kept + others).reshape(-1)
    shape = tiles + ((replicas,) if replicas > 1 else ())
    return format_mhlo_sharding(TiledSharding(shape, tuple(int(d) for d in order), replicas > 1))
