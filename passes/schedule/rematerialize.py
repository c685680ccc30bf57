"""``alpa-rematerialize``: recompute chosen layers' activations in the backward pass (gradient checkpointing)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import hlo

from ...dialect.annotations import find_main
from ...dialect.context import walk
from ...dialect.names import BACKWARD, FORWARD, LAYER_ATTR, PHASE_ATTR, RECOMPUTE_ATTR
from ...dialect.pass_registry import Diagnostics, Pass, register
from ..inter_op.training_step import StepGraph

# Ops whose result XLA always makes a buffer of (never fused into a reader).
_MATERIALIZED = ("stablehlo.dot_general", "stablehlo.convolution")


@register
@dataclass(frozen=True)
class RematerializePass(Pass):
    """Recompute the activations of the chosen layers in the backward pass instead of keeping them.

    Runs on ``@main`` marked by ``alpa-layer-construction`` (``alpa.layer`` and
    ``alpa.phase`` on every op). For each layer ``l`` of ``layers`` (empty: every layer),
    its *saved activations* are the results of its forward ops that backward ops read
    and that no op outside the layer's forward and the backward reads (a value another
    layer, the loss or a result reads is the next layer's input, kept as
    ``jax.checkpoint`` keeps a checkpointed function's inputs). Just before the first
    backward op that reads one of them, the forward ops they are computed from are
    cloned, and the backward ops read the clones; the originals then die in the forward
    pass. The clones carry ``alpa.recompute`` (and the layer's ``alpa.layer``, phase
    ``backward``), which the planner prices and ``ShardingPlan.recomputed`` counts.

    What the clones read from outside the layer (its inputs, parameters) is made to
    depend, bit for bit unchanged, on the latest backward matmul before the insertion
    point (the cotangent reaching the layer, a buffer of its own): ``x + 0 * m``, ``m``
    the largest of its finite elements and 0. XLA can then neither merge a clone with
    its original (CSE) nor compute it before the backward pass reaches the layer; the
    layer's backward ops from there on read the inputs the same way, so a parameter
    gathered for the forward pass is gathered again, not kept. ``jax.checkpoint`` fences
    its inputs with an ``optimization_barrier`` instead, which XLA:CPU deletes before it
    fuses and schedules: it then runs the recompute beside the forward pass, and saves
    nothing. Each layer's input computed by an elementwise op (a residual sum) becomes a
    buffer of its own, ``x / (1 + 0 * max(finite(x), 0))``: otherwise XLA fuses it into
    its backward reader, which then keeps every value it is summed from (the residual
    branches of every layer before) alive until then. Constants are cloned. The last
    layer, whose backward pass starts where its forward pass ends, gains nothing and is
    left as it is.

    Input::

        %a = stablehlo.dot_general %x, %w ... {alpa.layer = 0 : i64, alpa.phase = "forward"}
        %h = stablehlo.tanh %a {alpa.layer = 0 : i64, alpa.phase = "forward"}
        ...
        %ct = stablehlo.dot_general %g1, %w1 ... {alpa.layer = 1 : i64, alpa.phase = "backward"}
        %d = stablehlo.multiply %ct, %h {alpa.layer = 0 : i64, alpa.phase = "backward"}

    Output (``layers=0``)::

        %m = stablehlo.reduce(%ct_finite init: %zero) applies stablehlo.maximum ...
        %z = stablehlo.multiply %m, %zero
        %x2 = stablehlo.add %x, %z_broadcast
        %w2 = stablehlo.add %w, %z_broadcast_w
        %a2 = stablehlo.dot_general %x2, %w2 ... {alpa.layer = 0 : i64, alpa.phase = "backward", alpa.recompute}
        %h2 = stablehlo.tanh %a2 {alpa.layer = 0 : i64, alpa.phase = "backward", alpa.recompute}
        %d = stablehlo.multiply %ct, %h2 {alpa.layer = 0 : i64, alpa.phase = "backward"}

    Errors: ``@main`` without layer marks (run ``alpa-layer-construction`` first); a
    layer in ``layers`` that no op is marked with.
    """

    name = "alpa-rematerialize"

    layers: tuple[int, ...] = field(default=(), metadata={
        "help": "the layers whose activations are recomputed in the backward pass (empty: every layer)"})

    def __post_init__(self) -> None:
        if any(layer < 0 for layer in self.layers):
            raise ValueError(f"option 'layers' must list layer numbers (>= 0); got {list(self.layers)}")

    def apply(self, module: ir.Operation, diagnostics: Diagnostics) -> None:
        try:
            main = find_main(module)
        except ValueError as error:
            diagnostics.error(module, f"rematerialization: {error}")
            return
        marked = step_layers(main)
        if not marked:
            diagnostics.error(main, "rematerialization: @main's ops carry no layers; run alpa-layer-construction "
                                    "first (ShardParallel: layer_option=AutoLayerOption(layer_num=...))")
            return
        missing = sorted(set(self.layers) - set(marked))
        if missing:
            diagnostics.error(main, f"rematerialization: option 'layers' names layer(s) {missing}, but @main has "
                                    f"layers {marked}")
            return
        rematerialize(main, self.layers or marked)


def step_layers(func: ir.Operation) -> list[int]:
    """The layers of ``func``'s forward ops (``alpa-layer-construction``'s marks); empty
    where its ops carry none."""
    ops = [op for op in func.regions[0].blocks[0].operations][:-1]
    if not ops or any(LAYER_ATTR not in op.attributes or PHASE_ATTR not in op.attributes for op in ops):
        return []
    return sorted({ir.IntegerAttr(op.attributes[LAYER_ATTR]).value for op in ops
                   if ir.StringAttr(op.attributes[PHASE_ATTR]).value == FORWARD})


def layer_of(op: ir.Operation) -> int:
    return ir.IntegerAttr(op.attributes[LAYER_ATTR]).value


def phase_of(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes[PHASE_ATTR]).value


class _Recompute(NamedTuple):
    """What recomputing one layer clones, and where."""
    layer: int
    saved: list[ir.Value]  # the activations the backward pass reads, which the clones replace
    needed: set[int]  # the layer's forward ops they are computed from
    free: set[int]  # constant-valued ops those read (cloned too)
    inputs: list[ir.Value]  # what the clones read from outside the layer
    first: int  # the first backward op that reads a saved activation, or of the layer that reads an input
    # A backward value made before it; None where there is none: the backward pass reads
    # the layer as its forward pass ends (the last layer), and recomputing it saves nothing.
    tie: ir.Value | None


def rematerialize(main: ir.Operation, layers: Iterable[int]) -> tuple[int, ...]:
    """Recompute the saved activations of ``layers`` (see :class:`RematerializePass`) in
    ``main``; returns the layers recomputed (a layer whose backward pass starts where its
    forward pass ends, the last, gains nothing and is left as it is)."""
    graph = StepGraph(main)
    phase = [phase_of(op) for op in graph.ops]
    layer = [layer_of(op) for op in graph.ops]
    plans = [plan for number in layers if (plan := _plan(graph, phase, number, [
        i for i, op_layer in enumerate(layer) if op_layer == number and phase[i] == FORWARD])) is not None]
    checkpoints: dict[ir.Value, ir.Value] = {}
    for plan in plans:  # every layer's inputs, before any clone reads them
        for value in plan.inputs:
            if value in graph.producer and value not in checkpoints and _float(value) and \
                    graph.ops[graph.producer[value]].name not in _MATERIALIZED:
                checkpoints[value] = _checkpoint(graph.ops[graph.producer[value]], value)
    recomputed = [plan for plan in plans if plan.tie is not None]
    position = {op: n for n, op in enumerate(graph.ops)}
    for plan in recomputed:
        _clone(main, graph, plan, checkpoints, position)
    return tuple(plan.layer for plan in recomputed)


def _plan(graph: StepGraph, phase: list[str], layer: int, layer_ops: list[int]) -> _Recompute | None:
    """What recomputing the layer of forward ops ``layer_ops`` clones; None where the
    backward pass reads none of its activations."""
    ops, forward = graph.ops, set(layer_ops)
    saved = [v for i in layer_ops for v in ops[i].results
             if any(phase[u] == BACKWARD for u in graph.value_users.get(v, ()))
             and all(u in forward or phase[u] == BACKWARD for u in graph.value_users.get(v, ()))
             and v not in graph.results]
    if not saved:
        return None
    needed = _closure({graph.producer[v] for v in saved}, graph, lambda j: j in forward)
    free = _closure({j for i in needed for j in graph.inputs[i] if j not in needed and graph.constant_valued[j]},
                    graph, lambda j: True)
    inputs = [v for v in dict.fromkeys(v for i in sorted(needed) for v in graph.reads[i])
              if graph.producer.get(v) not in needed | free]
    first = min([u for v in saved for u in graph.value_users[v] if phase[u] == BACKWARD] +
                [u for v in inputs for u in graph.value_users.get(v, ())
                 if phase[u] == BACKWARD and layer_of(ops[u]) == layer])
    return _Recompute(layer, saved, needed, free, inputs, first, _tie(graph, phase, first))


def _clone(main: ir.Operation, graph: StepGraph, plan: _Recompute, checkpoints: dict[ir.Value, ir.Value],
           position: dict[ir.Operation, int]) -> None:
    """Clone ``plan``'s ops before its first backward reader, reading its inputs (their
    checkpoints) made to follow its tie, and have the backward ops read the clones.
    ``graph`` is of ``main`` before any clone: clones of other layers read none of this
    layer's values, so its def-use edges still hold."""
    ops = graph.ops
    at = ir.InsertionPoint(ops[plan.first])
    where = {LAYER_ATTR: ops[plan.first].attributes[LAYER_ATTR], PHASE_ATTR: ir.StringAttr.get(BACKWARD)}
    with at, ops[plan.first].location:
        kept = [checkpoints.get(v, v) for v in plan.inputs]
        mapping: dict[ir.Value, ir.Value] = dict(zip(plan.inputs, _after(plan.tie, kept, where)))
    for i in sorted(plan.needed | plan.free):
        clone = ops[i].clone(ip=at)
        for inner in walk(clone):
            for n, operand in enumerate(inner.operands):
                if operand in mapping:
                    inner.operands[n] = mapping[operand]
        clone.attributes[PHASE_ATTR] = where[PHASE_ATTR]
        if i in plan.needed:
            clone.attributes[RECOMPUTE_ATTR] = ir.UnitAttr.get()
        else:
            clone.attributes[LAYER_ATTR] = where[LAYER_ATTR]
        mapping.update(zip(ops[i].results, clone.results))
    # The backward pass reads the clones, and the layer's backward ops read its inputs as
    # the clones do: a parameter gathered for the forward pass is gathered again here (as
    # ZeRO-3 does), not kept from the forward pass.
    for v in plan.saved:
        for use in list(v.uses):
            top = _top(main, use.owner.operation)
            if top in position and phase_of(top) == BACKWARD:
                use.owner.operation.operands[use.operand_number] = mapping[v]
    for v in plan.inputs:
        for use in list(v.uses):
            top = _top(main, use.owner.operation)
            if position.get(top, -1) >= plan.first and phase_of(top) == BACKWARD and layer_of(top) == plan.layer:
                use.owner.operation.operands[use.operand_number] = mapping[v]


