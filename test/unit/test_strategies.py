"""The parallel algorithms of an op's loop nest: Table 3 and a brute-force count (Sec. 4.1)."""

from __future__ import annotations

import itertools
import math

import pytest

from alpa_mlir.dialect.mesh import DeviceMesh
from alpa_mlir.dialect.sharding import ShardingSpec
from alpa_mlir.passes.intra_op.cost_model import collective
from alpa_mlir.passes.intra_op.strategies import StrategyOptions, enumerate_strategies
from alpa_mlir.passes.intra_op.strategy import IterationSpace, Strategy

NB, NI, NJ, NK = 4, 8, 16, 8
F32 = 4


def batched_matmul(b: int = NB, i: int = NI, j: int = NJ, k: int = NK, heavy: bool = True) -> IterationSpace:
    """``C[b,i,j] = sum_k A[b,i,k] B[b,k,j]`` with loops l0=b, l1=i, l2=j, l3=k (the
    numbering of the dot_general rule)."""
    return IterationSpace((b, i, j, k), ((0, 1, 3), (0, 3, 2)), ((0, 1, 2),), reducer="sum", heavy=heavy,
                          flops=2.0 * b * i * j * k)


def _strategies(space: IterationSpace, mesh: DeviceMesh, **options) -> list[Strategy]:
    b, i, j, k = space.loop_sizes if len(space.loop_sizes) == 4 else (1, 1, 1, 1)
    return enumerate_strategies(space, [(b, i, k), (b, k, j)], [F32, F32], [(b, i, j)], [F32], mesh,
                                options=StrategyOptions(**options))


def _spec(text: str) -> ShardingSpec:
    """``RS^0S^1`` / ``RS^{01}R`` -> ShardingSpec, the paper's notation."""
    dims, rest = [], text
    while rest:
        if rest[0] == "R":
            dims.append(())
            rest = rest[1:]
        elif rest.startswith("S^{"):
            end = rest.index("}")
            dims.append(tuple(int(c) for c in rest[3:end]))
            rest = rest[end + 1:]
        else:
            dims.append((int(rest[2]),))
            rest = rest[3:]
    return ShardingSpec(tuple(dims))


M = NB * NI * NJ * F32  # bytes of the output
N0, N1 = 2, 2
# Table 3 rows: (loop -> axes), output spec, input specs, communication (kind, axes, bytes).
TABLE3 = [
    ({1: (0,), 2: (1,)}, "RS^0S^1", ("RS^0R", "RRS^1"), ()),
    ({1: (0,), 3: (1,)}, "RS^0R", ("RS^0S^1", "RS^1R"), (("all-reduce", (1,), M / N0),)),
    ({2: (0,), 3: (1,)}, "RRS^0", ("RRS^1", "RS^1S^0"), (("all-reduce", (1,), M / N0),)),
    ({0: (0,), 1: (1,)}, "S^0S^1R", ("S^0S^1R", "S^0RR"), ()),
    ({0: (0,), 3: (1,)}, "S^0RR", ("S^0RS^1", "S^0S^1R"), (("all-reduce", (1,), M / N0),)),
    ({1: (0, 1)}, "RS^{01}R", ("RS^{01}R", "RRR"), ()),
    ({3: (0, 1)}, "RRR", ("RRS^{01}", "RS^{01}R"), (("all-reduce", (0, 1), M),)),
]


@pytest.mark.parametrize(("mapping", "output", "inputs", "communication"), TABLE3,
                         ids=[f"row{n + 1}" for n in range(len(TABLE3))])
def test_table3_rows(mapping, output, inputs, communication):
    mesh = DeviceMesh((N0, N1), alpha=(1.0, 2.0), beta=(0.5, 0.25))
    loop_axes = tuple(mapping.get(loop, ()) for loop in range(4))
    # Rows 6 and 7 split one loop over both axes: the flattened mesh.
    (strategy,) = [s for s in _strategies(batched_matmul(), mesh, allow_flattened_mesh=True)
                   if s.loop_axes == loop_axes and "reduce-scatter" not in s.name]
    assert strategy.results == (_spec(output),)
    assert strategy.operands == tuple(_spec(t) for t in inputs)
    assert [(c.kind, c.mesh_axes, c.bytes) for c in strategy.communication] == list(communication)
    assert [c.cost for c in strategy.communication] == [
        collective(kind, nbytes, axes, mesh).cost for kind, axes, nbytes in communication]
    assert strategy.compute_cost == 0.0


def test_names_read_like_table3():
    names = [s.name for s in _strategies(batched_matmul(), DeviceMesh((2, 2)), allow_flattened_mesh=True)]
    assert "l1->0 l2->1" in names and "l1->{0,1}" in names and "l3->{0,1}" in names
    assert len(names) == len(set(names))
    light = [s.name for s in _strategies(batched_matmul(heavy=False), DeviceMesh((2, 2)))]
    assert light[0] == "replicated"


