"""The cost graph of Eq. 1 with ``share-reshardings``: a resharding several matmuls need is priced once.

Also the pass's fallback when XLA's prices do not converge (``AutoShardingPass._solve``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from ilp_oracle import brute_force
from jax._src.lib.mlir import ir

from alpa_mlir.dialect.context import make_context
from alpa_mlir.dialect.mesh import DeviceMesh
from alpa_mlir.dialect.pass_registry import Diagnostics
from alpa_mlir.dialect.sharding import ShardingSpec, tile_bytes
from alpa_mlir.passes.intra_op import auto_sharding, ilp
from alpa_mlir.passes.intra_op.cost_graph import Graph
from alpa_mlir.passes.intra_op.cost_model import resharding_collectives
from alpa_mlir.passes.intra_op.plan_constraints import pin_user_shardings, restrict
from alpa_mlir.passes.intra_op.strategies import StrategyOptions
from alpa_mlir.passes.intra_op.strategy_tables import TableCache


def two_readers(x: tuple[int, int], width: int, x_pin: str = "", w_pin: str = "") -> str:
    """One value, x, read by two matmuls (as a layer's input is by its forward matmul and
    by its weight gradient), with optional ``mhlo.sharding`` pins on x and the weights."""
    def typed(shape, pin):
        attrs = f' {{mhlo.sharding = "{pin}"}}' if pin else ""
        return f"tensor<{shape[0]}x{shape[1]}xf32>{attrs}"

    w, y = (x[1], width), (x[0], width)
    dot = f"contracting_dims = [1] x [0] : ({typed(x, '')}, {typed(w, '')}) -> {typed(y, '')}"
    return f"""
func.func @main(%x: {typed(x, x_pin)}, %w1: {typed(w, w_pin)}, %w2: {typed(w, w_pin)})
    -> ({typed(y, '')}, {typed(y, '')}) {{
  %0 = stablehlo.dot_general %x, %w1, {dot}
  %1 = stablehlo.dot_general %x, %w2, {dot}
  return %0, %1 : {typed(y, '')}, {typed(y, '')}
}}
"""


TWO_READERS = two_readers((64, 32), 16)
MESH = DeviceMesh((1, 4))


@pytest.fixture()
def func():
    with make_context():
        module = ir.Module.parse(TWO_READERS)
        yield module.body.operations[0]


def graph(func, share: bool) -> Graph:
    g = Graph(func, MESH, StrategyOptions(), share=share)
    if share:
        g.share_reshardings()
    return g


def graphs_sharing_tables(func) -> tuple[Graph, Graph]:
    """Two graphs of ``func`` on MESH built with one TableCache's tables, as the stage
    search builds its candidates'."""
    cache = TableCache()
    return tuple(Graph(func, MESH, StrategyOptions(), tables=cache.tables(MESH, StrategyOptions(), frozenset()))
                 for _ in range(2))


def consistent_choices(g: Graph, dot_strategy: int) -> list[int]:
    """Both matmuls take ``dot_strategy``; the weights come as it needs them and the
    results leave as it makes them; x and the copy stay to be chosen (0 here)."""
    choices = [0] * len(g.nodes)
    dots = [i for i, n in enumerate(g.nodes) if n.kind == "op"]
    for use in g.uses:
        src, dst = g.nodes[use.src], g.nodes[use.dst]
        if use.dst in dots:
            choices[use.dst] = dot_strategy
            if src.kind == "argument" and src.index > 0:  # a weight: given as needed
                need = use.needs(dst)[dot_strategy]
                choices[use.src] = next(j for j, s in enumerate(src.strategies) if s.results[0] == need)
        elif dst.kind == "result":
            given = src.strategies[dot_strategy].results[0]
            choices[use.dst] = next(j for j, s in enumerate(dst.strategies) if s.results[0] == given)
    return choices


def test_the_matmuls_share_one_copy(func):
    g = graph(func, share=True)
    assert len(g.copies) == 1
    src, result, copy = g.copies[0]
    assert g.nodes[src].kind == "argument" and g.nodes[src].index == 0
    readers = sorted(g.nodes[u.dst].label for n, u in enumerate(g.uses) if g._routed.get(n) == copy)
    assert readers == ["stablehlo.dot_general"] * 2


