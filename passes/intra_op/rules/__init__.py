"""Per-op rules: every StableHLO/CHLO op as a loop nest (:class:`IterationSpace`).

Sec. 4.1: "we can manually enumerate the possible parallel algorithms for every
primitive operator". Here an op's rule says which loop indexes each dimension of
each operand and result; :mod:`..strategies` turns that into parallel algorithms on a
mesh. A rule module registers its rules with :func:`register_rule`; an op without a
rule gets ``None`` from :func:`iteration_space` and the pass replicates it with a
warning.
"""

from __future__ import annotations

from collections.abc import Callable

from jax._src.lib.mlir import ir

from ..strategy import IterationSpace

Rule = Callable[[ir.Operation], IterationSpace | None]

_RULES: dict[str, Rule] = {}


def register_rule(*op_names: str) -> Callable[[Rule], Rule]:
    """Decorator: ``rule`` gives the loop nest of ops named ``op_names``.

    Args:
      op_names: full op names, e.g. ``stablehlo.dot_general``.
    """
    def decorate(rule: Rule) -> Rule:
        for name in op_names:
            if name in _RULES:
                raise ValueError(f"two rules for {name}")
            _RULES[name] = rule
        return rule

    return decorate


def iteration_space(op: ir.Operation) -> IterationSpace | None:
    """The loop nest of ``op``, or ``None`` when no rule covers it."""
    from . import nn_ops, tensor_ops  # noqa: F401  (register their rules)

    rule = _RULES.get(op.name)
    return rule(op) if rule is not None else None


def value_space(shape: tuple[int, ...] | None, consumes: bool) -> IterationSpace:
    """The loop nest of a value: one loop per dimension; ``consumes``: it reads the value
    too (a result sink takes its value's sharding; an argument may take any)."""
    dims = tuple(range(len(shape))) if shape is not None else None
    return IterationSpace(loop_sizes=tuple(shape or ()), operands=(dims,) if consumes else (), results=(dims,))


def replicated_space(op: ir.Operation) -> IterationSpace:
    """The loop nest of an op without a rule: every operand and result stays whole (its only
    algorithm is the replicated one)."""
    def whole(value: ir.Value):
        shape = shape_of(value)
        return None if shape is None else (None,) * len(shape)

    return IterationSpace((), tuple(whole(v) for v in op.operands), tuple(whole(r) for r in op.results))


def has_rule(op_name: str) -> bool:
    from . import nn_ops, tensor_ops  # noqa: F401

    return op_name in _RULES


def shape_of(value: ir.Value) -> tuple[int, ...] | None:
    """Static shape of a ranked tensor value, ``None`` otherwise (tokens, tuples)."""
    if isinstance(value.type, ir.RankedTensorType):
        return tuple(value.type.shape)
    return None


def itemsize_of(value: ir.Value) -> int:
    """Bytes per element of a tensor value (booleans count as one byte)."""
    element = value.type.element_type if isinstance(value.type, ir.ShapedType) else None
    if element is None:
        return 0
    if isinstance(element, ir.ComplexType):
        return 2 * max(1, ir.FloatType(element.element_type).width // 8)
    width = getattr(element, "width", None)
    if width is None and isinstance(element, ir.FloatType):
        width = element.width
    return max(1, (width or 8) // 8)
