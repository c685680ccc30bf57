"""``alpa-auto-sharding`` on a two-layer MLP training step: the plans of Sec. 4 and what XLA makes of them.

Each case lowers the step with ``jax.jit``, runs ``alpa-import-pipeline`` and
``alpa-auto-sharding`` on a (1, 4) mesh of the virtual CPU devices (conftest.py), reads
the JSON plan the pass reports, and compiles the annotated module with XLA's SPMD
partitioner to compare the collectives the ILP predicted with the ones XLA inserted.

XLA:CPU facts the comparisons allow for (none of them is a planning error):

- its combiner merges independent all-reduces over the same devices into one tuple
  all-reduce, so collectives are compared as total bytes per (kind, mesh axes);
- it has no reduce-scatter: a planned reduce-scatter runs as an all-reduce of the same
  buffer followed by a local dynamic-slice (``strategies.py``, "Fidelity");
- it CSEs identical collectives, so a value resharded the same way for two users is
  communicated once.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src.lib.mlir import ir

import alpa_mlir
from alpa_mlir import DataParallel, ShardingPlan, Zero2Parallel, Zero3Parallel, models
from alpa_mlir.dialect.mesh import DeviceMesh
from alpa_mlir.dialect.pass_registry import element_text
from alpa_mlir.dialect.sharding import ShardingSpec
from alpa_mlir.lowering.spmd import SpmdExecutable, compile_module
from alpa_mlir.passes import parse_pipeline, run_pipeline
from alpa_mlir.runtime.mesh_executable import MeshExecutable
from alpa_mlir.services import provide

MESH = (1, 4)
AXIS = 1  # the mesh axis of size 4; axis 0 has size 1 and never splits anything
W1, W2, X, Y = range(4)  # flat arguments of mlp_step: params (sorted keys), then the batch
BATCH_ARGS = (X, Y)
F32 = 4


def mlp_step(params: dict, x: jax.Array, y: jax.Array) -> tuple[dict, jax.Array]:
    """relu(x @ w1) @ w2 against y, mean squared error, one SGD step (no biases: only matmul collectives)."""
    def loss(p: dict) -> jax.Array:
        return jnp.mean((jax.nn.relu(x @ p["w1"]) @ p["w2"] - y) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), value


def mlp_args(batch: int, hidden: int) -> tuple:
    """``(params, x, y)`` as NumPy arrays: hidden -> 4 hidden -> hidden, as in Megatron's MLP."""
    k1, k2, k3, k4 = jax.random.split(jax.random.key(0), 4)
    params = {"w1": jax.random.normal(k1, (hidden, 4 * hidden)) / math.sqrt(hidden),
              "w2": jax.random.normal(k2, (4 * hidden, hidden)) / math.sqrt(4 * hidden)}
    args = (params, jax.random.normal(k3, (batch, hidden)), jax.random.normal(k4, (batch, hidden)))
    return jax.tree.map(np.asarray, args)


def auto_shard(args: tuple, report: Path, options: str = "", step: Callable = mlp_step
               ) -> tuple[ir.Module, ShardingPlan]:
    module = ir.Module.parse(jax.jit(step).lower(*args).as_text(), context=alpa_mlir.dialect.make_context())
    if "mesh-shape=" not in options:  # a preset's options name the mesh and the report already
        options = f"mesh-shape={MESH[0]},{MESH[1]} report={report} {options}"
    pipeline = f"builtin.module(alpa-import-pipeline, alpa-auto-sharding{{{options}}})"
    run_pipeline(module, provide(parse_pipeline(pipeline)))
    return module, ShardingPlan.load(report)


def preset_options(method: alpa_mlir.ShardParallel, report: Path, batch_args: tuple[int, ...] = BATCH_ARGS) -> str:
    """The pass options a preset method sets, as ``alpa-auto-sharding{...}`` text minus the braces."""
    text = element_text(method.auto_sharding_pass(MESH, batch_args=batch_args, report=str(report)))
    return text[text.index("{") + 1:-1]


