"""``alpa-reshape-degenerate-transposes``: transposes that only move size-1 dimensions become reshapes."""

from __future__ import annotations

from dataclasses import dataclass

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import hlo

from ..dialect.context import walk
from ..dialect.pass_registry import Diagnostics, Pass, register


@register
@dataclass(frozen=True)
class ReshapeDegenerateTransposesPass(Pass):
    """Rewrite every ``stablehlo.transpose`` that keeps the order of its non-1 dimensions as a ``stablehlo.reshape``.

    Such a transpose moves no element, so the reshape computes the same value; the op
    keeps its attributes (``mhlo.sharding``). It runs last, on a module about to be
    compiled for a mesh (``lowering.spmd.compile_module`` runs it). The reason is XLA
    (jaxlib 0.10.2): its StableHLO import turns such a transpose into a reshape itself
    and drops the sharding on the way, so XLA's sharding propagation picks one. That
    broke a plan: a transpose the plan replicated fed a scatter and, through a sharding
    constraint, a split value; XLA split the transpose, partitioned the scatter per
    tile, and its simplifier folded the slices of the CPU scatter loop with a wrong
    clamp (the fold ``alpa-clamp-dynamic-slice-starts`` explains), so elements off the
    scattered index came out wrong.

    Input::

        %1 = stablehlo.transpose %0, dims = [1, 0] {mhlo.sharding = "{replicated}"}
            : (tensor<12x1xf32>) -> tensor<1x12xf32>

    Output::

        %1 = stablehlo.reshape %0 {mhlo.sharding = "{replicated}"} : (tensor<12x1xf32>) -> tensor<1x12xf32>
    """

    name = "alpa-reshape-degenerate-transposes"

    def apply(self, module: ir.Operation, diagnostics: Diagnostics) -> None:
        transposes = [op for op in walk(module) if op.name == "stablehlo.transpose"]
        for op in transposes:
            operand = op.operands[0].type
            if not isinstance(operand, ir.RankedTensorType) or not operand.has_static_shape:
                continue
            permutation = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
            moved = [d for d in permutation if operand.shape[d] != 1]
            if moved != sorted(moved):
                continue
            with ir.InsertionPoint(op), op.location:
                reshape = hlo.ReshapeOp(op.results[0].type, op.operands[0])
            for name in op.attributes:
                if name != "permutation":
                    reshape.attributes[name] = op.attributes[name]
            op.results[0].replace_all_uses_with(reshape.result)
            op.erase()
