"""The output of ``alpa-auto-sharding``: a solution of Eq. 1 written into the function.

Each op takes its chosen strategy's result shardings (``mhlo.sharding``), each
argument and result its own; a resharding the solution needs becomes an explicit
``custom_call @Sharding`` where the value is defined, made once per (value, layout)
and shared by every user that wants that layout. The same decisions, with their
predicted collectives, come back as the :class:`ShardingPlan`.
"""

from __future__ import annotations

from dataclasses import asdict, replace

from jax._src.lib.mlir import ir

from ...dialect.annotations import MHLO_SHARDING, SHARDING_CUSTOM_CALL, get_value_attrs, set_value_attrs, string_attr
from ...dialect.host_callbacks import callback_device, callback_sharding, is_host_callback
from ...dialect.mesh import DeviceMesh
from ...dialect.sharding import mhlo_tuple_elements
from ...plans.sharding_plan import OpPlan, ShardingPlan, ValuePlan
from .cost_graph import Graph
from .ilp import Solution


def annotate_plan(graph: Graph, solution: Solution, func: ir.Operation, mesh: DeviceMesh,
                  physical: DeviceMesh) -> ShardingPlan:
    """Write the chosen shardings, make reshardings explicit, and build the plan."""
    resharding, yielded = _make_reshardings(graph, solution.choices, mesh)
    ops, values = _entries(graph, solution.choices, mesh, resharding)
    returned = tuple(r for index, node in enumerate(graph.nodes) if node.kind == "result"
                     for r in resharding.get(index, ()))
    if returned:  # results the plan hands back in another layout than their producer's
        ret = func.regions[0].blocks[0].operations[len(func.regions[0].blocks[0].operations) - 1]
        ops[ret] = OpPlan(ret.name, str(ret.location), "return", (), resharding=returned)
    for terminator, (trips, collectives) in yielded.items():
        ops[terminator] = OpPlan(terminator.name, str(terminator.location), "return", (),
                                 resharding=tuple(collectives), trips=trips)
    _write_shardings(func, ops, values)
    types = {"argument": _types(func, "arg"), "result": _types(func, "res")}
    tied = sorted((graph.nodes[u.src].index, graph.nodes[u.dst].index) for u in graph.uses if u.kind == "alias")
    return ShardingPlan(
        mesh=physical,
        arguments=tuple(ValuePlan(n.shapes[0], types["argument"][n.index], s, t) for n, s, t in values["argument"]),
        results=tuple(ValuePlan(n.shapes[0], types["result"][n.index], s, t) for n, s, t in values["result"]),
        ops=tuple(ops.values()),
        solver=asdict(solution.stats),
        objective=float(solution.objective),
        tied=tuple(tied),
    )


def _make_reshardings(graph: Graph, choices: tuple[int, ...], mesh: DeviceMesh,
                      ) -> tuple[dict[int, list], dict[ir.Operation, tuple[int, list]]]:
    """The chosen reshardings inserted before their users: the collectives per node that
    needs them, and per loop body's yield (resharded once per trip) its trips and collectives."""
    resharding: dict[int, list[tuple[int, object]]] = {}
    # One resharding per (value, layout), shared by every user that needs that layout
    # (as Eq. 1 prices it through the value's copy node): the plan counts it once, where
    # it is made.
    made: dict[tuple[ir.Value, object], ir.Value] = {}
    # A loop body's yield, resharded once per trip: the plan lists it at the body's return.
    yielded: dict[ir.Operation, tuple[int, list[tuple[int, object]]]] = {}
    for use, steps in graph.chosen_reshardings(choices):
        src = graph.nodes[use.src]
        shape, itemsize = src.shapes[use.result], src.itemsizes[use.result]
        value = original = use.user.operands[use.operand]
        where = resharding.setdefault(use.dst, []) if use.trips == graph.nodes[use.dst].trips \
            else yielded.setdefault(use.user, (use.trips, []))[1]
        for given, need in steps:
            key = (original, need)
            if key not in made:
                collectives = graph.resharding_collectives(given, need, shape, itemsize)
                where.extend((use.operand, c) for c in collectives)
                made[key] = _insert_resharding(value, need.to_mhlo(mesh))
            value = made[key]
        use.user.operands[use.operand] = value
    return resharding, yielded


