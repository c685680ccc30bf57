"""compile_module on Shardy (JAX's default partitioner) and on GSPMD (on request).

A planned module carries an ``mhlo.sharding`` on every value. For Shardy it is exported
to ``sdy`` form with every op's sharding pinned by a sharding constraint, since XLA's
Shardy import drops ``sdy.sharding`` on ordinary ops: the partitioned program must be
the one GSPMD makes of the plan, and what the plan predicts.
"""

from __future__ import annotations

import collections

import jax
import pytest
from test_alpa_shard_parallel import mlp_args, mlp_step

from alpa_mlir import ShardParallel, parallelize
from alpa_mlir.dialect.mesh import DeviceMesh
from alpa_mlir.lowering.hlo_collectives import parse_collectives
from alpa_mlir.lowering.spmd import compile_module

GSPMD_WARNING = "GSPMD sharding propagation is going to be deprecated"
MESH_8 = DeviceMesh((8,))

# The plan gathers x before a replicated matmul; Shardy's propagation alone would split
# the matmul by x's rows and gather its (smaller) result instead.
DOT = """module @m attributes {mhlo.num_partitions = 8 : i32} {
  func.func public @main(%x: tensor<16x64xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"},
                         %w: tensor<64x8xf32> {mhlo.sharding = "{replicated}"})
      -> (tensor<16x8xf32> {mhlo.sharding = "{replicated}"}) {
    %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] {mhlo.sharding = "{replicated}"}
        : (tensor<16x64xf32>, tensor<64x8xf32>) -> tensor<16x8xf32>
    return %0 : tensor<16x8xf32>
  }
}"""

# A loop-carried value split by rows: gathered inside the loop for one use (the
# constraint), summed as it is for another (a partial sum, then an all-reduce).
LOOP = """module @m attributes {mhlo.num_partitions = 8 : i32} {
  func.func public @main(%x: tensor<16x8xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"})
      -> (tensor<8xf32> {mhlo.sharding = "{replicated}"}) {
    %c0 = stablehlo.constant {mhlo.sharding = "{replicated}"} dense<0> : tensor<i32>
    %c1 = stablehlo.constant {mhlo.sharding = "{replicated}"} dense<1> : tensor<i32>
    %c4 = stablehlo.constant {mhlo.sharding = "{replicated}"} dense<4> : tensor<i32>
    %zeros = stablehlo.constant {mhlo.sharding = "{replicated}"} dense<0.0> : tensor<8xf32>
    %zero = stablehlo.constant {mhlo.sharding = "{replicated}"} dense<0.0> : tensor<f32>
    %r:3 = stablehlo.while(%i = %c0, %v = %x, %acc = %zeros) : tensor<i32>, tensor<16x8xf32>, tensor<8xf32>
      attributes {mhlo.sharding = "{{replicated}, {devices=[8,1]<=[8]}, {replicated}}"}
    cond {
      %p = stablehlo.compare LT, %i, %c4 {mhlo.sharding = "{replicated}"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %g = stablehlo.custom_call @Sharding(%v) {backend_config = "", mhlo.sharding = "{replicated}"}
          : (tensor<16x8xf32>) -> tensor<16x8xf32>
      %s = stablehlo.reduce(%v init: %zero) applies stablehlo.add across dimensions = [0]
          {mhlo.sharding = "{replicated}"} : (tensor<16x8xf32>, tensor<f32>) -> tensor<8xf32>
      %m = stablehlo.reduce(%g init: %zero) applies stablehlo.maximum across dimensions = [0]
          {mhlo.sharding = "{replicated}"} : (tensor<16x8xf32>, tensor<f32>) -> tensor<8xf32>
      %a = stablehlo.add %acc, %s {mhlo.sharding = "{replicated}"} : tensor<8xf32>
      %b = stablehlo.add %a, %m {mhlo.sharding = "{replicated}"} : tensor<8xf32>
      %j = stablehlo.add %i, %c1 {mhlo.sharding = "{replicated}"} : tensor<i32>
      %w = stablehlo.add %v, %v {mhlo.sharding = "{devices=[8,1]<=[8]}"} : tensor<16x8xf32>
      stablehlo.return %j, %w, %b : tensor<i32>, tensor<16x8xf32>, tensor<8xf32>
    }
    return %r#2 : tensor<8xf32>
  }
}"""


def emitted(text: str, mesh: DeviceMesh, partitioner: str) -> list[tuple]:
    return sorted((c.kind, c.shape, c.bytes) for c in compile_module(text, mesh, partitioner=partitioner).collectives())


def by_class(collectives) -> dict:
    found: collections.Counter = collections.Counter()
    for c in collectives:
        found[(c.kind, tuple(c.mesh_axes or ()))] += c.bytes
    return dict(found)


def test_shardy_compiles_without_the_gspmd_deprecation_warning(capfd) -> None:
    compile_module(DOT, MESH_8)
    assert GSPMD_WARNING not in capfd.readouterr().err
    compile_module(DOT, MESH_8, partitioner="gspmd")
    assert GSPMD_WARNING in capfd.readouterr().err


def test_jax_use_shardy_partitioner_off_means_gspmd(capfd) -> None:
    previous = jax.config.jax_use_shardy_partitioner
    jax.config.update("jax_use_shardy_partitioner", False)
    try:
        compile_module(DOT, MESH_8)
    finally:
        jax.config.update("jax_use_shardy_partitioner", previous)
    assert GSPMD_WARNING in capfd.readouterr().err


def test_an_unknown_partitioner_is_an_error() -> None:
    with pytest.raises(ValueError, match="partitioner must be 'shardy' or 'gspmd'"):
        compile_module(DOT, MESH_8, partitioner="auto")


@pytest.mark.parametrize("text", [DOT, LOOP], ids=["op-sharding", "loop-carried"])
def test_shardy_partitions_the_plan_as_gspmd_does(text: str) -> None:
    # DOT: the matmul keeps its replicated sharding (x is gathered, 16x64 floats). LOOP:
    # the loop-carried value keeps the loop's sharding, so the in-loop gather does not
    # become its sharding and the sum of it is an all-reduce.
    expected = {DOT: [("all-gather", (16, 64), 16 * 64 * 4)],
                LOOP: [("all-gather", (16, 8), 16 * 8 * 4), ("all-reduce", (8,), 8 * 4)]}[text]
    assert emitted(text, MESH_8, "gspmd") == expected
    assert emitted(text, MESH_8, "shardy") == expected


@pytest.mark.parametrize("name, layers, batch, width, mesh_shape",
                         [("megatron", 2, 32, 256, (1, 4)), ("data-parallel", 2, 256, 32, (4, 1))])
def test_predicted_bytes_are_emitted_bytes_on_shardy(name, layers, batch, width, mesh_shape) -> None:
    args = mlp_args(layers, batch, width)
    step = parallelize(mlp_step, method=ShardParallel(mesh_shape=mesh_shape, devices=jax.devices()[:4]),
                       batch_argnums=(2,))
    plan = step.get_plan(*args)
    on_shardy = by_class(parse_collectives(step.get_hlo_text(*args), plan.mesh))
    assert on_shardy == by_class(plan.predicted_collectives())
    assert on_shardy == by_class(compile_module(step.get_module_text(*args), plan.mesh, partitioner="gspmd")
                                 .collectives())
    if name == "megatron":  # the hidden units split over the model axis: an all-reduce per matmul pair
        assert ("all-reduce", (1,)) in on_shardy
    else:
        assert set(on_shardy) == {("all-reduce", (0,))}
