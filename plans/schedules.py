"""Per-mesh instruction streams (Sec. 6) of a pipelined step under a clock table (``clock_tables.py``), without IR.

:class:`StepProgram` is ``@main`` as plain data: its stage calls, its cross-mesh
transfers and what it returns, all for one micro-batch, and the mesh of each stage
(``stage_meshes``: stage ``s`` on mesh ``s`` unless it says otherwise; under
``interleaved-1f1b`` stage ``k`` is on mesh ``k mod S``). :func:`build_streams` turns it
and a clock table into one instruction list per mesh (``dialect/schedule_ops.py``'s
:class:`Run`, :class:`Send`, ...). They are projections of ONE global order, so no two
meshes can wait on each other: clocks in order; within a clock the runs in stage order,
then the transfers of what they produced (after the runs, so that the stages of a clock
compute at the same time), each send next to its recv; then the step-level part.
Transfers are rendezvous, and the first instruction of the global order not yet done is
at the head of every mesh it involves. :func:`simulate` executes streams under those
rules and checks it. A value passed between two stages of one mesh stays where it is:
no transfer.

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
from .clock_tables import (  # noqa: F401  (re-exported: the schedules' names live with their streams)
    INTERLEAVED,
    SCHEDULES,
    ScheduleName,
    Task,
    check_schedule,
    clock_table,
    dependencies,
    stage_orders,
)


class ScheduleError(ValueError):
    """A step that the schedule cannot run; ``callee`` names the stage call at fault, if one is."""

    def __init__(self, message: str, callee: str | None = None):
        super().__init__(message)
        self.callee = callee


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
    """``@main``: its stage calls in order, its explicit transfers, the values it returns and
    the mesh of each stage (``()``: stage ``s`` on mesh ``s``)."""

    calls: tuple[StageCall, ...]
    transfers: tuple[Transfer, ...] = ()
    returned: tuple[str, ...] = ()
    stage_meshes: tuple[int, ...] = ()


def argument_number(name: str) -> int | None:
    """N for the name ``argN`` of ``@main``'s argument N in the step's IR; None for any other value."""
    return int(name[3:]) if name.startswith("arg") and name[3:].isdigit() else None


def is_argument(name: str) -> bool:
    return argument_number(name) is not None


@dataclass(frozen=True)
class Dataflow:
    """What :func:`build_streams` and :func:`simulate` derive from a :class:`StepProgram`.

    ``mesh_of[s]`` is stage ``s``'s mesh; ``transfers`` holds the explicit transfers and the
    implicit moves, in emission order; ``accumulated[k]`` the per-micro-batch values mesh
    ``k`` accumulates; ``kept[k]`` the step-level values of mesh ``k`` that ``@main`` returns.
    """

    num_stages: int
    mesh_of: tuple[int, ...]
    calls: dict[str, StageCall]
    transfers: dict[TransferKey, Transfer]
    step_transfers: frozenset[TransferKey]
    accumulated: dict[int, frozenset[str]]
    kept: dict[int, frozenset[str]]

    @property
    def num_meshes(self) -> int:
        return max(self.mesh_of, default=-1) + 1

    @property
    def virtual_stages(self) -> int:
        """Stages per mesh (1 unless several stages share a mesh)."""
        return self.num_stages // self.num_meshes if self.num_meshes else 1


def _stages(program: StepProgram) -> tuple[dict[str, StageCall], int, tuple[int, ...]]:
    """The stage calls by callee, the number of stages and each stage's mesh, checked."""
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
    mesh_of = program.stage_meshes or tuple(range(num_stages))
    if len(mesh_of) != num_stages or sorted(set(mesh_of)) != list(range(len(set(mesh_of)))):
        raise ScheduleError(f"the stages' meshes {list(mesh_of)} must name meshes 0, 1, ..., one per stage of the "
                            f"{num_stages}")
    return calls, num_stages, tuple(mesh_of)


