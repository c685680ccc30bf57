"""CrossMeshTransfer (runtime/transfer.py): cross-mesh resharding plans run as ppermute +
all-gather programs on 8 CPU devices (Sec. 6)."""

from __future__ import annotations

import math

import jax
import ml_dtypes
import numpy as np
import pytest

from alpa_mlir.dialect.jax_interop import spec_to_named_sharding
from alpa_mlir.dialect.mesh import DeviceMesh
from alpa_mlir.dialect.sharding import ShardingSpec
from alpa_mlir.lowering.spmd import SharedCompiles
from alpa_mlir.plans.reshard_plan import LocalGather, ReshardPlan, TileMove, plan_reshard
from alpa_mlir.runtime.device_copies import LocalBlock, Piece, copy_work, plan_copies
from alpa_mlir.runtime.transfer import CrossMeshTransfer, gather_stages, permute_rounds

RNG = np.random.default_rng(0)
R = ShardingSpec(((), ()))
S0 = ShardingSpec(((0,), ()))  # rows on mesh axis 0
S1 = ShardingSpec(((), (1,)))  # columns on mesh axis 1
S01 = ShardingSpec(((0, 1), ()))  # rows on both axes
S0_ON_1 = ShardingSpec(((1,), ()))  # rows on axis 1: on a (2,2) mesh, replicated over axis 0


def mesh(shape: tuple[int, int], first: int) -> DeviceMesh:
    return DeviceMesh(shape, tuple(range(first, first + math.prod(shape))))


def place(x: np.ndarray, spec: ShardingSpec, on: DeviceMesh) -> jax.Array:
    return jax.device_put(x, spec_to_named_sharding(spec, on))


def check_result(y: jax.Array, x: np.ndarray, spec: ShardingSpec, on: DeviceMesh) -> None:
    """``y`` holds ``x`` exactly, with ``spec`` on ``on`` and nowhere else."""
    np.testing.assert_array_equal(np.asarray(y), x)
    assert y.sharding.is_equivalent_to(spec_to_named_sharding(spec, on), x.ndim)
    assert {d.id for d in y.sharding.device_set} == set(on.device_ids)
    assert {s.device.id for s in y.addressable_shards} == set(on.device_ids)
    for shard in y.addressable_shards:
        np.testing.assert_array_equal(np.asarray(shard.data), x[shard.index])


CASES = [
    # (source mesh, spec, destination mesh, spec, shape, dtype)
    pytest.param(mesh((1, 2), 0), S0, mesh((2, 2), 2), S0_ON_1, (8, 6), np.float32, id="12S0-22partial"),
    pytest.param(mesh((2, 2), 0), S01, mesh((1, 4), 4), R, (8, 4), np.float32, id="22S01-14R"),
    pytest.param(mesh((1, 1), 0), R, mesh((2, 2), 4), S0, (4, 6), np.int32, id="11R-22S0"),
    pytest.param(mesh((2, 2), 0), S0_ON_1, mesh((1, 2), 6), S1, (4, 8), ml_dtypes.bfloat16, id="22partial-12S1"),
    pytest.param(mesh((1, 4), 0), S1, mesh((1, 1), 7), R, (2, 8), np.float32, id="14S1-11R"),
]


@pytest.mark.parametrize("local_all_gather", [True, False], ids=["local_all_gather", "send_recv"])
@pytest.mark.parametrize("src_mesh,src_spec,dst_mesh,dst_spec,shape,dtype", CASES)
def test_transfer_matches_source(src_mesh, src_spec, dst_mesh, dst_spec, shape, dtype, local_all_gather):  # noqa: PLR0917 (pytest's parameters)
    # The plan's programs (direct=False; what runs across processes).
    x = (RNG.standard_normal(shape) * 100).astype(dtype)
    src = place(x, src_spec, src_mesh)
    plan = plan_reshard(shape, src_spec, src_mesh, dst_spec, dst_mesh, local_all_gather)
    transfer = CrossMeshTransfer(plan, src_mesh, src_spec, dst_mesh, dst_spec, dtype, direct=False)
    check_result(transfer(src), x, dst_spec, dst_mesh)
    assert not src.is_deleted()  # the source keeps its value; a second call reuses the programs
    check_result(transfer(src), x, dst_spec, dst_mesh)


