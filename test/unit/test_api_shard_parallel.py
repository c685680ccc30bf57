"""The user API: parallelize with ShardParallel and its presets, auto_shard, plan save/load, errors.

Runs on the eight virtual CPU devices of conftest.py. Every numeric check compares
against plain ``jax.jit`` on one device.
"""

from __future__ import annotations

import dataclasses
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alpa_mlir import (
    AutoLayerOption,
    AutoShardingError,
    AutoShardingWarning,
    DataParallel,
    ManualStageOption,
    PipeshardParallel,
    PlanError,
    ShardingPlan,
    ShardParallel,
    Zero3Parallel,
    auto_shard,
    parallelize,
)
from alpa_mlir.dialect.jax_interop import spec_to_partition_spec

TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}


def mlp_params(width: int = 32, features: int = 16, outputs: int = 8) -> dict[str, jax.Array]:
    k1, k2 = jax.random.split(jax.random.key(0))
    return {"w1": jax.random.normal(k1, (features, width)) / 4, "b1": jnp.zeros(width),
            "w2": jax.random.normal(k2, (width, outputs)) / 4, "b2": jnp.zeros(outputs)}


def mlp_batch(size: int = 64, features: int = 16, outputs: int = 8) -> tuple[jax.Array, jax.Array]:
    kx, ky = jax.random.split(jax.random.key(1))
    return jax.random.normal(kx, (size, features)), jax.random.normal(ky, (size, outputs))


def loss_fn(params, batch):
    x, y = batch
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.mean((hidden @ params["w2"] + params["b2"] - y) ** 2)


def train_step(params, batch, learning_rate=0.1):
    """Two layers, SGD: the program of Alpa's examples, small enough for CPU."""
    loss, grads = jax.value_and_grad(loss_fn)(params, batch)
    return jax.tree.map(lambda p, g: p - learning_rate * g, params, grads), loss


def copy(tree):
    return jax.tree.map(jnp.copy, tree)


def assert_trees_close(actual, expected) -> None:
    assert jax.tree.structure(actual) == jax.tree.structure(expected)
    for a, e in zip(jax.tree.leaves(actual), jax.tree.leaves(expected)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), **TOLERANCE)


def argument_specs(plan: ShardingPlan, numbers) -> list:
    return [plan.arguments[i].spec for i in numbers]


# Flat argument numbers of train_step(params, batch): params leaves sorted by key, then x, y.
PARAM_ARGS, BATCH_ARGS = (0, 1, 2, 3), (4, 5)


# ----------------------------------------------------------------------------- parallelize


def test_mlp_training_matches_jit_and_compiles_once():
    traces = []

    def counted_step(params, batch):
        traces.append(1)
        return train_step(params, batch)

    step = parallelize(counted_step, method=ShardParallel(mesh_shape=(2, 4)))
    reference = jax.jit(train_step)
    params, expected = mlp_params(), mlp_params()
    batch = mlp_batch()
    for _ in range(3):
        params, loss = step(params, batch)
        expected, expected_loss = reference(expected, batch)
        np.testing.assert_allclose(float(loss), float(expected_loss), **TOLERANCE)
    assert_trees_close(params, expected)
    # Later calls take the outputs of earlier ones (other placements): still one program.
    assert step.num_compilations == 1
    assert len(traces) == 1
    assert len(loss.sharding.device_set) == 8
    assert all(len(p.sharding.device_set) == 8 for p in jax.tree.leaves(params))


def test_a_count_started_from_a_python_int_stays_weakly_typed():
    # flax's TrainState starts its step count at the Python int 0: a weakly typed int32.
    # jax.jit returns step + 1 weakly typed too; so must we, or the next call's
    # signature differs and the step is planned and compiled again.
    def counted(state, batch):
        params, _ = train_step(state["params"], batch)
        return {"params": params, "step": state["step"] + 1}

    step = parallelize(counted, method=ShardParallel(mesh_shape=(2, 4)))
    state = {"params": mlp_params(), "step": 0}
    for _ in range(3):
        state = step(state, mlp_batch())
    assert step.num_compilations == 1
    assert jax.typeof(state["step"]).weak_type and state["step"].dtype == np.int32
    assert int(state["step"]) == 3


