"""``alpa-export-sdy``: canonical ``mhlo.sharding`` annotations into Shardy's ``sdy`` form."""

from __future__ import annotations

from dataclasses import dataclass, field

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import sdy

from ...dialect.annotations import (
    MESH_ATTR,
    MHLO_SHARDING,
    SDY_SHARDING,
    MeshOptions,
    funcs,
    get_value_attrs,
    is_sharding_custom_call,
    module_mesh,
    rank_of,
    sdy_meshes,
    set_value_attrs,
    sharded_ops,
    value_types,
)
from ...dialect.mesh import DeviceMesh
from ...dialect.pass_registry import Diagnostics, Pass, register
from ...dialect.sdy import mesh_to_sdy, spec_to_sdy
from ...dialect.sharding import Maximal, ShardingError, parse_mhlo_sharding, spec_from_sharding


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
    ``sdy.sharding_constraint``; ``alpa.mesh`` is removed.

    Input::

        module attributes {alpa.mesh = {axes = ["x", "y"], shape = array<i64: 2, 4>, ...}} {
          func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"})

    Output::

        sdy.mesh @mesh = <["x"=2, "y"=4]>
        func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    """

    name = "alpa-export-sdy"
    mesh_name: str = field(default="mesh", metadata={"help": "symbol name of the emitted sdy.mesh"})

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
        export = _Exporter(mesh, self.mesh_name)
        for func in funcs(module):
            for which, label in (("arg_attrs", "argument"), ("res_attrs", "result")):
                types = value_types(func, which)
                dicts = get_value_attrs(func, which)
                for index, attrs in enumerate(dicts):
                    if MHLO_SHARDING not in attrs:
                        continue
                    try:
                        attrs[SDY_SHARDING] = export.sharding(attrs.pop(MHLO_SHARDING), types[index])
                    except ValueError as error:
                        diagnostics.error(func, f"{label} #{index}: {error}")
                set_value_attrs(func, which, dicts)
        for op in list(sharded_ops(module)):
            if MHLO_SHARDING not in op.attributes:
                continue
            try:
                export.op(op)
            except ValueError as error:
                diagnostics.error(op, str(error))
        if diagnostics.failed:
            return
        export.insert_meshes(module)
        if MESH_ATTR in module.attributes:
            del module.attributes[MESH_ATTR]


class _Exporter:
    """Converts shardings on one mesh and remembers which ``sdy.mesh`` symbols they need."""

    def __init__(self, mesh: DeviceMesh | None, mesh_name: str):
        self.mesh = mesh
        self.mesh_name = mesh_name
        self.used_mesh = False
        self.maximal_devices: set[int] = set()

    def sharding(self, attr: ir.Attribute, value_type: ir.Type) -> ir.Attribute:
        text = ir.StringAttr(attr).value
        parsed = parse_mhlo_sharding(text)
        if isinstance(parsed, tuple):
            raise ShardingError(f"sharding '{text}' is a tuple but the value is a single tensor")
        return self._one(parsed, text, value_type)

    def _one(self, parsed, text: str, value_type: ir.Type | None) -> ir.Attribute:
        if isinstance(parsed, Maximal):  # of any value (a token too), or of an op with no results
            self.maximal_devices.add(parsed.device)
            # Shardy's maximal shardings have no dimension entries.
            return sdy.TensorShardingAttr.get(f"maximal_mesh_{parsed.device}", [])
        rank = rank_of(value_type)
        if rank is None:
            raise ShardingError(f"sharding '{text}' is on a non-tensor value, which sdy cannot annotate")
        if self.mesh is None:
            raise ShardingError(f"sharding '{text}' needs a device mesh: pass mesh-shape or set "
                                "mhlo.num_partitions on the module")
        self.used_mesh = True
        return spec_to_sdy(spec_from_sharding(parsed, self.mesh, rank, text), self.mesh, self.mesh_name)

    def op(self, op: ir.Operation) -> None:
        text = ir.StringAttr(op.attributes[MHLO_SHARDING]).value
        parsed = parse_mhlo_sharding(text)
        results = [r.type for r in op.results]
        elements = parsed if isinstance(parsed, tuple) else (parsed,) * len(results)
        if len(elements) != len(results):
            raise ShardingError(f"sharding '{text}' has {len(elements)} elements but the op has "
                                f"{len(results)} results")
        shardings = [self._one(p, text, t) for p, t in zip(elements, results)]
        if not results and isinstance(parsed, Maximal):  # a host callback with no results: Shardy places
            shardings = [self._one(parsed, text, None)]  # the op by one sharding, as JAX writes it
        if is_sharding_custom_call(op):
            with ir.InsertionPoint(op), op.location:
                constraint = ir.Operation.create(
                    "sdy.sharding_constraint", results=results, operands=[op.operands[0]],
                    attributes={"sharding": shardings[0]})
            op.results[0].replace_all_uses_with(constraint.results[0])
            op.erase()
            return
        del op.attributes[MHLO_SHARDING]
        op.attributes[SDY_SHARDING] = sdy.TensorShardingPerValueAttr.get(shardings)

    def insert_meshes(self, module: ir.Operation) -> None:
        meshes = []
        if self.used_mesh:
            meshes.append((self.mesh_name, mesh_to_sdy(self.mesh)))
        for device in sorted(self.maximal_devices):
            meshes.append((f"maximal_mesh_{device}", sdy.MeshAttr.get([], [device])))
        body = module.regions[0].blocks[0]
        with ir.InsertionPoint.at_block_begin(body), module.location:
            for name, attr in meshes:
                ir.Operation.create("sdy.mesh", attributes={
                    "sym_name": ir.StringAttr.get(name), "mesh": attr})
