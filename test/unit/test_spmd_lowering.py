"""compile_module (lowering/spmd.py) and MeshExecutable (runtime/mesh_executable.py) on 8 CPU devices."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src.lib.mlir import ir
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import alpa_mlir
from alpa_mlir.dialect.context import make_context
from alpa_mlir.dialect.mesh import DeviceMesh
from alpa_mlir.dialect.sharding import ShardingSpec
from alpa_mlir.lowering.spmd import LoweringError, SharedCompiles, compile_module
from alpa_mlir.runtime.mesh_executable import MeshExecutable, compile_at_once

MESH_2X4 = DeviceMesh((2, 4))
RNG = np.random.default_rng(0)


def annotate(text: str, mesh: DeviceMesh, args: list[ShardingSpec], results: list[ShardingSpec],
             arg_extra: dict[int, dict[str, str]] | None = None) -> str:
    """``text`` with ``mhlo.sharding`` on every argument and result of @main, written as auto-sharding
    does: against partition ids, i.e. ``DeviceMesh(mesh.shape)``."""
    positions = DeviceMesh(mesh.shape)
    with make_context():
        module = ir.Module.parse(text)
        module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(32), mesh.size)
        main = next(op for op in module.body.operations if ir.StringAttr(op.attributes["sym_name"]).value == "main")

        def attrs(specs: list[ShardingSpec], extra: dict[int, dict[str, str]]) -> ir.ArrayAttr:
            return ir.ArrayAttr.get([ir.DictAttr.get({
                "mhlo.sharding": ir.StringAttr.get(spec.to_mhlo(positions)),
                **{k: ir.Attribute.parse(v) for k, v in extra.get(i, {}).items()}}) for i, spec in enumerate(specs)])

        main.attributes["arg_attrs"] = attrs(args, arg_extra or {})
        main.attributes["res_attrs"] = attrs(results, {})
        return str(module)


def matmul_module(mesh: DeviceMesh, out: ShardingSpec, x_shape: tuple[int, int] = (16, 32)) -> str:
    """``x @ w`` with x split on its contracting dim over mesh axis 1 (and w on its rows)."""
    text = jax.jit(jnp.matmul).lower(jnp.ones(x_shape, jnp.float32), jnp.ones((x_shape[1], 8), jnp.float32)).as_text()
    return annotate(text, mesh, [ShardingSpec(((), (1,))), ShardingSpec(((1,), ()))], [out])


def mlp_step(params: dict[str, jax.Array], x: jax.Array, y: jax.Array) -> tuple[dict[str, jax.Array], jax.Array]:
    def loss(p: dict[str, jax.Array]) -> jax.Array:
        return jnp.mean((jnp.tanh(x @ p["w1"]) @ p["w2"] - y) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), value


# --- compile_module ------------------------------------------------------------------------------


def test_contracting_dim_matmul_is_one_all_reduce_over_axis_1() -> None:
    compiled = compile_module(matmul_module(MESH_2X4, ShardingSpec.replicated(2)), MESH_2X4)
    (c,) = compiled.collectives()
    assert (c.kind, c.mesh_axes, c.shape, c.bytes) == ("all-reduce", (1,), (16, 8), 16 * 8 * 4)
    assert c.replica_groups == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert "all-reduce" in compiled.hlo_text


def test_shardings_come_back_as_named_shardings() -> None:
    compiled = compile_module(matmul_module(MESH_2X4, ShardingSpec(((0,), ()))), MESH_2X4)
    mesh = MESH_2X4.to_jax_mesh()
    assert compiled.jax_mesh == mesh
    assert compiled.input_shardings == (NamedSharding(mesh, P(None, "y")), NamedSharding(mesh, P("y", None)))
    assert compiled.output_shardings == (NamedSharding(mesh, P("x", None)),)
    # Output sharded on x: each device reduces its 8x8 half over y.
    assert [(c.kind, c.mesh_axes, c.bytes) for c in compiled.collectives()] == [("all-reduce", (1,), 8 * 8 * 4)]


def test_matmul_runs_and_matches_numpy() -> None:
    run = MeshExecutable(compile_module(matmul_module(MESH_2X4, ShardingSpec(((0,), ()))), MESH_2X4))
    x, w = RNG.standard_normal((16, 32), np.float32), RNG.standard_normal((32, 8), np.float32)
    (out,) = run(x, w)
    np.testing.assert_allclose(np.asarray(out), x @ w, rtol=1e-5, atol=1e-5)
    assert out.sharding == NamedSharding(MESH_2X4.to_jax_mesh(), P("x", None))
    assert out.addressable_shards[0].data.shape == (8, 8)


def test_jax_shardy_module_compiles_with_the_same_collective() -> None:
    mesh = MESH_2X4.to_jax_mesh()
    shardings = (NamedSharding(mesh, P(None, "y")), NamedSharding(mesh, P("y", None)))
    lowered = jax.jit(jnp.matmul, in_shardings=shardings).lower(jnp.ones((16, 32)), jnp.ones((32, 8)))
    compiled = compile_module(lowered.compiler_ir(), MESH_2X4)
    assert compiled.signature.uses_shardy
    assert [(c.kind, c.mesh_axes, c.bytes) for c in compiled.collectives()] == [("all-reduce", (1,), 512)]
    assert compiled.input_shardings == shardings


def test_data_parallel_mlp_step_all_reduces_gradients_and_matches_jax() -> None:
    params = {"w1": RNG.standard_normal((16, 32), np.float32), "w2": RNG.standard_normal((32, 4), np.float32)}
    x, y = RNG.standard_normal((64, 16), np.float32), RNG.standard_normal((64, 4), np.float32)
    text = jax.jit(mlp_step).lower(params, x, y).as_text()
    batch, repl = ShardingSpec(((0, 1), ())), ShardingSpec.replicated(2)
    module = annotate(text, MESH_2X4, [repl, repl, batch, batch], [repl, repl, ShardingSpec.replicated(0)])
    compiled = compile_module(module, MESH_2X4)
    found = compiled.collectives()
    assert {c.kind for c in found} == {"all-reduce"}
    assert {c.mesh_axes for c in found} == {(0, 1)}
    # Every gradient (16*32 + 32*4 floats) and the loss are reduced, possibly in a combined all-reduce.
    assert sum(c.bytes for c in found) == (16 * 32 + 32 * 4 + 1) * 4
    new_w1, new_w2, loss = MeshExecutable(compiled)(params["w1"], params["w2"], x, y)
    (want_w1_w2, want_loss) = jax.jit(mlp_step)(params, x, y)
    np.testing.assert_allclose(np.asarray(new_w1), want_w1_w2["w1"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(new_w2), want_w1_w2["w2"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(loss), float(want_loss), rtol=1e-5)
    assert loss.sharding == NamedSharding(MESH_2X4.to_jax_mesh(), P())


def test_submesh_of_devices_4_to_7_runs_there() -> None:
    submesh = DeviceMesh((2, 2), (4, 5, 6, 7))
    compiled = compile_module(matmul_module(submesh, ShardingSpec(((0,), ()))), submesh)
    assert [d.id for d in compiled.devices] == [4, 5, 6, 7]
    (c,) = compiled.collectives()
    assert (c.replica_groups, c.mesh_axes) == (((0, 1), (2, 3)), (1,))  # partition ids, not device ids
    x, w = RNG.standard_normal((16, 32), np.float32), RNG.standard_normal((32, 8), np.float32)
    (out,) = MeshExecutable(compiled)(jnp.asarray(x), w)  # x starts on device 0 and is moved
    assert {d.id for d in out.sharding.device_set} == {4, 5, 6, 7}
    assert out.sharding == NamedSharding(submesh.to_jax_mesh(), P("x", None))
    np.testing.assert_allclose(np.asarray(out), x @ w, rtol=1e-5, atol=1e-5)
    by_device = {s.device.id: np.asarray(s.data) for s in out.addressable_shards}
    np.testing.assert_allclose(by_device[6], (x @ w)[8:], rtol=1e-5, atol=1e-5)  # position (1, 0) holds rows 8..15


def test_an_equal_module_is_loaded_onto_other_devices_not_compiled_again(monkeypatch) -> None:
    # The matmul all-reduces over mesh axis 1; loaded onto devices 7, 2, 5, 4 (a permuted
    # order, so the groups are remapped), it reduces over those devices' pairs.
    shared = SharedCompiles()
    text = matmul_module(DeviceMesh((2, 2)), ShardingSpec(((0,), ())))
    first = compile_module(text, DeviceMesh((2, 2), (0, 1, 2, 3)), shared=shared)
    compiles = []
    real = alpa_mlir.lowering.spmd._compile
    monkeypatch.setattr("alpa_mlir.lowering.spmd._compile", lambda *args: compiles.append(args) or real(*args))
    moved = DeviceMesh((2, 2), (7, 2, 5, 4))
    second = compile_module(text, moved, shared=shared)
    assert shared.loaded == 1 and not compiles and [d.id for d in second.devices] == [7, 2, 5, 4]
    assert second.hlo_text == first.hlo_text
    x, w = RNG.standard_normal((16, 32), np.float32), RNG.standard_normal((32, 8), np.float32)
    (out,) = MeshExecutable(second)(x, w)
    assert out.sharding == NamedSharding(moved.to_jax_mesh(), P("x", None))
    by_device = {s.device.id: np.asarray(s.data) for s in out.addressable_shards}
    np.testing.assert_allclose(by_device[5], (x @ w)[8:], rtol=1e-5, atol=1e-5)  # position (1, 0)
    # Another number of devices, or another module, compiles.
    compile_module(matmul_module(DeviceMesh((1, 2)), ShardingSpec(((0,), ()))), DeviceMesh((1, 2), (6, 7)),
                   shared=shared)
    compile_module(matmul_module(DeviceMesh((2, 2)), ShardingSpec(((), ()))), moved, shared=shared)
    assert shared.loaded == 1 and len(compiles) == 2


def test_equal_modules_compiled_at_once_in_threads_compile_once(monkeypatch) -> None:
    # The pipeline compiles its stages in threads: the second thread waits for the first's
    # executable instead of compiling the same module again.
    shared, compiles = SharedCompiles(), []
    real = alpa_mlir.lowering.spmd._compile
    monkeypatch.setattr("alpa_mlir.lowering.spmd._compile", lambda *args: compiles.append(args) or real(*args))
    text = matmul_module(DeviceMesh((2, 2)), ShardingSpec(((0,), ())))
    meshes = {m: DeviceMesh((2, 2), ids) for m, ids in enumerate(((0, 1, 2, 3), (4, 5, 6, 7), (6, 4, 2, 0)))}
    compiled = compile_at_once({m: functools.partial(compile_module, text, mesh, shared=shared)
                                for m, mesh in meshes.items()})
    assert len(compiles) == 1 and shared.loaded == 2
    x, w = RNG.standard_normal((16, 32), np.float32), RNG.standard_normal((32, 8), np.float32)
    for m, mesh in meshes.items():
        assert [d.id for d in compiled[m].devices] == list(mesh.device_ids)
        np.testing.assert_allclose(np.asarray(MeshExecutable(compiled[m])(x, w)[0]), x @ w, rtol=1e-5, atol=1e-5)


def test_shardings_written_with_device_ids_get_a_hint() -> None:
    # XLA rejects the module; each mesh sharing it is told so (not handed a broken executable).
    submesh = DeviceMesh((2, 2), (4, 5, 6, 7))
    text = matmul_module(submesh, ShardingSpec(((0,), ())))
    with_ids = text.replace(ShardingSpec(((), (1,))).to_mhlo(DeviceMesh((2, 2))),
                            ShardingSpec(((), (1,))).to_mhlo(submesh))
    assert with_ids != text
    shared = SharedCompiles()
    for mesh in (submesh, DeviceMesh((2, 2), (0, 1, 2, 3))):
        with pytest.raises(LoweringError, match=r"spec.to_mhlo\(DeviceMesh\(mesh.shape\)\)"):
            compile_module(with_ids, mesh, shared=shared)
    assert shared.loaded == 0


def test_module_from_another_context() -> None:
    text = matmul_module(MESH_2X4, ShardingSpec.replicated(2))
    with make_context():
        module = ir.Module.parse(text)
    compiled = compile_module(module, MESH_2X4)
    assert [c.kind for c in compiled.collectives()] == ["all-reduce"]


def _dynamic_slice(a: jax.Array, i: jax.Array) -> jax.Array:
    return jax.lax.dynamic_slice(a, (0, i), (3, 20))


@pytest.mark.parametrize("start", [19, 2, -30])
@pytest.mark.parametrize("as_text", [True, False])
def test_dynamic_slice_split_on_its_sliced_dim_keeps_the_clamp(start: int, as_text: bool) -> None:
    # The partitioner cuts each device's tile out of the replicated slice with a second
    # dynamic slice; XLA's simplifier folded the two with the start clamped to 24 - 10
    # instead of 24 - 20, so start 19 gave columns 14..23 on every device (issue 11).
    a = jnp.arange(72, dtype=jnp.float32).reshape(3, 24)
    text = jax.jit(_dynamic_slice).lower(a, 0).as_text()
    text = annotate(text, MESH_2X4, [ShardingSpec.replicated(2), ShardingSpec.replicated(0)],
                    [ShardingSpec(((), (0,)))])
    module = text
    if not as_text:
        with make_context():
            module = ir.Module.parse(text)
    (out,) = MeshExecutable(compile_module(module, MESH_2X4))(a, np.int32(start))
    np.testing.assert_array_equal(np.asarray(out), np.asarray(_dynamic_slice(a, start)))
    if not as_text:
        assert "stablehlo.clamp" not in str(module)  # the caller's module is not changed


@pytest.mark.parametrize("mesh_shape", [(2, 4), (2, 2, 2)])
def test_clamped_dynamic_slice_then_reshape_matches_jax(mesh_shape: tuple[int, ...]) -> None:
    # Issue 11's reproducer: the plan splits the reshape's (2, 10) dimension.
    def f(a: jax.Array, i: jax.Array) -> jax.Array:
        return jnp.reshape(_dynamic_slice(a, i), (3, 2, 10))

    a = jnp.arange(72.0).reshape(3, 24)
    step = alpa_mlir.parallelize(f, method=alpa_mlir.ShardParallel(mesh_shape=mesh_shape), batch_argnums=())
    np.testing.assert_array_equal(np.asarray(step(a, 19)), np.asarray(jax.jit(f)(a, 19)))


_R, _S = '{mhlo.sharding = "{replicated}"}', '{mhlo.sharding = "{devices=[1,4,2]<=[8] last_tile_dim_replicate}"}'
_SCATTER_AFTER_TRANSPOSE = f"""
module @m attributes {{mhlo.num_partitions = 8 : i32}} {{
  func.func public @main(%x: tensor<12x1xf32> {_R}, %i: tensor<1x1xi32> {_R}, %u: tensor<1x1xf32> {_R})
      -> (tensor<1x12xf32> {_S}, tensor<1x12xf32> {_S}) {{
    %t = stablehlo.transpose %x, dims = [1, 0] {_R} : (tensor<12x1xf32>) -> tensor<1x12xf32>
    %split = stablehlo.custom_call @Sharding(%t) {_S} : (tensor<1x12xf32>) -> tensor<1x12xf32>
    %s = "stablehlo.scatter"(%t, %i, %u) <{{unique_indices = true, scatter_dimension_numbers =
        #stablehlo.scatter<update_window_dims = [0], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1],
        index_vector_dim = 1>}}> ({{
    ^bb0(%old: tensor<f32>, %new: tensor<f32>):
      stablehlo.return %new : tensor<f32>
    }}) {_R} : (tensor<1x12xf32>, tensor<1x1xi32>, tensor<1x1xf32>) -> tensor<1x12xf32>
    %out = stablehlo.custom_call @Sharding(%s) {_S} : (tensor<1x12xf32>) -> tensor<1x12xf32>
    return %split, %out : tensor<1x12xf32>, tensor<1x12xf32>
  }}
}}
"""


def test_replicated_transpose_into_a_scatter_keeps_its_sharding() -> None:
    # Random program seed 11505: XLA's import turned the transpose into a reshape without
    # its sharding, split it like its other user, partitioned the scatter per tile and
    # folded the tiles' slices with a wrong clamp: 2, 6 and 9 read 5 (the scattered index).
    x = np.arange(12, dtype=np.float32).reshape(12, 1)
    split, out = MeshExecutable(compile_module(_SCATTER_AFTER_TRANSPOSE, DeviceMesh((2, 2, 2))))(
        x, np.array([[5]], np.int32), np.array([[-8.0]], np.float32))
    want = x.T.copy()
    np.testing.assert_array_equal(np.asarray(split), want)
    want[0, 5] = -8.0
    np.testing.assert_array_equal(np.asarray(out), want)


def test_permuted_device_order_falls_back_to_a_gspmd_sharding() -> None:
    text = ("module @m attributes {mhlo.num_partitions = 8 : i32} {\n  func.func public @main(%arg0: tensor<16x4xf32>"
            ' {mhlo.sharding = "{devices=[8,1]<=[8]}"}) -> (tensor<16x4xf32> {mhlo.sharding = '
            '"{devices=[8,1]7,6,5,4,3,2,1,0}"}) {\n    return %arg0 : tensor<16x4xf32>\n  }\n}\n')
    run = MeshExecutable(compile_module(text, MESH_2X4))
    assert not isinstance(run.output_shardings[0], NamedSharding)
    x = np.arange(64, dtype=np.float32).reshape(16, 4)
    (out,) = run(x)
    np.testing.assert_array_equal(np.asarray(out), x)
    assert {s.device.id: np.asarray(s.data)[0, 0] for s in out.addressable_shards}[0] == x[14, 0]


# --- donation --------------------------------------------------------------------------------------


def add_one_module(extra: str) -> str:
    text = jax.jit(lambda a, b: (a + 1.0, b.sum())).lower(jnp.ones((16, 8)), jnp.ones((16, 8))).as_text()
    spec = ShardingSpec(((0,), ()))
    return annotate(text, MESH_2X4, [spec, spec], [spec, ShardingSpec.replicated(0)], {0: {extra: "true"}}
                    if extra == "jax.buffer_donor" else {0: {extra: "0 : i32"}})


@pytest.mark.parametrize("attribute", ["tf.aliasing_output", "jax.buffer_donor"])
def test_donated_input_is_aliased_and_consumed(attribute: str) -> None:
    compiled = compile_module(add_one_module(attribute), MESH_2X4)
    assert compiled.donated == (True, False)
    # XLA turns both forms into an input/output alias when an output has the same shape.
    assert "input_output_alias={ {0}: (0, {}, may-alias) }" in compiled.hlo_text
    run = MeshExecutable(compiled)
    a = jax.device_put(np.zeros((16, 8), np.float32), compiled.input_shardings[0])
    b = jnp.ones((16, 8))
    out, total = run(a, b)
    assert a.is_deleted() and not b.is_deleted()
    np.testing.assert_array_equal(np.asarray(out), np.ones((16, 8)))
    assert float(total) == 128.0
    with pytest.raises(ValueError, match="argument 0 is a deleted array"):
        run(a, b)


def test_donated_input_needing_a_reshard_is_still_invalidated() -> None:
    run = MeshExecutable(compile_module(add_one_module("tf.aliasing_output"), MESH_2X4))
    a = jnp.zeros((16, 8))  # on one device: copied to the mesh, then deleted
    run(a, np.ones((16, 8), np.float32))
    assert a.is_deleted()


def test_donation_the_module_forces_must_be_declared() -> None:
    compiled = compile_module(add_one_module("tf.aliasing_output"), MESH_2X4)
    with pytest.raises(ValueError, match=r"inputs \[0\] are donated by the module"):
        MeshExecutable(compiled, donated=(False, False))
    a = jnp.zeros((16, 8))
    with pytest.raises(ValueError, match="argument 0 is donated but is also passed as argument"):
        MeshExecutable(compiled)(a, a)


def test_alias_to_a_result_of_another_shape_is_a_lowering_error() -> None:
    text = add_one_module("tf.aliasing_output").replace("tf.aliasing_output = 0", "tf.aliasing_output = 1")
    with pytest.raises(LoweringError, match="XLA could not compile"):
        compile_module(text, MESH_2X4)


# --- errors ---------------------------------------------------------------------------------------


def test_mesh_larger_than_the_devices() -> None:
    with pytest.raises(LoweringError, match=r"devices \[8, 9, 10, 11, 12, 13, 14, 15\] are not among the 8"):
        compile_module(matmul_module(DeviceMesh((4, 4)), ShardingSpec.replicated(2)), DeviceMesh((4, 4)))


def test_num_partitions_differs_from_the_mesh() -> None:
    text = matmul_module(MESH_2X4, ShardingSpec.replicated(2))
    with pytest.raises(LoweringError, match=r"mhlo.num_partitions = 8 but mesh \[2, 2\] has 4 devices"):
        compile_module(text, DeviceMesh((2, 2)))


def test_unparsable_text_and_missing_main() -> None:
    with pytest.raises(LoweringError, match="cannot parse the module text"):
        compile_module("module {", MESH_2X4)
    with pytest.raises(LoweringError, match="no func.func @main"):
        compile_module("module {\n  func.func @f() {\n    return\n  }\n}\n", MESH_2X4)


def test_wrong_arguments_name_the_index() -> None:
    run = MeshExecutable(compile_module(matmul_module(MESH_2X4, ShardingSpec.replicated(2)), MESH_2X4))
    x, w = np.ones((16, 32), np.float32), np.ones((32, 8), np.float32)
    with pytest.raises(TypeError, match="expected 2 positional arguments, got 1"):
        run(x)
    with pytest.raises(TypeError, match=r"argument 1 has dtype float64 but the executable expects float32"):
        run(x, w.astype(np.float64))
    with pytest.raises(ValueError, match=r"argument 0 has shape \[16, 16\] but the executable expects \[16, 32\]"):
        run(jnp.ones((16, 16)), w)


def test_avals_given_to_the_executable_are_checked() -> None:
    compiled = compile_module(matmul_module(MESH_2X4, ShardingSpec.replicated(2)), MESH_2X4)
    good = [jax.ShapeDtypeStruct((16, 32), jnp.float32), jax.ShapeDtypeStruct((32, 8), jnp.float32)]
    assert MeshExecutable(compiled, in_avals=good).in_avals == compiled.in_avals
    with pytest.raises(ValueError, match=r"input 1 is given as int32\[32, 8\]"):
        MeshExecutable(compiled, in_avals=[good[0], jax.ShapeDtypeStruct((32, 8), jnp.int32)])


def test_a_split_bf16_contraction_rounds_once_as_jit_does() -> None:
    """Issue 32, item 6: XLA rounded each device's partial sum of a bf16 dot split over its
    contraction to bf16 before the all-reduce (87 of 216 elements off jax.jit, by up to 0.5,
    the plan's {devices=[1,1,8]} of the random-program suite). alpa-widen-split-contractions
    sums them in f32, and the plan prices that all-reduce in f32 as XLA emits it."""
    keys = jax.random.split(jax.random.key(0), 2)
    x = jax.random.normal(keys[0], (4, 6, 1024), jnp.bfloat16)
    w = jax.random.normal(keys[1], (1024, 9), jnp.bfloat16)
    step = alpa_mlir.parallelize(lambda x, w: x @ w, method=alpa_mlir.ShardParallel(mesh_shape=(8,)))
    plan = step.get_plan(x, w)
    assert [a.spec.dims for a in plan.arguments] == [((), (), (0,)), ((0,), ())]  # the contraction is split
    want = np.asarray(jax.jit(lambda x, w: x @ w)(x, w), np.float32)
    np.testing.assert_allclose(np.asarray(step(x, w), np.float32), want, rtol=2.0**-8, atol=0)
    emitted = [(c.kind, c.bytes) for c in step.get_executable(x, w).compiled.collectives()]
    assert emitted == [("all-reduce", 4 * 6 * 9 * 4)]
    assert [(c.kind, c.bytes) for c in plan.predicted_collectives()] == emitted


def test_partials_of_the_result_type_are_priced_in_it_and_not_widened() -> None:
    # partial_sums="result": the same plan's all-reduce is priced in bf16 (half the f32
    # price, what a GPU moves), the dot is not widened (the module says so), and XLA:CPU,
    # which runs bf16 collectives in f32, emits the same bytes as with f32 partials.
    keys = jax.random.split(jax.random.key(0), 2)
    x = jax.random.normal(keys[0], (4, 6, 1024), jnp.bfloat16)
    w = jax.random.normal(keys[1], (1024, 9), jnp.bfloat16)
    step = alpa_mlir.parallelize(lambda x, w: x @ w,
                                 method=alpa_mlir.ShardParallel(mesh_shape=(8,), partial_sums="result"))
    plan = step.get_plan(x, w)
    assert [a.spec.dims for a in plan.arguments] == [((), (), (0,)), ((0,), ())]
    assert [(c.kind, c.bytes) for c in plan.predicted_collectives()] == [("all-reduce", 4 * 6 * 9 * 2)]
    assert 'alpa.partial_sums = "result"' in step.get_module_text(x, w)
    emitted = [(c.kind, c.bytes) for c in step.get_executable(x, w).compiled.collectives()]
    assert emitted == [("all-reduce", 4 * 6 * 9 * 4)]
    want = np.asarray(jax.jit(lambda x, w: x @ w)(x, w), np.float32)
    got = np.asarray(step(x, w), np.float32)
    np.testing.assert_allclose(got, want, rtol=0.05, atol=1.0)
    assert (got != want).any()  # partials rounded to bf16 before they are summed (f32 ones: none differ)
