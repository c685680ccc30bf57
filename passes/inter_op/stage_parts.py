"""How the ops of the chosen stages become each stage's parts (stage construction's last step).

Alpa runs each parameter's update on the parameter's mesh (its apply-gradient split):
layer construction puts each update on its parameter's layer, and what is left to
share between stages is scalars. Three rewrites keep those scalars from tying the
stages' parts together, and number the parts so the stage functions can be outlined:

- :func:`sum_per_stage`: a scalar sum over every stage's values (the global norm's sum
  of squares in ``clip_by_global_norm``) becomes a sum per stage, then the sum of those:
  one scalar crosses from each stage, not one per parameter.
- :func:`rematerialize_free_ops`: each part gets its own copy of the constants it reads
  and of the scalar apply ops computed from arguments and constants (a step count, a
  bias correction, a learning-rate schedule).
- :func:`part_numbers`: forward, backward, and apply rounds: an apply op reading a value
  another stage's apply part computed (the global norm) runs in a later apply part of
  its stage, so no two parts wait on each other.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from jax._src.lib.mlir import ir

from ...dialect.names import APPLY, FORWARD, LAYER_ATTR, PHASE_ATTR
from ..intra_op.rules import shape_of
from .layer_construction import is_tensor
from .training_step import StepGraph, step_ops

FREE_OPS = ("stablehlo.constant", "stablehlo.iota", "stablehlo.broadcast_in_dim", "stablehlo.reshape",
            "stablehlo.convert")
_EFFECTFUL = ("stablehlo.custom_call", "stablehlo.rng", "stablehlo.rng_bit_generator")


def sum_per_stage(main: ir.Operation, stage_of: Callable[[ir.Operation], int]) -> None:
    """Re-associate every scalar apply sum whose terms come from several stages: the terms
    of each stage are added in that stage (on the layer of its last term), then the
    stages' sums in stage order where the sum was. Floating-point addition is not
    associative, so the sum may differ from the original in its last bits."""
    ops = step_ops(main)
    graph = StepGraph(main)
    is_add = [op.name == "stablehlo.add" and is_scalar_apply(op) for op in ops]
    # A chain: adds whose result feeds only the next add of the same sum.
    inner = [is_add[i] and len(list(ops[i].results[0].uses)) == 1 and len(graph.users[i]) == 1
             and is_add[graph.users[i][0]] for i in range(len(ops))]
    for root in (i for i in range(len(ops)) if is_add[i] and not inner[i]):
        terms, adds, pending = [], [], [root]
        while pending:
            i = pending.pop()
            adds.append(i)
            for value in ops[i].operands:
                j = graph.producer.get(value)
                if j is not None and inner[j]:
                    pending.append(j)
                else:
                    terms.append(value)
        by_stage: dict[int | None, list[ir.Value]] = {}  # None: the arguments among the terms
        last_layer: dict[int, ir.Attribute] = {}  # of each stage's last term
        for value in terms:  # read now: a sum rewritten before gives its new value
            producer = None if isinstance(value.owner, ir.Block) else value.owner.operation
            stage = None if producer is None else stage_of(producer)
            by_stage.setdefault(stage, []).append(value)
            if producer is not None:
                last_layer[stage] = producer.attributes[LAYER_ATTR]
        stages = sorted(s for s in by_stage if s is not None)
        if len(stages) < 2:
            continue
        top = ops[root]
        partial_sums = [_add_chain(by_stage[s], top, last_layer[s]) for s in stages]
        total = _add_chain(partial_sums + by_stage.get(None, []), top, top.attributes[LAYER_ATTR])
        top.results[0].replace_all_uses_with(total)
        for i in sorted(adds, reverse=True):  # users before what they read
            ops[i].erase()


def _add_chain(values: list[ir.Value], before: ir.Operation, layer: ir.Attribute) -> ir.Value:
    """``values[0] + values[1] + ...`` as apply ops on ``layer``, inserted before ``before``."""
    total = values[0]
    with ir.InsertionPoint(before), before.location:
        for value in values[1:]:
            add = ir.Operation.create("stablehlo.add", results=[total.type], operands=[total, value],
                                      attributes={LAYER_ATTR: layer, PHASE_ATTR: ir.StringAttr.get(APPLY)})
            total = add.results[0]
    return total


def rematerialize_free_ops(main: ir.Operation, part_of: Callable[[ir.Operation], Hashable]) -> None:
    """Give every part its own copy of the constants it reads (and of broadcasts, reshapes and
    converts of constants), and of the scalar apply ops computed from arguments and such
    copies (a step count, a bias correction): recomputing them is free, moving them between
    meshes is not, and one constant shared by the updates of every layer would tie the
    stages' parts together."""
    ops = step_ops(main)
    position = {op: n for n, op in enumerate(ops)}
    copied: set[int] = set()

    def copied_or_argument(value: ir.Value) -> bool:
        return isinstance(value.owner, ir.Block) or position.get(value.owner.operation) in copied

    for n, op in enumerate(ops):
        free = op.name in FREE_OPS and all(not isinstance(v.owner, ir.Block) and copied_or_argument(v)
                                           for v in op.operands)
        if free or (is_scalar_apply(op) and all(copied_or_argument(v) for v in op.operands)):
            copied.add(n)
    for n in sorted(copied, reverse=True):  # users first: a copied broadcast asks for its own constant
        op = ops[n]
        home = part_of(op)
        by_part: dict = {}
        for result in op.results:
            for use in list(result.uses):
                user = use.owner.operation
                while user.parent is not None and user.parent != main:
                    user = user.parent.operation
                if user.parent is None or LAYER_ATTR not in user.attributes or part_of(user) == home:  # the return
                    continue
                by_part.setdefault(part_of(user), []).append((use.owner.operation, use.operand_number, result))
        for uses in by_part.values():
            copy = op.clone(ip=ir.InsertionPoint(op))
            first = uses[0][0]
            while first.parent != main:
                first = first.parent.operation
            copy.attributes[LAYER_ATTR] = first.attributes[LAYER_ATTR]
            copy.attributes[PHASE_ATTR] = first.attributes[PHASE_ATTR]
            for user, number, result in uses:
                user.operands[number] = copy.results[ir.OpResult(result).result_number]


def is_scalar_apply(op: ir.Operation) -> bool:
    """An apply op of plain stablehlo computing scalars from scalars (no regions, no effects)."""
    values = [*op.operands, *op.results]
    return (ir.StringAttr(op.attributes[PHASE_ATTR]).value == APPLY and not op.regions and bool(op.results)
            and op.name.startswith("stablehlo.") and op.name not in _EFFECTFUL
            and all(shape_of(v) is not None and not is_tensor(v) for v in values))


def part_numbers(main: ir.Operation, phase: list[str], stage_of: list[int]) -> list[int]:
    """Per op of ``@main``, its part within its stage: 0 forward, 1 backward, ``2 + k`` the
    apply ops ``k`` hops of a value from another stage's apply part away from the first."""
    graph = StepGraph(main)
    part = [0 if p == FORWARD else 1 for p in phase]
    for n in range(len(part)):  # program order: producers first
        if phase[n] == APPLY:
            part[n] = max([2, *(part[j] + (stage_of[j] != stage_of[n]) for j in graph.inputs[n]
                                if phase[j] == APPLY)])
    return part