def test_megatron_local_all_gather_moves_fewer_bytes():
    """Fig. 6a: equal (1,4) meshes, S^1 -> R; with local all-gather each column block crosses once."""
    src_mesh, dst_mesh = mesh((1, 4), 0), mesh((1, 4), 4)
    x = RNG.standard_normal((8, 16)).astype(np.float32)
    src = place(x, S1, src_mesh)
    moved = {}
    for local_all_gather in (False, True):
        plan = plan_reshard(x.shape, S1, src_mesh, R, dst_mesh, local_all_gather)
        transfer = CrossMeshTransfer(plan, src_mesh, S1, dst_mesh, R, x.dtype, direct=False)
        check_result(transfer(src), x, R, dst_mesh)
        moved[local_all_gather] = transfer.bytes_moved
        assert transfer.num_rounds == 4  # every source device sends 4 tiles: 4 rounds
    assert moved == {False: x.nbytes * 4, True: x.nbytes}


@pytest.mark.parametrize("direct", [True, False])
def test_scalar(direct):
    src_mesh, dst_mesh = mesh((1, 2), 0), mesh((1, 2), 2)
    rank0 = ShardingSpec(())
    x = np.float32(3.5)
    plan = plan_reshard((), rank0, src_mesh, rank0, dst_mesh)
    transfer = CrossMeshTransfer(plan, src_mesh, rank0, dst_mesh, rank0, np.float32, direct=direct)
    assert transfer.direct == direct
    check_result(transfer(place(np.asarray(x), rank0, src_mesh)), np.asarray(x), rank0, dst_mesh)


@pytest.mark.parametrize("src_mesh,src_spec,dst_mesh,dst_spec,shape,dtype", CASES + [
    pytest.param(mesh((1, 2), 0), S0_ON_1, mesh((1, 2), 2), S0_ON_1, (4, 8), np.float32, id="activations"),
    pytest.param(mesh((2, 2), 0), R, mesh((1, 4), 4), R, (4, 8), np.float32, id="replicated"),
    pytest.param(mesh((1, 2), 0), S0_ON_1, mesh((1, 2), 2), S1, (4, 8), np.float32, id="rows-to-columns"),
    pytest.param(mesh((1, 4), 0), S1, mesh((1, 2), 4), S1, (4, 8), np.float32, id="halves-from-quarters"),
    pytest.param(mesh((1, 2), 0), S1, mesh((2, 2), 2), S0, (4, 8), np.float32, id="columns-to-rows-held-twice"),
])
def test_in_one_process_blocks_are_copied_between_devices(src_mesh, src_spec, dst_mesh, dst_spec, shape, dtype):
    # runtime/device_copies.py: no collective program; the same array as the plan's programs.
    x = np.asarray(RNG.standard_normal(shape) * 100).astype(dtype)
    plan = plan_reshard(shape, src_spec, src_mesh, dst_spec, dst_mesh)
    copies = CrossMeshTransfer(plan, src_mesh, src_spec, dst_mesh, dst_spec, dtype)
    assert copies.direct and not CrossMeshTransfer(plan, src_mesh, src_spec, dst_mesh, dst_spec, dtype,
                                                   direct=False).direct
    src = place(x, src_spec, src_mesh)
    check_result(copies(src), x, dst_spec, dst_mesh)
    check_result(copies(src), x, dst_spec, dst_mesh)  # again, with its cut and assemble programs compiled
    assert not src.is_deleted() and copies._programs is None


def test_an_empty_array_crosses_as_empty_blocks_made_on_their_devices():
    src_mesh, dst_mesh = mesh((1, 2), 0), mesh((1, 2), 2)
    plan = plan_reshard((0, 8), S1, src_mesh, R, dst_mesh)
    copies = CrossMeshTransfer(plan, src_mesh, S1, dst_mesh, R, np.float32)
    assert copies.local_work == (0, 0, 0)
    check_result(copies(place(np.zeros((0, 8), np.float32), S1, src_mesh)), np.zeros((0, 8), np.float32), R, dst_mesh)
    with pytest.raises(ValueError, match=r"float32\[0, 8\] is empty: an empty array crosses meshes only as copies"):
        CrossMeshTransfer(plan, src_mesh, S1, dst_mesh, R, np.float32, direct=False)


