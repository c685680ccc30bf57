"""Loop nests of the neural-network ops: convolution, pooling, gather/scatter, sort, norms.

Sec. 4.1: "for other primitive operators such as convolution and reduction, we can get
a list of possible parallel algorithms following a similar analysis of their math
expressions". Each rule below writes the op's math as a loop nest and keeps a tensor
dimension whole (``None``) wherever a block split of it would not be a split of one
loop: windows (halos are not modelled), indexed dimensions of gather/scatter, the sort
dimension. Ops with dynamic or unranked shapes get no loop nest (``None``).

The loop maps are what XLA's SPMD partitioner (GSPMD, ``lowering/spmd.py``) carries out
without communication beyond the strategy's own (``test/unit/test_nn_fidelity.py``, on
a 2x4 mesh). Where XLA falls back to all-gathering and replicating an op although its
math would split, the rule keeps those dimensions whole, so the cost model does not
promise what XLA will not do; each such place says what XLA did.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import hlo as stablehlo

from ..strategy import IterationSpace, Reducer
from . import register_rule, shape_of

Dims = list[int | None]


class _NotStatic(Exception):
    """An operand or result without a static shape: no loop nest."""


def _rule(*op_names: str) -> Callable[[Callable[[ir.Operation], IterationSpace | None]], Callable]:
    """:func:`register_rule` for rules that read shapes with :func:`_shapes`; an op
    whose shapes are not static gets ``None`` (the pass replicates it)."""
    def decorate(rule: Callable[[ir.Operation], IterationSpace | None]) -> Callable:
        @functools.wraps(rule)
        def guarded(op: ir.Operation) -> IterationSpace | None:
            try:
                return rule(op)
            except _NotStatic:
                return None

        register_rule(*op_names)(guarded)
        return guarded

    return decorate


class _LoopNest:
    """Collects loops while a rule walks an op's dimensions."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def loop(self, extent: int) -> int:
        self.sizes.append(int(extent))
        return len(self.sizes) - 1

    def whole(self, operands: Sequence[Sequence[int] | None], results: Sequence[Sequence[int]],
              heavy: bool = False, flops: float = 0.0) -> IterationSpace:
        """No loops: every dimension of shapes ``operands``/``results`` stays whole."""
        def none(shape: Sequence[int] | None) -> Dims | None:
            return None if shape is None else [None] * len(shape)

        return self.space([none(s) for s in operands], [none(s) for s in results], heavy=heavy, flops=flops)

    def space(self, operands: Sequence[Dims | None], results: Sequence[Dims | None],
              reducer: Reducer | None = None, heavy: bool = False, flops: float = 0.0) -> IterationSpace:
        def freeze(dims: Dims | None) -> tuple[int | None, ...] | None:
            return None if dims is None else tuple(dims)

        return IterationSpace(tuple(self.sizes), tuple(freeze(d) for d in operands),
                              tuple(freeze(d) for d in results), reducer, heavy, float(flops))


def _shapes(values: Sequence[ir.Value]) -> list[tuple[int, ...]]:
    shapes = [shape_of(v) for v in values]
    if any(s is None or any(size < 0 for size in s) for s in shapes):
        raise _NotStatic
    return shapes  # type: ignore[return-value]


def _i64s(op: ir.Operation, name: str, default: Sequence[int]) -> list[int]:
    return list(ir.DenseI64ArrayAttr(op.attributes[name])) if name in op.attributes else list(default)


def _int(op: ir.Operation, name: str) -> int:
    return ir.IntegerAttr(op.attributes[name]).value


def _padding(op: ir.Operation, rank: int) -> list[tuple[int, int]]:
    if "padding" not in op.attributes:
        return [(0, 0)] * rank
    flat = list(ir.DenseIntElementsAttr(op.attributes["padding"]))
    return [(flat[2 * d], flat[2 * d + 1]) for d in range(rank)]


def _elements(shape: Sequence[int]) -> int:
    return math.prod(shape)


def _body_reducer(op: ir.Operation) -> Reducer | None:
    """``"sum"`` when every result of ``op``'s body is ``add(lhs_i, rhs_i)`` of its block arguments."""
    block = op.regions[0].blocks[0]
    n = len(block.arguments) // 2
    terminator = list(block.operations)[-1]
    for i, value in enumerate(terminator.operands):
        owner = value.owner
        if not isinstance(owner, ir.OpView) or owner.operation.name != "stablehlo.add":
            return None
        args = {a.arg_number for a in owner.operands if isinstance(a, ir.BlockArgument)}
        if args != {i, i + n}:
            return None
    return "sum"


