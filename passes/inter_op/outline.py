"""Outlining groups of ``@main``'s ops into functions that ``@main`` calls (stage functions, Sec. 5).

Inter-op parallelism runs each stage's forward, backward and apply-gradient parts on
its own mesh, so each such part becomes a ``func.func`` of its own: its arguments are
the values it reads from outside (``@main``'s arguments or other parts' results), its
results the values outside reads from it. ``@main`` keeps only the calls, in an order
where every part runs after the parts it reads from; the module computes exactly what
it computed before (``test/unit/test_outline.py`` runs both).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from jax._src.lib.mlir import ir

from ...dialect.annotations import string_attr
from ...dialect.context import walk
from ...dialect.names import OUTLINE_GROUP_ATTR
from .training_step import step_ops


class OutlineError(ValueError):
    """The grouping cannot be outlined; the message says why."""


@dataclass(frozen=True)
class Outlined:
    """A group's new function and the original values its arguments and results carry."""

    func: ir.Operation
    group: int
    inputs: tuple[ir.Value, ...]
    outputs: tuple[ir.Value, ...]


def outline(func: ir.Operation, groups: Sequence[int], names: Sequence[str],
            attributes: Sequence[dict[str, ir.Attribute]] = ()) -> list[Outlined]:
    """Move the ops of ``step_ops(func)`` into one function per group; ``func`` calls them.

    Args:
      func: the function to split (``@main``); its arguments and results stay.
      groups: per top-level op, its group number in ``0 .. len(names) - 1``.
      names: the symbol name of each group's function (unique in the module).
      attributes: optional discardable attributes per group, set on its function (e.g. its mesh).

    Returns the new functions (with the values they take and give), in the order
    ``func`` calls them. A group without ops
    gets no function. Raises :class:`OutlineError` when groups depend on each other in
    a cycle (no call order exists).
    """
    ops = step_ops(func)
    if len(groups) != len(ops):
        raise OutlineError(f"{len(groups)} group numbers for {len(ops)} ops")
    if any(not 0 <= g < len(names) for g in groups):
        raise OutlineError(f"group numbers must lie in 0..{len(names) - 1}")
    # Group membership as an attribute, not a map from Python objects: the bindings do
    # not keep one object (and hash) per operation while ops move between functions.
    i64 = ir.IntegerType.get_signless(64, func.context)
    members: dict[int, list[ir.Operation]] = {}
    for op, g in zip(ops, groups):
        op.attributes[OUTLINE_GROUP_ATTR] = ir.IntegerAttr.get(i64, g)
        members.setdefault(g, []).append(op)
    inputs, outputs, after = {}, {}, {}
    for g, group in members.items():
        inputs[g], outputs[g], after[g] = _boundary(group, g)
    order = _call_order(after, names)
    terminator = func.regions[0].blocks[0].operations[len(ops)].operation
    current: dict[ir.Value, ir.Value] = {}  # a value of an outlined group -> the call result that carries it
    created = []
    for g in order:
        callee = _outline_group(terminator, g, members[g], [current.get(v, v) for v in inputs[g]], outputs[g],
                                names[g], attributes=attributes[g] if attributes else {}, current=current)
        created.append(Outlined(callee, g, tuple(inputs[g]), tuple(outputs[g])))
    for op in ops:
        del op.attributes[OUTLINE_GROUP_ATTR]
    return created


@dataclass(frozen=True)
class Extracted:
    """Some of a function's ops as the public ``@main`` of a module of their own."""

    module: ir.Module
    inputs: tuple[ir.Value, ...]  # the original values @main's arguments stand for
    outputs: tuple[ir.Value, ...]  # the original values @main returns
    ops: tuple[ir.Operation, ...]  # the copies of the ops, in the order given


def extract(func: ir.Operation, indices: Sequence[int]) -> Extracted:
    """Copy ops ``step_ops(func)[i]`` for ``i`` in ``indices`` (program order kept) into a
    new module: what they read from the other ops or ``func``'s arguments becomes
    arguments of its ``@main``, what the other ops or ``func`` read from them its results.
    ``func`` is unchanged. The stage DP costs a stage by planning such a module."""
    ops = step_ops(func)
    chosen = [ops[i] for i in sorted(set(indices))]
    i64 = ir.IntegerType.get_signless(64, func.context)
    for op in chosen:
        op.attributes[OUTLINE_GROUP_ATTR] = ir.IntegerAttr.get(i64, 0)
    try:
        inputs, outputs, _ = _boundary(chosen, 0)
    finally:
        for op in chosen:
            del op.attributes[OUTLINE_GROUP_ATTR]
    with func.location:
        module = ir.Module.create()
        function_type = ir.FunctionType.get([v.type for v in inputs], [v.type for v in outputs])
        with ir.InsertionPoint(module.body):
            main = ir.Operation.create("func.func", regions=1, attributes={
                "sym_name": string_attr("main"), "function_type": ir.TypeAttr.get(function_type)})
        body = main.regions[0].blocks.append(*[v.type for v in inputs], arg_locs=[v.location for v in inputs])
        mapping = dict(zip(inputs, body.arguments))
        copies = []
        for op in chosen:
            copy = op.clone(ip=ir.InsertionPoint(body))
            for nested in walk(copy):
                for value in list(nested.operands):
                    if value in mapping:
                        nested.replace_uses_of_with(value, mapping[value])
            mapping.update(zip(op.results, copy.results))
            copies.append(copy)
        with ir.InsertionPoint(body):
            ir.Operation.create("func.return", operands=[mapping[v] for v in outputs])
    return Extracted(module, tuple(inputs), tuple(outputs), tuple(copies))


