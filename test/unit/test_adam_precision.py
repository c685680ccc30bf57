"""The plan's f32 numerics under Adam, against data parallelism's own (issue 32, item 6).

A plan reorders sums (a contraction split over devices adds its partial sums in another
order), and Adam scales each update by its gradient's running magnitude, so the
parameters after a few steps differ from ``jax.jit``'s by more than one step's gradients
do. Plain data parallelism reorders the batch's sums too: its own difference from
``jax.jit`` is the yardstick. transformers' Flax GPT-2 (4 layers, hidden 256, HF's own
initialisation), 3 AdamW steps on the eight virtual CPU devices; the difference is the
largest over all parameters of ``|planned - jit| / (1e-4 + 1e-3 |jit|)``.

Measured (2026-12-02): data parallel 0.525, ShardParallel on (2, 4) 0.571 (1.09x),
PipeshardParallel on two (1, 4) meshes 0.831 with 1 micro-batch and 0.607 with 2 (1.58x
and 1.16x). ``ALPA_MLIR_FULL_TESTS=1`` adds the pipelines.
"""

from __future__ import annotations

import functools
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from alpa_mlir import AutoLayerOption, ManualStageOption, PipeshardParallel, ShardParallel, parallelize

transformers = pytest.importorskip("transformers")
optax = pytest.importorskip("optax")
pytest.importorskip("flax")

STEPS, BATCH, SEQ, VOCAB = 3, 16, 64, 1024
FULL = os.environ.get("ALPA_MLIR_FULL_TESTS") == "1"


@functools.cache
def workload():
    """(step, state, batch, the parameters after STEPS steps of jax.jit, data parallelism's difference)."""
    config = transformers.GPT2Config(n_layer=4, n_embd=256, n_head=4, n_positions=SEQ, vocab_size=VOCAB)
    model = transformers.FlaxGPT2LMHeadModel(config, input_shape=(1, SEQ), _do_init=False)
    params = jax.jit(model.init_weights, static_argnums=1)(jax.random.key(0), (1, SEQ))
    tx = optax.adamw(1e-3)
    batch = {"input_ids": jax.random.randint(jax.random.key(1), (BATCH, SEQ), 0, VOCAB)}

    def loss(params, batch):
        logits = model(batch["input_ids"], params=params, train=False).logits[:, :-1]
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.take_along_axis(logp, batch["input_ids"][:, 1:, None], axis=-1))

    def step(state, batch):
        params, opt_state = state
        value, grads = jax.value_and_grad(loss)(params, batch)
        updates, opt_state = tx.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), value

    state = (params, tx.init(params))
    expected = trained(jax.jit(step), state, batch)
    mesh = Mesh(np.array(jax.devices()), ("d",))
    data_parallel = jax.jit(step, in_shardings=(NamedSharding(mesh, PartitionSpec()),
                                                NamedSharding(mesh, PartitionSpec("d"))))
    return step, state, batch, expected, difference(trained(data_parallel, state, batch), expected)


def trained(fn, state, batch):
    for _ in range(STEPS):
        state, _ = fn(state, batch)
    return state[0]


def difference(got, expected) -> float:
    return max(float(np.max(np.abs(np.asarray(a) - np.asarray(e)) / (1e-4 + 1e-3 * np.abs(np.asarray(e)))))
               for a, e in zip(jax.tree.leaves(got), jax.tree.leaves(expected), strict=True))


def methods():
    yield pytest.param(ShardParallel(mesh_shape=(2, 4)), id="shard-2x4")
    if FULL:
        for b in (1, 2):
            yield pytest.param(PipeshardParallel(num_micro_batches=b, layer_option=AutoLayerOption(layer_num=2),
                                                 stage_option=ManualStageOption((1, 1), ((1, 4), (1, 4))),
                                                 cluster_shape=(2, 4), progress=False), id=f"pipeshard-{b}")


@pytest.mark.parametrize("method", methods())
def test_adam_steps_differ_from_jit_at_most_twice_as_much_as_data_parallelism(method):
    step, state, batch, expected, data_parallel = workload()
    assert 0 < data_parallel < 1  # data parallelism reorders sums too, within the tolerance
    planned = trained(parallelize(step, method=method, batch_argnums=(1,)), state, batch)
    assert difference(planned, expected) <= 2 * data_parallel
