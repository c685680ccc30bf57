"""ShardingSpec <-> sdy attributes, PartitionSpec and NamedSharding."""


import pytest
from jax._src.lib import xla_client
from jax._src.lib.mlir import ir
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P
from spec_cases import all_specs

from alpa_mlir.dialect import DeviceMesh, MeshError, ShardingError, ShardingSpec, make_context
from alpa_mlir.dialect.jax_interop import (
    spec_from_partition_spec,
    spec_to_named_sharding,
    spec_to_partition_spec,
)
from alpa_mlir.dialect.sdy import mesh_from_sdy, mesh_to_sdy, spec_from_sdy, spec_to_sdy

HloSharding = xla_client.HloSharding

MESH_2x4 = DeviceMesh((2, 4), axis_names=("x", "y"))
MESH_2x2x2 = DeviceMesh((2, 2, 2), axis_names=("dp", "tp", "pp"))
IOTA_MESHES = [DeviceMesh((4,)), DeviceMesh((2, 2)), DeviceMesh((2, 4)), DeviceMesh((2, 2, 2))]
PERMUTED_MESHES = [
    DeviceMesh((2, 4), device_ids=(7, 6, 5, 4, 3, 2, 1, 0)),
    DeviceMesh((2, 2, 2), device_ids=(3, 6, 0, 5, 2, 7, 1, 4)),
]


@pytest.fixture
def mlir():
    with make_context() as context, ir.Location.unknown():
        yield context


# --- sdy shardings -------------------------------------------------------------------


@pytest.mark.parametrize("mesh", [MESH_2x4, MESH_2x2x2], ids=["2x4", "2x2x2"])
def test_spec_sdy_round_trip(mlir, mesh):
    count = 0
    for rank in range(4):
        for spec in all_specs(rank, mesh.ndim):
            attr = spec_to_sdy(spec, mesh, "mesh")
            text = str(attr)
            assert text.startswith("#sdy.sharding<@mesh, [")
            for a in spec.used_axes:
                assert f'"{mesh.axis_names[a]}"' in text
            assert "?" not in text  # every dimension is closed
            assert spec_from_sdy(attr, mesh, rank) == spec
            reparsed = ir.Attribute.parse(text)
            assert reparsed == attr
            assert spec_from_sdy(reparsed, mesh, rank) == spec
            count += 1
    assert count == {2: 1 + 5 + 11 + 19, 3: 1 + 16 + 49 + 106}[mesh.ndim]


def test_spec_to_sdy_text(mlir):
    mesh = MESH_2x4
    assert (str(spec_to_sdy(ShardingSpec(((1, 0), ())), mesh, "mesh"))
            == '#sdy.sharding<@mesh, [{"y", "x"}, {}]>')
    assert (str(spec_to_sdy(ShardingSpec(((0,), (1,))), mesh, "m2"))
            == '#sdy.sharding<@m2, [{"x"}, {"y"}]>')
    assert str(spec_to_sdy(ShardingSpec(()), mesh, "mesh")) == "#sdy.sharding<@mesh, []>"
    with pytest.raises(ShardingError, match="mesh axis 2"):
        spec_to_sdy(ShardingSpec(((2,),)), mesh, "mesh")


def test_spec_from_sdy_open_dimensions(mlir):
    mesh = MESH_2x4
    fully_open = ir.Attribute.parse('#sdy.sharding<@mesh, [{?}, {?}]>')
    assert spec_from_sdy(fully_open, mesh, 2) is None
    partly_open = ir.Attribute.parse('#sdy.sharding<@mesh, [{?}, {}]>')
    assert spec_from_sdy(partly_open, mesh, 2) == ShardingSpec(((), ()))
    mixed = ir.Attribute.parse('#sdy.sharding<@mesh, [{?}, {"y", "x"}]>')
    assert spec_from_sdy(mixed, mesh, 2) == ShardingSpec(((), (1, 0)))
    # Rank 0: no dimension is open, so nothing says "unpinned".
    assert spec_from_sdy(ir.Attribute.parse("#sdy.sharding<@mesh, []>"), mesh, 0) == ShardingSpec(())