def _loops_over(nest: _LoopNest, shape: Sequence[int], whole: set[int]) -> Dims:
    """One new loop per dimension of ``shape`` outside ``whole``; ``None`` for those in it."""
    return [None if d in whole else nest.loop(size) for d, size in enumerate(shape)]


@_rule("stablehlo.convolution")
def convolution(op: ir.Operation) -> IterationSpace:
    """``out[b, o, s] = sum_{i, w} lhs[b, i, s*stride + w] * kernel[w, i, o]``.

    Loops: batch ``b``, output feature ``o``, input feature ``i`` (a reduction loop whose
    partial sums an all-reduce combines, the conv analogue of Table 3's ``k``). Spatial
    dimensions stay whole: splitting them needs halo exchange, which the model lacks.

    Grouped convs (``feature_group_count = G > 1``): input feature ``c`` and output
    feature ``o`` both carry the group ``c // (C/G) = o // (O/G)``, so one loop of
    extent ``G`` (splits keep groups whole) indexes the lhs feature, kernel output
    feature and output feature dimensions; the kernel input feature (features within a
    group) stays whole. Depthwise convs are the case ``C/G = 1``. XLA partitions only
    those: for ``C/G > 1`` (e.g. the data gradient of a depthwise conv with a channel
    multiplier) it all-gathers both operands and replicates the conv for every sharding,
    the batch split included, so such convs get no loops.

    ``batch_group_count = G > 1`` (weight gradients of grouped convs): the lhs batch
    dimension is ``G`` groups that pair with the kernel output feature groups and are
    concatenated along the output feature; a loop of extent ``G`` ties those three, the
    output batch dimension (batch within a group) stays whole.

    A grouped conv that XLA partitions as a dot (:func:`_is_dot_like`: a 1x1 window, or
    one that covers the whole image) keeps only its batch loop: XLA's SPMD partitioner
    aborts the process (``free(): invalid pointer``, jaxlib 0.10.2) on any sharding that
    splits the lhs feature dimension of such a conv, plain ``jax.jit`` included; a true
    window (size 2 of 4, or size 1 with stride 2) partitions.
    """
    lhs, kernel = _shapes(op.operands)
    (out,) = _shapes(op.results)
    dn = stablehlo.ConvDimensionNumbers(op.attributes["dimension_numbers"])
    feature_groups = _int(op, "feature_group_count")
    batch_groups = _int(op, "batch_group_count")
    nest = _LoopNest()
    window = math.prod(kernel[d] for d in dn.kernel_spatial_dimensions)
    flops = 2 * _elements(out) * window * kernel[dn.kernel_input_feature_dimension]
    if feature_groups > 1 and kernel[dn.kernel_input_feature_dimension] > 1:
        return nest.whole([lhs, kernel], [out], heavy=True, flops=flops)
    lhs_dims: Dims = [None] * len(lhs)
    kernel_dims: Dims = [None] * len(kernel)
    out_dims: Dims = [None] * len(out)
    if feature_groups > 1 and _is_dot_like(op, lhs, kernel, dn):
        batch = nest.loop(lhs[dn.input_batch_dimension])
        lhs_dims[dn.input_batch_dimension] = out_dims[dn.output_batch_dimension] = batch
        return nest.space([lhs_dims, kernel_dims], [out_dims], heavy=True, flops=flops)
    if batch_groups > 1:
        group = nest.loop(batch_groups)
        lhs_dims[dn.input_batch_dimension] = group
    else:
        batch = nest.loop(lhs[dn.input_batch_dimension])
        lhs_dims[dn.input_batch_dimension] = out_dims[dn.output_batch_dimension] = batch
        group = nest.loop(feature_groups) if feature_groups > 1 else None
    if group is not None:
        kernel_dims[dn.kernel_output_feature_dimension] = out_dims[dn.output_feature_dimension] = group
    else:
        features = nest.loop(out[dn.output_feature_dimension])
        kernel_dims[dn.kernel_output_feature_dimension] = out_dims[dn.output_feature_dimension] = features
    if feature_groups > 1:
        lhs_dims[dn.input_feature_dimension] = group
    else:
        contracted = nest.loop(lhs[dn.input_feature_dimension])
        lhs_dims[dn.input_feature_dimension] = kernel_dims[dn.kernel_input_feature_dimension] = contracted
    reducer: Reducer | None = "sum" if feature_groups == 1 else None
    return nest.space([lhs_dims, kernel_dims], [out_dims], reducer=reducer, heavy=True, flops=flops)


