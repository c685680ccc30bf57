"""The plan's predicted memory per device (``passes/intra_op/peak_memory.py``) against what
XLA allocates for the compiled plan (``memory_analysis``), on the 8 virtual CPU devices."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import pytest

import alpa_mlir
from alpa_mlir import models


def planned(fn, args: tuple, mesh: tuple[int, ...], batch_argnums: tuple[int, ...], donate_argnums=(),
            memory_budget: float | None = None):
    method = alpa_mlir.ShardParallel(mesh_shape=mesh, batch_argnums=batch_argnums, memory_budget=memory_budget)
    step = alpa_mlir.parallelize(fn, method=method, donate_argnums=donate_argnums)
    plan = step.get_plan(*args)
    return plan, step.get_executable(*args).compiled.executable.get_compiled_memory_stats()


def test_a_matmul_read_by_a_fused_chain_is_the_one_temporary() -> None:
    # x @ w (64 x 256 f32, split 8 ways: 8 KiB per device) is read by tanh, * 2 and the sum,
    # which XLA fuses into one reduction: the product is the only buffer besides the
    # arguments (x split by rows, w by columns) and the scalar result.
    def f(x, w):
        return jnp.sum(jnp.tanh(x @ w) * 2.0)

    args = (jax.ShapeDtypeStruct((64, 128), jnp.float32), jax.ShapeDtypeStruct((128, 256), jnp.float32))
    plan, xla = planned(f, args, (2, 4), batch_argnums=(0,))
    memory = plan.memory
    assert (memory.arguments, memory.outputs, memory.aliased) == (
        xla.argument_size_in_bytes, xla.output_size_in_bytes, xla.alias_size_in_bytes)
    assert memory.temporaries == 64 * 256 * 4 / 8
    assert memory.temporaries == pytest.approx(xla.temp_size_in_bytes, rel=0.01)


def test_a_transpose_only_matmuls_read_is_folded_into_them() -> None:
    # A tied head's x @ wte.T: XLA changes the dot's dimension numbers instead of
    # transposing wte, so the product is still the one temporary (the model kept a
    # transposed copy of the weight, live from the start, HF GPT-2 at 1.11x XLA).
    def f(x, w):
        return jnp.sum(jnp.tanh(x @ w.T) * 2.0)

    args = (jax.ShapeDtypeStruct((64, 128), jnp.float32), jax.ShapeDtypeStruct((256, 128), jnp.float32))
    plan, xla = planned(f, args, (2, 4), batch_argnums=(0,))
    assert plan.memory.temporaries == pytest.approx(xla.temp_size_in_bytes, rel=0.01)


@pytest.mark.parametrize("mesh", [(2, 4), (8,)])
@pytest.mark.parametrize("donate", [True, False])
def test_gpt_step_memory_is_xla_s_within_ten_percent(mesh: tuple[int, ...], donate: bool) -> None:
    # Two GPT layers, hidden 256, the GPT-3 vocabulary (the logits and their gradient are
    # the peak), Adam; with the parameters and optimizer state donated or not.
    config = dataclasses.replace(models.GPT3["350M"], hidden=256, heads=4, layers=2, seq_len=128)
    model = models.build(config)
    plan, xla = planned(model.train_step, model.abstract_args(8), mesh, batch_argnums=(2,),
                        donate_argnums=(0, 1) if donate else ())
    memory = plan.memory
    # Arguments, outputs and donated buffers are exact: the plan's shardings are XLA's.
    assert (memory.arguments, memory.outputs, memory.aliased) == (
        xla.argument_size_in_bytes, xla.output_size_in_bytes, xla.alias_size_in_bytes)
    assert (memory.aliased > 0) == donate
    total = xla.argument_size_in_bytes + xla.output_size_in_bytes - xla.alias_size_in_bytes + xla.temp_size_in_bytes
    assert plan.peak_memory == pytest.approx(total, rel=0.10)


def test_a_data_parallel_gpt_step_keeps_no_replicated_broadcast_its_readers_slice() -> None:
    # DataParallel leaves the layer norms' scale broadcasts and the cross-entropy's zeros
    # replicated (nothing prices their memory), and every reader reads them batch-split:
    # XLA broadcasts each reader's tile instead, so no 8 MiB (64 x 128 x 256) or 32 MiB
    # (the logits' shape) buffer exists. Counted whole, the prediction was 1.65x XLA's.
    config = dataclasses.replace(models.GPT3["350M"], hidden=256, heads=4, layers=2, seq_len=128, vocab=1024)
    model = models.build(config)
    args = model.abstract_args(64)
    step = alpa_mlir.parallelize(model.train_step, method=alpa_mlir.DataParallel(batch_argnums=(2,)),
                                 donate_argnums=(0, 1))
    plan = step.get_plan(*args)
    xla = step.get_executable(*args).compiled.executable.get_compiled_memory_stats()
    assert plan.peak_memory == pytest.approx(xla_total(xla), rel=0.10)


def test_the_memory_rows_hold_the_outputs_table_of_addresses() -> None:
    # Two results: XLA's output tuple holds 2 addresses of 8 bytes, which peak_memory
    # counts; the ILP's rows hold them too, so that a plan within the rows is within the
    # budget as peak_memory predicts it (a 1.2 KB excess on a GPT step's 158 results sent
    # memory_rows.within to a second MILP of 5 s).
    from jax._src.lib.mlir import ir

    from alpa_mlir.dialect.context import make_context
    from alpa_mlir.dialect.mesh import DeviceMesh
    from alpa_mlir.passes.intra_op.cost_graph import Graph
    from alpa_mlir.passes.intra_op.ilp_graph import memory_loads
    from alpa_mlir.passes.intra_op.memory_rows import memory_rows
    from alpa_mlir.passes.intra_op.peak_memory import peak_memory
    from alpa_mlir.passes.intra_op.strategies import StrategyOptions

    with make_context():
        module = ir.Module.parse("""
