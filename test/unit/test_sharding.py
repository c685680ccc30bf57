"""ShardingSpec: the paper's Table 1, mhlo.sharding printing/parsing, tile maps vs XLA."""

import itertools
import math

import jax
import numpy as np
import pytest
from jax._src.lib import xla_client
from jax.sharding import PartitionSpec as P
from spec_cases import all_specs

from alpa_mlir.dialect import (
    DeviceMesh,
    Maximal,
    Replicated,
    ShardingError,
    ShardingSpec,
    TiledSharding,
    format_mhlo_sharding,
    parse_mhlo_sharding,
    spec_from_sharding,
    tile_map,
)
from alpa_mlir.dialect.jax_interop import spec_from_partition_spec, spec_to_named_sharding
from alpa_mlir.dialect.tile_map import shard_extent, uneven_dims

HloSharding = xla_client.HloSharding

IOTA_MESHES = [DeviceMesh((4,)), DeviceMesh((2, 2)), DeviceMesh((2, 4)), DeviceMesh((2, 2, 2))]
PERMUTED_MESHES = [
    DeviceMesh((4,), device_ids=(2, 0, 3, 1)),
    DeviceMesh((2, 2), device_ids=(3, 1, 2, 0)),
    DeviceMesh((2, 4), device_ids=(7, 6, 5, 4, 3, 2, 1, 0)),
    DeviceMesh((2, 2, 2), device_ids=(3, 6, 0, 5, 2, 7, 1, 4)),
]


def mesh_id(mesh: DeviceMesh) -> str:
    shape = "x".join(map(str, mesh.shape))
    return shape if mesh.is_iota else f"{shape}-permuted"


def test_all_specs_enumeration_is_complete_and_distinct():
    # Rank 1 on two axes: R, S^0, S^1, S^{01}, S^{10}.
    assert {str(s) for s in all_specs(1, 2)} == {"R", "S^0", "S^1", "S^{01}", "S^{10}"}
    # Table 1's nine specs plus S^{10}R and RS^{10}, which the paper leaves out.
    specs = list(all_specs(2, 2))
    assert len(specs) == len(set(specs)) == 11
    specs = list(all_specs(3, 3))
    assert len(specs) == len(set(specs)) == 106
    assert len(list(all_specs(0, 3))) == 1


# --- The paper's Table 1 -------------------------------------------------------------

N, M = 4, 8


def A(r0, r1, c0, c1):  # noqa: N802 - mirrors the table's A[r0:r1, c0:c1]
    return (slice(r0, r1), slice(c0, c1))


