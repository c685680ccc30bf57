"""The module's ``func.call`` graph: the calls MLIR's ``inline`` pass leaves behind.

JAX nests its functions as ``func.call``s, which the import pipeline inlines. What the
inliner cannot inline stays a call: a call to a declaration (a ``func.func`` with no
body) and a call into a cycle of calls (recursion). Neither is planned, and neither is
something XLA compiles, so the passes refuse them at the call.
"""

from __future__ import annotations

from jax._src.lib.mlir import ir

from .annotations import funcs
from .context import walk


def _callee(call: ir.Operation) -> str:
    return ir.FlatSymbolRefAttr(call.attributes["callee"]).value


def _name(func: ir.Operation) -> str:
    return ir.StringAttr(func.attributes["sym_name"]).value


def unplannable_call(module: ir.Operation, func: ir.Operation) -> tuple[ir.Operation, str] | None:
    """The first call in ``func`` to a declaration or into a cycle of calls, and why it
    cannot be planned; ``None`` where every call ``func`` reaches ends."""
    by_name = {_name(f): f for f in funcs(module)}
    calls = {name: [op for op in walk(f) if op.name == "func.call"] for name, f in by_name.items()}
    start = _name(func)
    for call in calls.get(start, ()):
        callee = _callee(call)
        target = by_name.get(callee)
        if target is None:
            continue  # the verifier reports an unknown symbol
        if not target.regions[0].blocks:
            return call, (f"@{start} calls @{callee}, a declaration with no body: there is nothing to plan or "
                          "compile; define it in the module")
        cycle = _cycle(callee, calls)
        if cycle:
            return call, (f"@{start} calls @{callee}, which is recursive ({' -> '.join('@' + c for c in cycle)}): "
                          "XLA cannot compile recursion; write it as a loop (lax.while_loop, lax.scan)")
    return None


def _cycle(start: str, calls: dict[str, list[ir.Operation]]) -> list[str]:
    """A path of calls from ``start`` back to a function on it (``start`` first), or ``[]``."""
    path: list[str] = []
    done: set[str] = set()

    def visit(name: str) -> list[str]:
        if name in path:
            return path[path.index(name):] + [name]
        if name in done:
            return []
        path.append(name)
        for call in calls.get(name, ()):
            found = visit(_callee(call))
            if found:
                return found
        path.pop()
        done.add(name)
        return []

    return visit(start)
