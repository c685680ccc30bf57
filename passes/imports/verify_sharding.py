"""``alpa-verify-sharding``: every sharding annotation parses and fits its value and mesh."""

from __future__ import annotations

from dataclasses import dataclass

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import sdy

from ...dialect.annotations import (
    MHLO_SHARDING,
    SDY_SHARDING,
    MeshOptions,
    funcs,
    get_value_attrs,
    module_mesh,
    rank_of,
    sdy_mesh_name,
    sdy_meshes,
    sharded_ops,
    sharding_text,
    value_types,
)
from ...dialect.mesh import DeviceMesh
from ...dialect.pass_registry import Diagnostics, Pass, register
from ...dialect.sdy import mesh_from_sdy, spec_from_sdy
from ...dialect.sharding import Maximal, Replicated, ShardingError, parse_mhlo_sharding, spec_from_sharding
from ...dialect.tile_map import uneven_dims


@register
@dataclass(frozen=True)
class VerifyShardingPass(MeshOptions, Pass):
    """Check that every sharding annotation parses and fits its value and mesh.

    Runs anywhere; typically right after ``alpa-import-sharding`` and after any pass
    that writes shardings. Checks ``mhlo.sharding`` and ``sdy.sharding`` on function
    arguments, function results and op results (``stablehlo.custom_call @Sharding``
    included):

    - the string parses (``{manual}`` and ``{unknown}`` are rejected);
    - an op with several results has a tuple sharding with one element per result, or one
      maximal sharding that places the op on one device (a host callback);
    - a tiled sharding has as many tiled dimensions as its value has rank;
    - it uses exactly the mesh's devices and is expressible on the mesh (the mesh of
      the ``mesh-shape`` option, else the module's ``alpa.mesh``, else a 1-D mesh of
      ``mhlo.num_partitions`` devices); a maximal device exists on the mesh.

    A nested ``builtin.module`` is an error at it: the passes read the top-level
    module's functions only, so nothing inside one would be verified or planned.

    Every problem is an error at its op (or function argument); a dimension that does
    not divide by its number of shards is a warning (XLA pads the last shards, which
    wastes memory and compute).

    Input::

        %0 = stablehlo.add %a, %a {mhlo.sharding = "{devices=[2,2]<=[4]}"} : tensor<8xf32>

    Output: the IR unchanged, or an error at the op::

        %0 = stablehlo.add %a, %a {mhlo.sharding = "{devices=[2,2]<=[4]}"} : tensor<8xf32>
        // error: result #0: sharding '{devices=[2,2]<=[4]}' has 2 tiled dimensions
        //        but the value has rank 1
    """

    name = "alpa-verify-sharding"

    def apply(self, module: ir.Operation, diagnostics: Diagnostics) -> None:
        try:
            mesh = module_mesh(module, self)
        except ValueError as error:
            diagnostics.error(module, str(error))
            return
        for op in module.regions[0].blocks[0].operations:
            if op.operation.name == "builtin.module":
                diagnostics.error(op, "a nested builtin.module: alpa's passes read the top-level module's functions "
                                      "only, so its shardings would be neither verified nor planned; give its "
                                      "functions to alpa as a module of their own")
        meshes = sdy_meshes(module)
        for func in funcs(module):
            for which, label in (("arg_attrs", "argument"), ("res_attrs", "result")):
                types = value_types(func, which)
                for index, attrs in enumerate(get_value_attrs(func, which)):
                    location = (func.regions[0].blocks[0].arguments[index].location
                                if which == "arg_attrs" and func.regions[0].blocks else func.location)
                    for severity, message in _check_value(attrs, types[index], mesh, meshes):
                        _report(diagnostics, severity, location, f"{label} #{index}: {message}")
        for op in sharded_ops(module):
            for severity, message in _check_op(op, mesh, meshes):
                _report(diagnostics, severity, op, message)


Finding = tuple[str, str]  # (severity, message)


def _report(diagnostics: Diagnostics, severity: str, where, message: str) -> None:
    if severity == "error":
        diagnostics.error(where, message)
    else:
        diagnostics.warning(where, message)


