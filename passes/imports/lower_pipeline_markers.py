"""``alpa-lower-pipeline-markers``: user boundaries become ``alpa.segment`` / ``alpa.apply_grad``.

This module also fixes the IR form of the markers that ``alpa_mlir.mark_pipeline_boundary``
and ``alpa_mlir.grad`` leave in the lowered program (``api/markers.py`` emits them)::

    %f:2 = stablehlo.custom_call @alpa.pipeline_marker(%h, %x)
             {alpa.marker = "boundary", has_side_effect = true}
             : (tensor<8x16xf32>, tensor<8xf32>) -> (tensor<8x16xf32>, tensor<8xf32>)
    ...
    %b = stablehlo.custom_call @alpa.pipeline_marker(%dh, %f#0)
             {alpa.marker = "backward_boundary", has_side_effect = true}
             : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>

A marker is an identity on all the values that cross it, in one op. ``boundary`` and
``grad`` markers return their operands. ``tangent_boundary`` and ``backward_boundary``
markers have one operand more, a *link*: a result of the marker they derive from (the
forward boundary, for the ones JAX makes from ``jax.grad``). The link ties a backward
boundary to its forward boundary by dataflow, and keeps JAX from deleting a forward
marker whose values the backward pass does not otherwise read. ``has_side_effect``
keeps ``canonicalize`` and ``cse`` from deleting or merging markers. XLA has no
implementation of the target and refuses to compile it (``NOT_FOUND: No registered
implementation for untyped custom call to alpa.pipeline_marker``), so this pass must
run before a module with markers reaches XLA.
"""

from __future__ import annotations

from dataclasses import dataclass

from jax._src.lib.mlir import ir

from ...dialect.context import walk
from ...dialect.names import (
    APPLY_GRAD_ATTR,
    BACKWARD_BOUNDARY,
    BOUNDARY,
    GRAD,
    LINKED_KINDS,
    MARKER_KIND,
    MARKER_KINDS,
    MARKER_TARGET,
    SEGMENT_ATTR,
)
from ...dialect.pass_registry import Diagnostics, Pass, register


def is_marker(op: ir.Operation) -> bool:
    """Whether ``op`` is an ``alpa.pipeline_marker`` custom call (of any kind)."""
    op = op.operation
    return (op.name == "stablehlo.custom_call" and "call_target_name" in op.attributes
            and ir.StringAttr(op.attributes["call_target_name"]).value == MARKER_TARGET)


@register
@dataclass(frozen=True)
class LowerPipelineMarkersPass(Pass):
    """Remove every pipeline marker; record its segment and apply-gradient facts on the ops.

    Each marker's results are replaced by its (non-link) operands. In every function
    that held markers, each op of the function body (not the ops nested in its regions,
    not the ``return``) gets ``alpa.segment = s : i64``, the user segment it lies in,
    and the ops that read the gradients of ``alpa_mlir.grad`` (directly or through other
    ops, also from inside their regions) get the unit attribute ``alpa.apply_grad``.
    Functions without markers, and modules without any, are left unchanged.

    Numbering. A forward boundary's index ``i`` is the number of forward boundaries on
    the longest dataflow chain before it, so a model's boundaries are ``0 .. n-1``; the
    grad marker's results start chains afresh. Segments follow program order (Sec. 5.1
    orders ops "how users define" them): ops before any marker are in segment 0; after
    forward boundary ``i`` the segment is ``i + 1``; after a backward boundary it is the
    index ``i`` of the forward boundary it links to. So a layer's backward ops share its
    forward ops' number, which the stage DP needs to colocate them (Sec. 5.1,
    constraint 1). One correction: the ops since the previous marker that forward
    boundary ``i`` reads, and those that read only them (and older values), are in
    segment ``i``; in a forward pass they are anyway, and where ``jax.checkpoint``
    recomputes a layer after the next layer's backward boundary, or a second
    micro-batch starts after a backward pass, they are that layer's ops. Numbering by
    dataflow, not by count, keeps the numbers of recomputed boundaries and of a second
    micro-batch's. Tangent markers, grad markers and backward markers of higher-order
    AD (linking to a marker that is not a forward boundary) change no segment.
    Apply-gradient ops keep the segment of their place.

    Run it after ``inline`` (a marker in a called function is an error), and before
    anything that reads ``alpa.segment`` or hands the module to XLA. Markers inside
    regions (``while``, ``case``) are errors, as are markers whose ``alpa.marker`` is
    missing or unknown, whose results are not their operands' types, and linked markers
    whose link is not a marker result of the same function.

    Input::

        %0 = stablehlo.tanh %arg0 : tensor<4xf32>
        %1 = stablehlo.custom_call @alpa.pipeline_marker(%0) {alpa.marker = "boundary", ...}
        %2 = stablehlo.sine %1 : tensor<4xf32>
        %3 = stablehlo.custom_call @alpa.pipeline_marker(%2, %1) {alpa.marker = "backward_boundary", ...}
        %4 = stablehlo.multiply %3, %0 : tensor<4xf32>
        %5 = stablehlo.custom_call @alpa.pipeline_marker(%4) {alpa.marker = "grad", ...}
        %6 = stablehlo.subtract %arg0, %5 : tensor<4xf32>

    Output::

        %0 = stablehlo.tanh %arg0 {alpa.segment = 0 : i64} : tensor<4xf32>
        %1 = stablehlo.sine %0 {alpa.segment = 1 : i64} : tensor<4xf32>
        %2 = stablehlo.multiply %1, %0 {alpa.segment = 0 : i64} : tensor<4xf32>
        %3 = stablehlo.subtract %arg0, %2 {alpa.apply_grad, alpa.segment = 0 : i64} : tensor<4xf32>
    """

    name = "alpa-lower-pipeline-markers"

    def apply(self, module: ir.Operation, diagnostics: Diagnostics) -> None:
        markers = [op for op in walk(module) if is_marker(op)]
        if not markers:
            return
        callees = {ir.FlatSymbolRefAttr(op.attributes["callee"]).value
                   for op in walk(module) if op.name == "func.call"}
        functions: list[ir.Operation] = []
        for marker in markers:
            function = _check_marker(marker, callees, diagnostics)
            if function is not None and function not in functions:
                functions.append(function)
        if diagnostics.failed:
            return
        plans = [_plan(function, diagnostics) for function in functions]
        if diagnostics.failed:
            return  # report every problem, change nothing
        for function, (segments, apply_grad) in zip(functions, plans):
            _rewrite(function, segments, apply_grad)


