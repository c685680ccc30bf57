"""Forward, backward and apply-gradient parts of a lowered training step (Sec. 5.1-5.2).

The inter-op pass wants "an operator in the forward pass ... colocate[d] with its
corresponded backward operator on the same submesh" (Sec. 5.1), and each
apply-gradient op with the stage that holds its parameter. :func:`analyze_training_step`
says which part each op of ``@main`` is in and which forward op each backward op
corresponds to. ``@main`` should be in canonical form (``alpa-import-pipeline``).

Ops are numbered by place among the top-level ops of the entry block, terminator
excluded: op ``i`` is ``step_ops(func)[i]``. An op with regions counts as one op; what
its regions read from outside counts as its inputs.

**Location rule** (``source == "locations"``), when JAX's debug locations carry name
stacks (``lowered.as_text(debug_info=True)``): JAX names an op
``jit(f)/<transforms>/<primitive>`` (an inlined callee: in the caller of its
``callsite``). A ``transpose(...)`` segment makes it backward, else a ``jvp(...)``
segment forward. An op outside differentiation (``jit(f)/mul``) is forward when a
forward or backward op needs it (a cast before ``value_and_grad``), else apply.

**Dataflow rule** (``source == "dataflow"``), without name stacks or with
``use_locations=False``. The loss is result ``loss`` (default: the last scalar float
result). An op is *constant-valued* when it computes from constants only. The *seed* is
the first constant-valued op after the loss's producer that feeds another result: JAX
transposes from ``1.0``, and its first use (``negate(1.0)``, ``divide(1.0, N)``) follows
the loss; the ``1.0`` itself is shared with forward ops once constants are merged. Each
op is then independent of the seed (K), linear in it (L) or neither (N): ``add``,
``subtract``, ``select``, ``pad``, ``scatter``, ``concatenate`` of L and zeros are L (but
``p - lr * g`` is N); ``multiply``, ``dot_general``, ``convolution`` with one L operand and
``divide`` with an L dividend are L; a ``reduce`` summing from zero is L; elementwise
math (``sqrt``, ``maximum``, CHLO) is N; other ops keep L (JAX's transpose is linear).

- backward: L ops, but for trailing scalings (``multiply``, ``divide``, ``negate``,
  ``convert``) all of whose users are apply (``lr * g``); and K copies (``broadcast_in_dim``,
  ``reshape``, ...) of forward values that only backward ops use, as transpose rules emit;
- apply: N ops, those scalings, and K ops that neither the loss nor the backward needs
  (``b1 * mu``, ``step + 1``);
- forward: the other K ops: activations, and the residuals ``jvp`` saves (``x > 0``).

Both rules: a ``gradients=`` boundary (what ``alpa_mlir.grad`` marks) makes the ops that
depend on it apply and those it depends on forward or backward. A constant, and an op
without a name stack (location rule) or constant-valued off the seed's path (dataflow),
takes the earliest phase of its users: merged constants serve all three parts.

**Pairing.** A backward op ``b`` reads forward values ``R(b)`` (activations, residuals,
arguments; not constant-valued ones). By dataflow ``b`` pairs with the latest forward
op of its kind, or of the kind it transposes (``reduce`` of ``broadcast_in_dim``,
``scatter`` of ``gather``), that reads a value of ``R(b)``: the data-gradient
``dot_general`` reads the weight of its forward ``dot_general``, the weight-gradient one
its input. Else with the latest producer of ``R(b)`` (the saved activation it reads);
else as its latest backward input (a ``reshape`` of a cotangent). Constant-valued
backward ops (the seed) pair as their first backward user. By location ``b`` pairs with
a forward op of the same source statement (same traceback): the dataflow pair if it is
one, else the nearest to it of the same or transposed kind (unrolled layers share
tracebacks). Measured on the 2-layer GPT: the same pair for every ``dot_general`` and
half the other backward ops; the two pairs are at most 30 ops apart.

**Limits.** The dataflow rule assumes JAX's order (the backward after the loss) and a
single seed: a residual computed after the loss (a loss ending in ``tanh``), two
``grad`` calls or a microbatch loop break it. A gradient that ends in a scaling (a
parameter used as ``2 * w``) loses the scaling to apply. A rematerialized op
(``jax.checkpoint``) is backward by location, forward by dataflow. Dataflow pairs
light cotangent ops (``reshape``, ``add`` of cotangents) with a neighbour only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from jax._src.lib.mlir import ir

from ...dialect.names import APPLY, BACKWARD, FORWARD, Phase

_RANK = {FORWARD: 0, BACKWARD: 1, APPLY: 2}

# Linearity of a value in the cotangent seed: independent, linear, anything else.
_K, _L, _N = 0, 1, 2
_NONLINEAR = frozenset(f"stablehlo.{name}" for name in (
    "abs", "atan2", "cbrt", "ceil", "clamp", "compare", "cosine", "exponential", "exponential_minus_one",
    "floor", "is_finite", "log", "log_plus_one", "logistic", "maximum", "minimum", "power", "remainder",
    "round_nearest_afz", "round_nearest_even", "rsqrt", "sign", "sine", "sqrt", "tan", "tanh", "and", "or",
    "xor", "not", "sort", "reduce_precision"))
_BILINEAR = frozenset({"stablehlo.multiply", "stablehlo.dot_general", "stablehlo.convolution",
                       "stablehlo.divide"})
_SCALING = frozenset({"stablehlo.multiply", "stablehlo.divide", "stablehlo.negate", "stablehlo.convert"})
_REARRANGING = frozenset({"stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.convert",
                          "stablehlo.transpose", "stablehlo.slice"})  # also keep zeros zero
# JAX's transposition rules: the backward op kind -> the forward kinds it transposes.
_TRANSPOSES = {"stablehlo.reduce": ("stablehlo.broadcast_in_dim",), "stablehlo.scatter": ("stablehlo.gather",),
               "stablehlo.pad": ("stablehlo.slice",), "stablehlo.slice": ("stablehlo.pad", "stablehlo.concatenate"),
               "stablehlo.dynamic_update_slice": ("stablehlo.dynamic_slice",),
               "stablehlo.broadcast_in_dim": ("stablehlo.reduce",), "stablehlo.select": ("stablehlo.compare",)}


@dataclass(frozen=True)
class TrainingStep:
    """The parts of a training step; index ``i`` is op ``step_ops(func)[i]``."""

    phase: tuple[Phase, ...]
    forward_of: tuple[int | None, ...]  # the forward op a backward op pairs with; None for the others
    source: Literal["locations", "dataflow"]
    loss: int | None  # result number of the loss; None for a step that returns none (location rule)
    parameters: tuple[int, ...]  # arguments that a forward op and an apply op both read

    def ops(self, phase: Phase) -> tuple[int, ...]:
        """The ops of ``phase``, in program order."""
        return tuple(i for i, p in enumerate(self.phase) if p == phase)


def step_ops(func: ir.Operation) -> list[ir.Operation]:
    """The top-level ops of ``func``'s entry block, terminator excluded: the ops a
    :class:`TrainingStep` numbers."""
    # Iterated, not indexed: each index walks the block's op list from its start.
    return [op.operation for op in func.regions[0].blocks[0].operations][:-1]


def forward_step(num_ops: int) -> TrainingStep:
    """A forward-only step of ``num_ops`` ops (inference): every op forward, nothing paired."""
    return TrainingStep((FORWARD,) * num_ops, (None,) * num_ops, "dataflow", None, ())


def analyze_training_step(func: ir.Operation, *, use_locations: bool = True, loss: int | None = None,
                          gradients: Sequence[ir.Value] | None = None,
                          graph: StepGraph | None = None) -> TrainingStep:
    """The forward, backward and apply-gradient ops of ``func`` and the backward-forward pairs.

    Args:
      func: the training step's ``func.func``, in canonical form (one function).
      use_locations: use the location rule when the ops carry JAX name stacks; with
        ``False``, or without name stacks, the dataflow rule (see the module docstring).
      loss: the result number of the loss; default the last scalar floating-point result.
      gradients: the complete gradients, if the caller knows them (``alpa_mlir.grad``):
        the ops that depend on them are the apply part.
      graph: ``StepGraph(func)``, if the caller has built it already.
    Raises:
      ValueError: (dataflow rule) no loss result, or no backward pass after the loss.
    """
    graph = graph or StepGraph(func)
    after_gradients, before_gradients = set(), set()
    if gradients is not None:
        after_gradients = set(graph.reachable(graph.users_of(gradients), graph.users))
        before_gradients = set(graph.reachable({graph.producer[v] for v in gradients if v in graph.producer},
                                               graph.inputs))
    stacks = [_name_stack(op.location) for op in graph.ops]
    use_locations = use_locations and any(s is not None and _transform_of(s[0]) for s in stacks)
    # The location rule needs no loss: a step may return only the updated state.
    loss = _loss_result(graph.results, loss, required=not use_locations)
    if use_locations:
        phase = _location_phases(graph, stacks, after_gradients, before_gradients)
    else:
        phase = _dataflow_phases(graph, loss, after_gradients, explicit=gradients is not None)
    graph.follow_users(phase, [p is None for p in phase])
    dataflow_pairs = _dataflow_pairs(graph, phase)
    pairs = _location_pairs(graph, phase, stacks, dataflow_pairs) if use_locations else dataflow_pairs
    read_by = {FORWARD: set(), BACKWARD: set(), APPLY: set()}
    for i, args in enumerate(graph.args_read):
        read_by[phase[i]].update(args)
    return TrainingStep(tuple(phase), tuple(pairs), "locations" if use_locations else "dataflow", loss,
                        tuple(sorted(read_by[FORWARD] & read_by[APPLY])))


class StepGraph:
    """Def-use edges between the top-level ops of a function (region captures included):
    per op (``step_ops`` numbering) the top-level values it reads, the ops and arguments
    they come from, and the ops that read its results."""

    def __init__(self, func: ir.Operation):
        block = func.regions[0].blocks[0]
        self.ops = step_ops(func)
        self.results = list(block.operations[len(block.operations) - 1].operands)
        self.arg_number = {arg: n for n, arg in enumerate(block.arguments)}
        self.producer: dict[ir.Value, int] = {r: i for i, op in enumerate(self.ops) for r in op.results}
        self.reads = [self._reads(op) for op in self.ops]
        self.inputs = [sorted({self.producer[v] for v in vs if v in self.producer}) for vs in self.reads]
        self.args_read = [sorted({self.arg_number[v] for v in vs if v in self.arg_number}) for vs in self.reads]
        self.users: list[list[int]] = [[] for _ in self.ops]
        self.value_users: dict[ir.Value, list[int]] = {}
        for i, values in enumerate(self.reads):
            for v in values:
                self.value_users.setdefault(v, []).append(i)
            for j in self.inputs[i]:
                self.users[j].append(i)
        self.constant_valued = [False] * len(self.ops)
        for i in range(len(self.ops)):
            self.constant_valued[i] = not self.args_read[i] and all(self.constant_valued[j] for j in self.inputs[i])

    def _reads(self, op: ir.Operation) -> list[ir.Value]:
        """Top-level values (op results, arguments) that ``op`` or an op nested in it reads."""
        found: dict[ir.Value, None] = {}
        pending = [op]
        while pending:
            current = pending.pop()
            for value in current.operands:
                if value in self.producer or value in self.arg_number:
                    found.setdefault(value)
            pending.extend(inner.operation for region in current.regions for b in region.blocks
                           for inner in b.operations)
        return list(found)

    def users_of(self, values: Iterable[ir.Value]) -> list[int]:
        return sorted({u for v in values for u in self.value_users.get(v, ())})

    def reachable(self, starts: Iterable[int], edges: list[list[int]]) -> list[int]:
        """``starts`` and every op reachable from them along ``edges``."""
        seen, pending = set(starts), list(starts)
        while pending:
            for j in edges[pending.pop()]:
                if j not in seen:
                    seen.add(j)
                    pending.append(j)
        return sorted(seen)

    def follow_users(self, phase: list, pending: list[bool]) -> None:
        """Give each pending op the earliest phase among its users (forward when unused)."""
        for i in reversed(range(len(self.ops))):
            if pending[i]:
                phase[i] = min((phase[u] for u in self.users[i]), key=_RANK.__getitem__, default=FORWARD)


def _loss_result(results: list[ir.Value], loss: int | None, required: bool) -> int | None:
    """``loss``, checked, or the last scalar floating-point result; None if there is none
    and none is ``required``."""
    if loss is not None:
        if not 0 <= loss < len(results):
            raise ValueError(f"loss={loss}, but @main has {len(results)} results")
        return loss
    scalars = [n for n, v in enumerate(results) if isinstance(v.type, ir.RankedTensorType)
               and v.type.rank == 0 and isinstance(v.type.element_type, ir.FloatType)]
    if not scalars and required:
        raise ValueError("@main returns no scalar floating-point value to take as the loss, and its ops carry no JAX "
                         "name stacks to tell forward from backward; pass loss=<result number>")
    return scalars[-1] if scalars else None


# ----------------------------------------------------------------------------- locations

def _name_stack(loc: ir.Location) -> tuple[tuple[str, ...], str] | None:
    """The JAX name stack of ``loc`` as segments and its traceback (source statement)."""
    while True:
        if isinstance(loc, ir.CallSiteLoc):  # an inlined callee: the caller holds the stack
            loc = loc.caller
        elif isinstance(loc, ir.NameLoc) and not loc.name_str.startswith("jit("):
            loc = loc.child_loc  # a host callback's name around its stack: loc("debug_print:"("jit(f)/..."))
        else:
            break
    if not isinstance(loc, ir.NameLoc):
        return None
    segments, depth, start = [], 0, 0
    name = loc.name_str
    for k, char in enumerate(name):
        depth += (char == "(") - (char == ")")
        if char == "/" and depth == 0:
            segments.append(name[start:k])
            start = k + 1
    return (*segments, name[start:]), str(loc.child_loc)


def _transform_of(segments: tuple[str, ...]) -> Phase | None:
    if any(s.startswith("transpose(") for s in segments):
        return BACKWARD
    if any("jvp(" in s for s in segments):
        return FORWARD
    return None


def _location_phases(graph: StepGraph, stacks: list, after_gradients: set[int], before_gradients: set[int]) -> list:
    phase: list = [None] * len(graph.ops)
    outside = []
    for i, (op, stack) in enumerate(zip(graph.ops, stacks)):
        if stack is None or op.name == "stablehlo.constant":
            continue
        phase[i] = APPLY if i in after_gradients else _transform_of(stack[0])
        if phase[i] is None:
            outside.append(i)
    differentiated = [i for i, p in enumerate(phase) if p in (FORWARD, BACKWARD)]
    needed = set(graph.reachable(differentiated, graph.inputs))
    for i in outside:  # program order: an op's inputs are decided first
        if i in needed:
            phase[i] = FORWARD
        elif i in before_gradients:  # computes an explicit gradient: part of the backward
            phase[i] = BACKWARD if any(phase[j] == BACKWARD for j in graph.inputs[i]) else FORWARD
        else:
            phase[i] = APPLY
    return phase


def _location_pairs(graph: StepGraph, phase: list, stacks: list, dataflow: list) -> list:
    """Pair within the same source statement; the dataflow pair breaks ties."""
    statement: dict[str, list[int]] = {}
    for i, stack in enumerate(stacks):
        if phase[i] == FORWARD and stack is not None:
            statement.setdefault(stack[1], []).append(i)
    pairs: list = [None] * len(graph.ops)
    for b in range(len(graph.ops)):
        if phase[b] != BACKWARD or stacks[b] is None or graph.constant_valued[b]:
            continue
        candidates = statement.get(stacks[b][1], [])
        if not candidates:
            continue
        anchor = dataflow[b]
        if anchor in candidates:
            pairs[b] = anchor
            continue
        kinds = _kinds(graph.ops[b].name)
        candidates = [f for f in candidates if graph.ops[f].name in kinds] or candidates
        pairs[b] = candidates[-1] if anchor is None else min(candidates, key=lambda f: (abs(f - anchor), -f))
    _follow_users(graph, phase, pairs)
    return pairs


# ----------------------------------------------------------------------------- dataflow

def _dataflow_phases(graph: StepGraph, loss: int, after_gradients: set[int], explicit: bool) -> list:
    loss_value = graph.results[loss]
    if loss_value not in graph.producer:
        raise ValueError(f"the loss (result #{loss}) is an argument of @main, not computed by it")
    loss_op = graph.producer[loss_value]
    others = {graph.producer[v] for n, v in enumerate(graph.results) if n != loss and v in graph.producer}
    feeds_others = set(graph.reachable(others, graph.inputs))
    seed = next((i for i in range(loss_op + 1, len(graph.ops))
                 if graph.constant_valued[i] and i in feeds_others), None)
    if seed is None:
        raise ValueError(f"no backward pass follows the loss (result #{loss}): @main has no cotangent seed; "
                         "lower jax.grad of the loss, or pass loss=<result number> if another result is the loss")
    linearity = _linearity(graph, seed)
    phase: list = [None] * len(graph.ops)
    for i in reversed(range(seed, len(graph.ops))):  # reverse: a scaling's users are decided first
        if linearity[i] == _K:
            continue
        if explicit:
            phase[i] = APPLY if i in after_gradients else BACKWARD
        elif linearity[i] == _N:
            phase[i] = APPLY
        else:
            trailing = (graph.ops[i].name in _SCALING and graph.users[i]
                        and all(phase[u] == APPLY for u in graph.users[i])
                        and not any(v in graph.results for v in graph.ops[i].results))
            phase[i] = APPLY if trailing else BACKWARD
    feeds_loss = set(graph.reachable([loss_op], graph.inputs))
    needed = set(graph.reachable([i for i, p in enumerate(phase) if p == BACKWARD], graph.inputs)) | feeds_loss
    for i in reversed(range(len(graph.ops))):
        if phase[i] is not None or graph.constant_valued[i]:
            continue
        # A transpose rule rearranges forward values for its backward ops (the broadcast
        # factor of a product): such a copy goes with its users, as a constant does.
        rearranges = (graph.ops[i].name in _REARRANGING and i not in feeds_loss and graph.users[i]
                      and all(phase[u] == BACKWARD for u in graph.users[i]))
        phase[i] = BACKWARD if rearranges else FORWARD if i in needed else APPLY
    return phase


def _linearity(graph: StepGraph, seed: int) -> list[int]:
    """K, L or N for each op's results (see the module docstring); ops before the seed are K."""
    linearity = [_K] * len(graph.ops)
    zero = [False] * len(graph.ops)
    for i, op in enumerate(graph.ops):
        if op.name == "stablehlo.constant":
            value = op.attributes["value"]
            zero[i] = (isinstance(value, ir.DenseElementsAttr) and value.is_splat
                       and value.get_splat_value().value == 0)
        elif op.name in _REARRANGING and op.operands[0] in graph.producer:
            zero[i] = zero[graph.producer[op.operands[0]]]
        if i == seed:
            linearity[i] = _L
        elif i > seed:
            linearity[i] = _classify(graph, i, linearity, zero)
    return linearity


