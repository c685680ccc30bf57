"""The tensor-op rules write JAX's StableHLO as the loop nests of Sec. 4.1 / Table 3."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src.lib.mlir import ir

from alpa_mlir.dialect import make_context
from alpa_mlir.passes import run_pipeline
from alpa_mlir.passes.intra_op.rules import has_rule, iteration_space
from alpa_mlir.passes.intra_op.rules.tensor_ops import reshape_groups
from alpa_mlir.passes.intra_op.strategy import IterationSpace


class _Ops(list):
    """Ops of a module, holding the module (ops die with it)."""

    module: ir.Module


def _main_ops(fn, *args) -> _Ops:
    """The ops in ``main`` of JAX's StableHLO for ``fn`` (calls inlined)."""
    module = ir.Module.parse(jax.jit(fn).lower(*args).as_text(), context=make_context())
    run_pipeline(module, "builtin.module(inline, symbol-dce)")
    main = next(op for op in module.body.operations if op.operation.attributes["sym_name"].value == "main")
    ops = _Ops(op.operation for op in main.regions[0].blocks[0].operations)
    ops.module = module
    return ops


def _spaces(fn, *args, name: str) -> list[IterationSpace | None]:
    return [iteration_space(op) for op in _main_ops(fn, *args) if op.name == name]


def _only(fn, *args, name: str) -> IterationSpace:
    (space,) = _spaces(fn, *args, name=name)
    assert space is not None
    return space


def _parse_op(text: str) -> IterationSpace | None:
    """The loop nest of the first op of a one-function module given as MLIR text."""
    module = ir.Module.parse(text, context=make_context())
    return iteration_space(next(iter(module.body.operations[0].regions[0].blocks[0].operations)).operation)


F32 = jnp.float32


def test_matmul_is_i_j_k_with_sum_reduction():
    space = _only(jnp.matmul, jnp.ones((4, 6), F32), jnp.ones((6, 8), F32), name="stablehlo.dot_general")
    assert space == IterationSpace((4, 8, 6), ((0, 2), (2, 1)), ((0, 1),), reducer="sum", heavy=True,
                                   flops=2 * 4 * 8 * 6)
    assert space.reduction_loops == (2,)


def test_batched_einsum_is_table3_b_i_j_k():
    fn = lambda a, b: jnp.einsum("bik,bkj->bij", a, b)  # noqa: E731
    space = _only(fn, jnp.ones((2, 3, 5), F32), jnp.ones((2, 5, 7), F32), name="stablehlo.dot_general")
    assert space.loop_sizes == (2, 3, 7, 5)
    assert space.operands == ((0, 1, 3), (0, 3, 2))
    assert space.results == ((0, 1, 2),)
    assert (space.reducer, space.heavy, space.flops) == ("sum", True, 2 * 2 * 3 * 7 * 5)


def test_einsum_with_transposed_operands():
    # rhs is (j, b, k): the rule follows the dimension numbers, not positions.
    fn = lambda a, b: jnp.einsum("bik,jbk->bij", a, b)  # noqa: E731
    space = _only(fn, jnp.ones((2, 3, 5), F32), jnp.ones((7, 2, 5), F32), name="stablehlo.dot_general")
    assert space.loop_sizes == (2, 3, 7, 5)
    assert space.operands == ((0, 1, 3), (2, 0, 3))


def test_outer_product_has_no_reduction():
    fn = lambda a, b: jax.lax.dot_general(a, b, (((), ()), ((), ())))  # noqa: E731
    space = _only(fn, jnp.ones((4,), F32), jnp.ones((6,), F32), name="stablehlo.dot_general")
    assert (space.loop_sizes, space.reducer, space.reduction_loops) == ((4, 6), None, ())


def test_split_heads_reshape_shares_hidden_and_heads():
    fn = lambda x: x.reshape(2, 16, 4, 8)  # noqa: E731  (B, S, H) -> (B, S, nh, hd)
    space = _only(fn, jnp.ones((2, 16, 32), F32), name="stablehlo.reshape")
    assert space == IterationSpace((2, 16, 4), ((0, 1, 2),), ((0, 1, 2, None),))


def test_merge_heads_reshape_shares_heads_and_hidden():
    fn = lambda x: x.reshape(2, 16, 32)  # noqa: E731
    space = _only(fn, jnp.ones((2, 16, 4, 8), F32), name="stablehlo.reshape")
    assert space == IterationSpace((2, 16, 4), ((0, 1, 2, None),), ((0, 1, 2),))