def test_a_layout_both_matmuls_need_is_paid_once(func):
    shared, per_user = graph(func, share=True), graph(func, share=False)
    x = 0  # argument 0 is node 0
    dot = next(n for n in shared.nodes if n.kind == "op")
    x_use = next(u for u in shared.uses if u.src == x)
    needs = x_use.needs(dot)
    # A matmul algorithm that needs x column-split, while x comes row-split.
    j = next(j for j, need in enumerate(needs) if need is not None and need.dims[1] and not need.dims[0])
    need = needs[j]
    given = next(i for i, s in enumerate(shared.nodes[x].strategies) if s.results[0].dims[0])
    resharding = shared._cost(shared.nodes[x].strategies[given].results[0], need, (64, 32), 4)
    assert resharding > 0

    choices = consistent_choices(shared, j)
    choices[x] = given
    copy = shared.copies[0][2]
    choices[copy] = next(i for i, s in enumerate(shared.nodes[copy].strategies) if s.results[0] == need)
    once = ilp.objective(shared.cost_graph(), choices)
    twice = ilp.objective(per_user.cost_graph(), choices[:copy])
    assert once == pytest.approx(twice - resharding)
    # The plan makes that resharding once, for both readers.
    steps = [s for _, s in shared.chosen_reshardings(choices)]
    assert steps == [((shared.nodes[x].strategies[given].results[0], need),)] * 2


def test_a_copy_in_the_producers_layout_prices_each_user_as_before(func):
    shared, per_user = graph(func, share=True), graph(func, share=False)
    x, copy = 0, shared.copies[0][2]  # argument 0 is node 0
    for j in range(len(next(n for n in shared.nodes if n.kind == "op").strategies)):
        choices = consistent_choices(shared, j)
        for i, strategy in enumerate(shared.nodes[x].strategies):
            choices[x] = i
            choices[copy] = next(c for c, s in enumerate(shared.nodes[copy].strategies)
                                 if s.results[0] == strategy.results[0])
            assert ilp.objective(shared.cost_graph(), choices) == pytest.approx(
                ilp.objective(per_user.cost_graph(), choices[:copy]))


def test_the_ilp_finds_the_brute_force_optimum_with_copies(func):
    cost_graph = graph(func, share=True).cost_graph()
    solution = ilp.solve(cost_graph)
    _, best = brute_force(cost_graph)
    assert solution.objective == pytest.approx(best)
    assert np.isfinite(best)


# x comes row-split and both weights column-split, so the plan must reshard one of them
# (the lit case share_reshardings.mlir).
PINNED = two_readers((96, 256), 64, x_pin="{devices=[4,1]<=[4]}", w_pin="{devices=[1,4]<=[4]}")


@pytest.mark.parametrize("x_factor, weight_factor, shared_wins", [(10, 1, False), (1.5, 10, True)])
def test_unconverged_repricing_keeps_the_cheaper_of_shared_and_per_user(monkeypatch, x_factor, weight_factor,
                                                                        shared_wins):
    # XLA (here an oracle scaling the model's price of each resharding of x or of a
    # weight) disagrees with the model, and no round is left to solve again: the plan
    # with copies (gather x once) and the one without (gather both weights) are compared
    # at XLA's prices, and the plan is annotated as the winner was priced.
    monkeypatch.setattr(auto_sharding, "MAX_REPRICING", 0)

    def oracle(src, dst, shape, itemsize):
        factor = x_factor if shape == (96, 256) else weight_factor
        return tuple(replace(c, cost=c.cost * factor) for c in resharding_collectives(src, dst, shape, itemsize, MESH))

    with make_context():
        module = ir.Module.parse(PINNED)
        func = module.body.operations[0]
        method = auto_sharding.AutoShardingPass(mesh_shape=(1, 4), share_reshardings=True)
        g = Graph(func, MESH, StrategyOptions(), share=True)
        assert pin_user_shardings(g, func, MESH, method.keep_user_shardings, Diagnostics([]))
        g.share_reshardings()
        solution, planned = method._solve(g, oracle, set())
        assert planned.share == shared_wins and (planned is g) == shared_wins and g.share
        resharded = {planned.nodes[use.src].index for use, _ in planned.chosen_reshardings(solution.choices)}
        assert resharded == ({0} if shared_wins else {1, 2})  # x, or the two weights
        assert solution.objective == pytest.approx(ilp.objective(planned.cost_graph(), solution.choices))