def test_copies_take_whole_shards_in_turn_and_assemble_a_block_once():
    # Rows on a (1, 2) mesh to a replicated (1, 2) mesh: the first destination device
    # assembles the array from both halves, the second copies it from there.
    blocks = plan_copies({0: ((0, 2), (0, 8)), 1: ((2, 4), (0, 8))}, {2: ((0, 4), (0, 8)), 3: ((0, 4), (0, 8))})
    assert blocks == (LocalBlock(2, None, (Piece(0, None, (2, 8), (0, 0)), Piece(1, None, (2, 8), (2, 0)))),
                      LocalBlock(3, 2))
    assert copy_work(blocks, {2: ((0, 4), (0, 8)), 3: ((0, 4), (0, 8))}, 4) == (3, 1, 3 * 4 * 8 * 4)
    # A replicated value held by four devices, wanted by two: two senders, one copy each.
    whole = ((0, 4), (0, 8))
    assert plan_copies(dict.fromkeys(range(4), whole), dict.fromkeys((4, 5), whole)) == \
        (LocalBlock(4, 0), LocalBlock(5, 1))
    # Columns 0:4 wanted from rows held whole-width: each row half cut on its device.
    blocks = plan_copies({0: ((0, 2), (0, 8)), 1: ((2, 4), (0, 8))}, {2: ((0, 4), (0, 4))})
    assert blocks == (LocalBlock(2, None, (Piece(0, (0, 0), (2, 4), (0, 0)), Piece(1, (0, 0), (2, 4), (2, 0)))),)
    assert copy_work(blocks, {2: ((0, 4), (0, 4))}, 4) == (2, 3, 2 * 4 * 4 * 4)


def test_transfers_of_one_structure_compile_once():
    # The same resharding between other meshes of the same shapes: its programs are written
    # against positions in the two meshes, so they are loaded onto the other devices.
    shared = SharedCompiles()
    x = RNG.standard_normal((8, 16)).astype(np.float32)
    for first in (0, 4):  # (1, 2) -> (1, 2) on devices 0-3, then on 4-7
        src_mesh, dst_mesh = mesh((1, 2), first), mesh((1, 2), first + 2)
        plan = plan_reshard(x.shape, S1, src_mesh, R, dst_mesh)
        transfer = CrossMeshTransfer(plan, src_mesh, S1, dst_mesh, R, np.float32, direct=False)
        assert transfer.stages  # a permute and a gather program
        transfer.compile(shared)
        check_result(transfer(place(x, S1, src_mesh)), x, R, dst_mesh)
    assert shared.loaded == 2


def test_hand_plan_tiles_of_several_shapes_and_two_gathers_per_device():
    """Tiles of four shapes (rounds are per shape), three pieces into device 4, and two
    one-device gathers into device 5 (two slots of its piece buffer)."""
    src_mesh, dst_mesh = mesh((1, 2), 0), mesh((1, 2), 4)
    rows_on_1 = ShardingSpec(((1,), ()))  # device 0: rows 0:2, device 1: rows 2:4
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    plan = ReshardPlan((4, 6), moves=(
        TileMove(0, 0, 4, ((0, 2), (0, 2))), TileMove(1, 0, 4, ((0, 2), (2, 6))), TileMove(2, 1, 4, ((2, 4), (0, 6))),
        TileMove(3, 0, 5, ((0, 2), (3, 6)), gather=0), TileMove(4, 0, 5, ((0, 2), (0, 3)), gather=1),
        TileMove(5, 1, 5, ((2, 4), (0, 6)))),
        gathers=(LocalGather((5,), 1, ((0, 2), (3, 6))), LocalGather((5,), 1, ((0, 2), (0, 3)))),
        dst_tiles={4: ((0, 4), (0, 6)), 5: ((0, 4), (0, 6))})
    transfer = CrossMeshTransfer(plan, src_mesh, rows_on_1, dst_mesh, R, np.float32, direct=False)
    # (2,2), (2,4): one round each; (2,3): two moves 0 -> 5; (2,6): device 1 sends two.
    assert transfer.num_rounds == 6
    assert transfer.bytes_moved == 4 * (24 + 12 + 12)
    check_result(transfer(place(x, rows_on_1, src_mesh)), x, R, dst_mesh)


def test_hand_plan_gather_in_reversed_group_order():
    """all_gather concatenates in group order, which need not be mesh order."""
    src_mesh, dst_mesh = mesh((1, 1), 0), mesh((1, 2), 4)
    x = RNG.standard_normal((4, 2)).astype(np.float32)
    tile = ((0, 4), (0, 2))
    plan = ReshardPlan((4, 2), moves=(TileMove(0, 0, 5, ((0, 2), (0, 2)), 0), TileMove(1, 0, 4, ((2, 4), (0, 2)), 0)),
                       gathers=(LocalGather((5, 4), 0, tile),), dst_tiles={4: tile, 5: tile})
    transfer = CrossMeshTransfer(plan, src_mesh, R, dst_mesh, R, np.float32, direct=False)  # the programs
    assert [stage.rows for stage in transfer.stages] == [((5, 4),)]
    check_result(transfer(place(x, R, src_mesh)), x, R, dst_mesh)


