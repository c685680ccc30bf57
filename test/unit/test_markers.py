"""User boundaries: ``mark_pipeline_boundary`` and ``alpa_mlir.grad`` survive ``jax.jit``
(lowered by ``alpa_mlir.markers.lower``), ``jax.grad`` and ``jax.vmap`` as marker custom
calls, change no numbers, run as the identity under plain ``jax.jit``, and
``alpa-lower-pipeline-markers`` turns them into ``alpa.segment`` / ``alpa.apply_grad``."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src.interpreters import mlir as jax_mlir
from jax._src.lib import xla_client
from jax._src.lib.mlir import ir

import alpa_mlir
from alpa_mlir.dialect import make_context
from alpa_mlir.dialect.context import walk
from alpa_mlir.dialect.names import APPLY_GRAD_ATTR, SEGMENT_ATTR
from alpa_mlir.markers import lower
from alpa_mlir.passes import run_pipeline
from alpa_mlir.passes.imports.lower_pipeline_markers import is_marker

PIPELINE = "builtin.module(alpa-lower-pipeline-markers)"
MARKER = re.compile(r'stablehlo\.custom_call @alpa\.pipeline_marker\(([^)]*)\) '
                    r'\{alpa\.marker = "(\w+)", has_side_effect = true\}')


def mlp_loss(params: list[jax.Array], x: jax.Array, mark: bool = True) -> jax.Array:
    """Three layers, a boundary after each of the first two; layer k reads only params[k]."""
    boundary = alpa_mlir.mark_pipeline_boundary if mark else (lambda *v: v[0] if len(v) == 1 else v)
    h = jnp.tanh(x @ params[0])
    h = boundary(h)
    h = jnp.tanh(h @ params[1])
    h, x = boundary(h, x)  # several values cross in one marker; x carries no gradient
    return jnp.sum((h @ params[2]) ** 2) + jnp.sum(x)


def train_step(params: list[jax.Array], x: jax.Array, mark: bool = True) -> list[jax.Array]:
    grad = alpa_mlir.grad if mark else jax.grad
    grads = grad(mlp_loss)(params, x, mark)
    return [p - 0.1 * g for p, g in zip(params, grads)]


def inputs() -> tuple[list[jax.Array], jax.Array]:
    keys = jax.random.split(jax.random.key(0), 4)
    params = [jax.random.normal(k, (8, 8), jnp.float32) * 0.3 for k in keys[:3]]
    return params, jax.random.normal(keys[3], (4, 8), jnp.float32)


def markers(text: str) -> list[tuple[int, str]]:
    """(number of values, kind) of every marker in ``text``, in program order."""
    return [(len(operands.split(",")), kind) for operands, kind in MARKER.findall(text)]


def lowered_module(fn, *args) -> ir.Module:
    return ir.Module.parse(lower(jax.jit(fn), *args).as_text(), context=make_context())


def run_on_one_device(module: ir.Module, args: list[jax.Array]) -> list[jax.Array]:
    """Compile ``module`` with XLA for one CPU device and run it."""
    device = jax.devices()[0]
    executable = device.client.compile_and_load(jax_mlir.module_to_bytecode(module),
                                                xla_client.DeviceList((device,)), xla_client.CompileOptions())
    results = executable.execute_sharded([jax.device_put(a, device) for a in args])
    return [shards[0] for shards in results.disassemble_into_single_device_arrays()]


def main_block(module: ir.Module) -> ir.Block:
    (main,) = [op for op in walk(module.operation) if op.name == "func.func"]
    return main.regions[0].blocks[0]


def test_boundary_survives_jit_as_one_marker_per_call():
    text = lower(jax.jit(mlp_loss), *inputs()).as_text()
    assert markers(text) == [(1, "boundary"), (2, "boundary")]


def test_grad_gives_backward_boundaries_in_reverse_and_a_grad_marker():
    text = lower(jax.jit(train_step), *inputs()).as_text()
    # The second boundary's tangent covers h only (x is data, its tangent is zero); a
    # backward marker carries its cotangents and a link to its forward marker.
    assert markers(text) == [(1, "boundary"), (2, "boundary"), (2, "backward_boundary"),
                             (2, "backward_boundary"), (3, "grad")]


def test_vmap_marks_the_batched_values():
    params, x = inputs()
    text = lower(jax.jit(jax.vmap(mlp_loss, in_axes=(None, 0))), params, jnp.stack([x, x, x])).as_text()
    assert markers(text) == [(1, "boundary"), (2, "boundary")]
    assert "@alpa.pipeline_marker(%1) {alpa.marker = \"boundary\", has_side_effect = true} : " \
           "(tensor<3x4x8xf32>) -> tensor<3x4x8xf32>" in text


def test_jvp_puts_a_tangent_marker_beside_each_boundary():
    params, x = inputs()
    text = lower(jax.jit(lambda p, t: jax.jvp(lambda q: mlp_loss(q, x), (p,), (t,))), params, params).as_text()
    assert [kind for _, kind in markers(text)] == ["boundary", "tangent_boundary", "boundary", "tangent_boundary"]


def test_markers_change_no_numbers_outside_jit():
    params, x = inputs()
    np.testing.assert_array_equal(mlp_loss(params, x), mlp_loss(params, x, mark=False))
    for marked, plain in zip(train_step(params, x), train_step(params, x, mark=False)):
        np.testing.assert_array_equal(marked, plain)
    value, grads = alpa_mlir.value_and_grad(mlp_loss)(params, x)
    np.testing.assert_array_equal(value, mlp_loss(params, x, mark=False))
    for marked, plain in zip(grads, jax.grad(mlp_loss)(params, x, False)):
        np.testing.assert_array_equal(marked, plain)


def test_lowered_train_step_computes_the_same_after_the_pass():
    params, x = inputs()
    module = lowered_module(train_step, params, x)
    run_pipeline(module, PIPELINE)
    outputs = run_on_one_device(module, [*params, x])
    for actual, expected in zip(outputs, jax.jit(train_step, static_argnums=2)(params, x, False)):
        np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=1e-6, atol=1e-6)


def test_xla_cannot_compile_the_compilers_markers_so_the_pass_must_run_first():
    with pytest.raises(Exception, match="alpa.pipeline_marker"):
        lower(jax.jit(mlp_loss), *inputs()).compile()


def test_plain_jit_runs_marked_code_as_the_identity():
    # The same model code runs without the compiler: plain lowering drops the markers.
    params, x = inputs()
    assert "alpa.pipeline_marker" not in jax.jit(train_step).lower(params, x).as_text()
    for marked, plain in zip(jax.jit(train_step)(params, x), jax.jit(train_step, static_argnums=2)(params, x, False)):
        np.testing.assert_array_equal(np.asarray(marked), np.asarray(plain))
    loss = jax.jit(mlp_loss, static_argnums=2)
    np.testing.assert_array_equal(np.asarray(loss(params, x, True)), np.asarray(loss(params, x, False)))


def source(value: ir.Value) -> ir.Value:
    """``value``, or what it is an alias of through jax.checkpoint's optimization barriers."""
    owner = value.owner
    if not isinstance(owner, ir.Block) and owner.operation.name == "stablehlo.optimization_barrier":
        return source(owner.operation.operands[ir.OpResult(value).result_number])
    return value