@pytest.mark.parametrize(("src", "dst", "groups"), [
    ((6, 4), (4, 6), [(0, 0)]),
    ((2, 1, 3), (6,), [(0, 0)]),
    ((1, 6, 5), (2, 3, 5, 1), [(1, 0), (2, 2)]),
    ((12,), (3, 4), [(0, 0)]),
])
def test_reshape_groups(src, dst, groups):
    assert reshape_groups(src, dst) == groups


def test_reshape_extent_is_gcd_of_major_dims():
    fn = lambda x: x.reshape(4, 6)  # noqa: E731
    space = _only(fn, jnp.ones((6, 4), F32), name="stablehlo.reshape")
    assert space == IterationSpace((2,), ((0, None),), ((0, None),))
    # gcd 1: nothing can be split.
    space = _only(lambda x: x.reshape(4, 3), jnp.ones((3, 4), F32), name="stablehlo.reshape")
    assert space == IterationSpace((), ((None, None),), ((None, None),))


def test_transpose_follows_permutation():
    space = _only(lambda x: jnp.transpose(x, (2, 0, 1)), jnp.ones((2, 3, 5), F32), name="stablehlo.transpose")
    # result dim i is operand dim perm[i]: result (5, 2, 3).
    assert space == IterationSpace((5, 2, 3), ((1, 2, 0),), ((0, 1, 2),))


def test_broadcast_in_dim_stretched_dim_has_no_loop():
    fn = lambda x: jnp.broadcast_to(x, (4, 3, 8))  # noqa: E731
    space = _only(fn, jnp.ones((3, 1), F32), name="stablehlo.broadcast_in_dim")
    assert space == IterationSpace((4, 3, 8), ((1, None),), ((0, 1, 2),))


def test_softmax():
    ops = _main_ops(jax.nn.softmax, jnp.ones((4, 8), F32))
    spaces = {op.name: [] for op in ops}
    for op in ops:
        spaces[op.name].append(iteration_space(op))
    assert [s.reducer for s in spaces["stablehlo.reduce"]] == ["max", "sum"]
    for space in spaces["stablehlo.reduce"]:
        assert space == IterationSpace((4, 8), ((0, 1), ()), ((0,),), reducer=space.reducer, flops=32)
        assert space.reduction_loops == (1,)
    (exp,) = spaces["stablehlo.exponential"]
    assert exp == IterationSpace((4, 8), ((0, 1),), ((0, 1),), flops=32)
    (div,) = spaces["stablehlo.divide"]
    assert div == IterationSpace((4, 8), ((0, 1), (0, 1)), ((0, 1),), flops=32)
    assert all(s is not None for name, group in spaces.items() if name != "func.return" for s in group)


def test_layer_norm():
    def layer_norm(x):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + 1e-5)

    ops = _main_ops(layer_norm, jnp.ones((2, 4, 8), F32))
    unknown = [op.name for op in ops if op.name != "func.return" and iteration_space(op) is None]
    assert unknown == []
    reduces = [iteration_space(op) for op in ops if op.name == "stablehlo.reduce"]
    assert [s.reducer for s in reduces] == ["sum", "sum"]
    assert all(s.results == ((0, 1),) and s.reduction_loops == (2,) for s in reduces)
    (rsqrt,) = [iteration_space(op) for op in ops if op.name == "stablehlo.rsqrt"]
    assert rsqrt == IterationSpace((2, 4, 1), ((0, 1, 2),), ((0, 1, 2),), flops=8)


@pytest.mark.parametrize(("fn", "reducer"), [(jnp.sum, "sum"), (jnp.max, "max"), (jnp.min, "min"),
                                             (jnp.prod, "mul"), (jnp.all, "and"), (jnp.any, "or")])
def test_reduce_reducers(fn, reducer):
    x = jnp.ones((4, 6), bool if reducer in ("and", "or") else F32)
    space = _only(lambda a: fn(a, axis=0), x, name="stablehlo.reduce")
    assert space == IterationSpace((4, 6), ((0, 1), ()), ((1,),), reducer=reducer, flops=24)


def test_argmax_reduced_dim_is_unsplittable():
    space = _only(lambda a: jnp.argmax(a, axis=1), jnp.ones((4, 8), F32), name="stablehlo.reduce")
    assert space == IterationSpace((4,), ((0, None), (0, None), (), ()), ((0,), (0,)), reducer=None, flops=64)
    assert space.reduction_loops == ()


