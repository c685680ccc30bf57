"""``alpa-import-sharding``: user-pinned shardings (sdy or mhlo) into one canonical form."""

from __future__ import annotations

from dataclasses import dataclass

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import sdy

from ...dialect.annotations import (
    MESH_ATTR,
    MHLO_SHARDING,
    SDY_CONSTRAINT_OPS,
    SDY_SHARDING,
    SHARDING_CUSTOM_CALL,
    MeshOptions,
    funcs,
    get_value_attrs,
    module_mesh,
    num_partitions,
    rank_of,
    replace_with_operand,
    sdy_mesh_name,
    sdy_meshes,
    set_module_mesh,
    set_value_attrs,
    sharded_ops,
    sharding_text,
    string_attr,
    value_types,
)
from ...dialect.host_callbacks import DEFAULT_DEVICE, callback_sharding, is_host_callback, maximal_device
from ...dialect.mesh import DeviceMesh
from ...dialect.mesh_attr import mesh_from_attr
from ...dialect.pass_registry import Diagnostics, Pass, register
from ...dialect.sdy import mesh_from_sdy, spec_from_sdy
from ...dialect.sharding import (
    Maximal,
    format_mhlo_sharding,
    parse_mhlo_sharding,
    spec_from_sharding,
)

# Ops that put values under manual (per-device) control: their regions have no
# global shape for the auto-sharder to plan.
MANUAL_OPS = ("sdy.manual_computation",)
MANUAL_CUSTOM_CALLS = ("SPMDFullToShardShape", "SPMDShardToFullShape")


class ShardingImportError(ValueError):
    """A sharding that cannot be imported; the message says which and why."""


@register
@dataclass(frozen=True)
class ImportShardingPass(MeshOptions, Pass):
    """Turn user-pinned shardings, given as ``sdy`` or ``mhlo``, into one canonical form.

    Runs first, on a module as ``jax.jit(f).lower(...)`` emits it (Shardy or GSPMD
    flavour) or as a user wrote it. Afterwards:

    - the device mesh is on the module as ``alpa.mesh`` (shape, axis names, device
      ids, alpha, beta) with ``mhlo.num_partitions``; ``sdy.mesh`` symbols are gone.
      The mesh is the ``mesh-shape`` option, else the module's single ``sdy.mesh``,
      else ``alpa.mesh``, else a 1-D mesh of ``mhlo.num_partitions`` devices;
    - every pinned argument, result and op result carries ``mhlo.sharding`` in
      canonical form (iota tile assignments, tuples for several results);
    - a host callback (``jax.debug.print``, ``io_callback``, ...) carries the device it runs
      on as ``{maximal device=N}`` (JAX's device 0 when it has none), a tuple of them when
      it has several results;
    - ``sdy.sharding_constraint`` and ``sdy.reshard`` become
      ``stablehlo.custom_call @Sharding`` (what JAX's GSPMD path emits); fully open
      shardings (``{?}`` on every dimension) pin nothing and are dropped.

    Input::

        sdy.mesh @mesh = <["x"=2, "y"=4]>
        func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>})

    Output::

        module attributes {alpa.mesh = {...}, mhlo.num_partitions = 8 : i32} {
          func.func @main(%arg0: tensor<8x16xf32>
              {mhlo.sharding = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"})

    Manual regions (``sdy.manual_computation``, shard_map's custom calls), several
    distinct meshes, an ``alpa.mesh`` that disagrees with the ``sdy.mesh`` (without
    ``mesh-shape`` to choose), a value whose ``sdy.sharding`` and ``mhlo.sharding``
    place it differently, sub-axes and shardings the mesh cannot express are errors.
    """

    name = "alpa-import-sharding"

    def apply(self, module: ir.Operation, diagnostics: Diagnostics) -> None:
        meshes = sdy_meshes(module)
        try:
            mesh = self._mesh(module, meshes)
        except ValueError as error:
            diagnostics.error(module, str(error))
            return
        # A mesh guessed from mhlo.num_partitions is 1-D; say how to name a real one.
        hint = "" if mesh is None or mesh.ndim > 1 or self.mesh_shape or MESH_ATTR in module.attributes \
            or meshes else "; name the device mesh with option 'mesh-shape' (e.g. mesh-shape=2,4)"
        for func in funcs(module):
            for which, label in (("arg_attrs", "argument"), ("res_attrs", "result")):
                types = value_types(func, which)
                dicts = get_value_attrs(func, which)
                for index, attrs in enumerate(dicts):
                    try:
                        text = _value_sharding(attrs, types[index], mesh, meshes)
                    except ValueError as error:
                        diagnostics.error(func, f"{label} #{index}: {error}{hint}")
                        continue
                    attrs.pop(SDY_SHARDING, None)
                    attrs.pop(MHLO_SHARDING, None)
                    if text is not None:
                        attrs[MHLO_SHARDING] = string_attr(text)
                set_value_attrs(func, which, dicts)
        for op in list(sharded_ops(module)):
            try:
                _import_op(op, mesh, meshes)
            except ValueError as error:
                diagnostics.error(op, f"{error}{hint}")
        if diagnostics.failed:
            return
        for op in list(module.regions[0].blocks[0].operations):
            if op.operation.name == "sdy.mesh":
                op.operation.erase()
        if mesh is not None:
            set_module_mesh(module, mesh)

    def _mesh(self, module: ir.Operation, meshes: dict[str, ir.Attribute]) -> DeviceMesh | None:
        named = {n: mesh_from_sdy(a) for n, a in meshes.items() if list(sdy.MeshAttr(a).axes)}
        option = self.option_mesh()
        if len({(m.shape, m.device_ids) for m in named.values()}) > 1:
            raise ShardingImportError(
                f"the module uses several device meshes ({', '.join('@' + n for n in named)}); "
                "alpa-import-sharding expects one mesh per module"
            )
        if named:
            found = next(iter(named.values()))
            if option is not None and option.size != found.size:
                raise ShardingImportError(
                    f"option 'mesh-shape' {list(option.shape)} has {option.size} devices but the "
                    f"module's sdy mesh has {found.size}"
                )
            if option is None and MESH_ATTR in module.attributes:
                declared = mesh_from_attr(module.attributes[MESH_ATTR])
                if (declared.shape, declared.device_ids) != (found.shape, found.device_ids):
                    raise ShardingImportError(
                        f"the module's alpa.mesh (shape {list(declared.shape)}, devices {list(declared.device_ids)}) "
                        f"and its sdy.mesh (shape {list(found.shape)}, devices {list(found.device_ids)}) disagree; "
                        "keep one of them, or choose with option 'mesh-shape'")
            mesh = option or found
        else:
            mesh = module_mesh(module, self)
        count = num_partitions(module)
        if mesh is not None and count is not None and count != mesh.size and option is None:
            raise ShardingImportError(f"mhlo.num_partitions = {count} but the module's mesh has {mesh.size} devices")
        return mesh