def _top(main: ir.Operation, op: ir.Operation) -> ir.Operation:
    """The op of ``main``'s entry block that holds ``op``."""
    while op.parent is not None and op.parent != main:
        op = op.parent.operation
    return op


def _checkpoint(producer: ir.Operation, value: ir.Value) -> ir.Value:
    """``value`` as a buffer of its own, which its readers read from the forward pass to
    the backward: ``value / (1 + 0 * m)``, ``m`` the largest of its finite elements and 0,
    made right after ``producer``. Bit for bit ``value``, but a division XLA neither
    folds nor computes again in each reader: an elementwise value (a residual sum) would
    otherwise be fused into its backward reader, which then keeps every value it is
    computed from (the residual branches of every layer before it) alive until then."""
    after = producer.operation
    with ir.InsertionPoint.after(after), after.location:
        made: list[ir.Operation] = []
        kind = ir.RankedTensorType(value.type)
        scalar = ir.RankedTensorType.get([], kind.element_type)
        zero = _splat(made, scalar, 0.0)
        one = _splat(made, scalar, 1.0)
        largest = _finite_max(made, value, zero)
        unit = _op(made, hlo.AddOp(_op(made, hlo.MulOp(largest, zero)), one))
        checkpoint = _op(made, hlo.DivOp(value, _op(made, hlo.BroadcastInDimOp(kind, unit, [])))).owner
    for use in list(value.uses):
        if use.owner.operation not in made:
            use.owner.operation.operands[use.operand_number] = checkpoint.result
    for op in made:
        for name in (LAYER_ATTR, PHASE_ATTR):
            op.attributes[name] = after.attributes[name]
    return checkpoint.result


