"""alpa-layer-construction on lowered training steps: forward layers, colocated backward, apply."""

from __future__ import annotations

from collections import Counter

import jax
import jax.numpy as jnp
import pytest
from jax._src.lib.mlir import ir

import alpa_mlir
from alpa_mlir import models
from alpa_mlir.dialect import make_context
from alpa_mlir.dialect.names import LAYER_ATTR, PHASE_ATTR
from alpa_mlir.markers import lower
from alpa_mlir.passes import run_pipeline
from alpa_mlir.passes.inter_op.training_step import step_ops


def layered(fn, args, options: str) -> list[tuple[str, int, str]]:
    """(phase, layer, op name) of every top-level op of @main after the pass."""
    text = lower(jax.jit(fn), *args).as_text(debug_info=True)
    module = ir.Module.parse(text, context=make_context())
    run_pipeline(module, f"builtin.module(alpa-import-pipeline, alpa-layer-construction{{{options}}})")
    main = next(f for f in module.body.operations if ir.StringAttr(f.attributes["sym_name"]).value == "main")
    return [(ir.StringAttr(op.attributes[PHASE_ATTR]).value, ir.IntegerAttr(op.attributes[LAYER_ATTR]).value,
             op.name) for op in step_ops(main)]


def matmul_layers(rows: list[tuple[str, int, str]], phase: str) -> list[int]:
    return [layer for p, layer, name in rows if p == phase and name == "stablehlo.dot_general"]


def test_mlp_of_equal_layers_cuts_between_its_matmuls() -> None:
    model = models.mlp(models.MLPConfig(sizes=(64, 64, 64, 64, 64)))
    rows = layered(model.train_step, model.init(jax.random.key(0), 8), "layers=4")
    assert matmul_layers(rows, "forward") == [0, 1, 2, 3]
    # Backward runs the layers in reverse; each matmul's two gradients (input and weight)
    # sit in its layer, but the first layer's input gets none.
    assert matmul_layers(rows, "backward") == [3, 3, 2, 2, 1, 1, 0]
    forward = [layer for phase, layer, _ in rows if phase == "forward"]
    assert forward == sorted(forward)  # layers are contiguous in program order
    # Each layer's weight and bias updates are in the layer (SGD: multiply + subtract each).
    assert Counter(layer for phase, layer, name in rows if phase == "apply" and name == "stablehlo.subtract") == \
        {0: 2, 1: 2, 2: 2, 3: 2}


def test_user_boundaries_are_the_layers() -> None:
    def loss(params, x):
        for w in params:
            x = alpa_mlir.mark_pipeline_boundary(jnp.tanh(x @ w))
        return jnp.sum(x)

    def step(params, x):
        value, grads = alpa_mlir.value_and_grad(loss)(params, x)
        return [w - 0.1 * g for w, g in zip(params, grads)], value

    params = [jnp.ones((16, 16)) * 0.1 for _ in range(3)]
    rows = layered(step, (params, jnp.ones((4, 16))), "")
    assert matmul_layers(rows, "forward") == [0, 1, 2]
    assert sorted(matmul_layers(rows, "backward")) == [0, 1, 1, 2, 2]


def test_gpt_blocks_keep_forward_and_backward_together() -> None:
    config = models.GPTConfig(vocab=64, hidden=32, layers=2, heads=2, seq_len=8)
    model = models.gpt(config)
    rows = layered(model.train_step, model.init(jax.random.key(0), 4), "layers=2")
    forward, backward = matmul_layers(rows, "forward"), matmul_layers(rows, "backward")
    assert forward == sorted(forward) and set(forward) == {0, 1}
    # Colocation: both layers have forward and backward matmuls, in reverse order.
    assert set(backward) == {0, 1} and backward == sorted(backward, reverse=True)
    assert Counter(backward)[0] >= Counter(forward)[0] and Counter(backward)[1] >= Counter(forward)[1]


def test_layers_must_fit_the_forward_ops() -> None:
    with pytest.raises(ir.MLIRError, match="option 'layers' is 500 but the forward pass has"):
        model = models.mlp(models.MLPConfig(sizes=(8, 8)))
        layered(model.train_step, model.init(jax.random.key(0), 4), "layers=500")


def test_a_scan_too_heavy_for_any_layer_is_named() -> None:
    # lax.scan's while is one op holding every block's FLOPs: no cut can split it.
    model = models.gpt(models.GPTConfig(vocab=64, hidden=32, layers=2, heads=2, seq_len=8, scan_layers=True))
    with pytest.raises(ir.MLIRError, match=r"this op alone holds \d+% of the forward FLOPs \(a lax.scan is one op"):
        layered(model.train_step, model.init(jax.random.key(0), 8), "layers=2")
