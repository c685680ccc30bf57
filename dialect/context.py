"""The one MLIR context factory every pass, tool and test uses.

jaxlib's bindings carry func, stablehlo, chlo, mhlo, sdy and mpmd; JAX's own
``make_ir_context`` registers them all. The ``alpa`` ops cannot be registered from
Python (jaxlib ships no IRDL), so the context allows unregistered dialects and
:func:`check_unregistered_ops` enforces what MLIR would: only ``alpa.*`` ops are
accepted unless the user asks for ``--allow-unregistered-dialect``.
"""

from __future__ import annotations

from collections.abc import Iterator

from jax._src.interpreters import mlir as jax_mlir
from jax._src.lib import mosaic_gpu_dialect
from jax._src.lib.mlir import ir

ALPA_DIALECT = "alpa"


def make_context() -> ir.Context:
    """A fresh context with every dialect JAX knows loaded, and ``alpa`` ops allowed."""
    context = jax_mlir.make_ir_context()
    context.allow_unregistered_dialects = True
    # jaxlib's registry lacks the func dialect's inliner interface, without which the
    # upstream ``inline`` pass keeps every call; this jaxlib extension registers it.
    mosaic_gpu_dialect.register_inliner_extensions(context)
    return context


def walk(op: ir.Operation) -> Iterator[ir.Operation]:
    """Pre-order walk over ``op`` and every operation nested in it."""
    op = op.operation
    yield op
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                yield from walk(child)


def check_unregistered_ops(module: ir.Module, allow_unregistered: bool) -> list[tuple[ir.Operation, str]]:
    """Ops from dialects the context does not know, other than ``alpa``: (op, message)."""
    if allow_unregistered:
        return []
    context = module.context
    problems = []
    for op in walk(module.operation):
        dialect = op.name.split(".", 1)[0]
        if dialect != ALPA_DIALECT and not context.is_registered_operation(op.name):
            problems.append((op, f"unregistered operation '{op.name}'; known dialects are func, "
                                 "stablehlo, chlo, mhlo, sdy, mpmd and alpa "
                                 "(use --allow-unregistered-dialect to accept it)"))
    return problems
