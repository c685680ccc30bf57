"""parse_collectives on hand-written HLO (every collective form) and on XLA:CPU output."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from alpa_mlir.dialect.mesh import DeviceMesh
from alpa_mlir.dialect.sharding import ShardingSpec
from alpa_mlir.lowering.hlo_collectives import (
    HloParseError,
    dtype_bits,
    mesh_axes_of_groups,
    parse_collectives,
    ring_factor,
    sliced_all_reduce_elements,
)
from alpa_mlir.lowering.hlo_text import computation_trips, instructions
from alpa_mlir.lowering.spmd import compile_module

MESH_2X4 = DeviceMesh((2, 4))


def hlo(*entry_lines: str, num_partitions: int = 8) -> str:
    """A partitioned HLO module whose entry computation holds ``entry_lines``."""
    body = "\n".join(f"  {line}" for line in entry_lines)
    return (
        f"HloModule m, is_scheduled=true, entry_computation_layout={{(f32[16,8]{{1,0}})->f32[16,8]{{1,0}}}}, "
        f"num_partitions={num_partitions}\n\n"
        "%add (x: f32[], y: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n"
        "  ROOT %sum = f32[] add(%x, %y)\n}\n\n"
        f"ENTRY %main (p: f32[16,8]) -> f32[16,8] {{\n  %p = f32[16,8]{{1,0}} parameter(0), "
        f"sharding={{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}}\n{body}\n}}\n"
    )


def test_all_reduce_list_of_lists_groups_and_bytes() -> None:
    text = hlo("ROOT %ar = f32[16,8]{1,0} all-reduce(%p), channel_id=3, replica_groups={{0,1,2,3},{4,5,6,7}}, "
               "use_global_device_ids=true, to_apply=%add")
    (c,) = parse_collectives(text, MESH_2X4)
    assert (c.kind, c.shape, c.dtype, c.bytes, c.name) == ("all-reduce", (16, 8), "f32", 512, "ar")
    assert c.replica_groups == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert c.mesh_axes == (1,)
    assert (c.channel_id, c.use_global_device_ids, c.group_size) == (3, True, 4)


def test_without_mesh_mesh_axes_is_none() -> None:
    text = hlo("ROOT %ar = f32[16,8]{1,0} all-reduce(%p), replica_groups={{0,4},{1,5},{2,6},{3,7}}, to_apply=%add")
    (c,) = parse_collectives(text)
    assert c.mesh_axes is None and c.channel_id is None and not c.use_global_device_ids
    assert parse_collectives(text, MESH_2X4)[0].mesh_axes == (0,)


@pytest.mark.parametrize(
    ("groups", "expected", "axes"),
    [
        ("[2,4]<=[8]", ((0, 1, 2, 3), (4, 5, 6, 7)), (1,)),
        ("[4,2]<=[2,4]T(1,0)", ((0, 4), (1, 5), (2, 6), (3, 7)), (0,)),
        ("[1,8]<=[8]", ((0, 1, 2, 3, 4, 5, 6, 7),), (0, 1)),
        ("[1,8]<=[2,4]T(1,0)", ((0, 4, 1, 5, 2, 6, 3, 7),), (1, 0)),
        ("[8,1]<=[8]", tuple((d,) for d in range(8)), ()),
        ("{{0,5,1,4},{3,6,2,7}}", ((0, 5, 1, 4), (3, 6, 2, 7)), None),
        ("{}", ((0, 1, 2, 3, 4, 5, 6, 7),), (0, 1)),
    ],
)
def test_replica_group_forms(groups: str, expected: tuple, axes: tuple | None) -> None:
    text = hlo(f"ROOT %ar = f32[16,8]{{1,0}} all-reduce(%p), channel_id=1, replica_groups={groups}, "
               "use_global_device_ids=true, to_apply=%add")
    (c,) = parse_collectives(text, MESH_2X4)
    assert c.replica_groups == expected
    assert c.mesh_axes == axes


@pytest.mark.parametrize(
    ("groups", "expected"),
    [
        # XLA's printing of the SPMD partitioner's groups on a (2,4) mesh sharded as [1,4,2]<=[2,4]T(1,0).
        ("mesh['axis_0'=1,'axis_1'=4,'axis_2'=2], device_ids=([2,4]T(1,0)) {'axis_1'}",
         ((0, 1, 2, 3), (4, 5, 6, 7))),
        ("mesh['axis_0'=8,'axis_1'=1] {'axis_0'}", ((0, 1, 2, 3, 4, 5, 6, 7),)),
        ("mesh['a'=2,'b'=4] {'a'}", ((0, 4), (1, 5), (2, 6), (3, 7))),
        ("mesh['a'=2,'b'=4] {'b','a'}", ((0, 4, 1, 5, 2, 6, 3, 7),)),
        # Sub-axis b:(1)2 splits b=4 into [1,2,2] and groups over the middle factor.
        ("mesh['a'=2,'b'=4] {'b':(1)2}", ((0, 2), (1, 3), (4, 6), (5, 7))),
        ("mesh['a'=2,'b'=4] {'b':(2)2}", ((0, 1), (2, 3), (4, 5), (6, 7))),
        ("mesh['a'=2,'b'=4], device_ids=(7,6,5,4,3,2,1,0) {'a'}", ((7, 3), (6, 2), (5, 1), (4, 0))),
        ("maximal_mesh[device_id=3]", ((3,),)),
    ],
)
def test_mesh_axes_replica_groups(groups: str, expected: tuple) -> None:
    text = hlo(f"ROOT %ar = f32[16,8]{{1,0}} all-reduce(%p), channel_id=1, replica_groups={groups}, "
               "use_global_device_ids=true, to_apply=%add")
    assert parse_collectives(text)[0].replica_groups == expected


def test_all_gather_bytes_are_the_result() -> None:
    text = hlo("%x = bf16[2,8]{1,0} slice(%p), slice={[0:2], [0:8]}",
               "ROOT %ag = bf16[16,8]{1,0} all-gather(%x), channel_id=1, replica_groups=[1,8]<=[8], "
               "dimensions={0}, use_global_device_ids=true")
    (c,) = parse_collectives(text, MESH_2X4)
    assert (c.kind, c.shape, c.dtype, c.bytes, c.mesh_axes) == ("all-gather", (16, 8), "bf16", 256, (0, 1))


def test_async_pairs_count_once() -> None:
    text = hlo(
        "%ars = f32[16,8]{1,0} all-reduce-start(f32[16,8]{1,0} %p), channel_id=1, replica_groups={{0,1},{2,3},"
        "{4,5},{6,7}}, use_global_device_ids=true, to_apply=%add",
        "%ard = f32[16,8]{1,0} all-reduce-done(f32[16,8]{1,0} %ars)",
        "%x = f32[2,8]{1,0} slice(%ard), slice={[0:2], [0:8]}",
        "%ags = (f32[2,8]{1,0}, f32[8,8]{1,0}) all-gather-start(%x), channel_id=2, replica_groups=[2,4]<=[8], "
        "dimensions={0}, use_global_device_ids=true",
        "%agd = f32[8,8]{1,0} all-gather-done(%ags)",
        "%cps = (f32[16,8]{1,0}, f32[16,8]{1,0}, u32[], u32[]) collective-permute-start(%p), channel_id=3, "
        "source_target_pairs={{0,4},{4,0},{1,5},{5,1},{2,6},{6,2},{3,7},{7,3}}",
        "ROOT %cpd = f32[16,8]{1,0} collective-permute-done(%cps)",
    )
    found = parse_collectives(text, MESH_2X4)
    assert [(c.kind, c.name, c.bytes) for c in found] == [
        ("all-reduce", "ars", 512), ("all-gather", "ags", 256), ("collective-permute", "cps", 512)]
    assert found[0].mesh_axes is None  # pairs of y neighbours are a sub-axis, not a whole mesh axis
    assert found[1].mesh_axes == (1,)
    permute = found[2]
    assert permute.source_target_pairs[:2] == ((0, 4), (4, 0))
    assert permute.replica_groups == ((0, 4), (1, 5), (2, 6), (3, 7))
    assert permute.mesh_axes == (0,)


def test_combined_all_gather_start_sums_results() -> None:
    text = hlo("%a = f32[2,8]{1,0} slice(%p), slice={[0:2], [0:8]}", "%b = s32[4]{0} constant({1,2,3,4})",
               "%ags = ((f32[2,8]{1,0}, s32[4]{0}), (f32[16,8]{1,0}, s32[32]{0})) all-gather-start(%a, %b), "
               "channel_id=1, replica_groups=[1,8]<=[8], dimensions={0}, use_global_device_ids=true",
               "ROOT %agd = (f32[16,8]{1,0}, s32[32]{0}) all-gather-done(%ags)")
    (c,) = parse_collectives(text)
    assert c.bytes == 16 * 8 * 4 + 32 * 4
    assert c.elements == (((16, 8), "f32"), ((32,), "s32"))


def test_variadic_all_reduce_is_one_entry_with_summed_bytes() -> None:
    text = hlo("%s = f32[] constant(1)", "%i = s32[3]{0} constant({1,2,3})",
               "%ar = (f32[16,8]{1,0}, f32[], s32[3]{0}) all-reduce(%p, %s, %i), channel_id=1, "
               "replica_groups=[2,4]<=[8], use_global_device_ids=true, to_apply=%add",
               "ROOT %g = f32[16,8]{1,0} get-tuple-element(%ar), index=0")
    (c,) = parse_collectives(text, MESH_2X4)
    assert c.bytes == 512 + 4 + 12
    assert (c.shape, c.dtype) == ((16, 8), "f32")
    assert [e[1] for e in c.elements] == ["f32", "f32", "s32"]


def test_reduce_scatter_uses_operand_inline_or_by_name() -> None:
    by_name = hlo("ROOT %rs = f32[4,8]{1,0} reduce-scatter(%p), channel_id=1, replica_groups=[2,4]<=[8], "
                  "use_global_device_ids=true, dimensions={0}, to_apply=%add")
    inline = by_name.replace("reduce-scatter(%p)", "reduce-scatter(f32[16,8]{1,0} %p)")
    for text in (by_name, inline):
        (c,) = parse_collectives(text, MESH_2X4)
        assert (c.kind, c.shape, c.bytes, c.mesh_axes) == ("reduce-scatter", (16, 8), 512, (1,))


def test_all_to_all_array_and_tuple_forms() -> None:
    array = hlo("ROOT %a2a = f32[16,8]{1,0} all-to-all(%p), channel_id=1, replica_groups=[2,4]<=[8], "
                "dimensions={1}")
    (c,) = parse_collectives(array, MESH_2X4)
    assert (c.kind, c.bytes, c.mesh_axes) == ("all-to-all", 512, (1,))
    chunks = [f"%c{i} = f32[4,8]{{1,0}} slice(%p), slice={{[{4 * i}:{4 * i + 4}], [0:8]}}" for i in range(4)]
    pieces = ", ".join(f"%c{i}" for i in range(4))
    shapes = ", /*index=2*/".join(["f32[4,8]{1,0}, f32[4,8]{1,0}"] * 2)
    tupled = hlo(*chunks, f"%a2a = ({shapes}) all-to-all({pieces}), channel_id=1, replica_groups=[2,4]<=[8]",
                 "ROOT %g = f32[4,8]{1,0} get-tuple-element(%a2a), index=0")
    (c,) = parse_collectives(tupled, MESH_2X4)
    assert (c.bytes, len(c.elements), c.shape) == (512, 4, (4, 8))


@pytest.mark.parametrize(
    ("dtype", "nbytes"),
    [("pred", 16), ("s8", 16), ("u8", 16), ("s16", 32), ("u16", 32), ("s32", 64), ("u32", 64), ("s64", 128),
     ("u64", 128), ("bf16", 32), ("f16", 32), ("f32", 64), ("f64", 128), ("c64", 128), ("c128", 256),
     ("f8e4m3fn", 16), ("s4", 8)],
)
def test_every_dtype_has_its_byte_size(dtype: str, nbytes: int) -> None:
    text = hlo(f"%x = {dtype}[4,4]{{1,0:T(2,128)}} parameter(1)",
               f"ROOT %ar = {dtype}[4,4]{{1,0}} all-reduce(%x), channel_id=1, replica_groups={{}}, "
               "use_global_device_ids=true, to_apply=%add")
    (c,) = parse_collectives(text)
    assert (c.dtype, c.bytes) == (dtype, nbytes)


def test_dtype_bits_rejects_unknown_types() -> None:
    assert dtype_bits("pred") == 8 and dtype_bits("c128") == 128
    with pytest.raises(HloParseError, match="unknown HLO element type"):
        dtype_bits("opaque")


def test_undefined_operand_is_an_error() -> None:
    text = hlo("ROOT %ar = f32[16,8]{1,0} all-reduce(%nowhere), replica_groups={}, to_apply=%add")
    with pytest.raises(HloParseError, match="nowhere"):
        parse_collectives(text)


def test_non_collectives_are_ignored() -> None:
    text = hlo("%n = f32[16,8]{1,0} negate(%p)", "ROOT %ard = f32[16,8]{1,0} all-reduce-done(%n)")
    assert parse_collectives(text) == []


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([1, 2, 3, 4]), min_size=1, max_size=3), st.data())
def test_mesh_form_matches_the_mesh_axes_it_names(shape: list[int], data: st.DataObject) -> None:
    """Brute force: groups of ``mesh[...] {axes}`` are the mesh positions varying along ``axes``."""
    wide = [a for a, s in enumerate(shape) if s > 1]
    axes = data.draw(st.permutations(wide).flatmap(lambda p: st.integers(0, len(p)).map(lambda n: p[:n])))
    names = [f"'a{i}'" for i in range(len(shape))]
    mesh_text = ",".join(f"{n}={s}" for n, s in zip(names, shape))
    text = hlo(f"ROOT %ar = f32[16,8]{{1,0}} all-reduce(%p), channel_id=1, replica_groups=mesh[{mesh_text}] "
               f"{{{','.join(names[a] for a in axes)}}}, use_global_device_ids=true, to_apply=%add")
    (c,) = parse_collectives(text, DeviceMesh(tuple(shape)))
    assert c.mesh_axes == tuple(axes)
    positions = np.arange(int(np.prod(shape))).reshape(shape)
    for group in c.replica_groups:
        coords = np.array([np.unravel_index(d, shape) for d in group])
        fixed = [a for a in range(len(shape)) if a not in axes]
        assert (coords[:, fixed] == coords[0, fixed]).all()
    assert sorted(d for g in c.replica_groups for d in g) == list(positions.flat)


def test_mesh_axes_of_groups_rejects_partial_cover() -> None:
    assert mesh_axes_of_groups(((0, 1),), MESH_2X4) is None
    assert mesh_axes_of_groups((), MESH_2X4) is None


# --- real modules compiled by XLA:CPU ---------------------------------------------------------


def _reshard_module(shape: tuple[int, int], source: str, target: str, dtype: str = "f32") -> str:
    tensor = f"tensor<{shape[0]}x{shape[1]}x{dtype}>"
    return (
        "module @reshard attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {\n"
        f'  func.func public @main(%arg0: {tensor} {{mhlo.sharding = "{source}"}}) -> '
        f'({tensor} {{mhlo.sharding = "{target}"}}) {{\n'
        f"    return %arg0 : {tensor}\n  }}\n}}\n"
    )


def test_compiled_all_gather_over_mesh_axis_1() -> None:
    source = ShardingSpec(((1,), ())).to_mhlo(MESH_2X4)
    target = ShardingSpec.replicated(2).to_mhlo(MESH_2X4)
    (c,) = compile_module(_reshard_module((16, 8), source, target), MESH_2X4).collectives()
    assert (c.kind, c.shape, c.bytes, c.mesh_axes) == ("all-gather", (16, 8), 512, (1,))
    assert c.replica_groups == ((0, 1, 2, 3), (4, 5, 6, 7))


def test_compiled_all_to_all_is_one_entry() -> None:
    source = ShardingSpec(((0, 1), ())).to_mhlo(MESH_2X4)
    target = ShardingSpec(((), (0, 1))).to_mhlo(MESH_2X4)
    found = compile_module(_reshard_module((16, 16), source, target), MESH_2X4).collectives()
    assert [c.kind for c in found] == ["all-to-all"]
    # Each device sends its whole 2x16 f32 shard (XLA:CPU splits it into a tuple of 8 pieces).
    assert found[0].bytes == 2 * 16 * 4
    assert found[0].mesh_axes == (0, 1)


def test_compiled_collective_permute_has_pairs() -> None:
    reversed_rows = "{devices=[8,1]7,6,5,4,3,2,1,0}"
    found = compile_module(_reshard_module((16, 16), "{devices=[8,1]<=[8]}", reversed_rows), MESH_2X4).collectives()
    assert [c.kind for c in found] == ["collective-permute"]
    assert set(found[0].source_target_pairs) == {(d, 7 - d) for d in range(8)}
    assert found[0].bytes == 2 * 16 * 4
    assert found[0].mesh_axes == (0, 1)


def test_sliced_all_reduce_elements_follow_uses_into_fusions() -> None:
    # XLA:CPU's reduce-scatter: element 0 is only dynamic-sliced (inside a fusion),
    # element 1 is also used whole.
    text = (
        "HloModule m, num_partitions=4\n\n"
        "%add (x: f32[], y: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n"
        "  ROOT %sum = f32[] add(%x, %y)\n}\n\n"
        "%fused (param_0: f32[32], param_1: s32[]) -> f32[8] {\n  %param_0 = f32[32]{0} parameter(0)\n"
        "  %param_1 = s32[] parameter(1)\n"
        "  ROOT %ds = f32[8]{0} dynamic-slice(%param_0, %param_1), dynamic_slice_sizes={8}\n}\n\n"
        "ENTRY %main (p: f32[32], q: f32[16], i: s32[]) -> (f32[8], f32[16]) {\n"
        "  %p = f32[32]{0} parameter(0)\n  %q = f32[16]{0} parameter(1)\n  %i = s32[] parameter(2)\n"
        "  %ar = (f32[32]{0}, f32[16]{0}) all-reduce(%p, %q), replica_groups={{0,1,2,3}}, to_apply=%add\n"
        "  %g0 = f32[32]{0} get-tuple-element(%ar), index=0\n  %g1 = f32[16]{0} get-tuple-element(%ar), index=1\n"
        "  %f = f32[8]{0} fusion(%g0, %i), kind=kLoop, calls=%fused\n"
        "  ROOT %t = (f32[8]{0}, f32[16]{0}) tuple(%f, %g1)\n}\n"
    )
    assert sliced_all_reduce_elements(text) == {"ar": (True, False)}


def test_ring_factor() -> None:
    assert ring_factor("all-reduce", 4) == 1.5
    assert ring_factor("all-gather", 4) == ring_factor("reduce-scatter", 4) == 0.75
    assert ring_factor("collective-permute", 2) == 1.0


def test_instructions_name_each_instructions_computation():
    text = """HloModule m

