"""runtime/mesh_threads.py: every mesh walks its own stream in a thread; sends meet their recvs."""

from __future__ import annotations

import _thread
import concurrent.futures
import signal
import threading
import time

import pytest
from test_schedules import chain

from alpa_mlir.dialect.schedule_ops import Recv, Run, Send
from alpa_mlir.plans.schedules import analyse, build_streams, interleave
from alpa_mlir.runtime.mesh_threads import run_streams, split_order

WAIT_S = 30.0  # far longer than any wait here takes; a test that reaches it has failed


def walk(order, execute, meshes: int) -> None:
    """``run_streams`` in a thread of its own, so that a hang fails the test instead of the run."""
    failure: list[BaseException] = []

    def run() -> None:
        try:
            with concurrent.futures.ThreadPoolExecutor(meshes) as pool:
                run_streams(split_order(order), execute, pool)
        except BaseException as error:  # noqa: BLE001 (handed to the test)
            failure.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(WAIT_S)
    assert not thread.is_alive(), "run_streams hung"
    if failure:
        raise failure[0]


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b", "interleaved-1f1b"])
@pytest.mark.parametrize("meshes,micro_batches", [(2, 2), (2, 4), (3, 3), (4, 8)])
def test_each_mesh_runs_its_stream_in_order_and_every_send_meets_its_recv(schedule, meshes, micro_batches):
    interleaved = schedule == "interleaved-1f1b"
    program = chain(2 * meshes, meshes=tuple(s % meshes for s in range(2 * meshes))) if interleaved else chain(meshes)
    streams = build_streams(program, schedule, micro_batches)
    order = list(interleave(analyse(program), streams))
    done = {k: 0 for k in streams}  # instructions each mesh has executed
    ran: set = set()
    lock = threading.Lock()

    def execute(k, instruction, index) -> None:
        assert order[index] == (k, instruction)
        with lock:
            key = (instruction.transfer, instruction.micro_batch) if isinstance(instruction, Send | Recv) else None
            if isinstance(instruction, Send):
                # The destination waits at this very recv while the transfer runs.
                destination = next(d for d, stream in streams.items() if Recv(*key) in stream)
                assert done[destination] == streams[destination].index(Recv(*key))
                ran.add(key)
            if isinstance(instruction, Recv):
                assert key in ran
            assert streams[k][done[k]] == instruction  # the mesh's own order
            done[k] += 1

    walk(order, execute, len(streams))
    assert done == {k: len(stream) for k, stream in streams.items()}
    assert len(ran) == sum(isinstance(i, Send) for _, i in order) > 0


def test_meshes_run_at_once():
    # Each mesh's run waits until the other's has started: only meshes that run at once finish.
    started = {0: threading.Event(), 1: threading.Event()}

    def execute(k, instruction, index) -> None:
        started[k].set()
        assert started[1 - k].wait(WAIT_S)

    walk([(0, Run("a", 0)), (1, Run("b", 0))], execute, 2)


def test_a_failure_stops_every_mesh_and_is_raised():
    # Mesh 1 fails before the recv that mesh 0's send waits for: mesh 0 must not wait forever,
    # and nothing of mesh 0 after the send runs.
    order = [(1, Run("b", 0)), (0, Run("a", 0)), (0, Send(0, 0)), (1, Recv(0, 0)), (0, Run("a", 1))]
    executed = []

    def execute(k, instruction, index) -> None:
        if instruction == Run("b", 0):
            raise RuntimeError("mesh 1 broke")
        executed.append(instruction)

    with pytest.raises(RuntimeError, match="mesh 1 broke"):
        walk(order, execute, 2)
    assert Send(0, 0) not in executed and Run("a", 1) not in executed


def test_an_interrupted_step_stops_every_mesh():
    # Ctrl-C while the caller waits: mesh 1, at a recv whose send never comes, must stop
    # too, or the interpreter would wait for its thread at exit. With Python's own SIGINT
    # handler: a process a script starts in the background inherits SIGINT ignored, and
    # there interrupt_main does nothing (the test then waited forever).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        def execute(k, instruction, index) -> None:
            time.sleep(0.5)  # the caller is waiting for the threads by now
            _thread.interrupt_main()

        pool = concurrent.futures.ThreadPoolExecutor(2)
        with pytest.raises(KeyboardInterrupt):
            run_streams(split_order([(0, Run("a", 0)), (1, Recv(0, 0))]), execute, pool)
        stopped = threading.Thread(target=pool.shutdown)  # waits for both threads
        stopped.start()
        stopped.join(WAIT_S)
        assert not stopped.is_alive(), "a mesh's thread still waits"
    finally:
        signal.signal(signal.SIGINT, previous)