def _closure(start: set[int], graph: StepGraph, inside: Callable[[int], bool]) -> set[int]:
    """``start`` and the ops (for which ``inside`` holds) it reads from, transitively."""
    found: set[int] = set()
    pending = list(start)
    while pending:
        i = pending.pop()
        if i not in found:
            found.add(i)
            pending.extend(j for j in graph.inputs[i] if inside(j))
    return found


def _tie(graph: StepGraph, phase: list[str], first: int) -> ir.Value | None:
    """The result of the latest backward matmul or convolution before op ``first`` that
    follows the forward pass (reads its activations, directly or through backward
    ops); ``None`` where there is none. A matmul's result is a buffer of its own: XLA
    fuses an element of an elementwise value into its reader by computing it from that
    value's inputs, which would keep them (forward activations) alive."""
    late = [False] * first
    for j in range(first):
        late[j] = phase[j] == BACKWARD and any(late[i] or phase[i] == FORWARD and not graph.constant_valued[i]
                                               for i in graph.inputs[j])
    return next((graph.ops[j].results[0] for j in reversed(range(first))
                 if late[j] and graph.ops[j].name in _MATERIALIZED), None)


def _after(tie: ir.Value, inputs: list[ir.Value], where: dict[str, ir.Attribute]) -> list[ir.Value]:
    """``inputs``, each made to depend on ``tie`` without changing a bit of it: ``x + z``
    with ``z = 0 * m``, ``m`` the largest of ``tie``'s finite elements and 0 (a float 0
    times a finite number, which XLA cannot fold away: ``0 * NaN`` is not 0; a reduction,
    not one element, so that a sharded ``tie`` is not gathered). An input of another type
    (a predicate) is left as it is. Unlike ``optimization_barrier``, which XLA:CPU deletes
    before it fuses and schedules, the dependence binds XLA's scheduler: a recomputed op
    cannot run before the backward pass reaches its layer."""
    made: list[ir.Operation] = []
    f32 = ir.F32Type.get()
    scalar = ir.RankedTensorType.get([], f32)
    tie_type = ir.RankedTensorType(tie.type)
    values = tie if tie_type.element_type == f32 else _op(made, hlo.ConvertOp(
        ir.RankedTensorType.get(tie_type.shape, f32), tie))
    zero_f32 = _splat(made, scalar, 0.0)
    zero = _op(made, hlo.MulOp(_finite_max(made, values, zero_f32), zero_f32))
    dependent = []
    for value in inputs:
        kind = ir.RankedTensorType(value.type)
        element = kind.element_type
        if not (_is_float(element) or isinstance(element, ir.IntegerType) and element.width > 1):
            dependent.append(value)
            continue
        same = zero if element == f32 else _op(made, hlo.ConvertOp(ir.RankedTensorType.get([], element), zero))
        dependent.append(_op(made, hlo.AddOp(value, _op(made, hlo.BroadcastInDimOp(kind, same, [])))))
    for op in made:
        for name, attr in where.items():
            op.attributes[name] = attr
    return dependent