def test_graphs_on_one_mesh_share_their_tables_until_xla_prices_one(func):
    # The stage search plans the same layers in many candidates: their strategies and
    # resharding prices are computed once per mesh (its cache's TableCache). A graph that XLA
    # prices (here ten times the model) takes its own copies: the other graph's prices and
    # plan stay the model's.
    first, second = graphs_sharing_tables(func)
    assert first._strategies is second._strategies and first._matrices is second._matrices
    assert [n.strategies for n in first.nodes] == [n.strategies for n in second.nodes]
    cache, other = TableCache(), DeviceMesh((2, 2))
    assert cache.tables(MESH, StrategyOptions(), frozenset()) is cache.tables(MESH, StrategyOptions(), frozenset())
    assert Graph(func, other, StrategyOptions(), tables=cache.tables(other, StrategyOptions(), frozenset())
                 )._strategies is not cache.tables(MESH, StrategyOptions(), frozenset()).strategies
    assert graph(func, share=False)._strategies is not first._strategies  # no tables given: its own
    before = [e.cost for e in second.cost_graph().edges]
    choices = [int(np.argmin(n.costs)) if len(n.costs) else 0 for n in first.nodes]  # each op's cheapest
    assert any(True for _ in first.chosen_reshardings(choices))  # which reshard something for XLA to price

    def oracle(src, dst, shape, itemsize):
        return tuple(replace(c, cost=c.cost * 10) for c in resharding_collectives(src, dst, shape, itemsize, MESH))

    assert first.measure_reshardings(choices, oracle) > 0
    assert first._costs is not second._costs and first._matrices is not second._matrices
    after = [e.cost for e in second.cost_graph().edges]
    assert all(np.array_equal(a, b) for a, b in zip(before, after))
    assert any(not np.array_equal(a, b) for a, b in zip(after, (e.cost for e in first.cost_graph(False).edges)))


CHAIN = """
func.func @main(%x: tensor<64x32xf32>, %w: tensor<32x16xf32>, %b: tensor<64x16xf32>)
    -> (tensor<16x64xf32>, tensor<64xf32>) {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<64x32xf32>, tensor<32x16xf32>)
      -> tensor<64x16xf32>
  %1 = stablehlo.negate %0 : tensor<64x16xf32>
  %2 = stablehlo.add %1, %b : tensor<64x16xf32>
  %3 = stablehlo.transpose %2, dims = [1, 0] : (tensor<64x16xf32>) -> tensor<16x64xf32>
  %cst = stablehlo.constant dense<0.0> : tensor<f32>
  %4 = stablehlo.reduce(%2 init: %cst) applies stablehlo.add across dimensions = [1]
      : (tensor<64x16xf32>, tensor<f32>) -> tensor<64xf32>
  return %3, %4 : tensor<16x64xf32>, tensor<64xf32>
}
"""


@pytest.mark.parametrize("shape", [(1, 4), (2, 2)])
@pytest.mark.parametrize("tied", [False, True])
def test_a_follower_takes_the_first_cheapest_algorithm_that_takes_its_leaders_layout(shape, tied):
    # Sec. 4.2's merging, against the definition: for each algorithm of the leader, the
    # follower's algorithms needing the layout it gives, the cheapest, the first on ties
    # (tied: every cost 0; the reduce's all-reduce and reduce-scatter need one layout).
    with make_context():
        module = ir.Module.parse(CHAIN)
        g = Graph(module.body.operations[0], DeviceMesh(shape), StrategyOptions(reduce_scatter=True))
        for node in g.nodes if tied else ():
            node.costs = np.zeros(len(node.costs))
        follows = g.follows()
        assert {g.nodes[f.node].label for f in follows} >= {"stablehlo.negate", "stablehlo.transpose",
                                                             "stablehlo.reduce"}
        for f in follows:
            use = next(u for u in g.uses if u.dst == f.node and u.src == f.leader)
            needs, costs = use.needs(g.nodes[f.node]), g.nodes[f.node].costs
            for i, strategy in enumerate(g.nodes[f.leader].strategies):
                matches = [j for j, need in enumerate(needs) if need == strategy.results[use.result]]
                assert f.mapping[i] == min(matches, key=lambda j: costs[j])


