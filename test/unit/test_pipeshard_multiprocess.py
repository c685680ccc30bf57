"""PipeshardParallel with several controllers, and what a failed step does.

The cluster tests start 2 processes x 4 virtual CPU devices through
``python -m alpa_mlir.runtime.launch`` running ``multiprocess/pipeshard_step.py``: each
process drives one (1, 4) stage mesh of the default (2, 4) cluster; values cross
between processes over gloo. The rest run in this process on the eight devices of
conftest.py (a single controller).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import jax
import numpy as np
import pytest

from alpa_mlir import mark_pipeline_boundary, parallelize
from alpa_mlir.models import MLPConfig, build
from alpa_mlir.pipeshard import ManualLayerOption, ManualStageOption, PipeshardParallel, PipeshardStepError, to_host
from alpa_mlir.plans.reshard_plan import LocalGather, ReshardPlan, TileMove
from alpa_mlir.runtime.pipeshard import _plan_on_devices
from alpa_mlir.runtime.watchdog import EXIT_STEP_TIMEOUT

SCRIPT = Path(__file__).parent / "multiprocess" / "pipeshard_step.py"
LAUNCHER = [sys.executable, "-m", "alpa_mlir.runtime.launch", "--num-processes", "2", "--devices-per-process", "4"]
SAFETY_S = 240
# The MLP alone in CI (a few seconds of planning); ALPA_MLIR_FULL_TESTS=1 adds a GPT and a MoE
# (2.5 minutes more on 2 cores).
MODELS = ("mlp", "gpt", "moe") if os.environ.get("ALPA_MLIR_FULL_TESTS") == "1" else ("mlp",)


def launch(mode: str, fault: str, *transformers: str) -> tuple[subprocess.CompletedProcess, float]:
    env = dict(os.environ, PIPESHARD_FAULT=fault)
    start = time.monotonic()
    result = subprocess.run([*LAUNCHER, "--timeout", str(SAFETY_S - 30), str(SCRIPT), mode, *transformers],
                            capture_output=True, text=True, timeout=SAFETY_S, env=env)
    return result, time.monotonic() - start


def lines_of(stdout: str, process: str) -> str:
    return "\n".join(line for line in stdout.splitlines() if line.startswith(f"[{process}] "))


def assert_gone(stdout: str) -> None:
    for pid in re.findall(r"^\[p\d\] started pid=(\d+)$", stdout, re.M):
        with pytest.raises(ProcessLookupError):
            os.kill(int(pid), 0)


# ---------------------------------------------------------------- two processes


@pytest.fixture(scope="module")
def trained_then_killed() -> tuple[subprocess.CompletedProcess, float]:
    """MLP (and GPT and MoE) steps on two processes, then an MLP step in which process 1 exits
    abruptly (one cluster for both tests: starting one takes a while on 2 cores)."""
    return launch("train", "exit", *MODELS[1:])


def test_steps_on_two_processes_match_jit(trained_then_killed):
    result, _ = trained_then_killed
    for rank in (0, 1):
        for model in MODELS:
            assert f"[p{rank}] OK {model} process {rank}" in result.stdout, result.stdout[-6000:] + result.stderr


def test_a_process_dying_mid_step_fails_the_step_on_the_other(trained_then_killed):
    result, elapsed = trained_then_killed
    assert result.returncode == 3, result.stdout[-6000:] + result.stderr
    assert "[p1] fault exit on purpose in stage1_backward" in result.stdout
    # The survivor's gloo collective fails at once; its error says where the step was.
    survivor = lines_of(result.stdout, "p0")
    assert re.search(r"PipeshardStepError: pipeshard step failed at process 0, mesh 0 \(stage 0\), instruction "
                     r"\d+ of \d+: (send|recv) transfer \d+ \(micro-batch \d\) from mesh \d to mesh \d: .*"
                     r"Connection closed by peer", survivor), survivor[-3000:]
    assert "process 1 (p1) exited with code 3" in result.stderr
    assert_gone(result.stdout)
    assert elapsed < SAFETY_S - 60


def test_a_stopped_process_ends_the_step_at_the_instruction_timeout():
    # SIGSTOP: the peer stays connected but never answers, so only the watchdog can end the step.
    result, elapsed = launch("mlp", "stop")
    assert result.returncode == EXIT_STEP_TIMEOUT, result.stdout[-6000:] + result.stderr
    assert "[p1] fault stop on purpose in stage1_backward" in result.stdout
    assert re.search(r"^\[p0\] alpa_mlir: pipeshard step made no progress for 8 s at process 0, mesh 0 \(stage 0\), "
                     r"instruction \d+ of \d+: (send|recv) transfer \d+ ", result.stdout, re.M), result.stdout[-3000:]
    assert f"process 0 (p0) exited with code {EXIT_STEP_TIMEOUT}; stopping p1" in result.stderr
    assert_gone(result.stdout)
    assert elapsed < 70


# ---------------------------------------------------------------- one process


def mlp_step(params, batch):
    def loss(params, batch):
        h = batch["x"]
        for layer in params[:-1]:
            h = mark_pipeline_boundary(jax.nn.relu(h @ layer["w"] + layer["b"]))
        return jax.numpy.mean((h @ params[-1]["w"] + params[-1]["b"] - batch["y"]) ** 2)

    value, grads = jax.value_and_grad(loss)(params, batch)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), value


def test_a_failed_step_says_where_and_leaves_the_arguments_intact():
    params, batch = build(MLPConfig(sizes=(16, 32, 32, 8))).init(jax.random.key(0), 16)
    method = PipeshardParallel(num_micro_batches=2, layer_option=ManualLayerOption(),
                               stage_option=ManualStageOption((1, 2), ((1, 4), (1, 4))))
    step = parallelize(mlp_step, method=method)
    params, _ = step(params, batch)  # arrays on the meshes, as training passes them
    before = to_host(params)
    executables = step.get_executable(params, batch).executables
    assert not any(any(e.donated) for e in executables.values())  # so no argument is consumed
    program = executables["stage1_backward"]

    def failing(*args):
        raise RuntimeError("injected failure")

    executables["stage1_backward"] = failing
    try:
        with pytest.raises(PipeshardStepError, match=r"at process 0, mesh 1 \(stage 1\), instruction \d+ of \d+: "
                                                     r"run @stage1_backward \(micro-batch 0\): injected failure"):
            step(params, batch)
    finally:
        executables["stage1_backward"] = program
    for leaf, kept in zip(jax.tree.leaves(params), jax.tree.leaves(before)):
        assert not leaf.is_deleted()
        np.testing.assert_array_equal(np.asarray(leaf), kept)
    step(params, batch)  # the executable still works


def test_argument_errors_keep_their_type_and_say_where():
    params, batch = build(MLPConfig(sizes=(16, 32, 8))).init(jax.random.key(1), 8)
    method = PipeshardParallel(num_micro_batches=2, layer_option=ManualLayerOption(),
                               stage_option=ManualStageOption((1, 1), ((1, 4), (1, 4))))
    step = parallelize(mlp_step, method=method)
    executable = step.get_executable(params, batch)
    flat = [np.asarray(x) for x in jax.tree.leaves((params, batch))]
    flat[0] = flat[0].astype(np.float16)
    with pytest.raises(TypeError, match="dtype float16") as raised:
        executable(*flat)
    assert any(re.search(r"pipeshard step at process 0, mesh 0 \(stage 0\), .*run @stage0_forward", note)
               for note in raised.value.__notes__)


def test_to_host_in_one_process_is_asarray():
    tree = {"a": jax.numpy.arange(4.0), "b": [np.ones(2, np.int32), 3]}
    host = to_host(tree)
    assert isinstance(host["a"], np.ndarray) and isinstance(host["b"][1], np.ndarray)
    np.testing.assert_array_equal(host["a"], np.arange(4.0))


def test_default_cluster_is_one_host_per_process():
    assert PipeshardParallel().cluster() == (1, len(jax.devices()))
    assert PipeshardParallel(devices=jax.devices()[:4]).cluster() == (1, 4)


def test_transfer_plans_move_from_cluster_positions_to_device_ids():
    plan = ReshardPlan((4,), (TileMove(0, 0, 4, ((0, 2),), 0), TileMove(1, 1, 5, ((2, 4),), 0)),
                       (LocalGather((4, 5), 0, ((0, 4),)),), {4: ((0, 4),), 5: ((0, 4),)})
    ids = {0: 0, 1: 1, 4: 2048, 5: 2049}
    moved = _plan_on_devices(plan, ids)
    assert [(m.src_device, m.dst_device) for m in moved.moves] == [(0, 2048), (1, 2049)]
    assert moved.gathers[0].devices == (2048, 2049)
    assert set(moved.dst_tiles) == {2048, 2049}


@pytest.mark.parametrize("timeout", [-1, "5", True])
def test_instruction_timeout_must_be_seconds(timeout):
    with pytest.raises(ValueError, match="instruction_timeout"):
        PipeshardParallel(instruction_timeout=timeout)
