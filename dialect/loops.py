"""How many times a ``stablehlo.while`` runs its body, where the IR says so.

``lax.scan`` and ``lax.fori_loop`` lower to a counted loop: a carried integer starts
at a constant, the body adds a constant to it, and the condition compares it with a
constant bound. :func:`trip_count` reads that pattern (XLA's own while-loop analysis
recognises the same one and records it as ``known_trip_count``), so a cost model can
charge a loop body's work once per trip: a scan over 24 layers runs its body 24 times.
Any other loop (a data-dependent condition, a counter that is not a constant's
arithmetic) has no trip count here.
"""

from __future__ import annotations

import math

from jax._src.lib.mlir import ir

# The comparison of the counter with the bound, as the condition's predicate.
_COMPARISONS = ("LT", "LE", "GT", "GE", "NE")


def _producer(value: ir.Value) -> ir.Operation | None:
    """The op defining ``value``; ``None`` for a block argument."""
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def _constant(value: ir.Value) -> int | None:
    """The integer of a scalar (or splat) ``stablehlo.constant``."""
    owner = _producer(value)
    if owner is None or owner.name != "stablehlo.constant":
        return None
    dense = owner.attributes["value"]
    if not isinstance(dense, ir.DenseIntElementsAttr) or not dense.is_splat:
        return None
    return int(dense.get_splat_value().value)


def _direction(compare: ir.Operation) -> str:
    return str(compare.attributes["comparison_direction"]).split()[-1].rstrip(">")


def trip_count(op: ir.Operation) -> int | None:
    """How many times the ``stablehlo.while`` ``op`` runs its body, if it is counted:
    ``for (i = start; i < bound; i += step)`` (or ``<=``, ``>``, ``>=``, ``!=``, either
    operand order), with ``start``, ``bound`` and ``step`` constants; ``None`` otherwise."""
    cond, body = (region.blocks[0] for region in op.regions)
    predicate = _producer(cond.operations[len(cond.operations) - 1].operation.operands[0])
    if predicate is None or predicate.name != "stablehlo.compare":
        return None
    direction = _direction(predicate)
    if direction not in _COMPARISONS:
        return None
    lhs, rhs = predicate.operands
    if isinstance(rhs, ir.BlockArgument) and rhs.owner == cond and not isinstance(lhs, ir.BlockArgument):
        lhs, rhs = rhs, lhs
        direction = {"LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE", "NE": "NE"}[direction]
    if not isinstance(lhs, ir.BlockArgument) or lhs.owner != cond:
        return None
    number, bound = lhs.arg_number, _constant(rhs)
    start = _constant(op.operands[number])
    step = _step(body, number)
    if None in (bound, start, step) or step == 0:
        return None
    if direction == "NE":
        span = bound - start
        return span // step if span % step == 0 and span // step >= 0 else None
    if direction in ("LE", "GE"):
        bound += 1 if direction == "LE" else -1
    span = bound - start if direction in ("LT", "LE") else start - bound
    stride = step if direction in ("LT", "LE") else -step
    if stride <= 0:
        return None if span > 0 else 0
    return max(0, math.ceil(span / stride))


def _step(body: ir.Block, number: int) -> int | None:
    """The constant the body adds to carried value ``number`` (``i + c`` or ``c + i``)."""
    yielded = body.operations[len(body.operations) - 1].operation.operands[number]
    owner = _producer(yielded)
    if owner is None or owner.name not in ("stablehlo.add", "stablehlo.subtract"):
        return None
    lhs, rhs = owner.operands
    argument = body.arguments[number]
    if lhs == argument and (c := _constant(rhs)) is not None:
        return c if owner.name == "stablehlo.add" else -c
    if owner.name == "stablehlo.add" and rhs == argument and (c := _constant(lhs)) is not None:
        return c
    return None