def test_costs_and_memory_are_shared_by_strategy_key_and_read_only(func):
    # Computed once per mesh for every op of that key (repeated layers), so no graph may
    # change them in place; a pinned node has its own key, so its own bytes.
    first, second = graphs_sharing_tables(func)
    for a, b in zip(first.nodes, second.nodes):
        assert a.costs is b.costs and not a.costs.flags.writeable
        if a.kind != "result":
            assert first.memory(a) is second.memory(b)
            assert list(first.memory(a)) == [sum(tile_bytes(spec, shape, size, MESH) for spec, shape, size in zip(
                s.results, a.shapes, a.itemsizes) if spec is not None) for s in a.strategies]
    with pytest.raises(ValueError, match="read-only"):
        first.nodes[0].costs[0] = 1.0
    pinned = ShardingSpec(((0,), (1,)))  # no algorithm of an argument on (1, 4) gives it: one is added
    restrict(first.nodes[0], lambda s: False, pinned=[pinned])
    assert first.nodes[0].signature != second.nodes[0].signature
    assert len(first.memory(first.nodes[0])) == len(second.memory(second.nodes[0])) + 1
    assert first.memory(first.nodes[0])[-1] == tile_bytes(pinned, (64, 32), 4, MESH)


SCANNED = """
func.func @main(%w: tensor<6x32x32xf32>, %x: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %h = %x) : tensor<i32>, tensor<64x32xf32>
  cond {
    %c6 = stablehlo.constant dense<6> : tensor<i32>
    %p = stablehlo.compare LT, %i, %c6, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %z = stablehlo.constant dense<0> : tensor<i32>
    %s = stablehlo.dynamic_slice %w, %i, %z, %z, sizes = [1, 32, 32]
        : (tensor<6x32x32xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x32x32xf32>
    %l = stablehlo.reshape %s : (tensor<1x32x32xf32>) -> tensor<32x32xf32>
    %y = stablehlo.dot_general %h, %l, contracting_dims = [1] x [0]
        : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %n = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %n, %y : tensor<i32>, tensor<64x32xf32>
  }
  %r = stablehlo.dot_general %0#1, %x, contracting_dims = [0] x [0]
      : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<32x32xf32>
  %t = stablehlo.dot_general %x, %r, contracting_dims = [1] x [0]
      : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
  return %t : tensor<64x32xf32>
}
"""


def test_a_loop_body_is_priced_once_per_trip():
    # Six trips of the body's matmul: its algorithms and the reshardings of what it reads
    # count six times in Eq. 1 (against the same loop run once); the ops after the loop,
    # and what any value keeps, once.
    with make_context():
        modules = [ir.Module.parse(SCANNED.replace("dense<6>", f"dense<{trips}>")) for trips in (6, 1)]
        graphs, costs = [], []
        for module in modules:
            graphs.append(Graph(module.body.operations[0], MESH, StrategyOptions()))
            costs.append(graphs[-1].cost_graph(live_sets=((0,),)))
        g = graphs[0]
        dots = [i for i, n in enumerate(g.nodes) if n.kind == "op" and n.op.name == "stablehlo.dot_general"]
        assert [g.nodes[i].trips for i in dots] == [6, 1, 1]
        for i, factor in zip(dots, (6, 1, 1)):
            assert np.any(costs[1].node_costs[i] > 0)
            np.testing.assert_array_equal(costs[0].node_costs[i], factor * costs[1].node_costs[i])
        np.testing.assert_array_equal(np.concatenate(costs[0].node_memory), np.concatenate(costs[1].node_memory))
        priced = 0
        for use, edge, once in zip(g.uses, costs[0].edges, costs[1].edges):  # one edge per use, in order
            assert (edge.src, edge.dst) == (use.src, use.dst)
            np.testing.assert_array_equal(edge.cost, use.trips * once.cost)
            priced += use.trips == 6 and np.any(once.cost > 0)
        assert priced >= 2  # the body's matmul reads the carried value and the weight's slice
        # The carried value: its operand is given once, the body's yield once per trip.
        carry = next(i for i, n in enumerate(g.nodes) if n.kind == "carry" and n.shapes == ((64, 32),))
        assert sorted(u.trips for u in g.uses if u.dst == carry) == [1, 6]
        assert g.nodes[carry].trips == 1
