"""The device profile: its arithmetic, its file, its measurement and cache, and stage costs priced by it."""

from __future__ import annotations

import dataclasses
import gc
import json
import math

import jax
import numpy as np
import pytest
from jax._src.lib.mlir import ir

from alpa_mlir.dialect import make_context
from alpa_mlir.dialect.mesh import DeviceMesh
from alpa_mlir.passes import parse_pipeline, run_pipeline
from alpa_mlir.passes.inter_op import stage_costing
from alpa_mlir.passes.inter_op.profile_pricing import compute_seconds, sync_seconds
from alpa_mlir.passes.inter_op.stage_costing import CostCache
from alpa_mlir.passes.inter_op.training_step import StepGraph
from alpa_mlir.plans.device_profile import DeviceProfile, DeviceProfileError
from alpa_mlir.plans.sharding_plan import CollectiveTotal, ShardingPlan
from alpa_mlir.runtime import device_profile as measuring
from alpa_mlir.services import provide

PROFILE = DeviceProfile(
    platform="cpu", device_kind="cpu", devices=4,
    matmul_flops={"float32": {1: {1e6: 1e9, 1e8: 1e10}, 4: {1e6: 5e8, 1e8: 5e9}},
                  "bfloat16": {1: {1e6: 2e9, 1e8: 2e10}}},
    memory_bandwidth={1: 1e10, 4: 2e9}, launch={1: 1e-4, 4: 3e-4},
    collectives=(("all-reduce", 2, 1e6, 2e-5 + 1e-9 * 2 * 0.5 * 1e6),
                 ("all-gather", 4, 4e6, 2e-5 + 1e-9 * 0.75 * 4e6),
                 ("reduce-scatter", 4, 1e5, 2e-5 + 1e-9 * 0.75 * 1e5)))


def test_matmul_rates_interpolate_in_log_flops_at_the_nearest_smaller_device_count() -> None:
    # 1e7 FLOPs on one device: halfway between 1e6 and 1e8 in log, so halfway in rate.
    assert PROFILE.matmul_seconds(1e7, "float32", 1) == pytest.approx(1e7 / 5.5e9)
    # Beyond the measured sizes the rate is the end's; 2 and 3 devices take 1's table, 8 takes 4's.
    assert PROFILE.matmul_seconds(4e9, "float32", 4) == pytest.approx(1e9 / 5e9)
    assert PROFILE.matmul_seconds(2e3, "float32", 2) == pytest.approx(1e3 / 1e9)
    assert PROFILE.matmul_seconds(8e8, "float32", 8) == pytest.approx(1e8 / 5e9)
    # A dtype the profile lacks is priced as float32; one it has, at its own rate.
    assert PROFILE.matmul_seconds(1e8, "float16", 1) == PROFILE.matmul_seconds(1e8, "float32", 1)
    assert PROFILE.matmul_seconds(1e8, "bfloat16", 1) == pytest.approx(1e8 / 2e10)
    assert PROFILE.elementwise_seconds(8e6, 4) == pytest.approx(2e6 / 2e9)
    assert PROFILE.launch_seconds(2) == 1e-4 and PROFILE.launch_seconds(16) == 3e-4


