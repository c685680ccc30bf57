"""Pipeline schedules (Sec. 2.2, Sec. 5.1's Fig. 5) and per-mesh instruction streams (Sec. 6), without IR.

**Clock tables.** ``S`` stages run ``B`` micro-batches; task ``(s, m, kind)`` runs
stage ``s``'s forward or backward part on micro-batch ``m`` in one unit of time.
Dependencies: ``F(s, m)`` after ``F(s-1, m)``; ``B(s, m)`` after ``B(s+1, m)`` and
``F(s, m)`` (``B(S-1, m)`` after ``F(S-1, m)``). Each stage runs its tasks in the order
:func:`stage_orders` gives, every task as soon as its stage is free and its
dependencies are done (:func:`clock_table`):

- ``gpipe``: all forwards, then all backwards;
- ``1f1b`` (synchronous 1F1B, PipeDream-flush; the paper's choice, Sec. 2.2): stage
  ``i`` runs ``min(S-i-1, B)`` warm-up forwards, then a forward and a backward in
  turn, then the remaining backwards, so at most ``S - i`` micro-batches are in flight
  on it (the ``s * mem_act`` of Eq. 5);
- ``inference``: forwards only.

Both training schedules take ``2 (B + S - 1)`` clocks, the unit-time case of Eq. 2;
``inference`` ``B + S - 1``.

**Streams.** :class:`StepProgram` is ``@main`` as plain data: its stage calls, its
cross-mesh transfers and what it returns, all for one micro-batch; stage ``s`` runs on
mesh ``s``. :func:`build_streams` turns it and a clock table into one instruction list
per mesh (``dialect/schedule_ops.py``'s :class:`Run`, :class:`Send`, ...). They are
projections of ONE global order, so no two meshes can wait on each other: clocks in
order; within a clock the runs in stage order, then the transfers of what they
produced (after the runs, so that the stages of a clock compute at the same time),
each send next to its recv; then the step-level part. Transfers are rendezvous, and
the first instruction of the global order not yet done is at the head of every mesh
it involves. :func:`simulate` executes streams under those rules and checks it.

**Values.** Forward and backward parts run once per micro-batch, apply parts once per
step. A value of a forward or backward part that an apply part, a step-level transfer
or ``@main``'s return reads is accumulated over the micro-batches: the runtime sums
and divides by ``B``, a mean, which is the full batch's value for a mean loss and its
gradients. A transfer is step-level when it moves an apply result or when only apply
parts (or the return) read what it delivers; it then moves the accumulated value once,
after the last accumulation. Per-micro-batch values are freed after the last
instruction of their mesh that touches them; step-level values after their last
reader, unless ``@main`` returns them. ``@main``'s arguments (parameters, and the
batch the runtime splits) are never freed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from ..dialect.names import APPLY, BACKWARD, FORWARD, Phase
from ..dialect.schedule_ops import (
    Accumulate,
    AllGather,
    Apply,
    Free,
    Instruction,
    Move,
    Recv,
    Run,
    Send,
    TransferKey,
    describe,
)

ScheduleName = Literal["gpipe", "1f1b", "inference"]
SCHEDULES: tuple[str, ...] = ("gpipe", "1f1b", "inference")


class ScheduleError(ValueError):
    """A step that the schedule cannot run; ``callee`` names the stage call at fault, if one is."""

    def __init__(self, message: str, callee: str | None = None):
        super().__init__(message)
        self.callee = callee


class Task(NamedTuple):
    stage: int
    micro_batch: int
    kind: Literal["forward", "backward"]


def stage_orders(schedule: ScheduleName, num_stages: int, num_micro_batches: int) -> list[list[Task]]:
    """The order in which each stage runs its tasks."""
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule {schedule!r}; schedules are {', '.join(SCHEDULES)}")
    if num_stages < 1 or num_micro_batches < 1:
        raise ValueError("a schedule needs at least one stage and one micro-batch")
    orders = []
    for i in range(num_stages):
        forwards = [Task(i, m, FORWARD) for m in range(num_micro_batches)]
        backwards = [Task(i, m, BACKWARD) for m in range(num_micro_batches)]
        if schedule == "inference":
            order = forwards
        elif schedule == "gpipe":
            order = forwards + backwards
        else:
            warmup = min(num_stages - i - 1, num_micro_batches)
            order = forwards[:warmup]
            for m in range(num_micro_batches - warmup):
                order += [forwards[warmup + m], backwards[m]]
            order += backwards[num_micro_batches - warmup:]
        orders.append(order)
    return orders


def dependencies(task: Task, num_stages: int) -> tuple[Task, ...]:
    """The tasks that must finish before ``task`` starts."""
    stage, m, kind = task
    if kind == FORWARD:
        return (Task(stage - 1, m, FORWARD),) if stage else ()
    if stage == num_stages - 1:
        return (Task(stage, m, FORWARD),)
    return (Task(stage + 1, m, BACKWARD), Task(stage, m, FORWARD))


def clock_table(schedule: ScheduleName, num_stages: int, num_micro_batches: int) -> list[list[Task]]:
    """The tasks of each clock (stage order): every stage runs its next task as soon as it can."""
    orders = stage_orders(schedule, num_stages, num_micro_batches)
    finished: dict[Task, int] = {}
    position = [0] * num_stages
    clocks: list[list[Task]] = []
    while len(finished) < sum(len(order) for order in orders):
        clock = len(clocks)
        ready = [order[position[s]] for s, order in enumerate(orders) if position[s] < len(order)
                 and all(finished.get(d, clock) < clock for d in dependencies(order[position[s]], num_stages))]
        if not ready:  # the orders above never get here; a wrong order would
            raise ValueError(f"the {schedule} orders wait on each other at clock {clock}")
        for task in ready:
            finished[task] = clock
            position[task.stage] += 1
        clocks.append(ready)
    return clocks


# ----------------------------------------------------------------------------- the step


@dataclass(frozen=True, slots=True)
class StageCall:
    """A call of ``@main`` to a stage part; result ``k`` is named ``<callee>#<k>``."""

    callee: str
    stage: int
    kind: Phase
    operands: tuple[str, ...]
    num_results: int

    @property
    def results(self) -> tuple[str, ...]:
        return tuple(f"{self.callee}#{k}" for k in range(self.num_results))