def _entries(graph: Graph, choices: tuple[int, ...], mesh: DeviceMesh, resharding: dict[int, list],
             ) -> tuple[dict[ir.Operation, OpPlan], dict[str, list]]:
    """The plan's entry per op (control-flow ops: one, over their carries), and per
    argument and result its (node, sharding, text)."""
    ops: dict[ir.Operation, OpPlan] = {}
    values = {"argument": [], "result": []}
    for index, (node, choice) in enumerate(zip(graph.nodes, choices)):
        strategy = node.strategies[choice]
        texts = tuple(s.to_mhlo(mesh) if s is not None else "{replicated}" for s in strategy.results)
        if node.kind == "op" and is_host_callback(node.op):
            # It reads its operands whole and runs on one device, which gives every result
            # to its users (jax.jit's form); the import pass put that device on the op.
            whole = callback_sharding(callback_device(node.op), len(node.op.results))
            node.op.attributes[MHLO_SHARDING] = string_attr(whole)  # written below too, unless no results
            texts = tuple(mhlo_tuple_elements(whole) or [whole]) if texts else ()
        elif node.kind == "op" and all(s is None for s in strategy.results):
            texts = ()  # tokens only (stablehlo.after_all): nothing to lay out
        if node.kind == "op":
            ops[node.op] = OpPlan(node.op.name, str(node.op.location), strategy.name, texts,
                                  strategy.communication, tuple(resharding.get(index, ())), node.trips)
        elif node.kind == "carry":  # one plan entry per control-flow op, a tuple of its carries
            entry = ops.get(node.op)
            if entry is None:
                entry = OpPlan(node.op.name, str(node.op.location), strategy.name, texts,
                               resharding=tuple(resharding.get(index, ())), trips=node.trips)
            else:
                entry = replace(entry, strategy=f"{entry.strategy},{strategy.name}", results=entry.results + texts,
                                resharding=entry.resharding + tuple(resharding.get(index, ())))
            ops[node.op] = entry
        elif node.kind != "copy":  # a copy's layout shows in the reshardings made
            values[node.kind].append((node, strategy.results[0], texts[0]))
    return ops, values


def _write_shardings(func: ir.Operation, ops: dict[ir.Operation, OpPlan], values: dict[str, list]) -> None:
    for op, entry in ops.items():
        texts = entry.results
        if texts:
            op.attributes[MHLO_SHARDING] = string_attr(texts[0] if len(texts) == 1 else "{" + ", ".join(texts) + "}")
    for kind, which in (("argument", "arg_attrs"), ("result", "res_attrs")):
        dicts = get_value_attrs(func, which)
        for node, _, text in values[kind]:
            dicts[node.index][MHLO_SHARDING] = string_attr(text)
        set_value_attrs(func, which, dicts)


def _insert_resharding(value: ir.Value, text: str) -> ir.Value:
    """``value`` constrained to sharding ``text``, right where it is defined (so the copy
    dominates every use)."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        point, location = ir.InsertionPoint.at_block_begin(owner), owner.owner.location
    else:
        point, location = ir.InsertionPoint.after(owner), owner.location
    with point, location:
        call = ir.Operation.create(
            "stablehlo.custom_call", results=[value.type], operands=[value],
            attributes={"call_target_name": string_attr(SHARDING_CUSTOM_CALL),
                        "backend_config": string_attr(""), MHLO_SHARDING: string_attr(text)})
    return call.results[0]


def _types(func: ir.Operation, which: str) -> list[str]:
    function_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    values = function_type.inputs if which == "arg" else function_type.results
    return [str(t.element_type) if isinstance(t, ir.ShapedType) else str(t) for t in values]