func.func @main(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = stablehlo.add %x, %y : tensor<4x8xf32>
  %1 = stablehlo.multiply %x, %y : tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}""")
        graph = Graph(module.body.operations[0], DeviceMesh((4,)), StrategyOptions())
        rows = memory_rows(graph, set())
        assert rows.fixed == 2 * 8
        replicated = tuple(next(k for k, strategy in enumerate(node.strategies)
                                if not any(any(spec.dims) for spec in strategy.results if spec is not None))
                           for node in graph.nodes)
        loads = memory_loads(graph.cost_graph(rows.live_sets, rows.edge_memory), replicated)
        assert loads.max() + rows.fixed == peak_memory(graph, replicated, set()).total == 4 * 128 + 16


def test_a_scanned_gpt_step_is_xla_s_with_its_loop_buffers_updated_in_place() -> None:
    # Four layers in a lax.scan: the forward loop writes each layer's residuals into one
    # stack, the backward loop each layer's gradients; XLA updates both in the loop's own
    # buffers (predicted as new stacks, the temporaries were 1.22x XLA's: 205.1 MiB
    # against 168.1 on (2, 4)).
    config = dataclasses.replace(models.GPT3["350M"], hidden=512, heads=8, layers=4, seq_len=512, vocab=512,
                                 scan_layers=True)
    model = models.build(config)
    plan, xla = planned(model.train_step, model.abstract_args(8), (2, 4), batch_argnums=(2,))
    assert plan.memory.temporaries == pytest.approx(xla.temp_size_in_bytes, rel=0.10)
    assert plan.peak_memory == pytest.approx(xla_total(xla), rel=0.10)


def xla_total(stats) -> int:
    return (stats.argument_size_in_bytes + stats.output_size_in_bytes - stats.alias_size_in_bytes
            + stats.temp_size_in_bytes)


@pytest.mark.parametrize("mesh", [(8,), (2, 4)])
def test_a_gpt_step_within_a_budget_is_within_it_as_xla_allocates(mesh: tuple[int, ...]) -> None:
    # 20% below the plan without a budget: the ILP's memory rows (the same model, with
    # resharded copies) keep the plan's peak within it, and so does XLA (1% model error).
    # (The prediction is not within 10% here: 172.8 MB against XLA's 134.5 on (8,).)
    config = dataclasses.replace(models.GPT3["350M"], hidden=256, heads=4, layers=2, seq_len=128)
    model = models.build(config)
    args = model.abstract_args(8)
    free, _ = planned(model.train_step, args, mesh, batch_argnums=(2,), donate_argnums=(0, 1))
    budget = 0.8 * free.peak_memory
    plan, xla = planned(model.train_step, args, mesh, batch_argnums=(2,), donate_argnums=(0, 1),
                        memory_budget=budget)
    assert plan.peak_memory <= budget
    assert xla_total(xla) <= 1.01 * budget


# ------------------------------------------------------------ the rules, on small programs

def lifetimes_of(text: str):
    """The model's lifetimes of the function ``text`` on 4 devices, and per op name the
    nodes of its ops in program order."""
    from jax._src.lib.mlir import ir

    from alpa_mlir.dialect.context import make_context
    from alpa_mlir.dialect.mesh import DeviceMesh
    from alpa_mlir.passes.intra_op.cost_graph import Graph
    from alpa_mlir.passes.intra_op.peak_memory import Lifetimes
    from alpa_mlir.passes.intra_op.strategies import StrategyOptions

    with make_context():
        module = ir.Module.parse(text)
        graph = Graph(module.body.operations[0], DeviceMesh((4,)), StrategyOptions())
        nodes: dict[str, list[int]] = {}
        for i, node in enumerate(graph.nodes):
            if node.op is not None:
                nodes.setdefault(node.op.name.removeprefix("stablehlo."), []).append(i)
        return nodes, Lifetimes(graph)


BROADCASTS = """
func.func @main(%s: tensor<8xf32>, %t: tensor<8xf32>, %x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>,
                                                                            tensor<4x8xf32>) {
  %0 = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %1 = stablehlo.multiply %x, %0 : tensor<4x8xf32>
  %2 = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %3 = stablehlo.add %1, %2 : tensor<4x8xf32>
  %4 = stablehlo.broadcast_in_dim %t, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %5 = stablehlo.divide %x, %4 : tensor<4x8xf32>
  %6 = stablehlo.broadcast_in_dim %t, dims = [1] {alpa.layer = 1 : i64} : (tensor<8xf32>) -> tensor<4x8xf32>
  %7 = stablehlo.divide %x, %6 : tensor<4x8xf32>
  %8 = stablehlo.divide %5, %6 : tensor<4x8xf32>
  return %3, %7, %8 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
"""


def test_equal_ops_are_one_value_as_after_xla_s_cse() -> None:
    nodes, life = lifetimes_of(BROADCASTS)
    first, second, other, again = nodes["broadcast_in_dim"]
    # The same operand and attributes: one value, read by both readers (the plan's own
    # alpa.* attributes do not tell two ops apart); another operand: another value.
    assert life.same[second] == first and life.same[again] == other and life.same[other] == other
    assert not life.made[second] and not life.made[again]
    # A broadcast of a vector read by two ops is materialised; one only divided by is
    # not (XLA multiplies by the broadcast reciprocal, fused into each reader).
    assert life.made[first] and not life.fused[first]
    assert life.fused[other] and not life.made[other]


def test_a_broadcast_scalar_is_fused_into_every_reader() -> None:
    nodes, life = lifetimes_of("""
func.func @main(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c = stablehlo.constant dense<2.0> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
  %1 = stablehlo.multiply %x, %0 : tensor<4x8xf32>
  %2 = stablehlo.add %x, %0 : tensor<4x8xf32>
  return %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>
}
""")
    broadcast, = nodes["broadcast_in_dim"]
    assert life.fused[broadcast] and not life.made[broadcast]


def test_output_buffers_hold_temporaries_before_their_values_are_computed() -> None:
    from alpa_mlir.passes.intra_op.peak_memory import _outside_output_buffers

    # Two outputs of 100 and 40 bytes, free until points 9 and 5.
    windows = [[100.0, 0, 9], [40.0, 0, 5]]
    buffers = [[0, 3, 40.0], [2, 6, 60.0], [4, 8, 30.0], [1, 2, 200.0], [6, 7, 10.0]]
    rest = _outside_output_buffers(buffers, windows)
    # Largest first: 200 fits nowhere; 60 takes the 100-byte buffer (2-6); 40 the 40-byte
    # one (0-3); 30 overlaps both (4-8: the 100's is busy to 6, the 40's ends at 5); 10
    # (6-7) overlaps the 60 in the 100's and ends past the 40's window.
    assert sorted(map(tuple, rest)) == [(1, 2, 200.0), (4, 8, 30.0), (6, 7, 10.0)]



def test_a_conv_net_step_is_xla_s_with_its_convolutions_canonical_copies() -> None:
    # Two 3x3 convolutions (NHWC, HWIO) and an SGD step on 8 devices: the backward pass's
    # convolutions (kernel gradient: batch as the contracted feature) are not in XLA:CPU's
    # canonical layout, which copies their input, kernel and output into it. Without those
    # copies the model said 0.60x XLA's temporaries.
    def loss(params, x):
        dims = ("NHWC", "HWIO", "NHWC")
        y = jax.nn.relu(jax.lax.conv_general_dilated(x, params[0], (1, 1), "SAME", dimension_numbers=dims))
        y = jax.lax.conv_general_dilated(y, params[1], (1, 1), "SAME", dimension_numbers=dims)
        return jnp.mean(y ** 2)

    def step(params, x):
        grads = jax.grad(loss)(params, x)
        return [p - 0.1 * g for p, g in zip(params, grads)]

    args = ([jax.ShapeDtypeStruct((3, 3, 3, 32), jnp.float32), jax.ShapeDtypeStruct((3, 3, 32, 32), jnp.float32)],
            jax.ShapeDtypeStruct((64, 32, 32, 3), jnp.float32))
    plan, xla = planned(step, args, (8,), batch_argnums=(1,))
    assert plan.memory.at == "stablehlo.convolution"
    assert plan.memory.temporaries == pytest.approx(xla.temp_size_in_bytes, rel=0.05)
    assert plan.peak_memory == pytest.approx(xla_total(xla), rel=0.05)
