"""alpa-stage-construction: the DP's stages, meshes on the cluster, and stage functions that compute
what the unsplit step computes."""

from __future__ import annotations

import json

import jax
import numpy as np
import pytest
from jax._src.lib.mlir import ir

from alpa_mlir import models
from alpa_mlir.dialect import make_context
from alpa_mlir.dialect.annotations import funcs
from alpa_mlir.dialect.mesh import DeviceMesh
from alpa_mlir.lowering.spmd import compile_module
from alpa_mlir.passes import parse_pipeline, run_pipeline
from alpa_mlir.runtime.mesh_executable import MeshExecutable
from alpa_mlir.services import provide

MLP = models.MLPConfig(sizes=(64, 64, 64, 64, 64))


def mlp_module(layers: int = 4) -> tuple[ir.Module, list]:
    model = models.mlp(MLP)
    args = model.init(jax.random.key(0), 8)
    text = jax.jit(model.train_step).lower(*args).as_text(debug_info=True)
    module = ir.Module.parse(text, context=make_context())
    run_pipeline(module, f"builtin.module(alpa-import-pipeline, alpa-layer-construction{{layers={layers}}})")
    return module, jax.tree.leaves(args)


def staged(options: str, tmp_path, layers: int = 4) -> tuple[ir.Module, dict, list]:
    module, flat = mlp_module(layers)
    report = tmp_path / "stages.json"
    run_pipeline(module, provide(parse_pipeline(f"alpa-stage-construction{{{options} report={report}}}")))
    return module, json.loads(report.read_text()), flat


def functions(module: ir.Module) -> dict[str, ir.Operation]:
    return {ir.StringAttr(f.attributes["sym_name"]).value: f for f in funcs(module.operation)}


def mesh_devices(func: ir.Operation) -> list[int]:
    return list(ir.DenseI64ArrayAttr(ir.DictAttr(func.attributes["alpa.mesh"])["device_ids"]))


def run_on_one_device(module: ir.Module, flat: list) -> list[np.ndarray]:
    text = str(module)
    with make_context():
        copy = ir.Module.parse(text)
        run_pipeline(copy, "builtin.module(alpa-strip-sharding)")
        return [np.asarray(x) for x in MeshExecutable(compile_module(copy, DeviceMesh((1,))))(*flat)]


def test_auto_stages_cover_the_layers_and_the_cluster(tmp_path) -> None:
    module, report, flat = staged("cluster-shape=1,4 num-micro-batches=8", tmp_path)
    stages = report["stages"]
    assert [s["layers"] for s in stages] == sorted(s["layers"] for s in stages)
    assert stages[0]["layers"][0] == 0 and stages[-1]["layers"][1] == 4
    assert all(a["layers"][1] == b["layers"][0] for a, b in zip(stages, stages[1:]))
    assert sorted(d for s in stages for d in s["devices"]) == [0, 1, 2, 3]
    # Eq. 2 on the reported stage latencies.
    latencies = [s["latency"] for s in stages]
    assert report["latency"] == pytest.approx(sum(latencies) + 7 * max(latencies))
    found = functions(module)
    for s, stage in enumerate(stages):
        # A stage's forward, backward and apply parts share its mesh (Sec. 5.1 colocation).
        parts = [found[f"stage{s}_{part}"] for part in ("forward", "backward", "apply") if f"stage{s}_{part}" in found]
        assert parts and all(mesh_devices(p) == stage["devices"] for p in parts)
    assert report["search"]["intra_op_plans"] < report["search"]["candidates"] * 4  # repeated layers planned once


def test_stage_functions_compute_the_unsplit_step(tmp_path) -> None:
    original, flat = mlp_module()
    expected = run_on_one_device(original, flat)
    module, _, _ = staged("cluster-shape=1,4 num-micro-batches=4", tmp_path)
    for got, want in zip(run_on_one_device(module, flat), expected):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_equal_layer_mode_gives_every_stage_as_many_layers(tmp_path) -> None:
    _, two, _ = staged("cluster-shape=1,4 stage-mode=equal-layer num-stages=2", tmp_path)
    assert [s["layers"] for s in two["stages"]] == [[0, 2], [2, 4]]
    _, free, _ = staged("cluster-shape=1,4 num-micro-batches=8 stage-mode=equal-layer", tmp_path)
    sizes = {s["layers"][1] - s["layers"][0] for s in free["stages"]}
    assert len(sizes) == 1
    # The restriction can only cost: the free DP is at least as fast.
    _, auto, _ = staged("cluster-shape=1,4 num-micro-batches=8", tmp_path)
    assert auto["latency"] <= free["latency"] * (1 + 1e-9)


