"""Alpa's ``AutoShardingOption`` on ``ShardParallel``, each checked on what XLA emits.

allow_all_gather / allow_all_to_all remove that collective from the plan's
reshardings; allow_mixed_mesh_shape=False (XLA's meaning) keeps every tensor dimension
on one mesh axis at most, where the default also allows all axes together;
allow_replicated_parameters=False splits every parameter; prefer_reduce_scatter shards
gradients and optimizer state (ZeRO-2) for momentum and Adam; force_zero_stage_3 is
Zero3Parallel. Runs on the eight virtual CPU
devices of conftest.py; numerics are compared with plain ``jax.jit``.
"""

from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alpa_mlir
from alpa_mlir import ShardParallel, Zero3Parallel, models, parallelize
from alpa_mlir.lowering.hlo_collectives import parse_collectives

GPT = models.GPTConfig(vocab=512, hidden=64, layers=1, heads=4, seq_len=32)


def emitted_kinds(step, args) -> collections.Counter:
    """Per-device bytes per collective kind of the partitioned step."""
    plan = step.get_plan(*args)
    found: collections.Counter = collections.Counter()
    for c in parse_collectives(step.get_hlo_text(*args), plan.mesh):
        found[c.kind] += c.bytes
    return found


@pytest.fixture(scope="module")
def gpt():
    model = models.build(GPT)
    return model, model.abstract_args(8)


def gpt_step(gpt, **options):
    model, args = gpt
    return parallelize(model.train_step, method=ShardParallel(mesh_shape=(2, 4), **options),
                       batch_argnums=(len(args) - 1,))


@pytest.fixture(scope="module")
def default_kinds(gpt):
    """What the default plan of the GPT block emits (planned once for the module)."""
    return emitted_kinds(gpt_step(gpt), gpt[1])


@pytest.mark.parametrize("forbidden", [("all-gather",), ("all-to-all",), ("all-gather", "all-to-all")])
def test_forbidden_collectives_leave_the_emitted_step(gpt, default_kinds, forbidden):
    # The default plan of this GPT block on (2,4) all-gathers and all-to-alls
    # (428 KB and 98 KB per device); forbidden, XLA emits neither.
    assert {"all-gather", "all-to-all"} <= set(default_kinds)
    options = {f"allow_{kind.replace('-', '_')}": False for kind in forbidden}
    kinds = emitted_kinds(gpt_step(gpt, **options), gpt[1])
    assert kinds["all-reduce"] > 0
    assert not set(forbidden) & set(kinds)


def mlp(width: int = 64, batch: int = 512):
    k1, k2, kx = jax.random.split(jax.random.key(0), 3)
    params = {"w1": jax.random.normal(k1, (width, width)) / 8, "w2": jax.random.normal(k2, (width, width)) / 8}
    x = jax.random.normal(kx, (batch, width))
    return params, (x, jnp.ones_like(x))


def loss_fn(params, batch):
    x, y = batch
    return jnp.mean((jnp.tanh(x @ params["w1"]) @ params["w2"] - y) ** 2)


def momentum_step(state, batch):
    params, velocity = state
    grads = jax.grad(loss_fn)(params, batch)
    velocity = jax.tree.map(lambda v, g: 0.9 * v + g, velocity, grads)
    return jax.tree.map(lambda p, v: p - 0.1 * v, params, velocity), velocity


def adam_step(state, batch):
    params, (mu, nu) = state
    grads = jax.grad(loss_fn)(params, batch)
    mu = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, mu, grads)
    nu = jax.tree.map(lambda n, g: 0.999 * n + 0.001 * g * g, nu, grads)
    params = jax.tree.map(lambda p, m, n: p - 0.01 * m / (jnp.sqrt(n) + 1e-3), params, mu, nu)
    return params, (mu, nu)


@pytest.mark.parametrize("name", ["momentum", "adam"])
def test_prefer_reduce_scatter_shards_the_optimizer_state(name):
    # Data parallel regime (batch 512, width 64) on 8 devices: the gradients are
    # all-reduced; with prefer_reduce_scatter they are reduce-scattered and every
    # optimizer-state leaf lives split (ZeRO-2). XLA:CPU runs the reduce-scatter as
    # the same all-reduce plus a slice, so the all-reduce bytes stay as they were.
    params, batch = mlp()
    zeros = jax.tree.map(jnp.zeros_like, params)
    step_fn, state = {"momentum": (momentum_step, (params, zeros)),
                      "adam": (adam_step, (params, (zeros, jax.tree.map(jnp.zeros_like, params))))}[name]
    state_leaves = len(jax.tree.leaves(state[1]))
    plans, bytes_per_step = {}, {}
    for prefer in (False, True):
        step = parallelize(step_fn, method=ShardParallel(mesh_shape=(8,), prefer_reduce_scatter=prefer))
        plans[prefer] = step.get_plan(state, batch)
        bytes_per_step[prefer] = emitted_kinds(step, (state, batch))["all-reduce"]
        result = step(state, batch)
        for a, e in zip(jax.tree.leaves(result), jax.tree.leaves(jax.jit(step_fn)(state, batch))):
            np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=1e-4, atol=1e-5)
    optimizer_state = range(2, 2 + state_leaves)  # flat arguments: 2 params, the state, x, y
    assert all(plans[False].arguments[i].spec.is_replicated for i in optimizer_state)
    assert not any(plans[True].arguments[i].spec.is_replicated for i in optimizer_state)
    assert bytes_per_step[True] == bytes_per_step[False] > 0
    assert "reduce-scatter" in {c.kind for c in plans[True].predicted_collectives()}


def test_allow_replicated_parameters_false_splits_every_parameter():
    params, batch = mlp()
    specs = {}
    for allowed in (True, False):
        plan = parallelize(momentum_step, method=ShardParallel(
            mesh_shape=(8,), allow_replicated_parameters=allowed)).get_plan((params, params), batch)
        specs[allowed] = [plan.arguments[i].spec for i in range(4)]
    assert all(spec.is_replicated for spec in specs[True])  # data parallel: batch >> width
    assert not any(spec.is_replicated for spec in specs[False])


def test_mixed_mesh_shape_false_keeps_each_dimension_on_one_axis():
    params, batch = mlp()
    for allowed in (None, False):
        plan = parallelize(momentum_step, method=ShardParallel(
            mesh_shape=(2, 4), allow_mixed_mesh_shape=allowed)).get_plan((params, params), batch)
        # A loop over several axes reads "l0->{0,1}" (Table 3's S^{01}).
        over_two_axes = [op.strategy for op in plan.ops if "{" in op.strategy]
        values = [v.spec for v in (*plan.arguments, *plan.results) if v.spec is not None]
        if allowed is None:  # the default: plain data parallelism, the batch over all 8 devices
            assert plan.arguments[4].spec.num_shards(0, plan.mesh) == 8
            assert over_two_axes
        else:
            assert not over_two_axes
            assert all(len(axes) <= 1 for spec in values for axes in spec.dims)


def test_force_zero_stage_3_is_zero3_parallel():
    params, batch = mlp()
    plans = [parallelize(momentum_step, method=method).get_plan((params, params), batch)
             for method in (ShardParallel(force_zero_stage_3=True), Zero3Parallel())]
    assert plans[0].arguments == plans[1].arguments
    assert not plans[0].arguments[0].spec.is_replicated


def test_contradicting_zero_options_name_the_option():
    with pytest.raises(ValueError, match="'force_zero_stage_3'"):
        alpa_mlir.ShardParallel(force_zero_stage_3=True, force_data_parallel=True, zero_stage=2)
