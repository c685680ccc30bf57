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
from alpa_mlir.accumulation import MicroBatching, accumulation, micro_batching
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


def test_a_step_that_refuses_the_whole_batch_averages_and_joins_nothing():
    def step(w, x, y):
        if x.shape[0] != 4:
            raise ValueError("this step takes 4 examples")
        return _step(LOSSES["sum"][0])(w, x, y)

    jitted = jax.jit(step)
    w, x, y = _arguments(8)
    micro = lower_traced(jitted.trace(w, x[:4], y[:4]))
    assert micro_batching(jitted, micro, (w, x, y), {}, (2, 3), 2) == MicroBatching("mean")
    assert micro_batching(jax.jit(_step(LOSSES["sum"][0])), micro, (w, x, y), {}, (2, 3), 2) == MicroBatching("sum")


def test_per_example_outputs_are_joined_and_others_refused():
    def step(w, x, y):
        new, loss = _step(LOSSES["mean"][0])(w, x, y)
        h = jnp.tanh(x @ w[0])
        return new, loss, h, {"rows": h, "columns": h.T}

    jitted = jax.jit(step)
    w, x, y = _arguments(8)
    micro = lower_traced(jitted.trace(w, x[:4], y[:4]))
    with pytest.raises(AutoShardingError, match=r"step: output\[3\]\['columns'\] has shape \[16, 4\] on a "
                                                r"micro-batch and \[16, 8\] on the whole batch: .* batch-major"):
        micro_batching(jitted, micro, (w, x, y), {}, (2, 3), 2, function="step")
    rows = jax.jit(lambda *a: step(*a)[:3] + (step(*a)[3]["rows"],))
    micro = lower_traced(rows.trace(w, x[:4], y[:4]))
    assert micro_batching(rows, micro, (w, x, y), {}, (2, 3), 2) == MicroBatching("mean", (3, 4))


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


METHODS = pytest.mark.parametrize("method", [
    alpa_mlir.PipeshardParallel(num_micro_batches=2, layer_option=alpa_mlir.AutoLayerOption(layer_num=2),
                                stage_option=alpa_mlir.UniformStageOption(num_stages=2), device_profile=""),
    alpa_mlir.ShardParallel(mesh_shape=(2, 4), num_micro_batches=2),
], ids=["PipeshardParallel", "ShardParallel"])


@METHODS
@pytest.mark.parametrize("name", ["sum", "mean"])
def test_micro_batches_give_the_whole_batch_loss_and_gradients(method, name):
    step = _step(LOSSES[name][0])
    args = _arguments(16)
    (params, loss), (expected_params, expected_loss) = \
        alpa_mlir.parallelize(step, method=method, batch_argnums=(1, 2))(*args), jax.jit(step)(*args)
    np.testing.assert_allclose(float(loss), float(expected_loss), rtol=1e-5)
    for p, e in zip(params, expected_params):
        np.testing.assert_allclose(np.asarray(p), np.asarray(e), rtol=1e-5, atol=1e-6)


def _with_per_example_outputs(w, x, y):
    """A step that returns its per-example predictions (from the loss function) and its input too."""
    def objective(w):
        h = jnp.tanh(x @ w[0]) @ w[1]
        return _errors(h, y).mean(), h

    (loss, h), grads = alpa_mlir.value_and_grad(objective, has_aux=True)(w)
    return [p - 0.01 * g for p, g in zip(w, grads)], loss, h, x


@METHODS
def test_per_example_outputs_come_back_whole(method):
    args = _arguments(16)
    (params, loss, h, x), (expected_params, expected_loss, expected_h, expected_x) = \
        alpa_mlir.parallelize(_with_per_example_outputs, method=method, batch_argnums=(1, 2))(*args), \
        jax.jit(_with_per_example_outputs)(*args)
    assert h.shape == x.shape == (16, WIDTH)  # the micro-batches' mean was (8, WIDTH)
    np.testing.assert_allclose(np.asarray(h), np.asarray(expected_h), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(x), np.asarray(expected_x))
    np.testing.assert_allclose(float(loss), float(expected_loss), rtol=1e-5)
    for p, e in zip(params, expected_params):
        np.testing.assert_allclose(np.asarray(p), np.asarray(e), rtol=1e-5, atol=1e-6)


@METHODS
def test_a_per_example_value_computed_after_the_gradients(method):
    """ShardParallel's loop computes ``h[:, 0]`` per micro-batch with the rest of what reads
    the batch; PipeshardParallel's layer construction puts it into an apply part, which runs
    once on combined values, so it refuses it and says where to compute it instead."""
    def step(w, x, y):
        params, loss, h, _ = _with_per_example_outputs(w, x, y)
        return params, loss, h[:, 0]

    pipelined = alpa_mlir.parallelize(step, method=method, batch_argnums=(1, 2))
    args = _arguments(16)
    if isinstance(method, alpa_mlir.PipeshardParallel):
        with pytest.raises(ValueError, match=r"result 3 is per-example, but stage\d_apply, which runs once on the "
                                             r"micro-batches' combined values, computes or reads it: .*has_aux=True"):
            pipelined(*args)
    else:
        np.testing.assert_allclose(np.asarray(pipelined(*args)[2]), np.asarray(jax.jit(step)(*args)[2]),
                                   rtol=1e-5, atol=1e-6)


@METHODS
def test_an_accuracy_beside_the_loss(method):
    """ShardParallel aborted the process on this step (Shardy: "the result has unreduced axes
    while the operand has incompatible sharding along reduction factors"): propagation had
    sharded a gradient dot's contracted batch over more axes than the accumulated partial sum."""
    def step(w, x, y):
        def objective(w):
            h = jnp.tanh(x @ w[0]) @ w[1]
            return _errors(h, y).mean(), (jnp.argmax(h, axis=1) == jnp.argmax(y, axis=1)).mean()

        (loss, accuracy), grads = alpa_mlir.value_and_grad(objective, has_aux=True)(w)
        return [p - 0.01 * g for p, g in zip(w, grads)], loss, accuracy

    args = _arguments(16)
    (params, loss, accuracy), expected = \
        alpa_mlir.parallelize(step, method=method, batch_argnums=(1, 2))(*args), jax.jit(step)(*args)
    np.testing.assert_allclose([float(loss), float(accuracy)], [float(expected[1]), float(expected[2])], rtol=1e-5)
    for p, e in zip(params, expected[0]):
        np.testing.assert_allclose(np.asarray(p), np.asarray(e), rtol=1e-5, atol=1e-6)