@dataclass(frozen=True, slots=True)
class Transfer:
    """``source`` (a stage call's result) moved from mesh ``src_mesh`` to ``dst_mesh``.

    An explicit transfer (``key`` is its ``alpa.transfer``) delivers ``transfer<t>``; an
    implicit :class:`Move` delivers the value under its own name.
    """

    key: TransferKey
    source: str
    src_mesh: int
    dst_mesh: int
    all_gather: bool = False

    @property
    def result(self) -> str:
        return f"transfer{self.key}" if isinstance(self.key, int) else self.source


@dataclass(frozen=True, slots=True)
class StepProgram:
    """``@main``: its stage calls in order, its explicit transfers and the values it returns."""

    calls: tuple[StageCall, ...]
    transfers: tuple[Transfer, ...] = ()
    returned: tuple[str, ...] = ()


def is_argument(name: str) -> bool:
    return name.startswith("arg") and name[3:].isdigit()


@dataclass(frozen=True)
class Dataflow:
    """What :func:`build_streams` and :func:`simulate` derive from a :class:`StepProgram`.

    ``transfers`` holds the explicit transfers and the implicit moves, in emission order;
    ``accumulated[k]`` the per-micro-batch values mesh ``k`` accumulates; ``kept[k]`` the
    step-level values of mesh ``k`` that ``@main`` returns.
    """

    num_stages: int
    calls: dict[str, StageCall]
    transfers: dict[TransferKey, Transfer]
    step_transfers: frozenset[TransferKey]
    accumulated: dict[int, frozenset[str]]
    kept: dict[int, frozenset[str]]