%body (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %ar = f32[4]{0} all-reduce(%p), replica_groups={{0,1}}, to_apply=%add
}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  ROOT %y = f32[4]{0} negate(%x)
}
"""
    assert {inst.name: c for inst, c in instructions(text)} == {"p": "body", "ar": "body", "x": "main", "y": "main"}


def test_computation_trips_multiply_through_nested_loops_and_sum_over_callers() -> None:
    text = """HloModule m, num_partitions=4

%inner (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %ag = f32[4]{0} all-gather(%p), replica_groups={{0,1,2,3}}, dimensions={0}
}

%cond (c: f32[4]) -> pred[] {
  %c = f32[4]{0} parameter(0)
  ROOT %k = pred[] constant(true)
}

%outer (q: f32[4]) -> f32[4] {
  %q = f32[4]{0} parameter(0)
  ROOT %w = f32[4]{0} while(%q), condition=%cond, body=%inner, backend_config={"known_trip_count":{"n":"3"}}
}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %a = f32[4]{0} while(%x), condition=%cond, body=%outer, backend_config={"known_trip_count":{"n":"5"}}
  %b = f32[4]{0} call(%a), to_apply=%outer
  ROOT %u = f32[4]{0} while(%b), condition=%cond, body=%inner
}
"""
    trips = computation_trips(text)
    # inner: 3 x 5 through the counted loops, 3 through the call, 1 through the uncounted loop.
    assert (trips["main"], trips["outer"], trips["inner"]) == (1, 6, 19)
    assert [c.trips for c in parse_collectives(text)] == [19]


def test_a_scanned_layers_collectives_run_once_per_layer() -> None:
    def scanned(w, x):
        x, _ = jax.lax.scan(lambda x, w: (jnp.tanh(x @ w), None), x, w)
        return x.sum()

    mesh = jax.sharding.Mesh(np.array(jax.devices()[:8]).reshape(2, 4), ("x", "y"))
    w = jax.ShapeDtypeStruct((6, 64, 64), jnp.float32, sharding=NamedSharding(mesh, P(None, None, "y")))
    x = jax.ShapeDtypeStruct((32, 64), jnp.float32, sharding=NamedSharding(mesh, P("x")))
    found = parse_collectives(jax.jit(scanned).lower(w, x).compile().as_text(), MESH_2X4)
    # Each layer gathers its output columns over y; the loss is reduced once.
    assert sorted((c.kind, c.trips) for c in found if c.kind == "all-gather") == [("all-gather", 6)]
    assert {c.trips for c in found if c.kind == "all-reduce"} == {1}