@pytest.mark.parametrize("mesh_shape", [(8,), (2, 4)])
def test_state_keeps_its_sharding_and_the_batch_comes_in_split(mesh_shape):
    plan = parallelize(train_step, method=ShardParallel(mesh_shape=mesh_shape)).get_plan(mlp_params(), mlp_batch())
    # The params leaves come back as results 0-3 (result 4 is the loss), each in its
    # argument's sharding, with or without donation.
    assert plan.tied == tuple((i, i) for i in PARAM_ARGS)
    for i in PARAM_ARGS:
        assert plan.arguments[i].spec == plan.results[i].spec
    for i in BATCH_ARGS:
        assert plan.arguments[i].spec.dims[0], f"batch argument {i} is not split on its batch dimension"


def test_steady_state_off_ties_nothing():
    method = ShardParallel(mesh_shape=(2, 4), steady_state=False)
    assert parallelize(train_step, method=method).get_plan(mlp_params(), mlp_batch()).tied == ()


def test_runs_on_the_devices_it_is_given():
    devices = jax.devices()[4:8]
    step = parallelize(train_step, method=ShardParallel(mesh_shape=(2, 2), devices=devices))
    new_params, loss = step(mlp_params(), mlp_batch())
    assert loss.sharding.device_set == set(devices)
    assert step.get_plan(mlp_params(), mlp_batch()).mesh.shape == (2, 2)
    assert_trees_close((new_params, loss), jax.jit(train_step)(mlp_params(), mlp_batch()))


def test_new_shapes_are_planned_again():
    step = parallelize(train_step, method=ShardParallel(mesh_shape=(2, 4)))
    step(mlp_params(), mlp_batch(64))
    _, loss = step(mlp_params(), mlp_batch(32))
    assert step.num_compilations == 2
    np.testing.assert_allclose(float(loss), float(jax.jit(train_step)(mlp_params(), mlp_batch(32))[1]), **TOLERANCE)


def test_static_argnums_are_part_of_the_signature():
    step = parallelize(train_step, method=ShardParallel(mesh_shape=(2, 4)), static_argnums=(2,))
    params, batch = mlp_params(), mlp_batch()
    for learning_rate in (0.1, 0.5, 0.1):
        new_params, _ = step(params, batch, learning_rate)
        assert_trees_close(new_params, jax.jit(train_step, static_argnums=(2,))(params, batch, learning_rate)[0])
    assert step.num_compilations == 2
    with pytest.raises(TypeError, match="not hashable"):
        step(params, batch, [0.1])


def test_donated_arguments_are_deleted_like_jit():
    step = parallelize(train_step, method=ShardParallel(mesh_shape=(2, 4)), donate_argnums=(0,))
    params, batch = mlp_params(), mlp_batch()
    expected = jax.jit(train_step)(params, batch)
    given = copy(params)
    new_params, loss = step(given, batch)
    assert all(p.is_deleted() for p in jax.tree.leaves(given))
    assert not any(b.is_deleted() for b in batch)
    assert_trees_close((new_params, loss), expected)
    # The outputs feed the next step; they are consumed in turn.
    newer_params, _ = step(new_params, batch)
    assert all(p.is_deleted() for p in jax.tree.leaves(new_params))
    assert_trees_close(newer_params, jax.jit(train_step)(*expected[:1], batch)[0])


def test_decorator_forms_and_pytree_outputs():
    @parallelize
    def plain(params, batch):
        return {"loss": loss_fn(params, batch), "scaled": [params["w1"] * 2]}

    @parallelize(method=ShardParallel(mesh_shape=(2, 4)), batch_argnums=(1,))
    def configured(params, batch):
        return {"loss": loss_fn(params, batch), "scaled": [params["w1"] * 2]}

    expected = {"loss": loss_fn(mlp_params(), mlp_batch()), "scaled": [mlp_params()["w1"] * 2]}
    for function in (plain, configured):
        assert function.__name__ in ("plain", "configured")
        assert_trees_close(function(mlp_params(), mlp_batch()), expected)
        assert_trees_close(function(mlp_params(), batch=mlp_batch()), expected)