def analyse(program: StepProgram) -> Dataflow:
    """The meshes, transfers (implicit moves included) and accumulations of ``program``."""
    calls: dict[str, StageCall] = {}
    for call in program.calls:
        if call.callee in calls:
            raise ScheduleError(f"@main calls @{call.callee} twice; a stage part runs once per micro-batch",
                                call.callee)
        calls[call.callee] = call
    num_stages = max((c.stage for c in program.calls), default=-1) + 1
    for stage in range(num_stages):
        parts = [c.kind for c in program.calls if c.stage == stage]
        if parts.count(FORWARD) != 1 or parts.count(BACKWARD) > 1:
            raise ScheduleError(f"stage {stage} has {parts.count(FORWARD)} forward and {parts.count(BACKWARD)} "
                                "backward parts; a stage needs one forward part and at most one backward part")
    producer = {r: c for c in program.calls for r in c.results}
    transfers: dict[TransferKey, Transfer] = {t.key: t for t in sorted(program.transfers, key=lambda t: t.key)}
    delivered = {t.result: t for t in transfers.values()}
    for t in transfers.values():
        if t.source not in producer or producer[t.source].stage != t.src_mesh or t.src_mesh == t.dst_mesh:
            raise ScheduleError(f"transfer {t.key} must move a stage call's result from its mesh to another mesh")

    def home(name: str) -> int | None:
        return producer[name].stage if name in producer else delivered[name].dst_mesh if name in delivered else None

    for call in program.calls:
        for name in call.operands:
            if is_argument(name):
                continue
            if home(name) is None:
                raise ScheduleError(f"@{call.callee} reads {name}, which no stage call or transfer of @main produces",
                                    call.callee)
            source = delivered[name].source if name in delivered else name
            if call.kind != APPLY and producer[source].kind == APPLY:
                raise ScheduleError(f"@{call.callee} reads {name}, a result of @{producer[source].callee}: forward "
                                    "and backward parts run before the apply parts", call.callee)
            if name in delivered and home(name) != call.stage:
                raise ScheduleError(f"@{call.callee} on mesh {call.stage} reads {name}, which transfer "
                                    f"{delivered[name].key} delivers to mesh {home(name)}", call.callee)
            if name in producer and home(name) != call.stage:  # a cross-mesh read without a transfer
                move = Move(name, producer[name].stage, call.stage)
                transfers.setdefault(move, Transfer(move, name, move.src_mesh, move.dst_mesh))
    for name in program.returned:
        if not is_argument(name) and home(name) is None:
            raise ScheduleError(f"@main returns {name}, which no stage call or transfer of @main produces")

    def readers(t: Transfer) -> list[Phase]:
        kinds = [c.kind for c in program.calls if c.stage == t.dst_mesh and t.result in c.operands]
        if isinstance(t.key, int) and t.result in program.returned:
            kinds.append(APPLY)  # the return reads at step level, as apply parts do
        return kinds

    step_transfers = frozenset(
        t.key for t in transfers.values()
        if producer[t.source].kind == APPLY or (readers(t) and set(readers(t)) == {APPLY}))
    step_readers = ({(c.stage, n) for c in program.calls if c.kind == APPLY for n in c.operands}
                    | {(transfers[k].src_mesh, transfers[k].source) for k in step_transfers}
                    | {(home(n), n) for n in program.returned})
    per_micro_batch = ({(c.stage, r) for c in program.calls if c.kind != APPLY for r in c.results}
                       | {(t.dst_mesh, t.result) for t in transfers.values() if t.key not in step_transfers})
    accumulated = per_micro_batch & step_readers
    return Dataflow(
        num_stages, calls, transfers, step_transfers,
        {k: frozenset(n for m, n in accumulated if m == k) for k in range(num_stages)},
        {k: frozenset(n for n in program.returned if home(n) == k) for k in range(num_stages)})


# ----------------------------------------------------------------------------- streams

Key = tuple[str, int | None]  # a value's copy on a mesh: (name, micro-batch or None for step-level)


def effects(instruction: Instruction, flow: Dataflow) -> tuple[list[Key], list[Key]]:
    """The values ``instruction`` reads and writes on its own mesh (a free: neither)."""
    match instruction:
        case Run(callee, m):
            call = flow.calls[callee]
            return [(n, m) for n in call.operands if not is_argument(n)], [(n, m) for n in call.results]
        case Apply(callee):
            call = flow.calls[callee]
            return [(n, None) for n in call.operands if not is_argument(n)], [(n, None) for n in call.results]
        case Accumulate(values, m):
            return [(n, m) for n in values], [(n, None) for n in values]
        case Send(key, m):
            return [(flow.transfers[key].source, m)], []
        case Recv(key, m):
            return [], [(flow.transfers[key].result, m)]
        case AllGather(key, m):
            return [(flow.transfers[key].result, m)], [(flow.transfers[key].result, m)]
    return [], []


