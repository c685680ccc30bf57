"""PipeshardParallel(pipeline_schedule="inference"): a forward-only step pipelined over submeshes.

Layer construction takes every op as a forward op (``forward-only``), stage construction
outlines forward parts only and holds one micro-batch in flight per stage (Eq. 5), and the
inference schedule runs the micro-batches through the stages; per-example outputs come back
whole, the others combined as under training. Compared with ``jax.jit`` of the same function.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from transformers import FlaxGPT2LMHeadModel, GPT2Config

from alpa_mlir import AutoShardingError, parallelize
from alpa_mlir.pipeshard import AutoLayerOption, ManualLayerOption, ManualStageOption, PipeshardParallel

TOLERANCE = {"rtol": 2e-5, "atol": 2e-5}
TWO_MESHES = ManualStageOption((1, 1), ((1, 4), (1, 4)))


def mlp(params, x):
    for w in params:
        x = jnp.tanh(x @ w)
    return x, jnp.mean(x * x)


def mlp_args():
    params = [jax.random.normal(jax.random.key(i), (64, 64)) * 0.2 for i in range(4)]
    return params, jax.random.normal(jax.random.key(9), (16, 64))


def test_a_forward_step_pipelines_and_joins_its_per_example_outputs():
    # The stage DP picks the stages (AutoStageOption); four micro-batches of 4 rows each.
    method = PipeshardParallel(num_micro_batches=4, pipeline_schedule="inference",
                               layer_option=AutoLayerOption(layer_num=2))
    step = parallelize(mlp, method=method)
    args = mlp_args()
    out, mean = step(*args)
    ref_out, ref_mean = jax.jit(mlp)(*args)
    assert out.shape == (16, 64)  # the whole batch, not one micro-batch's rows or their mean
    np.testing.assert_allclose(np.asarray(out), np.asarray(ref_out), **TOLERANCE)
    np.testing.assert_allclose(float(mean), float(ref_mean), **TOLERANCE)
    plan = step.get_plan(*args)
    assert plan.schedule == "inference"
    assert all(s.activation_bytes == 0 for s in plan.stages)  # nothing is kept for a backward pass
    assert "latency: forward of one micro-batch" in str(plan)
    text = step.get_module_text(*args)
    assert "_forward" in text and "_backward" not in text and "_apply" not in text


def test_a_hugging_face_model_runs_forward_only_on_two_meshes():
    # Code nobody here wrote: transformers' Flax GPT-2 from a config (no download); its
    # logits are per-example, its next-token loss the mean over the batch.
    model = FlaxGPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=64, n_positions=16), seed=0)
    ids = jax.random.randint(jax.random.key(0), (8, 16), 0, 64)

    def forward(params, ids):
        logits = model(ids, params=params, train=False).logits
        loss = optax.softmax_cross_entropy_with_integer_labels(logits[:, :-1], ids[:, 1:]).mean()
        return logits, loss

    method = PipeshardParallel(num_micro_batches=2, pipeline_schedule="inference",
                               layer_option=AutoLayerOption(layer_num=2), stage_option=TWO_MESHES)
    step = parallelize(forward, method=method)
    logits, loss = step(model.params, ids)
    ref_logits, ref_loss = jax.jit(forward)(model.params, ids)
    assert logits.shape == (8, 16, 64)
    np.testing.assert_allclose(np.asarray(logits), np.asarray(ref_logits), **TOLERANCE)
    np.testing.assert_allclose(float(loss), float(ref_loss), **TOLERANCE)
    plan = step.get_plan(model.params, ids)
    assert len(plan.stages) == 2 and [s.devices for s in plan.stages] == [(0, 1, 2, 3), (4, 5, 6, 7)]


def test_a_training_step_under_the_inference_schedule_is_refused():
    def train(params, x):
        grads = jax.grad(lambda p: mlp(p, x)[1])(params)
        return [w - 0.1 * g for w, g in zip(params, grads)]

    method = PipeshardParallel(num_micro_batches=2, pipeline_schedule="inference",
                               layer_option=AutoLayerOption(layer_num=2), stage_option=TWO_MESHES)
    with pytest.raises(AutoShardingError, match="'forward-only' is for a step without gradients.*1f1b, gpipe"):
        parallelize(train, method=method)(*mlp_args())


def test_recomputing_layers_has_no_backward_pass_to_do_it_in():
    with pytest.raises(ValueError, match="remat_layer.*'inference'"):
        PipeshardParallel(pipeline_schedule="inference", layer_option=ManualLayerOption(remat_layer=True))