@pytest.mark.parametrize("text, rank, error, why", [
    ('#sdy.sharding<@mesh, [{"y":(1)2}, {}]>', 2, ShardingError, "sub-axis"),
    ('#sdy.sharding<@mesh, [{"x", ?}, {}]>', 2, ShardingError, "open dimension that is already sharded"),
    ('#sdy.sharding<@mesh, [{}, {}], unreduced={"y"}>', 2, ShardingError, "unreduced"),
    ('#sdy.sharding<@mesh, [{"x"}, {}]>', 3, ShardingError, "2 dimensions but the value has rank 3"),
    ('#sdy.sharding<@mesh, [{"z"}]>', 1, MeshError, "no axis named 'z'"),
])
def test_spec_from_sdy_errors(mlir, text, rank, error, why):
    attr = ir.Attribute.parse(text)
    with pytest.raises(error, match=why) as info:
        spec_from_sdy(attr, MESH_2x4, rank)
    if error is ShardingError:
        assert str(attr) in str(info.value)


def test_spec_from_sdy_inside_a_module(mlir):
    module = ir.Module.parse('''
      sdy.mesh @mesh = <["x"=2, "y"=4]>
      func.func @f(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y":(1)2}, {}]>},
                   %b: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>})
          -> tensor<8x8xf32> {
        return %a : tensor<8x8xf32>
      }
    ''')
    assert module.operation.verify()
    mesh_op, func_op = module.body.operations
    mesh = mesh_from_sdy(mesh_op.attributes["mesh"])
    assert mesh == MESH_2x4
    arg_attrs = func_op.attributes["arg_attrs"]
    a = ir.DictAttr(arg_attrs[0])["sdy.sharding"]
    b = ir.DictAttr(arg_attrs[1])["sdy.sharding"]
    with pytest.raises(ShardingError, match="sub-axis"):
        spec_from_sdy(a, mesh, 2)
    assert spec_from_sdy(b, mesh, 2) == ShardingSpec(((1,), (0,)))


# --- sdy meshes ----------------------------------------------------------------------


@pytest.mark.parametrize("mesh, text", [
    (MESH_2x4, '#sdy.mesh<["x"=2, "y"=4]>'),
    (MESH_2x2x2, '#sdy.mesh<["dp"=2, "tp"=2, "pp"=2]>'),
    (DeviceMesh((4,), device_ids=(3, 1, 2, 0), axis_names=("k",)),
     '#sdy.mesh<["k"=4], device_ids=[3, 1, 2, 0]>'),
    (DeviceMesh((2, 4), device_ids=(7, 6, 5, 4, 3, 2, 1, 0)),
     '#sdy.mesh<["x"=2, "y"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>'),
])
def test_mesh_sdy_round_trip(mlir, mesh, text):
    attr = mesh_to_sdy(mesh)
    assert str(attr) == text
    assert mesh_from_sdy(attr) == mesh
    reparsed = ir.Attribute.parse(text)  # Shardy's own parser and verifier accept it
    assert mesh_from_sdy(reparsed) == mesh


def test_mesh_from_sdy_alpha_beta(mlir):
    mesh = mesh_from_sdy(ir.Attribute.parse('#sdy.mesh<["a"=2, "b"=2]>'), (1.0, 2.0), (3.0, 4.0))
    assert mesh == DeviceMesh((2, 2), axis_names=("a", "b"), alpha=(1.0, 2.0), beta=(3.0, 4.0))
    with pytest.raises(MeshError, match="alpha"):
        mesh_from_sdy(ir.Attribute.parse('#sdy.mesh<["a"=2, "b"=2]>'), (1.0,))