TABLE_1 = {
    # spec: (device 0, device 1, device 2, device 3)
    "RR": (A(0, N, 0, M), A(0, N, 0, M), A(0, N, 0, M), A(0, N, 0, M)),
    "S^0S^1": (A(0, N // 2, 0, M // 2), A(0, N // 2, M // 2, M),
               A(N // 2, N, 0, M // 2), A(N // 2, N, M // 2, M)),
    "S^1S^0": (A(0, N // 2, 0, M // 2), A(N // 2, N, 0, M // 2),
               A(0, N // 2, M // 2, M), A(N // 2, N, M // 2, M)),
    "S^0R": (A(0, N // 2, 0, M), A(0, N // 2, 0, M), A(N // 2, N, 0, M), A(N // 2, N, 0, M)),
    "S^1R": (A(0, N // 2, 0, M), A(N // 2, N, 0, M), A(0, N // 2, 0, M), A(N // 2, N, 0, M)),
    "RS^0": (A(0, N, 0, M // 2), A(0, N, 0, M // 2), A(0, N, M // 2, M), A(0, N, M // 2, M)),
    "RS^1": (A(0, N, 0, M // 2), A(0, N, M // 2, M), A(0, N, 0, M // 2), A(0, N, M // 2, M)),
    "S^{01}R": (A(0, N // 4, 0, M), A(N // 4, N // 2, 0, M),
                A(N // 2, 3 * N // 4, 0, M), A(3 * N // 4, N, 0, M)),
    "RS^{01}": (A(0, N, 0, M // 4), A(0, N, M // 4, M // 2),
                A(0, N, M // 2, 3 * M // 4), A(0, N, 3 * M // 4, M)),
}

TABLE_1_SPECS = {
    "RR": ((), ()), "S^0S^1": ((0,), (1,)), "S^1S^0": ((1,), (0,)),
    "S^0R": ((0,), ()), "S^1R": ((1,), ()), "RS^0": ((), (0,)), "RS^1": ((), (1,)),
    "S^{01}R": ((0, 1), ()), "RS^{01}": ((), (0, 1)),
}


@pytest.mark.parametrize("name", list(TABLE_1))
def test_table_1(name):
    mesh = DeviceMesh((2, 2))
    np.testing.assert_array_equal(mesh.device_array, [[0, 1], [2, 3]])
    spec = ShardingSpec(TABLE_1_SPECS[name])
    assert str(spec) == name
    tiles = tile_map(spec, mesh, (N, M))
    assert tiles == dict(enumerate(TABLE_1[name]))
    # The slices really pick the table's blocks out of a concrete array.
    a = np.arange(N * M).reshape(N, M)
    for device, tile in tiles.items():
        r, c = TABLE_1[name][device]
        np.testing.assert_array_equal(a[tile], a[r.start:r.stop, c.start:c.stop])


def test_table_1_lists_every_spec_of_a_matrix_on_a_2x2_mesh():
    # Every spec but the two whose merged axes run minor-to-major.
    rest = set(all_specs(2, 2)) - {ShardingSpec(d) for d in TABLE_1_SPECS.values()}
    assert {str(s) for s in rest} == {"S^{10}R", "RS^{10}"}


# --- ShardingSpec basics -------------------------------------------------------------


def test_spec_properties():
    mesh = DeviceMesh((2, 4))
    spec = ShardingSpec([[1], []])
    assert spec.dims == ((1,), ())
    assert spec.rank == 2
    assert spec.used_axes == (1,)
    assert not spec.is_replicated
    assert spec.tile_shape(mesh) == (4, 1)
    assert spec.replication(mesh) == 2
    assert spec.device_order(mesh) == (1, 0)
    assert spec.num_shards(0, mesh) == 4
    assert ShardingSpec.replicated(3) == ShardingSpec(((), (), ()))
    assert ShardingSpec.replicated(3).is_replicated
    assert str(ShardingSpec(())) == "scalar"
    assert str(ShardingSpec(((1, 0), (), (2,)))) == "S^{10}RS^2"


def test_spec_tile_assignment():
    mesh = DeviceMesh((2, 4))
    tiled = ShardingSpec(((1,), ())).tile_assignment(mesh)
    assert tiled == TiledSharding((4, 1, 2), (0, 4, 1, 5, 2, 6, 3, 7), True)
    assert tiled.tensor_rank == 2
    tiled = ShardingSpec(((0,), (1,))).tile_assignment(DeviceMesh((2, 4), tuple(range(7, -1, -1))))
    assert tiled == TiledSharding((2, 4), (7, 6, 5, 4, 3, 2, 1, 0), False)
    np.testing.assert_array_equal(tiled.device_array(), [[7, 6, 5, 4], [3, 2, 1, 0]])


@pytest.mark.parametrize("dims", [((0,), (0,)), ((0, 0),), ((-1,),)])
def test_spec_rejects_repeated_or_negative_axes(dims):
    with pytest.raises(ShardingError, match="twice or a negative"):
        ShardingSpec(dims)


def test_spec_axis_out_of_mesh():
    with pytest.raises(ShardingError, match="mesh axis 2 but the mesh has 2 axes"):
        ShardingSpec(((2,), ())).to_mhlo(DeviceMesh((2, 2)))
    with pytest.raises(ShardingError, match="mesh axis 1"):
        tile_map(ShardingSpec(((1,),)), DeviceMesh((4,)), (4,))


# --- ANCHORS: exact mhlo strings on a (2, 4) mesh named (x, y) ---------------------

ANCHOR_CASES = [
    (P("x", "y"), "{devices=[2,4]<=[8]}"),
    (P("y", "x"), "{devices=[4,2]<=[2,4]T(1,0)}"),
    (P("x", None), "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"),
    (P(None, "y"), "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"),
    (P(("x", "y"), None), "{devices=[8,1]<=[8]}"),
    (P(("y", "x"), None), "{devices=[8,1]<=[2,4]T(1,0)}"),
    (P(None, None), "{replicated}"),
]


@pytest.mark.parametrize("pspec, text", ANCHOR_CASES, ids=[t for _, t in ANCHOR_CASES])
def test_anchor_strings(pspec, text):
    mesh = DeviceMesh((2, 4), axis_names=("x", "y"))
    spec = spec_from_partition_spec(pspec, mesh, 2)
    assert spec.to_mhlo(mesh) == text
    assert ShardingSpec.from_mhlo(text, mesh, 2) == spec
    # JAX prints the same canonical text for the same NamedSharding.
    assert str(spec_to_named_sharding(spec, mesh)._to_xla_hlo_sharding(2)) == text


def test_iota_form_on_three_axes():
    mesh = DeviceMesh((2, 2, 2))
    assert ShardingSpec(((0, 1, 2),)).to_mhlo(mesh) == "{devices=[8]<=[8]}"
    # Axes 1 and 2 stay adjacent, so they merge into one iota dimension of 4.
    assert ShardingSpec(((1, 2), (0,))).to_mhlo(mesh) == "{devices=[4,2]<=[2,4]T(1,0)}"
    assert (ShardingSpec(((2,), ())).to_mhlo(mesh)
            == "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}")
    assert ShardingSpec(((2,), (1,), (0,))).to_mhlo(mesh) == "{devices=[2,2,2]<=[2,2,2]T(2,1,0)}"


def test_iota_form_drops_size_one_axes():
    mesh = DeviceMesh((1, 4, 1, 2))
    text = ShardingSpec(((3,), (1,))).to_mhlo(mesh)
    assert text == "{devices=[2,4]<=[4,2]T(1,0)}"
    explicit = format_mhlo_sharding(ShardingSpec(((3,), (1,))).tile_assignment(mesh))
    assert HloSharding.from_string(text) == HloSharding.from_string(explicit)


# --- Exhaustive round trips ----------------------------------------------------------


def _round_trip_cases(meshes):
    for mesh in meshes:
        for rank in range(4):
            yield mesh, rank


@pytest.mark.parametrize("mesh, rank", list(_round_trip_cases(IOTA_MESHES)),
                         ids=lambda v: mesh_id(v) if isinstance(v, DeviceMesh) else f"rank{v}")
def test_round_trip_iota_mesh(mesh, rank):
    specs = list(all_specs(rank, mesh.ndim))
    assert specs
    shardings = {}
    for spec in specs:
        text = spec.to_mhlo(mesh)
        if spec.is_replicated:
            assert text == "{replicated}"
        else:
            assert "<=[" in text, text
        hlo = HloSharding.from_string(text)  # (a) XLA parses our text
        back = ShardingSpec.from_mhlo(text, mesh, rank)
        assert back == spec, (text, str(back), str(spec))  # (b)
        assert HloSharding.from_string(back.to_mhlo(mesh)) == hlo  # (c)
        # Explicit-device-list form: same XLA sharding, same spec.
        explicit = format_mhlo_sharding(spec.tile_assignment(mesh))
        assert "<=" not in explicit
        assert HloSharding.from_string(explicit) == hlo, (explicit, text)
        assert ShardingSpec.from_mhlo(explicit, mesh, rank) == spec
        shardings[spec] = hlo
    # Distinct specs are distinct XLA shardings on these meshes (no size-1 axes), so
    # comparing specs above is the right check.
    for a, b in itertools.combinations(specs, 2):
        assert shardings[a] != shardings[b], (str(a), str(b))


@pytest.mark.parametrize("mesh, rank", list(_round_trip_cases(PERMUTED_MESHES)),
                         ids=lambda v: mesh_id(v) if isinstance(v, DeviceMesh) else f"rank{v}")
def test_round_trip_permuted_mesh(mesh, rank):
    for spec in all_specs(rank, mesh.ndim):
        text = spec.to_mhlo(mesh)
        tiled = spec.tile_assignment(mesh)
        if spec.is_replicated:
            assert text == "{replicated}"
        else:
            assert text == format_mhlo_sharding(tiled)
        hlo = HloSharding.from_string(text)
        back = ShardingSpec.from_mhlo(text, mesh, rank)
        assert back == spec, (text, str(back), str(spec))
        assert HloSharding.from_string(back.to_mhlo(mesh)) == hlo
        # Tile devices come from the mesh: tile index -> mesh position -> device id.
        expected = mesh.device_array.transpose(spec.device_order(mesh)).reshape(tiled.shape)
        np.testing.assert_array_equal(tiled.device_array(), expected)
        # The same spec on the iota mesh of this shape differs by the id relabelling only.
        iota = DeviceMesh(mesh.shape)
        relabel = np.asarray(mesh.device_ids)[np.asarray(spec.tile_assignment(iota).devices)]
        np.testing.assert_array_equal(np.asarray(tiled.devices), relabel)


def test_replicated_spec_explicit_form_is_partial_replication_of_everything():
    mesh = DeviceMesh((2, 2))
    explicit = format_mhlo_sharding(ShardingSpec.replicated(2).tile_assignment(mesh))
    assert explicit == "{devices=[1,1,4]0,1,2,3 last_tile_dim_replicate}"
    assert HloSharding.from_string(explicit) == HloSharding.from_string("{replicated}")
    assert ShardingSpec.from_mhlo(explicit, mesh, 2) == ShardingSpec.replicated(2)
    scalar = format_mhlo_sharding(ShardingSpec(()).tile_assignment(mesh))
    assert scalar == "{devices=[4]0,1,2,3 last_tile_dim_replicate}"
    assert parse_mhlo_sharding(scalar) == Replicated()
    assert ShardingSpec.from_mhlo(scalar, mesh, 0) == ShardingSpec(())


def test_replication_group_order_does_not_matter():
    mesh = DeviceMesh((2, 2))
    # S^0R with each replicated pair listed in reverse order: the same sharding.
    text = "{devices=[2,1,2]1,0,3,2 last_tile_dim_replicate}"
    assert ShardingSpec.from_mhlo(text, mesh, 2) == ShardingSpec(((0,), ()))
    assert HloSharding.from_string(text) == HloSharding.from_string(
        ShardingSpec(((0,), ())).to_mhlo(mesh))


# --- Tile maps agree with XLA's device order ----------------------------------------


def _device_put_cases():
    for mesh in IOTA_MESHES + PERMUTED_MESHES:
        for rank in (1, 2, 3):
            yield mesh, rank


@pytest.mark.parametrize("mesh, rank", list(_device_put_cases()),
                         ids=lambda v: mesh_id(v) if isinstance(v, DeviceMesh) else f"rank{v}")
def test_tile_map_matches_jax_device_put(mesh, rank):
    shape = (8, 8, 8)[:rank]
    x = np.arange(math.prod(shape), dtype=np.int32).reshape(shape)
    checked = 0
    for spec in all_specs(rank, mesh.ndim):
        array = jax.device_put(x, spec_to_named_sharding(spec, mesh))
        tiles = tile_map(spec, mesh, shape)
        assert set(tiles) == set(mesh.device_ids)
        shards = array.addressable_shards
        assert {s.device.id for s in shards} == set(mesh.device_ids)
        for shard in shards:
            tile = tiles[shard.device.id]
            index = tuple(slice(*s.indices(n)[:2]) for s, n in zip(shard.index, shape, strict=True))
            assert index == tile, (str(spec), shard.device.id)
            np.testing.assert_array_equal(np.asarray(shard.data), x[tile])
            checked += 1
    assert checked > 0


# --- Uneven dimensions ------------------------------------------------------------


def test_shard_extent_uneven():
    assert [shard_extent(5, 2, i) for i in range(2)] == [slice(0, 3), slice(3, 5)]
    assert [shard_extent(5, 4, i) for i in range(4)] == [
        slice(0, 2), slice(2, 4), slice(4, 5), slice(5, 5)]
    assert [shard_extent(2, 4, i) for i in range(4)] == [
        slice(0, 1), slice(1, 2), slice(2, 2), slice(2, 2)]
    assert [shard_extent(8, 4, i) for i in range(4)] == [
        slice(0, 2), slice(2, 4), slice(4, 6), slice(6, 8)]
    assert shard_extent(7, 1, 0) == slice(0, 7)


def test_tile_map_uneven():
    mesh = DeviceMesh((2, 4))
    tiles = tile_map(ShardingSpec(((0,), (1,))), mesh, (5, 5))
    assert tiles[0] == (slice(0, 3), slice(0, 2))
    assert tiles[3] == (slice(0, 3), slice(5, 5))
    assert tiles[6] == (slice(3, 5), slice(4, 5))
    assert uneven_dims(ShardingSpec(((0,), (1,))), mesh, (5, 5)) == [0, 1]
    assert uneven_dims(ShardingSpec(((0,), (1,))), mesh, (4, 5)) == [1]
    assert uneven_dims(ShardingSpec(((0,), (1,))), mesh, (6, 8)) == []
    assert uneven_dims(ShardingSpec(((), (0, 1))), mesh, (3, 12)) == [1]
    assert uneven_dims(ShardingSpec.replicated(2), mesh, (3, 5)) == []
    # Every element is held by exactly the replication factor's number of devices.
    spec = ShardingSpec(((1,), ()))
    count = np.zeros((5, 3), dtype=int)
    for tile in tile_map(spec, mesh, (5, 3)).values():
        count[tile] += 1
    assert (count == spec.replication(mesh)).all()


def test_tile_map_rank_mismatch():
    with pytest.raises(ShardingError, match="rank 2 but the shape"):
        tile_map(ShardingSpec(((0,), ())), DeviceMesh((2,)), (4,))


def test_tile_map_scalar():
    assert tile_map(ShardingSpec(()), DeviceMesh((2, 2)), ()) == {d: () for d in range(4)}


# --- Parser -----------------------------------------------------------------------


def test_parse_simple_forms():
    assert parse_mhlo_sharding("{replicated}") == Replicated()
    assert parse_mhlo_sharding("  { replicated }  ") == Replicated()
    assert parse_mhlo_sharding("{maximal device=3}") == Maximal(3)
    assert parse_mhlo_sharding("{devices=[2,2]0,1,2,3}") == TiledSharding((2, 2), (0, 1, 2, 3))
    assert parse_mhlo_sharding("{devices=[2, 2] 3, 2, 1, 0}") == TiledSharding((2, 2), (3, 2, 1, 0))
    assert parse_mhlo_sharding("{devices=[4,2]<=[2,4]T(1,0)}") == TiledSharding(
        (4, 2), (0, 4, 1, 5, 2, 6, 3, 7))
    assert parse_mhlo_sharding("{devices=[2,4]<=[8]}") == TiledSharding((2, 4), tuple(range(8)))


def test_parse_partial_replication():
    expected = TiledSharding((2, 1, 4), tuple(range(8)), True)
    assert parse_mhlo_sharding("{devices=[2,1,4]<=[8] last_tile_dim_replicate}") == expected
    assert parse_mhlo_sharding("{devices=[2,1,4]<=[8] last_tile_dims={replicated}}") == expected
    assert parse_mhlo_sharding("{devices=[2,1,4]0,1,2,3,4,5,6,7 last_tile_dims={replicated}}") == expected
    # A trailing replication dim of 1 is no replication.
    assert parse_mhlo_sharding("{devices=[2,4,1]<=[8] last_tile_dim_replicate}") == TiledSharding(
        (2, 4), tuple(range(8)), False)
    # Only the replication dimension: fully replicated.
    assert parse_mhlo_sharding("{devices=[4]<=[4] last_tile_dim_replicate}") == Replicated()
    mesh = DeviceMesh((2, 4))
    assert (ShardingSpec.from_mhlo("{devices=[2,1,4]<=[8] last_tile_dims={replicated}}", mesh, 2)
            == ShardingSpec(((0,), ())))


def test_parse_tuple_and_empty():
    parsed = parse_mhlo_sharding("{{replicated}, {devices=[2,1]0,1}}")
    assert parsed == (Replicated(), TiledSharding((2, 1), (0, 1)))
    assert parse_mhlo_sharding("{}") == ()
    assert parse_mhlo_sharding("{ }") == ()
    assert parse_mhlo_sharding("{{maximal device=1}}") == (Maximal(1),)
    nested = "{{devices=[2,1,2]<=[4] last_tile_dim_replicate}, {replicated}, {maximal device=0}}"
    assert parse_mhlo_sharding(nested) == (
        TiledSharding((2, 1, 2), (0, 1, 2, 3), True), Replicated(), Maximal(0))
    assert format_mhlo_sharding(parsed) == "{{replicated}, {devices=[2,1]0,1}}"
    assert HloSharding.from_string(format_mhlo_sharding(parsed)) == HloSharding.from_string(
        "{{replicated}, {devices=[2,1]0,1}}")


def test_parse_ignores_metadata():
    text = '{devices=[2,1]0,1 metadata={op_name="jit(f)/dot" source_file="a.py"}}'
    assert parse_mhlo_sharding(text) == TiledSharding((2, 1), (0, 1))
    assert parse_mhlo_sharding('{replicated metadata={op_name="x"}}') == Replicated()
    assert parse_mhlo_sharding('{maximal device=2 metadata={op_name="x"}}') == Maximal(2)
    assert parse_mhlo_sharding(
        '{{replicated metadata={op_name="a"}}, {devices=[2]<=[2] metadata={op_name="b"}}}'
    ) == (Replicated(), TiledSharding((2,), (0, 1)))


def test_format_round_trips_parse():
    for text in ["{replicated}", "{maximal device=5}", "{devices=[2,2]3,1,2,0}",
                 "{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}"]:
        assert format_mhlo_sharding(parse_mhlo_sharding(text)) == text
    assert format_mhlo_sharding(parse_mhlo_sharding("{devices=[2,2]<=[2,2]T(1,0)}")) == (
        "{devices=[2,2]0,2,1,3}")


BAD_SHARDINGS = [
    ("{manual}", "manual"),
    ("{unknown}", "unknown"),
    ("{{replicated}, {manual}}", "manual"),
    ("replicated", "enclosed in braces"),
    ("{bogus}", "cannot parse"),
    ("{devices=[2,2]}", "cannot parse"),
    ("{maximal device=}", "cannot parse"),
    ("{devices=[2,2]0,1,2}", "lists 3 devices for a tile shape of 4"),
    ("{devices=[2,2]0,1,2,3,4}", "lists 5 devices"),
    ("{devices=[2,2]0,1,1,3}", "lists a device twice"),
    ("{devices=[2,2]<=[8]}", "iota tile assignment"),
    ("{devices=[2,2]<=[2,2]T(0,0)}", "iota tile assignment"),
    ("{devices=[2,2]<=[2,2]T(0,1,2)}", "iota tile assignment"),
    ("{devices=[0,2]<=[0]}", "non-positive tile shape"),
    ("{devices=[]<=[1]}", "empty or non-positive"),
    ("{devices=[2,2]<=[4] last_tile_dims={manual}}", "unsupported attributes"),
    ("{devices=[2]0,1 bogus}", "unsupported attributes"),
    ("{{replicated}, {replicated}", "unbalanced"),
    ("{{replicated}}, {replicated}}", "unbalanced"),
    ("{{replicated}, replicated}", "malformed element"),
]


@pytest.mark.parametrize("text, why", BAD_SHARDINGS, ids=[t for t, _ in BAD_SHARDINGS])
def test_parse_errors_name_the_string(text, why):
    with pytest.raises(ShardingError) as info:
        parse_mhlo_sharding(text)
    message = str(info.value)
    assert text in message
    assert why in message


@pytest.mark.parametrize("text, mesh, rank, why", [
    ("{devices=[2]1,0}", DeviceMesh((2,)), 1, "not expressible"),
    ("{devices=[4]0,3,1,2}", DeviceMesh((2, 2)), 1, "not expressible"),
    ("{devices=[2,2]0,1,2,3}", DeviceMesh((2, 2), device_ids=(1, 0, 3, 2)), 2, "not expressible"),
    ("{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}", DeviceMesh((2, 2)), 1, "has 2 tiled dimensions"),
    ("{devices=[2,1]0,1}", DeviceMesh((2,)), 1, "rank 1"),
    ("{devices=[2]0,1}", DeviceMesh((2,)), 2, "rank 2"),
    ("{devices=[4]<=[4]}", DeviceMesh((2, 4)), 1, "uses 4 devices but the mesh [2, 4] has 8"),
    ("{devices=[4,2]<=[8]}", DeviceMesh((2, 2)), 2, "uses 8 devices"),
    ("{maximal device=3}", DeviceMesh((2, 2)), 2, "one device"),
    ("{{replicated}, {devices=[2,1]0,1}}", DeviceMesh((2,)), 2, "tuple sharding"),
    ("{manual}", DeviceMesh((2,)), 1, "manual"),
])
def test_from_mhlo_errors(text, mesh, rank, why):
    with pytest.raises(ShardingError) as info:
        ShardingSpec.from_mhlo(text, mesh, rank)
    assert text in str(info.value)
    assert why in str(info.value)


def test_expressible_non_trivial_orders():
    mesh = DeviceMesh((2, 2))
    assert ShardingSpec.from_mhlo("{devices=[4]0,2,1,3}", mesh, 1) == ShardingSpec(((1, 0),))
    assert ShardingSpec.from_mhlo("{devices=[2,2]0,2,1,3}", mesh, 2) == ShardingSpec(((1,), (0,)))
    assert ShardingSpec.from_mhlo("{devices=[2]0,1}", DeviceMesh((2,)), 1) == ShardingSpec(((0,),))
    assert ShardingSpec.from_mhlo("{devices=[2]1,0}", DeviceMesh((2,), (1, 0)), 1) == ShardingSpec(
        ((0,),))
    assert ShardingSpec.from_mhlo("{replicated}", mesh, 3) == ShardingSpec.replicated(3)


def test_spec_from_sharding_labels_with_formatted_text():
    with pytest.raises(ShardingError) as info:
        spec_from_sharding(TiledSharding((2,), (1, 0)), DeviceMesh((2,)), 1)
    assert "{devices=[2]1,0}" in str(info.value)
    assert spec_from_sharding(Replicated(), DeviceMesh((2,)), 2) == ShardingSpec(((), ()))


def test_mhlo_text_is_remembered_per_mesh_devices():
    # to_mhlo is cached (the stage search writes the same few strings on every candidate):
    # one spec on two meshes of one shape but other devices has two texts, in either order.
    spec = ShardingSpec(((0,), ()))
    iota, reversed_ids = DeviceMesh((2, 2)), DeviceMesh((2, 2), device_ids=(3, 2, 1, 0))
    for _ in range(2):
        assert spec.to_mhlo(iota) == "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"
        assert spec.to_mhlo(reversed_ids) == "{devices=[2,1,2]3,2,1,0 last_tile_dim_replicate}"
