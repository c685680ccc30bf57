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
