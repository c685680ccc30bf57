"""PipeshardParallel with a thread per mesh (``concurrent_meshes``, the CPU default in one
process): the same values as the one global order, and failures that say where."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from alpa_mlir import parallelize
from alpa_mlir.models import MLPConfig, build
from alpa_mlir.pipeshard import ManualLayerOption, ManualStageOption, PipeshardParallel, PipeshardStepError

THREE_STAGES = ManualStageOption((1, 1, 1), ((1, 2), (1, 2), (1, 4)))


def test_meshes_in_threads_compute_exactly_what_the_one_order_does():
    model = build(MLPConfig(sizes=(16, 32, 32, 8), boundaries=True))
    params, batch = model.init(jax.random.key(0), 32)
    method = PipeshardParallel(num_micro_batches=4, layer_option=ManualLayerOption(), stage_option=THREE_STAGES,
                               device_profile="", progress=False)
    pipelined = parallelize(model.train_step, method=method)
    executable = pipelined.get_executable(params, batch)
    assert executable.concurrent_meshes
    threaded = [pipelined(params, batch) for _ in range(3)]  # the threads' timing differs from step to step
    executable.concurrent_meshes = False
    ordered = pipelined(params, batch)
    for outputs in threaded:
        for a, e in zip(jax.tree.leaves(outputs), jax.tree.leaves(ordered), strict=True):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(e))


def test_a_stage_that_fails_in_its_thread_names_where_and_stops_the_other_meshes():
    model = build(MLPConfig(sizes=(16, 32, 8), boundaries=True))
    params, batch = model.init(jax.random.key(0), 16)
    method = PipeshardParallel(num_micro_batches=2, layer_option=ManualLayerOption(),
                               stage_option=ManualStageOption((1, 1), ((1, 4), (1, 4))), device_profile="",
                               progress=False)
    pipelined = parallelize(model.train_step, method=method)
    executable = pipelined.get_executable(params, batch)
    runs = executable.executables["stage1_forward"]

    def broken(*args):  # as a device that fails under the program
        raise RuntimeError("device lost")

    executable.executables["stage1_forward"] = broken
    # Mesh 0 then waits at the recv of a gradient that mesh 1 never sends: it must give up too.
    with pytest.raises(PipeshardStepError, match=r"at process 0, mesh 1 \(stage 1\), instruction \d+ of \d+: "
                                                 r"run @stage1_forward \(micro-batch 0\): device lost"):
        pipelined(params, batch)
    executable.executables["stage1_forward"] = runs
    jax.block_until_ready(pipelined(params, batch))  # the threads are free for the next step


def test_concurrent_meshes_must_be_a_bool_or_none():
    with pytest.raises(ValueError, match="option 'concurrent_meshes' must be True, False or None; got 'yes'"):
        PipeshardParallel(concurrent_meshes="yes")