def _is_dot_like(op: ir.Operation, lhs: Sequence[int], kernel: Sequence[int],
                 dn: stablehlo.ConvDimensionNumbers) -> bool:
    """Whether XLA reads the conv as a dot: every spatial dimension is one of a dot's
    (XLA's ``dot_as_convolution_util``). A window of one element (stride 1, unpadded) is
    a free dimension; a window as large as the unpadded image a contracted one; a size-1
    image with a reversed window padded by its size - 1 a kernel free one; a window as
    large as the image and its base dilation (stride or window dilation size - 1) a batch one."""
    rank = len(dn.input_spatial_dimensions)
    ones = [1] * rank
    strides, pads = _i64s(op, "window_strides", ones), _padding(op, rank)
    bases, dilations = _i64s(op, "lhs_dilation", ones), _i64s(op, "rhs_dilation", ones)
    reversed_ = (list(ir.DenseBoolArrayAttr(op.attributes["window_reversal"]))
                 if "window_reversal" in op.attributes else [False] * rank)
    for i in range(rank):
        image, window = lhs[dn.input_spatial_dimensions[i]], kernel[dn.kernel_spatial_dimensions[i]]
        stride, pad, base, dilation, reverse = strides[i], pads[i], bases[i], dilations[i], reversed_[i]
        step = max(1, image - 1)
        batch = (image == window == base and pad == (0, 0) and not reverse
                 and ((stride == step and dilation == 1) or (dilation == step and stride == 1)))
        batch |= (image == window and pad == (image - 1, image - 1) and reverse and dilation == 1
                  and stride == image and base == image - 1)
        contracted = image == window and base == dilation == 1 and pad == (0, 0) and not reverse
        plain = stride == dilation == base == 1
        free = plain and window == 1 and pad == (0, 0) and not reverse
        kernel_free = plain and image == 1 and pad == (window - 1, window - 1) and reverse
        if not (batch or contracted or free or kernel_free):
            return False
    return True


def _windowed(op: ir.Operation, rank: int) -> set[int]:
    """Dimensions that a window, stride, dilation or padding reshapes."""
    sizes = _i64s(op, "window_dimensions", [1] * rank)
    strides = _i64s(op, "window_strides", [1] * rank)
    dilations = _i64s(op, "base_dilations", [1] * rank)
    pads = _padding(op, rank)
    return {d for d in range(rank) if sizes[d] > 1 or strides[d] > 1 or dilations[d] > 1 or pads[d] != (0, 0)}


@_rule("stablehlo.reduce_window")
def reduce_window(op: ir.Operation) -> IterationSpace:
    """Pooling: dimensions the window leaves alone are loops shared by all inputs and
    results; windowed dimensions stay whole (halos are not modelled)."""
    n = len(op.results)
    inputs = _shapes(op.operands[:n])
    windowed = _windowed(op, len(inputs[0]))
    nest = _LoopNest()
    dims = _loops_over(nest, inputs[0], windowed)
    window = math.prod(_i64s(op, "window_dimensions", []))
    flops = n * window * _elements(_shapes(op.results)[0])
    return nest.space([dims] * n + [[]] * n, [dims] * n, flops=flops)


@_rule("stablehlo.select_and_scatter")
def select_and_scatter(op: ir.Operation) -> IterationSpace:
    """Max-pool gradient: operand, source (pooled shape) and result share the loops of
    non-windowed dimensions; windowed ones stay whole."""
    operand, source, _ = _shapes(op.operands)
    nest = _LoopNest()
    dims = _loops_over(nest, operand, _windowed(op, len(operand)))
    window = math.prod(_i64s(op, "window_dimensions", []))
    return nest.space([dims, dims, []], [dims], flops=2 * window * _elements(source))


def _batch_dims(rank: int, index_vector_dim: int) -> list[int]:
    """Dimensions of a start-indices tensor other than its index vector dimension."""
    return [d for d in range(rank) if d != index_vector_dim]


