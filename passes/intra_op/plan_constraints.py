"""What the options and the user fix of a plan before the ILP: pinned shardings, forced
data parallelism and ZeRO stages, split batches, and host callbacks on the mesh.

Each constraint forbids algorithms (an infinite cost) on the cost graph's nodes.
"""

from __future__ import annotations

import numpy as np
from jax._src.lib.mlir import ir

from ...dialect.annotations import MHLO_SHARDING, get_value_attrs, result_shardings
from ...dialect.host_callbacks import callback_device, is_host_callback
from ...dialect.mesh import DeviceMesh
from ...dialect.pass_registry import Diagnostics
from ...dialect.sharding import ShardingSpec
from .cost_graph import Graph, Node
from .strategy import Strategy


def pin_user_shardings(graph: Graph, func: ir.Operation, mesh: DeviceMesh, keep: str,
                        diagnostics: Diagnostics) -> bool:
    """User shardings (``keep``: option ``keep-user-shardings``) become the only allowed
    choice; False after an error."""
    if keep == "none":
        return True
    attrs = {"argument": get_value_attrs(func, "arg_attrs"), "result": get_value_attrs(func, "res_attrs")}
    ok = True
    for node in graph.nodes:
        if node.kind in attrs:
            text = attrs[node.kind][node.index].get(MHLO_SHARDING)
            texts = [ir.StringAttr(text).value] if text is not None else None
            where = func
        elif (keep == "all" and MHLO_SHARDING in node.op.attributes
              and not is_host_callback(node.op)):  # a callback's sharding is its device, not a layout
            texts = result_shardings(node.op)
            if node.kind == "carry":
                texts = texts[node.index:node.index + 1]
            where = node.op
        else:
            continue
        if texts is None:
            continue
        try:
            specs = [ShardingSpec.from_mhlo(t, mesh, len(s)) if s is not None else None
                     for t, s in zip(texts, node.shapes)]
        except ValueError as error:
            diagnostics.error(where, f"{node.label}: pinned sharding: {error}")
            ok = False
            continue
        restrict(node, lambda s, specs=specs: list(s.results) == specs, pinned=specs)
    return ok

def force_layouts(graph: Graph, mesh: DeviceMesh, *, batch_args: tuple[int, ...], force_batch_dim_to_mesh_dim: int,
                  force_data_parallel: bool, zero_stage: int, allow_replicated_parameters: bool) -> None:
    """Batch arguments split on the batch dimension, other arguments split unless
    allow-replicated-parameters; force-batch-dim-to-mesh-dim and force-data-parallel
    (with its ZeRO stages)."""
    axes = tuple(a for a in range(mesh.ndim) if mesh.shape[a] > 1)
    parameters = _parameters(graph) if force_data_parallel else set()
    # force-batch-dim-to-mesh-dim: the batch on that axis alone (whole if it has size 1).
    forced = [force_batch_dim_to_mesh_dim] if force_batch_dim_to_mesh_dim in axes else []
    for index, node in enumerate(graph.nodes):
        batch = _batch_loops(node, batch_args)
        if force_batch_dim_to_mesh_dim >= 0 and batch:
            restrict(node, lambda s, b=batch: sorted(a for loop in b for a in s.loop_axes[loop]) == forced,
                      soft=True)
        elif node.kind == "argument" and batch:  # a batch arrives split, as a data loader feeds it
            restrict(node, lambda s: bool(s.results[0].dims[0]), soft=True)
        if node.kind == "argument" and not batch and not allow_replicated_parameters:
            restrict(node, lambda s: not _replicated(s), soft=True)
        if not force_data_parallel:
            continue
        if batch:
            restrict(node, lambda s, b=batch: sorted(a for loop in b for a in s.loop_axes[loop]) == list(axes),
                      soft=True)
            continue
        # ZeRO (Sec. 4.2 post-ILP step, Sec. 8.2 baselines): stage 0 replicates all
        # but the batch; stages 1-2 shard optimizer state (arguments no matmul
        # reads), stage 3 parameters too; the weight update in between is free.
        if zero_stage == 0 or (index in parameters and zero_stage < 3):
            restrict(node, _replicated, soft=True)
        elif node.kind == "argument":
            restrict(node, lambda s: not _replicated(s), soft=True)


def check_callbacks(graph: Graph, mesh: DeviceMesh, diagnostics: Diagnostics) -> bool:
    """Every host callback runs on one device of the mesh (errors at the others)."""
    ok = True
    for node in graph.nodes:
        if node.kind != "op" or not is_host_callback(node.op):
            continue
        try:
            device = callback_device(node.op)
        except ValueError as error:
            diagnostics.error(node.op, str(error))
            ok = False
            continue
        if device >= mesh.size:
            diagnostics.error(node.op, f"the host callback runs on device {device}, but the mesh has {mesh.size} "
                                       f"devices; place it on one of 0..{mesh.size - 1}")
            ok = False
    return ok


def _replicated(strategy: Strategy) -> bool:
    return all(spec is None or spec.is_replicated for spec in strategy.results)

def restrict(node: Node, allowed, pinned: list | None = None, soft: bool = False) -> None:
    """Forbid (inf cost) every algorithm of ``node`` that ``allowed`` rejects. A pin the
    op has no algorithm for gets one: replicated operands, results sliced to the pin.
    ``soft``: leave the node alone when nothing still allowed (a pin, an earlier
    restriction) would be."""
    mask = np.array([bool(allowed(s)) for s in node.strategies])
    if soft and not (mask & np.isfinite(node.costs)).any():
        return
    if not mask.any():
        node.strategies.append(Strategy(
            "pinned", tuple(() for _ in node.space.loop_sizes),
            tuple(None if s is None else ShardingSpec.replicated(s.rank) for s in
                  (node.strategies[0].operands if node.strategies else ())),
            tuple(pinned)))
        node.costs = np.append(node.costs, 0.0)
        node.signature = (*node.signature, ("pinned", tuple(pinned)))  # its strategies differ now
        mask = np.append(np.zeros(len(mask), dtype=bool), True)
    node.costs = np.where(mask, node.costs, np.inf)


def _batch_loops(node: Node, batch_args: tuple[int, ...]) -> frozenset[int]:
    if node.kind == "argument":
        return frozenset({0}) if node.index in batch_args and node.shapes[0] else frozenset()
    return node.batch_loops


def _parameters(graph: Graph) -> set[int]:
    """Arguments a matmul or convolution reads, directly or through one trivial op."""
    users: dict[int, set[int]] = {}
    for use in graph.uses:
        users.setdefault(use.src, set()).add(use.dst)
    result = set()
    for index, node in enumerate(graph.nodes):
        if node.kind != "argument":
            continue
        first = users.get(index, set())
        second = {d for u in first if not graph.nodes[u].heavy for d in users.get(u, ())}
        if any(graph.nodes[i].heavy for i in first | second):
            result.add(index)
    return result
