"""Loop nests of the nn ops (``passes/intra_op/rules/nn_ops.py``) on what JAX emits.

Sec. 4.1 derives an op's parallel algorithms from its loop nest; these tests pin the
loop nests of convolutions (both layouts, strided, dilated, grouped, depthwise, and
their gradients), pooling and its gradient, gathers and scatters (embedding lookup and
its gradient, ``take``, ``take_along_axis``), sort/argsort/top_k, and the ops JAX does
not emit (batch norm, cholesky, triangular solve, map), built by hand.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax._src.lib.mlir import ir

from alpa_mlir.dialect.context import make_context, walk
from alpa_mlir.passes import run_pipeline
from alpa_mlir.passes.intra_op.rules import has_rule, iteration_space, shape_of
from alpa_mlir.passes.intra_op.strategy import IterationSpace

N = None
NHWC = ("NHWC", "HWIO", "NHWC")
NCHW = ("NCHW", "OIHW", "NCHW")


def _module(text: str) -> ir.Module:
    module = ir.Module.parse(text, context=make_context())
    run_pipeline(module, "builtin.module(inline, symbol-dce)")
    return module


def spaces(text: str, op_name: str) -> dict[tuple[int, ...], IterationSpace | None]:
    """Loop nests of the ``op_name`` ops of ``text``, keyed by their first result's shape."""
    module = _module(text)
    found = {}
    for op in walk(module.operation):
        if op.name == op_name:
            found[shape_of(op.results[-1] if op_name == "stablehlo.rng_bit_generator" else op.results[0])] = \
                iteration_space(op)
    assert found, f"no {op_name} in\n{text}"
    return found


def lowered(f, *args) -> str:
    return jax.jit(f).lower(*args).as_text()


def only(text: str, op_name: str) -> IterationSpace | None:
    (space,) = spaces(text, op_name).values()
    return space


def grads(f, *args) -> str:
    """The module of ``f``'s value and gradient with respect to every float argument."""
    argnums = tuple(i for i, a in enumerate(args) if jnp.issubdtype(a.dtype, jnp.inexact))
    return lowered(jax.value_and_grad(lambda *a: f(*a).sum(), argnums=argnums), *args)


def conv(dims, groups: int = 1, strides=(1, 1), padding="SAME", rhs_dilation=(1, 1)):
    return lambda x, w: lax.conv_general_dilated(x, w, strides, padding, rhs_dilation=rhs_dilation,
                                                 dimension_numbers=dims, feature_group_count=groups)


X = jnp.ones((2, 8, 8, 4))


# ---- convolution ---------------------------------------------------------------------

def test_conv_nhwc_has_batch_feature_and_contracted_loops():
    space = only(lowered(conv(NHWC), X, jnp.ones((3, 3, 4, 6))), "stablehlo.convolution")
    assert space == IterationSpace((2, 6, 4), ((0, N, N, 2), (N, N, 2, 1)), ((0, N, N, 1),),
                                   reducer="sum", heavy=True, flops=2 * (2 * 8 * 8 * 6) * 9 * 4)
    assert space.reduction_loops == (2,)


def test_conv_nchw_strided_dilated_keeps_spatial_dims_whole():
    space = only(lowered(conv(NCHW, strides=(2, 2), padding="VALID", rhs_dilation=(2, 2)),
                         jnp.ones((2, 4, 8, 8)), jnp.ones((6, 4, 3, 3))), "stablehlo.convolution")
    assert space == IterationSpace((2, 6, 4), ((0, 2, N, N), (1, 2, N, N)), ((0, 1, N, N),),
                                   reducer="sum", heavy=True, flops=2 * (2 * 6 * 2 * 2) * 9 * 4)


def test_conv_nhwc_gradients():
    found = spaces(grads(conv(NHWC), X, jnp.ones((3, 3, 4, 6))), "stablehlo.convolution")
    # Weight gradient: [f, 0, 1, b] x [i, 0, 1, o] -> [0, 1, b, f]; the image batch is contracted.
    assert found[(3, 3, 4, 6)] == IterationSpace((4, 6, 2), ((2, N, N, 0), (2, N, N, 1)), ((N, N, 0, 1),),
                                                 reducer="sum", heavy=True, flops=2 * (3 * 3 * 4 * 6) * 64 * 2)
    # Data gradient: [b, 0, 1, f] x [0, 1, o, i] -> [b, 0, 1, f].
    assert found[(2, 8, 8, 4)] == IterationSpace((2, 4, 6), ((0, N, N, 2), (N, N, 1, 2)), ((0, N, N, 1),),
                                                 reducer="sum", heavy=True, flops=2 * (2 * 8 * 8 * 4) * 9 * 6)


