"""Readable plans (issue 13, item 5): ``print(plan)``, ``plan.draw``, and compact saved plans.

The summary and the picture are checked on a plan built by hand (known shapes, specs and
bytes); the names, the compact file and its reload on a two-layer MLP planned on the eight virtual CPU
devices of conftest.py.
"""

from __future__ import annotations

import dataclasses
import json
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alpa_mlir import PlanError, ShardingPlan, ShardParallel, load_plan, parallelize
from alpa_mlir.dialect.mesh import DeviceMesh
from alpa_mlir.dialect.sharding import ShardingSpec
from alpa_mlir.plans.drawing import tile_of_devices
from alpa_mlir.plans.plan_summary import element_bytes, partition_spec_text
from alpa_mlir.plans.sharding_plan import Collective, CollectiveTotal, OpPlan, PeakMemory, ValuePlan

MESH = DeviceMesh((2, 4), axis_names=("data", "model"))


def value(name: str, shape: tuple[int, ...], dtype: str, dims: tuple[tuple[int, ...], ...]) -> ValuePlan:
    spec = ShardingSpec(dims)
    return ValuePlan(shape, dtype, spec, spec.to_mhlo(MESH), name)


def known_plan() -> ShardingPlan:
    reduce = Collective("all-reduce", (1,), 2048.0, 3.0)
    gather = Collective("all-gather", (0,), 512.0, 1.0)
    return ShardingPlan(
        mesh=MESH,
        arguments=(value("params['w']", (16, 32), "f32", ((), (1,))),   # 16 x 8 x 4 B = 512 B per device
                   value("params['b']", (32,), "bf16", ((1,),)),         # 8 x 2 B = 16 B
                   value("batch", (64, 16), "f32", ((0, 1), ())),        # 8 x 16 x 4 B = 512 B
                   value("step", (), "i32", ())),                        # 4 B, replicated
        results=(value("result[0]['w']", (16, 32), "f32", ((), (1,))),
                 value("result[1]", (), "f32", ())),
        ops=(OpPlan("stablehlo.dot_general", "loc(unknown)", "s->s", ("{replicated}",), (reduce,)),
             OpPlan("stablehlo.add", "loc(unknown)", "r", ("{replicated}",), (reduce,), ((0, gather),))),
        solver={"solver": "HIGHS", "status": "optimal", "nodes": 7, "solve_seconds": 0.01},
        objective=7.0,
        tied=((0, 0),))


def test_the_summary_has_every_argument_with_its_shape_spec_and_bytes():
    text = str(known_plan())
    lines = text.splitlines()
    assert lines[0] == "ShardingPlan on mesh 2 x 4 (data=2, model=4; devices 0-7)"
    assert "arguments: 4, 6.066 KiB in all, 1.02 KiB per device (1 replicated)" in lines  # 2048+64+4096+4 B
    row = {line.split()[1]: line.split() for line in lines if line.startswith("  ") and line.split()[0].isdigit()}
    assert row["params['w']"][2:] == ["[16,32]", "f32", "RS^1", "P(None,", "'model')", "512", "B"]
    assert row["params['b']"][2:] == ["[32]", "bf16", "S^1", "P('model',)", "16", "B"]
    assert row["batch"][2:] == ["[64,16]", "f32", "S^{01}R", "P(('data',", "'model'),", "None)", "512", "B"]
    assert row["step"][2:] == ["[]", "i32", "scalar", "P()", "4", "B"]
    # The state result keeps its argument's sharding; only the other result is listed.
    assert "results: 2, 516 B per device; 1 keep their argument's sharding (training state)" in lines
    assert "result[1]" in row and "result[0]['w']" not in row
    # The collectives, summed per kind and mesh axes.
    assert "predicted communication (over 2 ops; bytes per device; cost in alpha-beta units):" in lines
    assert [line.split() for line in lines if line.lstrip().startswith(("all-", "total"))] == [
        ["all-reduce", "model", "2", "4", "KiB", "6"], ["all-gather", "data", "1", "512", "B", "1"],
        ["total", "3", "4.5", "KiB", "7"]]
    assert lines[-1].startswith("ILP (Eq. 1): objective 7, HIGHS, optimal, 7 nodes")


def test_the_summary_and_the_json_carry_the_predicted_memory():
    plan = dataclasses.replace(known_plan(), memory=PeakMemory(1024.0, 516.0, 512.0, 3072.0, "stablehlo.dot_general"))
    assert plan.peak_memory == 1024 + 516 - 512 + 3072
    assert ("predicted memory per device: 4.004 KiB (arguments 1 KiB + outputs 516 B - donated 512 B + peak "
            "temporaries 3 KiB, at stablehlo.dot_general)") in str(plan).splitlines()
    assert ShardingPlan.from_json(json.loads(json.dumps(plan.to_json(details=False)))).memory == plan.memory
    assert known_plan().peak_memory is None and "predicted memory" not in str(known_plan())


@pytest.mark.parametrize("dtype, size", [("f32", 4), ("bf16", 2), ("i1", 1), ("ui8", 1), ("i64", 8),
                                         ("f8E4M3FN", 1), ("complex<f32>", 8), ("!stablehlo.token", 0)])
def test_element_bytes(dtype, size):
    assert element_bytes(dtype) == size


def test_partition_specs_read_as_jax_writes_them():
    assert partition_spec_text(ShardingSpec(((0,), ())), ("x", "y")) == "P('x', None)"
    assert partition_spec_text(ShardingSpec(((1, 0),)), ("x", "y")) == "P(('y', 'x'),)"
    assert partition_spec_text(ShardingSpec(((),)), ("x", "y")) == "P(None)"