def _kind(marker: ir.Operation) -> str:
    return ir.StringAttr(marker.attributes[MARKER_KIND]).value


def _values(marker: ir.Operation) -> list[ir.Value]:
    """The operands that cross the marker (all but a link)."""
    operands = list(marker.operands)
    return operands[:-1] if _kind(marker) in LINKED_KINDS else operands


def _check_marker(marker: ir.Operation, callees: set[str], diagnostics: Diagnostics) -> ir.Operation | None:
    """The function whose body holds ``marker``, or None after reporting why it cannot be read."""
    kind = marker.attributes[MARKER_KIND] if MARKER_KIND in marker.attributes else None
    try:
        kind_text = ir.StringAttr(kind).value if kind is not None else None
    except ValueError:
        kind_text = None
    if kind_text not in MARKER_KINDS:
        written = "no 'alpa.marker' attribute" if kind is None else f"alpa.marker = {kind}"
        diagnostics.error(marker, f"malformed pipeline marker: {written}; expected alpa.marker = one of "
                                  + ", ".join(f'"{k}"' for k in MARKER_KINDS))
        return None
    linked = kind_text in LINKED_KINDS
    if linked and len(marker.operands) != len(marker.results) + 1:
        diagnostics.error(marker, f"malformed pipeline marker: a {kind_text} marker has one operand more than "
                                  f"results (the last links to its forward marker), got {len(marker.operands)} "
                                  f"operands and {len(marker.results)} results")
        return None
    value_types = [value.type for value in _values(marker)]
    result_types = [value.type for value in marker.results]
    if value_types != result_types:
        diagnostics.error(marker, "malformed pipeline marker: its results must have its operands' types "
                                  f"(an identity), got ({', '.join(map(str, value_types))}) -> "
                                  f"({', '.join(map(str, result_types))})")
        return None
    parent = marker.parent
    if parent.name != "func.func":
        diagnostics.error(marker, f"pipeline marker inside '{parent.name}' is not supported: a boundary must "
                                  "be in the function body; mark values outside the loop or branch "
                                  "(unroll the loop in Python)")
        return None
    symbol = ir.StringAttr(parent.attributes["sym_name"]).value
    if symbol in callees:
        diagnostics.error(marker, f"pipeline marker in @{symbol}, which is called from another function; "
                                  "run 'inline' before alpa-lower-pipeline-markers")
        return None
    return parent


def _body(function: ir.Operation) -> list[ir.Operation]:
    return [op.operation for op in function.regions[0].blocks[0].operations]