def test_conv_nchw_gradients():
    found = spaces(grads(conv(NCHW, strides=(2, 2), padding="VALID"), jnp.ones((2, 4, 8, 8)),
                         jnp.ones((6, 4, 3, 3))), "stablehlo.convolution")
    assert found[(6, 4, 3, 3)].operands == ((2, 0, N, N), (2, 1, N, N))  # [f, b, 0, 1] x [i, o, 0, 1]
    assert found[(6, 4, 3, 3)].results == ((1, 0, N, N),)
    assert found[(2, 4, 8, 8)].operands == ((0, 2, N, N), (2, 1, N, N))  # [b, f, 0, 1] x [i, o, 0, 1]
    assert found[(2, 4, 8, 8)].results == ((0, 1, N, N),)


def test_depthwise_conv_ties_lhs_feature_and_output_feature():
    space = only(lowered(conv(NHWC, groups=4), X, jnp.ones((3, 3, 1, 8))), "stablehlo.convolution")
    assert space == IterationSpace((2, 4), ((0, N, N, 1), (N, N, N, 1)), ((0, N, N, 1),),
                                   heavy=True, flops=2 * (2 * 8 * 8 * 8) * 9 * 1)
    assert space.reduction_loops == ()


@pytest.mark.parametrize("window,strides,padding,loops", [
    ((1, 1), (1, 1), "SAME", (2,)),  # 1x1: XLA reads it as a dot
    ((8, 8), (1, 1), "VALID", (2,)),  # the whole image: a dot contracting H and W
    ((8, 1), (3, 1), "VALID", (2,)),  # both at once (one window: any stride)
    ((1, 1), (1, 1), ((1, 0), (0, 0)), (2, 4)),  # padded: a convolution
    ((1, 1), (2, 1), "VALID", (2, 4)),  # strided: a convolution
    ((2, 1), (1, 1), "VALID", (2, 4)),  # a true window: a convolution
])
def test_dot_like_grouped_conv_keeps_its_groups_whole(window, strides, padding, loops):
    # XLA's partitioner aborts on a split of the groups of a grouped conv it reads as a
    # dot (random programs, seeds 11023 and 11274); a true convolution partitions.
    space = only(lowered(conv(NHWC, groups=4, strides=strides, padding=padding), X, jnp.ones(window + (1, 8))),
                 "stablehlo.convolution")
    assert space.loop_sizes == loops
    assert space.operands[0][0] == space.results[0][0] == 0
    if loops == (2,):
        assert space.operands == ((0, N, N, N), (N, N, N, N)) and space.results == ((0, N, N, N),)


def test_depthwise_conv_gradients():
    found = spaces(grads(conv(NHWC, groups=4), X, jnp.ones((3, 3, 1, 8))), "stablehlo.convolution")
    # Weight gradient: batch_group_count = 4 groups the image channels (the lhs batch
    # dimension) with the kernel output features; the image batch is contracted.
    assert found[(3, 3, 1, 8)] == IterationSpace((4, 2), ((1, N, N, 0), (1, N, N, 0)), ((N, N, N, 0),),
                                                 reducer="sum", heavy=True, flops=2 * (3 * 3 * 8) * 64 * 2)
    # Data gradient: a grouped conv with 2 input features per group (the channel
    # multiplier), which XLA only replicates: no loops.
    assert found[(2, 8, 8, 4)] == IterationSpace((), ((N, N, N, N), (N, N, N, N)), ((N, N, N, N),),
                                                 heavy=True, flops=2 * (2 * 8 * 8 * 4) * 9 * 2)


def test_grouped_conv_weight_gradient_group_loop_has_the_group_count_as_extent():
    found = spaces(grads(conv(NHWC, groups=2), X, jnp.ones((3, 3, 2, 6))), "stablehlo.convolution")
    assert found[(2, 8, 8, 6)].loop_sizes == ()  # 2 input features per group: XLA replicates it
    assert found[(3, 3, 2, 6)].loop_sizes == (2, 2)  # batch_group_count = 2, contracted image batch 2
    assert found[(3, 3, 2, 6)].operands == ((1, N, N, 0), (1, N, N, 0))
    assert found[(3, 3, 2, 6)].results == ((N, N, N, 0),)


def _split(array: np.ndarray, dims: tuple[int | None, ...], loop: int, ways: int, part: int) -> np.ndarray:
    for d, indexing in enumerate(dims):
        if indexing == loop:
            array = np.split(array, ways, axis=d)[part]
    return array