@pytest.mark.parametrize("seed", range(20))
def test_permute_rounds_are_a_konig_colouring(seed):
    """Every round is a valid ppermute and there are as many as the busiest device has moves."""
    rng = np.random.default_rng(seed)
    moves = [TileMove(i, int(rng.integers(4)), 4 + int(rng.integers(4)), ((0, 1 + int(rng.integers(2))),))
             for i in range(int(rng.integers(1, 30)))]
    rounds = permute_rounds(moves)
    assert sorted(m.channel_id for r in rounds for m in r) == list(range(len(moves)))
    for r in rounds:
        assert len({m.src_device for m in r}) == len(r) == len({m.dst_device for m in r})
        assert len({m.tile[0][1] for m in r}) == 1
    expected = 0
    for length in (1, 2):
        same = [m for m in moves if m.tile[0][1] == length]
        degrees = [sum(1 for m in same if m.src_device == d) for d in range(4)]
        degrees += [sum(1 for m in same if m.dst_device == d) for d in range(4, 8)]
        expected += max(degrees)
    assert len(rounds) == expected


def test_gather_stages_group_replication_groups_in_one_arrangement():
    plan = plan_reshard((8, 8), S01, mesh((2, 2), 0), S0, mesh((2, 2), 4))
    # S^0 on (2,2) replicates each row block over mesh axis 1: groups (4,5) and (6,7).
    (stage,) = gather_stages(plan.gathers, (4, 5, 6, 7))
    assert stage.rows == ((4, 5), (6, 7))
    assert all(len(r) == 2 for r in stage.rounds)  # one gather per group per round


def test_gather_groups_that_do_not_partition_the_mesh():
    gather = LocalGather((1, 2), 0, ((0, 4),))
    with pytest.raises(ValueError, match="do not form groups of 2"):
        gather_stages([gather], (1, 2, 3))


@pytest.fixture(scope="module")
def megatron():
    src_mesh, dst_mesh = mesh((1, 4), 0), mesh((1, 4), 4)
    plan = plan_reshard((8, 8), S1, src_mesh, R, dst_mesh)
    return CrossMeshTransfer(plan, src_mesh, S1, dst_mesh, R, np.float32), src_mesh, dst_mesh


@pytest.mark.parametrize("make,match", [
    (lambda s, d: np.zeros((8, 8), np.float32), "not ndarray"),
    (lambda s, d: place(np.zeros((8, 4), np.float32), S1, s), r"float32\[8, 4\]"),
    (lambda s, d: place(np.zeros((8, 8), np.int32), S1, s), r"int32\[8, 8\]"),
    (lambda s, d: place(np.zeros((8, 8), np.float32), R, s), "has sharding"),
    (lambda s, d: place(np.zeros((8, 8), np.float32), S1, d), "has sharding"),
], ids=["numpy", "shape", "dtype", "spec", "mesh"])
def test_bad_input(megatron, make, match):
    transfer, src_mesh, dst_mesh = megatron
    with pytest.raises(ValueError, match=match):
        transfer(make(src_mesh, dst_mesh))


def test_bad_construction():
    src_mesh, dst_mesh = mesh((1, 2), 0), mesh((1, 2), 2)
    plan = plan_reshard((4, 4), S1, src_mesh, R, dst_mesh)
    with pytest.raises(ValueError, match="share devices"):
        CrossMeshTransfer(plan, src_mesh, S1, mesh((1, 2), 1), R, np.float32)
    with pytest.raises(ValueError, match="destination tiles"):
        CrossMeshTransfer(plan, src_mesh, S1, dst_mesh, S1, np.float32)
    with pytest.raises(ValueError, match="evenly divide"):
        uneven = plan_reshard((3, 3), S1, src_mesh, R, dst_mesh)
        CrossMeshTransfer(uneven, src_mesh, S1, dst_mesh, R, np.float32)
    wrong_sender = ReshardPlan(plan.shape, tuple(
        TileMove(m.channel_id, 1 - m.src_device, m.dst_device, m.tile, m.gather) for m in plan.moves),
        plan.gathers, plan.dst_tiles)
    with pytest.raises(ValueError, match="cuts outside the source shard"):
        CrossMeshTransfer(wrong_sender, src_mesh, S1, dst_mesh, R, np.float32)
    missing = ReshardPlan(plan.shape, plan.moves[1:], plan.gathers, plan.dst_tiles)
    with pytest.raises(ValueError, match="inconsistent"):
        CrossMeshTransfer(missing, src_mesh, S1, dst_mesh, R, np.float32)


def test_cases_cover_the_asked_meshes():
    shapes = {p.values[i].shape for p in CASES for i in (0, 2)}
    assert shapes == {(1, 2), (1, 4), (2, 2), (1, 1)}
    assert not any(set(p.values[0].device_ids) & set(p.values[2].device_ids) for p in CASES)