def build_streams(program: StepProgram, schedule: ScheduleName,
                  num_micro_batches: int) -> dict[int, list[Instruction]]:
    """Each mesh's instructions for one step of ``program`` under ``schedule``."""
    flow = analyse(program)
    if flow.num_stages == 0:
        raise ScheduleError("@main calls no stage parts: run alpa-stage-construction first")
    order: list[tuple[int, Instruction]] = []  # the global order: (mesh, instruction)

    def transfer(t: Transfer, m: int | None) -> None:
        order.extend([(t.src_mesh, Send(t.key, m)), (t.dst_mesh, Recv(t.key, m))])
        if t.all_gather:
            order.append((t.dst_mesh, AllGather(t.key, m)))
        if m is not None and t.result in flow.accumulated[t.dst_mesh]:
            order.append((t.dst_mesh, Accumulate((t.result,), m)))

    parts = {(c.stage, c.kind): c for c in program.calls}
    for clock in clock_table(schedule, flow.num_stages, num_micro_batches):
        ran = [(parts[s, kind], m) for s, m, kind in sorted(clock) if (s, kind) in parts]
        for call, m in ran:
            order.append((call.stage, Run(call.callee, m)))
            if accumulated := tuple(r for r in call.results if r in flow.accumulated[call.stage]):
                order.append((call.stage, Accumulate(accumulated, m)))
        for call, m in ran:
            for t in flow.transfers.values():
                if t.source in call.results and t.key not in flow.step_transfers:
                    transfer(t, m)
    pending = [flow.transfers[k] for k in flow.transfers if k in flow.step_transfers]
    for call in (c for c in program.calls if c.kind == APPLY):
        for t in [t for t in pending if t.dst_mesh == call.stage and t.result in call.operands]:
            transfer(t, None)
            pending.remove(t)
        order.append((call.stage, Apply(call.callee)))
    for t in pending:
        transfer(t, None)
    return {k: _with_frees([i for mesh, i in order if mesh == k], flow.kept[k], flow)
            for k in range(flow.num_stages)}


def _with_frees(stream: list[Instruction], kept: frozenset[str], flow: Dataflow) -> list[Instruction]:
    """``stream`` with a free after the last instruction touching each value that is not kept."""
    last: dict[Key, int] = {}
    for index, instruction in enumerate(stream):
        reads, writes = effects(instruction, flow)
        for key in reads + writes:
            last[key] = index
    frees: dict[int, dict[int | None, list[str]]] = {}
    for (name, m), index in last.items():
        if not (m is None and name in kept):
            frees.setdefault(index, {}).setdefault(m, []).append(name)
    result = []
    for index, instruction in enumerate(stream):
        result.append(instruction)
        result.extend(Free(tuple(names), m) for m, names in frees.get(index, {}).items())
    return result


# ----------------------------------------------------------------------------- simulation


def interleave(flow: Dataflow, streams: dict[int, Sequence[Instruction]]) -> Iterator[tuple[int, Instruction]]:
    """The instructions of ``streams`` as (mesh, instruction) in an order rendezvous transfers allow.

    Every mesh runs its stream in order; a send and the recv of the same transfer and
    micro-batch proceed together (the send is yielded first, then its recv), when both
    meshes are at them; every other instruction proceeds alone. The runtime executes
    this order; every process derives the same one. Raises :class:`ScheduleError` when
    all meshes that have instructions left wait (a deadlock), or when a send or recv
    does not start or end on its mesh.
    """
    position = dict.fromkeys(streams, 0)

    def head(k: int) -> Instruction | None:
        return streams[k][position[k]] if k in streams and position[k] < len(streams[k]) else None

    while any(head(k) is not None for k in streams):
        progressed = False
        for k in streams:
            while (instruction := head(k)) is not None:
                if isinstance(instruction, Send | Recv):
                    t = flow.transfers.get(instruction.transfer)
                    sending = isinstance(instruction, Send)
                    if t is None or (t.src_mesh if sending else t.dst_mesh) != k:
                        raise ScheduleError(f"mesh {k}: {describe(instruction)} does not start or end on this mesh")
                    partner = (Recv if sending else Send)(t.key, instruction.micro_batch)
                    if head(t.dst_mesh if sending else t.src_mesh) != partner:
                        break
                    for mesh, part in ((t.src_mesh, Send(t.key, instruction.micro_batch)),
                                       (t.dst_mesh, Recv(t.key, instruction.micro_batch))):
                        yield mesh, part
                        position[mesh] += 1
                else:
                    yield k, instruction
                    position[k] += 1
                progressed = True
        if not progressed:
            waiting = "; ".join(f"mesh {k} waits at {describe(head(k))}" for k in streams if head(k) is not None)
            raise ScheduleError(f"deadlock: {waiting}")