@pytest.mark.parametrize("groups,kind", [(4, "feature"), (4, "batch"), (6, "feature"), (6, "batch")])
def test_group_loop_splits_compute_the_same_convolution(groups: int, kind: str):
    # Splitting the group loop k ways must leave k convs with groups/k groups each
    # whose results, concatenated, are the whole conv: groups stay whole.
    rng = np.random.default_rng(0)

    def op(x, w, g):
        key = "feature_group_count" if kind == "feature" else "batch_group_count"
        return lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=NHWC, **{key: g})

    if kind == "feature":
        x, w = rng.normal(size=(2, 5, 5, groups)), rng.normal(size=(3, 3, 1, 3 * groups))
    else:
        x, w = rng.normal(size=(2 * groups, 5, 5, 3)), rng.normal(size=(3, 3, 3, 2 * groups))
    x, w = x.astype(np.float32), w.astype(np.float32)
    space = only(lowered(lambda a, b: op(a, b, groups), x, w), "stablehlo.convolution")
    group = space.operands[1][3]
    assert space.loop_sizes[group] == groups
    full = np.asarray(op(x, w, groups))
    for ways in (d for d in (2, 3) if groups % d == 0):
        for part in range(ways):
            shard = op(_split(x, space.operands[0], group, ways, part), _split(w, space.operands[1], group, ways, part),
                       groups // ways)
            np.testing.assert_allclose(shard, _split(full, space.results[0], group, ways, part), rtol=1e-5, atol=1e-5)


# ---- pooling -------------------------------------------------------------------------

def max_pool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def avg_pool(x):
    return lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME") / 9


def test_max_pool_and_its_gradient():
    text = grads(max_pool, X)
    assert only(text, "stablehlo.reduce_window") == IterationSpace(
        (2, 4), ((0, N, N, 1), ()), ((0, N, N, 1),), flops=4 * (2 * 4 * 4 * 4))
    assert only(text, "stablehlo.select_and_scatter") == IterationSpace(
        (2, 4), ((0, N, N, 1), (0, N, N, 1), ()), ((0, N, N, 1),), flops=2 * 4 * (2 * 4 * 4 * 4))


def test_avg_pool_gradient_is_a_padded_reduce_window():
    for space in spaces(grads(avg_pool, X), "stablehlo.reduce_window").values():
        assert space.operands[0] == (0, N, N, 1) and space.results == ((0, N, N, 1),)


@pytest.mark.parametrize("window,strides,padding,expected", [
    ((1, 1), (1, 2), "VALID", (0, N)),              # a stride alone reshapes a dimension
    ((1, 1), (1, 1), ((1, 0), (0, 0)), (N, 0)),     # so does padding
    ((2, 1), (1, 1), "VALID", (N, 0)),
])
def test_reduce_window_windowed_dims_stay_whole(window, strides, padding, expected):
    text = lowered(lambda x: lax.reduce_window(x, 0.0, lax.add, window, strides, padding), jnp.ones((4, 6)))
    assert only(text, "stablehlo.reduce_window").operands[0] == expected


def test_multi_operand_reduce_window_shares_loops():
    def fn(x):
        return lax.reduce_window((x, x), (0.0, 0.0), lambda a, b: (a[0] + b[0], jnp.maximum(a[1], b[1])),
                                 (1, 2), (1, 1), "VALID")

    space = only(lowered(fn, jnp.ones((4, 6))), "stablehlo.reduce_window")
    assert space == IterationSpace((4,), ((0, N), (0, N), (), ()), ((0, N), (0, N)), flops=2 * 2 * 4 * 5)


# ---- gather and scatter ---------------------------------------------------------------

TABLE, IDS = jnp.ones((100, 16)), jnp.ones((4, 7), jnp.int32)


@pytest.mark.parametrize("lookup", [lambda t, i: t[i], lambda t, i: jnp.take(t, i, axis=0)])
def test_embedding_lookup(lookup):
    space = only(lowered(lookup, TABLE, IDS), "stablehlo.gather")
    assert space == IterationSpace((4, 7, 16), ((N, 2), (0, 1, N)), ((0, 1, 2),))


def test_take_along_the_minor_axis_keeps_the_major_operand_dim():
    space = only(lowered(lambda t, i: jnp.take(t, i, axis=1), TABLE, IDS), "stablehlo.gather")
    assert space == IterationSpace((4, 7, 100), ((2, N), (0, 1, N)), ((2, 0, 1),))


def test_take_along_axis_ties_operand_batching_dim():
    text = grads(lambda a, i: jnp.take_along_axis(a, i, axis=1), jnp.ones((4, 10)), jnp.ones((4, 3), jnp.int32))
    assert only(text, "stablehlo.gather") == IterationSpace((4, 3), ((0, N), (0, 1, N)), ((0, 1),))
    scatter = only(text, "stablehlo.scatter")
    assert scatter == IterationSpace((4, 3), ((0, N), (0, 1, N), (0, 1)), ((0, N),), reducer="sum", flops=12)
    assert scatter.reduction_loops == (1,)


def test_partial_slice_of_gather_stays_whole():
    space = only(lowered(lambda t, i: t[i, 2:10], TABLE, IDS[0]), "stablehlo.gather")
    assert space == IterationSpace((7,), ((N, N), (0, N)), ((0, N),))


def test_embedding_gradient_is_a_sum_scatter_with_one_reduction_loop():
    # The second index dimension stays whole: split with the first over other mesh
    # axes, XLA would all-reduce once per axis (test_nn_fidelity.py).
    space = only(grads(lambda t, i: t[i], TABLE, IDS), "stablehlo.scatter")
    assert space == IterationSpace((4, 16), ((N, 1), (0, N, N), (0, N, 1)), ((N, 1),),
                                   reducer="sum", flops=4 * 7 * 16)
    assert space.reduction_loops == (0,)


@pytest.mark.parametrize("update", [lambda r, g: r.set(g), lambda r, g: r.max(g)])
def test_non_sum_scatter_keeps_update_batch_dims_whole(update):
    text = lowered(lambda t, i, g: update(t.at[i], g), TABLE, IDS, jnp.ones((4, 7, 16)))
    space = only(text, "stablehlo.scatter")
    assert space == IterationSpace((16,), ((N, 0), (N, N, N), (N, N, 0)), ((N, 0),), flops=4 * 7 * 16)


# ---- sort, top_k, random numbers, fft -------------------------------------------------

A = jnp.ones((4, 10))


def test_sort_and_argsort():
    assert only(lowered(lambda a: jnp.sort(a, axis=1), A), "stablehlo.sort") == IterationSpace(
        (4,), ((0, N),), ((0, N),), flops=40 * 4)
    assert only(lowered(lambda a: jnp.sort(a, axis=0), A), "stablehlo.sort").operands == ((N, 0),)
    argsort = only(lowered(lambda a: jnp.argsort(a, axis=1), A), "stablehlo.sort")
    assert argsort.operands == ((0, N), (0, N)) and argsort.results == ((0, N), (0, N))


def test_top_k_and_its_gradient():
    text = grads(lambda a: lax.top_k(a, 3)[0], A)
    assert only(text, "chlo.top_k") == IterationSpace((), ((N, N),), ((N, N), (N, N)), flops=40)
    assert only(text, "stablehlo.scatter").reducer == "sum"


def test_random_number_ops_stay_replicated():
    # A rule with no loops (replicated, no warning), not a missing rule.
    assert only(lowered(lambda: lax.rng_uniform(0.0, 1.0, (4, 4))), "stablehlo.rng") == \
        IterationSpace((), ((), (), (None,)), ((None, None),))
    key = jax.random.key(0, impl="rbg")
    space = only(lowered(lambda k: jax.random.bits(k, (4, 4)), key), "stablehlo.rng_bit_generator")
    assert space is not None and space.loop_sizes == () and space.results[-1] == (None, None)


def test_fft_has_no_loops():
    # Its batch dimensions are independent, but XLA replicates a batch-split FFT.
    rfft = only(lowered(jnp.fft.rfft2, jnp.ones((3, 8, 8))), "stablehlo.fft")
    assert rfft.loop_sizes == () and rfft.operands == ((N, N, N),) and rfft.results == ((N, N, N),)
    space = only(lowered(jnp.fft.fft, jnp.ones((3, 8), jnp.complex64)), "stablehlo.fft")
    assert space == IterationSpace((), ((N, N),), ((N, N),), flops=5 * 24 * 3)


# ---- ops JAX does not emit: built by hand ---------------------------------------------

HAND_BUILT = """
func.func @main(%x: tensor<8x16x4x4xf32>, %s: tensor<16xf32>, %o: tensor<16xf32>, %a: tensor<3x4x4xf32>,
                %b: tensor<3x4x2xf32>, %c: tensor<3x2x4xf32>, %p: tensor<4x6xf32>) {
  %t:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>)
    -> (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>)
  %i = "stablehlo.batch_norm_inference"(%x, %s, %o, %t#1, %t#2) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16x4x4xf32>
  %g:3 = "stablehlo.batch_norm_grad"(%x, %s, %t#1, %t#2, %i) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<8x16x4x4xf32>)
    -> (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>)
  %l = stablehlo.cholesky %a, lower = true : tensor<3x4x4xf32>
  %left = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false,
    transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<3x4x4xf32>, tensor<3x4x2xf32>) -> tensor<3x4x2xf32>
  %right = "stablehlo.triangular_solve"(%a, %c) {left_side = false, lower = true, unit_diagonal = false,
    transpose_a = #stablehlo<transpose TRANSPOSE>} : (tensor<3x4x4xf32>, tensor<3x2x4xf32>) -> tensor<3x2x4xf32>
  %m = "stablehlo.map"(%p, %p) ({
  ^bb0(%u: tensor<f32>, %v: tensor<f32>):
    %uv = stablehlo.multiply %u, %v : tensor<f32>
    %w = stablehlo.add %uv, %u : tensor<f32>
    stablehlo.return %w : tensor<f32>
  }) {dimensions = array<i64: 0, 1>} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  return
}
"""


def hand_built(op_name: str) -> list[IterationSpace | None]:
    module = ir.Module.parse(HAND_BUILT, context=make_context())
    return [iteration_space(op) for op in walk(module.operation) if op.name == op_name]


def test_batch_norm_ops_have_no_loops():
    # XLA replicates all three for any sharding, the feature split included.
    whole = ((N, N, N, N), (N,), (N,))
    (training,) = hand_built("stablehlo.batch_norm_training")
    assert training == IterationSpace((), whole, whole, flops=8 * 8 * 16 * 4 * 4)
    (grad,) = hand_built("stablehlo.batch_norm_grad")
    assert grad.loop_sizes == () and grad.operands == whole + ((N,), (N, N, N, N)) and grad.results == whole
    (inference,) = hand_built("stablehlo.batch_norm_inference")
    assert inference.loop_sizes == () and inference.operands == whole + ((N,), (N,))


def test_linear_algebra_batch_dims_only():
    (chol,) = hand_built("stablehlo.cholesky")
    assert chol.loop_sizes == (3,) and chol.operands == chol.results == ((0, N, N),)
    left, right = hand_built("stablehlo.triangular_solve")
    assert left == IterationSpace((3,), ((0, N, N), (0, N, N)), ((0, N, N),), flops=3 * 4 * 2 * 4)
    assert right.operands == ((0, N, N), (0, N, N)) and right.results == ((0, N, N),)


def test_map_is_elementwise():
    (space,) = hand_built("stablehlo.map")
    assert space == IterationSpace((4, 6), ((0, 1), (0, 1)), ((0, 1),), flops=2 * 24)


# ---- coverage: every op of these JAX programs has a rule -------------------------------

PROGRAMS = {
    "conv_nhwc": lambda: grads(conv(NHWC, strides=(2, 2), rhs_dilation=(2, 2)), X, jnp.ones((3, 3, 4, 6))),
    "conv_nchw": lambda: grads(conv(NCHW), jnp.ones((2, 4, 8, 8)), jnp.ones((6, 4, 3, 3))),
    "depthwise": lambda: grads(conv(NHWC, groups=4), X, jnp.ones((3, 3, 1, 8))),
    "max_pool": lambda: grads(max_pool, X),
    "avg_pool": lambda: grads(avg_pool, X),
    "embedding": lambda: grads(lambda t, i: t[i], TABLE, IDS),
    "take_along_axis": lambda: grads(lambda a, i: jnp.take_along_axis(a, i, axis=1), A, IDS[:, :3]),
    "one_hot": lambda: lowered(lambda i: jax.nn.one_hot(i, 10), IDS),
    "argsort": lambda: lowered(lambda a: jnp.argsort(a, axis=1), A),
    "top_k": lambda: grads(lambda a: lax.top_k(a, 3)[0], A),
}


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_every_op_jax_emits_has_a_rule(program: str):
    module = _module(PROGRAMS[program]())
    names = {op.name for op in walk(module.operation)
             if op.parent is not None and op.parent.name == "func.func" and not op.name.startswith("func.")}
    assert names and [n for n in sorted(names) if not has_rule(n)] == []


def test_dynamic_shapes_get_no_loop_nest():
    text = """
func.func @main(%a: tensor<?x10xf32>) -> tensor<?x10xf32> {
  %0 = "stablehlo.sort"(%a) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %less = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %less : tensor<i1>
  }) : (tensor<?x10xf32>) -> tensor<?x10xf32>
  return %0 : tensor<?x10xf32>
}
"""
    module = ir.Module.parse(text, context=make_context())
    (op,) = [op for op in walk(module.operation) if op.name == "stablehlo.sort"]
    assert has_rule("stablehlo.sort") and iteration_space(op) is None