def _canonical(text: str, mesh: DeviceMesh | None, value_type: ir.Type) -> str:
    """The canonical ``mhlo.sharding`` of ``text`` for one value of ``value_type``."""
    rank = rank_of(value_type)
    parsed = parse_mhlo_sharding(text)
    if isinstance(parsed, tuple):
        raise ShardingImportError(f"sharding '{text}' is a tuple but the value is a single tensor")
    if rank is None or isinstance(parsed, Maximal):
        return format_mhlo_sharding(parsed)
    if mesh is None:
        raise ShardingImportError(f"sharding '{text}' needs a device mesh: pass mesh-shape or set "
                           "mhlo.num_partitions on the module")
    return spec_from_sharding(parsed, mesh, rank, text).to_mhlo(mesh)


def _from_sdy(attr: ir.Attribute, value_type: ir.Type, mesh: DeviceMesh | None,
              meshes: dict[str, ir.Attribute]) -> str | None:
    name = sdy_mesh_name(attr)
    if name not in meshes:
        raise ShardingImportError(f"sharding {attr} refers to unknown mesh @{name}")
    source = sdy.MeshAttr(meshes[name])
    if not list(source.axes):
        # No axes and no devices is Shardy's empty mesh, on which JAX puts scalar
        # arguments: nothing is split. No axes and one device is a maximal mesh (Shardy's
        # verifier rejects more devices).
        devices = list(source.device_ids)
        return f"{{maximal device={devices[0]}}}" if devices else "{replicated}"
    rank = rank_of(value_type)
    if rank is None:
        raise ShardingImportError(f"sdy sharding {attr} on a non-tensor value")
    source_mesh = mesh_from_sdy(meshes[name])
    spec = spec_from_sdy(attr, source_mesh, rank)
    if spec is None:
        return None
    return _canonical(spec.to_mhlo(source_mesh), mesh, value_type)


def _value_sharding(attrs: dict[str, ir.Attribute], value_type: ir.Type, mesh: DeviceMesh | None,
                    meshes: dict[str, ir.Attribute]) -> str | None:
    shardy = _from_sdy(attrs[SDY_SHARDING], value_type, mesh, meshes) if SDY_SHARDING in attrs else None
    gspmd = _canonical(sharding_text(attrs[MHLO_SHARDING]), mesh, value_type) if MHLO_SHARDING in attrs else None
    return _agreed(shardy, gspmd, attrs.get(SDY_SHARDING), attrs.get(MHLO_SHARDING))


def _agreed(shardy: str | None, gspmd: str | None, sdy_attr: ir.Attribute | None,
            mhlo_attr: ir.Attribute | None) -> str | None:
    """The one sharding a value's ``sdy.sharding`` (canonical ``shardy``; ``None``: open or
    absent) and ``mhlo.sharding`` (canonical ``gspmd``) give it; they must not disagree."""
    if shardy is not None and gspmd is not None and shardy != gspmd:
        raise ShardingImportError(f"sdy.sharding {sdy_attr} and mhlo.sharding '{sharding_text(mhlo_attr)}' place the "
                                  f"value differently ('{shardy}' against '{gspmd}'); keep one of them")
    return shardy if shardy is not None else gspmd


