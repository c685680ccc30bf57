"""Start a multi-controller program as N local processes: ``python -m alpa_mlir.runtime.launch``.

Usage::

    python -m alpa_mlir.runtime.launch --num-processes 2 [--devices-per-process 4]
        [--cpus-per-process K] [--coordinator localhost:PORT] [--timeout S] script.py [script args]

Each process runs ``sys.executable script.py [script args]`` with the settings that
:func:`alpa_mlir.runtime.distributed.initialize` reads (``ALPA_COORDINATOR``,
``ALPA_NUM_PROCESSES``, ``ALPA_PROCESS_ID``, ``ALPA_LOCAL_DEVICES``), ``JAX_PLATFORMS=cpu``
and ``--xla_force_host_platform_device_count`` in ``XLA_FLAGS``, so N processes with D
virtual CPU devices each stand in for N hosts with D accelerators. Every line a process
prints comes out prefixed with ``[p<i>]``.

``--cpus-per-process K`` gives process i the i-th K of the CPUs the launcher may run on
(``os.sched_getaffinity``, in ascending order), set with ``os.sched_setaffinity`` in the
child before it starts Python: XLA:CPU sizes its thread pools by the CPUs a process may
use, so each process then computes on cores of its own, as each host of a cluster does.
Without it every process may run on every CPU the launcher may.

The launcher exits 0 only when every process does. When one exits non-zero (or dies
from a signal), or ``--timeout`` passes, or the launcher is interrupted (Ctrl-C,
SIGTERM), it stops the others (SIGTERM, then SIGKILL after a grace period: JAX's
preemption notifier catches SIGTERM once a process has joined the cluster) and exits
non-zero with a message naming the process: a multi-controller program whose peer
is gone would otherwise wait in a collective until JAX's heartbeat gives up.

Exit codes: the first failing process's code (128 + signal when a signal killed it),
124 on ``--timeout``, 130 when interrupted, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence, Set
from typing import TextIO

from .distributed import ENV_COORDINATOR, ENV_LOCAL_DEVICES, ENV_NUM_PROCESSES, ENV_PROCESS_ID

EXIT_TIMEOUT = 124
EXIT_INTERRUPTED = 130
# How long a process gets to exit after SIGTERM before SIGKILL.
_GRACE_S = 2.0
_POLL_S = 0.05
_DEVICE_FLAG = "--xla_force_host_platform_device_count"


def free_port() -> int:
    """A TCP port nothing listens on right now (the OS's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("", 0))
        return sock.getsockname()[1]


def process_env(base: dict[str, str], coordinator: str, num_processes: int, process_id: int,
                devices_per_process: int) -> dict[str, str]:
    """``base`` plus the settings process ``process_id`` of the cluster needs."""
    env = dict(base)
    env[ENV_COORDINATOR] = coordinator
    env[ENV_NUM_PROCESSES] = str(num_processes)
    env[ENV_PROCESS_ID] = str(process_id)
    env[ENV_LOCAL_DEVICES] = str(devices_per_process)
    env["JAX_PLATFORMS"] = "cpu"
    # Also in XLA_FLAGS, for scripts that use plain jax.distributed instead of initialize().
    flags = [f for f in env.get("XLA_FLAGS", "").split() if not f.startswith(_DEVICE_FLAG)]
    env["XLA_FLAGS"] = " ".join([*flags, f"{_DEVICE_FLAG}={devices_per_process}"])
    # Lines should reach the terminal as they are printed, not when a buffer fills.
    env["PYTHONUNBUFFERED"] = "1"
    return env


def cpu_sets(num_processes: int, cpus_per_process: int, available: Set[int]) -> list[frozenset[int]]:
    """Disjoint sets of ``cpus_per_process`` CPUs, one per process, the lowest first; a
    ValueError naming the option when ``available`` has too few."""
    cpus = sorted(available)
    need = num_processes * cpus_per_process
    if need > len(cpus):
        raise ValueError(f"--cpus-per-process {cpus_per_process}: {num_processes} processes need {need} CPUs, and "
                         f"this launcher may run on {len(cpus)} ({_cpu_text(cpus)})")
    return [frozenset(cpus[i * cpus_per_process:(i + 1) * cpus_per_process]) for i in range(num_processes)]


def _cpu_text(cpus: Sequence[int]) -> str:
    return "CPU " + ", ".join(map(str, sorted(cpus))) if len(cpus) == 1 else "CPUs " + ", ".join(map(str, sorted(cpus)))


class _Interrupted(Exception):
    """SIGTERM reached the launcher."""


def _forward_lines(stream, prefix: str, out: TextIO, lock: threading.Lock) -> None:
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace").rstrip("\r\n")
        with lock:
            out.write(f"{prefix} {line}\n")
            out.flush()
    stream.close()


def _stop(processes: Sequence[subprocess.Popen]) -> None:
    """SIGTERM every running process group, then SIGKILL what is left after the grace period."""
    running = [p for p in processes if p.poll() is None]
    for proc in running:
        _signal_group(proc, signal.SIGTERM)
    deadline = time.monotonic() + _GRACE_S
    while time.monotonic() < deadline and any(p.poll() is None for p in running):
        time.sleep(_POLL_S)
    for proc in running:
        if proc.poll() is None:
            _signal_group(proc, signal.SIGKILL)
            proc.wait()


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    # Each process leads its own group, so whatever it started goes down with it.
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def _describe(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def launch(script: str, script_args: Sequence[str] = (), num_processes: int = 2, devices_per_process: int = 1,
           coordinator: str | None = None, timeout_s: float | None = None, *, out: TextIO | None = None,
           err: TextIO | None = None, cpus_per_process: int | None = None) -> int:
    """Run ``script`` as ``num_processes`` cooperating processes; the launcher's exit code.

    Args:
      script: the Python file every process runs.
      script_args: its command-line arguments.
      num_processes: processes to start (``ALPA_NUM_PROCESSES``).
      devices_per_process: virtual CPU devices per process (``ALPA_LOCAL_DEVICES``).
      coordinator: ``host:port`` for process 0's coordination service; a free local
        port when omitted.
      timeout_s: stop everything after this many seconds; no limit when omitted.
      out: where the prefixed process output goes (``sys.stdout``).
      err: where the launcher's own messages go (``sys.stderr``).
      cpus_per_process: CPUs of its own per process (module docstring); a ValueError when
        the launcher may run on fewer than ``num_processes`` times as many.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    cpus = None if cpus_per_process is None else cpu_sets(num_processes, cpus_per_process, os.sched_getaffinity(0))
    coordinator = coordinator or f"localhost:{free_port()}"
    lock = threading.Lock()
    processes: list[subprocess.Popen] = []
    readers: list[threading.Thread] = []
    with _sigterm_interrupts():
        try:
            # Every process is started before the first reader thread: the affinity is set
            # between fork and exec (preexec_fn), which is only safe in a single-threaded parent.
            for rank in range(num_processes):
                env = process_env(dict(os.environ), coordinator, num_processes, rank, devices_per_process)
                pin = None if cpus is None else functools.partial(os.sched_setaffinity, 0, cpus[rank])
                processes.append(subprocess.Popen([sys.executable, script, *script_args], env=env,
                                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                                  stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=pin))
                if cpus is not None:
                    _message(err, lock, f"p{rank} runs on {_cpu_text(sorted(cpus[rank]))}")
            for rank, proc in enumerate(processes):
                reader = threading.Thread(target=_forward_lines, args=(proc.stdout, f"[p{rank}]", out, lock),
                                          daemon=True)
                reader.start()
                readers.append(reader)
            code = _wait(processes, timeout_s, err, lock)
        except (KeyboardInterrupt, _Interrupted):
            _message(err, lock, "interrupted; stopping all processes")
            code = EXIT_INTERRUPTED
        finally:
            with _sigint_ignored():  # a second Ctrl-C must not leave processes behind
                _stop(processes)
            for reader in readers:
                reader.join(timeout=_GRACE_S)
    return code


def _wait(processes: Sequence[subprocess.Popen], timeout_s: float | None, err: TextIO,
          lock: threading.Lock) -> int:
    """Wait for all processes to succeed, for one to fail, or for the timeout; the exit code."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        codes = [p.poll() for p in processes]
        running = [f"p{rank}" for rank, code in enumerate(codes) if code is None]
        failed = next(((rank, code) for rank, code in enumerate(codes) if code), None)
        if failed is not None:
            rank, code = failed
            stopping = f"; stopping {', '.join(running)}" if running else ""
            _message(err, lock, f"process {rank} (p{rank}) {_describe(code)}{stopping}")
            return code if code > 0 else 128 - code
        if not running:
            return 0
        if deadline is not None and time.monotonic() > deadline:
            _message(err, lock, f"timed out after {timeout_s:g} s (--timeout); stopping {', '.join(running)}")
            return EXIT_TIMEOUT
        time.sleep(_POLL_S)


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM to the launcher stops the processes, like Ctrl-C (signals work in the main thread only)."""
    if not _in_main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise _Interrupted

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    if not _in_main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _message(err: TextIO, lock: threading.Lock, text: str) -> None:
    with lock:
        err.write(f"alpa_mlir.runtime.launch: {text}\n")
        err.flush()


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def _host_port(text: str) -> str:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"must be host:port (e.g. localhost:12345), got {text!r}")
    return text


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m alpa_mlir.runtime.launch",
        description="Run a multi-controller alpa_mlir script as several local processes on virtual CPU devices.",
    )
    parser.add_argument("--num-processes", type=_positive_int, required=True, help="processes to start")
    parser.add_argument("--devices-per-process", type=_positive_int, default=1,
                        help="virtual CPU devices per process (default 1)")
    parser.add_argument("--cpus-per-process", type=_positive_int, default=None, metavar="K",
                        help="give each process K CPUs of its own (default: every process may use every CPU)")
    parser.add_argument("--coordinator", type=_host_port, default=None,
                        help="host:port of process 0's coordination service (default: a free local port)")
    parser.add_argument("--timeout", type=_positive_seconds, default=None,
                        help="stop all processes and fail after this many seconds")
    parser.add_argument("script", help="the Python script every process runs")
    parser.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments for the script")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    if not os.path.isfile(args.script):
        parser.error(f"argument script: no such file: {args.script!r}")
    if args.cpus_per_process is not None:
        try:
            cpu_sets(args.num_processes, args.cpus_per_process, os.sched_getaffinity(0))
        except ValueError as error:
            parser.error(f"argument {error}")
    return launch(args.script, args.script_args, args.num_processes, args.devices_per_process,
                  args.coordinator, args.timeout, cpus_per_process=args.cpus_per_process)


if __name__ == "__main__":
    sys.exit(main())
