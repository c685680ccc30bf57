"""Loop nests of the tensor ops: elementwise, layout, dot, reduce, slicing.

Sec. 4.1 reads an op's parallel algorithms off its math expression: a batched
matmul ``C[b,i,j] = sum_k A[b,i,k] B[b,k,j]`` is four loops ``b, i, j, k`` and every
split of them is an algorithm (Table 3). Each rule here writes one op as such a loop
nest (:class:`~..strategy.IterationSpace`): which loop indexes every dimension of
every operand and result. A dimension the op changes (sliced, padded, reversed,
concatenated, a broadcast size-1 dimension) has no loop, so no strategy splits it.

Loop numbering is part of the contract with strategy names (``l0->0 l2->1``):
elementwise ops and layout ops number loops by result dimension; ``dot_general``
numbers batch, lhs free, rhs free, then contracting loops (Table 3's ``b, i, j, k``);
``reduce`` numbers the operand's dimensions that have loops, in order.
"""

from __future__ import annotations

import dataclasses
import math

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import hlo

from ....dialect.annotations import WIDENED_FLOATS
from ....dialect.host_callbacks import is_host_callback
from ..strategy import IterationSpace, Reducer
from . import register_rule, shape_of

Dims = tuple[int | None, ...]

_STABLEHLO_ELEMENTWISE = (
    "add", "subtract", "multiply", "divide", "remainder", "power", "maximum", "minimum",
    "and", "or", "xor", "not", "shift_left", "shift_right_arithmetic", "shift_right_logical",
    "atan2", "abs", "negate", "exponential", "exponential_minus_one", "log", "log_plus_one",
    "logistic", "tanh", "sqrt", "rsqrt", "cbrt", "sine", "cosine", "tan", "floor", "ceil",
    "round_nearest_afz", "round_nearest_even", "sign", "is_finite", "popcnt",
    "count_leading_zeros", "real", "imag", "complex", "convert", "compare", "select", "clamp",
    "reduce_precision",
)
# CHLO's elementwise ops. The ``broadcast_*`` ones broadcast implicitly; the rule
# accepts them only when every operand already has the result's shape (as JAX emits).
_CHLO_ELEMENTWISE = (
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "bessel_i1e", "conj", "cosh",
    "digamma", "erf", "erf_inv", "erfc", "is_inf", "is_neg_inf", "is_pos_inf", "lgamma",
    "next_after", "polygamma", "sinh", "square", "tan", "zeta",
    "broadcast_add", "broadcast_and", "broadcast_atan2", "broadcast_compare",
    "broadcast_complex", "broadcast_divide", "broadcast_maximum", "broadcast_minimum",
    "broadcast_multiply", "broadcast_next_after", "broadcast_or", "broadcast_polygamma",
    "broadcast_power", "broadcast_remainder", "broadcast_select", "broadcast_shift_left",
    "broadcast_shift_right_arithmetic", "broadcast_shift_right_logical", "broadcast_subtract",
    "broadcast_xor", "broadcast_zeta",
)

# The reduce body's single op, as the all-reduce that combines split partial results.
_BODY_REDUCERS: dict[str, Reducer] = {
    "stablehlo.add": "sum", "stablehlo.maximum": "max", "stablehlo.minimum": "min",
    "stablehlo.and": "and", "stablehlo.or": "or", "stablehlo.multiply": "mul",
}


def _ints(attr: ir.Attribute) -> list[int]:
    return [int(v) for v in attr]


def _shapes(values) -> list[tuple[int, ...] | None]:
    return [shape_of(v) for v in values]