@_rule("stablehlo.gather")
def gather(op: ir.Operation) -> IterationSpace:
    """``out[batch..., offset...] = operand[indices[batch...] + offset...]``.

    Loops: every batch dimension of the indices and of the output (with the operand's
    batching dimension when it has one, as ``take_along_axis``); every offset dimension
    whose slice takes the whole, unindexed operand dimension (an embedding's hidden
    dimension). Indexed and partially sliced operand dimensions stay whole.
    """
    operand, indices = _shapes(op.operands)
    (out,) = _shapes(op.results)
    dn = stablehlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
    slice_sizes = _i64s(op, "slice_sizes", [])
    nest = _LoopNest()
    operand_dims: Dims = [None] * len(operand)
    indices_dims: Dims = [None] * len(indices)
    out_dims: Dims = [None] * len(out)
    out_batch = [d for d in range(len(out)) if d not in dn.offset_dims]
    for index_dim, out_dim in zip(_batch_dims(len(indices), dn.index_vector_dim), out_batch, strict=True):
        loop = indices_dims[index_dim] = out_dims[out_dim] = nest.loop(indices[index_dim])
        if index_dim in dn.start_indices_batching_dims:
            operand_dims[dn.operand_batching_dims[list(dn.start_indices_batching_dims).index(index_dim)]] = loop
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    offsets = [d for d in range(len(operand)) if d not in dropped]
    for operand_dim, out_dim in zip(offsets, sorted(dn.offset_dims), strict=True):
        if slice_sizes[operand_dim] == operand[operand_dim] and operand_dim not in dn.start_index_map:
            operand_dims[operand_dim] = out_dims[out_dim] = nest.loop(operand[operand_dim])
    return nest.space([operand_dims, indices_dims], [out_dims])


@_rule("stablehlo.scatter")
def scatter(op: ir.Operation) -> IterationSpace:
    """``result = operand; result[indices[batch...] + window...] (+)= updates[batch..., window...]``.

    Update window dimensions that cover a whole, unindexed operand dimension share a
    loop with it. An update scatter (batch) dimension indexes only the indices and the
    updates: with an ``add`` update computation it is a reduction loop, since each
    device's scatter holds partial sums of the result (the embedding gradient);
    otherwise (``.at[].set``) it stays whole. A scatter dimension paired with an
    operand batching dimension is an ordinary loop over both.

    Only the first such dimension becomes a reduction loop: with two of them split over
    different mesh axes XLA combines the partial sums with one all-reduce per axis, each
    on the whole result, not with the single all-reduce over both axes of Table 3.
    """
    n = len(op.results)
    inputs = _shapes(op.operands[:n])
    indices = _shapes([op.operands[n]])[0]
    updates = _shapes(op.operands[n + 1:])
    dn = stablehlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
    reducer = _body_reducer(op)
    nest = _LoopNest()
    operand_dims: Dims = [None] * len(inputs[0])
    indices_dims: Dims = [None] * len(indices)
    update_dims: Dims = [None] * len(updates[0])
    update_scatter = [d for d in range(len(updates[0])) if d not in dn.update_window_dims]
    reduces = False
    for index_dim, update_dim in zip(_batch_dims(len(indices), dn.index_vector_dim), update_scatter, strict=True):
        batching = index_dim in dn.scatter_indices_batching_dims
        if batching or (reducer is not None and not reduces):
            loop = indices_dims[index_dim] = update_dims[update_dim] = nest.loop(indices[index_dim])
            if batching:
                operand_dims[dn.input_batching_dims[list(dn.scatter_indices_batching_dims).index(index_dim)]] = loop
            reduces |= not batching
    dropped = set(dn.inserted_window_dims) | set(dn.input_batching_dims)
    windows = [d for d in range(len(inputs[0])) if d not in dropped]
    for operand_dim, update_dim in zip(windows, sorted(dn.update_window_dims), strict=True):
        whole = updates[0][update_dim] == inputs[0][operand_dim]
        if whole and operand_dim not in dn.scattered_dims_to_operand_dims:
            operand_dims[operand_dim] = update_dims[update_dim] = nest.loop(inputs[0][operand_dim])
    operands = [operand_dims] * n + [indices_dims] + [update_dims] * n
    return nest.space(operands, [operand_dims] * n, reducer=reducer if reduces else None,
                      flops=n * _elements(updates[0]))


@_rule("stablehlo.sort")
def sort(op: ir.Operation) -> IterationSpace:
    """Every dimension but the sort dimension is a loop shared by all operands and results."""
    shapes = _shapes(op.operands)
    rank = len(shapes[0])
    dimension = _int(op, "dimension") % rank
    nest = _LoopNest()
    dims = _loops_over(nest, shapes[0], {dimension})
    flops = len(shapes) * _elements(shapes[0]) * max(1, math.ceil(math.log2(max(2, shapes[0][dimension]))))
    return nest.space([dims] * len(shapes), [dims] * len(shapes), flops=flops)