def _plan(function: ir.Operation, diagnostics: Diagnostics) -> tuple[list[int], set[int]]:
    """The segment of every op of ``function``'s body in order, and the positions of
    the apply-gradient ops."""
    body = _body(function)
    position_of = {op: position for position, op in enumerate(body)}
    depth: dict[ir.Value, int] = {}  # forward boundaries on the longest chain behind a value
    boundary_index: dict[ir.Value, int] = {}  # forward boundary results -> that boundary's index
    linked_results: set[ir.Value] = set()
    gradients: set[ir.Value] = set()
    segments: list[int] = []
    apply_grad: set[int] = set()
    segment, last_marker = 0, -1
    for position, op in enumerate(body):
        read = _reads(op)
        behind = max((depth.get(value, 0) for value in read), default=0)
        kind = _kind(op) if is_marker(op) else None
        if kind == BOUNDARY:
            # What the boundary reads since the previous marker is its layer, also where
            # jax.checkpoint recomputes the layer inside the backward pass.
            _claim_layer(op, behind, last_marker, body, position_of, segments)
            segment = behind + 1
            boundary_index.update((result, behind) for result in op.results)
            behind += 1
        elif kind == GRAD:
            behind = 0
        elif kind in LINKED_KINDS:
            link = op.operands[len(op.operands) - 1]
            if link in boundary_index:
                if kind == BACKWARD_BOUNDARY:
                    segment = boundary_index[link]
            elif link not in linked_results:
                diagnostics.error(op, f"{kind} marker whose last operand is not a result of a pipeline marker "
                                      "in this function: lower the forward and backward pass together "
                                      "(jax.grad or alpa_mlir.grad of the function that marks the boundaries)")
            linked_results.update(op.results)
        if op.name == "stablehlo.optimization_barrier":
            # Result i is operand i: jax.checkpoint bundles a layer's saved inputs with
            # cotangents of later layers, which must not raise the layer's depth.
            depth.update((result, depth.get(value, 0)) for result, value in zip(op.results, op.operands))
        else:
            depth.update((result, behind) for result in op.results)
        if kind == GRAD or any(value in gradients for value in read):
            gradients.update(op.results)
            apply_grad.add(position)
        segments.append(segment)
        if kind is not None:
            last_marker = position
    return segments, apply_grad


def _reads(op: ir.Operation) -> list[ir.Value]:
    """The values ``op`` reads, from inside its regions too."""
    return [value for inner in walk(op) for value in inner.operands]


def _claim_layer(boundary: ir.Operation, index: int, last_marker: int, body: list[ir.Operation],
                 position_of: dict[ir.Operation, int], segments: list[int]) -> None:
    """Put in segment ``index`` the ops after ``last_marker`` that ``boundary`` reads
    (transitively), and those after it that read only them and earlier values: under
    ``jax.checkpoint`` these are the recomputed layer and its residuals, which sit after
    the next layer's backward boundary. In a forward pass they are in ``index`` already."""
    claimed: set[int] = set()
    pending = list(boundary.operands)
    while pending:
        value = pending.pop()
        position = _position(value, position_of)
        if position is None or position <= last_marker or position in claimed:
            continue
        claimed.add(position)
        owner = value.owner.operation
        if owner.name == "stablehlo.optimization_barrier":  # result i is operand i
            pending.append(owner.operands[ir.OpResult(value).result_number])
        else:
            pending.extend(_reads(owner))
    for position in range(last_marker + 1, position_of[boundary]):
        defined = (_position(value, position_of) for value in _reads(body[position]))
        inside = [p for p in defined if p is not None and p > last_marker]
        if inside and all(p in claimed for p in inside):
            claimed.add(position)
    for position in claimed:
        segments[position] = index


def _position(value: ir.Value, position_of: dict[ir.Operation, int]) -> int | None:
    """Where in the function body ``value`` is defined (None: an argument or nested)."""
    owner = value.owner
    return None if isinstance(owner, ir.Block) else position_of.get(owner.operation)


def _rewrite(function: ir.Operation, segments: list[int], apply_grad: set[int]) -> None:
    i64 = ir.IntegerType.get_signless(64)
    for position, (op, segment) in enumerate(zip(_body(function), segments)):
        if is_marker(op):
            for result, value in zip(op.results, _values(op)):
                result.replace_all_uses_with(value)
            op.erase()
        elif op.name != "func.return":
            op.attributes[SEGMENT_ATTR] = ir.IntegerAttr.get(i64, segment)
            if position in apply_grad:
                op.attributes[APPLY_GRAD_ATTR] = ir.UnitAttr.get()