def test_concatenate_dim_has_no_loop():
    fn = lambda a, b: jnp.concatenate([a, b], axis=1)  # noqa: E731
    space = _only(fn, jnp.ones((4, 3), F32), jnp.ones((4, 5), F32), name="stablehlo.concatenate")
    assert space == IterationSpace((4,), ((0, None), (0, None)), ((0, None),))


def test_slice_keeps_untouched_dims():
    space = _only(lambda a: a[:, 1:5], jnp.ones((4, 8), F32), name="stablehlo.slice")
    assert space == IterationSpace((4,), ((0, None),), ((0, None),))
    space = _only(lambda a: a[::2], jnp.ones((4, 8), F32), name="stablehlo.slice")
    assert space == IterationSpace((8,), ((None, 0),), ((None, 0),))


def test_pad_padded_dim_has_no_loop():
    space = _only(lambda a: jnp.pad(a, ((1, 2), (0, 0))), jnp.ones((4, 8), F32), name="stablehlo.pad")
    assert space == IterationSpace((8,), ((None, 0), ()), ((None, 0),))


def test_reverse_reversed_dim_has_no_loop():
    space = _only(lambda a: jnp.flip(a, 0), jnp.ones((4, 8), F32), name="stablehlo.reverse")
    assert space == IterationSpace((8,), ((None, 0),), ((None, 0),))


def test_dynamic_slice_and_update_slice():
    fn = lambda a, i: jax.lax.dynamic_slice(a, (i, 0), (2, 8))  # noqa: E731
    space = _only(fn, jnp.ones((4, 8), F32), 1, name="stablehlo.dynamic_slice")
    assert space == IterationSpace((8,), ((None, 0), (), ()), ((None, 0),))
    fn = lambda a, u: jax.lax.dynamic_update_slice(a, u, (1, 0))  # noqa: E731
    space = _only(fn, jnp.ones((4, 8), F32), jnp.ones((2, 8), F32), name="stablehlo.dynamic_update_slice")
    assert space == IterationSpace((8,), ((None, 0), (None, 0), (), ()), ((None, 0),))


def test_clamped_dynamic_slice_then_reshape_splits_only_after_the_slice():
    # Issue 11: reshape(dynamic_slice(a, (0, i), (3, 20)), (3, 2, 10)) with i = 19 came
    # out wrong on a mesh. The rules are right: the sliced dimension has no loop, so the
    # slice (clamped to start 4) is whole and only the reshape splits its (2, 10). The
    # values went wrong in XLA, which folds the partitioner's slice of the slice with the
    # wrong clamp; compile_module clamps the start explicitly (test_spmd_lowering).
    fn = lambda a, i: jnp.reshape(jax.lax.dynamic_slice(a, (0, i), (3, 20)), (3, 2, 10))  # noqa: E731
    args = jnp.ones((3, 24), F32), 19
    assert _only(fn, *args, name="stablehlo.dynamic_slice") == IterationSpace((3,), ((0, None), (), ()), ((0, None),))
    assert _only(fn, *args, name="stablehlo.reshape") == IterationSpace((3, 2), ((0, 1),), ((0, 1, None),))


def test_iota_and_constant_have_result_loops_only():
    space = _only(lambda: jax.lax.broadcasted_iota(jnp.int32, (4, 8), 1), name="stablehlo.iota")
    assert space == IterationSpace((4, 8), (), ((0, 1),))
    (constant,) = _spaces(lambda: jnp.asarray(np.arange(6.0).reshape(2, 3)), name="stablehlo.constant")
    assert constant == IterationSpace((2, 3), (), ((0, 1),))


def test_select_and_clamp_scalar_operands():
    space = _parse_op("""func.func @f(%p: tensor<i1>, %a: tensor<4x8xf32>, %lo: tensor<f32>) -> tensor<4x8xf32> {
      %0 = stablehlo.select %p, %a, %a : tensor<i1>, tensor<4x8xf32>
      return %0 : tensor<4x8xf32>
    }""")
    assert space == IterationSpace((4, 8), ((), (0, 1), (0, 1)), ((0, 1),), flops=32)
    space = _only(lambda a: jnp.clip(a, 0.0, 1.0), jnp.ones((4, 8), F32), name="stablehlo.minimum")
    assert space.operands == ((0, 1), (0, 1))
    space = _parse_op("""func.func @f(%a: tensor<4x8xf32>, %lo: tensor<f32>) -> tensor<4x8xf32> {
      %0 = stablehlo.clamp %lo, %a, %lo : (tensor<f32>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
      return %0 : tensor<4x8xf32>
    }""")
    assert space == IterationSpace((4, 8), ((), (0, 1), ()), ((0, 1),), flops=32)


