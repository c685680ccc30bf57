"""Cross-mesh resharding plans (Sec. 6): simulated on numpy arrays, against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from jax._src.lib.mlir import ir

from alpa_mlir.dialect import make_context
from alpa_mlir.dialect.alpa_ops import verify_alpa_ops
from alpa_mlir.dialect.mesh import DeviceMesh
from alpa_mlir.dialect.sharding import ShardingSpec
from alpa_mlir.dialect.tile_map import tile_map
from alpa_mlir.passes import run_pipeline
from alpa_mlir.plans.reshard_plan import (
    ReshardPlan,
    Tile,
    check_plan,
    device_pieces,
    intersect,
    partitions,
    plan_bytes,
    plan_reshard,
    split_dim,
    volume,
)

S1 = ShardingSpec(((), (1,)))  # Megatron's column-split activation on a (1, n) mesh
R2 = ShardingSpec.replicated(2)


def local(tile: Tile, inside: Tile) -> tuple[slice, ...]:
    """The index of global ``tile`` in the local array of a device holding ``inside``."""
    return tuple(slice(s - base, lim - base) for (s, lim), (base, _) in zip(tile, inside))


def whole(tile: Tile) -> tuple[slice, ...]:
    return tuple(slice(s, lim) for s, lim in tile)


def src_tiles(spec: ShardingSpec, mesh: DeviceMesh, shape: tuple[int, ...]) -> dict[int, Tile]:
    return {d: tuple((s.start, s.stop) for s in t) for d, t in tile_map(spec, mesh, shape).items()}


def inside(tile: Tile, outer: Tile) -> bool:
    return intersect(tile, outer) == tile


def simulate(plan: ReshardPlan, spec: ShardingSpec, mesh: DeviceMesh) -> None:
    """Run ``plan`` on a random global array: every source device holds its slice; moves
    copy from the sender's local data, local all-gathers concatenate their pieces, every
    destination device assembles its tile; each must end with exactly its slice."""
    data = np.random.default_rng(0).standard_normal(plan.shape)
    held = {d: (t, data[whole(t)]) for d, t in src_tiles(spec, mesh, plan.shape).items()}
    received: dict[tuple[int, int], np.ndarray] = {}  # (channel, device) -> data
    for move in plan.moves:
        tile, array = held[move.src_device]
        assert inside(move.tile, tile), "a device sends what it does not hold"
        received[move.channel_id, move.dst_device] = array[local(move.tile, tile)].copy()
    gathered = []
    for index, gather in enumerate(plan.gathers):
        parts = {m.dst_device: received[m.channel_id, m.dst_device] for m in plan.moves if m.gather == index}
        gathered.append(np.concatenate([parts[d] for d in gather.devices], axis=gather.dim))
    for device, pieces in device_pieces(plan).items():
        tile = plan.dst_tiles[device]
        out = np.full([lim - s for s, lim in tile], np.nan)
        covered = np.zeros(out.shape, dtype=int)
        for piece in pieces:
            move = plan.moves[piece.move] if piece.move is not None else None
            value = gathered[piece.gather] if move is None else received[move.channel_id, device]
            out[local(piece.tile, tile)] = value
            covered[local(piece.tile, tile)] += 1
        assert (covered == 1).all(), f"device {device}: pieces overlap or leave a gap"
        np.testing.assert_array_equal(out, data[whole(tile)])


def random_mesh(rng: np.random.Generator, first: int) -> DeviceMesh:
    shape = [(2,), (3,), (4,), (1, 2), (2, 2), (1, 4), (2, 3), (3, 2), (2, 1)][rng.integers(9)]
    size = int(np.prod(shape))
    ids = rng.permutation(size) + first if rng.integers(2) else np.arange(size) + first
    return DeviceMesh(shape, tuple(int(i) for i in ids))


def random_spec(rng: np.random.Generator, mesh: DeviceMesh, rank: int) -> ShardingSpec:
    """Each mesh axis unused (replication) or on a random tensor dimension, in random order."""
    dims: list[list[int]] = [[] for _ in range(rank)]
    for axis in rng.permutation(mesh.ndim):
        target = int(rng.integers(rank + 1))
        if target < rank:
            dims[target].append(int(axis))
    return ShardingSpec(tuple(tuple(d) for d in dims))


def random_case(seed: int):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 4))
    shape = tuple(int(s) for s in rng.integers(1, 13, size=rank))
    src = random_mesh(rng, 0)
    dst = random_mesh(rng, 100)
    return shape, random_spec(rng, src, rank), src, random_spec(rng, dst, rank), dst


@pytest.mark.parametrize("local_all_gather", [True, False])
@pytest.mark.parametrize("seed", range(150))
def test_random_plans_deliver_exactly_the_destination_tiles(seed: int, local_all_gather: bool) -> None:
    shape, src_spec, src, dst_spec, dst = random_case(seed)
    plan = plan_reshard(shape, src_spec, src, dst_spec, dst, local_all_gather)
    check_plan(plan)
    simulate(plan, src_spec, src)
    assert len({m.channel_id for m in plan.moves}) == len(plan.moves)
    assert set(plan.dst_tiles) == set(dst.device_ids)
    baseline = plan_reshard(shape, src_spec, src, dst_spec, dst, local_all_gather=False)
    assert plan_bytes(plan, 4) <= plan_bytes(baseline, 4)


@pytest.mark.parametrize(("shape", "src", "dst"), [
    ((8, 16), DeviceMesh((1, 4)), DeviceMesh((1, 4), (4, 5, 6, 7))),  # Fig. 6a: Megatron's equal meshes
    ((8, 16), DeviceMesh((1, 2)), DeviceMesh((1, 4), (2, 3, 4, 5))),  # unequal mesh shapes
    ((8, 12), DeviceMesh((1, 2)), DeviceMesh((2, 2), (2, 3, 4, 5))),  # to a 2-D mesh
    ((8, 12), DeviceMesh((1, 4)), DeviceMesh((2, 2), (4, 5, 6, 7))),  # (1, 4) to (2, 2)
])
def test_local_all_gather_sends_strictly_fewer_bytes_when_the_destination_replicates(shape, src, dst) -> None:
    with_gather = plan_reshard(shape, S1, src, R2, dst)
    without = plan_reshard(shape, S1, src, R2, dst, local_all_gather=False)
    simulate(with_gather, S1, src)
    simulate(without, S1, src)
    assert plan_bytes(without, 2) == 2 * volume(tuple((0, s) for s in shape)) * dst.size
    assert plan_bytes(with_gather, 2) < plan_bytes(without, 2)
    assert with_gather.gathers and not without.gathers


def test_megatron_case_sends_each_tile_once_then_all_gathers() -> None:
    src, dst = DeviceMesh((1, 2)), DeviceMesh((1, 2), (2, 3))
    plan = plan_reshard((4, 16), S1, src, R2, dst)
    assert plan_bytes(plan, 4) == 4 * 4 * 16  # the tensor crosses once
    assert [(m.src_device, m.dst_device, m.tile, m.gather) for m in plan.moves] == [
        (0, 2, ((0, 4), (0, 4)), 0), (0, 3, ((0, 4), (4, 8)), 0),
        (1, 2, ((0, 4), (8, 12)), 1), (1, 3, ((0, 4), (12, 16)), 1)]
    assert [(g.devices, g.dim, g.tile) for g in plan.gathers] == [
        ((2, 3), 1, ((0, 4), (0, 8))), ((2, 3), 1, ((0, 4), (8, 16)))]
    assert plan.dst_tiles == {2: ((0, 4), (0, 16)), 3: ((0, 4), (0, 16))}


def test_equal_shardings_on_equal_meshes_are_one_to_one_sends() -> None:
    plan = plan_reshard((8, 16), S1, DeviceMesh((1, 4)), S1, DeviceMesh((1, 4), (4, 5, 6, 7)))
    assert [(m.src_device, m.dst_device) for m in plan.moves] == [(0, 4), (1, 5), (2, 6), (3, 7)]
    assert not plan.gathers


def test_indivisible_tile_falls_back_to_direct_sends() -> None:
    # A 3x5 tile cannot be cut in 2 equal pieces: both replicas get it whole.
    plan = plan_reshard((3, 5), R2, DeviceMesh((1,)), R2, DeviceMesh((2,), (1, 2)))
    assert not plan.gathers
    assert [(m.dst_device, m.tile, m.gather) for m in plan.moves] == [(1, ((0, 3), (0, 5)), None),
                                                                       (2, ((0, 3), (0, 5)), None)]


def test_split_dim_prefers_the_largest_divisible_dimension() -> None:
    assert split_dim(((0, 4), (0, 8)), 2) == 1
    assert split_dim(((0, 4), (0, 6)), 4) == 0
    assert split_dim(((0, 4), (0, 4)), 2) == 0  # ties: the first
    assert split_dim(((0, 3), (0, 5)), 2) is None
    assert split_dim(((0, 4),), 1) is None
    assert split_dim((), 2) is None


def test_uneven_and_empty_tiles() -> None:
    # 5 rows over 4 devices (XLA's rule: 2, 2, 1, 0): the empty tile sends and receives nothing.
    src = DeviceMesh((4,))
    s0 = ShardingSpec(((0,), ()))
    plan = plan_reshard((5, 3), s0, src, ShardingSpec(((), ())), DeviceMesh((2,), (7, 8)))
    check_plan(plan)
    simulate(plan, s0, src)
    assert 3 not in {m.src_device for m in plan.moves}
    back = plan_reshard((5, 3), R2, DeviceMesh((1,), (9,)), s0, src)
    assert back.dst_tiles[3] == ((5, 5), (0, 3))
    assert 3 not in {m.dst_device for m in back.moves}
    check_plan(back)


def test_scalar_is_sent_whole() -> None:
    plan = plan_reshard((), ShardingSpec(()), DeviceMesh((2,)), ShardingSpec(()), DeviceMesh((2,), (2, 3)))
    assert [(m.dst_device, m.tile) for m in plan.moves] == [(2, ()), (3, ())]
    assert {m.src_device for m in plan.moves} == {0, 1}  # one send each: balanced
    check_plan(plan)


def test_overlapping_meshes_are_rejected() -> None:
    with pytest.raises(ValueError, match=r"disjoint meshes; devices \[1\] are in both"):
        plan_reshard((4,), ShardingSpec(((),)), DeviceMesh((2,)), ShardingSpec(((),)), DeviceMesh((2,), (1, 2)))


def test_spec_that_does_not_fit_the_mesh_is_rejected() -> None:
    with pytest.raises(ValueError, match="uses mesh axis 1"):
        plan_reshard((4, 4), S1, DeviceMesh((2,)), R2, DeviceMesh((2,), (2, 3)))


def test_partitions() -> None:
    tile = ((0, 4), (0, 4))
    assert partitions(tile, [((0, 2), (0, 4)), ((2, 4), (0, 4))])
    assert not partitions(tile, [((0, 2), (0, 4))])  # a gap
    assert not partitions(tile, [((0, 3), (0, 4)), ((2, 4), (0, 4))])  # an overlap
    assert not partitions(tile, [((0, 2), (0, 4)), ((2, 5), (0, 4))])  # outside
    assert partitions(((5, 5), (0, 3)), [])  # an empty tile needs no piece


def test_check_plan_catches_a_missing_piece() -> None:
    plan = plan_reshard((4, 16), S1, DeviceMesh((1, 2)), R2, DeviceMesh((1, 2), (2, 3)), local_all_gather=False)
    broken = ReshardPlan(plan.shape, plan.moves[:-1], plan.gathers, plan.dst_tiles)
    with pytest.raises(ValueError, match="the pieces of device 3 do not partition its tile"):
        check_plan(broken)


# ----------------------------------------------------------------------------- balancing


def per_sender(plan: ReshardPlan) -> dict[int, int]:
    sent: dict[int, int] = {}
    for move in plan.moves:
        sent[move.src_device] = sent.get(move.src_device, 0) + volume(move.tile)
    return sent


def best_max_load(plan: ReshardPlan, spec: ShardingSpec, mesh: DeviceMesh) -> int:
    """Brute force: the least possible maximum elements any source device sends, over
    every choice of sender (a holder of the move's source tile) for the plan's moves."""
    tiles = src_tiles(spec, mesh, plan.shape)
    holders = [[d for d, t in tiles.items() if inside(m.tile, t)] for m in plan.moves]
    if np.prod([len(h) for h in holders]) > 50_000:
        pytest.skip("too many sender choices for brute force")
    best = None
    for choice in itertools.product(*holders):
        load: dict[int, int] = {}
        for device, move in zip(choice, plan.moves):
            load[device] = load.get(device, 0) + volume(move.tile)
        worst = max(load.values(), default=0)
        best = worst if best is None else min(best, worst)
    return best or 0


@pytest.mark.parametrize(("shape", "src_spec", "src", "dst_spec", "dst", "local_all_gather"), [
    ((4, 6), R2, DeviceMesh((2,)), ShardingSpec(((0,), ())), DeviceMesh((3,), (2, 3, 4)), False),
    ((5, 3), R2, DeviceMesh((3,)), ShardingSpec(((0,), ())), DeviceMesh((3,), (3, 4, 5)), False),
    ((7, 2), R2, DeviceMesh((2,)), ShardingSpec(((0,), ())), DeviceMesh((3,), (2, 3, 4)), False),
    ((6, 6), R2, DeviceMesh((2,)), ShardingSpec(((0,), (1,))), DeviceMesh((2, 2), (2, 3, 4, 5)), False),
    ((5, 5), R2, DeviceMesh((3,)), ShardingSpec(((0,), (1,))), DeviceMesh((2, 2), (3, 4, 5, 6)), False),
    ((4, 8), ShardingSpec(((0,), ())), DeviceMesh((2, 2)), R2, DeviceMesh((1, 2), (4, 5)), True),
    ((4, 8), ShardingSpec(((1,), ())), DeviceMesh((2, 2)), R2, DeviceMesh((3,), (4, 5, 6)), True),
    ((6, 4), R2, DeviceMesh((2,)), ShardingSpec(((0,), ())), DeviceMesh((2, 2), (2, 3, 4, 5)), True),
])
def test_replicated_sources_share_the_sending(shape, src_spec, src, dst_spec, dst, local_all_gather) -> None:
    plan = plan_reshard(shape, src_spec, src, dst_spec, dst, local_all_gather)
    simulate(plan, src_spec, src)
    assert max(per_sender(plan).values()) == best_max_load(plan, src_spec, src)


@pytest.mark.parametrize("seed", range(60))
def test_random_replicated_sources_are_balanced_like_brute_force(seed: int) -> None:
    shape, src_spec, src, dst_spec, dst = random_case(1000 + seed)
    plan = plan_reshard(shape, src_spec, src, dst_spec, dst)
    assert max(per_sender(plan).values(), default=0) == best_max_load(plan, src_spec, src)


# ----------------------------------------------------------------------------- the pass


def two_stage_module(shape, src_spec, src, dst_spec, dst) -> str:
    """A post-stage-construction module: @p on ``src`` feeds @c on ``dst``."""
    def mesh_attr(mesh: DeviceMesh) -> str:
        return (f"{{device_ids = array<i64: {', '.join(map(str, mesh.device_ids))}>, "
                f"shape = array<i64: {', '.join(map(str, mesh.shape))}>}}")

    ty = "tensor<" + "".join(f"{s}x" for s in shape) + "f32>"
    out = f'"{src_spec.to_mhlo(DeviceMesh(src.shape))}"'
    arg = f'"{dst_spec.to_mhlo(DeviceMesh(dst.shape))}"'
    return f"""
      func.func private @p(%a: {ty}) -> ({ty} {{mhlo.sharding = {out}}}) attributes {{alpa.mesh = {mesh_attr(src)}}} {{
        return %a : {ty}
      }}
      func.func private @c(%a: {ty} {{mhlo.sharding = {arg}}}) -> {ty} attributes {{alpa.mesh = {mesh_attr(dst)}}} {{
        return %a : {ty}
      }}
      func.func public @main(%a: {ty}) -> {ty} {{
        %0 = call @p(%a) : ({ty}) -> {ty}
        %1 = call @c(%0) : ({ty}) -> {ty}
        return %1 : {ty}
      }}"""


@pytest.mark.parametrize("seed", range(40))
def test_pass_output_verifies_for_random_plans(seed: int) -> None:
    """The pass's IR for a random plan passes the alpa verifier, whose alpa.assemble check
    is that every destination device's pieces partition its tile; one send per move."""
    case = random_case(2000 + seed)
    for local_all_gather in (True, False):
        with make_context():
            module = ir.Module.parse(two_stage_module(*case))
            run_pipeline(module, f"builtin.module(alpa-cross-mesh-resharding{{local-all-gather={local_all_gather}}})")
            assert verify_alpa_ops(module.operation) == []
            text = str(module)
            plan = plan_reshard(*case, local_all_gather=local_all_gather)
            assert text.count('"alpa.send"') == text.count('"alpa.recv"') == len(plan.moves)
            assert text.count('"alpa.all_gather"') == len(plan.gathers)
            assert text.count('"alpa.assemble"') == 1