def test_a_compact_plan_keeps_all_but_the_ops_and_loads_back():
    plan = known_plan()
    compact, detailed = plan.to_json(details=False), plan.to_json()
    assert "ops" not in compact and len(detailed["ops"]) == 2
    assert len(json.dumps(compact)) < len(json.dumps(detailed))
    loaded = ShardingPlan.from_json(json.loads(json.dumps(compact)))
    assert loaded == plan.compact() and loaded.ops == ()
    assert loaded.arguments == plan.arguments and loaded.results == plan.results and loaded.tied == plan.tied
    assert loaded.num_ops == 2
    assert loaded.communication == (CollectiveTotal("all-reduce", (1,), 2, 4096.0, 6.0),
                                    CollectiveTotal("all-gather", (0,), 1, 512.0, 1.0))
    assert str(loaded) == str(plan)  # the summary needs no per-op entry
    assert ShardingPlan.from_json(json.loads(json.dumps(detailed))) == plan


def test_a_plan_without_names_still_loads():
    # Plans saved before values had names: no "name" entry; the summary numbers them.
    data = known_plan().to_json()
    for entry in data["arguments"] + data["results"]:
        del entry["name"]
    loaded = ShardingPlan.from_json(data)
    assert [v.name for v in loaded.arguments] == [""] * 4
    assert "argument 2" in str(loaded)


@pytest.mark.parametrize("dims", [((0,), (1,)), ((1,), (0,)), ((0, 1), ()), ((1, 0), ()), ((), (1,)), ((1,), ())])
def test_the_devices_of_a_tile_are_those_xla_gives_it(dims):
    # tile_of_devices is the picture's colouring; the tile assignment is what XLA runs.
    spec = ShardingSpec(dims)
    tiles = spec.tile_assignment(MESH)
    numbers = tile_of_devices(spec, MESH)
    per_tile = tiles.device_array().reshape(int(np.prod(spec.tile_shape(MESH))), -1)
    for tile, devices in enumerate(per_tile):
        assert {int(numbers[MESH.coordinates(int(d))]) for d in devices} == {tile}


def test_the_picture_has_one_row_per_tensor(tmp_path):
    plan = known_plan()
    figure = plan.draw(tmp_path / "plan.png")
    assert (tmp_path / "plan.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (axes,) = figure.axes
    assert [t.get_text() for t in axes.get_yticklabels()] == [
        "params['w'] [16, 32]", "params['b'] [32]", "batch [64, 16]", "step []"]
    with_results = plan.draw(results=True)
    assert len(with_results.axes[0].get_yticklabels()) == len(plan.arguments) + len(plan.results)
    legend = [t.get_text() for t in with_results.axes[0].get_legend().get_texts()]
    assert legend == ["not split (R)", "split over model", "split over data,model"]  # what the plan uses


def test_drawing_without_matplotlib_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(PlanError, match=r"needs matplotlib: pip install 'alpa-mlir\[plot\]'"):
        known_plan().draw()


# ----------------------------------------------------------------------------- through the API


def train_step(params, batch):
    x, y = batch
    loss = lambda p: jnp.mean((jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - y) ** 2)  # noqa: E731
    value, grads = jax.value_and_grad(loss)(params)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), value


def mlp_params() -> dict[str, jax.Array]:
    k1, k2 = jax.random.split(jax.random.key(0))
    return {"w1": jax.random.normal(k1, (16, 32)) / 4, "b1": jnp.zeros(32),
            "w2": jax.random.normal(k2, (32, 8)) / 4, "b2": jnp.zeros(8)}


def mlp_batch() -> tuple[jax.Array, jax.Array]:
    kx, ky = jax.random.split(jax.random.key(1))
    return jax.random.normal(kx, (64, 16)), jax.random.normal(ky, (64, 8))


def test_saved_plans_are_compact_named_and_reapply(tmp_path):
    params, batch = mlp_params(), mlp_batch()
    step = parallelize(train_step, method=ShardParallel(mesh_shape=(2, 4)))
    plan = step.get_plan(params, batch)
    assert [v.name for v in plan.arguments] == ["params['b1']", "params['b2']", "params['w1']", "params['w2']",
                                                "batch[0]", "batch[1]"]
    assert [v.name for v in plan.results][-1] == "result[1]"
    # w1 [16, 32] f32: whatever the plan, its summary row has the bytes its spec leaves on a device.
    w1 = plan.arguments[2]
    per_device = 16 * 32 * 4 // int(np.prod(w1.spec.tile_shape(plan.mesh)))
    (row,) = [line.split() for line in str(plan).splitlines() if "params['w1']" in line]
    assert row[1:5] == ["params['w1']", "[16,32]", "f32", str(w1.spec)] and row[-2:] == [str(per_device), "B"]

    compact, detailed = tmp_path / "compact.json", tmp_path / "detailed.json"
    step.save_plan(compact, params, batch)
    step.save_plan(detailed, params, batch, details=True)
    assert compact.stat().st_size < detailed.stat().st_size / 2
    assert "ops" not in json.loads(compact.read_text())
    assert load_plan(detailed).plan == plan and load_plan(compact).plan == plan.compact()
    assert "saved for train_step with its annotated module" in str(load_plan(compact))
    for path in (compact, detailed):
        again = parallelize(train_step, load_plan=path)
        assert again.get_module_text(params, batch) == step.get_module_text(params, batch)
        assert [v.sharding for v in again.get_plan(params, batch).arguments] == [v.sharding for v in plan.arguments]
        out, expected = again(params, batch), jax.jit(train_step)(params, batch)
        np.testing.assert_allclose(out[1], expected[1], rtol=1e-5)
