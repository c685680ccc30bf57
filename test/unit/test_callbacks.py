"""Host callbacks in a parallelized step print and call what ``jax.jit`` prints and calls.

``jax.debug.print``, ``jax.debug.callback`` and ``jax.experimental.io_callback`` run once
per step on one device with whole values, under ``ShardParallel`` and
``PipeshardParallel`` as under ``jax.jit`` on the eight devices of conftest.py.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import io_callback

import alpa_mlir
from alpa_mlir import AutoShardingError, ShardParallel, parallelize
from alpa_mlir.lowering.spmd import LoweringError, compile_module
from alpa_mlir.pipeshard import ManualLayerOption, ManualStageOption, PipeshardParallel

TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}
TWO_STAGES = ManualStageOption((1, 1), ((1, 4), (1, 4)))  # one layer each, on devices 0-3 and 4-7


def make_step(calls: list, boundary: bool = False, ordered: bool = False):
    """Two layers and SGD, with a callback of each kind: in the forward pass (a print of an
    activation, a callback with a sharded activation), on the loss (io_callback, whose
    result the step returns) and on a gradient (a print in the apply part)."""
    def loss_fn(params, batch):
        x, y = batch
        hidden = jnp.tanh(x @ params["w1"])
        jax.debug.print("hidden {s:.3f}", s=hidden.sum())
        jax.debug.callback(lambda h: calls.append(("hidden", np.asarray(h))), hidden)
        if boundary:
            hidden = alpa_mlir.mark_pipeline_boundary(hidden)
        return jnp.mean((hidden @ params["w2"] - y) ** 2)

    def step(params, batch):
        loss, grads = alpa_mlir.value_and_grad(loss_fn)(params, batch)
        loss = io_callback(lambda v: (calls.append(("loss", np.asarray(v))), v)[1],
                           jax.ShapeDtypeStruct((), jnp.float32), loss, ordered=ordered)
        jax.debug.print("grad {g:.3f}", g=jnp.abs(grads["w2"]).sum())
        return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), loss

    return step


def inputs():
    k1, k2, kx, ky = jax.random.split(jax.random.key(0), 4)
    params = {"w1": jax.random.normal(k1, (16, 32)) / 4, "w2": jax.random.normal(k2, (32, 8)) / 4}
    return params, (jax.random.normal(kx, (16, 16)), jax.random.normal(ky, (16, 8)))


def run(step, capsys, steps: int = 1):
    """The step's outputs, what it printed and the order of its calls (each kind once per step)."""
    params, batch = inputs()
    capsys.readouterr()
    for _ in range(steps):
        params, loss = step(params, batch)
    jax.effects_barrier()  # callbacks may still run after the step returns, as under jax.jit
    return (params, loss), capsys.readouterr().out.splitlines()


def assert_same_calls(mine: list, theirs: list) -> None:
    assert [kind for kind, _ in mine] == [kind for kind, _ in theirs]
    for (_, a), (_, e) in zip(mine, theirs):
        np.testing.assert_allclose(a, e, **TOLERANCE)


def assert_same_outputs(mine, theirs) -> None:
    for a, e in zip(jax.tree.leaves(mine), jax.tree.leaves(theirs)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), **TOLERANCE)


@pytest.mark.filterwarnings("error::alpa_mlir.AutoShardingWarning")  # callbacks have a rule
def test_shard_parallel_prints_and_calls_what_jit_does(capsys):
    theirs, mine = [], []
    expected, printed = run(jax.jit(make_step(theirs)), capsys, steps=2)
    step = parallelize(make_step(mine), method=ShardParallel(mesh_shape=(2, 4)))
    actual, mine_printed = run(step, capsys, steps=2)  # the second step runs the cached executable
    assert mine_printed == printed and len(printed) == 4
    assert_same_calls(mine, theirs)
    assert mine[0][1].shape == (16, 32)  # the whole activation, not a shard
    assert_same_outputs(actual, expected)
    # The callback runs on one device and reads whole values, as jax.jit lowers it.
    assert '"{maximal device=0}"' in step.get_module_text(*inputs())


def test_pipeshard_parallel_prints_and_calls_what_jit_does(capsys):
    theirs, mine = [], []
    expected, printed = run(jax.jit(make_step(theirs, boundary=True)), capsys)
    method = PipeshardParallel(num_micro_batches=1, layer_option=ManualLayerOption(), stage_option=TWO_STAGES,
                               device_profile="", progress=False)
    step = parallelize(make_step(mine, boundary=True), method=method)
    actual, mine_printed = run(step, capsys)
    assert mine_printed == printed and len(printed) == 2
    assert_same_calls(mine, theirs)
    assert_same_outputs(actual, expected)
    # Each callback runs in the stage part that computes what it reads: the activation's
    # in stage 0's forward part, the loss's and the w2 gradient's in stage 1's apply part.
    parts = {part.split("(")[0]: part.count("python_cpu_callback")
             for part in step.get_module_text(*inputs()).split("func.func private @")[1:]}
    assert {name: count for name, count in parts.items() if count} == {"stage0_forward": 2, "stage1_apply": 2}


def test_micro_batches_run_forward_callbacks_per_micro_batch_and_apply_callbacks_once(capsys):
    # As in Alpa's gradient accumulation: the forward and backward parts run per
    # micro-batch (on its examples), the apply part once per step (on the mean gradient).
    theirs, mine = [], []
    expected, printed = run(jax.jit(make_step(theirs)), capsys)
    step = parallelize(make_step(mine), method=ShardParallel(mesh_shape=(2, 4), num_micro_batches=2))
    actual, mine_printed = run(step, capsys)
    assert [line.split()[0] for line in mine_printed] == ["hidden", "hidden", "grad"]
    assert mine_printed[-1] == printed[-1]
    assert [kind for kind, _ in mine] == ["hidden", "loss"] * 2
    assert mine[0][1].shape == (8, 32)
    assert_same_outputs(actual, expected)


def test_ordered_io_callbacks_keep_their_order(capsys):
    theirs, mine = [], []
    expected, printed = run(jax.jit(make_step(theirs, ordered=True)), capsys, steps=2)
    step = parallelize(make_step(mine, ordered=True), method=ShardParallel(mesh_shape=(2, 4)))
    actual, mine_printed = run(step, capsys, steps=2)
    assert mine_printed == printed
    assert_same_calls(mine, theirs)
    assert_same_outputs(actual, expected)


def test_ordered_callbacks_cannot_be_pipelined():
    method = PipeshardParallel(num_micro_batches=1, layer_option=ManualLayerOption(), stage_option=TWO_STAGES,
                               device_profile="", progress=False)
    step = parallelize(make_step([], boundary=True, ordered=True), method=method)
    with pytest.raises(AutoShardingError, match=r"ordered host callbacks .* pass ordered=False"):
        step(*inputs())


def test_compiling_a_module_with_callbacks_needs_their_callables():
    step = parallelize(make_step([]), method=ShardParallel(mesh_shape=(2, 4)))
    text = step.get_module_text(*inputs())
    with pytest.raises(LoweringError, match=r"call Python callable #3 but 0 were given"):
        compile_module(text, step.get_plan(*inputs()).mesh)
