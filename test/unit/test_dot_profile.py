"""The device profile's dot table: one device's share of a dot under a plan, its key and
price, the timing of dots in programs of them, the cache, and stage costs priced
from the table."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math

import jax
import numpy as np
import pytest
from jax._src.lib.mlir import ir
from test_device_profile import MODULE, PROFILE

from alpa_mlir.dialect import make_context
from alpa_mlir.dialect.mesh import DeviceMesh
from alpa_mlir.passes import run_pipeline
from alpa_mlir.passes.inter_op.profile_pricing import compute_seconds, device_share, plan_tiles, with_timed_dots
from alpa_mlir.passes.inter_op.stage_construction import StageConstructionPass
from alpa_mlir.passes.inter_op.training_step import StepGraph
from alpa_mlir.plans.device_profile import DeviceProfile, DeviceProfileError, Dot
from alpa_mlir.runtime import device_profile as measuring

DOT = Dot((16, 128), (128, 256), (), (), (1,), (0,), "float32", "float32", 4)


def dot_op(lhs: tuple[int, ...], rhs: tuple[int, ...], batch: tuple[list[int], list[int]],
           contracting: tuple[list[int], list[int]]) -> tuple[ir.Module, ir.Operation]:
    """A module of one ``dot_general`` of f32 operands of these shapes and dimension numbers."""
    free = [s for d, s in enumerate(lhs) if d not in batch[0] + contracting[0]] + \
        [s for d, s in enumerate(rhs) if d not in batch[1] + contracting[1]]
    result = [lhs[d] for d in batch[0]] + free

    def tensor(shape: list[int] | tuple[int, ...]) -> str:
        return f"tensor<{''.join(f'{s}x' for s in shape)}f32>"

    batching = f"batching_dims = {batch[0]} x {batch[1]}, " if batch[0] else ""
    module = ir.Module.parse(f"""
func.func @main(%a: {tensor(lhs)}, %b: {tensor(rhs)}) -> {tensor(result)} {{
  %0 = stablehlo.dot_general %a, %b, {batching}contracting_dims = {contracting[0]} x {contracting[1]}
      : ({tensor(lhs)}, {tensor(rhs)}) -> {tensor(result)}
  return %0 : {tensor(result)}
}}""")
    return module, module.body.operations[0].regions[0].blocks[0].operations[0]


@pytest.mark.parametrize("seed", range(20))
def test_a_share_has_the_whole_dots_flops_over_the_devices(seed: int) -> None:
    # Against the loop nest counted point by point (batch, lhs free, rhs free, contracting),
    # under random result tiles on 8 devices.
    rng = np.random.default_rng(seed)
    b, m, n, k = (int(s) for s in rng.choice([1, 2, 3, 4, 6, 8], size=4))
    lhs, rhs = (b, m, k), (b, k, n)
    tiles = tuple(int(t) for t in rng.choice([1, 2], size=3))
    with make_context():
        _, op = dot_op(lhs, rhs, ([0], [0]), ([2], [1]))
        dot = device_share(op, 8, 8, tiles)
    whole = 2 * sum(1 for _ in itertools.product(range(b), range(m), range(n), range(k)))
    rest = 8 // math.prod(tiles)
    if all(s % t == 0 for s, t in zip((b, m, n), tiles)) and k % rest == 0:
        assert dot.flops * 8 == whole
    else:  # rounded up: at least an even share
        assert dot.flops * 8 >= whole
    # The rhs always matches the lhs on batch and contracting dimensions.
    assert dot.lhs[0] == dot.rhs[0] and dot.lhs[2] == dot.rhs[1]
    assert dot.lhs[0] == -(-b // tiles[0]) and dot.lhs[1] == -(-m // tiles[1]) and dot.rhs[2] == -(-n // tiles[2])


@pytest.mark.parametrize("tiles, share", [
    # The result split on its rows over all 4 devices: data parallel.
    ((4, 1), ((16, 128), (128, 256))),
    # On its columns: the rhs's free dimension (Megatron's column split).
    ((1, 4), ((64, 128), (128, 64))),
    # 2 x 1 tiles on 4 devices: the 2 devices of a tile split the contraction (partial sums).
    ((2, 1), ((32, 64), (64, 256))),
    # Replicated: all 4 split the contraction.
    ((1, 1), ((64, 32), (32, 256))),
])
def test_under_a_plan_a_share_follows_the_result_and_splits_the_contraction_over_the_rest(tiles, share) -> None:
    with make_context():
        _, op = dot_op((64, 128), (128, 256), ([], []), ([1], [0]))
        dot = device_share(op, 4, host_devices=4, tiles=tiles)
    assert (dot.lhs, dot.rhs) == share and dot.flops * 4 == 2 * 64 * 128 * 256


def test_plan_tiles_reads_the_dots_result_shardings() -> None:
    with make_context():
        module = ir.Module.parse(MODULE)
        graph = StepGraph(module.body.operations[0])
        texts = [["{replicated}"]] * len(graph.ops)
        texts[2] = ["{devices=[2,2]<=[4]}"]
        assert plan_tiles(graph, range(len(graph.ops)), texts, DeviceMesh((2, 2))) == {2: (2, 2)}
        texts[2] = ["{devices=[1,2,2]<=[4] last_tile_dim_replicate}"]
        assert plan_tiles(graph, range(len(graph.ops)), texts, DeviceMesh((2, 2))) == {2: (1, 2)}


def test_other_ops_and_integer_dots_have_no_share() -> None:
    with make_context():
        module = ir.Module.parse(MODULE)
        ops = list(module.body.operations[0].regions[0].blocks[0].operations)
        assert [device_share(op, 4, 4, (4, 1)) is not None for op in ops] == [False, False, True, False, False, False]
        integer = ir.Module.parse("""