def test_inspection_without_running():
    step = parallelize(train_step, method=ShardParallel(mesh_shape=(2, 4)))
    abstract = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), (mlp_params(), mlp_batch()))
    plan = step.get_plan(*abstract)
    assert plan.mesh.shape == (2, 4)
    assert [v.shape for v in plan.arguments] == [(32,), (8,), (16, 32), (32, 8), (64, 16), (64, 8)]
    assert "mhlo.sharding" in step.get_module_text(*abstract)
    assert "num_partitions=8" in step.get_hlo_text(*abstract)
    assert "stablehlo.dot_general" in step.lower(*abstract).as_text()
    assert step.num_compilations == 1


# ----------------------------------------------------------------------------- presets


@pytest.mark.parametrize("mesh_shape", [None, (2, 4)])
def test_data_parallel_splits_the_batch_and_replicates_parameters(mesh_shape):
    step = parallelize(train_step, method=DataParallel(mesh_shape=mesh_shape))
    params, batch = mlp_params(), mlp_batch()
    plan = step.get_plan(params, batch)
    for spec in argument_specs(plan, BATCH_ARGS):
        assert spec.num_shards(0, plan.mesh) == 8 and spec.num_shards(1, plan.mesh) == 1
    assert all(spec.is_replicated for spec in argument_specs(plan, PARAM_ARGS))
    assert_trees_close(step(params, batch), jax.jit(train_step)(params, batch))


def test_zero3_shards_parameters_under_a_memory_budget():
    # Parameters of 512 KiB each: only plans that shard them fit 1.5 MB per device.
    # XLA allocates 2.1 MiB for the plan (the model predicts 760 KiB: issue 30's memory
    # model errs low on this MLP), which planning again against less does not mend: it says so.
    params, batch = mlp_params(512, 256, 256), mlp_batch(64, 256, 256)
    step = parallelize(train_step, method=Zero3Parallel(memory_budget=1.5e6), donate_argnums=(0,))
    with pytest.warns(AutoShardingWarning, match="XLA allocates .* over the memory budget of 1.431 MiB"):
        plan = step.get_plan(params, batch)
    assert any(not spec.is_replicated for spec in argument_specs(plan, PARAM_ARGS))
    for spec in argument_specs(plan, BATCH_ARGS):
        assert spec.num_shards(0, plan.mesh) == 8
    expected = jax.jit(train_step)(params, batch)
    assert_trees_close(step(copy(params), batch), expected)


def test_zero3_shards_parameters_without_a_budget():
    plan = parallelize(train_step, method=Zero3Parallel()).get_plan(mlp_params(512, 256, 256),
                                                                     mlp_batch(64, 256, 256))
    assert any(not spec.is_replicated for spec in argument_specs(plan, PARAM_ARGS))


def scaled_product(params, batch, mode):
    return batch @ params["w"] * (2.0 if mode == "double" else 1.0)


def test_static_and_donated_arguments_by_name_and_by_keyword():
    batch = jnp.ones((16, 8))
    expected = {mode: np.asarray(scaled_product({"w": jnp.ones((8, 8))}, batch, mode)) for mode in ("double", "one")}
    by_name = parallelize(scaled_product, static_argnames="mode", donate_argnames="params")
    params = {"w": jnp.ones((8, 8))}
    np.testing.assert_allclose(by_name(params, batch, mode="double"), expected["double"])
    assert params["w"].is_deleted()
    # A static argument given by number and passed by keyword is static too (as under jax.jit).
    by_number = parallelize(scaled_product, static_argnums=2)
    for mode in ("double", "one"):
        np.testing.assert_allclose(by_number({"w": jnp.ones((8, 8))}, batch, mode=mode), expected[mode])
    np.testing.assert_allclose(by_number({"w": jnp.ones((8, 8))}, batch, "one"), expected["one"])
    assert by_number.num_compilations == 2  # one per mode, whether passed by keyword or position
    with pytest.raises(ValueError, match=r"static_argnames=\('nope',\): scaled_product has no positional "
                                         r"parameter 'nope' \(its positional parameters: params, batch, mode\)"):
        parallelize(scaled_product, static_argnames="nope")