def _boundary(group: list[ir.Operation], g: int) -> tuple[list[ir.Value], list[ir.Value], set[int]]:
    """What group ``g`` (its ops marked with ``OUTLINE_GROUP_ATTR``) reads from outside, what outside reads
    from it, and the groups it reads from."""
    inputs: list[ir.Value] = []
    outputs: list[ir.Value] = []
    after: set[int] = set()
    for op in group:
        for nested in walk(op):
            for value in nested.operands:
                source = _group_of(value)
                if source != g and not _defined_inside(value, op) and value not in inputs:
                    inputs.append(value)
                    if source is not None:
                        after.add(source)
        outputs += [r for r in op.results if any(_group_of(use.owner) != g for use in r.uses)]
    return inputs, outputs, after


def _group_of(where: ir.Value | ir.Operation) -> int | None:
    """The group of the top-level op that defines a value or holds an op; None outside every
    group (function arguments, the caller's terminator and calls)."""
    op = where.owner if isinstance(where, ir.Value) else where
    if isinstance(op, ir.Block):  # a block argument: of the function, or of a region inside an op
        op = op.owner
    while op is not None:
        op = op.operation
        if OUTLINE_GROUP_ATTR in op.attributes:
            return ir.IntegerAttr(op.attributes[OUTLINE_GROUP_ATTR]).value
        op = op.parent
    return None


def _defined_inside(value: ir.Value, op: ir.Operation) -> bool:
    """``value`` is a block argument of a region nested in ``op`` (a while's carried value)."""
    if not isinstance(value.owner, ir.Block):
        return False
    parent = value.owner.owner
    while parent is not None:
        if parent == op:
            return True
        parent = parent.parent
    return False


def _call_order(after: dict[int, set[int]], names: Sequence[str]) -> list[int]:
    order, done = [], set()
    pending = sorted(after)
    while pending:
        ready = [g for g in pending if after[g] - {g} <= done]
        if not ready:
            raise OutlineError("the groups read each other's values in a cycle: "
                               + ", ".join(names[g] for g in pending) + " cannot be called in any order")
        order.append(ready[0])
        done.add(ready[0])
        pending.remove(ready[0])
    return order


def _outline_group(terminator: ir.Operation, g: int, group: list[ir.Operation], inputs: list[ir.Value],
                   outputs: list[ir.Value], name: str, *, attributes: dict[str, ir.Attribute],
                   current: dict[ir.Value, ir.Value]) -> ir.Operation:
    func = terminator.parent
    location = group[0].location
    function_type = ir.FunctionType.get([v.type for v in inputs], [v.type for v in outputs],
                                        context=location.context)
    with ir.InsertionPoint(func), location:  # before the caller, in the module
        callee = ir.Operation.create("func.func", regions=1, attributes={
            "sym_name": string_attr(name), "function_type": ir.TypeAttr.get(function_type),
            "sym_visibility": string_attr("private"), **attributes})
    body = callee.regions[0].blocks.append(*[v.type for v in inputs], arg_locs=[v.location for v in inputs])
    with ir.InsertionPoint(terminator), location:
        call = ir.Operation.create("func.call", results=[v.type for v in outputs], operands=inputs,
                                   attributes={"callee": ir.FlatSymbolRefAttr.get(name)})
    for value, result in zip(outputs, call.results):
        for use in list(value.uses):
            if _group_of(use.owner) != g:
                use.owner.operands[use.operand_number] = result
        current[value] = result
    with ir.InsertionPoint(body), location:
        ret = ir.Operation.create("func.return", operands=outputs)
    for op in group:
        op.move_before(ret)
    for value, argument in zip(inputs, body.arguments):
        for op in group:
            for nested in walk(op):
                nested.replace_uses_of_with(value, argument)
    return callee