def test_equal_operator_mode_recuts_the_layers_by_op_count(tmp_path) -> None:
    module, report, _ = staged("cluster-shape=1,4 num-micro-batches=8 stage-mode=equal-operator", tmp_path)
    assert report["stages"][0]["layers"][0] == 0 and report["stages"][-1]["layers"][1] == 4
    forward = [ir.IntegerAttr(op.attributes["alpa.layer"]).value for f in funcs(module.operation)
               if ir.StringAttr(f.attributes["sym_name"]).value.endswith("_forward")
               for op in f.regions[0].blocks[0].operations if "alpa.layer" in op.attributes]
    counts = sorted(forward.count(layer) for layer in set(forward))
    assert counts[-1] - counts[0] <= 1 + sum(1 for f in funcs(module.operation))  # equal op counts (+ copies)


@pytest.mark.parametrize("layers", [3, 4])
@pytest.mark.parametrize("cluster", ["1,2", "1,4", "2,2"])
def test_auto_is_never_worse_than_its_baselines(tmp_path, layers, cluster) -> None:
    # Sec. 8.3's ablation in predicted latency: auto searches the clustered and the
    # equal-operator layerings, so neither baseline beats it. On 3 layers and 4 devices
    # the clustering alone loses to equal op counts (8.0e-7 s against 9.1e-7 s).
    latency, layering = {}, {}
    for mode in ("compare-layerings=false", "stage-mode=equal-operator", "stage-mode=equal-layer", "auto"):
        _, report, _ = staged(f"cluster-shape={cluster} num-micro-batches=4 {mode.replace('auto', '')}", tmp_path,
                              layers)
        latency[mode], layering[mode] = report["latency"], report["search"]["layering"]
    assert latency["auto"] == min(latency.values())
    assert latency["auto"] == min(latency["compare-layerings=false"], latency["stage-mode=equal-operator"])
    if layers == 3 and cluster != "1,2":
        assert latency["stage-mode=equal-operator"] < latency["compare-layerings=false"]
        assert layering["auto"] == "equal-operator" and layering["compare-layerings=false"] == "clustered"


def test_manual_mode_takes_the_given_stages(tmp_path) -> None:
    _, report, _ = staged("cluster-shape=1,4 stage-mode=manual stage-layers=1,3 stage-submeshes=1,1,1,3", tmp_path)
    assert [(s["layers"], s["submesh"]) for s in report["stages"]] == [([0, 1], [1, 1]), ([1, 4], [1, 3])]