def totals(collectives) -> dict[tuple[str, tuple[int, ...]], float]:
    """Bytes per (kind, mesh axes): the form in which XLA's combined collectives compare."""
    total: Counter = Counter()
    for c in collectives:
        total[(c.kind, tuple(c.mesh_axes))] += c.bytes
    return dict(total)


def spec(plan: ShardingPlan, argument: int) -> ShardingSpec:
    return plan.arguments[argument].spec


def dots(plan: ShardingPlan) -> list:
    """The plan's dot_generals in program order: the two forward matmuls come first."""
    return [op for op in plan.ops if op.op == "stablehlo.dot_general"]


def run_and_compare(compiled: SpmdExecutable, args: tuple, step: Callable = mlp_step) -> None:
    """The partitioned step computes what the unsharded ``jax.jit`` step computes."""
    outputs = MeshExecutable(compiled)(*jax.tree.leaves(args))
    expected = jax.tree.leaves(jax.jit(step)(*args))
    assert len(outputs) == len(expected)
    for actual, wanted in zip(outputs, expected):
        np.testing.assert_allclose(np.asarray(actual), np.asarray(wanted), rtol=1e-4, atol=1e-6)


# ----------------------------------------------------------------------------- Megatron


MEGATRON = {"batch": 64, "hidden": 1024}  # weights of 16 MiB against 256 KiB activations


@pytest.fixture(scope="module")
def megatron(tmp_path_factory) -> tuple[tuple, ir.Module, ShardingPlan, Path]:
    args = mlp_args(**MEGATRON)
    report = tmp_path_factory.mktemp("megatron") / "plan.json"
    module, plan = auto_shard(args, report)
    return args, module, plan, report


def test_large_weights_give_the_megatron_plan(megatron) -> None:
    _, _, plan, _ = megatron
    batch, hidden = MEGATRON["batch"], MEGATRON["hidden"]
    # Megatron-LM's MLP: w1 split by columns, w2 by rows; the batch stays whole.
    assert spec(plan, W1).dims == ((), (AXIS,))
    assert spec(plan, W2).dims == ((AXIS,), ())
    assert spec(plan, X).is_replicated and spec(plan, Y).is_replicated
    first, second = dots(plan)[:2]
    assert first.results == ("{devices=[1,4]<=[4]}",) and not first.communication
    # The second matmul contracts the split hidden dimension: partial sums, one all-reduce
    # of the (batch, hidden) activation (Table 3) and nothing else in the whole step.
    assert second.results == ("{replicated}",)
    (all_reduce,) = second.communication
    assert (all_reduce.kind, all_reduce.mesh_axes, all_reduce.bytes) == ("all-reduce", (AXIS,), batch * hidden * F32)
    assert plan.predicted_collectives() == [all_reduce]
    assert all(not op.resharding for op in plan.ops)


def test_megatron_plan_compiles_to_one_all_reduce(megatron) -> None:
    args, module, plan, _ = megatron
    compiled = compile_module(module, DeviceMesh(MESH))
    (collective,) = compiled.collectives()
    assert (collective.kind, collective.mesh_axes) == ("all-reduce", (AXIS,))
    assert totals(compiled.collectives()) == totals(plan.predicted_collectives())
    run_and_compare(compiled, args)


# ----------------------------------------------------------------------------- data parallelism


DATA_PARALLEL = {"batch": 8192, "hidden": 128}  # weights of 256 KiB against 4 MiB activations


def weight_bytes(hidden: int) -> float:
    return hidden * 4 * hidden * F32