def analyse(program: StepProgram) -> Dataflow:
    """The meshes, transfers (implicit moves included) and accumulations of ``program``."""
    calls, num_stages, mesh_of = _stages(program)
    producer = {r: c for c in program.calls for r in c.results}
    transfers: dict[TransferKey, Transfer] = {t.key: t for t in sorted(program.transfers, key=lambda t: t.key)}
    delivered = {t.result: t for t in transfers.values()}
    for t in transfers.values():
        if t.source not in producer or mesh_of[producer[t.source].stage] != t.src_mesh or t.src_mesh == t.dst_mesh:
            raise ScheduleError(f"transfer {t.key} must move a stage call's result from its mesh to another mesh")

    def home(name: str) -> int | None:
        if name in producer:
            return mesh_of[producer[name].stage]
        return delivered[name].dst_mesh if name in delivered else None

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
            if name in delivered and home(name) != mesh_of[call.stage]:
                raise ScheduleError(f"@{call.callee} on mesh {mesh_of[call.stage]} reads {name}, which transfer "
                                    f"{delivered[name].key} delivers to mesh {home(name)}", call.callee)
            if name in producer and home(name) != mesh_of[call.stage]:  # a cross-mesh read without a transfer
                move = Move(name, home(name), mesh_of[call.stage])
                transfers.setdefault(move, Transfer(move, name, move.src_mesh, move.dst_mesh))
    for name in program.returned:
        if not is_argument(name) and home(name) is None:
            raise ScheduleError(f"@main returns {name}, which no stage call or transfer of @main produces")

    def readers(t: Transfer) -> list[Phase]:
        kinds = [c.kind for c in program.calls if mesh_of[c.stage] == t.dst_mesh and t.result in c.operands]
        if isinstance(t.key, int) and t.result in program.returned:
            kinds.append(APPLY)  # the return reads at step level, as apply parts do
        return kinds

    step_transfers = frozenset(
        t.key for t in transfers.values()
        if producer[t.source].kind == APPLY or (readers(t) and set(readers(t)) == {APPLY}))
    step_readers = ({(mesh_of[c.stage], n) for c in program.calls if c.kind == APPLY for n in c.operands}
                    | {(transfers[k].src_mesh, transfers[k].source) for k in step_transfers}
                    | {(home(n), n) for n in program.returned})
    per_micro_batch = ({(mesh_of[c.stage], r) for c in program.calls if c.kind != APPLY for r in c.results}
                       | {(t.dst_mesh, t.result) for t in transfers.values() if t.key not in step_transfers})
    accumulated = per_micro_batch & step_readers
    meshes = range(len(set(mesh_of)))
    return Dataflow(
        num_stages, tuple(mesh_of), calls, transfers, step_transfers,
        {k: frozenset(n for m, n in accumulated if m == k) for k in meshes},
        {k: frozenset(n for n in program.returned if home(n) == k) for k in meshes})


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
    """Each mesh's instructions for one step of ``program`` under ``schedule``; the stages
    must sit on the meshes the schedule expects (:func:`check_stage_meshes`)."""
    flow = analyse(program)
    if flow.num_stages == 0:
        raise ScheduleError("@main calls no stage parts: run alpa-stage-construction first")
    check_stage_meshes(flow, schedule, num_micro_batches)
    order: list[tuple[int, Instruction]] = []  # the global order: (mesh, instruction)

    def transfer(t: Transfer, m: int | None) -> None:
        order.extend([(t.src_mesh, Send(t.key, m)), (t.dst_mesh, Recv(t.key, m))])
        if t.all_gather:
            order.append((t.dst_mesh, AllGather(t.key, m)))
        if m is not None and t.result in flow.accumulated[t.dst_mesh]:
            order.append((t.dst_mesh, Accumulate((t.result,), m)))

    parts = {(c.stage, c.kind): c for c in program.calls}
    for clock in clock_table(schedule, flow.num_stages, num_micro_batches, flow.virtual_stages):
        ran = [(parts[s, kind], m) for s, m, kind in sorted(clock) if (s, kind) in parts]
        for call, m in ran:
            mesh = flow.mesh_of[call.stage]
            order.append((mesh, Run(call.callee, m)))
            if accumulated := tuple(r for r in call.results if r in flow.accumulated[mesh]):
                order.append((mesh, Accumulate(accumulated, m)))
        for call, m in ran:
            for t in flow.transfers.values():
                if t.source in call.results and t.key not in flow.step_transfers:
                    transfer(t, m)
    pending = [flow.transfers[k] for k in flow.transfers if k in flow.step_transfers]
    for call in (c for c in program.calls if c.kind == APPLY):
        for t in [t for t in pending if t.dst_mesh == flow.mesh_of[call.stage] and t.result in call.operands]:
            transfer(t, None)
            pending.remove(t)
        order.append((flow.mesh_of[call.stage], Apply(call.callee)))
    for t in pending:
        transfer(t, None)
    return {k: _with_frees([i for mesh, i in order if mesh == k], flow.kept[k], flow)
            for k in range(flow.num_meshes)}


def check_stage_meshes(flow: Dataflow, schedule: ScheduleName, num_micro_batches: int) -> None:
    """Raise :class:`ScheduleError` unless the stages sit on the meshes ``schedule`` runs
    them on: one stage per mesh, or, under ``interleaved-1f1b``, stage ``k`` on mesh
    ``k mod S`` with as many stages on every mesh."""
    size, v = flow.num_meshes, flow.virtual_stages

    def forward_of(stage: int) -> str:
        return next(c.callee for c in flow.calls.values() if c.stage == stage and c.kind == FORWARD)

    if schedule != INTERLEAVED and size != flow.num_stages:
        first = next(s for s, k in enumerate(flow.mesh_of) if flow.mesh_of.index(k) != s)
        raise ScheduleError(f"stages {flow.mesh_of.index(flow.mesh_of[first])} and {first} share mesh "
                            f"{flow.mesh_of[first]}; schedule={schedule} runs one stage per mesh: use "
                            f"schedule={INTERLEAVED} for several", forward_of(first))
    wrong = next((s for s, k in enumerate(flow.mesh_of) if k != s % size), None)
    if wrong is not None:
        raise ScheduleError(f"schedule={schedule} runs stage k on mesh k mod {size}, but stage {wrong} is on mesh "
                            f"{flow.mesh_of[wrong]}", forward_of(wrong))
    if size * v != flow.num_stages:
        raise ScheduleError(f"schedule={schedule} needs as many stages on every mesh; {flow.num_stages} stages "
                            f"do not divide evenly over {size} meshes")
    try:
        check_schedule(schedule, size, num_micro_batches, v)
    except ValueError as error:
        raise ScheduleError(str(error)) from None


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
            if call is None or flow.mesh_of[call.stage] != k or (call.kind == APPLY) != isinstance(instruction, Apply):
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
        if argument_number(name) in donated and call.operands.count(name) == 1
        and last[name] == call.callee and name not in program.returned)
        for call in program.calls if call.kind == APPLY}