def _check_value(attrs: dict[str, ir.Attribute], value_type: ir.Type, mesh: DeviceMesh | None,
                 meshes: dict[str, ir.Attribute]) -> list[Finding]:
    if MHLO_SHARDING in attrs:
        try:
            return _check_mhlo(sharding_text(attrs[MHLO_SHARDING]), value_type, mesh)
        except ShardingError as error:
            return [("error", str(error))]
    if SDY_SHARDING in attrs:
        return _check_sdy(attrs[SDY_SHARDING], value_type, meshes)
    return []


def _check_op(op: ir.Operation, mesh: DeviceMesh | None, meshes: dict[str, ir.Attribute]) -> list[Finding]:
    results = [r.type for r in op.results]
    if MHLO_SHARDING in op.attributes:
        try:
            text = sharding_text(op.attributes[MHLO_SHARDING])
            parsed = parse_mhlo_sharding(text)
        except ShardingError as error:
            return [("error", str(error))]
        if isinstance(parsed, Maximal) and len(results) != 1:  # the op itself on one device (a host callback)
            return _check_device(parsed, text, mesh)
        if not isinstance(parsed, tuple):
            if len(results) != 1:
                return [("error", f"sharding '{text}' is not a tuple but the op has {len(results)} results")]
            parsed = (parsed,)
        elif len(parsed) != len(results):
            return [("error", f"tuple sharding '{text}' has {len(parsed)} elements but the op has "
                              f"{len(results)} results")]
        return [(severity, f"result #{i}: {message}") for i, (element, t) in enumerate(zip(parsed, results))
                for severity, message in _check_parsed(element, text, t, mesh)]
    if SDY_SHARDING in op.attributes:
        per_value = sdy.TensorShardingPerValueAttr(op.attributes[SDY_SHARDING]).shardings
        if len(per_value) != len(results):
            return [("error", f"sdy.sharding has {len(per_value)} shardings but the op has {len(results)} results")]
        return [(severity, f"result #{i}: {message}") for i, (s, t) in enumerate(zip(per_value, results))
                for severity, message in _check_sdy(s, t, meshes)]
    return []


def _check_mhlo(text: str, value_type: ir.Type, mesh: DeviceMesh | None) -> list[Finding]:
    try:
        parsed = parse_mhlo_sharding(text)
    except ShardingError as error:
        return [("error", str(error))]
    if isinstance(parsed, tuple):
        return [("error", f"sharding '{text}' is a tuple but the value is a single tensor")]
    return _check_parsed(parsed, text, value_type, mesh)


def _check_parsed(parsed, text: str, value_type: ir.Type, mesh: DeviceMesh | None) -> list[Finding]:
    rank = rank_of(value_type)
    if rank is None:
        return []  # tokens and other non-tensor values carry whatever XLA accepts
    if isinstance(parsed, Replicated):
        return []
    if isinstance(parsed, Maximal):
        return _check_device(parsed, text, mesh)
    if mesh is None:
        return [("error", f"sharding '{text}' needs a device mesh: set mhlo.num_partitions or alpa.mesh on "
                          "the module, or pass mesh-shape")]
    try:
        spec = spec_from_sharding(parsed, mesh, rank, text)
    except ShardingError as error:
        return [("error", str(error))]
    shape = ir.RankedTensorType(value_type).shape
    uneven = uneven_dims(spec, mesh, tuple(shape))
    if uneven:
        return [("warning", f"sharding '{text}' splits dimension {uneven[0]} of size {shape[uneven[0]]} into "
                            f"{spec.num_shards(uneven[0], mesh)} uneven shards; XLA pads the last ones")]
    return []


def _check_device(parsed: Maximal, text: str, mesh: DeviceMesh | None) -> list[Finding]:
    if mesh is not None and parsed.device not in mesh.device_ids:
        return [("error", f"sharding '{text}' names device {parsed.device}, which is not on mesh {list(mesh.shape)}")]
    return []


def _check_sdy(attr: ir.Attribute, value_type: ir.Type, meshes: dict[str, ir.Attribute]) -> list[Finding]:
    rank = rank_of(value_type)
    if rank is None:
        return []
    try:
        name = sdy_mesh_name(attr)
        if name not in meshes:
            return [("error", f"sharding {attr} refers to unknown mesh @{name}")]
        if not list(sdy.MeshAttr(meshes[name]).axes):
            return []  # a maximal mesh: the value lives on one device
        spec_from_sdy(attr, mesh_from_sdy(meshes[name]), rank)
    except ValueError as error:
        return [("error", str(error))]
    return []