def brute_force_mappings(loop_sizes: tuple[int, ...], mesh_shape: tuple[int, ...],
                         mixed: bool, flattened: bool) -> set[tuple[tuple[int, ...], ...]]:
    """Every assignment of disjoint ascending sets of mesh axes (size > 1) to loops,
    each set's product dividing its loop; without ``mixed``, sets of one axis, or
    (``flattened``) one set of all axes."""
    axes = [a for a, size in enumerate(mesh_shape) if size > 1]
    subsets = [tuple(c) for r in range(len(axes) + 1) for c in itertools.combinations(axes, r)]
    found = set()
    for choice in itertools.product(subsets, repeat=len(loop_sizes)):
        used = [a for s in choice for a in s]
        if len(used) != len(set(used)):
            continue
        if any(loop_sizes[n] % math.prod(mesh_shape[a] for a in s) for n, s in enumerate(choice)):
            continue
        non_empty = [s for s in choice if s]
        if not mixed and not (all(len(s) == 1 for s in non_empty)
                              or (flattened and len(non_empty) == 1 and len(non_empty[0]) == len(axes))):
            continue
        found.add(choice)
    return found


@pytest.mark.parametrize("mesh_shape", [(1, 4), (2, 4), (2, 2, 2), (4, 1, 2)])
@pytest.mark.parametrize(("mixed", "flattened"), [(False, False), (False, True), (True, False)])
@pytest.mark.parametrize("sizes", [(NB, NI, NJ, NK), (2, 6, 4, 8), (3, 5, 4, 1)])
def test_mappings_match_brute_force(mesh_shape, mixed, flattened, sizes):
    mesh = DeviceMesh(mesh_shape)
    space = batched_matmul(*sizes, heavy=False)
    strategies = _strategies(space, mesh, allow_mixed_mesh_shape=mixed, allow_flattened_mesh=flattened,
                             reduce_scatter=False)
    expected = brute_force_mappings(sizes, mesh_shape, mixed, flattened)
    assert len(strategies) == len(expected)
    assert {s.loop_axes for s in strategies} == expected


@pytest.mark.parametrize(("mesh_shape", "options", "count"), [
    # (1,4): one axis on one of 4 loops, or none.
    ((1, 4), {}, 5), ((1, 4), {"allow_mixed_mesh_shape": True}, 5),
    # (2,4): each axis on its own loop (4*3), one alone (4+4), none (1); the flattened mesh
    # adds both axes on one loop (S^{01}, 4), and that is all mixed adds on two axes.
    ((2, 4), {}, 21), ((2, 4), {"allow_flattened_mesh": True}, 25), ((2, 4), {"allow_mixed_mesh_shape": True}, 25),
    # (2,2,2): 0..3 axes on distinct loops 1+12+36+24; flattened adds all three on one
    # loop (4); mixed also pairs on one loop with the third axis elsewhere or unused:
    # 3 pairs * 4 loops * (3 + 1).
    ((2, 2, 2), {}, 73), ((2, 2, 2), {"allow_flattened_mesh": True}, 77),
    ((2, 2, 2), {"allow_mixed_mesh_shape": True}, 125),
])
def test_mapping_counts(mesh_shape, options, count):
    strategies = _strategies(batched_matmul(16, 16, 16, 16, heavy=False), DeviceMesh(mesh_shape),
                             reduce_scatter=False, **options)
    assert len(strategies) == count


@pytest.mark.parametrize("mesh_shape", [(2, 4), (2, 2, 2), (1, 8)])
def test_heavy_ops_never_replicate_work(mesh_shape):
    mesh = DeviceMesh(mesh_shape)
    strategies = _strategies(batched_matmul(), mesh, allow_mixed_mesh_shape=True)
    every_axis = {a for a, size in enumerate(mesh_shape) if size > 1}
    expected = {m for m in brute_force_mappings((NB, NI, NJ, NK), mesh_shape, True, False)
                if {a for s in m for a in s} == every_axis}
    assert {s.loop_axes for s in strategies} == expected
    assert all(s.compute_cost == 0.0 for s in strategies)
    assert "replicated" not in [s.name for s in strategies]


def test_heavy_op_too_small_keeps_all():
    # No loop is divisible by axis 1 (size 4): nothing uses every axis, so all stay.
    strategies = _strategies(batched_matmul(2, 2, 1, 1), DeviceMesh((2, 4)))
    assert [s.name for s in strategies] == ["replicated", "l0->0", "l1->0"]


def test_recomputed_heavy_op_pays_for_redundant_flops():
    mesh = DeviceMesh((2, 4))
    space = batched_matmul()
    strategies = _strategies(space, mesh, allow_recompute_heavy_op=True, flop_cost=0.5)
    by_name = {s.name: s for s in strategies}
    assert by_name["replicated"].compute_cost == pytest.approx(0.5 * space.flops * (1 - 1 / 8))
    assert by_name["l1->0"].compute_cost == pytest.approx(0.5 * space.flops * (1 / 2 - 1 / 8))
    assert by_name["l1->0 l2->1"].compute_cost == 0.0
    assert len(strategies) > len(_strategies(space, mesh))
    # In bytes' time on the fastest axis: a mesh priced in seconds prices flops in seconds.
    timed = _strategies(space, DeviceMesh((2, 4), beta=(4e-11, 2e-12)), allow_recompute_heavy_op=True, flop_cost=0.5)
    assert {s.name: s.compute_cost for s in timed}["replicated"] == pytest.approx(
        2e-12 * by_name["replicated"].compute_cost)


