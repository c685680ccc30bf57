"""``alpa-capture-while-invariants``: loop-invariant ``while`` operands become implicit captures."""

from __future__ import annotations

from dataclasses import dataclass

from jax._src.lib.mlir import ir

from ...dialect.annotations import MHLO_SHARDING, string_attr
from ...dialect.context import walk
from ...dialect.pass_registry import Diagnostics, Pass, register
from ...dialect.sharding import ShardingError, mhlo_tuple_elements


@register
@dataclass(frozen=True)
class CaptureWhileInvariantsPass(Pass):
    """Drop every carried value a ``stablehlo.while`` body yields unchanged; read it from outside.

    ``lax.scan`` and ``lax.fori_loop`` carry their constants and inputs (weights,
    ``xs``) through the loop unchanged. XLA's StableHLO-to-HLO conversion turns such
    values into implicit captures before it reads the while's sharding, so a sharding
    written for every carried value no longer fits the op (XLA fails with
    ``RET_CHECK leaf_count == tuple_elements``). This pass makes the same rewrite
    first, so the shardings alpa writes are for the values XLA keeps; a captured
    value keeps the sharding of its definition outside the loop.

    Carried value ``i`` is invariant when the body yields its own argument ``i`` or
    the while's operand ``i`` itself. Its uses in the condition and body, and the
    while's result ``i``, are replaced by operand ``i``; a tuple ``mhlo.sharding`` on
    the while loses the matching element. A while whose every value is invariant is
    left alone. Runs in ``alpa-import-pipeline``, before any planning.

    Input::

        %r:2 = stablehlo.while(%i = %c0, %w = %arg0) : tensor<i32>, tensor<8x8xf32> ...
        do {
          %d = stablehlo.dot %w, %w ...
          stablehlo.return %next, %w : tensor<i32>, tensor<8x8xf32>
        }

    Output::

        %r = stablehlo.while(%i = %c0) : tensor<i32> ...
        do {
          %d = stablehlo.dot %arg0, %arg0 ...
          stablehlo.return %next : tensor<i32>
        }
    """

    name = "alpa-capture-while-invariants"

    def apply(self, module: ir.Operation, diagnostics: Diagnostics) -> None:
        # Post-order, so an inner loop is rewritten before its parent's body is moved.
        loops = [op for op in walk(module) if op.name == "stablehlo.while"]
        for op in reversed(loops):
            _capture_invariants(op)


def _capture_invariants(op: ir.Operation) -> None:
    cond, body = op.regions[0].blocks[0], op.regions[1].blocks[0]
    yielded = _terminator(body).operands
    invariant = [i for i, (operand, arg, value) in enumerate(zip(op.operands, body.arguments, yielded))
                 if value == arg or value == operand]
    if not invariant or len(invariant) == len(op.operands):
        return
    keep = [i for i in range(len(op.operands)) if i not in invariant]
    for i in invariant:
        outside = op.operands[i]
        cond.arguments[i].replace_all_uses_with(outside)
        body.arguments[i].replace_all_uses_with(outside)
        op.results[i].replace_all_uses_with(outside)
    attributes = {name: op.attributes[name] for name in op.attributes}
    if MHLO_SHARDING in attributes:
        try:
            elements = mhlo_tuple_elements(ir.StringAttr(attributes[MHLO_SHARDING]).value)
        except ShardingError:  # left as written for alpa-verify-sharding to report
            elements = None
        if elements is not None and len(elements) == len(op.results):
            attributes[MHLO_SHARDING] = string_attr("{" + ", ".join(elements[i] for i in keep) + "}")
    with ir.InsertionPoint(op), op.location:
        loop = ir.Operation.create("stablehlo.while", results=[op.results[i].type for i in keep],
                                   operands=[op.operands[i] for i in keep], attributes=attributes, regions=2)
    for block, region in ((cond, loop.regions[0]), (body, loop.regions[1])):
        for i in reversed(invariant):
            block.erase_argument(i)
        block.append_to(region)
    terminator = _terminator(body)
    with ir.InsertionPoint(terminator), terminator.location:
        ir.Operation.create("stablehlo.return", operands=[terminator.operands[i] for i in keep])
    terminator.erase()
    for new, i in enumerate(keep):
        op.results[i].replace_all_uses_with(loop.results[new])
    op.erase()


def _terminator(block: ir.Block) -> ir.Operation:
    return block.operations[len(block.operations) - 1].operation