def _classify(graph: StepGraph, i: int, linearity: list[int], zero: list[bool]) -> int:
    def of(value: ir.Value) -> int:
        return linearity[graph.producer[value]] if value in graph.producer else _K

    def is_zero(value: ir.Value) -> bool:
        return value in graph.producer and zero[graph.producer[value]]

    worst = max((linearity[j] for j in graph.inputs[i]), default=_K)
    if worst != _L:  # K from K inputs; N stays N
        return worst
    op = graph.ops[i]
    operands = list(op.operands)
    kinds = [of(v) for v in operands]
    name = op.name
    if name in _NONLINEAR or name.startswith("chlo."):
        return _N
    if name in _BILINEAR:
        dependent = sum(k != _K for k in kinds)
        return _L if dependent == 1 and (name != "stablehlo.divide" or kinds[0] == _L) else _N
    data, control = _data_operands(name, len(operands))
    if data is not None:
        if any(kinds[k] != _K for k in control):
            return _N
        return _L if all(kinds[k] == _L or is_zero(operands[k]) for k in data) else _N
    if name == "stablehlo.reduce":
        n = len(operands) // 2
        body = [inner.operation.name for inner in op.regions[0].blocks[0].operations]
        sums = body == ["stablehlo.add", "stablehlo.return"] and all(is_zero(v) for v in operands[n:])
        return _L if sums else _N
    return _L  # structural ops and ops without a rule: JAX's transpose is linear


