"""``alpa-strip-sharding``: remove every sharding annotation and constraint."""

from __future__ import annotations

from dataclasses import dataclass, field

from jax._src.lib.mlir import ir

from ...dialect.annotations import (
    MESH_ATTR,
    MHLO_SHARDING,
    NUM_PARTITIONS,
    SDY_CONSTRAINT_OPS,
    SDY_SHARDING,
    funcs,
    get_value_attrs,
    is_sharding_custom_call,
    replace_with_operand,
    set_value_attrs,
    sharded_ops,
)
from ...dialect.pass_registry import Diagnostics, Pass, register


@register
@dataclass(frozen=True)
class StripShardingPass(Pass):
    """Remove every sharding annotation and sharding constraint from the module.

    Useful to run a sharded module on one device, or to let the auto-sharder choose
    everything. Removes ``mhlo.sharding`` and ``sdy.sharding`` on arguments, results
    and ops; forwards the operand of ``stablehlo.custom_call @Sharding``,
    ``sdy.sharding_constraint`` and ``sdy.reshard`` to their users and erases them.
    Unless ``keep-mesh`` is set, also removes ``sdy.mesh`` symbols and the module's
    ``alpa.mesh`` and ``mhlo.num_partitions``.

    Input::

        %1 = stablehlo.custom_call @Sharding(%0) {mhlo.sharding = "{replicated}"} : ...
        %2 = stablehlo.tanh %1 : tensor<4xf32>

    Output::

        %1 = stablehlo.tanh %0 : tensor<4xf32>
    """

    name = "alpa-strip-sharding"
    keep_mesh: bool = field(default=False, metadata={"help": "keep the device mesh (sdy.mesh, "
                                                             "alpa.mesh, mhlo.num_partitions)"})

    def apply(self, module: ir.Operation, diagnostics: Diagnostics) -> None:
        for func in funcs(module):
            for which in ("arg_attrs", "res_attrs"):
                dicts = get_value_attrs(func, which)
                for attrs in dicts:
                    attrs.pop(MHLO_SHARDING, None)
                    attrs.pop(SDY_SHARDING, None)
                set_value_attrs(func, which, dicts)
        for op in list(sharded_ops(module)):
            if op.name in SDY_CONSTRAINT_OPS or is_sharding_custom_call(op):
                replace_with_operand(op)
                continue
            for name in (MHLO_SHARDING, SDY_SHARDING):
                if name in op.attributes:
                    del op.attributes[name]
        if self.keep_mesh:
            return
        for op in list(module.regions[0].blocks[0].operations):
            if op.operation.name == "sdy.mesh":
                op.operation.erase()
        for name in (MESH_ATTR, NUM_PARTITIONS):
            if name in module.attributes:
                del module.attributes[name]