def test_mesh_from_sdy_maximal_mesh(mlir):
    with pytest.raises(ShardingError, match="no axes"):
        mesh_from_sdy(ir.Attribute.parse("#sdy.mesh<[]>"))


def test_mesh_to_sdy_rejects_ids_that_are_not_a_permutation(mlir):
    # A submesh of global ids (e.g. host 1 of a cluster) has no sdy mesh of its own ids.
    with pytest.raises(MeshError, match=r"\[4, 5, 6, 7\]"):
        mesh_to_sdy(DeviceMesh((2, 2), device_ids=(4, 5, 6, 7)))


# --- PartitionSpec and NamedSharding ----------------------------------------------


def test_partition_spec_examples():
    mesh = MESH_2x4
    assert spec_to_partition_spec(ShardingSpec(((0, 1), ())), mesh) == P(("x", "y"), None)
    assert spec_to_partition_spec(ShardingSpec(((1,), (0,))), mesh) == P("y", "x")
    assert spec_to_partition_spec(ShardingSpec(((), ())), mesh) == P(None, None)
    assert spec_to_partition_spec(ShardingSpec(()), mesh) == P()
    assert spec_from_partition_spec(P("y"), mesh, 3) == ShardingSpec(((1,), (), ()))
    assert spec_from_partition_spec(P(), mesh, 2) == ShardingSpec(((), ()))
    assert spec_from_partition_spec(P(("y", "x")), mesh, 1) == ShardingSpec(((1, 0),))
    assert spec_from_partition_spec(P(None, ("x",)), mesh, 2) == ShardingSpec(((), (0,)))
    with pytest.raises(ShardingError, match="2 entries but the value has rank 1"):
        spec_from_partition_spec(P("x", "y"), mesh, 1)
    with pytest.raises(MeshError, match="no axis named 'w'"):
        spec_from_partition_spec(P("w"), mesh, 1)
    with pytest.raises(ShardingError, match="twice"):
        spec_from_partition_spec(P("x", "x"), mesh, 2)


@pytest.mark.parametrize("mesh", [MESH_2x4, MESH_2x2x2], ids=["2x4", "2x2x2"])
def test_partition_spec_round_trip(mesh):
    for rank in range(4):
        for spec in all_specs(rank, mesh.ndim):
            pspec = spec_to_partition_spec(spec, mesh)
            assert len(pspec) == rank
            assert spec_from_partition_spec(pspec, mesh, rank) == spec


@pytest.mark.parametrize("mesh", IOTA_MESHES, ids=lambda m: "x".join(map(str, m.shape)))
def test_named_sharding_equivalence(mesh):
    for rank in range(4):
        for spec in all_specs(rank, mesh.ndim):
            named = spec_to_named_sharding(spec, mesh)
            assert isinstance(named, NamedSharding)
            jax_hlo = named._to_xla_hlo_sharding(rank)
            ours = HloSharding.from_string(spec.to_mhlo(mesh))
            assert jax_hlo == ours, (str(spec), str(jax_hlo), spec.to_mhlo(mesh))
            # And what JAX prints parses back to the same spec.
            assert ShardingSpec.from_mhlo(str(jax_hlo), mesh, rank) == spec


@pytest.mark.parametrize("mesh", PERMUTED_MESHES, ids=["2x4-permuted", "2x2x2-permuted"])
def test_named_sharding_on_permuted_mesh(mesh):
    # JAX's HLO sharding numbers mesh positions (its device assignment maps them to
    # devices), so it matches our spec on the iota mesh of the same shape, while the
    # NamedSharding's devices are the mesh's ids in mesh order.
    iota = DeviceMesh(mesh.shape, axis_names=mesh.axis_names)
    for rank in range(3):
        for spec in all_specs(rank, mesh.ndim):
            named = spec_to_named_sharding(spec, mesh)
            assert [d.id for d in named.mesh.devices.flat] == list(mesh.device_ids)
            assert named._to_xla_hlo_sharding(rank) == HloSharding.from_string(spec.to_mhlo(iota))