def _finite_max(made: list[ir.Operation], value: ir.Value, zero: ir.Value) -> ir.Value:
    """The largest of ``value``'s finite elements and ``zero`` (a scalar of its type)."""
    kind = ir.RankedTensorType(value.type)
    scalar = zero.type
    spread = _op(made, hlo.BroadcastInDimOp(kind, zero, []))
    finite = _op(made, hlo.SelectOp(_op(made, hlo.IsFiniteOp(value)), value, spread))
    largest = hlo.ReduceOp([scalar], [finite], [zero], list(range(kind.rank)))
    body = largest.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(body):
        hlo.ReturnOp([hlo.MaxOp(*body.arguments).result])
    return _op(made, largest)


def _splat(made: list[ir.Operation], scalar: ir.Type, number: float) -> ir.Value:
    element = ir.RankedTensorType(scalar).element_type
    return _op(made, hlo.ConstantOp(ir.DenseElementsAttr.get_splat(scalar, ir.FloatAttr.get(element, number))))


def _op(made: list[ir.Operation], op: ir.OpView) -> ir.Value:
    made.append(op.operation)
    return op.result


def _float(value: ir.Value) -> bool:
    return isinstance(value.type, ir.RankedTensorType) and _is_float(value.type.element_type)


def _is_float(element: ir.Type) -> bool:
    try:  # the bindings' concrete float types (F32Type, ...) are not FloatType subclasses
        ir.FloatType(element)
    except ValueError:
        return False
    return True
