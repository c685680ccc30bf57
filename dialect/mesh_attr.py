"""The ``alpa.mesh`` attribute: a :class:`DeviceMesh` in IR.

A dictionary with ``shape``, ``axes``, ``device_ids``, ``alpha`` and ``beta``; it sits
on a module (the mesh its shardings refer to), on a stage function (the submesh it runs
on) and on an ``alpa.assemble`` (the destination of a cross-mesh transfer).
"""

from __future__ import annotations

from jax._src.lib.mlir import ir

from .mesh import DeviceMesh

MESH_ATTR = "alpa.mesh"


def mesh_to_attr(mesh: DeviceMesh) -> ir.Attribute:
    return ir.DictAttr.get({
        "shape": ir.DenseI64ArrayAttr.get(list(mesh.shape)),
        "axes": ir.ArrayAttr.get([ir.StringAttr.get(n) for n in mesh.axis_names]),
        "device_ids": ir.DenseI64ArrayAttr.get(list(mesh.device_ids)),
        "alpha": ir.DenseF64ArrayAttr.get(list(mesh.alpha)),
        "beta": ir.DenseF64ArrayAttr.get(list(mesh.beta)),
    })


def mesh_from_attr(attr: ir.Attribute) -> DeviceMesh:
    """The mesh an ``alpa.mesh`` attribute describes; ``ValueError`` naming what is wrong."""
    entries = {n.name: n.attr for n in ir.DictAttr(attr)}
    try:
        return DeviceMesh(
            tuple(ir.DenseI64ArrayAttr(entries["shape"])),
            tuple(ir.DenseI64ArrayAttr(entries["device_ids"])) if "device_ids" in entries else (),
            tuple(ir.StringAttr(a).value for a in ir.ArrayAttr(entries["axes"])) if "axes" in entries else (),
            tuple(ir.DenseF64ArrayAttr(entries["alpha"])) if "alpha" in entries else (),
            tuple(ir.DenseF64ArrayAttr(entries["beta"])) if "beta" in entries else (),
        )
    except KeyError:
        raise ValueError(f"{MESH_ATTR} needs a 'shape' entry, got {attr}") from None
    except (TypeError, ValueError) as error:
        raise ValueError(f"malformed {MESH_ATTR} {attr}: {error}") from None