def _import_op(op: ir.Operation, mesh: DeviceMesh | None, meshes: dict[str, ir.Attribute]) -> None:
    if op.name in MANUAL_OPS or (
        op.name == "stablehlo.custom_call"
        and ir.StringAttr(op.attributes["call_target_name"]).value in MANUAL_CUSTOM_CALLS
    ):
        raise ShardingImportError(f"'{op.name}' puts values under manual sharding (shard_map); "
                           "alpa cannot plan manual regions")
    if is_host_callback(op):
        _import_callback(op, meshes)
        return
    if op.name in SDY_CONSTRAINT_OPS:
        text = _from_sdy(op.attributes["sharding"], op.results[0].type, mesh, meshes)
        if text is None:
            replace_with_operand(op)
            return
        with ir.InsertionPoint(op), op.location:
            call = ir.Operation.create(
                "stablehlo.custom_call", results=[op.results[0].type], operands=[op.operands[0]],
                attributes={"call_target_name": string_attr(SHARDING_CUSTOM_CALL),
                            "backend_config": string_attr(""), MHLO_SHARDING: string_attr(text)})
        op.results[0].replace_all_uses_with(call.results[0])
        op.erase()
        return
    if op.name.startswith("sdy.") and op.name != "sdy.return":
        raise ShardingImportError(f"'{op.name}' is not supported by alpa-import-sharding")
    results = [r.type for r in op.results]
    sdy_attr = op.attributes[SDY_SHARDING] if SDY_SHARDING in op.attributes else None
    mhlo_attr = op.attributes[MHLO_SHARDING] if MHLO_SHARDING in op.attributes else None
    shardy = gspmd = None
    if sdy_attr is not None:
        per_value = list(sdy.TensorShardingPerValueAttr(sdy_attr).shardings)
        texts = [_from_sdy(s, t, mesh, meshes) for s, t in zip(per_value, results)]
        if any(t is None for t in texts) and not all(t is None for t in texts):
            raise ShardingImportError("some results have open shardings and others pinned ones; "
                               "pin all results of the op or none")
        if texts and texts[0] is not None:
            shardy = texts[0] if len(texts) == 1 else "{" + ", ".join(texts) + "}"
    if mhlo_attr is not None:
        gspmd = _canonical_op(sharding_text(mhlo_attr), results, mesh)
    text = _agreed(shardy, gspmd, sdy_attr, mhlo_attr)
    if sdy_attr is not None:
        del op.attributes[SDY_SHARDING]
    if text is not None:
        op.attributes[MHLO_SHARDING] = string_attr(text)


def _canonical_op(text: str, results: list[ir.Type], mesh: DeviceMesh | None) -> str:
    """The canonical ``mhlo.sharding`` of an op with ``results`` (a tuple for several)."""
    parsed = parse_mhlo_sharding(text)
    if isinstance(parsed, tuple):
        if len(parsed) != len(results):
            raise ShardingImportError(f"tuple sharding '{text}' has {len(parsed)} elements but the op "
                                      f"has {len(results)} results")
        return "{" + ", ".join(_canonical(format_mhlo_sharding(p), mesh, t) for p, t in zip(parsed, results)) + "}"
    if len(results) != 1:
        raise ShardingImportError(f"sharding '{text}' is not a tuple but the op has {len(results)} results")
    return _canonical(text, mesh, results[0])


def _import_callback(op: ir.Operation, meshes: dict[str, ir.Attribute]) -> None:
    """A host callback runs once, on one device (as under ``jax.jit``): keep the device its
    maximal sharding names (sdy or mhlo) in canonical form, or place it on JAX's."""
    device = DEFAULT_DEVICE
    if SDY_SHARDING in op.attributes:
        devices = set()
        for attr in sdy.TensorShardingPerValueAttr(op.attributes[SDY_SHARDING]).shardings:
            name = sdy_mesh_name(attr)
            source = sdy.MeshAttr(meshes[name]) if name in meshes else None
            if source is None or list(source.axes) or len(list(source.device_ids)) != 1:
                raise ShardingImportError(f"a host callback runs once, on one device, but its sharding {attr} is "
                                          "on a device mesh; give it a maximal mesh (JAX's @maximal_mesh_0)")
            devices.add(list(source.device_ids)[0])
        if len(devices) > 1:
            raise ShardingImportError(f"a host callback runs on one device, but its results are placed on devices "
                                      f"{sorted(devices)}")
        device = devices.pop() if devices else device
        del op.attributes[SDY_SHARDING]
    elif MHLO_SHARDING in op.attributes:
        device = maximal_device(sharding_text(op.attributes[MHLO_SHARDING]))
    op.attributes[MHLO_SHARDING] = string_attr(callback_sharding(device, len(op.results)))