def test_reduce_scatter_variants():
    mesh = DeviceMesh((2, 2))
    strategies = _strategies(batched_matmul(), mesh, reduce_scatter=True)
    variants = [s for s in strategies if s.loop_axes == ((), (0,), (), (1,))]
    assert [s.name for s in variants] == ["l1->0 l3->1", "l1->0 l3->1 reduce-scatter(dim 0)",
                                          "l1->0 l3->1 reduce-scatter(dim 2)"]
    assert [s.results for s in variants[1:]] == [(_spec("S^1S^0R"),), (_spec("RS^0S^1"),)]
    for s in variants[1:]:
        assert s.operands == variants[0].operands
        assert [(c.kind, c.mesh_axes, c.bytes) for c in s.communication] == [("reduce-scatter", (1,), M / 2)]
        assert s.communication_cost < variants[0].communication_cost
    # Both axes reduce: the scatter dim must be divisible by 4.
    flat = [s.name for s in _strategies(batched_matmul(b=2), mesh, reduce_scatter=True, allow_flattened_mesh=True)
            if s.loop_axes == ((), (), (), (0, 1))]
    assert flat == ["l3->{0,1}", "l3->{0,1} reduce-scatter(dim 1)", "l3->{0,1} reduce-scatter(dim 2)"]
    # Off by default: XLA:CPU runs them as all-reduce + slice (see test_strategy_fidelity).
    assert not any("reduce-scatter" in s.name for s in _strategies(batched_matmul(), mesh))


def test_reduce_scatter_only_for_sum():
    space = IterationSpace((4, 8), ((0, 1), ()), ((0,),), reducer="max", flops=32)
    strategies = enumerate_strategies(space, [(4, 8), ()], [F32, F32], [(4,)], [F32], DeviceMesh((2, 2)),
                                      options=StrategyOptions(reduce_scatter=True))
    assert not any("reduce-scatter" in s.name for s in strategies)
    (split,) = [s for s in strategies if s.loop_axes == ((0,), (1,))]
    assert [(c.kind, c.mesh_axes, c.bytes) for c in split.communication] == [("all-reduce", (1,), 2 * F32)]
    assert split.operands == (_spec("S^0S^1"), ShardingSpec(()))


def test_unsplittable_reduction_and_multiple_results():
    # argmax-like: reduced dim has no loop; two results each all-reduce nothing.
    space = IterationSpace((4,), ((0, None), (0, None), (), ()), ((0,), (0,)), reducer=None)
    strategies = enumerate_strategies(space, [(4, 8), (4, 8), (), ()], [F32, F32, F32, F32], [(4,), (4,)],
                                      [F32, F32], DeviceMesh((1, 4)))
    assert [(s.name, s.results) for s in strategies] == [
        ("replicated", (_spec("R"), _spec("R"))), ("l0->1", (_spec("S^1"), _spec("S^1")))]
    # A reduction loop without a reducer cannot be split.
    space = IterationSpace((4, 8), ((0, 1),), ((0,),), reducer=None)
    strategies = enumerate_strategies(space, [(4, 8)], [F32], [(4,)], [F32], DeviceMesh((2, 2)))
    assert all(not s.loop_axes[1] for s in strategies)
    # A variadic sum all-reduces every result and has no reduce-scatter variant.
    space = IterationSpace((4, 8), ((0, 1), (0, 1)), ((0,), (0,)), reducer="sum")
    strategies = enumerate_strategies(space, [(4, 8)] * 2, [F32, 2], [(4,), (4,)], [F32, 2], DeviceMesh((1, 2)),
                                      options=StrategyOptions(reduce_scatter=True))
    assert [[(c.kind, c.bytes) for c in s.communication] for s in strategies] == [
        [], [], [("all-reduce", 4 * F32), ("all-reduce", 4 * 2)]]


def test_divisibility_and_size_one_axes():
    space = IterationSpace((6, 8), ((0, 1),), ((0, 1),))
    strategies = enumerate_strategies(space, [(6, 8)], [F32], [(6, 8)], [F32], DeviceMesh((1, 4)))
    assert [s.name for s in strategies] == ["replicated", "l1->1"]
    strategies = enumerate_strategies(space, [(6, 8)], [F32], [(6, 8)], [F32], DeviceMesh((2, 4)),
                                      options=StrategyOptions(allow_flattened_mesh=True))
    assert [s.name for s in strategies] == ["replicated", "l1->1", "l0->0", "l0->0 l1->1", "l1->0", "l1->{0,1}"]


def test_tokens_have_no_spec():
    space = IterationSpace((4,), ((0,), None), ((0,), None))
    strategies = enumerate_strategies(space, [(4,), None], [F32, 0], [(4,), None], [F32, 0], DeviceMesh((2,)))
    assert [(s.operands, s.results) for s in strategies] == [
        ((_spec("R"), None), (_spec("R"), None)), ((_spec("S^0"), None), (_spec("S^0"), None))]