def _data_operands(name: str, count: int) -> tuple[list[int] | None, list[int]]:
    """For an additive op: the operands summed or selected, and the ones that must be K."""
    if name in ("stablehlo.add", "stablehlo.subtract", "stablehlo.concatenate"):
        return list(range(count)), []
    if name == "stablehlo.select":
        return [1, 2], [0]
    if name == "stablehlo.pad":
        return [0, 1], []
    if name == "stablehlo.dynamic_update_slice":
        return [0, 1], list(range(2, count))
    if name == "stablehlo.scatter":
        n = (count - 1) // 2
        return [*range(n), *range(n + 1, count)], [n]
    return None, []


def _kinds(name: str) -> tuple[str, ...]:
    return (name, *_TRANSPOSES.get(name, ()))


def _dataflow_pairs(graph: StepGraph, phase: list) -> list:
    pairs: list = [None] * len(graph.ops)
    for b, op in enumerate(graph.ops):
        if phase[b] != BACKWARD or graph.constant_valued[b]:
            continue
        saved = [v for v in graph.reads[b] if v in graph.arg_number or (
            phase[graph.producer[v]] == FORWARD and not graph.constant_valued[graph.producer[v]])]
        kinds = _kinds(op.name)
        readers = [f for f in graph.users_of(saved) if phase[f] == FORWARD and graph.ops[f].name in kinds]
        producers = [graph.producer[v] for v in saved if v in graph.producer]
        backward = [j for j in graph.inputs[b] if phase[j] == BACKWARD and pairs[j] is not None]
        if readers:
            pairs[b] = max(readers)
        elif producers:
            pairs[b] = max(producers)
        elif backward:
            pairs[b] = pairs[max(backward)]
    _follow_users(graph, phase, pairs)
    return pairs


def _follow_users(graph: StepGraph, phase: list, pairs: list) -> None:
    """A constant-valued backward op (the seed, a broadcast zero) pairs as its first backward user."""
    for b in reversed(range(len(graph.ops))):
        if phase[b] == BACKWARD and graph.constant_valued[b]:
            pairs[b] = next((pairs[u] for u in graph.users[b] if phase[u] == BACKWARD), None)