def test_virtual_stages_put_stage_k_on_mesh_k_mod_s_and_compute_the_unsplit_step(tmp_path) -> None:
    # Interleaved 1F1B's layout: four one-layer stages, two per mesh, the meshes' parts on their devices.
    original, flat = mlp_module()
    expected = run_on_one_device(original, flat)
    for options in ("stage-mode=equal-layer num-stages=4 virtual-stages=2 num-micro-batches=2",
                    "stage-mode=equal-layer virtual-stages=2 num-micro-batches=2",
                    "virtual-stages=2 num-micro-batches=2",  # auto: the DP of interleaved 1F1B's Eq. 2
                    "stage-mode=manual stage-layers=1,1,1,1 stage-submeshes=1,1,1,3 virtual-stages=2 "
                    "num-micro-batches=2"):
        module, report, _ = staged(f"cluster-shape=1,4 {options}", tmp_path)
        stages = report["stages"]
        assert report["virtual_stages"] == 2 and len(stages) % 2 == 0
        meshes = len(stages) // 2
        assert [s["layers"][1] - s["layers"][0] for s in stages] == [4 // len(stages)] * len(stages)
        assert all(stages[k]["devices"] == stages[k % meshes]["devices"] for k in range(len(stages)))
        assert sorted(d for s in stages[:meshes] for d in s["devices"]) == [0, 1, 2, 3]
        found = functions(module)
        for k, stage in enumerate(stages):
            assert mesh_devices(found[f"stage{k}_forward"]) == stage["devices"]
        for got, want in zip(run_on_one_device(module, flat), expected):
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_more_micro_batches_never_raise_the_bottleneck(tmp_path) -> None:
    # Eq. 2 weighs the slowest stage by B - 1: with many micro-batches the plan balances it.
    _, few, _ = staged("cluster-shape=1,4 num-micro-batches=1", tmp_path)
    _, many, _ = staged("cluster-shape=1,4 num-micro-batches=64", tmp_path)
    assert max(s["latency"] for s in many["stages"]) <= max(s["latency"] for s in few["stages"]) + 1e-12


def test_memory_too_small_for_any_plan_is_an_error(tmp_path) -> None:
    module, _ = mlp_module()
    with pytest.raises(ir.MLIRError, match="no stage plan fits device memory"):
        run_pipeline(module, "builtin.module(alpa-stage-construction{cluster-shape=1,4 device-memory=1})")


def test_layers_are_needed(tmp_path) -> None:
    model = models.mlp(MLP)
    module = ir.Module.parse(jax.jit(model.train_step).lower(*model.init(jax.random.key(0), 8)).as_text(),
                             context=make_context())
    with pytest.raises(ir.MLIRError, match="run alpa-layer-construction first"):
        run_pipeline(module, "builtin.module(alpa-import-pipeline, alpa-stage-construction{cluster-shape=1,4})")


def test_gpt_stages_colocate_and_compute_the_unsplit_step(tmp_path) -> None:
    model = models.gpt(models.GPTConfig(vocab=64, hidden=32, layers=2, heads=2, seq_len=8))
    args = model.init(jax.random.key(0), 8)
    flat = jax.tree.leaves(args)
    module = ir.Module.parse(jax.jit(model.train_step).lower(*args).as_text(debug_info=True), context=make_context())
    run_pipeline(module, "builtin.module(alpa-import-pipeline, alpa-layer-construction{layers=2})")
    expected = run_on_one_device(module, flat)
    report = tmp_path / "stages.json"
    run_pipeline(module, "builtin.module(alpa-stage-construction{cluster-shape=1,2 stage-mode=equal-layer "
                         f"num-stages=2 report={report}}})")
    stages = json.loads(report.read_text())["stages"]
    assert [(s["layers"], s["devices"]) for s in stages] == [([0, 1], [0]), ([1, 2], [1])]
    # Eq. 5's parameter memory holds Adam's state too: on one device each, the stages keep
    # at least every weight, moment and step counter of the model once.
    params, adam_state, _ = args
    state = sum(x.size * x.dtype.itemsize for x in jax.tree.leaves((params, adam_state)))
    assert sum(s["param_bytes"] for s in stages) >= state
    found = functions(module)
    for s, stage in enumerate(stages):
        assert mesh_devices(found[f"stage{s}_forward"]) == mesh_devices(found[f"stage{s}_backward"]) == \
            stage["devices"]
    for got, want in zip(run_on_one_device(module, flat), expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("model", [
    models.build(models.MoEConfig(vocab=64, hidden=32, layers=2, heads=2, seq_len=8, experts=4)),
    models.wide_resnet(models.WideResNetConfig(stages=(1, 1), base_channels=8, width_factor=1, image_size=8,
                                               classes=8)),
], ids=["moe", "wide_resnet"])
def test_moe_and_conv_net_stages_compute_the_unsplit_step(tmp_path, model) -> None:
    args = model.init(jax.random.key(0), 8)
    flat = jax.tree.leaves(args)
    module = ir.Module.parse(jax.jit(model.train_step).lower(*args).as_text(debug_info=True), context=make_context())
    run_pipeline(module, "builtin.module(alpa-import-pipeline, alpa-layer-construction{layers=2})")
    expected = run_on_one_device(module, flat)
    run_pipeline(module, "builtin.module(alpa-stage-construction{cluster-shape=1,2 stage-mode=equal-layer "
                         "num-stages=2})")
    assert {"stage0_forward", "stage1_forward", "stage1_backward", "stage0_backward"} <= set(functions(module))
    for got, want in zip(run_on_one_device(module, flat), expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_profile_cost_model_times_the_candidates(tmp_path) -> None:
    # Each candidate compiled and run on local CPU devices: measured, positive latencies.
    _, report, _ = staged("cluster-shape=1,2 cost-model=profile profile-repeats=1 stage-mode=equal-layer", tmp_path)
    assert report["stages"][0]["layers"][0] == 0 and report["stages"][-1]["layers"][1] == 4
    assert all(0 < s["latency"] < 10 for s in report["stages"])


def test_profile_needs_the_devices(tmp_path) -> None:
    module, _ = mlp_module()
    with pytest.raises(ir.MLIRError, match="option 'cost-model=profile': .*devices"):
        run_pipeline(module, provide(parse_pipeline("alpa-stage-construction{cluster-shape=4,8 cost-model=profile "
                                                    "stage-mode=manual stage-layers=4 stage-submeshes=4,8}")))


def test_profile_needs_a_stage_timer(tmp_path) -> None:
    # The pass times stages through the timer it is given (the runtime's, from provide);
    # built without one, it says so instead of guessing.
    module, _ = mlp_module()
    with pytest.raises(ir.MLIRError, match="option 'cost-model=profile' times stages with a stage timer the pass "
                                           "is not given: build it with stage_timer="):
        run_pipeline(module, "builtin.module(alpa-stage-construction{cluster-shape=1,2 cost-model=profile})")


def test_planning_in_processes_finds_the_same_plan(tmp_path) -> None:
    _, serial, _ = staged("cluster-shape=1,2 num-micro-batches=4", tmp_path)
    _, parallel, _ = staged("cluster-shape=1,2 num-micro-batches=4 jobs=2", tmp_path)
    assert parallel["stages"] == serial["stages"] and parallel["latency"] == serial["latency"]


def test_a_dead_planning_process_leaves_the_work_to_the_pass(tmp_path, monkeypatch, caplog) -> None:
    # A worker that dies (a script without a __main__ guard re-runs itself in it) breaks
    # the pool: the pass plans the candidates itself, finds the serial plan, and says why.
    import concurrent.futures

    from alpa_mlir.passes.inter_op import stage_costing

    class DeadPool(concurrent.futures.ProcessPoolExecutor):
        def map(self, *args, **kwargs):
            raise concurrent.futures.process.BrokenProcessPool("a worker died")

    monkeypatch.setattr(stage_costing.concurrent.futures, "ProcessPoolExecutor", DeadPool)
    _, serial, _ = staged("cluster-shape=1,2 num-micro-batches=4", tmp_path)
    with caplog.at_level("WARNING", logger="alpa_mlir.stage_construction"):
        _, parallel, _ = staged("cluster-shape=1,2 num-micro-batches=4 jobs=2", tmp_path)
    assert parallel["stages"] == serial["stages"] and parallel["latency"] == serial["latency"]
    assert "option 'jobs': a planning process died (a worker died)" in caplog.text
    assert 'if __name__ == "__main__":' in caplog.text


@pytest.mark.parametrize("m", [1, 2])
def test_composed_range_costs_find_the_exact_plan(tmp_path, m) -> None:
    # max-costed-layers: only ranges of up to m layers are planned; longer ones are
    # composed layer by layer. On equal layers the composition is exact up to the
    # resharding between layers, so the plan is the exact search's. (It saves plans on
    # deep models only: here the exact search, nothing pruned, plans the 28 ranges some
    # slicing holds, and composing the whole model on the whole cluster needs m-layer
    # ranges there too.)
    _, exact, _ = staged("cluster-shape=1,4 num-micro-batches=4 prune=false", tmp_path)
    _, composed, _ = staged(f"cluster-shape=1,4 num-micro-batches=4 max-costed-layers={m}", tmp_path)
    assert [(s["layers"], s["devices"]) for s in composed["stages"]] == \
        [(s["layers"], s["devices"]) for s in exact["stages"]]
    assert composed["latency"] == pytest.approx(exact["latency"], rel=0.05)
    assert exact["search"]["intra_op_plans"] == 28
    # Per layering searched (auto compares the clustered and the equal-operator one).
    assert composed["search"]["composed_ranges"] == {1: 6, 2: 3}[m] * len(composed["search"]["layerings"])


def test_pruned_candidates_leave_the_plan_as_it_was(tmp_path) -> None:
    # Candidates whose compute alone, B times over, exceeds a plan already found are not
    # planned: the plan is the one found when every candidate is costed.
    options = "cluster-shape=1,4 num-micro-batches=4 device-flops=1e10"
    _, pruned, _ = staged(options, tmp_path)
    _, every, _ = staged(f"{options} prune=false", tmp_path)
    assert [(s["layers"], s["devices"], s["logical_mesh"]) for s in pruned["stages"]] == \
        [(s["layers"], s["devices"], s["logical_mesh"]) for s in every["stages"]]
    assert pruned["latency"] == pytest.approx(every["latency"], rel=1e-12)
    assert every["search"]["pruned_candidates"] == 0 < pruned["search"]["pruned_candidates"]
    assert pruned["search"]["intra_op_plans"] < every["search"]["intra_op_plans"]


def test_progress_bar_only_on_a_terminal(monkeypatch, capsys) -> None:
    from alpa_mlir.passes.inter_op.stage_costing import _Progress

    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    progress = _Progress("planned", 4)
    for _ in range(2):
        progress.step()
    progress.close()
    shown = capsys.readouterr().err
    assert "\rplanned [" + "#" * 15 + " " * 15 + "] 2/4 (" in shown and shown.endswith("\n")
    monkeypatch.setattr("sys.stderr.isatty", lambda: False)
    quiet = _Progress("planned", 4)
    quiet.step()
    quiet.close()
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("shape", [(1, 4), (1, 8)])
def test_a_transposed_view_of_one_host_costs_the_same(shape) -> None:
    # Why the search does not plan a one-host submesh's (n, 1) view: both axes have the
    # same alpha and beta, so it is (1, n) with the axes' roles swapped.
    from alpa_mlir.dialect.pass_registry import Diagnostics
    from alpa_mlir.passes.inter_op.stage_search import logical_shapes
    from alpa_mlir.passes.intra_op.auto_sharding import AutoShardingPass

    assert logical_shapes((1, 8), "all") == [(1, 8), (2, 4), (4, 2)]
    assert logical_shapes((1, 1), "all") == [(1, 1)]
    assert logical_shapes((2, 4), "all") == [(1, 8), (2, 4), (4, 2), (8, 1)]  # two hosts: every view
    model = models.mlp(MLP)
    text = jax.jit(model.train_step).lower(*model.init(jax.random.key(0), 64)).as_text()
    objectives = []
    for view in (shape, shape[::-1]):
        module = ir.Module.parse(text, context=make_context())
        run_pipeline(module, "builtin.module(alpa-import-pipeline)")
        planner = AutoShardingPass(mesh_shape=view, mesh_alpha=(1e-5, 1e-5), mesh_beta=(1e-11, 1e-11),
                                   allow_flattened_mesh=True)
        with module.context:
            objectives.append(planner.plan_module(module.operation, Diagnostics([])).objective)
    assert objectives[0] == pytest.approx(objectives[1], rel=1e-6)


SUM_OVER_STAGES = """
func.func @main(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>, %d: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0 = stablehlo.multiply %a, %a {alpa.layer = 0 : i64, alpa.phase = "apply"} : tensor<f32>
  %1 = stablehlo.multiply %b, %b {alpa.layer = 1 : i64, alpa.phase = "apply"} : tensor<f32>
  %2 = stablehlo.multiply %c, %c {alpa.layer = 0 : i64, alpa.phase = "apply"} : tensor<f32>
  %3 = stablehlo.multiply %d, %d {alpa.layer = 1 : i64, alpa.phase = "apply"} : tensor<f32>
  %4 = stablehlo.add %0, %1 {alpa.layer = 0 : i64, alpa.phase = "apply"} : tensor<f32>
  %5 = stablehlo.add %4, %2 {alpa.layer = 0 : i64, alpa.phase = "apply"} : tensor<f32>
  %6 = stablehlo.add %5, %3 {alpa.layer = 0 : i64, alpa.phase = "apply"} : tensor<f32>
  %7 = stablehlo.add %6, %1 {alpa.layer = 0 : i64, alpa.phase = "apply"} : tensor<f32>
  %8 = stablehlo.add %7, %3 {alpa.layer = 0 : i64, alpa.phase = "apply"} : tensor<f32>
  return %6, %8 : tensor<f32>, tensor<f32>
}
"""


def test_a_sum_over_stages_is_summed_per_stage_first() -> None:
    # clip_by_global_norm's sum of squares: one term per parameter, in program order.
    # Each stage adds its own terms; only its partial sum crosses. A sum reading an
    # earlier such sum (%8 reads %6) is re-associated too.
    from alpa_mlir.passes.inter_op.stage_parts import sum_per_stage
    from alpa_mlir.passes.inter_op.training_step import step_ops

    module = ir.Module.parse(SUM_OVER_STAGES, context=make_context())
    main = next(iter(funcs(module.operation)))
    layer = lambda op: ir.IntegerAttr(op.attributes["alpa.layer"]).value  # noqa: E731
    with module.context:
        sum_per_stage(main, layer)
    assert module.operation.verify()
    crossings = [op for op in step_ops(main) if op.name == "stablehlo.add"
                 for v in op.operands if not isinstance(v.owner, ir.Block) and layer(v.owner.operation) != layer(op)]
    assert len(crossings) == 2  # one stage-1 partial sum into each of the two sums
    got = run_on_one_device(module, [np.float32(x) for x in (1, 2, 3, 4)])
    assert [float(g) for g in got] == [1 + 4 + 9 + 16, 1 + 4 + 9 + 16 + 4 + 16]