def test_the_link_fit_recovers_the_alpha_beta_the_samples_were_made_with() -> None:
    alpha, beta = PROFILE.intra_host_link()
    assert alpha == pytest.approx(2e-5) and beta == pytest.approx(1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_the_link_fit_is_the_least_relative_squares_line(seed: int) -> None:
    # Against brute force: no (alpha, beta) on a fine grid around the fit has smaller relative error.
    rng = np.random.default_rng(seed)
    samples = tuple((str(rng.choice(["all-reduce", "all-gather", "all-to-all"])), int(rng.choice([2, 4, 8])),
                     float(b), float(rng.uniform(1e-5, 1e-2))) for b in rng.uniform(1e3, 1e7, 6))
    profile = dataclasses.replace(PROFILE, collectives=samples)
    volume = {"all-reduce": 2.0, "all-gather": 1.0, "all-to-all": 1.0}

    def error(alpha: float, beta: float) -> float:
        return sum(((alpha + beta * volume[k] * (n - 1) / n * b) / s - 1) ** 2 for k, n, b, s in samples)

    alpha, beta = profile.intra_host_link()
    assert alpha >= 0 and beta >= 0
    best = error(alpha, beta)
    for da in np.linspace(-0.2, 0.2, 9):
        for db in np.linspace(-0.2, 0.2, 9):
            a, b = alpha * (1 + da), beta * (1 + db)
            assert error(a, b) >= best - 1e-9 * best


def test_a_profile_reads_back_what_it_saved(tmp_path) -> None:
    PROFILE.save(tmp_path / "p.json")
    assert DeviceProfile.load(tmp_path / "p.json") == PROFILE


@pytest.mark.parametrize("change, match", [
    (lambda d: d.update(version=0), "a device profile of version 0; this alpa-mlir reads version 1"),
    (lambda d: d.pop("launch"), r"malformed device profile \(KeyError: 'launch'\)"),
    (lambda d: d["matmul_flops"].pop("float32"), "needs float32 matmul FLOP/s"),
    (lambda d: d["memory_bandwidth"].update({"4": -1.0}), "all positive"),
    (lambda d: d["launch"].update({"4": float("nan")}), "all positive"),
    (lambda d: d["collectives"].append(["broadcast", 2, 1.0, 1.0]), "collectives of known kinds"),
    (lambda d: d.update(collectives=[["all-reduce", 2]]), "malformed device profile"),
    (lambda d: d["collective_sync"].update({"4": -1.0}), "collective sync, call buffer and transfer times"),
    (lambda d: d["call_buffers"].update({"1": -1.0}), "call buffer and transfer times of at least 0"),
    (lambda d: d["transfer_launch"].update({"4": float("inf")}), "transfer times of at least 0"),
    (lambda d: d["device_copy"].update({"4": -1e-4}), "transfer times of at least 0"),
])
def test_a_bad_profile_file_says_what_is_wrong(tmp_path, change, match) -> None:
    data = json.loads(PROFILE.to_json())
    change(data)
    (tmp_path / "p.json").write_text(json.dumps(data))
    with pytest.raises(DeviceProfileError, match=match):
        DeviceProfile.load(tmp_path / "p.json")
    with pytest.raises(DeviceProfileError, match="cannot read a device profile from .*: No such file"):
        DeviceProfile.load(tmp_path / "missing.json")


def test_the_local_profile_is_measured_once_and_then_read_from_the_cache(tmp_path, monkeypatch) -> None:
    # Small measurements on two devices: positive rates at 1 and 2 devices, collectives on 2.
    monkeypatch.setattr(measuring, "MATMUL", (32, 64))
    monkeypatch.setattr(measuring, "ELEMENTWISE", 1 << 12)
    monkeypatch.setattr(measuring, "COLLECTIVE_BYTES", (1 << 10, 1 << 12))
    monkeypatch.setattr(measuring, "REPEATS", 1)
    calls = []
    measure = measuring.measure_profile
    monkeypatch.setattr(measuring, "measure_profile", lambda: calls.append(1) or measure(jax.devices()[:2]))
    path = tmp_path / "profile.json"
    first = measuring.cached_profile(path)
    assert calls == [1] and DeviceProfile.load(path) == first
    assert set(first.launch) == set(first.memory_bandwidth) == {1, 2} and set(first.matmul_flops["float32"][2]) == \
        {2.0 * 32**3, 2.0 * 64**3}
    assert all(v > 0 for v in (*first.launch.values(), *first.matmul_flops["float32"][1].values()))
    assert sorted({(kind, n) for kind, n, _, _ in first.collectives}) == \
        sorted((kind, 2) for kind in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all"))
    assert set(first.collective_sync) == {2} and first.collective_sync[2] >= 0
    assert set(first.call_buffers) == {1, 2} and set(first.transfer_launch) == set(first.device_copy) == {2}
    assert first.transfer_launch[2] > 0 and first.device_copy[2] > 0
    assert measuring.cached_profile(path) == first and calls == [1]  # read back, not measured again
    path.write_text("{")  # a damaged cache is measured again, not an error
    assert measuring.cached_profile(path).devices == 2 and calls == [1, 1]


def test_a_profile_from_before_the_sync_times_reads_and_is_completed_once(tmp_path, monkeypatch) -> None:
    data = json.loads(dataclasses.replace(PROFILE, devices=8).to_json())
    for name in ("collective_sync", "call_buffers", "transfer_launch", "device_copy"):
        del data[name]
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(data))
    old = DeviceProfile.load(path)
    # Nothing added where not measured; a transfer's programs and copies launch as empty programs.
    assert old.collective_sync == old.call_buffers == old.transfer_launch == old.device_copy == {}
    assert (old.sync_seconds(4), old.buffer_seconds(4)) == (0.0, 0.0)
    assert old.transfer_launch_seconds(4) == old.copy_seconds(4) == 3e-4
    calls = []
    monkeypatch.setattr(measuring, "measure_sync", lambda: calls.append("sync") or {2: 1e-4, 8: 3e-4})
    monkeypatch.setattr(measuring, "measure_call_buffers", lambda: calls.append("buffers") or {1: 1e-6, 4: 5e-6})
    monkeypatch.setattr(measuring, "measure_transfer_launch", lambda: calls.append("transfers") or {2: 2e-4})
    monkeypatch.setattr(measuring, "measure_device_copy", lambda: calls.append("copies") or {2: 5e-5})
    completed = measuring.cached_profile(path)
    assert completed == dataclasses.replace(old, collective_sync={2: 1e-4, 8: 3e-4}, call_buffers={1: 1e-6, 4: 5e-6},
                                            transfer_launch={2: 2e-4}, device_copy={2: 5e-5}) == \
        DeviceProfile.load(path)
    assert measuring.cached_profile(path) == completed and calls == ["sync", "buffers", "transfers", "copies"]
    assert (completed.sync_seconds(1), completed.sync_seconds(4), completed.sync_seconds(16)) == (0.0, 1e-4, 3e-4)
    assert (completed.buffer_seconds(2), completed.buffer_seconds(8), completed.transfer_launch_seconds(8),
            completed.copy_seconds(8)) == (1e-6, 5e-6, 2e-4, 5e-5)


def test_the_collectives_of_a_stage_wait_what_the_profile_measured_beyond_alpha() -> None:
    mesh = DeviceMesh((2, 2), alpha=(1e-5, 3e-5), beta=(1e-9, 1e-9))
    plan = ShardingPlan(mesh, (), (), communication=(
        CollectiveTotal("all-reduce", (0,), 3, 3e3, 0.0),  # 2 devices
        CollectiveTotal("all-gather", (0, 1), 2, 8e3, 0.0),  # 4 devices, alpha the larger axis's
        CollectiveTotal("all-to-all", (1,), 5, 1e3, 0.0)))  # 2 devices, sync below alpha: nothing
    profile = dataclasses.replace(PROFILE, collective_sync={2: 2e-5, 4: 2e-4})
    assert sync_seconds(plan, mesh, profile) == pytest.approx(3 * (2e-5 - 1e-5) + 2 * (2e-4 - 3e-5))
    assert sync_seconds(plan, mesh, PROFILE) == 0.0  # not measured


def test_the_sync_time_of_a_collective_between_computations_is_measured() -> None:
    sync = measuring.measure_sync(jax.devices()[:4])
    assert set(sync) == {2, 4} and all(0 <= s < 0.05 for s in sync.values())


def test_the_runtime_costs_of_arrays_and_transfer_programs_are_measured() -> None:
    devices = jax.devices()[:4]
    buffers, launch = measuring.measure_call_buffers(devices), measuring.measure_transfer_launch(devices)
    copy = measuring.measure_device_copy(devices)
    assert set(buffers) == {1, 2, 4} and all(0 <= s < 1e-3 for s in buffers.values())
    assert set(launch) == set(copy) == {2, 4} and all(0 < s < 0.05 for s in (*launch.values(), *copy.values()))


def test_the_cache_is_keyed_by_the_devices_and_lives_where_the_environment_says(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ALPA_MLIR_CACHE_DIR", str(tmp_path))
    path = measuring.cache_path()
    assert path.parent == tmp_path and path.name.startswith(f"device-profile-cpu-cpu-{len(jax.local_devices())}-")


MODULE = """
func.func @main(%x: tensor<64x128xf32>, %w: tensor<128x256xf32>) -> tensor<64x256xf32> {
  %0 = stablehlo.add %x, %x : tensor<64x128xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<64x128xf32>
  %2 = stablehlo.dot_general %1, %w, contracting_dims = [1] x [0]
      : (tensor<64x128xf32>, tensor<128x256xf32>) -> tensor<64x256xf32>
  %3 = stablehlo.reshape %2 : (tensor<64x256xf32>) -> tensor<64x256xf32>
  %4 = stablehlo.tanh %3 : tensor<64x256xf32>
  return %4 : tensor<64x256xf32>
}
"""


def test_compute_prices_matmuls_by_flops_and_fused_chains_by_what_leaves_them() -> None:
    with make_context():
        module = ir.Module.parse(MODULE)
        main = module.body.operations[0]
        graph = StepGraph(main)
        # The add feeds only the multiply: fused, it writes nothing; the multiply feeds the
        # matmul and the tanh leaves the stage: each writes its result; the reshape is a view.
        want = (2 * PROFILE.launch_seconds(4) + PROFILE.matmul_seconds(2 * 64 * 128 * 256, "float32", 4)
                + PROFILE.elementwise_seconds(64 * 128 * 4 + 64 * 256 * 4, 4))
        assert compute_seconds(graph, list(range(len(graph.ops))), 4, PROFILE) == pytest.approx(want)


def test_a_stages_compute_is_priced_once_per_device_count() -> None:
    # The logical views of a submesh (and the prune's bound) ask for the same stage's compute:
    # it is remembered by the stage's ops and the number of devices, whichever pricing.
    with make_context():
        module = ir.Module.parse(MODULE)
        cache = CostCache(graph=StepGraph(module.body.operations[0]))
        everything = tuple(range(len(cache.graph.ops)))
        flops = 2 * 64 * 128 * 256 + 64 * 128 * 2 + 64 * 256  # the matmul, the add and multiply, the tanh
        assert stage_costing._compute_seconds(1e9, None, cache, everything, 4) == pytest.approx(flops / 4e9)
        assert stage_costing._compute_seconds(1e9, PROFILE, cache, everything, 2) == \
            compute_seconds(cache.graph, everything, 2, PROFILE)
        assert stage_costing._compute_seconds(1e9, PROFILE, cache, everything, 4) == pytest.approx(flops / 4e9)
        assert sorted(cache.compute) == [(tuple(everything), 2), (tuple(everything), 4)]


def test_the_search_sets_the_objects_alive_before_it_aside_from_the_collector() -> None:
    # Full collections during the search walk only what it makes; afterwards the heap is as
    # before, and an application's own freeze is left in place.
    assert gc.get_freeze_count() == 0
    before = [object() for _ in range(10)]
    with stage_costing.frozen_heap():
        assert gc.get_freeze_count() >= len(before)
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with stage_costing.frozen_heap():
            assert gc.get_freeze_count() == frozen
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_stage_latencies_come_from_the_profile_file(tmp_path) -> None:
    # Same stages, two profiles: the slower devices' latencies are the compute they add.
    from test_stage_construction import mlp_module
    slow = dataclasses.replace(PROFILE, matmul_flops={"float32": {n: {f: r / 10 for f, r in t.items()}
                                                                  for n, t in PROFILE.matmul_flops["float32"].items()}})
    latencies = []
    for name, profile in (("fast", PROFILE), ("slow", slow)):
        profile.save(tmp_path / f"{name}.json")
        module, _ = mlp_module()
        report = tmp_path / f"{name}-stages.json"
        run_pipeline(module, provide(parse_pipeline(
            f"alpa-stage-construction{{cluster-shape=1,4 stage-mode=manual stage-layers=2,2 stage-submeshes=1,2,1,2 "
            f"logical-mesh-space=physical device-profile={tmp_path / name}.json report={report}}}")))
        latencies.append([s["latency"] for s in json.loads(report.read_text())["stages"]])
    assert all(0 < fast < slow for fast, slow in zip(*latencies))
    assert not math.isclose(latencies[0][0], latencies[1][0])


def test_local_needs_a_device_profiler() -> None:
    from test_stage_construction import mlp_module
    module, _ = mlp_module()
    with pytest.raises(ir.MLIRError, match="option 'device-profile': 'local' measures this machine with a device "
                                           "profiler the pass is not given"):
        run_pipeline(module, "builtin.module(alpa-stage-construction{cluster-shape=1,2 device-profile=local})")