def test_large_batch_gives_data_parallelism(tmp_path) -> None:
    args = mlp_args(**DATA_PARALLEL)
    module, plan = auto_shard(args, tmp_path / "plan.json")
    assert spec(plan, X).dims == ((AXIS,), ()) and spec(plan, Y).dims == ((AXIS,), ())
    assert spec(plan, W1).is_replicated and spec(plan, W2).is_replicated
    # One all-reduce per weight gradient, of the gradient's size, and one of the scalar loss.
    predicted = plan.predicted_collectives()
    assert {(c.kind, c.mesh_axes) for c in predicted} == {("all-reduce", (AXIS,))}
    assert sorted(c.bytes for c in predicted) == [F32, weight_bytes(128), weight_bytes(128)]

    compiled = compile_module(module, DeviceMesh(MESH))
    assert totals(compiled.collectives()) == totals(predicted)
    # XLA:CPU's combiner sends the three as one tuple all-reduce.
    (combined,) = compiled.collectives()
    assert sorted(shape for shape, _ in combined.elements) == [(), (128, 512), (512, 128)]
    run_and_compare(compiled, args)


def test_prefer_reduce_scatter_reduce_scatters_the_gradients(tmp_path) -> None:
    args = mlp_args(**DATA_PARALLEL)
    module, plan = auto_shard(args, tmp_path / "plan.json", "prefer-reduce-scatter")
    predicted = totals(plan.predicted_collectives())
    assert predicted == {("reduce-scatter", (AXIS,)): 2 * weight_bytes(128), ("all-reduce", (AXIS,)): F32}
    # The update runs on the gradient's shard: the new weights come out sharded (ZeRO-2).
    assert all(not r.spec.is_replicated for r in plan.results[:2])

    compiled = compile_module(module, DeviceMesh(MESH))
    # XLA:CPU runs each reduce-scatter as an all-reduce of the same buffer and a dynamic-slice.
    assert totals(compiled.collectives()) == {("all-reduce", (AXIS,)): 2 * weight_bytes(128) + F32}
    assert "reduce-scatter" not in compiled.hlo_text
    assert "dynamic-slice" in compiled.hlo_text
    run_and_compare(compiled, args)


@pytest.mark.parametrize("sizes, options", [(MEGATRON, ""), (DATA_PARALLEL, ""),
                                            (DATA_PARALLEL, "prefer-reduce-scatter")])
def test_the_plan_does_not_depend_on_the_unit_of_alpha_and_beta(tmp_path, sizes, options) -> None:
    # A mesh priced in seconds (NVLink: 3.3e-12 s per byte) plans as one priced in bytes
    # (alpha = beta = 1): the tie-breaks are in bytes' time too (1e-12 per byte held,
    # unscaled, planned the data-parallel MLP ZeRO-3-like).
    args = mlp_args(**sizes)
    _, in_bytes = auto_shard(args, tmp_path / "bytes.json", options)
    unit = 1 / 300e9
    _, in_seconds = auto_shard(args, tmp_path / "seconds.json",
                               f"mesh-alpha={unit},{unit} mesh-beta={unit},{unit} {options}")
    assert [a.spec for a in in_seconds.arguments] == [a.spec for a in in_bytes.arguments]
    assert [op.results for op in in_seconds.ops] == [op.results for op in in_bytes.ops]
    assert in_seconds.objective == pytest.approx(in_bytes.objective * unit, rel=1e-3)


# ----------------------------------------------------------------------------- presets


def test_data_parallel_preset_overrides_the_megatron_plan(tmp_path) -> None:
    args = mlp_args(**MEGATRON)
    report = tmp_path / "plan.json"
    module, plan = auto_shard(args, report, preset_options(DataParallel(), report))
    assert spec(plan, X).dims == ((AXIS,), ()) and spec(plan, Y).dims == ((AXIS,), ())
    assert spec(plan, W1).is_replicated and spec(plan, W2).is_replicated
    assert all(r.spec.is_replicated for r in plan.results)
    weights = weight_bytes(MEGATRON["hidden"])
    assert totals(plan.predicted_collectives()) == {("all-reduce", (AXIS,)): 2 * weights + F32}
    compiled = compile_module(module, DeviceMesh(MESH))
    assert totals(compiled.collectives()) == totals(plan.predicted_collectives())