def simulate(program: StepProgram, streams: dict[int, Sequence[Instruction]], num_micro_batches: int) -> str | None:
    """Run ``streams`` in :func:`interleave`'s order; the first problem found, or ``None``.

    Problems: meshes that all wait (a deadlock), a read of a value that its mesh has not
    produced or received (or an accumulator before all ``num_micro_batches`` additions),
    a free of a value that is not there, and values left at the end that ``@main`` does
    not return.
    """
    flow = analyse(program)
    live: dict[int, set[Key]] = {k: set() for k in streams}
    gathering: dict[int, set[Key]] = {k: set() for k in streams}
    additions: dict[int, Counter] = {k: Counter() for k in streams}

    def step(k: int, instruction: Instruction) -> str | None:
        where = f"mesh {k}: {describe(instruction)}"
        if isinstance(instruction, Free):
            for name in instruction.values:
                if (name, instruction.micro_batch) not in live[k]:
                    return f"{where} frees {name}, which is not on the mesh"
                live[k].remove((name, instruction.micro_batch))
            return None
        if isinstance(instruction, Run | Apply):
            call = flow.calls.get(instruction.callee)
            if call is None or call.stage != k or (call.kind == APPLY) != isinstance(instruction, Apply):
                return f"{where}: @main has no such part on this mesh"
        reads, writes = effects(instruction, flow)
        if isinstance(instruction, AllGather):
            if reads[0] not in gathering[k]:
                return f"{where} before its recv"
            gathering[k].remove(reads[0])
            reads = []
        for name, m in reads:
            if (name, m) not in live[k]:
                return f"{where} reads {name}{'' if m is None else f' (micro-batch {m})'}, which is not on the mesh"
        if isinstance(instruction, Accumulate):
            additions[k].update(instruction.values)
            writes = [w for w in writes if additions[k][w[0]] == num_micro_batches]
        if isinstance(instruction, Recv) and flow.transfers[instruction.transfer].all_gather:
            gathering[k].update(writes)
            writes = []
        live[k].update(writes)
        return None

    try:
        for k, instruction in interleave(flow, streams):
            if problem := step(k, instruction):
                return problem
    except ScheduleError as error:
        return str(error)
    for k in streams:
        left = sorted(((n, m) for n, m in live[k] if not (m is None and n in flow.kept.get(k, ()))), key=str)
        if left:
            name, m = left[0]
            return f"mesh {k} never frees {name}{'' if m is None else f' (micro-batch {m})'}"
    return None


def reusable_arguments(program: StepProgram, order: Sequence[tuple[int, Instruction]],
                       donated: frozenset[int]) -> dict[str, tuple[int, ...]]:
    """Per apply part of ``program``, the operand positions whose buffers it may write its
    results into: ``@main`` arguments the caller donates (``donated``: their numbers) that
    the part reads once, that no instruction after it in ``order`` reads and that ``@main``
    does not return (a parameter and its optimizer state, which the update replaces)."""
    calls = {call.callee: call for call in program.calls}
    last: dict[str, str] = {}  # argument -> the callee of the last instruction that reads it
    for _, instruction in order:
        if isinstance(instruction, Run | Apply):
            for name in calls[instruction.callee].operands:
                last[name] = instruction.callee
    return {call.callee: tuple(
        i for i, name in enumerate(call.operands)
        if is_argument(name) and int(name[3:]) in donated and call.operands.count(name) == 1
        and last[name] == call.callee and name not in program.returned)
        for call in program.calls if call.kind == APPLY}