def scaled_or_not(params, batch, mode="one"):
    return scaled_product(params, batch, mode)


@pytest.mark.parametrize("pipelined", [False, True])
def test_traced_calls_give_shapes_and_refuse_compilation(pipelined):
    # jax.eval_shape traces (through jax.jit); so does an enclosing jax.jit, which must not compile
    # the step with plain XLA behind the user's back: it is an error at lowering, with what to do.
    method = PipeshardParallel(layer_option=AutoLayerOption(layer_num=1),
                               stage_option=ManualStageOption((1,), ((1, 8),))) if pipelined else ShardParallel()
    step = parallelize(scaled_or_not, method=method, static_argnames="mode")
    params, batch = {"w": jnp.ones((8, 4))}, jnp.ones((16, 8))
    expected = jax.ShapeDtypeStruct((16, 4), jnp.float32)
    assert jax.eval_shape(step, params, batch) == expected
    assert step.eval_shape(params, batch, mode="double") == expected  # static by name: as jax.jit(...).eval_shape
    assert step.num_compilations == 0
    refusal = r"scaled_or_not is parallelized by alpa_mlir.parallelize, which compiles and runs it itself: it cannot "
    with pytest.raises(TypeError, match=refusal + "be compiled inside jax.jit"):
        jax.jit(step)(params, batch)
    with pytest.raises(TypeError, match=refusal + r"be differentiated \(jax.grad"):
        jax.grad(lambda w: step({"w": w}, batch).sum())(params["w"])
    with pytest.raises(TypeError, match=refusal + r"be batched \(jax.vmap\)"):
        jax.vmap(step, in_axes=(None, 0))(params, jnp.ones((2, 16, 8)))
    if not pipelined:  # (a pipeline needs a training step) a static parameter left to its default is fine
        np.testing.assert_allclose(step(params, batch), np.full((16, 4), 8.0))


def test_argnums_past_the_arguments_name_the_function():
    with pytest.raises(ValueError, match=r"batch_argnums=\(5,\) names positional argument 5, but train_step was "
                                         r"called with 2 positional arguments"):
        parallelize(train_step, batch_argnums=(5,))(mlp_params(), mlp_batch())
    # The methods' default batch_argnums=(1,) on a one-argument function: no batch, no error.
    np.testing.assert_allclose(parallelize(lambda x: x * 2)(jnp.ones(8)), 2 * np.ones(8))


def test_data_parallel_needs_a_batch_argument():
    with pytest.raises(ValueError, match="batch_argnums"):
        parallelize(train_step, method=DataParallel(batch_argnums=(3,)))(mlp_params(), mlp_batch())


# ----------------------------------------------------------------------------- auto_shard


def test_auto_shard_shardings_work_with_plain_jit():
    params, batch = mlp_params(), mlp_batch()
    result = auto_shard(train_step, params, batch, mesh=(2, 4), method=ShardParallel())
    assert jax.tree.structure(result.in_shardings) == jax.tree.structure((params, batch))
    assert all(isinstance(s, jax.sharding.NamedSharding) for s in jax.tree.leaves(result.in_shardings))
    jitted = jax.jit(train_step, in_shardings=result.in_shardings, out_shardings=result.out_shardings)
    # A training loop of plain jax.jit steps: each step takes the state as the last one
    # returned it (the plan ties the state), with no device_put in between.
    new_params, expected = params, params
    for _ in range(3):
        new_params, loss = jitted(new_params, batch)
        expected, expected_loss = jax.jit(train_step)(expected, batch)
        assert_trees_close((new_params, loss), (expected, expected_loss))
    for array, sharding in zip(jax.tree.leaves(new_params), jax.tree.leaves(result.out_shardings[0])):
        assert array.sharding.is_equivalent_to(sharding, array.ndim)
    # The plan's specs are what the shardings say.
    assert result.in_shardings[1][0].spec == spec_to_partition_spec(result.plan.arguments[4].spec, result.plan.mesh)