def test_chlo_elementwise():
    def fn(a):
        return jax.lax.erf(a) + jax.lax.lgamma(a) + jax.lax.digamma(a) + jnp.square(a) + jax.lax.erf_inv(a)

    all_ops = _main_ops(fn, jnp.ones((4, 8), F32))
    ops = [op for op in all_ops if op.name.startswith("chlo.")]
    assert {op.name for op in ops} == {"chlo.erf", "chlo.lgamma", "chlo.digamma", "chlo.square", "chlo.erf_inv"}
    for op in ops:
        assert iteration_space(op) == IterationSpace((4, 8), ((0, 1),), ((0, 1),), flops=32)


def test_convert_compare_and_integer_ops():
    fn = lambda a: ((a > 0).astype(jnp.int32) << 1) ^ jax.lax.population_count(a.astype(jnp.int32))  # noqa: E731
    ops = _main_ops(fn, jnp.ones((3, 5), F32))
    names = {op.name for op in ops}
    assert {"stablehlo.compare", "stablehlo.convert", "stablehlo.shift_left", "stablehlo.xor",
            "stablehlo.popcnt"} <= names
    for op in ops:
        if op.name in ("stablehlo.compare", "stablehlo.xor", "stablehlo.popcnt"):
            assert iteration_space(op).loop_sizes == (3, 5)


def test_bitcast_convert_needs_same_width():
    space = _parse_op("""func.func @f(%a: tensor<4x8xf32>) -> tensor<4x8xi32> {
      %0 = stablehlo.bitcast_convert %a : (tensor<4x8xf32>) -> tensor<4x8xi32>
      return %0 : tensor<4x8xi32>
    }""")
    assert space == IterationSpace((4, 8), ((0, 1),), ((0, 1),), flops=32)
    space = _parse_op("""func.func @f(%a: tensor<4x8xf32>) -> tensor<4x8x2xi16> {
      %0 = stablehlo.bitcast_convert %a : (tensor<4x8xf32>) -> tensor<4x8x2xi16>
      return %0 : tensor<4x8x2xi16>
    }""")
    assert space is None


def test_sharding_custom_call_is_identity_others_have_no_rule():
    space = _parse_op("""func.func @f(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
      %0 = stablehlo.custom_call @Sharding(%a) {mhlo.sharding = "{replicated}"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
      return %0 : tensor<4x8xf32>
    }""")
    assert space == IterationSpace((4, 8), ((0, 1),), ((0, 1),))
    space = _parse_op("""func.func @f(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
      %0 = stablehlo.custom_call @my_kernel(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
      return %0 : tensor<4x8xf32>
    }""")
    assert space is None


def test_cumsum_is_not_a_core_op():
    # jnp.cumsum lowers to reduce_window on CPU, which is not a tensor-op rule.
    names = {op.name for op in _main_ops(lambda a: jnp.cumsum(a, axis=1), jnp.ones((4, 8), F32))}
    assert "stablehlo.reduce_window" in names


@pytest.mark.parametrize("name", ["stablehlo.add", "stablehlo.round_nearest_even", "stablehlo.reduce_precision",
                                  "stablehlo.count_leading_zeros", "chlo.next_after", "chlo.is_inf"])
def test_registered(name):
    assert has_rule(name)


def test_reduce_body_must_combine_both_arguments():
    space = _parse_op("""func.func @f(%a: tensor<4x8xf32>, %z: tensor<f32>) -> tensor<4xf32> {
      %0 = stablehlo.reduce(%a init: %z) across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
       reducer(%x: tensor<f32>, %y: tensor<f32>) {
        %1 = stablehlo.add %x, %x : tensor<f32>
        stablehlo.return %1 : tensor<f32>
      }
      return %0 : tensor<4xf32>
    }""")
    assert space == IterationSpace((4,), ((0, None), ()), ((0,),), reducer=None, flops=32)