# The same MLP stepped with Adam, for the ZeRO stages: flat arguments are the parameters,
# Adam's first and second moments (one per parameter), its step count, then the batch.
ADAM = models.Adam()
MU, NU, ADAM_X, ADAM_Y = (2, 3), (4, 5), 7, 8  # 6: the step count
ADAM_BATCH_ARGS = (ADAM_X, ADAM_Y)


def mlp_loss(params: dict, batch: tuple) -> jax.Array:
    x, y = batch
    return jnp.mean((jax.nn.relu(x @ params["w1"]) @ params["w2"] - y) ** 2)


adam_step = ADAM.train_step(mlp_loss)


def adam_args(batch: int, hidden: int) -> tuple:
    params, x, y = mlp_args(batch, hidden)
    return params, jax.tree.map(np.asarray, ADAM.init(params)), (x, y)


def test_zero2_preset_shards_optimizer_state_and_update(tmp_path) -> None:
    args = adam_args(**MEGATRON)
    report = tmp_path / "plan.json"
    module, plan = auto_shard(args, report, preset_options(Zero2Parallel(), report, ADAM_BATCH_ARGS), adam_step)
    assert spec(plan, ADAM_X).dims == ((AXIS,), ())
    # Stage 2 keeps the parameters replicated for the forward pass ...
    assert spec(plan, W1).is_replicated and spec(plan, W2).is_replicated
    # ... shards Adam's moments, reduce-scatters the gradients and updates shards.
    assert all(not spec(plan, i).is_replicated for i in MU + NU)
    assert all(not plan.results[i].spec.is_replicated for i in (W1, W2, *MU, *NU))
    weights = weight_bytes(MEGATRON["hidden"])
    assert totals(plan.predicted_collectives()) == {("reduce-scatter", (AXIS,)): 2 * weights,
                                                    ("all-reduce", (AXIS,)): F32}
    compiled = compile_module(module, DeviceMesh(MESH))
    assert totals(compiled.collectives()) == {("all-reduce", (AXIS,)): 2 * weights + F32}
    run_and_compare(compiled, args, adam_step)


def test_zero3_preset_shards_the_parameters_too(tmp_path) -> None:
    args = adam_args(**MEGATRON)
    report = tmp_path / "plan.json"
    module, plan = auto_shard(args, report, preset_options(Zero3Parallel(), report, ADAM_BATCH_ARGS), adam_step)
    assert spec(plan, ADAM_X).dims == ((AXIS,), ())
    assert all(not spec(plan, i).is_replicated for i in (W1, W2, *MU, *NU))
    weights = weight_bytes(MEGATRON["hidden"])
    predicted = plan.predicted_collectives()
    # w1 is gathered for the forward matmul, w2 once for the forward and the backward matmul
    # (one resharding per value and layout, shared by its users).
    assert [c.bytes for c in predicted if c.kind == "all-gather"] == [weights] * 2
    assert totals(predicted) == {("all-gather", (AXIS,)): 2 * weights, ("reduce-scatter", (AXIS,)): 2 * weights,
                                 ("all-reduce", (AXIS,)): F32}
    compiled = compile_module(module, DeviceMesh(MESH))
    # The reduce-scatters run as all-reduces (XLA:CPU).
    assert totals(compiled.collectives()) == {("all-gather", (AXIS,)): 2 * weights,
                                              ("all-reduce", (AXIS,)): 2 * weights + F32}
    run_and_compare(compiled, args, adam_step)


