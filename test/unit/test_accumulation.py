"""A micro-batched step's values add up where its loss sums over examples, and average where it is a mean.

:func:`alpa_mlir.accumulation.accumulation` compares the step traced on one micro-batch
with the step traced on the whole batch; the passes (``accumulate=sum``) and the runtime
(``alpa.accumulate``) then add the micro-batches' values up. End to end, a loss summed
over examples equals ``jax.jit``'s under ``PipeshardParallel`` and ``ShardParallel``
with micro-batches (it came out ``1/B`` of it before).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jax._src.lib.mlir import ir

import alpa_mlir
from alpa_mlir import AutoShardingError
from alpa_mlir.accumulation import accumulation, step_accumulation
from alpa_mlir.dialect.context import make_context
from alpa_mlir.dialect.mesh import DeviceMesh
from alpa_mlir.markers import lower_traced
from alpa_mlir.plans.step_reader import MeshSchedule, read_streams
from alpa_mlir.plans.step_reader import accumulation as stream_accumulation

WIDTH = 16


def _errors(h: jax.Array, y: jax.Array) -> jax.Array:
    return (h - y) ** 2


# Each loss and how its micro-batches combine into the whole batch's value.
LOSSES = {
    "sum": (lambda h, y, x: _errors(h, y).sum(), "sum"),
    "half sum": (lambda h, y, x: 0.5 * _errors(h, y).sum(), "sum"),
    "sum of means over features": (lambda h, y, x: _errors(h, y).mean(axis=1).sum(), "sum"),
    "sum over a constant": (lambda h, y, x: _errors(h, y).sum() / 512.0, "sum"),
    "sum, a mean computed and unused": (lambda h, y, x: (_errors(h, y).mean(), _errors(h, y).sum())[1], "sum"),
    "sum of per-example masked means": (lambda h, y, x: ((_errors(h, y) * (y > 0)).sum(axis=1)
                                                         / ((y > 0).sum(axis=1) + 1)).sum(), "sum"),
    "mean": (lambda h, y, x: _errors(h, y).mean(), "mean"),
    "mean over examples of sums": (lambda h, y, x: _errors(h, y).mean(axis=0).sum(), "mean"),
    "sum over the batch size": (lambda h, y, x: _errors(h, y).sum() / x.shape[0], "mean"),
    "sum of batch-centred values": (lambda h, y, x: _errors(h - h.mean(axis=0), y).sum(), "mean"),
    # A ratio of sums over the batch: added up it would be about B times the batch's; averaged,
    # about the batch's (exactly where every micro-batch has as many unmasked elements).
    "masked mean": (lambda h, y, x: (_errors(h, y) * (y > 0)).sum() / (y > 0).sum(), "mean"),
    "sum over the batch's largest error": (lambda h, y, x: _errors(h, y).sum() / _errors(h, y).max(), "mean"),
    "control flow on the batch size": (lambda h, y, x: _errors(jnp.tanh(h) if x.shape[0] > 4 else h, y).sum(),
                                       "mean"),
}


def _step(loss: Callable):
    def step(w, x, y):
        def objective(w):
            return loss(jnp.tanh(x @ w[0]) @ w[1], y, x)

        value, grads = alpa_mlir.value_and_grad(objective)(w)
        return [p - 0.01 * g for p, g in zip(w, grads)], value
    return step


def _arguments(batch: int):
    keys = jax.random.split(jax.random.key(0), 4)
    w = [jax.random.normal(k, (WIDTH, WIDTH)) / 4 for k in keys[:2]]
    return w, jax.random.normal(keys[2], (batch, WIDTH)), jax.random.normal(keys[3], (batch, WIDTH))


@pytest.mark.parametrize("name", list(LOSSES))
def test_micro_batches_add_up_where_the_loss_sums_over_examples(name):
    loss, expected = LOSSES[name]
    jitted = jax.jit(_step(loss))
    micro, whole = (lower_traced(jitted.trace(*_arguments(batch))) for batch in (4, 8))
    assert accumulation(micro, whole, batch_args=(2, 3)) == expected


def test_a_step_that_refuses_the_whole_batch_averages():
    def step(w, x, y):
        if x.shape[0] != 4:
            raise ValueError("this step takes 4 examples")
        return _step(LOSSES["sum"][0])(w, x, y)

    jitted = jax.jit(step)
    w, x, y = _arguments(8)
    micro = lower_traced(jitted.trace(w, x[:4], y[:4]))
    assert step_accumulation(jitted, micro, (w, x, y), {}, (2, 3)) == "mean"
    assert step_accumulation(jax.jit(_step(LOSSES["sum"][0])), micro, (w, x, y), {}, (2, 3)) == "sum"


def test_a_per_example_output_is_refused_not_averaged():
    def step(w, x, y):
        new, loss = _step(LOSSES["mean"][0])(w, x, y)
        return new, loss, jnp.tanh(x @ w[0])

    jitted = jax.jit(step)
    w, x, y = _arguments(8)
    micro = lower_traced(jitted.trace(w, x[:4], y[:4]))
    with pytest.raises(AutoShardingError, match=r"step: output\[2\] has shape \[4, 16\] on a micro-batch and "
                                                r"\[8, 16\] on the whole batch: .* num_micro_batches=1"):
        step_accumulation(jitted, micro, (w, x, y), {}, (2, 3), "step")


@pytest.mark.parametrize("gradient, expected", [(jax.grad, "mean"), (alpa_mlir.grad, "sum")])
def test_clipping_by_the_global_norm_counts_only_where_the_gradients_are_not_marked(gradient, expected):
    optimizer = optax.chain(optax.clip_by_global_norm(1.0), optax.sgd(0.1))

    def step(w, state, x, y):
        grads = gradient(lambda w: _errors(jnp.tanh(x @ w[0]) @ w[1], y).sum())(w)
        updates, state = optimizer.update(grads, state, w)
        return optax.apply_updates(w, updates), state

    w, x, y = _arguments(8)
    state = optimizer.init(w)
    leaves = len(jax.tree.leaves((w, state)))
    jitted = jax.jit(step)
    micro, whole = (lower_traced(jitted.trace(w, state, x[:size], y[:size])) for size in (4, 8))
    assert accumulation(micro, whole, batch_args=(leaves, leaves + 1)) == expected


def test_schedules_that_combine_micro_batches_differently_are_refused():
    def schedule(stage: int, accumulate: str) -> MeshSchedule:
        return MeshSchedule(stage, DeviceMesh((1, 1), device_ids=(stage,)), "1f1b", 2, (), accumulate)

    assert stream_accumulation({}) == "mean"
    assert stream_accumulation({0: schedule(0, "sum"), 1: schedule(1, "sum")}) == "sum"
    with pytest.raises(ValueError, match="combine micro-batches differently"):
        stream_accumulation({0: schedule(0, "sum"), 1: schedule(1, "mean")})


@pytest.mark.parametrize("written, read", [("", "mean"), ('alpa.accumulate = "sum", ', "sum"),
                                           ('alpa.accumulate = "mean", ', "mean"), ('alpa.accumulate = "max", ', None)])
def test_a_schedule_says_how_it_combines_micro_batches(written, read):
    text = (f'func.func private @mesh0_schedule() attributes {{{written}alpa.mesh = {{device_ids = array<i64: 0>, '
            'shape = array<i64: 1, 1>}, alpa.num_micro_batches = 2 : i64, alpa.schedule = "1f1b", '
            'alpa.stage = 0 : i64} {\n  return\n}')
    module = ir.Module.parse(text, context=make_context())
    if read is None:
        with pytest.raises(ValueError, match=r"@?mesh0_schedule.*alpa.accumulate must be one of 'mean', 'sum'; got"):
            read_streams(module.operation)
    else:
        assert read_streams(module.operation)[0].accumulate == read


@pytest.mark.parametrize("method", [
    alpa_mlir.PipeshardParallel(num_micro_batches=2, layer_option=alpa_mlir.AutoLayerOption(layer_num=2),
                                stage_option=alpa_mlir.UniformStageOption(num_stages=2), device_profile=""),
    alpa_mlir.ShardParallel(mesh_shape=(2, 4), num_micro_batches=2),
], ids=["PipeshardParallel", "ShardParallel"])
@pytest.mark.parametrize("name", ["sum", "mean"])
def test_micro_batches_give_the_whole_batch_loss_and_gradients(method, name):
    step = _step(LOSSES[name][0])
    args = _arguments(16)
    (params, loss), (expected_params, expected_loss) = \
        alpa_mlir.parallelize(step, method=method, batch_argnums=(1, 2))(*args), jax.jit(step)(*args)
    np.testing.assert_allclose(float(loss), float(expected_loss), rtol=1e-5)
    for p, e in zip(params, expected_params):
        np.testing.assert_allclose(np.asarray(p), np.asarray(e), rtol=1e-5, atol=1e-6)
