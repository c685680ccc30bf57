"""The ops ``alpa-accumulate-gradients`` builds its micro-batch loop of, each with its ``sdy.sharding``.

Constants and element-wise ops, a micro-batch's rows of a batch argument (``[B * b, ...]``
viewed as ``[b, B, ...]``, so that each device slices its own rows) and a micro-batch's
rows written into a per-example output's buffer. Every op is created at the current
insertion point; its sharding is given, as the loop's plan has it.
"""

from __future__ import annotations

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import sdy

from ...dialect.annotations import SDY_SHARDING
from ...dialect.sdy import tensor_sharding


def constant(value_type: ir.Type, number: float, sharding: ir.Attribute) -> ir.Value:
    """A splat ``stablehlo.constant`` of ``number``."""
    tensor = ir.RankedTensorType(value_type)
    element = tensor.element_type
    scalar = (ir.FloatAttr.get(element, number) if isinstance(element, ir.FloatType)
              else ir.IntegerAttr.get(element, int(number)))
    return ir.Operation.create("stablehlo.constant", results=[value_type], attributes={
        "value": ir.DenseElementsAttr.get_splat(tensor, scalar),
        SDY_SHARDING: sdy.TensorShardingPerValueAttr.get([sharding])}).result


def binary(kind: str, lhs: ir.Value, rhs: ir.Value, sharding: ir.Attribute) -> ir.Value:
    """The element-wise op ``kind`` (``stablehlo.add``, ...) of ``lhs`` and ``rhs``."""
    return ir.Operation.create(kind, results=[lhs.type], operands=[lhs, rhs],
                               attributes={SDY_SHARDING: sdy.TensorShardingPerValueAttr.get([sharding])}).result


def strided_sharding(mesh: str, dims: list[list[str]]) -> ir.Attribute:
    """The sharding of a ``[b, ...]`` value's ``[b, B, ...]`` view: the micro-batch dimension whole."""
    return tensor_sharding(mesh, [dims[0], [], *dims[1:]])


def whole_type(value: ir.Value, count: int, split: bool = False) -> ir.Type:
    """``value``'s type ``[b, ...]`` for ``count`` micro-batches: ``[b * count, ...]`` (or ``[b, count, ...]``)."""
    rows, *rest = (tensor := ir.RankedTensorType(value.type)).shape
    return ir.RankedTensorType.get([rows, count, *rest] if split else [rows * count, *rest], tensor.element_type)


def put_rows(buffer: ir.Value, value: ir.Value, index: ir.Value, sharding: ir.Attribute, mesh: str) -> ir.Value:
    """``buffer`` (``[b, B, ...]``) with ``value`` (``[b, ...]``) as its ``[:, index]``."""
    tensor, strided = ir.RankedTensorType(value.type), sdy.TensorShardingPerValueAttr.get([sharding])
    rows = ir.Operation.create("stablehlo.reshape", results=[whole_type(value, 1, split=True)], operands=[value],
                               attributes={SDY_SHARDING: strided}).result
    zero = constant(index.type, 0, tensor_sharding(mesh, []))  # the loop counter's type, a scalar
    return ir.Operation.create("stablehlo.dynamic_update_slice", results=[buffer.type],
                               operands=[buffer, rows, zero, index, *([zero] * (tensor.rank - 1))],
                               attributes={SDY_SHARDING: strided}).result


def micro_batch(value: ir.Value, index: ir.Value, count: int, mesh: str,
                 dims: list[list[str]]) -> tuple[ir.Value, ir.Operation]:
    """Micro-batch ``index`` of ``value`` (``[B * b, ...]``), rows ``index, index + B, ...``;
    and the op that reads ``value``."""
    tensor = ir.RankedTensorType(value.type)
    rows, rest, element = tensor.shape[0] // count, list(tensor.shape[1:]), tensor.element_type
    strided = sdy.TensorShardingPerValueAttr.get([strided_sharding(mesh, dims)])
    view = ir.Operation.create(
        "stablehlo.reshape", results=[ir.RankedTensorType.get([rows, count, *rest], element)], operands=[value],
        attributes={SDY_SHARDING: strided})
    zero = constant(ir.RankedTensorType.get([], ir.RankedTensorType(index.type).element_type), 0,
                     tensor_sharding(mesh, []))
    sliced = ir.Operation.create(
        "stablehlo.dynamic_slice", results=[ir.RankedTensorType.get([rows, 1, *rest], element)],
        operands=[view.result, zero, index, *([zero] * len(rest))],
        attributes={"slice_sizes": ir.DenseI64ArrayAttr.get([rows, 1, *rest]), SDY_SHARDING: strided}).result
    micro = ir.Operation.create(
        "stablehlo.reshape", results=[ir.RankedTensorType.get([rows, *rest], element)], operands=[sliced],
        attributes={SDY_SHARDING: sdy.TensorShardingPerValueAttr.get([tensor_sharding(mesh, dims)])}).result
    return micro, view
