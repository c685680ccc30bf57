"""``alpa-widen-split-contractions``: a 16-bit contraction split over devices sums its partials in f32."""

from __future__ import annotations

from dataclasses import dataclass

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import hlo

from ..dialect.annotations import MHLO_SHARDING, WIDENED_FLOATS, op_sharding, value_sharding
from ..dialect.context import walk
from ..dialect.names import PARTIAL_SUMS_ATTR
from ..dialect.pass_registry import Diagnostics, Pass, register
from ..dialect.sharding import ShardingError, TiledSharding


@register
@dataclass(frozen=True)
class WidenSplitContractionsPass(Pass):
    """Give every ``stablehlo.dot_general`` with a bf16 or f16 result whose operands'
    shardings split a contracting dimension an f32 result, converted back after it.

    Both ops take the dot's sharding. The value is the one ``jax.jit`` computes
    unsplit: XLA's CPU dot accumulates a 16-bit dot in f32 and rounds once, but a split
    one (jaxlib 0.10.2) rounds each device's partial sum to the result type and only
    then all-reduces them (in f32 on CPU, from rounded partials): a bf16 ``[4, 6, 1024]
    @ [1024, 9]`` split 8 ways over its contraction differed from ``jax.jit`` in 87 of
    216 elements, by up to 0.5. With the f32 result the partition's all-reduce sums
    unrounded partials, and the convert rounds once. The intra-op pass prices that
    all-reduce in f32 (``IterationSpace.partial_itemsize``). It runs on a module about
    to be compiled for a mesh (``lowering.spmd.compile_module`` runs it), and leaves a
    module planned with ``alpa-auto-sharding{partial-sums=result}`` (``alpa.partial_sums``
    on the module: partials of the result type were priced) as it is.

    Input::

        %0 = stablehlo.dot_general %x, %w, contracting_dims = [2] x [0] {mhlo.sharding = "{replicated}"}
            : (tensor<4x6x1024xbf16>, tensor<1024x9xbf16>) -> tensor<4x6x9xbf16>

    with ``%x`` split ``{devices=[1,1,8]<=[8]}`` and ``%w`` ``{devices=[8,1]<=[8]}``.

    Output::

        %d = stablehlo.dot_general %x, %w, contracting_dims = [2] x [0] {mhlo.sharding = "{replicated}"}
            : (tensor<4x6x1024xbf16>, tensor<1024x9xbf16>) -> tensor<4x6x9xf32>
        %0 = stablehlo.convert %d {mhlo.sharding = "{replicated}"} : (tensor<4x6x9xf32>) -> tensor<4x6x9xbf16>

    An operand whose sharding is unknown (a loop body's argument, a module in ``sdy``
    form) or not a tiling counts as unsplit. A dot whose own sharding is not one
    sharding (``{manual}``, garbage) is left as it is.
    """

    name = "alpa-widen-split-contractions"

    def apply(self, module: ir.Operation, diagnostics: Diagnostics) -> None:
        if PARTIAL_SUMS_ATTR in module.attributes:  # planned with partials of the result's type
            return
        for op in [op for op in walk(module) if op.name == "stablehlo.dot_general"]:
            result = op.results[0]
            narrow = result.type
            if not (isinstance(narrow, ir.RankedTensorType) and isinstance(narrow.element_type, WIDENED_FLOATS)):
                continue
            numbers = hlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
            contracting = (numbers.lhs_contracting_dimensions, numbers.rhs_contracting_dimensions)
            if not any(_splits(op.operands[i], dims) for i, dims in enumerate(contracting)):
                continue
            try:
                if op_sharding(op) is None:
                    continue
            except ShardingError:
                continue
            with ir.InsertionPoint.after(op), op.location:
                result.set_type(ir.RankedTensorType.get(narrow.shape, ir.F32Type.get(), narrow.encoding))
                convert = ir.Operation.create("stablehlo.convert", results=[narrow], operands=[result],
                                              attributes={MHLO_SHARDING: op.attributes[MHLO_SHARDING]})
            result.replace_all_uses_except(convert.results[0], convert)


def _splits(value: ir.Value, dims: list[int]) -> bool:
    """Whether ``value``'s sharding splits one of ``dims``."""
    sharding = value_sharding(value)
    return isinstance(sharding, TiledSharding) and any(sharding.shape[d] > 1 for d in dims)
