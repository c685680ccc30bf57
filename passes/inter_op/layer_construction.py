"""``alpa-layer-construction``: cluster a training step's ops into layers (Sec. 5.2)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from jax._src.lib.mlir import ir

from ...dialect.annotations import find_main
from ...dialect.context import walk
from ...dialect.host_callbacks import is_host_callback
from ...dialect.names import APPLY, BACKWARD, FORWARD, LAYER_ATTR, PHASE_ATTR, SEGMENT_ATTR
from ...dialect.pass_registry import Diagnostics, Pass, register
from ..intra_op.rules import itemsize_of, iteration_space, shape_of
from .layer_clustering import DEFAULT_DELTA, ClusteringInfeasibleError, Value, cluster_operators, equal_operator_layers
from .training_step import StepGraph, TrainingStep, analyze_training_step, forward_step

# Added to the least delta a clustering needs, which its FLOP bound meets only up to rounding.
RELAX_SLACK = 1e-6


@register
@dataclass(frozen=True)
class LayerConstructionPass(Pass):
    """Cut the forward pass into ``layers`` layers by Sec. 5.2's clustering DP; mark every op.

    Runs after ``alpa-import-pipeline`` on the public ``@main`` training step. The step
    is split into its forward, backward and apply-gradient parts (JAX's name stacks,
    or a dataflow rule without them: ``training_step.py``). The forward ops, in program
    order, are clustered so that the most bytes any layer receives from earlier layers
    is least, with every layer's FLOPs within ``(1 + delta)`` of the mean (ties: the
    least FLOP variance); user boundaries (``alpa.segment`` from
    ``mark_pipeline_boundary``) are cuts the clustering must make. Each backward op
    joins the layer of the forward op it is paired with (Sec. 5.1: forward and backward
    of a layer are colocated), and otherwise the layer of the values it reads. Each
    parameter's update (its apply-gradient ops and optimizer state) joins the layer
    where the forward pass reads the parameter, or else of its gradient; scalar apply
    ops (step counts, learning rates, norms) the layer of their first user, and stage
    construction copies them into every stage that reads them; a host callback
    (``jax.debug.print``) the layer of the last value it reads.

    ``forward-only`` takes a step without gradients (inference, for
    ``alpa-pipeline-schedule{schedule=inference}``): every op is a forward op, clustered
    as above, and ``alpa.phase`` is ``"forward"`` throughout.

    ``clustering=equal-operator`` is the paper's ablation baseline (Sec. 8.3): the forward
    ops are cut into layers of equal op counts, ignoring FLOPs, bytes and user boundaries.

    Input: a training step (forward, gradients, update) as ``@main``::

        func.func public @main(%w: tensor<64x64xf32>, %x: tensor<8x64xf32>) -> (tensor<64x64xf32>) {
          %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : ...
          ...
          %9 = stablehlo.subtract %w, %8 : tensor<64x64xf32>

    Output: every top-level op of ``@main`` gets ``alpa.layer = l : i64`` and
    ``alpa.phase = "forward" | "backward" | "apply"``::

        %0 = stablehlo.dot_general %x, %w ... {alpa.layer = 0 : i64, alpa.phase = "forward"}
        %9 = stablehlo.subtract %w, %8 {alpa.layer = 0 : i64, alpa.phase = "apply"} : tensor<64x64xf32>

    Errors: ``layers`` missing (0) without user boundaries; fewer forward ops than
    layers; a ``delta`` too small for any clustering (the message names the least
    ``delta`` that works; ``relax-delta`` clusters at that one instead, with a warning, as
    ``PipeshardParallel``'s ``AutoLayerOption`` does where it is given no ``delta``); a
    function that is not a training step; with ``forward-only``, one that computes gradients.
    """

    name = "alpa-layer-construction"

    layers: int = field(default=0, metadata={
        "help": "number of layers L (0: one layer per mark_pipeline_boundary segment)"})
    delta: float = field(default=DEFAULT_DELTA, metadata={
        "help": "a layer's FLOPs may exceed the mean by this fraction (Sec. 5.2's delta)"})
    relax_delta: bool = field(default=False, metadata={
        "help": "where no clustering meets delta, cluster at the least delta that admits one, with a warning "
                "(not an error)"})
    default_layers: Literal["segments", "sqrt"] = field(default="segments", metadata={
        "help": "what layers=0 cuts: one layer per user segment (an error without any); sqrt: that, or where the "
                "step has no user boundaries, sqrt(n) layers for its n forward matmuls and convolutions (Chen et "
                "al. 2016's checkpoints, for alpa-rematerialize)"})
    require_training_step: bool = field(default=True, metadata={
        "help": "a function that is not a training step is an error; false: it is left unmarked"})
    forward_only: bool = field(default=False, metadata={
        "help": "the step is forward-only (inference, alpa-pipeline-schedule{schedule=inference}): every op is a "
                "forward op, clustered into layers; no gradients are looked for"})
    clustering: Literal["dp", "equal-operator"] = field(default="dp", metadata={
        "help": "dp (Sec. 5.2) or equal-operator (the same number of forward ops per layer, Sec. 8.3's baseline)"})

    def __post_init__(self) -> None:
        if self.layers < 0:
            raise ValueError(f"option 'layers' must be positive (0: one per user segment); got {self.layers}")
        if not self.delta >= 0:
            raise ValueError(f"option 'delta' must not be negative; got {self.delta}")

    def _step(self, main: ir.Operation, graph: StepGraph, diagnostics: Diagnostics) -> TrainingStep | None:
        """The step's parts: its forward, backward and apply ops, or with ``forward-only``
        every op forward; None where it is not such a step (reported, but for a step that
        computes no gradients without ``require-training-step``)."""
        if self.forward_only:
            if _training_step(main, graph) is not None:
                diagnostics.error(main, "layer construction: option 'forward-only' is for a step without gradients, "
                                        "but this one computes them (a backward pass): pipeline it with a training "
                                        "schedule (1f1b, gpipe), or drop the gradients")
                return None
            return forward_step(len(graph.ops))
        try:
            return analyze_training_step(main, graph=graph)
        except ValueError as error:
            if self.require_training_step:
                diagnostics.error(main, f"layer construction: {error}")
            return None

    def apply(self, module: ir.Operation, diagnostics: Diagnostics) -> None:
        try:
            main = find_main(module)
        except ValueError as error:
            diagnostics.error(module, f"layer construction: {error}")
            return
        graph = StepGraph(main)
        ops = graph.ops
        step = self._step(main, graph, diagnostics)
        if step is None:
            return
        forward = list(step.ops(FORWARD))
        segments = [_segment(ops[i]) for i in forward]
        boundaries = [k for k in range(len(forward) - 1) if segments[k] != segments[k + 1]]
        layers = self.layers or (len(boundaries) + 1 if any(s is not None for s in segments) else 0)
        if not layers and self.default_layers == "sqrt":
            heavy = sum(ops[i].name in ("stablehlo.dot_general", "stablehlo.convolution") for i in forward)
            layers = min(len(forward), max(1, round(math.sqrt(heavy))))
        if layers == 0:
            diagnostics.error(main, "the step has no layers to pipeline: mark them with "
                                    "alpa_mlir.mark_pipeline_boundary() between layers, or have them cut "
                                    "automatically with option 'layers' (PipeshardParallel: "
                                    "layer_option=AutoLayerOption(layer_num=...))")
            return
        if layers > len(forward):
            diagnostics.error(main, f"option 'layers' is {layers} but the forward pass has {len(forward)} ops")
            return
        if layers == len(boundaries) + 1 and boundaries:  # the user's segments are the layers
            forward_layers = list(np.cumsum([0] + [k in boundaries for k in range(len(forward) - 1)]))
        elif self.clustering == "equal-operator":  # Sec. 8.3's baseline: as many forward ops in each layer
            forward_layers = list(equal_operator_layers(len(forward), layers))
        else:
            flops = [op_flops(ops[i]) for i in forward]
            values = _forward_values(graph, forward)
            try:
                forward_layers = cluster_operators(flops, values, layers, delta=self.delta,
                                                   boundaries=boundaries).layer_of_op
            except ClusteringInfeasibleError as error:
                heaviest = int(np.argmax(flops))
                alone = flops[heaviest] > (1 + self.delta) * sum(flops) / layers  # no cut can split one op
                where = ops[forward[heaviest]] if alone else main
                hint = (f": this op alone holds {flops[heaviest] / sum(flops):.0%} of the forward FLOPs (a lax.scan "
                        "is one op: unroll it, or ask for fewer layers)") if alone else ""
                if not (self.relax_delta and math.isfinite(error.required_delta)):
                    diagnostics.error(where, f"layer construction: {error}{hint}")
                    return
                relaxed = error.required_delta + RELAX_SLACK
                forward_layers = cluster_operators(flops, values, layers, delta=relaxed,
                                                   boundaries=boundaries).layer_of_op
                diagnostics.warning(where, f"layer construction: no clustering of {len(forward)} forward ops into "
                                           f"{layers} layers keeps every layer's FLOPs <= (1 + delta) * average at "
                                           f"delta = {self.delta} (Sec. 5.2); clustered at delta = {relaxed:.4g}, the "
                                           f"least that does{hint}")
        layer = assign_layers(graph, step, dict(zip(forward, forward_layers)))
        i64 = ir.IntegerType.get_signless(64, module.context)
        for op, phase, number in zip(ops, step.phase, layer):
            op.attributes[LAYER_ATTR] = ir.IntegerAttr.get(i64, number)
            op.attributes[PHASE_ATTR] = ir.StringAttr.get(phase, module.context)


def _training_step(main: ir.Operation, graph: StepGraph) -> TrainingStep | None:
    """The step's training parts, or None where it computes no gradients."""
    try:
        step = analyze_training_step(main, graph=graph)
    except ValueError:
        return None
    return step if step.ops(BACKWARD) else None


def assign_layers(graph: StepGraph, step: TrainingStep, forward_layer: dict[int, int]) -> list[int]:
    """The layer of every op, given the forward ops' layers (see the pass docstring)."""
    argument_layer: dict[int, int] = {}  # a parameter's layer: of the first forward op reading it
    for i in step.ops(FORWARD):
        for argument in graph.args_read[i]:
            argument_layer.setdefault(argument, forward_layer[i])
    layer: list[float] = [math.nan] * len(graph.ops)
    for i, number in forward_layer.items():
        layer[i] = number
    for i in step.ops(BACKWARD):
        pair = step.forward_of[i]
        if pair is not None and pair in forward_layer:
            layer[i] = forward_layer[pair]
    # Unpaired backward ops: the least layer among what they read (a backward value
    # flows from the last layer to the first), in program order.
    for i in step.ops(BACKWARD):
        if math.isnan(layer[i]):
            known = [layer[j] for j in graph.inputs[i] if not math.isnan(layer[j])]
            known += [argument_layer[a] for a in graph.args_read[i] if a in argument_layer]
            if known:
                layer[i] = min(known)
    _backward_never_later(graph, step, layer)
    _place_updates(graph, step, layer, argument_layer)
    # Ops reading nothing placed (step counters, learning rates, constants): the layer
    # of their first placed user. Stage construction copies such scalars into every
    # stage that reads them. A host callback (jax.debug.print of a loss or a gradient
    # norm) runs where the last value it reads is computed, unless a user needs it sooner.
    for i in reversed(range(len(graph.ops))):
        if math.isnan(layer[i]):
            users = [layer[j] for j in graph.users[i] if not math.isnan(layer[j])]
            read = [layer[j] for j in graph.inputs[i] if not math.isnan(layer[j])]
            if is_host_callback(graph.ops[i]) and read:
                users.append(max(read))
            layer[i] = min(users) if users else 0
    _backward_never_later(graph, step, layer)
    return [int(x) for x in layer]


def _backward_never_later(graph: StepGraph, step: TrainingStep, layer: list[float]) -> None:
    """The backward pass runs the layers in reverse: a backward op is in no later layer
    than a backward op it reads (a pairing that says otherwise, for a light op such as a
    bias gradient's reduce, would make the stages' parts wait on each other)."""
    backward = set(step.ops(BACKWARD))
    for i in sorted(backward):
        read = [layer[j] for j in graph.inputs[i] if j in backward and not math.isnan(layer[j])]
        if read and not math.isnan(layer[i]):
            layer[i] = min(layer[i], *read)


def _place_updates(graph: StepGraph, step: TrainingStep, layer: list[float], argument_layer: dict[int, int]) -> None:
    """Each parameter's update on the parameter's layer (Alpa's apply-gradient split).

    Apply ops that hand each other tensors (``mu``, ``nu`` and ``p - s * mu / sqrt(nu)``
    of one parameter), or read the same optimizer-state tensor, form one update; scalars
    (the step count, a bias correction, a global norm) do not join updates. An update
    takes the least layer of the parameters it reads (where the forward pass reads
    them, so the new value stays there), else of the gradients it reads; one reading
    neither stays unplaced. Its tensors then never cross layers; only the gradients and
    the scalars it shares with other updates may."""
    apply = step.ops(APPLY)
    group = {i: i for i in apply}  # union-find over the updates

    def root(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    state_reader: dict[int, int] = {}  # an argument only apply ops read -> its first reader
    for i in apply:
        for value in graph.reads[i]:
            if not is_tensor(value):
                continue
            if value in graph.producer and graph.producer[value] in group:
                group[root(i)] = root(graph.producer[value])
            elif value in graph.arg_number and graph.arg_number[value] not in argument_layer:
                group[root(i)] = root(state_reader.setdefault(graph.arg_number[value], i))
    parameters: dict[int, list[int]] = {}
    gradients: dict[int, list[float]] = {}
    for i in apply:
        for value in filter(is_tensor, graph.reads[i]):
            if value in graph.arg_number and graph.arg_number[value] in argument_layer:
                parameters.setdefault(root(i), []).append(argument_layer[graph.arg_number[value]])
            elif value in graph.producer and graph.producer[value] not in group:
                read = layer[graph.producer[value]]
                if not math.isnan(read):
                    gradients.setdefault(root(i), []).append(read)
    for i in apply:
        anchors = parameters.get(root(i)) or gradients.get(root(i))
        if anchors:
            layer[i] = min(anchors)


def is_tensor(value: ir.Value) -> bool:
    """More than one element (a scalar or a one-element tensor is not)."""
    shape = shape_of(value)
    return shape is not None and math.prod(shape) > 1


def op_flops(op: ir.Operation) -> float:
    """Floating-point operations of an op, its regions included (once: trip counts are unknown)."""
    total = 0.0
    for nested in walk(op):
        space = iteration_space(nested) if not nested.regions or nested.name.startswith("stablehlo.reduce") else None
        total += space.flops if space is not None else 0.0
    return total


def _forward_values(graph: StepGraph, forward: list[int]) -> list[Value]:
    """The forward pass's dataflow in forward-op numbering, with each value's bytes."""
    position = {i: k for k, i in enumerate(forward)}
    values = []
    for k, i in enumerate(forward):
        for result in graph.ops[i].results:
            readers = sorted({position[j] for j in graph.value_users.get(result, ())
                              if j in position and position[j] > k})
            shape = shape_of(result)
            if readers and shape is not None:
                values.append(Value(k, tuple(readers), float(np.prod(shape, dtype=float)) * itemsize_of(result)))
    return values


def _segment(op: ir.Operation) -> int | None:
    return ir.IntegerAttr(op.attributes[SEGMENT_ATTR]).value if SEGMENT_ATTR in op.attributes else None