def dot_segments(module: ir.Module, argument: int) -> list[int]:
    """The segments of the matmuls that read function argument ``argument``."""
    block = main_block(module)
    ops = [op.operation for op in block.operations]
    return [ir.IntegerAttr(op.attributes[SEGMENT_ATTR]).value for op in ops if op.name == "stablehlo.dot_general"
            and any(source(v) == block.arguments[argument] for v in op.operands)]


def test_pass_gives_a_layers_forward_and_backward_ops_its_segment():
    module = lowered_module(train_step, *inputs())
    run_pipeline(module, PIPELINE)
    block = main_block(module)
    body = [op.operation for op in block.operations if op.operation.name != "func.return"]
    assert not any(is_marker(op) for op in walk(module.operation))
    assert all(SEGMENT_ATTR in op.attributes for op in body)
    # Layer k's forward matmul and its backward matmul (the activation gradient) both
    # read params[k], function argument k; layer 0 has no activation gradient (x is
    # data), but its weight gradient reads x, argument 3, as its forward matmul does.
    assert [dot_segments(module, k) for k in range(4)] == [[0], [1, 1], [2, 2], [0, 0]]
    # The update reads the gradients: three multiplies by the learning rate, three subtracts.
    applied = [op.name for op in body if APPLY_GRAD_ATTR in op.attributes]
    assert sorted(applied) == ["stablehlo.multiply"] * 3 + ["stablehlo.subtract"] * 3


def chain_loss(params: list[jax.Array], x: jax.Array, layer) -> jax.Array:
    for w in params:
        x = layer(w, x)
    return jnp.sum(x)


