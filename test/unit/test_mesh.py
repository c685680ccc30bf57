"""DeviceMesh validation, PhysicalCluster submeshes and logical views, to_jax_mesh."""

import jax
import numpy as np
import pytest

from alpa_mlir.dialect import DeviceMesh, MeshError, PhysicalCluster

# --- DeviceMesh construction -------------------------------------------------------


def test_defaults():
    mesh = DeviceMesh((2, 4))
    assert mesh.shape == (2, 4)
    assert mesh.device_ids == tuple(range(8))
    assert mesh.axis_names == ("x", "y")
    assert mesh.alpha == (1.0, 1.0)
    assert mesh.beta == (1.0, 1.0)
    assert mesh.ndim == 2
    assert mesh.size == 8
    assert mesh.is_iota
    np.testing.assert_array_equal(mesh.device_array, np.arange(8).reshape(2, 4))
    assert not mesh.device_array.flags.writeable


def test_default_axis_names_beyond_four_axes():
    assert DeviceMesh((2, 2, 2)).axis_names == ("x", "y", "z")
    assert DeviceMesh((1, 1, 1, 1, 1)).axis_names == ("a0", "a1", "a2", "a3", "a4")


def test_fields_are_normalised_to_tuples_of_builtin_types():
    mesh = DeviceMesh([np.int64(2), 2], device_ids=[3, 2, 1, 0], axis_names=["a", "b"],
                      alpha=[1, 2], beta=[3, 4])
    assert mesh.shape == (2, 2) and all(type(s) is int for s in mesh.shape)
    assert mesh.device_ids == (3, 2, 1, 0)
    assert mesh.axis_names == ("a", "b")
    assert mesh.alpha == (1.0, 2.0) and mesh.beta == (3.0, 4.0)
    assert not mesh.is_iota
    np.testing.assert_array_equal(mesh.device_array, [[3, 2], [1, 0]])


def test_equality_and_hash_ignore_the_cached_array():
    a = DeviceMesh((2, 2), axis_names=("p", "q"))
    b = DeviceMesh((2, 2), (0, 1, 2, 3), ("p", "q"), (1.0, 1.0), (1.0, 1.0))
    assert a == b
    assert hash(a) == hash(b)
    assert a != DeviceMesh((2, 2), (1, 0, 2, 3), ("p", "q"))
    assert a != DeviceMesh((4,))


@pytest.mark.parametrize("kwargs, field", [
    (dict(shape=()), "shape is empty"),
    (dict(shape=(2, 0)), "non-positive"),
    (dict(shape=(-1, 2)), "non-positive"),
    (dict(shape=(2, 2), device_ids=(0, 1, 2)), "device ids were given"),
    (dict(shape=(2,), device_ids=(0, 1, 2)), "device ids were given"),
    (dict(shape=(2, 2), device_ids=(0, 1, 1, 3)), "device ids"),
    (dict(shape=(2,), device_ids=(-1, 0)), "device ids"),
    (dict(shape=(2, 2), axis_names=("x",)), "axis names"),
    (dict(shape=(2, 2), axis_names=("x", "x")), "axis names"),
    (dict(shape=(2, 2), alpha=(1.0,)), "mesh alpha"),
    (dict(shape=(2, 2), beta=(1.0, 2.0, 3.0)), "mesh beta"),
    (dict(shape=(2, 2), alpha=(1.0, -1.0)), "mesh alpha"),
    (dict(shape=(2, 2), beta=(-0.5, 1.0)), "mesh beta"),
])
def test_validation_errors_name_the_field(kwargs, field):
    with pytest.raises(MeshError, match=field) as info:
        DeviceMesh(**kwargs)
    assert isinstance(info.value, ValueError)


def test_validation_messages_carry_the_values():
    with pytest.raises(MeshError) as info:
        DeviceMesh((2, 2), device_ids=(0, 1, 1, 3))
    assert "distinct" in str(info.value) and "[0, 1, 1, 3]" in str(info.value)
    with pytest.raises(MeshError) as info:
        DeviceMesh((2, 3), device_ids=(0, 1))
    assert "6 devices" in str(info.value) and "2 device ids" in str(info.value)
    with pytest.raises(MeshError) as info:
        DeviceMesh((2, 2), alpha=(1.0,))
    assert "1 values" in str(info.value) and "2 axes" in str(info.value)


def test_axis_index_and_coordinates():
    mesh = DeviceMesh((2, 4), device_ids=(7, 6, 5, 4, 3, 2, 1, 0), axis_names=("dp", "mp"))
    assert mesh.axis_index("dp") == 0
    assert mesh.axis_index("mp") == 1
    with pytest.raises(MeshError, match="'tp'"):
        mesh.axis_index("tp")
    assert mesh.coordinates(7) == (0, 0)
    assert mesh.coordinates(4) == (0, 3)
    assert mesh.coordinates(3) == (1, 0)
    assert mesh.coordinates(0) == (1, 3)


# --- PhysicalCluster ---------------------------------------------------------------


def test_cluster_rejects_non_positive_shape():
    with pytest.raises(MeshError, match="must be positive"):
        PhysicalCluster(0, 8)
    with pytest.raises(MeshError, match="must be positive"):
        PhysicalCluster(2, -1)


