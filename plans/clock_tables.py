"""Clock tables of pipeline schedules (Sec. 2.2, Sec. 5.1's Fig. 5), without IR.

``S`` meshes run ``N`` stages on ``B`` micro-batches; task ``(s, m, kind)`` runs stage
``s``'s forward or backward part on micro-batch ``m`` in one unit of time (a *clock*).
Dependencies: ``F(s, m)`` after ``F(s-1, m)``; ``B(s, m)`` after ``B(s+1, m)`` and
``F(s, m)`` (``B(N-1, m)`` after ``F(N-1, m)``). Each mesh runs its tasks in the order
:func:`mesh_orders` gives, every task as soon as its mesh is free and its dependencies
are done (:func:`clock_table`):

- ``gpipe``: all forwards, then all backwards; one stage per mesh;
- ``1f1b`` (synchronous 1F1B, PipeDream-flush; the paper's choice, Sec. 2.2): mesh
  ``i`` runs ``min(S-i-1, B)`` warm-up forwards, then a forward and a backward in
  turn, then the remaining backwards, so at most ``S - i`` micro-batches are in flight
  on it (the ``s * mem_act`` of Eq. 5); one stage per mesh;
- ``interleaved-1f1b`` (Narayanan et al., SC'21, Sec. 2.2: beyond the paper): each mesh
  holds ``v`` model chunks (*virtual stages*), ``N = S v`` stages in all, stage ``k`` on
  mesh ``k mod S``. Mesh ``i`` takes the micro-batches in groups of ``S``: the forwards
  of a group through its chunks ``0, 1, .., v-1`` in turn, the backwards through
  ``v-1, .., 0``; it runs ``2 (S-i-1) + (v-1) S`` warm-up forwards (all of them when
  fewer), then a forward and a backward in turn, then the remaining backwards. ``B``
  must be a multiple of ``S``, so that every group is whole. With unit-time chunks it
  takes ``2 (B v + S - 1)`` clocks against 1F1B's ``2 (B + S - 1)`` clocks of ``v``
  times longer stages: the bubble ``2 (S-1)`` is the same number of clocks, each ``1/v``
  as long. The price: mesh ``i`` holds up to ``2 (S-i-1) + (v-1) S + 1`` chunks'
  activations, ``1/v`` of a stage's each (mesh 0: ``S (1 + 1/v) - 1/v`` stages' worth
  against 1F1B's ``S``); :func:`in_flight` counts them;
- ``inference``: forwards only; one stage per mesh.

``gpipe`` and ``1f1b`` take ``2 (B + S - 1)`` clocks, the unit-time case of Eq. 2;
``inference`` ``B + S - 1``.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from ..dialect.names import BACKWARD, FORWARD

ScheduleName = Literal["gpipe", "1f1b", "interleaved-1f1b", "inference"]
SCHEDULES: tuple[str, ...] = ("gpipe", "1f1b", "interleaved-1f1b", "inference")
INTERLEAVED = "interleaved-1f1b"


class Task(NamedTuple):
    stage: int
    micro_batch: int
    kind: Literal["forward", "backward"]


def stage_meshes(num_stages: int, virtual_stages: int = 1) -> tuple[int, ...]:
    """The mesh of each stage: ``k mod S`` with ``S = num_stages / virtual_stages`` meshes."""
    if virtual_stages < 1 or num_stages % virtual_stages:
        raise ValueError(f"{num_stages} stages do not make {virtual_stages} virtual stages on each mesh")
    return tuple(k % (num_stages // virtual_stages) for k in range(num_stages))


def check_schedule(schedule: str, num_meshes: int, num_micro_batches: int, virtual_stages: int = 1) -> None:
    """Raise ``ValueError`` saying why ``schedule`` cannot run these sizes."""
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule {schedule!r}; schedules are {', '.join(SCHEDULES)}")
    if num_meshes < 1 or num_micro_batches < 1 or virtual_stages < 1:
        raise ValueError("a schedule needs at least one stage and one micro-batch, on at least one mesh")
    if schedule != INTERLEAVED and virtual_stages != 1:
        raise ValueError(f"the {schedule} schedule runs one stage per mesh, not {virtual_stages}; "
                         f"{INTERLEAVED} runs several")
    if schedule == INTERLEAVED and num_micro_batches % num_meshes:
        raise ValueError(f"{INTERLEAVED} takes the micro-batches in groups of one per mesh: {num_micro_batches} "
                         f"micro-batches are not a multiple of the {num_meshes} meshes")


def mesh_orders(schedule: ScheduleName, num_meshes: int, num_micro_batches: int,
                virtual_stages: int = 1) -> list[list[Task]]:
    """The order in which each mesh runs its tasks (stage ``k`` on mesh ``k mod S``)."""
    check_schedule(schedule, num_meshes, num_micro_batches, virtual_stages)
    if schedule == INTERLEAVED:
        return [_interleaved_order(i, num_meshes, num_micro_batches, virtual_stages) for i in range(num_meshes)]
    orders = []
    for i in range(num_meshes):
        forwards = [Task(i, m, FORWARD) for m in range(num_micro_batches)]
        backwards = [Task(i, m, BACKWARD) for m in range(num_micro_batches)]
        if schedule == "inference":
            orders.append(forwards)
        elif schedule == "gpipe":
            orders.append(forwards + backwards)
        else:
            orders.append(_one_forward_one_backward(forwards, backwards, min(num_meshes - i - 1, num_micro_batches)))
    return orders


def stage_orders(schedule: ScheduleName, num_stages: int, num_micro_batches: int) -> list[list[Task]]:
    """The order in which each stage runs its tasks, for schedules with one stage per mesh."""
    return mesh_orders(schedule, num_stages, num_micro_batches)


def _one_forward_one_backward(forwards: list[Task], backwards: list[Task], warmup: int) -> list[Task]:
    """``warmup`` forwards, then a forward and a backward in turn, then the remaining backwards."""
    order = forwards[:warmup]
    for m in range(len(forwards) - warmup):
        order += [forwards[warmup + m], backwards[m]]
    return order + backwards[len(forwards) - warmup:]


def _interleaved_order(mesh: int, num_meshes: int, num_micro_batches: int, virtual_stages: int) -> list[Task]:
    size, v = num_meshes, virtual_stages
    total = num_micro_batches * v

    def task(n: int, kind: str) -> Task:
        # The n-th forward (backward) of the mesh: group n // (S v), chunk (n // S) mod v (reversed
        # for backwards: the last chunk's gradient comes first), micro-batch n mod S of the group.
        chunk = (n // size) % v
        if kind == BACKWARD:
            chunk = v - 1 - chunk
        return Task(chunk * size + mesh, (n // (size * v)) * size + n % size, kind)

    forwards = [task(n, FORWARD) for n in range(total)]
    backwards = [task(n, BACKWARD) for n in range(total)]
    warmup = (size - mesh - 1) if v == 1 else 2 * (size - mesh - 1) + (v - 1) * size
    return _one_forward_one_backward(forwards, backwards, min(warmup, total))


def dependencies(task: Task, num_stages: int) -> tuple[Task, ...]:
    """The tasks that must finish before ``task`` starts."""
    stage, m, kind = task
    if kind == FORWARD:
        return (Task(stage - 1, m, FORWARD),) if stage else ()
    if stage == num_stages - 1:
        return (Task(stage, m, FORWARD),)
    return (Task(stage + 1, m, BACKWARD), Task(stage, m, FORWARD))


def clock_table(schedule: ScheduleName, num_stages: int, num_micro_batches: int,
                virtual_stages: int = 1) -> list[list[Task]]:
    """The tasks of each clock (stage order), at most one per mesh: every mesh runs its next
    task as soon as it can. ``num_stages`` counts every stage (``S v``)."""
    meshes = stage_meshes(num_stages, virtual_stages)
    orders = mesh_orders(schedule, num_stages // virtual_stages, num_micro_batches, virtual_stages)
    finished: dict[Task, int] = {}
    position = [0] * len(orders)
    clocks: list[list[Task]] = []
    while len(finished) < sum(len(order) for order in orders):
        clock = len(clocks)
        ready = [order[position[i]] for i, order in enumerate(orders) if position[i] < len(order)
                 and all(finished.get(d, clock) < clock for d in dependencies(order[position[i]], num_stages))]
        if not ready:  # the orders above never get here; a wrong order would
            raise ValueError(f"the {schedule} orders wait on each other at clock {clock}")
        for task in ready:
            finished[task] = clock
            position[meshes[task.stage]] += 1
        clocks.append(sorted(ready))
    return clocks


def in_flight(schedule: ScheduleName, num_stages: int, num_micro_batches: int,
              virtual_stages: int = 1) -> list[int]:
    """Per mesh, the most (stage, micro-batch) activations forwarded and not yet backwarded at
    once: stages' worth under one stage per mesh, chunks' (``1/v`` of a stage each) under
    ``interleaved-1f1b``."""
    meshes = stage_meshes(num_stages, virtual_stages)
    peak, live = [0] * (num_stages // virtual_stages), [0] * (num_stages // virtual_stages)
    for clock in clock_table(schedule, num_stages, num_micro_batches, virtual_stages):
        for task in clock:
            k = meshes[task.stage]
            live[k] += 1 if task.kind == FORWARD else -1
            peak[k] = max(peak[k], live[k])
    return peak


def bubble_fraction(schedule: ScheduleName, num_stages: int, num_micro_batches: int,
                    virtual_stages: int = 1) -> float:
    """The share of mesh-clocks in which a mesh idles: ``1 - tasks / (S x clocks)``."""
    table = clock_table(schedule, num_stages, num_micro_batches, virtual_stages)
    num_meshes = num_stages // virtual_stages
    return 1 - sum(map(len, table)) / (num_meshes * len(table))