def test_auto_shard_of_a_lowered_function_on_a_jax_mesh():
    devices = np.array(jax.devices()[:8]).reshape(4, 2)
    mesh = jax.sharding.Mesh(devices, ("data", "model"))
    lowered = jax.jit(train_step).lower(mlp_params(), mlp_batch())
    result = auto_shard(lowered, mesh=mesh, method=DataParallel())
    x_sharding = result.in_shardings[1][0]
    assert x_sharding.mesh.axis_names == ("data", "model")
    assert x_sharding.spec[0] == ("data", "model")
    jitted = jax.jit(train_step, in_shardings=result.in_shardings, out_shardings=result.out_shardings)
    assert_trees_close(jitted(mlp_params(), mlp_batch()), jax.jit(train_step)(mlp_params(), mlp_batch()))


# ----------------------------------------------------------------------------- save / load


def test_saved_plan_round_trip(tmp_path):
    path = tmp_path / "plan.json"
    params, batch = mlp_params(), mlp_batch()
    searched = parallelize(train_step, method=ShardParallel(mesh_shape=(2, 4)))
    saved = searched.save_plan(path, params, batch)
    assert saved.plan == searched.get_plan(params, batch)
    assert ShardingPlan.load(path) == saved.plan.compact()  # saved without per-op entries (details=False)

    loaded = parallelize(train_step, load_plan=path)
    assert loaded.get_plan(params, batch) == saved.plan.compact()
    assert loaded.get_module_text(params, batch) == searched.get_module_text(params, batch)
    assert_trees_close(loaded(params, batch), jax.jit(train_step)(params, batch))

    # A bare ShardingPlan fixes the arguments' and results' shardings; the rest is planned again.
    pinned = parallelize(train_step, method=ShardParallel(plan=ShardingPlan.load(path)))
    again = pinned.get_plan(params, batch)
    assert [v.spec for v in again.arguments] == [v.spec for v in saved.plan.arguments]
    assert [v.spec for v in again.results] == [v.spec for v in saved.plan.results]


def test_loading_a_plan_for_other_shapes_raises_plan_error(tmp_path):
    path = tmp_path / "plan.json"
    parallelize(train_step, method=ShardParallel(mesh_shape=(2, 4))).save_plan(path, mlp_params(), mlp_batch())
    loaded = parallelize(train_step, load_plan=path)
    with pytest.raises(PlanError, match=r"args\[1\]\[0\].*f32\[32,16\].*f32\[64,16\]"):
        loaded(mlp_params(), mlp_batch(32))
    with pytest.raises(PlanError, match="mesh"):
        parallelize(train_step, method=ShardParallel(mesh_shape=(1, 8), plan=path))(mlp_params(), mlp_batch())
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(PlanError, match="cannot read plan"):
        ShardParallel(plan=tmp_path / "broken.json")


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize("options, option", [
    ({"zero_stage": 5, "force_data_parallel": True}, "zero_stage"),
    ({"zero_stage": 2}, "zero_stage"),
    ({"keep_user_shardings": "some"}, "keep_user_shardings"),
    ({"memory_budget": -1.0}, "memory_budget"),
    ({"mesh_shape": (2, 4), "mesh_alpha": (1.0, 2.0, 3.0)}, "mesh_alpha"),
    ({"prefer_reduce_scatter": "yes"}, "prefer_reduce_scatter"),
    ({"memory_budgt": 1e9}, "memory_budgt"),
])
def test_bad_method_option_names_the_option(options, option):
    with pytest.raises(ValueError, match=f"'{option}'"):
        ShardParallel(**options)


def test_mesh_larger_than_the_devices_says_so():
    with pytest.raises(ValueError, match="needs 16 devices"):
        parallelize(train_step, method=ShardParallel(mesh_shape=(4, 4)))(mlp_params(), mlp_batch())


