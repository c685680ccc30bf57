"""``alpa-clamp-dynamic-slice-starts``: spell out the clamp of every dynamic-slice start."""

from __future__ import annotations

from dataclasses import dataclass

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import hlo

from ..dialect.context import walk
from ..dialect.pass_registry import Diagnostics, Pass, register


@register
@dataclass(frozen=True)
class ClampDynamicSliceStartsPass(Pass):
    """Clamp every non-constant start of ``stablehlo.dynamic_slice`` with an explicit ``stablehlo.clamp``.

    Each start index goes through ``clamp(0, start, operand_size - slice_size)``.
    The op clamps its starts itself, so this changes no value; it runs last, on a
    module about to be compiled for a mesh (``lowering.spmd.compile_module`` runs
    it). The reason is an XLA bug (jaxlib 0.10.2): the algebraic simplifier folds
    ``dynamic_slice(dynamic_slice(x, i, n1), j, n2)`` into
    ``dynamic_slice(x, i + j, n2)``, which clamps ``i`` to ``size - n2`` instead of
    ``size - n1``. The SPMD partitioner emits exactly that pattern whenever it splits
    a dynamically sliced dimension: a device's tile of a replicated value is a
    ``dynamic_slice`` at a partition offset. With ``i`` out of range, every device
    then read past the slice (``jax.jit`` of the pattern on one device is wrong too).
    An explicit clamp keeps ``i`` in range, where the fold is exact.

    Input::

        %0 = stablehlo.dynamic_slice %arg0, %c0, %i, sizes = [3, 20]
            : (tensor<3x24xf32>, tensor<i32>, tensor<i32>) -> tensor<3x20xf32>

    Output::

        %lo = stablehlo.constant dense<0> : tensor<i32>
        %hi = stablehlo.constant dense<4> : tensor<i32>
        %c = stablehlo.clamp %lo, %i, %hi : tensor<i32>
        %0 = stablehlo.dynamic_slice %arg0, %c0, %c, sizes = [3, 20] : ...

    Constant starts (which XLA folds into a static slice, clamped right) stay.
    """

    name = "alpa-clamp-dynamic-slice-starts"

    def apply(self, module: ir.Operation, diagnostics: Diagnostics) -> None:
        slices = [op for op in walk(module) if op.name == "stablehlo.dynamic_slice"]
        for op in slices:
            operand = op.operands[0].type
            if not isinstance(operand, ir.RankedTensorType) or not operand.has_static_shape:
                continue
            sizes = list(ir.DenseI64ArrayAttr(op.attributes["slice_sizes"]))
            for d, size in enumerate(sizes):
                start = op.operands[1 + d]
                if _is_constant(start):
                    continue
                with ir.InsertionPoint(op), op.location:
                    clamped = hlo.clamp(_scalar(start.type, 0), start, _scalar(start.type, operand.shape[d] - size))
                op.operands[1 + d] = clamped


def _is_constant(value: ir.Value) -> bool:
    owner = value.owner
    return isinstance(owner, ir.Operation | ir.OpView) and owner.name == "stablehlo.constant"


def _scalar(tensor_type: ir.Type, value: int) -> ir.Value:
    """A rank-0 ``stablehlo.constant`` of ``tensor_type`` (an integer tensor)."""
    element = ir.RankedTensorType(tensor_type).element_type
    return hlo.constant(ir.DenseElementsAttr.get_splat(tensor_type, ir.IntegerAttr.get(element, value)))