def _elements(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


def _bit_width(value: ir.Value) -> int | None:
    element = value.type.element_type
    if isinstance(element, ir.ComplexType):
        return 2 * element.element_type.width
    return getattr(element, "width", None)


def _same_loops(op: ir.Operation, kept: list[bool]) -> IterationSpace | None:
    """Operand 0 and result 0 share one loop per kept dimension (``kept[d]``); the
    other dimensions stay whole; rank-0 operands (indices, padding values) have none."""
    shape = shape_of(op.results[0])
    if shape is None or any(s is None for s in _shapes(op.operands)):
        return None
    loop_sizes, dims = [], []
    for d, keep in enumerate(kept):
        dims.append(len(loop_sizes) if keep else None)
        if keep:
            loop_sizes.append(shape[d])
    operands = tuple(tuple(dims) if shape_of(v) else () for v in op.operands)
    return IterationSpace(tuple(loop_sizes), operands, (tuple(dims),))


@register_rule(*(f"stablehlo.{n}" for n in _STABLEHLO_ELEMENTWISE), *(f"chlo.{n}" for n in _CHLO_ELEMENTWISE))
def elementwise(op: ir.Operation) -> IterationSpace | None:
    """One loop per result dimension, shared by every operand and result; the rank-0
    predicate of ``select`` and bounds of ``clamp`` have none."""
    results = _shapes(op.results)
    shape = results[0]
    if shape is None or any(r != shape for r in results):
        return None
    loops = tuple(range(len(shape)))
    operands: list[Dims] = []
    for operand in _shapes(op.operands):
        if operand == shape:
            operands.append(loops)
        elif operand == ():
            operands.append(())
        else:
            return None
    return IterationSpace(shape, tuple(operands), (loops,) * len(results), flops=float(_elements(shape)))


@register_rule("stablehlo.bitcast_convert")
def bitcast_convert(op: ir.Operation) -> IterationSpace | None:
    """Elementwise when the element widths match; otherwise the result gains or loses
    a dimension and no loop structure is claimed."""
    if _bit_width(op.operands[0]) != _bit_width(op.results[0]):
        return None
    return elementwise(op)


@register_rule("stablehlo.broadcast_in_dim")
def broadcast_in_dim(op: ir.Operation) -> IterationSpace | None:
    """One loop per result dimension; operand dimension ``i`` is indexed by the loop of
    result dimension ``broadcast_dimensions[i]`` unless it is a size-1 dimension
    stretched to a bigger one (every device needs that single row)."""
    operand, result = shape_of(op.operands[0]), shape_of(op.results[0])
    if operand is None or result is None:
        return None
    mapping = _ints(op.attributes["broadcast_dimensions"])
    dims = tuple(None if operand[i] == 1 and result[d] != 1 else d for i, d in enumerate(mapping))
    return IterationSpace(result, (dims,), (tuple(range(len(result))),))


@register_rule("stablehlo.broadcast")
def broadcast(op: ir.Operation) -> IterationSpace | None:
    """``broadcast_sizes`` dimensions are prepended to the operand's."""
    operand, result = shape_of(op.operands[0]), shape_of(op.results[0])
    if operand is None or result is None:
        return None
    offset = len(result) - len(operand)
    return IterationSpace(result, (tuple(range(offset, len(result))),), (tuple(range(len(result))),))


@register_rule("stablehlo.transpose")
def transpose(op: ir.Operation) -> IterationSpace | None:
    """Result dimension ``i`` is operand dimension ``permutation[i]``: one loop each."""
    result = shape_of(op.results[0])
    if result is None:
        return None
    permutation = _ints(op.attributes["permutation"])
    operand: list[int | None] = [None] * len(permutation)
    for i, d in enumerate(permutation):
        operand[d] = i
    return IterationSpace(result, (tuple(operand),), (tuple(range(len(result))),))


def reshape_groups(src: tuple[int, ...], dst: tuple[int, ...]) -> list[tuple[int, int]]:
    """The (src, dst) major dimensions of the minimal runs of consecutive non-1
    dimensions whose sizes multiply to the same product on both sides.

    Splitting a run's major dimension ``k`` ways cuts the flattened run into ``k``
    contiguous blocks on both sides when ``k`` divides both major dimensions, so the
    two major dimensions can share a loop of extent ``gcd``.
    """
    src_dims = [d for d, s in enumerate(src) if s != 1]
    dst_dims = [d for d, s in enumerate(dst) if s != 1]
    if 0 in src or 0 in dst or _elements(src) != _elements(dst):
        return []
    groups, i, j = [], 0, 0
    while i < len(src_dims) and j < len(dst_dims):
        start = (src_dims[i], dst_dims[j])
        src_product, dst_product = src[src_dims[i]], dst[dst_dims[j]]
        i, j = i + 1, j + 1
        while src_product != dst_product:
            if src_product < dst_product:
                src_product *= src[src_dims[i]]
                i += 1
            else:
                dst_product *= dst[dst_dims[j]]
                j += 1
        groups.append(start)
    return groups


@register_rule("stablehlo.reshape")
def reshape(op: ir.Operation) -> IterationSpace | None:
    """Split and merged dimension groups share one loop on their major dimensions
    (``(B,S,H) -> (B,S,nh,hd)``: ``H`` and ``nh`` share a loop of extent ``nh``)."""
    src, dst = shape_of(op.operands[0]), shape_of(op.results[0])
    if src is None or dst is None:
        return None
    loop_sizes: list[int] = []
    operand: list[int | None] = [None] * len(src)
    result: list[int | None] = [None] * len(dst)
    for a, b in reshape_groups(src, dst):
        extent = math.gcd(src[a], dst[b])
        if extent > 1:
            operand[a] = result[b] = len(loop_sizes)
            loop_sizes.append(extent)
    return IterationSpace(tuple(loop_sizes), (tuple(operand),), (tuple(result),))


@register_rule("stablehlo.dot_general")
def dot_general(op: ir.Operation) -> IterationSpace | None:
    """Loops batch, lhs free, rhs free, contracting (Table 3's ``b, i, j, k``); the
    contracting loops are sum reductions (of f32 partials for a bf16 or f16 result, as
    the lowering sums them: ``alpa-widen-split-contractions``); 2 flops per point of the
    loop nest."""
    lhs, rhs = shape_of(op.operands[0]), shape_of(op.operands[1])
    if lhs is None or rhs is None or shape_of(op.results[0]) is None:
        return None
    numbers = hlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    lhs_batch, rhs_batch = list(numbers.lhs_batching_dimensions), list(numbers.rhs_batching_dimensions)
    lhs_contract, rhs_contract = list(numbers.lhs_contracting_dimensions), list(numbers.rhs_contracting_dimensions)
    lhs_free = [d for d in range(len(lhs)) if d not in lhs_batch + lhs_contract]
    rhs_free = [d for d in range(len(rhs)) if d not in rhs_batch + rhs_contract]
    lhs_map: list[int | None] = [None] * len(lhs)
    rhs_map: list[int | None] = [None] * len(rhs)
    loop_sizes: list[int] = []
    for lhs_dims, rhs_dims in ((lhs_batch, rhs_batch), (lhs_free, []), ([], rhs_free),
                               (lhs_contract, rhs_contract)):
        for k in range(max(len(lhs_dims), len(rhs_dims))):
            if lhs_dims:
                lhs_map[lhs_dims[k]] = len(loop_sizes)
            if rhs_dims:
                rhs_map[rhs_dims[k]] = len(loop_sizes)
            loop_sizes.append(lhs[lhs_dims[k]] if lhs_dims else rhs[rhs_dims[k]])
    result = tuple(range(len(lhs_batch) + len(lhs_free) + len(rhs_free)))
    element = op.results[0].type.element_type
    return IterationSpace(tuple(loop_sizes), (tuple(lhs_map), tuple(rhs_map)), (result,),
                          reducer="sum" if lhs_contract else None, heavy=True,
                          flops=2.0 * _elements(tuple(loop_sizes)),
                          partial_itemsize=4 if isinstance(element, WIDENED_FLOATS) else None)


def body_reducer(op: ir.Operation) -> Reducer | None:
    """The reducer of a single-input reduce whose body is one known binary op on its
    two block arguments; ``None`` for anything else (argmax's compare/select body)."""
    body = op.regions[0].blocks[0]
    ops = [o.operation for o in body.operations]
    if len(ops) != 2 or ops[1].name != "stablehlo.return":
        return None
    arguments, operands = list(body.arguments), list(ops[0].operands)
    if len(arguments) != 2 or len(operands) != 2:
        return None
    lhs, rhs = arguments
    if not ((operands[0] == lhs and operands[1] == rhs) or (operands[0] == rhs and operands[1] == lhs)):
        return None
    return _BODY_REDUCERS.get(ops[0].name)


@register_rule("stablehlo.reduce")
def reduce(op: ir.Operation) -> IterationSpace | None:
    """Kept dimensions are result loops; reduced dimensions are reduction loops when
    the body is a known reducer and have no loop otherwise (variadic reduces such as
    argmax cannot combine partial results with one all-reduce)."""
    count = len(op.operands) // 2
    inputs, results = _shapes(op.operands[:count]), _shapes(op.results)
    shape = inputs[0]
    if shape is None or any(s != shape for s in inputs) or any(r is None for r in results):
        return None
    reduced = set(_ints(op.attributes["dimensions"]))
    reducer = body_reducer(op) if count == 1 else None
    loop_sizes: list[int] = []
    dims: list[int | None] = []
    for d, size in enumerate(shape):
        if d in reduced and reducer is None:
            dims.append(None)
        else:
            dims.append(len(loop_sizes))
            loop_sizes.append(size)
    kept = tuple(dims[d] for d in range(len(shape)) if d not in reduced)
    return IterationSpace(tuple(loop_sizes), (tuple(dims),) * count + ((),) * count, (kept,) * count,
                          reducer=reducer if reduced else None, flops=float(count * _elements(shape)))


@register_rule("stablehlo.iota", "stablehlo.constant")
def generator(op: ir.Operation) -> IterationSpace | None:
    """Result loops only: a device computes (iota) or slices (constant) its own tile."""
    shape = shape_of(op.results[0])
    if shape is None:
        return None
    return IterationSpace(shape, (), (tuple(range(len(shape))),))


@register_rule("stablehlo.concatenate")
def concatenate(op: ir.Operation) -> IterationSpace | None:
    """Every dimension but the concatenated one is shared by all operands and the result."""
    shape = shape_of(op.results[0])
    if shape is None:
        return None
    axis = int(op.attributes["dimension"].value)
    return _same_loops(op, [d != axis for d in range(len(shape))])


@register_rule("stablehlo.slice")
def slice_(op: ir.Operation) -> IterationSpace | None:
    """Dimensions the slice leaves whole keep a loop; sliced or strided ones do not."""
    shape = shape_of(op.operands[0])
    if shape is None:
        return None
    starts, limits = _ints(op.attributes["start_indices"]), _ints(op.attributes["limit_indices"])
    strides = _ints(op.attributes["strides"])
    return _same_loops(op, [(starts[d], limits[d], strides[d]) == (0, size, 1) for d, size in enumerate(shape)])


@register_rule("stablehlo.pad")
def pad(op: ir.Operation) -> IterationSpace | None:
    """Unpadded dimensions keep a loop; the rank-0 padding value has none."""
    shape = shape_of(op.operands[0])
    if shape is None:
        return None
    low, high = _ints(op.attributes["edge_padding_low"]), _ints(op.attributes["edge_padding_high"])
    interior = _ints(op.attributes["interior_padding"])
    return _same_loops(op, [low[d] == high[d] == interior[d] == 0 for d in range(len(shape))])


@register_rule("stablehlo.reverse")
def reverse(op: ir.Operation) -> IterationSpace | None:
    """Reversed dimensions have no loop (a device's tile would come from its mirror)."""
    shape = shape_of(op.operands[0])
    if shape is None:
        return None
    reversed_dims = set(_ints(op.attributes["dimensions"]))
    return _same_loops(op, [d not in reversed_dims for d in range(len(shape))])


@register_rule("stablehlo.dynamic_slice")
def dynamic_slice(op: ir.Operation) -> IterationSpace | None:
    """Dimensions taken whole (offset clamped to 0) keep a loop; the rank-0 start
    indices have none."""
    shape = shape_of(op.operands[0])
    if shape is None:
        return None
    sizes = _ints(op.attributes["slice_sizes"])
    return _same_loops(op, [sizes[d] == size for d, size in enumerate(shape)])


@register_rule("stablehlo.dynamic_update_slice")
def dynamic_update_slice(op: ir.Operation) -> IterationSpace | None:
    """Dimensions the update covers whole keep a loop shared by operand, update and
    result; the rank-0 start indices have none."""
    shape, update = shape_of(op.operands[0]), shape_of(op.operands[1])
    if shape is None or update is None:
        return None
    return _same_loops(op, [update[d] == size for d, size in enumerate(shape)])


@register_rule("stablehlo.after_all", "stablehlo.create_token")
def token(op: ir.Operation) -> IterationSpace:
    """An effect token (an ordered callback's chain) has no dimensions to split."""
    return IterationSpace((), tuple(_whole(v) for v in op.operands), tuple(_whole(r) for r in op.results))


@register_rule("stablehlo.custom_call")
def custom_call(op: ir.Operation) -> IterationSpace | None:
    """JAX's ``Sharding`` annotation (an identity) has a loop nest; a host callback has
    none: it reads its operands whole and gives whole results, on one device (as under
    ``jax.jit``; ``alpa-auto-sharding`` writes that device)."""
    if is_host_callback(op):
        return IterationSpace((), tuple(_whole(v) for v in op.operands), tuple(_whole(r) for r in op.results))
    if op.attributes["call_target_name"].value != "Sharding" or len(op.operands) != 1:
        return None
    space = elementwise(op)
    return dataclasses.replace(space, flops=0.0) if space is not None else None


def _whole(value: ir.Value) -> Dims | None:
    """Every dimension of ``value`` unsplit (``None`` for a token)."""
    shape = shape_of(value)
    return None if shape is None else (None,) * len(shape)