def test_op_without_a_sharding_rule_warns_at_the_call():
    def upper_factor(x):
        return jnp.linalg.qr(x)[1]  # LAPACK custom_call: no sharding rule, runs replicated

    x = jnp.arange(64.0).reshape(8, 8) / 64 + jnp.eye(8)
    with pytest.warns(AutoShardingWarning, match="no sharding rule for 'stablehlo.custom_call'") as caught:
        result = parallelize(upper_factor, method=ShardParallel(mesh_shape=(2, 4)))(x)
    assert any(w.filename == __file__ for w in caught)
    np.testing.assert_allclose(np.abs(np.asarray(result)), np.abs(np.asarray(upper_factor(x))), **TOLERANCE)


def test_rejected_function_raises_auto_sharding_error():
    step = parallelize(train_step, method=ShardParallel(mesh_shape=(2, 4), memory_budget=64))
    with pytest.raises(AutoShardingError, match="memory budget") as caught:
        step(mlp_params(), mlp_batch())
    assert "train_step" in str(caught.value)
    assert "Failure while executing pass pipeline" not in str(caught.value)
    assert not isinstance(caught.value, jax._src.lib.mlir.ir.MLIRError)


class FakeDevice:
    def __init__(self, stats: dict | None) -> None:
        self.stats = stats

    def memory_stats(self) -> dict | None:
        return self.stats


def test_the_default_budget_is_the_devices_memory_less_the_reserve():
    from alpa_mlir.methods import MEMORY_RESERVE, device_memory_budget

    gpus = [FakeDevice({"bytes_limit": 80e9}), FakeDevice({"bytes_limit": 40e9})]
    assert device_memory_budget(gpus) == pytest.approx(40e9 * (1 - MEMORY_RESERVE))  # the smallest device's
    assert device_memory_budget([*gpus, FakeDevice(None)]) == 0.0  # one device without a figure: no budget
    assert device_memory_budget(jax.devices()) == 0.0  # XLA:CPU reports none
    assert ShardParallel().memory_budget is None


def test_a_step_no_plan_fits_says_what_would_fit():
    step = parallelize(train_step, method=ShardParallel(mesh_shape=(2, 4), memory_budget=64))
    with pytest.raises(AutoShardingError, match=r"needs at least [\d.]+ KiB per device") as caught:
        step(mlp_params(), mlp_batch())
    message = str(caught.value)
    assert re.search(r"B micro-batches \(num_micro_batches=B\) or a batch B times smaller, B = 2: [\d.]+ KiB", message)
    assert "on twice the devices (16)" in message


def test_a_plan_xla_allocates_over_the_budget_for_is_planned_again_below_it(monkeypatch):
    # XLA's figure decides: where the compiled step is over the budget (here, as if XLA
    # allocated 5% over the budget, once), the step is planned again
    # against a lower budget, and the plan kept is one XLA allocates within the budget for.
    from alpa_mlir import models, parallel_function

    budgets, extra = [], []
    real_plan, real_bytes = parallel_function.plan_module, parallel_function.allocated_bytes

    def recording_plan(*args, memory_budget=None, **kwargs):
        budgets.append(memory_budget)
        return real_plan(*args, memory_budget=memory_budget, **kwargs)

    def inflated(executable):
        return extra.pop() if extra else real_bytes(executable)

    config = dataclasses.replace(models.GPT3["350M"], hidden=256, heads=4, layers=2, seq_len=128, vocab=2048)
    model = models.build(config)
    args = model.abstract_args(8)
    free = parallelize(model.train_step, method=ShardParallel(mesh_shape=(8,), batch_argnums=(2,)),
                       donate_argnums=(0, 1))
    budget = 0.8 * real_bytes(free.get_executable(*args))
    extra.append(1.05 * budget)
    monkeypatch.setattr(parallel_function, "plan_module", recording_plan)
    monkeypatch.setattr(parallel_function, "allocated_bytes", inflated)
    step = parallelize(model.train_step, method=ShardParallel(mesh_shape=(8,), batch_argnums=(2,),
                                                              memory_budget=budget), donate_argnums=(0, 1))
    plan = step.get_plan(*args)
    assert len(budgets) == 2 and budgets[0] == budget and budgets[1] < budget
    assert plan.peak_memory <= budgets[1]
    assert real_bytes(step.get_executable(*args)) <= budget