def test_zero_stage_1_updates_the_optimizer_state_in_shards(tmp_path) -> None:
    args = adam_args(**MEGATRON)
    options = f"force-data-parallel batch-args={ADAM_X},{ADAM_Y} zero-stage=1"
    _, plan = auto_shard(args, tmp_path / "plan.json", options, adam_step)
    assert spec(plan, W1).is_replicated and spec(plan, W2).is_replicated
    assert all(not spec(plan, i).is_replicated for i in MU + NU)
    # Stage 0's all-reduce of the gradients is all the communication stage 1 needs.
    assert totals(plan.predicted_collectives()) == {("all-reduce", (AXIS,)): 2 * weight_bytes(MEGATRON["hidden"]) + F32}
    assert all(not plan.results[i].spec.is_replicated for i in MU + NU)


# ----------------------------------------------------------------------------- memory budget


# Batch 2048, hidden 128: the ILP picks data parallelism, replicated weights. A budget
# is on the plan's peak memory per device (ShardingPlan.peak_memory), the figure XLA's
# memory_analysis adds up: arguments + outputs - donated + temporaries.
BUDGET = {"batch": 2048, "hidden": 128}


def xla_memory(module: ir.Module) -> int:
    stats = compile_module(module, DeviceMesh(MESH)).executable.get_compiled_memory_stats()
    return (stats.argument_size_in_bytes + stats.output_size_in_bytes - stats.alias_size_in_bytes
            + stats.temp_size_in_bytes)


@pytest.fixture(scope="module")
def unbudgeted(tmp_path_factory) -> tuple[ir.Module, ShardingPlan]:
    return auto_shard(mlp_args(**BUDGET), tmp_path_factory.mktemp("free") / "plan.json")


def test_the_unbudgeted_plan_predicts_xla_s_memory(unbudgeted) -> None:
    module, free = unbudgeted
    assert spec(free, W1).is_replicated and spec(free, W2).is_replicated
    assert free.peak_memory == pytest.approx(xla_memory(module), rel=1e-3)


def test_budget_below_the_data_parallel_footprint_shards_weights(tmp_path, unbudgeted) -> None:
    _, free = unbudgeted
    budget = free.peak_memory - 20_000
    module, plan = auto_shard(mlp_args(**BUDGET), tmp_path / "plan.json", f"memory-budget={budget}")
    assert not (spec(plan, W1).is_replicated and spec(plan, W2).is_replicated)
    assert spec(plan, X).num_shards(0, plan.mesh) == 4  # still data parallel
    assert plan.objective > free.objective  # the budget costs communication
    assert plan.peak_memory <= budget
    assert xla_memory(module) <= budget  # as XLA allocates it
    run_and_compare(compile_module(module, DeviceMesh(MESH)), mlp_args(**BUDGET))


def test_a_tighter_budget_is_kept_as_xla_allocates(tmp_path, unbudgeted) -> None:
    budget = 3.5 * 2**20  # 8% below data parallelism's 3.63 MiB
    module, plan = auto_shard(mlp_args(**BUDGET), tmp_path / "plan.json", f"memory-budget={budget}")
    assert plan.peak_memory <= budget
    assert xla_memory(module) <= budget
    assert plan.peak_memory == pytest.approx(xla_memory(module), rel=0.01)


def test_impossible_budget_fails_with_the_lower_bound(tmp_path, unbudgeted) -> None:
    with pytest.raises(ir.MLIRError) as caught:
        auto_shard(mlp_args(**BUDGET), tmp_path / "plan.json", "memory-budget=1e6")
    message = str(caught.value)
    assert "no sharding plan fits the memory budget of 976.6 KiB per device" in message
    needed = re.search(r"needs at least ([\d.]+) MiB", message)
    assert needed, message
    # A lower bound: above the budget, below what data parallelism holds.
    assert 1e6 < float(needed.group(1)) * 2**20 < unbudgeted[1].peak_memory
    assert not (tmp_path / "plan.json").exists()


