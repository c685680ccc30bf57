"""Stage functions as modules of their own: what XLA's SPMD partitioner compiles per mesh.

After ``alpa-stage-construction`` every stage part is a private ``func.func`` with
``alpa.mesh`` (its logical mesh and device ids) and ``mhlo.sharding`` annotations
written against ``DeviceMesh(mesh.shape)``, the convention of :mod:`.spmd`. A part
becomes the public ``@main`` of a fresh module, which :func:`.spmd.compile_module`
partitions for its mesh (the paper's per-stage SPMD executable, Sec. 5).
"""

from __future__ import annotations

from collections.abc import Collection

from jax._src.lib.mlir import ir

from ..dialect.annotations import (
    MESH_ATTR,
    funcs,
    get_value_attrs,
    mesh_from_attr,
    set_module_mesh,
    set_value_attrs,
    string_attr,
)
from ..dialect.context import make_context, walk
from ..dialect.mesh import DeviceMesh
from ..dialect.names import LAYER_ATTR, PHASE_ATTR, STAGE_ATTR
from .spmd import BUFFER_DONOR, LoweringError


def stage_mesh(func: ir.Operation) -> DeviceMesh:
    """The mesh a stage function runs on (its ``alpa.mesh``)."""
    name = ir.StringAttr(func.attributes["sym_name"]).value
    if MESH_ATTR not in func.attributes:
        raise LoweringError(f"stage function @{name} has no {MESH_ATTR}; run alpa-stage-construction first")
    return mesh_from_attr(func.attributes[MESH_ATTR])


def stage_module(module: ir.Module, callee: str, donated: Collection[int] = ()) -> tuple[str, DeviceMesh]:
    """The text of a module whose ``@main`` is the stage function ``@callee``, and its mesh;
    the arguments numbered in ``donated`` become ``jax.buffer_donor``: XLA may write an
    output into their buffers, which the caller gives up. The passes' annotations (mesh,
    stage, layers, phases) are dropped: equal stages on other devices are then equal
    modules, compiled once (``spmd.SharedCompiles``)."""
    found = [f for f in funcs(module.operation) if ir.StringAttr(f.attributes["sym_name"]).value == callee]
    if not found:
        raise LoweringError(f"the module has no function @{callee}")
    mesh = stage_mesh(found[0])
    with make_context():
        single = ir.Module.parse(str(found[0]))  # a func alone parses as a module holding it
        func = next(iter(funcs(single.operation)))
        func.attributes["sym_name"] = string_attr("main")
        func.attributes["sym_visibility"] = string_attr("public")
        for op in walk(func):
            for name in (MESH_ATTR, STAGE_ATTR, LAYER_ATTR, PHASE_ATTR):
                if name in op.attributes:
                    del op.attributes[name]
        if donated:
            attrs = get_value_attrs(func, "arg_attrs")
            for number in donated:
                attrs[number] = {**attrs[number], BUFFER_DONOR: ir.BoolAttr.get(True)}
            set_value_attrs(func, "arg_attrs", attrs)
        set_module_mesh(single.operation, DeviceMesh(mesh.shape, axis_names=mesh.axis_names))
        return single.operation.get_asm(enable_debug_info=True), mesh