def marked_layer(w: jax.Array, h: jax.Array) -> jax.Array:
    return alpa_mlir.mark_pipeline_boundary(jnp.tanh(jnp.sin(h) @ w))


@pytest.mark.parametrize("layer", [jax.checkpoint(marked_layer), jax.jit(marked_layer)], ids=["checkpoint", "jit"])
def test_recomputed_and_called_layers_keep_their_segments(layer):
    # jax.checkpoint recomputes each layer (and its boundary) inside the backward pass;
    # a jitted layer is one function called per layer, inlined first. The output of the
    # last boundary feeds only a sum, so only the link keeps its forward marker alive.
    params, x = inputs()
    module = lowered_module(alpa_mlir.grad(lambda p, x: chain_loss(p, x, layer)), params, x)
    run_pipeline(module, "builtin.module(inline, symbol-dce, alpa-lower-pipeline-markers)")
    assert [set(dot_segments(module, k)) for k in range(3)] == [{0}, {1}, {2}]
    plain = jax.jit(jax.grad(lambda p, x: chain_loss(p, x, lambda w, h: jnp.tanh(jnp.sin(h) @ w))))
    for actual, expected in zip(run_on_one_device(module, [*params, x]), plain(params, x)):
        np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=1e-6, atol=1e-6)


def test_micro_batches_number_their_boundaries_alike():
    params, x = inputs()

    def accumulated(p, x):
        return [a + b for a, b in zip(jax.grad(mlp_loss)(p, x[:2]), jax.grad(mlp_loss)(p, x[2:]))]

    module = lowered_module(accumulated, params, x)
    run_pipeline(module, PIPELINE)
    assert [sorted(dot_segments(module, k)) for k in range(3)] == [[0, 0], [1, 1, 1, 1], [2, 2, 2, 2]]


def test_grad_has_aux_and_int_arguments():
    params, x = inputs()

    def loss(p, n):
        return mlp_loss(p, x) * n, n + 1

    grads, aux = alpa_mlir.grad(loss, argnums=(0, 1), has_aux=True, allow_int=True)(params, 3)
    assert aux == 4 and grads[1].dtype == jax.dtypes.float0
    text = lower(jax.jit(alpa_mlir.grad(loss, argnums=(0, 1), has_aux=True, allow_int=True)), params, 3).as_text()
    assert markers(text)[-1] == (3, "grad")  # the float0 gradient of the int carries no value


def test_mark_pipeline_boundary_returns_its_arguments():
    a, b = jnp.ones(3), {"w": jnp.zeros(2), "n": 7}
    np.testing.assert_array_equal(alpa_mlir.mark_pipeline_boundary(a), a)
    marked = alpa_mlir.mark_pipeline_boundary(a, b)
    assert isinstance(marked, tuple) and marked[1]["n"] == 7
    with pytest.raises(TypeError, match="x = mark_pipeline_boundary"):
        alpa_mlir.mark_pipeline_boundary()


def test_module_without_markers_is_unchanged():
    module = lowered_module(lambda p, x: train_step(p, x, False), *inputs())
    before = str(module)
    run_pipeline(module, PIPELINE)
    assert str(module) == before


def test_failing_pass_changes_nothing():
    marker = ('stablehlo.custom_call @alpa.pipeline_marker({}) {{alpa.marker = "{}", has_side_effect = true}}'
              " : (tensor<4xf32>) -> tensor<4xf32>")
    text = f"""
    func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {{
      %0 = {marker.format("%arg0", "boundary")}
      %1 = {marker.format("%0", "layer")}
      return %1 : tensor<4xf32>
    }}"""
    module = ir.Module.parse(text, context=make_context())
    before = str(module)
    with pytest.raises(ir.MLIRError, match="malformed pipeline marker"):
        run_pipeline(module, PIPELINE)
    assert str(module) == before


def test_shard_parallel_runs_a_function_with_markers() -> None:
    # alpa-import-pipeline removes the markers, so XLA never sees them.
    def loss(w, x):
        h = alpa_mlir.mark_pipeline_boundary(jnp.tanh(x @ w))
        return jnp.sum(h @ w)

    w, x = jnp.ones((8, 8)) * 0.1, jnp.ones((4, 8))
    step = alpa_mlir.parallelize(alpa_mlir.grad(loss), method=alpa_mlir.ShardParallel(mesh_shape=(1, 4)))
    np.testing.assert_allclose(np.asarray(step(w, x)), np.asarray(jax.grad(loss)(w, x)), rtol=1e-6)
