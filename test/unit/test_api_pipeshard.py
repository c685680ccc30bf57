"""PipeshardParallel end to end: a step pipelined over submeshes equals jax.jit on one device.

Runs on the eight virtual CPU devices of conftest.py, in one process: every stage part
is compiled by XLA's SPMD partitioner for its mesh, values cross meshes through the
transfer programs, the micro-batches run under the schedule, and the results are
compared with plain ``jax.jit`` of the same step over several steps.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable

import jax
import numpy as np
import optax
import pytest
from flax.training import train_state
from transformers import FlaxGPT2LMHeadModel, GPT2Config

from alpa_mlir import AutoShardingError, AutoShardingWarning, PlanError, parallelize
from alpa_mlir.dialect.schedule_ops import Accumulate, Apply, Move, Run, Send
from alpa_mlir.models import GPTConfig, MLPConfig, MoEConfig, build
from alpa_mlir.passes.inter_op.stage_construction import StageConstructionPass
from alpa_mlir.pipeshard import (
    AutoLayerOption,
    ManualLayerOption,
    ManualStageOption,
    PipeshardParallel,
    UniformStageOption,
)
from alpa_mlir.plans.device_profile import DeviceProfile
from alpa_mlir.runtime.step_model import predicted_step
from alpa_mlir.runtime.transfer import CrossMeshTransfer

TOLERANCE = {"rtol": 2e-5, "atol": 2e-5}


def assert_trees_close(actual, expected) -> None:
    assert jax.tree.structure(actual) == jax.tree.structure(expected)
    for a, e in zip(jax.tree.leaves(actual), jax.tree.leaves(expected)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), **TOLERANCE)


def run_both(step, method, args, steps: int = 3, state_args: int = 1):
    """Run ``steps`` steps of ``step`` under ``method`` and under jax.jit; compare every output."""
    pipelined = parallelize(step, method=method)
    reference = jax.jit(step)
    mine, theirs = args, args
    for _ in range(steps):
        out_mine, out_theirs = pipelined(*mine), reference(*theirs)
        assert_trees_close(out_mine, out_theirs)
        mine = (*out_mine[:state_args], *args[state_args:])
        theirs = (*out_theirs[:state_args], *args[state_args:])
    return pipelined


@pytest.mark.parametrize("schedule", ["1f1b", "gpipe"])
def test_mlp_manual_stages_match_jit(schedule):
    # The reference is the same marked step under plain jax.jit, where markers are identities.
    model = build(MLPConfig(sizes=(16, 32, 32, 8), boundaries=True))
    params, batch = model.init(jax.random.key(0), 32)
    method = PipeshardParallel(num_micro_batches=4, layer_option=ManualLayerOption(),
                               stage_option=ManualStageOption((1, 1, 1), ((1, 2), (1, 2), (1, 4))),
                               pipeline_schedule=schedule)
    pipelined = run_both(model.train_step, method, (params, batch))
    plan = pipelined.get_plan(params, batch)
    assert [s.devices for s in plan.stages] == [(0, 1), (2, 3), (4, 5, 6, 7)]
    assert plan.schedule == schedule  # the timeline it draws is the schedule the step runs


def test_equal_stages_on_meshes_of_one_size_compile_once():
    # The middle stages are the same layer on two devices each: stage 2's forward and
    # backward are stage 1's executables loaded onto its devices (lowering/spmd.py's
    # SharedCompiles), and compute what jax.jit does. In one process the transfers copy
    # between devices and compile no program. The plan uses the constant costs, the same on
    # every machine.
    model = build(MLPConfig(sizes=(32,) * 5, boundaries=True))
    params, batch = model.init(jax.random.key(0), 16)
    method = PipeshardParallel(num_micro_batches=2, layer_option=ManualLayerOption(),
                               stage_option=ManualStageOption((1, 1, 1, 1), ((1, 2),) * 4),
                               device_profile="")
    pipelined = run_both(model.train_step, method, (params, batch))
    executable = pipelined.get_executable(params, batch)
    assert len(executable.transfers) == 6 and all(t.direct for t in executable.transfers.values())
    assert executable.shared.loaded == 2
    assert {d.id for d in executable.executables["stage2_forward"].compiled.devices} == {4, 5}


def test_the_predicted_step_prices_every_instruction_of_the_order(tmp_path, monkeypatch):
    # runtime/step_model.py on the runtime's real order, with profiles that price one
    # thing each. The plan is made with a saved profile of round numbers: the intra-op
    # plans (and so which transfers copy) must not depend on the machine that runs the test.
    collectives = tuple((kind, n, nbytes, 3e-5 + nbytes / 1e9) for kind in ("all-reduce", "all-gather",
                        "reduce-scatter", "all-to-all") for n in (2, 4, 8) for nbytes in (1e4, 1e6))
    DeviceProfile("cpu", "cpu", 8, {"float32": {1: {1.0: 1e11}}}, {1: 1e10}, {1: 5e-5},
                  collectives).save(tmp_path / "profile.json")
    model = build(MLPConfig(sizes=(32,) * 5, boundaries=True))
    params, batch = model.init(jax.random.key(0), 32)
    method = PipeshardParallel(num_micro_batches=4, layer_option=ManualLayerOption(),
                               stage_option=ManualStageOption((1, 1, 1, 1), ((1, 2),) * 4),
                               device_profile=str(tmp_path / "profile.json"))
    pipelined = parallelize(model.train_step, method=method)
    plan, executable = pipelined.get_plan(params, batch), pipelined.get_executable(params, batch)
    assert executable.synchronous and executable.concurrent_meshes  # CPU, one process: a thread per mesh
    assert executable.clocks == {0: 0, 1: 0, 2: 0, 3: 0}  # ... whose meshes share its cores: one clock
    free = DeviceProfile("cpu", "cpu", 8, {"float32": {1: {1.0: 1e12}}}, {1: math.inf}, {1: 0.0}, ())
    runs = 4 * sum(s.latency for s in plan.stages)  # B forwards and backwards per stage
    # The meshes at once, but on the host's cores, which one program already keeps busy: prices add up.
    assert predicted_step(executable, plan, free) == pytest.approx(runs, rel=1e-12)
    # A launch of one second: one per apply part and accumulation, one per block a transfer
    # cuts or assembles on one device (in one process every transfer copies between devices),
    # and one per copy, which a profile that measured none prices as a launch.
    sends = [executable.transfers[i.transfer] for _, i in executable.order
             if isinstance(i, Send) and not isinstance(i.transfer, Move)]
    assert sends and all(t.direct for t in sends)
    copies, cut_or_assembled = (sum(t.local_work[k] for t in sends) for k in (0, 1))
    assert copies >= 4 * 2 * 2 and cut_or_assembled >= 4 * 2  # some shardings change between meshes
    launches = sum(1 for _, i in executable.order if isinstance(i, Apply | Accumulate)) + cut_or_assembled + copies
    slow_launch = dataclasses.replace(free, launch={1: 1.0})
    assert predicted_step(executable, plan, slow_launch) == pytest.approx(runs + launches, rel=1e-12)
    # Ten seconds a copy: only the copies take them.
    slow_copies = dataclasses.replace(free, device_copy={1: 10.0})
    assert predicted_step(executable, plan, slow_copies) == pytest.approx(runs + 10 * copies, rel=1e-12)
    # Across processes the transfers run the plan's programs: a second for each.
    monkeypatch.setattr(CrossMeshTransfer, "direct", property(lambda self: False))
    slow_programs = dataclasses.replace(free, transfer_launch={1: 1.0})
    programs = sum(1 + len(t.stages) for t in sends)
    assert predicted_step(executable, plan, slow_programs) == pytest.approx(runs + programs, rel=1e-12)
    monkeypatch.undo()
    # A second per array a program call takes or gives: a stage part's and an apply part's
    # arguments and results; the B accumulations of each value read it B times, their sums
    # B - 1 times, and write the sums B times.
    arrays = sum(sum(map(len, executable.declared[i.callee])) for _, i in executable.order
                 if isinstance(i, Run | Apply)) + \
        sum((4 + 3 + 4) * len(i.values) for _, i in executable.order
            if isinstance(i, Accumulate) and i.micro_batch == 0)
    assert arrays > 4 * 2 * 3 * 2  # every stage part takes and gives arrays
    slow_arrays = dataclasses.replace(free, call_buffers={1: 1.0})
    assert predicted_step(executable, plan, slow_arrays) == pytest.approx(runs + arrays, rel=1e-12)
    assert plan.step is not None and plan.step > runs  # the API's, priced by the method's profile
    assert "as the runtime runs it" in str(plan)


def test_a_saved_pipeline_runs_without_searching(tmp_path):
    model = build(MLPConfig(sizes=(16, 64, 64, 64, 8)))
    params, batch = model.init(jax.random.key(1), 16)
    method = PipeshardParallel(num_micro_batches=2, layer_option=AutoLayerOption(layer_num=2),
                               stage_option=UniformStageOption(num_stages=2))
    saved = parallelize(model.train_step, method=method).save_plan(tmp_path / "plan.json", params, batch)
    loaded = parallelize(model.train_step, method=method, load_plan=tmp_path / "plan.json")
    assert loaded.get_module_text(params, batch) == saved.module_text
    assert loaded.get_plan(params, batch) == saved.plan
    assert_trees_close(loaded(params, batch), jax.jit(model.train_step)(params, batch))
    # Plans and calls that do not fit say so.
    with pytest.raises(PlanError, match=r"args\[1\]\['x'\] is f32\[4,16\] per micro-batch .* f32\[8,16\]"):
        loaded(params, model.init(jax.random.key(1), 8)[1])
    with pytest.raises(PlanError, match="num_micro_batches=4"):
        parallelize(model.train_step, method=dataclasses.replace(method, num_micro_batches=4),
                    load_plan=tmp_path / "plan.json")
    with pytest.raises(PlanError, match="use it with method=PipeshardParallel"):
        parallelize(model.train_step, load_plan=tmp_path / "plan.json")


def test_mlp_auto_layers_and_uniform_stages_match_jit():
    model = build(MLPConfig(sizes=(16, 64, 64, 64, 8)))
    params, batch = model.init(jax.random.key(1), 16)
    method = PipeshardParallel(num_micro_batches=2, layer_option=AutoLayerOption(layer_num=2),
                               stage_option=UniformStageOption(num_stages=2))
    pipelined = run_both(model.train_step, method, (params, batch))
    assert len(pipelined.get_plan(params, batch).stages) == 2
    text = pipelined.get_module_text(params, batch)
    assert "@mesh1_schedule" in text and '"alpa.sched.apply"' in text


def test_a_step_that_returns_no_loss_pipelines():
    # The most common training step: jax.grad, then the update, and only the new
    # parameters come back (no loss to find the backward pass from).
    model = build(MLPConfig(sizes=(16, 64, 64, 64, 8)))
    params, batch = model.init(jax.random.key(1), 16)

    def step(params, batch):
        grads = jax.grad(model.loss)(params, batch)
        return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)

    method = PipeshardParallel(num_micro_batches=2, layer_option=AutoLayerOption(layer_num=2),
                               stage_option=UniformStageOption(num_stages=2))
    pipelined, reference = parallelize(step, method=method), jax.jit(step)
    mine = theirs = params
    for _ in range(2):
        mine, theirs = pipelined(mine, batch), reference(theirs, batch)
        assert_trees_close(mine, theirs)
    assert len(pipelined.get_plan(params, batch).stages) == 2


@pytest.mark.parametrize("config", [GPTConfig(vocab=64, hidden=32, layers=2, heads=2, seq_len=8),
                                    MoEConfig(vocab=64, hidden=32, layers=2, heads=2, seq_len=8)],
                         ids=["gpt", "moe"])
def test_transformer_with_adam_matches_jit(config):
    model = build(config)
    params, opt_state, batch = model.init(jax.random.key(2), 8)
    method = PipeshardParallel(num_micro_batches=2, layer_option=AutoLayerOption(layer_num=2),
                               stage_option=ManualStageOption((1, 1), ((1, 4), (1, 4))), batch_argnums=(2,))
    run_both(model.train_step, method, (params, opt_state, batch), steps=2, state_args=2)


def crossings(pipelined, *args) -> tuple[list[int], list[int]]:
    """The elements of each tensor crossing meshes: (per micro-batch, once per step)."""
    executable = pipelined.get_executable(*args)
    sizes = {key: math.prod(transfer.shape) for key, transfer in executable.transfers.items()}
    step = sorted(n for key, n in sizes.items() if key in executable.flow.step_transfers)
    return sorted(n for key, n in sizes.items() if key not in executable.flow.step_transfers), step


def four_stage_gpt(batch_argnums: tuple[int, ...]) -> PipeshardParallel:
    return PipeshardParallel(num_micro_batches=2, layer_option=AutoLayerOption(layer_num=4),
                             stage_option=UniformStageOption(num_stages=4), batch_argnums=batch_argnums)


def test_each_stage_updates_its_own_parameters():
    # Alpa's apply-gradient split: Adam's moments and the new parameters stay on their
    # stage's mesh, so a 4-stage GPT moves exactly what it moves with plain SGD (the
    # activations and their gradients), and nothing once per step: the step counter and
    # bias corrections are recomputed on every mesh. (Before: 76 parameter-sized moves.)
    config = GPTConfig(vocab=64, hidden=32, layers=4, heads=2, seq_len=8)
    model = build(config)
    params, opt_state, batch = model.init(jax.random.key(2), 8)

    def sgd_step(params, batch):
        loss, grads = jax.value_and_grad(model.loss)(params, batch)
        return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), loss

    adam = parallelize(model.train_step, method=four_stage_gpt((2,)))
    sgd = parallelize(sgd_step, method=four_stage_gpt((1,)))
    assert len(adam.get_plan(params, opt_state, batch).stages) == 4
    per_micro_batch, per_step = crossings(adam, params, opt_state, batch)
    assert (per_micro_batch, per_step) == crossings(sgd, params, batch)
    assert per_step == [] and len(per_micro_batch) == 7  # 3 activations forward, 4 gradients back (1 to the loss)


def test_global_norm_clipping_crosses_meshes_as_scalars():
    # optax's clip_by_global_norm sums every parameter's squared gradient: each stage
    # sums its own, one scalar per stage crosses, and the updates run in a later apply
    # part of their stage. Adam's eps is large here: the attention's key bias has an
    # exactly-zero gradient, whose rounding noise Adam would otherwise blow up to lr.
    config = GPTConfig(vocab=64, hidden=32, layers=4, heads=2, seq_len=8)
    model = build(config)
    params, _, batch = model.init(jax.random.key(2), 8)
    tx = optax.chain(optax.clip_by_global_norm(0.5), optax.adamw(1e-2, eps=1e-3))

    def step(params, opt_state, batch):
        loss, grads = jax.value_and_grad(model.loss)(params, batch)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    pipelined = run_both(step, four_stage_gpt((2,)), (params, tx.init(params), batch), steps=2, state_args=2)
    per_micro_batch, per_step = crossings(pipelined, params, tx.init(params), batch)
    assert len(per_micro_batch) == 7
    assert per_step and set(per_step) == {1} and len(per_step) <= 3 * 3  # to one mesh and back


def hugging_face_gpt2(tx) -> tuple[train_state.TrainState, dict, Callable]:
    """A small transformers Flax GPT-2 (built from a config, no download) in a flax
    TrainState with ``tx``, a batch, and its next-token loss of (state, params, batch)."""
    model = FlaxGPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=64, n_positions=16), seed=0)
    state = train_state.TrainState.create(apply_fn=model.__call__, params=model.params, tx=tx)
    ids = jax.random.randint(jax.random.key(0), (8, 16), 0, 64)

    def loss(state, params, batch):
        logits = state.apply_fn(batch["ids"], params=params, train=False).logits
        return optax.softmax_cross_entropy_with_integer_labels(logits, batch["labels"]).mean()

    return state, {"ids": ids, "labels": jax.numpy.roll(ids, -1, axis=1)}, loss


TWO_STAGES = PipeshardParallel(num_micro_batches=2, layer_option=AutoLayerOption(layer_num=2),
                               stage_option=ManualStageOption((1, 1), ((1, 4), (1, 4))), batch_argnums=(1,))


def test_a_hugging_face_model_in_a_flax_train_state_pipelines():
    # Code nobody here wrote: transformers' Flax GPT-2 trained through flax's TrainState
    # and optax's AdamW; its step count starts as a Python int, and the second call must
    # not compile again.
    state, batch, loss = hugging_face_gpt2(optax.adamw(1e-3, eps=1e-3))

    def step(state, batch):
        value, grads = jax.value_and_grad(lambda p: loss(state, p, batch))(state.params)
        return state.apply_gradients(grads=grads), value

    pipelined = run_both(step, TWO_STAGES, (state, batch), steps=2)
    assert pipelined.num_compilations == 1


def test_a_hugging_face_step_with_jax_grad_and_clipping_returns_only_the_state():
    # The same GPT-2 in a TrainState, written the most common way: jax.grad (no loss to
    # find the backward pass from), optax's clip_by_global_norm chained before AdamW (a
    # scalar summed over both stages' gradients), and only the new state comes back.
    state, batch, loss = hugging_face_gpt2(optax.chain(optax.clip_by_global_norm(0.5), optax.adamw(1e-3, eps=1e-3)))

    def step(state, batch):
        return state.apply_gradients(grads=jax.grad(lambda p: loss(state, p, batch))(state.params))

    pipelined, reference = parallelize(step, method=TWO_STAGES), jax.jit(step)
    mine = theirs = state
    for _ in range(2):
        mine, theirs = pipelined(mine, batch), reference(theirs, batch)
        assert_trees_close(mine, theirs)
    assert len(pipelined.get_plan(state, batch).stages) == 2 and pipelined.num_compilations == 1


@pytest.mark.parametrize("progress", [True, False])
def test_the_first_call_says_what_it_is_doing(progress, capsys, monkeypatch):
    # A first call can take a minute: a line per phase on stderr, even when it is not a
    # terminal, unless the application configured logging (pytest does: drop its handler).
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    model = build(MLPConfig(sizes=(16, 64, 64, 64, 8)))
    params, batch = model.init(jax.random.key(1), 16)
    method = PipeshardParallel(num_micro_batches=2, layer_option=AutoLayerOption(layer_num=2),
                               stage_option=UniformStageOption(num_stages=2), progress=progress)
    step = parallelize(model.train_step, method=method)
    step(params, batch)
    lines = capsys.readouterr().err.splitlines()
    phases = ["traced and lowered in", "stage construction: DP over", "stages, predicted", "first step in"]
    if progress:
        for phase in phases:
            assert any(line.startswith("alpa-mlir: ") and phase in line for line in lines), (phase, lines)
    else:
        assert not any(line.startswith("alpa-mlir: ") for line in lines)
    step(params, batch)
    assert not any(line.startswith("alpa-mlir: ") for line in capsys.readouterr().err.splitlines())


def test_donated_state_is_freed_after_the_step():
    model = build(MLPConfig(sizes=(16, 64, 64, 64, 8)))
    params, batch = model.init(jax.random.key(1), 16)
    expected = jax.jit(model.train_step)(params, batch)
    method = PipeshardParallel(num_micro_batches=2, layer_option=AutoLayerOption(layer_num=2),
                               stage_option=UniformStageOption(num_stages=2))
    step = parallelize(model.train_step, method=method, donate_argnums=(0,))
    given = jax.tree.map(jax.numpy.array, params)
    out = step(given, batch)
    assert_trees_close(out, expected)
    assert all(leaf.is_deleted() for leaf in jax.tree.leaves(given))
    assert not any(leaf.is_deleted() for leaf in jax.tree.leaves(batch))
    with pytest.raises(ValueError, match=r"args\[0\]\[0\]\['b'\] of .* is a deleted array"):
        step(given, batch)
    shared = jax.numpy.array(params[0]["b"])  # one array as two donated leaves: refused before anything runs
    twice = [dict(p) for p in params]
    twice[0]["b"] = twice[1]["b"] = shared
    with pytest.raises(ValueError, match=r"args\[0\]\[0\]\['b'\] of .* is donated but the same array is also "
                                         r"passed as args\[0\]\[1\]\['b'\]; pass a copy"):
        step(twice, batch)
    assert not shared.is_deleted()
    # The returned state feeds the next step, and each apply part writes the new parameters
    # into the buffers of the old ones (XLA aliases them): no second copy during the step.
    apply_parts = {name: e.donated for name, e in step.get_executable(out[0], batch).executables.items()
                   if "_apply" in name}
    assert len(apply_parts) == 2 and sum(sum(d) for d in apply_parts.values()) == len(jax.tree.leaves(params))

    def buffers(tree) -> set[int]:
        return {s.data.unsafe_buffer_pointer() for leaf in jax.tree.leaves(tree) for s in leaf.addressable_shards}

    old_buffers = buffers(out[0])
    again = step(out[0], batch)
    assert buffers(again[0]) == old_buffers
    assert_trees_close(again, jax.jit(model.train_step)(expected[0], batch))


def test_batch_must_divide_into_micro_batches():
    model = build(MLPConfig())
    params, batch = model.init(jax.random.key(0), 6)
    step = parallelize(model.train_step, method=PipeshardParallel(num_micro_batches=4,
                                                                   layer_option=AutoLayerOption(layer_num=1)))
    with pytest.raises(ValueError, match=r"args\[1\]\['x'\].*num_micro_batches=4"):
        step(params, batch)


def test_bad_options_name_the_option():
    with pytest.raises(ValueError, match="num_micro_batches"):
        PipeshardParallel(num_micro_batches=0)
    with pytest.raises(ValueError, match="pipeline_schedule"):
        PipeshardParallel(pipeline_schedule="zigzag")
    with pytest.raises(ValueError, match="'pipeline_schedule' must be '1f1b', 'gpipe', 'interleaved-1f1b' or "
                                         "'inference'"):
        PipeshardParallel(pipeline_schedule="1F1B")
    with pytest.raises(ValueError, match="stage-layers|stage_layers"):
        PipeshardParallel(stage_option=ManualStageOption((), ()))
    with pytest.raises(ValueError, match="option 'device-profile': cannot read a device profile from nowhere.json"):
        PipeshardParallel(device_profile="nowhere.json")


def test_misused_layer_and_stage_options_are_errors_in_api_terms():
    # A step with no boundaries under the default ManualLayerOption: the error names the API's ways out.
    model = build(MLPConfig(sizes=(16, 32, 8), boundaries=False))
    params, batch = model.init(jax.random.key(0), 16)
    with pytest.raises(AutoShardingError, match=r"no layers to pipeline: mark them with alpa_mlir.mark_pipeline_"
                                                r"boundary.*layer_option=AutoLayerOption\(layer_num=...\)"):
        parallelize(model.train_step, method=PipeshardParallel(num_micro_batches=2))(params, batch)
    # Submeshes that ask for more devices than there are: said in devices, not in DP terms.
    method = PipeshardParallel(stage_option=ManualStageOption((1, 1), ((1, 8), (1, 8))))
    with pytest.raises(ValueError, match=r"ManualStageOption's submeshes \[\(1, 8\), \(1, 8\)\] hold 16 "
                                         r"devices, but the cluster \(1x8\) has 8"):
        parallelize(model.train_step, method=method)(params, batch)


def test_stage_costs_assume_the_local_device_profile_unless_told_otherwise(tmp_path):
    def stage_pass(method: PipeshardParallel) -> StageConstructionPass:
        return next(p for p in method.passes(1, 8) if isinstance(p, StageConstructionPass))

    assert stage_pass(PipeshardParallel()).device_profile == "local"
    assert stage_pass(PipeshardParallel(device_profile="")).device_profile == ""
    assert stage_pass(PipeshardParallel(stage_option=ManualStageOption((1,), ((1, 8),)))).device_profile == "local"


def test_a_default_delta_no_clustering_keeps_to_is_relaxed_with_a_warning():
    """Three dense layers of unequal FLOPs (16 -> 64 -> 64 -> 8): no cut into 2 layers keeps
    each within 1.6x of the mean. Without a delta the least that admits one (0.618) is used,
    and said; a delta given is kept to, and the error names the one that would do."""
    sizes = (16, 64, 64, 8)
    keys = jax.random.split(jax.random.key(0), len(sizes))
    params = [jax.random.normal(k, (a, b)) / np.sqrt(a) for k, a, b in zip(keys, sizes, sizes[1:])]
    x = jax.random.normal(keys[-1], (32, sizes[0]))

    def step(params, x):
        def loss(params):
            h = x
            for w in params:
                h = jax.nn.relu(h @ w)
            return (h ** 2).mean()
        return [w - 0.1 * g for w, g in zip(params, jax.grad(loss)(params))]

    def method(**layer):
        return PipeshardParallel(num_micro_batches=2, layer_option=AutoLayerOption(layer_num=2, **layer),
                                 stage_option=UniformStageOption(num_stages=2), device_profile="")

    with pytest.warns(AutoShardingWarning, match=r"at delta = 0\.6 \(Sec\. 5\.2\); clustered at delta = 0\.6\d+, "
                                                 "the least that does"):
        assert_trees_close(parallelize(step, method=method())(params, x), jax.jit(step)(params, x))
    with pytest.raises(AutoShardingError, match=r"at delta = 0\.6 \(Sec\. 5\.2\); it needs delta >= 0\.6"):
        parallelize(step, method=method(delta=0.6))(params, x)
