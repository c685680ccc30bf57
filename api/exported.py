"""The plan as a ``jax.export`` artifact: what ``step.export`` returns and what
``AutoShardResult.constrained`` calls inside a user's ``jax.jit``.

``jax.export`` serializes a function as its StableHLO module with the argument and
result shardings, the mesh's device count and the pytrees; ``Exported.call`` runs it,
alone or inlined into a caller's ``jax.jit``. A plan's export is JAX's own export of
the function under the plan's argument and result shardings, with the module replaced
by the planned one as XLA is given it (:func:`~alpa_mlir.lowering.spmd.xla_bytecode`:
every op's sharding pinned by a closed ``sdy.sharding_constraint``, so that the
partitioner, here or in the caller's program, has nothing left to choose). Everything
else (avals, trees, shardings, effects, the VJP) stays JAX's, so the artifact is one
``jax.export.deserialize`` reads in any process.

What an export cannot carry: host callbacks (``jax.debug.print``, ``io_callback``; JAX
refuses them) and donation (the caller's ``jax.jit`` donates, if it wants to).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import jax
from jax._src.export._export import _module_to_bytecode
from jax._src.lib.mlir import ir

from .dialect.context import make_context
from .dialect.mesh import DeviceMesh
from .lowering.spmd import BUFFER_DONOR, LoweringError, default_partitioner, xla_bytecode
from .plans.sharding_plan import PlanError

_DONATION = ("tf.aliasing_output", BUFFER_DONOR)


def export_planned(jitted: Any, args: Sequence[Any], module_text: str, mesh: DeviceMesh,
                   function: str) -> jax.export.Exported:
    """The ``jax.export`` artifact of ``jitted(*args)`` running the planned ``module_text``.

    Args:
      jitted: the function under ``jax.jit`` with the plan's ``in_shardings`` and
        ``out_shardings`` (and ``keep_unused=True``, as it was planned).
      args: its arguments (arrays or ``jax.ShapeDtypeStruct``s).
      module_text: the annotated module the plan made of it.
      mesh: the plan's mesh (its shardings number partitions row-major).
      function: its name, for messages.

    Raises:
      LoweringError: the module has host callbacks.
      PlanError: the planned module takes or returns other types than ``jitted``'s lowering
        (it was planned for other shapes).
    """
    bytecode, _, _, signature = xla_bytecode(module_text, mesh, default_partitioner())
    if signature.host_callbacks:
        raise LoweringError(f"{function} calls Python on the host (jax.debug.print, jax.debug.callback, "
                            "io_callback, ...), which jax.export cannot serialize; export it without them")
    reference = jax.export.export(jitted)(*args)
    planned = tuple((tuple(a.shape), a.dtype) for a in signature.in_avals)
    traced = tuple((tuple(a.shape), a.dtype) for a in reference.in_avals)
    if planned != traced:
        raise PlanError(f"the plan of {function} takes {_types(planned)} but these arguments are "
                        f"{_types(traced)}; export it with the arguments it was planned for")
    with make_context():
        module = ir.Module.parse(bytecode)
        _drop_donation(module)
        module.operation.attributes["jax.uses_shape_polymorphism"] = ir.BoolAttr.get(False)
        serialized = _module_to_bytecode(module)
    return dataclasses.replace(reference, mlir_module_serialized=serialized)


def _drop_donation(module: ir.Module) -> None:
    for op in module.body.operations:
        if op.operation.name != "func.func" or "arg_attrs" not in op.attributes:
            continue
        kept = []
        for attrs in ir.ArrayAttr(op.attributes["arg_attrs"]):
            entries = ir.DictAttr(attrs)
            kept.append(ir.DictAttr.get({entries[i].name: entries[i].attr for i in range(len(entries))
                                         if entries[i].name not in _DONATION}))
        op.attributes["arg_attrs"] = ir.ArrayAttr.get(kept)


def _types(types: Sequence[tuple[tuple[int, ...], Any]]) -> str:
    return ", ".join(f"{jax.numpy.dtype(d).name}{list(s)}" for s, d in types) or "nothing"
