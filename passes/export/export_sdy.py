"""``alpa-export-sdy``: canonical ``mhlo.sharding`` annotations into Shardy's ``sdy`` form."""

from __future__ import annotations

from dataclasses import dataclass, field

from jax._src.lib.mlir import ir

from ...dialect.annotations import MeshOptions, module_mesh, sdy_meshes
from ...dialect.pass_registry import Diagnostics, Pass, register
from ...dialect.sdy import export_shardings


@register
@dataclass(frozen=True)
class ExportSdyPass(MeshOptions, Pass):
    """Rewrite ``mhlo.sharding`` annotations as Shardy (``sdy``) shardings.

    Runs last, on a module whose shardings are canonical (after
    ``alpa-import-sharding`` or ``alpa-auto-sharding``), to hand the plan to Shardy
    and JAX's default partitioner. The mesh is the ``mesh-shape`` option, else the
    module's ``alpa.mesh``, else a 1-D mesh of ``mhlo.num_partitions`` devices; it
    becomes ``sdy.mesh @<mesh-name>`` (and ``@maximal_mesh_N`` for values placed on
    one device). ``stablehlo.custom_call @Sharding`` becomes
    ``sdy.sharding_constraint``; ``alpa.mesh`` is removed. With ``constrain-results``
    each op's sharding is also written as an ``sdy.sharding_constraint`` on its results,
    which is what XLA keeps when it compiles the module with Shardy (it drops
    ``sdy.sharding`` on ops other than custom calls): ``compile_module`` exports so.

    Input::

        module attributes {alpa.mesh = {axes = ["x", "y"], shape = array<i64: 2, 4>, ...}} {
          func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"})

    Output::

        sdy.mesh @mesh = <["x"=2, "y"=4]>
        func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    """

    name = "alpa-export-sdy"
    mesh_name: str = field(default="mesh", metadata={"help": "symbol name of the emitted sdy.mesh"})
    constrain_results: bool = field(default=False, metadata={
        "help": "also pin each op's results with sdy.sharding_constraint (what XLA's Shardy import keeps)"})

    def apply(self, module: ir.Operation, diagnostics: Diagnostics) -> None:
        try:
            mesh = module_mesh(module, self)
        except ValueError as error:
            diagnostics.error(module, str(error))
            return
        taken = set(sdy_meshes(module))
        if self.mesh_name in taken:
            diagnostics.error(module, f"the module already has sdy.mesh @{self.mesh_name}; "
                                      "choose another with option 'mesh-name'")
            return
        for op, message in export_shardings(module, mesh, self.mesh_name, self.constrain_results):
            diagnostics.error(op, message)