def test_submesh_ids_are_host_major():
    cluster = PhysicalCluster(4, 8, intra_host_alpha=0.5, intra_host_beta=0.25,
                              inter_host_alpha=5.0, inter_host_beta=20.0)
    assert cluster.num_devices == 32
    sub = cluster.submesh(1, 2, 4, 4)
    assert sub.shape == (2, 4)
    assert sub.device_ids == (12, 13, 14, 15, 20, 21, 22, 23)
    assert sub.alpha == (5.0, 0.5)
    assert sub.beta == (20.0, 0.25)
    whole = cluster.submesh(0, 4, 0, 8)
    assert whole.device_ids == tuple(range(32))
    one = cluster.submesh(3, 1, 7, 1)
    assert one.shape == (1, 1) and one.device_ids == (31,)


@pytest.mark.parametrize("args, what", [
    ((3, 2, 0, 8), "hosts 3..4"),
    ((-1, 1, 0, 8), "hosts"),
    ((0, 0, 0, 8), "hosts"),
    ((0, 1, 6, 4), "devices 6..9"),
    ((0, 1, 0, 0), "devices"),
    ((0, 1, -1, 2), "devices"),
])
def test_submesh_out_of_range(args, what):
    with pytest.raises(MeshError, match=what):
        PhysicalCluster(4, 8).submesh(*args)


def test_logical_mesh_alpha_beta_per_axis():
    cluster = PhysicalCluster(2, 4, intra_host_alpha=1.0, intra_host_beta=2.0,
                              inter_host_alpha=30.0, inter_host_beta=40.0)
    physical = cluster.submesh(0, 2, 0, 4)
    intra, inter = (1.0, 2.0), (30.0, 40.0)

    def per_axis(mesh):
        return list(zip(mesh.alpha, mesh.beta, strict=True))

    # 2x4 (hosts x devices): axis 0 crosses hosts, axis 1 stays inside one.
    m = cluster.logical_mesh(physical, (2, 4), ("a", "b"))
    assert m.shape == (2, 4) and m.axis_names == ("a", "b")
    assert m.device_ids == tuple(range(8))
    assert per_axis(m) == [inter, intra]
    # 4x2: rows 0,1 on host 0, rows 2,3 on host 1 -> axis 0 crosses, axis 1 does not.
    assert per_axis(cluster.logical_mesh(physical, (4, 2))) == [inter, intra]
    # 8: one axis over both hosts.
    assert per_axis(cluster.logical_mesh(physical, (8,))) == [inter]
    # 2x2x2: only the first axis crosses hosts.
    assert per_axis(cluster.logical_mesh(physical, (2, 2, 2))) == [inter, intra, intra]
    # A one-host submesh viewed 2x2: everything is intra-host.
    one_host = cluster.submesh(1, 1, 0, 4)
    m = cluster.logical_mesh(one_host, (2, 2))
    assert m.device_ids == (4, 5, 6, 7)
    assert per_axis(m) == [intra, intra]


def test_logical_mesh_axis_straddling_a_host_boundary_is_inter_host():
    # 2 hosts x 3 devices viewed as 3x2: row 1 is devices 2 and 3, on different hosts.
    cluster = PhysicalCluster(2, 3, intra_host_alpha=1.0, intra_host_beta=1.0,
                              inter_host_alpha=9.0, inter_host_beta=9.0)
    m = cluster.logical_mesh(cluster.submesh(0, 2, 0, 3), (3, 2))
    assert m.alpha == (9.0, 9.0)
    assert m.beta == (9.0, 9.0)


def test_logical_mesh_size_mismatch():
    cluster = PhysicalCluster(2, 4)
    with pytest.raises(MeshError, match=r"\[3, 2\]"):
        cluster.logical_mesh(cluster.submesh(0, 2, 0, 4), (3, 2))


# --- to_jax_mesh -------------------------------------------------------------------


def test_to_jax_mesh_iota():
    assert len(jax.devices()) == 8
    mesh = DeviceMesh((2, 4), axis_names=("dp", "mp"))
    jmesh = mesh.to_jax_mesh()
    assert isinstance(jmesh, jax.sharding.Mesh)
    assert jmesh.axis_names == ("dp", "mp")
    assert tuple(jmesh.shape.items()) == (("dp", 2), ("mp", 4))
    np.testing.assert_array_equal(np.vectorize(lambda d: d.id)(jmesh.devices),
                                  np.arange(8).reshape(2, 4))


def test_to_jax_mesh_permuted_and_subset():
    mesh = DeviceMesh((2, 2, 2), device_ids=(7, 5, 3, 1, 6, 4, 2, 0))
    ids = np.vectorize(lambda d: d.id)(mesh.to_jax_mesh().devices)
    np.testing.assert_array_equal(ids, mesh.device_array)
    sub = DeviceMesh((2,), device_ids=(6, 2), axis_names=("k",))
    jmesh = sub.to_jax_mesh()
    assert [d.id for d in jmesh.devices.flat] == [6, 2]
    assert jmesh.axis_names == ("k",)


def test_to_jax_mesh_explicit_devices_and_missing_ids():
    devices = jax.devices()[:4]
    jmesh = DeviceMesh((2, 2)).to_jax_mesh(devices)
    assert [d.id for d in jmesh.devices.flat] == [0, 1, 2, 3]
    with pytest.raises(MeshError, match=r"\[4, 5\]"):
        DeviceMesh((2, 2), device_ids=(0, 4, 1, 5)).to_jax_mesh(devices)
    with pytest.raises(MeshError, match="not among the 8 JAX devices"):
        DeviceMesh((2,), device_ids=(0, 8)).to_jax_mesh()
