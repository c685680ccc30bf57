"""``alpa-accumulate-gradients``: loop a step planned for one micro-batch over B; reduce gradients once."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import hlo, sdy

from ...dialect.annotations import SDY_SHARDING, find_main, get_value_attrs, sdy_mesh_name, sdy_meshes
from ...dialect.context import walk
from ...dialect.host_callbacks import is_host_callback
from ...dialect.names import APPLY_GRAD_ATTR, SEGMENT_ATTR, Accumulation, check_accumulation
from ...dialect.pass_registry import Diagnostics, Pass, register
from ...dialect.sdy import dimension_axes, sharding_constraint, tensor_sharding
from .loop_ir import binary, constant, micro_batch, put_rows, strided_sharding, whole_type

# Ops whose result is linear in an operand that holds a partial sum, so a partial sum
# passes through them unreduced. ``dot_general`` and ``multiply`` only when one operand
# is partial, ``divide`` only in its dividend, ``reduce`` only when it sums; ``add``,
# ``subtract`` and ``concatenate`` only when every operand is partial (the devices' sum
# of ``partial - y`` is ``total - n * y``, not ``total - y``).
_LINEAR = frozenset(f"stablehlo.{name}" for name in (
    "add", "subtract", "negate", "transpose", "reshape", "convert", "broadcast_in_dim", "slice",
    "concatenate", "dot_general", "multiply", "divide", "reduce"))
_ONE_PARTIAL_OPERAND = frozenset({"stablehlo.dot_general", "stablehlo.multiply"})
_ALL_PARTIAL_OPERANDS = frozenset({"stablehlo.add", "stablehlo.subtract", "stablehlo.concatenate"})


@register
@dataclass(frozen=True)
class AccumulateGradientsPass(Pass):
    """Run the gradient part of ``@main`` once per micro-batch and apply the mean once.

    Expects ``@main`` of a training step traced on one micro-batch (the batch arguments'
    leading dimension ``b``) whose gradients are marked by ``alpa_mlir.grad``
    (``alpa-lower-pipeline-markers`` leaves ``alpa.apply_grad`` on the ops that read
    them) or found by ``alpa-mark-apply-gradients`` (a step using ``jax.grad``), with a
    Shardy sharding on its arguments and ops: it runs after
    ``alpa-auto-sharding`` and ``alpa-export-sdy``, so the plan is the one made for a
    micro-batch, as Alpa plans its accumulation program. The batch arguments become
    ``B * b`` long. The ops that depend on them, apply-gradient ops aside, move into a
    ``stablehlo.while`` over ``B`` micro-batches; what they hand to the apply part or
    the results (the gradients, a loss) is summed into accumulators and divided by
    ``B`` after the loop, so the gradient of a mean loss is the full batch's
    (``accumulate=sum``, for a loss summed over examples: not divided). Ops that
    read no batch (the optimizer's ``0.9 * m``) run once, before the loop.

    Micro-batch ``m`` holds examples ``m, m + B, m + 2B, ...``: the batch is viewed as
    ``[b, B, ...]`` and sliced on the second dimension, so every device slices the rows
    it holds and the loop moves no batch data. A per-example result (``concat-results``)
    goes back the same way: rows ``[:, m]`` of a ``[b, B, ...]`` buffer, returned whole.

    **One gradient reduction per step.** Where a ``dot_general`` or a summing
    ``reduce`` contracts the batch, split over mesh axes ``U`` (the axes of every batch
    argument's first dimension), each device holds a partial sum over ``U``; left
    alone, XLA reduces it there, inside the loop. The pass marks such partial sums, the
    linear ops on the way to a gradient, and the accumulators ``unreduced={U}``, and
    constrains each loop result to the same before the one constraint to the planned
    sharding: devices add their own partial sums across micro-batches and XLA reduces
    each accumulator once, after the loop (an all-reduce, or a reduce-scatter where the
    plan shards the gradient over ``U``). Each mark is a ``sdy.sharding_constraint``
    because XLA's Shardy import keeps the shardings of constraints and of function
    arguments and results but not those on other ops; and Shardy carries ``unreduced``
    into a loop result only from a constraint on that result. A host callback in the loop
    (``jax.debug.print`` of the loss) runs once per micro-batch and reads a partial sum
    reduced; an ``io_callback``'s result is accumulated replicated, as its users read it.

    Input (``B = 2``)::

        func.func @main(%w: tensor<4x2xf32>, %x: tensor<8x4xf32> {sdy.sharding = <@mesh, [{"x"}, {}]>}) {
          %g = stablehlo.dot_general %x, %dy, contracting_dims = [0] x [0]   // [{}, {}]
          %u = stablehlo.subtract %w, %g {alpa.apply_grad}

    Output::

        func.func @main(%w: tensor<4x2xf32>, %x: tensor<16x4xf32> {...}) {
          %r:2 = stablehlo.while(%i = %c0, %acc = %zero) ... do {
            %g = stablehlo.dot_general %x_i, %dy ...
            %gu = sdy.sharding_constraint %g <@mesh, [{}, {}], unreduced={"x"}>
            %sum = stablehlo.add %acc, %gu
            %su = sdy.sharding_constraint %sum <@mesh, [{}, {}], unreduced={"x"}>
          }
          %part = sdy.sharding_constraint %r#1 <@mesh, [{}, {}], unreduced={"x"}>
          %total = sdy.sharding_constraint %part <@mesh, [{}, {}]>   // the one all-reduce
          %mean = stablehlo.divide %total, %c2
          %u = stablehlo.subtract %w, %mean {alpa.apply_grad}
    """

    name = "alpa-accumulate-gradients"

    num_micro_batches: int = field(default=1, metadata={"help": "micro-batches B per step (1: leave @main as is)"})
    batch_args: tuple[int, ...] = field(default=(), metadata={
        "help": "arguments of @main whose leading dimension is the (micro-)batch"})
    accumulate: Accumulation = field(default="mean", metadata={
        "help": "how the micro-batches' accumulated values (gradients, a loss) combine: mean (a loss averaged over "
                "examples) or sum (a loss summed over examples)"})
    concat_results: tuple[int, ...] = field(default=(), metadata={
        "help": "results of @main that are per-example (their leading dimension the micro-batch): the micro-batches' "
                "copies joined in the batch's order, not combined"})

    def __post_init__(self) -> None:
        if self.num_micro_batches < 1:
            raise ValueError(f"option 'num-micro-batches' must be positive; got {self.num_micro_batches}")
        for name, numbers in (("batch-args", self.batch_args), ("concat-results", self.concat_results)):
            twice = sorted({n for n in numbers if numbers.count(n) > 1})
            if twice:
                raise ValueError(f"option '{name}' lists {', '.join(map(str, twice))} more than once")
        check_accumulation(self.accumulate)

    def apply(self, module: ir.Operation, diagnostics: Diagnostics) -> None:
        if self.num_micro_batches == 1:
            return
        main = find_main(module)
        try:
            step = _Step(module, main, self.batch_args, self.concat_results)
        except _StepError as error:
            diagnostics.error(error.where or main, f"gradient accumulation: {error}")
            return
        with main.location:
            _build_loop(module, step, self.num_micro_batches, self.accumulate == "mean")


class _StepError(ValueError):
    def __init__(self, message: str, where: ir.Operation | None = None) -> None:
        super().__init__(message)
        self.where = where


class _Step:
    """``@main`` split into the ops that run before the loop, in it, and after it (apply)."""

    def __init__(self, module: ir.Operation, main: ir.Operation, batch_args: tuple[int, ...],
                 concat_results: tuple[int, ...] = ()) -> None:
        self.main = main
        block = main.regions[0].blocks[0]
        ops = [op.operation for op in block.operations]
        self.ret, ops = ops[-1], ops[:-1]
        if not any(SEGMENT_ATTR in op.attributes for op in ops):
            raise _StepError("the step marks no gradients; compute them with alpa_mlir.grad (or "
                             "alpa_mlir.value_and_grad), or run alpa-mark-apply-gradients before planning, so "
                             "that the compiler knows which part runs once per micro-batch and which applies "
                             "the gradients", main)
        self.batch, self.mesh = _batch_arguments(module, main, batch_args)
        self._split(ops)
        self._join(concat_results)

    def _split(self, ops: list[ir.Operation]) -> None:
        """Each op of the step to the part before the loop, the loop, or the apply part."""
        per_batch, applied = set(self.batch), set()
        self.apply, self.loop, self.before = [], [], []
        for op in ops:
            inputs = _inputs(op)
            # An op after the update (that reads an updated value) belongs to the apply part too.
            if APPLY_GRAD_ATTR in op.attributes or any(v in applied for v in inputs):
                self.apply.append(op)
                applied.update(op.results)
            elif any(v in per_batch for v in inputs):
                self.loop.append(op)
                per_batch.update(op.results)
            else:
                self.before.append(op)

    def _join(self, concat_results: tuple[int, ...]) -> None:
        """The values the loop hands on: per-example results joined, the rest averaged;
        refused where the apply part would read the batch or per-example values."""
        looped = {r for op in self.loop for r in op.results}
        bad = [k for k in concat_results if k >= len(self.ret.operands)]
        if bad:
            raise _StepError(f"concatenated results {bad} are out of range: @main has {len(self.ret.operands)}",
                             self.main)
        # Per-example results: each micro-batch's rows, joined after the loop; a batch argument is whole already.
        self.stacked = [(k, v) for k, v in enumerate(self.ret.operands) if k in concat_results and v in looped]
        self.whole = [(k, v) for k, v in enumerate(self.ret.operands) if k in concat_results and v in self.batch]
        joined, per_example = {v for _, v in self.stacked}, {self.ret.operands[k] for k in concat_results}
        for op in self.apply:
            if any(v in per_example for v in (*_inputs(op), *op.results)):
                raise _StepError("a per-example result is computed or read after the gradients, once on the "
                                 "micro-batches' combined values: compute it in the forward pass (return it from "
                                 "the loss function, has_aux=True)", op)
        later = [*self.apply, self.ret]
        self.crossing = [v for v in _ordered(v for op in later for v in _inputs(op)) if v in looped and v not in joined]
        batch = set(self.batch)
        returned = [v for k, v in enumerate(self.ret.operands) if k not in concat_results]  # joined: whole
        for op, reads in [*((op, _inputs(op)) for op in self.apply), (self.ret, returned)]:
            if any(v in batch for v in reads):
                raise _StepError("the apply-gradient part reads a batch argument itself; only values computed "
                                 "from the batch before the gradients can be averaged over micro-batches", op)
        for value in self.crossing:
            if not isinstance(ir.RankedTensorType(value.type).element_type, ir.FloatType):
                raise _StepError(f"a {value.type} computed from the batch reaches the apply-gradient part or "
                                 "the results; only floating-point values can be averaged over micro-batches",
                                 value.owner)

    def sharding(self, value: ir.Value) -> ir.Attribute:
        """The sharding ``value`` was planned with (replicated where it has none)."""
        return _sharding(value, self.main, self.mesh)


def _batch_arguments(module: ir.Operation, main: ir.Operation,
                     batch_args: tuple[int, ...]) -> tuple[list[ir.Value], str]:
    """The batch arguments of ``main`` that have a leading dimension, and the Shardy mesh they are on."""
    block = main.regions[0].blocks[0]
    bad = [i for i in batch_args if i >= len(block.arguments)]
    if bad:
        raise _StepError(f"batch arguments {bad} are out of range: @main has {len(block.arguments)}", main)
    batch = [block.arguments[i] for i in batch_args if ir.RankedTensorType(block.arguments[i].type).rank > 0]
    if not batch:
        raise _StepError("no batch argument has a leading dimension to split into micro-batches", main)
    dynamic = [v.arg_number for v in batch if not ir.RankedTensorType(v.type).has_static_shape]
    if dynamic:
        raise _StepError(f"batch arguments {dynamic} have dynamic shapes; micro-batches need static ones", main)
    arg_attrs = get_value_attrs(main, "arg_attrs")
    named = [arg_attrs[v.arg_number][SDY_SHARDING] for v in batch if SDY_SHARDING in arg_attrs[v.arg_number]]
    meshes = [sdy_mesh_name(named[0])] if named else list(sdy_meshes(module))
    if len(meshes) != 1:
        raise _StepError("the batch arguments have no Shardy sharding to read the mesh from; run "
                         "alpa-export-sdy first", main)
    return batch, meshes[0]


def _inputs(op: ir.Operation) -> list[ir.Value]:
    """The operands of ``op`` and of the ops in its regions (values captured from outside included)."""
    return [v for nested in walk(op) for v in nested.operands]


def _ordered(values: Iterable[ir.Value]) -> list[ir.Value]:
    seen: list[ir.Value] = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def _sharding(value: ir.Value, main: ir.Operation, mesh: str) -> ir.Attribute:
    value = value.maybe_downcast()
    if isinstance(value, ir.BlockArgument):
        found = get_value_attrs(main, "arg_attrs")[value.arg_number].get(SDY_SHARDING)
    elif value.owner.operation.name == "sdy.sharding_constraint":
        found = value.owner.operation.attributes["sharding"]
    elif SDY_SHARDING in value.owner.operation.attributes:
        per_value = value.owner.operation.attributes[SDY_SHARDING]
        found = sdy.TensorShardingPerValueAttr(per_value).shardings[value.result_number]
    else:
        found = None
    if found is not None and sdy_mesh_name(found) != mesh:  # a host callback's result, on its one device
        found = None  # is read replicated (the plan's R): so it is accumulated
    return found or tensor_sharding(mesh, [[]] * ir.RankedTensorType(value.type).rank)


def _partial_sums(step: _Step, axes: list[str]) -> set[ir.Value]:
    """Values of the loop that are partial sums over ``axes`` on their way to a crossing value.

    A ``dot_general`` whose operands carry all of ``axes`` on their contracting
    dimensions (and on no other), or a summing ``reduce`` over such dimensions, starts
    a partial sum; a linear op of a partial sum continues it, unless it contracts a
    dimension that an operand carries one of ``axes`` on: a sum partial over an axis
    cannot meet a value split over it in a contraction (Shardy aborts the process), so
    it is reduced there, as planned. Kept: the partial sums
    from which a crossing value is reached through partial sums alone.
    """
    wanted = set(axes)
    partial: set[ir.Value] = set()
    for op in step.loop:
        kind = op.name
        if len(op.results) != 1 or kind not in _LINEAR:
            continue
        operands = list(op.operands)
        carries = [v in partial for v in operands]
        contracted = _contracted(op)
        dims = [dimension_axes(step.sharding(operand)) for operand in operands[:len(contracted)]]
        if (kind == "stablehlo.dot_general" and not any(carries)) or (
                kind == "stablehlo.reduce" and _sums(op) and not any(carries)):
            if all(_contracts(d, c, wanted) for d, c in zip(dims, contracted)):
                partial.add(op.result)
            continue
        if (not any(carries) or (kind in _ONE_PARTIAL_OPERAND and all(carries))
                or (kind in _ALL_PARTIAL_OPERANDS and not all(carries))
                or (kind == "stablehlo.divide" and carries[1])
                or (kind == "stablehlo.reduce" and (not _sums(op) or carries[1]))
                or any(wanted & {a for k in c for a in d[k]} for d, c in zip(dims, contracted))):
            continue
        partial.add(op.result)
    reach = [v for v in step.crossing if v in partial]
    kept: set[ir.Value] = set()
    while reach:
        value = reach.pop()
        if value not in kept:
            kept.add(value)
            reach.extend(v for v in value.owner.operands if v in partial)
    return kept


def _contracted(op: ir.Operation) -> list[list[int]]:
    """The dimensions ``op`` contracts, per operand that has any: a ``dot_general``'s
    contracting dimensions of each side, a ``reduce``'s dimensions of its input."""
    if op.name == "stablehlo.dot_general":
        numbers = hlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
        return [list(numbers.lhs_contracting_dimensions), list(numbers.rhs_contracting_dimensions)]
    if op.name == "stablehlo.reduce":
        return [list(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))]
    return []


def _contracts(dims: list[list[str]], contracted: list[int], axes: set[str]) -> bool:
    """Whether an operand sharded as ``dims`` carries exactly ``axes`` on the ``contracted``
    dimensions and none of them on the others: the op's local results are partial sums over
    ``axes``. (With more axes on the contracted dimensions they are partial over those too,
    which the loop's accumulators, unreduced over ``axes`` alone, cannot hold.)"""
    on = {a for d in contracted for a in dims[d]}
    off = {a for i, d in enumerate(dims) if i not in contracted for a in d}
    return axes == on and not axes & off


def _sums(reduce_op: ir.Operation) -> bool:
    """A one-operand ``reduce`` that adds, starting from zero (so it is linear)."""
    if len(reduce_op.operands) != 2:
        return False
    body = [op.operation for op in reduce_op.regions[0].blocks[0].operations]
    init = reduce_op.operands[1].owner
    init = getattr(init, "operation", init)
    return (len(body) == 2 and body[0].name == "stablehlo.add" and isinstance(init, ir.Operation)
            and init.name == "stablehlo.constant" and _is_zero(init.attributes["value"]))


def _is_zero(value: ir.Attribute) -> bool:
    dense = ir.DenseElementsAttr(value)
    if not dense.is_splat:
        return False
    splat = dense.get_splat_value()
    return (ir.FloatAttr(splat).value if isinstance(splat, ir.FloatAttr) else ir.IntegerAttr(splat).value) == 0


def _batch_axes(step: _Step, mesh_axes: list[str]) -> list[str]:
    """The mesh axes every batch argument's leading dimension is split over, in mesh order."""
    shared = set(dimension_axes(step.sharding(step.batch[0]))[0])
    for value in step.batch[1:]:
        shared &= set(dimension_axes(step.sharding(value))[0])
    return [a for a in mesh_axes if a in shared]


class _PerExample(NamedTuple):
    """A per-example result of the loop: each micro-batch's rows go to ``[:, i]`` of a
    ``[b, B, ...]`` buffer the loop carries."""

    result: int  # its number among @main's results
    value: ir.Value  # one micro-batch's, inside the loop
    sharding: ir.Attribute  # the buffer's
    buffer: ir.Type  # the buffer's type


def _build_loop(module: ir.Operation, step: _Step, count: int, mean: bool) -> None:
    main = step.main
    mesh = step.mesh
    axes = _batch_axes(step, [sdy.MeshAxisAttr(a).name for a in sdy.MeshAttr(sdy_meshes(module)[mesh]).axes])
    partial = _partial_sums(step, axes) if axes else set()
    planned = {v: step.sharding(v) for v in step.crossing}

    def unreduced(sharding: ir.Attribute) -> ir.Attribute:
        return tensor_sharding(mesh, [[a for a in d if a not in axes] for d in dimension_axes(sharding)], axes)

    block = main.regions[0].blocks[0]
    for value in step.batch:
        shape = ir.RankedTensorType(value.type)
        value.set_type(ir.RankedTensorType.get([shape.shape[0] * count, *shape.shape[1:]], shape.element_type))
    # Per-example results: micro-batch i's rows go to [:, i] of a [b, B, ...] buffer, as
    # the batch's rows i, i + B, ... are micro-batch i's.
    stacked = [_PerExample(k, value, strided_sharding(mesh, dimension_axes(step.sharding(value))),
                           whole_type(value, count, split=True)) for k, value in step.stacked]

    anchor = step.apply[0] if step.apply else step.ret
    for op in step.before:
        if not op.is_before_in_block(anchor):
            op.move_before(anchor)
    counter_type = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
    replicated = tensor_sharding(mesh, [])
    accumulated = [unreduced(planned[v]) if v in partial else planned[v] for v in step.crossing]
    with ir.InsertionPoint(anchor):
        zero = constant(counter_type, 0, replicated)
        initial = [sharding_constraint(constant(v.type, 0.0, tensor_sharding(mesh, [[]] * ir.RankedTensorType(
            v.type).rank)), sharding) for v, sharding in zip(step.crossing, accumulated)]
        buffers = [constant(out.buffer, 0, out.sharding) for out in stacked]
        types = [counter_type, *(v.type for v in step.crossing), *(out.buffer for out in stacked)]
        loop = ir.Operation.create(
            "stablehlo.while", results=types, operands=[zero, *initial, *buffers],
            attributes={SDY_SHARDING: sdy.TensorShardingPerValueAttr.get(
                [replicated, *accumulated, *(out.sharding for out in stacked)])},
            regions=2)
    cond = loop.regions[0].blocks.append(*types)
    with ir.InsertionPoint(cond):
        less = ir.Operation.create(
            "stablehlo.compare", results=[ir.RankedTensorType.get([], ir.IntegerType.get_signless(1))],
            operands=[cond.arguments[0], constant(counter_type, count, replicated)],
            attributes={"comparison_direction": ir.Attribute.parse("#stablehlo<comparison_direction LT>"),
                        SDY_SHARDING: sdy.TensorShardingPerValueAttr.get([replicated])})
        ir.Operation.create("stablehlo.return", operands=[less.result])
    body = loop.regions[1].blocks.append(*types)
    with ir.InsertionPoint(body):
        terminator = ir.Operation.create("stablehlo.return", operands=[])
    for op in step.loop:
        op.move_before(terminator)
    with ir.InsertionPoint.at_block_begin(body):
        for value in step.batch:
            micro, view = micro_batch(value, body.arguments[0], count, mesh, dimension_axes(step.sharding(value)))
            value.replace_all_uses_except(micro, view)
    for k, value in step.whole:  # returned as given
        step.ret.operands[k] = value
    with ir.InsertionPoint(terminator):
        sums = [binary("stablehlo.add", acc, value, sharding)
                for acc, value, sharding in zip(body.arguments[1:], step.crossing, accumulated)]
        sums = [sharding_constraint(total, sharding) if value in partial else total
                for total, value, sharding in zip(sums, step.crossing, accumulated)]
        joined = [put_rows(buffer, out.value, body.arguments[0], out.sharding, mesh)
                  for buffer, out in zip(list(body.arguments)[1 + len(step.crossing):], stacked)]
        next_counter = binary("stablehlo.add", body.arguments[0], constant(counter_type, 1, replicated), replicated)
        ir.Operation.create("stablehlo.return", operands=[next_counter, *sums, *joined])
    terminator.erase()
    with ir.InsertionPoint(anchor):
        for value, total, sharding in zip(step.crossing, list(loop.results)[1:], accumulated):
            if value in partial:  # unreduced on the loop result, then the one reduction
                total = sharding_constraint(sharding_constraint(total, sharding), planned[value])
            if mean:
                total = binary("stablehlo.divide", total, constant(value.type, float(count), planned[value]),
                                planned[value])
            for op in [*step.apply, step.ret]:
                for nested in walk(op):
                    nested.replace_uses_of_with(value, total)
        for out, rows in zip(stacked, list(loop.results)[1 + len(step.crossing):]):
            step.ret.operands[out.result] = ir.Operation.create(
                "stablehlo.reshape", results=[whole_type(out.value, count)], operands=[rows],
                attributes={SDY_SHARDING: sdy.TensorShardingPerValueAttr.get([step.sharding(out.value)])}).result
    main.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([a.type for a in block.arguments], [v.type for v in step.ret.operands]))
    _mark_unreduced(step, partial, unreduced)


def _mark_unreduced(step: _Step, partial: set[ir.Value], unreduced) -> None:
    """Give every partial sum its unreduced sharding, on the op and in a constraint after it;
    a host callback (``jax.debug.print`` of the loss) reads it reduced, in its planned sharding.
    An op that starts one gets its operands' planned shardings as constraints: propagation may
    else shard the contracted dimensions over more axes (and Shardy abort the process)."""
    for op in step.loop:
        if not any(r in partial for r in op.results):
            continue
        if not any(v in partial for v in op.operands):
            for number, operand in enumerate(list(op.operands)[:1 if op.name == "stablehlo.reduce" else 2]):
                with ir.InsertionPoint(op):
                    op.operands[number] = sharding_constraint(operand, step.sharding(operand))
        planned = list(sdy.TensorShardingPerValueAttr(op.attributes[SDY_SHARDING]).shardings)
        shardings = [unreduced(s) if r in partial else s for r, s in zip(op.results, planned)]
        op.attributes[SDY_SHARDING] = sdy.TensorShardingPerValueAttr.get(shardings)
        for result, sharding, whole in zip(op.results, shardings, planned):
            if result in partial:
                with ir.InsertionPoint.after(op):
                    marked = sharding_constraint(result, sharding)
                result.replace_all_uses_except(marked, marked.owner.operation)
                callbacks = [use.owner.operation for use in marked.uses if is_host_callback(use.owner.operation)]
                if callbacks:
                    with ir.InsertionPoint.after(marked.owner):
                        reduced = sharding_constraint(marked, whole)
                    for callback in callbacks:
                        callback.replace_uses_of_with(marked, reduced)
