"""Rematerialisation (``alpa-rematerialize``, ``rematerialize=auto|all``): the planned step
recomputes what the plan says, computes what ``jax.jit`` does, and holds less memory as
XLA allocates it, on the eight virtual CPU devices."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alpa_mlir
from alpa_mlir import models
from alpa_mlir.pipeshard import AutoLayerOption, ManualStageOption, PipeshardParallel


def compiled_stats(step, args) -> tuple[float, float]:
    """(FLOPs per device, XLA's memory: arguments + outputs - aliased + temporaries)."""
    executable = step.get_executable(*args).compiled.executable
    memory = executable.get_compiled_memory_stats()
    cost = executable.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    return float(cost["flops"]), float(memory.argument_size_in_bytes + memory.output_size_in_bytes
                                       - memory.alias_size_in_bytes + memory.temp_size_in_bytes)


def assert_trees_close(actual, expected) -> None:
    for a, e in zip(jax.tree.leaves(actual), jax.tree.leaves(expected), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=2e-5, atol=2e-5)


def test_recomputed_layers_compute_what_jit_computes_and_what_the_plan_says():
    model = models.build(models.GPTConfig(vocab=64, hidden=32, layers=3, heads=2, seq_len=8))
    args = model.init(jax.random.key(0), 8)
    method = alpa_mlir.ShardParallel(mesh_shape=(2, 4), batch_argnums=(2,),
                                     layer_option=AutoLayerOption(layer_num=3, remat_layer=True))
    step = alpa_mlir.parallelize(model.train_step, method=method)
    assert_trees_close(step(*args), jax.jit(model.train_step)(*args))
    plan = step.get_plan(*args)
    # The last layer's backward pass reads its activations as its forward pass ends: kept.
    assert plan.recomputed == (0, 1)
    assert "rematerialised: the backward pass computes the activations of layers 0, 1 again" in str(plan)
    # The recomputed layers' matmuls, and no other, run again (marked); those whose results
    # only the next layer reads (the MLP's second matmul, into the residual sum) do not.
    text = step.get_module_text(*args)
    forward = Counter(int(m) for m in re.findall(
        r'stablehlo\.dot_general .*alpa\.layer = (\d+) : i64, alpa\.phase = "forward"', text))
    again = Counter(int(m) for m in re.findall(
        r'stablehlo\.dot_general .*alpa\.layer = (\d+) : i64, alpa\.phase = "backward", alpa\.recompute', text))
    assert set(again) == {0, 1}
    assert all(0 < again[layer] < forward[layer] for layer in (0, 1))


def test_recompute_holds_less_memory_as_xla_allocates_it_for_a_third_more_flops():
    # Data parallel both ways, so that the plans differ in recompute alone.
    config = dataclasses.replace(models.GPT3["350M"], hidden=256, heads=4, layers=4, seq_len=128, vocab=1024)
    model = models.build(config)
    args = model.abstract_args(64)

    def stats(rematerialize: str):
        method = alpa_mlir.DataParallel(batch_argnums=(2,), rematerialize=rematerialize,
                                        layer_option=AutoLayerOption(layer_num=4))
        step = alpa_mlir.parallelize(model.train_step, method=method, donate_argnums=(0, 1))
        return step.get_plan(*args), *compiled_stats(step, args)

    kept, kept_flops, kept_memory = stats("none")
    recomputed, flops, memory = stats("all")
    assert kept.recomputed == () and recomputed.recomputed == (0, 1, 2)
    assert 1.15 < flops / kept_flops < 1.35
    assert memory < 0.75 * kept_memory
    # The model sees the saving too, and within 10% of XLA's figure... on the side of less.
    assert recomputed.peak_memory < 0.75 * kept.peak_memory


def test_under_a_budget_only_recompute_meets_the_plan_recomputes():
    config = dataclasses.replace(models.GPT3["350M"], hidden=256, heads=4, layers=4, seq_len=128, vocab=1024)
    model = models.build(config)
    args = model.abstract_args(64)

    def step(**options):
        method = alpa_mlir.ShardParallel(mesh_shape=(8,), batch_argnums=(2,), **options)
        return alpa_mlir.parallelize(model.train_step, method=method, donate_argnums=(0, 1))

    def plan(**options):
        return step(**options).get_plan(*args)

    free = plan()
    assert free.recomputed == ()  # no budget (CPU): nothing to recompute for
    budget = 0.6 * free.peak_memory
    with pytest.raises(alpa_mlir.AutoShardingError, match="less with the layers' activations recomputed"):
        plan(memory_budget=budget, rematerialize="none")
    fitted_step = step(memory_budget=budget)
    fitted = fitted_step.get_plan(*args)
    assert fitted.recomputed and fitted.peak_memory <= budget
    # XLA allocates 24.9 MB more than predicted (docs/auto_sharding.md, the known miss of
    # rematerialised steps): planned again once, XLA's own figure is within the budget.
    assert compiled_stats(fitted_step, args)[1] <= budget
    with pytest.raises(alpa_mlir.AutoShardingError, match="with every layer's activations recomputed in the "
                                                          r"backward pass, \d"):
        plan(memory_budget=0.2 * free.peak_memory)


def training_step(checkpoint: bool):
    def loss(params, x):
        for w in params:
            layer = lambda x, w: jnp.tanh(x @ w)  # noqa: E731
            x = (jax.checkpoint(layer) if checkpoint else layer)(x, w)
        return jnp.mean(x ** 2)

    def step(params, x):
        return [w - 0.1 * g for w, g in zip(params, jax.grad(loss)(params, x))]

    return step


def test_a_step_that_checkpoints_its_layers_keeps_its_recompute():
    # jax.checkpoint's fence (an optimization barrier on the layer's inputs) reaches XLA as
    # the user wrote it, and the planned step recomputes each layer.
    params = [jnp.full((128, 128), 0.01) for _ in range(4)]
    x = jnp.ones((64, 128))
    step = training_step(checkpoint=True)
    planned = alpa_mlir.parallelize(step, method=alpa_mlir.ShardParallel(mesh_shape=(8,), batch_argnums=(1,)))
    assert_trees_close(planned(params, x), jax.jit(step)(params, x))
    assert planned.get_module_text(params, x).count("stablehlo.optimization_barrier") == 4
    plain = alpa_mlir.parallelize(training_step(checkpoint=False),
                                  method=alpa_mlir.ShardParallel(mesh_shape=(8,), batch_argnums=(1,)))
    recomputing, _ = compiled_stats(planned, (params, x))
    keeping, _ = compiled_stats(plain, (params, x))
    assert 1.1 < recomputing / keeping < 1.35  # each layer's matmul runs again


def test_pipeshard_stages_recompute_their_layers():
    model = models.build(models.GPTConfig(vocab=64, hidden=32, layers=2, heads=2, seq_len=8))
    params, opt_state, batch = model.init(jax.random.key(2), 8)
    method = PipeshardParallel(num_micro_batches=2, layer_option=AutoLayerOption(layer_num=2, remat_layer=True),
                               stage_option=ManualStageOption((1, 1), ((1, 4), (1, 4))), batch_argnums=(2,))
    pipelined = alpa_mlir.parallelize(model.train_step, method=method)
    assert_trees_close(pipelined(params, opt_state, batch), jax.jit(model.train_step)(params, opt_state, batch))
    assert "alpa.recompute" in pipelined.get_module_text(params, opt_state, batch)