def test_budget_at_the_data_parallel_footprint_keeps_data_parallelism(tmp_path, unbudgeted) -> None:
    _, free = unbudgeted
    _, plan = auto_shard(mlp_args(**BUDGET), tmp_path / "plan.json", f"memory-budget={free.peak_memory + 64}")
    assert spec(plan, W1).is_replicated and spec(plan, W2).is_replicated
    assert spec(plan, X).dims == ((AXIS,), ())


# ----------------------------------------------------------------------------- the report


def test_report_json_holds_the_plan_and_solver_statistics(megatron) -> None:
    _, _, plan, report = megatron
    data = json.loads(report.read_text())
    assert data["version"] == 1
    assert data["mesh"]["shape"] == list(MESH) and data["mesh"]["device_ids"] == [0, 1, 2, 3]
    assert [a["shape"] for a in data["arguments"]] == [[1024, 4096], [4096, 1024], [64, 1024], [64, 1024]]
    assert [a["dtype"] for a in data["arguments"]] == ["f32"] * 4
    assert data["arguments"][W1]["spec"] == [[], [AXIS]]
    assert data["arguments"][W1]["sharding"] == "{devices=[1,4]<=[4]}"
    assert len(data["results"]) == 3  # two weights and the loss
    for op in data["ops"]:
        assert set(op) == {"op", "location", "strategy", "results", "communication", "resharding"}
    communication = [c for op in data["ops"] for c in op["communication"]]
    assert communication == [{"kind": "all-reduce", "mesh_axes": [AXIS], "bytes": 64 * 1024 * F32,
                              "cost": communication[0]["cost"]}]

    solver = data["solver"]
    assert solver["solver"] == "HIGHS" and solver["status"] == "optimal"
    assert solver["nodes"] >= solver["nodes_after_reduction"] > 0
    assert solver["variables"] > 0 and solver["constraints"] > 0
    assert solver["build_seconds"] >= 0 and solver["solve_seconds"] >= 0
    # Eq. 1's value is the predicted communication (plus tie-breaks far below one byte's cost).
    cost = sum(c.cost for c in plan.predicted_collectives())
    assert data["objective"] == pytest.approx(cost, rel=1e-9)
    assert solver["objective"] == pytest.approx(data["objective"], rel=1e-6)
    assert ShardingPlan.from_json(data) == plan


def test_xla_resharding_costs_need_a_probe(tmp_path) -> None:
    # The pass asks XLA through the probe it is given (lowering's, from provide); built
    # without one, it says so instead of pricing with the model.
    module = ir.Module.parse(jax.jit(mlp_step).lower(*mlp_args(8, 8)).as_text(),
                             context=alpa_mlir.dialect.make_context())
    with pytest.raises(ir.MLIRError, match="option 'resharding-costs=xla' asks XLA, through a resharding probe the "
                                           "pass is not given: build it with resharding_probe="):
        run_pipeline(module, "builtin.module(alpa-import-pipeline, alpa-auto-sharding{mesh-shape=2,4 "
                             "resharding-costs=xla})")


def test_report_of_a_graph_eliminated_exactly_says_trivial(tmp_path) -> None:
    # A chain of elementwise ops is solved by the degree-1/2 elimination alone: no MILP.
    def f(x: jax.Array, b: jax.Array) -> jax.Array:
        return jnp.tanh(x * b)

    text = jax.jit(f).lower(np.ones((64, 256), np.float32), np.ones((64, 256), np.float32)).as_text()
    module = ir.Module.parse(text, context=alpa_mlir.dialect.make_context())
    report = tmp_path / "plan.json"
    run_pipeline(module, f"builtin.module(alpa-import-pipeline, alpa-auto-sharding{{mesh-shape=1,4 report={report}}})")
    solver = json.loads(report.read_text())["solver"]
    assert solver["status"] == "trivial"
    assert solver["nodes_after_reduction"] == 0 and solver["variables"] == 0 and solver["constraints"] == 0
    assert solver["nodes"] > 0