@_rule("chlo.top_k")
def top_k(op: ir.Operation) -> IterationSpace:
    """``lax.top_k`` along the last dimension. Its leading dimensions are independent,
    but XLA all-gathers the operand and replicates top-k for every sharding of them, so
    no loops."""
    (operand,) = _shapes(op.operands)
    return _LoopNest().whole([operand], _shapes(op.results), flops=_elements(operand))


@_rule("stablehlo.rng", "stablehlo.rng_bit_generator")
def random_numbers(op: ir.Operation) -> IterationSpace:
    """No loops: the random numbers must not depend on the sharding.

    XLA partitions a sharded ``rng`` into per-shard draws of the shard's shape, so the
    numbers change with the sharding (``lax.rng_uniform`` with a sharded result on 8
    CPU devices differs from the replicated one). ``rng_bit_generator`` keeps its
    numbers, but its one state advances over the whole tensor, so no loop split cuts
    its work: replicating it and slicing the result (a free resharding) is as good.
    """
    return _LoopNest().whole(_shapes(op.operands), _shapes(op.results))


@_rule("stablehlo.batch_norm_inference", "stablehlo.batch_norm_training", "stablehlo.batch_norm_grad")
def batch_norm(op: ir.Operation) -> IterationSpace:
    """No loops, though the math has some.

    ``batch_norm_inference`` is elementwise given the statistics, and every feature of
    ``batch_norm_training``/``batch_norm_grad`` is independent (their batch and spatial
    dimensions cannot split as loops: the statistics reduce over them and the
    normalized output needs those statistics, an all-reduce in the middle of the op).
    But XLA all-gathers every operand of all three ops and replicates them for any
    sharding, the feature split included, so a split would only add communication.
    JAX never emits these ops (it lowers ``flax`` batch norm to reduces and elementwise ops).
    """
    flops = 8 * _elements(_shapes(op.operands)[0])
    return _LoopNest().whole(_shapes(op.operands), _shapes(op.results), flops=flops)


def _matrix_batch(nest: _LoopNest, shape: Sequence[int]) -> Dims:
    """Loops over the leading batch dimensions of a batch of matrices."""
    return _loops_over(nest, shape, {len(shape) - 2, len(shape) - 1})


@_rule("stablehlo.cholesky")
def cholesky(op: ir.Operation) -> IterationSpace:
    """A batch of independent factorizations: batch dimensions are loops, each matrix stays whole."""
    (a,) = _shapes(op.operands)
    nest = _LoopNest()
    dims = _matrix_batch(nest, a)
    return nest.space([dims], [dims], flops=_elements(a) * a[-1] / 3)


@_rule("stablehlo.triangular_solve")
def triangular_solve(op: ir.Operation) -> IterationSpace:
    """``op(a) x = b`` (or ``x op(a) = b``): batch dimensions are loops; each system
    stays whole. Its right-hand sides (columns of ``b``) are independent too, but XLA
    answers a split of them with all-to-alls to the batch dimension and back."""
    a, b = _shapes(op.operands)
    nest = _LoopNest()
    a_dims = _matrix_batch(nest, a)
    b_dims = a_dims[:-2] + [None, None]
    return nest.space([a_dims, b_dims], [b_dims], flops=_elements(b) * a[-1])


@_rule("stablehlo.fft")
def fft(op: ir.Operation) -> IterationSpace:
    """No loops: the leading batch dimensions are independent transforms, but XLA
    all-gathers the operand and replicates the FFT when they are split."""
    (operand,) = _shapes(op.operands)
    n = max(2, _elements(operand[len(operand) - len(_i64s(op, "fft_length", [])):]))
    return _LoopNest().whole([operand], _shapes(op.results), flops=5 * _elements(operand) * math.log2(n))


@_rule("stablehlo.map")
def map_op(op: ir.Operation) -> IterationSpace:
    """Elementwise application of a scalar computation: every dimension is a loop."""
    shapes = _shapes(op.operands)
    nest = _LoopNest()
    dims = _loops_over(nest, _shapes(op.results)[0], set())
    body_ops = max(1, len(list(op.regions[0].blocks[0].operations)) - 1)
    return nest.space([dims] * len(shapes), [dims], flops=body_ops * _elements(_shapes(op.results)[0]))
