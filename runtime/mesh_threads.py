"""Run a step's per-mesh instruction streams at once: a thread per mesh.

A pipeline schedule (Sec. 5) is one instruction stream per mesh whose only
synchronisation is that a send and the recv of the same transfer and micro-batch
meet. :func:`~alpa_mlir.plans.schedules.interleave` flattens the streams into one
order that respects it, which a runtime that runs one program at a time walks;
:func:`run_streams` instead gives every mesh a thread that walks the mesh's own
instructions in their order:

- a send waits until its recv's mesh is at the recv, then runs (the transfer is one
  collective program over both meshes), and then the recv's mesh goes on: the
  rendezvous of the schedule, so no two programs in flight share a device (meshes are
  disjoint), and XLA:CPU's shared thread pool is never asked to run two programs'
  partitions on one device at once;
- every other instruction runs when its mesh gets to it.

A set of streams that ``interleave`` orders without a deadlock cannot deadlock here:
every recv waits for a send that comes before it in that order. When an instruction
fails, or the caller is interrupted, the other threads stop at their next instruction
or meeting, and :func:`run_streams` raises the failure.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable, Hashable, Sequence

from ..dialect.schedule_ops import Instruction, Recv, Send


class _Abandoned(Exception):
    """Raised in a mesh's thread when another mesh's failed: the step is over."""


class _Meetings:
    """Which recvs have been reached and which transfers have run, this step."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._reached: set[Hashable] = set()
        self._ran: set[Hashable] = set()
        self.failed = False

    def _wait(self, happened: set[Hashable], key: Hashable) -> None:
        with self._changed:
            self._changed.wait_for(lambda: self.failed or key in happened)
            if self.failed:
                raise _Abandoned

    def _mark(self, happened: set[Hashable], key: Hashable) -> None:
        with self._changed:
            happened.add(key)
            self._changed.notify_all()

    def reach(self, key: Hashable) -> None:
        """The recv's mesh is at the recv: the send may run; returns once it has."""
        self._mark(self._reached, key)
        self._wait(self._ran, key)

    def send(self, key: Hashable, run: Callable[[], None]) -> None:
        """Run the send once its recv's mesh is there."""
        self._wait(self._reached, key)
        run()
        self._mark(self._ran, key)

    def fail(self) -> None:
        with self._changed:
            self.failed = True
            self._changed.notify_all()


Streams = dict[int, list[tuple[int, Instruction]]]  # mesh -> (index in the order, instruction), in order


def split_order(order: Sequence[tuple[int, Instruction]]) -> Streams:
    """``order`` (mesh, instruction) as each mesh's instructions, with their indices in it."""
    streams: Streams = {}
    for index, (k, instruction) in enumerate(order):
        streams.setdefault(k, []).append((index, instruction))
    return streams


def run_streams(streams: Streams, execute: Callable[[int, Instruction, int], None],
                pool: concurrent.futures.Executor) -> None:
    """Execute ``streams`` (:func:`split_order`'s), each mesh's instructions in order on a thread
    of ``pool`` (which needs a worker per mesh), the meshes at once; ``execute(mesh,
    instruction, index)`` runs instruction ``index`` of the order. Raises the first failure."""
    meetings = _Meetings()

    def walk(k: int, stream: list[tuple[int, Instruction]]) -> None:
        try:
            for index, instruction in stream:
                if meetings.failed:
                    raise _Abandoned
                if isinstance(instruction, Send):
                    meetings.send((instruction.transfer, instruction.micro_batch),
                                  lambda: execute(k, instruction, index))  # noqa: B023 (called at once)
                    continue
                if isinstance(instruction, Recv):
                    meetings.reach((instruction.transfer, instruction.micro_batch))
                execute(k, instruction, index)
        except BaseException:
            meetings.fail()
            raise

    futures = [pool.submit(walk, k, stream) for k, stream in streams.items()]
    try:
        failures = [f.exception() for f in futures]  # waits for every thread
    except BaseException:  # Ctrl-C: the threads stop after their current program, not at exit
        meetings.fail()
        raise
    for failure in failures:
        if failure is not None and not isinstance(failure, _Abandoned):
            raise failure