func.func @main(%a: tensor<4x4xi32>) -> tensor<4x4xi32> {
  %0 = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0]
      : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi32>
  return %0 : tensor<4x4xi32>
}""")
        assert device_share(integer.body.operations[0].regions[0].blocks[0].operations[0], 4, 4, (4, 1)) is None


def test_a_dot_is_priced_from_the_table_else_at_the_matmul_rate(tmp_path) -> None:
    assert DOT.key == "float32[16,128]x[128,256] batch []x[] contracting [1]x[0] -> float32 on 4"
    assert DOT.flops == 2 * 16 * 128 * 256
    assert PROFILE.dot_seconds(DOT) == PROFILE.matmul_seconds(DOT.flops * 4, "float32", 4)
    timed = dataclasses.replace(PROFILE, dots={DOT.key: 0.125})
    assert timed.dot_seconds(DOT) == 0.125
    assert timed.dot_seconds(dataclasses.replace(DOT, devices=2)) == PROFILE.matmul_seconds(DOT.flops * 2,
                                                                                           "float32", 2)
    timed.save(tmp_path / "p.json")
    assert DeviceProfile.load(tmp_path / "p.json") == timed
    data = json.loads(PROFILE.to_json())
    del data["dots"]  # a profile saved before the table reads as one with none
    (tmp_path / "old.json").write_text(json.dumps(data))
    assert DeviceProfile.load(tmp_path / "old.json") == PROFILE
    data["dots"] = {DOT.key: -1.0}
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(DeviceProfileError, match="all positive"):
        DeviceProfile.load(tmp_path / "bad.json")


def test_timed_dots_raise_the_peaks_that_bound_any_matmul(tmp_path) -> None:
    # DOT at 1e-3 s: 2*16*128*256 / 1e-3 = 1.05e9 FLOP/s per device on 4, above the
    # square matmuls' 5e8 at its size; a slower dot leaves the peak, a noise-level one is left out.
    slow = dataclasses.replace(DOT, lhs=(32, 128), rhs=(128, 256))
    tiny = dataclasses.replace(DOT, lhs=(1, 1), rhs=(1, 1))
    profile = PROFILE.with_dots({DOT: 1e-3, slow: 1.0, tiny: 1e-7})
    assert profile.dots == {DOT.key: 1e-3, slow.key: 1.0, tiny.key: 1e-7}
    assert profile.dot_peaks == {"float32": {4: pytest.approx(DOT.flops / 1e-3)}}
    flops = 4 * DOT.flops
    assert profile.fastest_matmul_seconds(flops, "float32", 4) == pytest.approx(1e-3)
    assert PROFILE.fastest_matmul_seconds(flops, "float32", 4) == PROFILE.matmul_seconds(flops, "float32", 4)
    assert profile.fastest_matmul_seconds(flops, "float32", 1) == PROFILE.matmul_seconds(flops, "float32", 1)
    # The square matmuls stay the bound where they are faster than every dot.
    slower = PROFILE.with_dots({slow: 1.0})
    assert slower.fastest_matmul_seconds(flops, "float32", 4) == PROFILE.matmul_seconds(flops, "float32", 4)
    profile.save(tmp_path / "p.json")
    assert DeviceProfile.load(tmp_path / "p.json") == profile


def test_compute_prices_a_dot_at_its_time_in_the_table() -> None:
    with make_context():
        module = ir.Module.parse(MODULE)
        graph = StepGraph(module.body.operations[0])
        everything = list(range(len(graph.ops)))
        rate = compute_seconds(graph, everything, 4, PROFILE)
        timed = dataclasses.replace(PROFILE, dots={DOT.key: 0.125})
        planned = compute_seconds(graph, everything, 4, timed, tiles={2: (4, 1)})  # the dot's rows split
        assert compute_seconds(graph, everything, 4, timed) == rate  # without a plan: at the FLOP/s
        # A dot faster than the square matmuls lowers the bound without a plan to its FLOP/s.
        fast = PROFILE.with_dots({DOT: 1e-4})
        bound = compute_seconds(graph, everything, 4, fast)
        assert bound == pytest.approx(compute_seconds(graph, everything, 4, fast, tiles={2: (4, 1)})) and bound < rate
    assert planned - rate == pytest.approx(0.125 - PROFILE.dot_seconds(DOT))


def test_only_the_dots_the_table_lacks_are_timed_once_each() -> None:
    asked = []

    def timer(dots: list[Dot]) -> dict[str, float]:
        asked.append([dot.key for dot in dots])
        return {dot.key: 1e-3 * dot.devices for dot in dots}

    others = [dataclasses.replace(DOT, lhs=(64 // n, 128), devices=n) for n in (1, 2)]
    dots = [DOT, others[0], None, others[1], others[0]]
    profile = with_timed_dots(dataclasses.replace(PROFILE, dots={DOT.key: 0.5}), dots, timer)
    assert with_timed_dots(profile, dots, timer) is profile  # all known: no timing
    assert asked == [[dot.key for dot in others]]
    assert profile.dots == {DOT.key: 0.5, others[0].key: 1e-3, others[1].key: 2e-3}
    assert with_timed_dots(PROFILE, dots, None) is PROFILE  # no timer: the matmul rate prices them


def test_dots_are_timed_in_programs_of_them(monkeypatch) -> None:
    monkeypatch.setattr(measuring, "DOT_ROUNDS", 3)
    small = Dot((32, 32), (32, 32), (), (), (1,), (0,), "float32", "float32", 2)
    large = dataclasses.replace(small, lhs=(512, 512), rhs=(512, 512))  # 4096 times the FLOPs
    odd = Dot((3, 32, 16), (3, 8, 32), (0,), (0,), (1,), (2,), "bfloat16", "float32", 1)
    seconds = measuring.time_dots([small, large, odd], jax.devices()[:2])
    assert set(seconds) == {small.key, large.key, odd.key} and all(s > 0 for s in seconds.values())
    assert seconds[large.key] > 10 * seconds[small.key]


def test_the_local_dot_table_times_each_dot_once_and_caches_it(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ALPA_MLIR_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(measuring, "_TIMED_DOTS", {})
    path = measuring.cache_path()
    dataclasses.replace(PROFILE, dots={DOT.key: 0.5}).save(path)
    timed = []
    monkeypatch.setattr(measuring, "time_dots", lambda dots: timed.append(dots) or {d.key: 0.25 for d in dots})
    measuring.local_profile.cache_clear()
    try:
        other = dataclasses.replace(DOT, devices=1)
        assert measuring.local_dot_seconds([DOT, other, other]) == {DOT.key: 0.5, other.key: 0.25}
        assert timed == [[other]] and DeviceProfile.load(path).dots == {DOT.key: 0.5, other.key: 0.25}
        assert measuring.local_dot_seconds([other]) == {other.key: 0.25} and len(timed) == 1
    finally:
        measuring.local_profile.cache_clear()


def test_stage_latencies_take_the_dots_the_timer_gives() -> None:
    # device-profile=local: the search asks the timer for its dots' shares under the plans,
    # once, and slower dots make slower stages by what they add.
    from test_stage_construction import mlp_module
    latencies, asked = [], []
    for dot_seconds in (1e-4, 1e-2):
        def timer(dots: list[Dot], seconds: float = dot_seconds) -> dict[str, float]:
            asked.append(sorted({dot.devices for dot in dots}))
            return {dot.key: seconds for dot in dots}

        module, _ = mlp_module()
        stages = StageConstructionPass(cluster_shape=(1, 4), stage_mode="manual", stage_layers=(2, 2),
                                       stage_submeshes=(1, 2, 1, 2), logical_mesh_space="physical",
                                       device_profile="local", device_profiler=lambda: PROFILE, dot_timer=timer,
                                       on_plan=lambda plan: latencies.append([s.latency for s in plan.stages]))
        run_pipeline(module, [stages])
    assert asked == [[2]] * 2  # once per run: the plans' shares
    dots_per_stage = [(slow - fast) / (1e-2 - 1e-4) for fast, slow in zip(*latencies)]
    assert all(math.isclose(n, round(n)) and n >= 1 for n in dots_per_stage)
