"""PipeshardParallel under interleaved 1F1B (virtual stages per mesh) equals jax.jit.

Eight virtual CPU devices (conftest.py): S meshes hold v stages each, stage k on mesh
k mod S; the step runs the interleaved schedule's streams and must give what plain
``jax.jit`` of the same step gives, over several steps.
"""

from __future__ import annotations

import jax
import pytest
from test_api_pipeshard import run_both

from alpa_mlir.models import GPTConfig, MLPConfig, build
from alpa_mlir.passes.inter_op.stage_dp import pipeline_latency
from alpa_mlir.pipeshard import (
    AutoLayerOption,
    AutoStageOption,
    ManualLayerOption,
    ManualStageOption,
    PipeshardParallel,
    UniformStageOption,
)


def test_mlp_two_chunks_per_mesh_match_jit():
    model = build(MLPConfig(sizes=(16, 32, 32, 32, 8), boundaries=True))
    params, batch = model.init(jax.random.key(0), 16)
    method = PipeshardParallel(num_micro_batches=4, layer_option=ManualLayerOption(),
                               stage_option=ManualStageOption((1, 1, 1, 1), ((1, 4), (1, 4))),
                               pipeline_schedule="interleaved-1f1b", virtual_stages=2)
    pipelined = run_both(model.train_step, method, (params, batch))
    plan = pipelined.get_plan(params, batch)
    assert [s.devices for s in plan.stages] == [(0, 1, 2, 3), (4, 5, 6, 7)] * 2  # stage k on mesh k mod 2
    assert [s.layers for s in plan.stages] == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert (plan.schedule, plan.virtual_stages) == ("interleaved-1f1b", 2)
    executable = pipelined.get_executable(params, batch)
    assert executable.flow.mesh_of == (0, 1, 0, 1)
    assert {t.src_mesh for t in executable.flow.transfers.values()} == {0, 1}
    assert executable.where(0, "a test", 0).startswith("process 0, mesh 0 (stages 0, 2), instruction 1 of ")


def test_gpt_with_adam_uniform_stages_interleaved_match_jit():
    # A small transformer, four layers in four stages of one layer, two per mesh; Adam's
    # update of each stage runs on its mesh.
    model = build(GPTConfig(vocab=64, hidden=32, layers=4, heads=2, seq_len=8))
    params, opt_state, batch = model.init(jax.random.key(2), 8)
    method = PipeshardParallel(num_micro_batches=2, layer_option=AutoLayerOption(layer_num=4),
                               stage_option=UniformStageOption(num_stages=4), batch_argnums=(2,),
                               pipeline_schedule="interleaved-1f1b", virtual_stages=2)
    pipelined = run_both(model.train_step, method, (params, opt_state, batch), steps=2, state_args=2)
    plan = pipelined.get_plan(params, opt_state, batch)
    assert len(plan.stages) == 4 and plan.stages[0].devices == plan.stages[2].devices
    assert set(plan.stages[0].devices).isdisjoint(plan.stages[1].devices)


def test_the_stage_dp_plans_interleaved_stages_that_match_jit():
    # AutoStageOption: the DP gives each mesh a multiple of v layers, cut into v chunks, on a
    # number of meshes dividing B, and its latency is interleaved 1F1B's Eq. 2.
    model = build(MLPConfig(sizes=(16, 32, 32, 32, 8), boundaries=True))
    params, batch = model.init(jax.random.key(0), 16)
    method = PipeshardParallel(num_micro_batches=4, layer_option=ManualLayerOption(),
                               stage_option=AutoStageOption(), pipeline_schedule="interleaved-1f1b", virtual_stages=2)
    pipelined = run_both(model.train_step, method, (params, batch))
    plan = pipelined.get_plan(params, batch)
    meshes = len(plan.stages) // 2
    assert plan.virtual_stages == 2 and len(plan.stages) == 2 * meshes and 4 % meshes == 0
    assert [s.devices for s in plan.stages] == [s.devices for s in plan.stages[:meshes]] * 2
    assert [s.layers[1] - s.layers[0] for s in plan.stages[:meshes]] == \
        [s.layers[1] - s.layers[0] for s in plan.stages[meshes:]]
    per_mesh = [plan.stages[r].latency + plan.stages[r + meshes].latency for r in range(meshes)]
    assert plan.latency == pytest.approx(pipeline_latency(per_mesh, 4, 2), rel=1e-9)


def test_interleaved_options_are_checked():
    with pytest.raises(ValueError, match="option 'virtual_stages' must be a positive integer, and 1 unless "
                                         "pipeline_schedule='interleaved-1f1b'; got 2 with '1f1b'"):
        PipeshardParallel(virtual_stages=2)
    with pytest.raises(ValueError, match=r"option 'num_micro_batches' \(3\) must be a multiple of the 2 meshes"):
        PipeshardParallel(num_micro_batches=3, pipeline_schedule="interleaved-1f1b", virtual_stages=2,
                          stage_option=UniformStageOption(num_stages=4))
    with pytest.raises(ValueError, match="option 'num-stages' 3 must be a multiple of option 'virtual-stages' 2"):
        PipeshardParallel(num_micro_batches=2, pipeline_schedule="interleaved-1f1b", virtual_stages=2,
                          stage_option=UniformStageOption(num_stages=3))
