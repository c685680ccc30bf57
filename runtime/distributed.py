"""Multi-controller glue over ``jax.distributed``: one process per host, one plan for all.

Alpa's runtime is multi-controller (DESIGN.md, "Who uses it"): every host runs the
same program, process 0 searches the plan and shares it through JAX's coordination
service, and each process drives its own devices. This module holds the three pieces
that mode needs before any mesh exists:

* :func:`initialize` joins the processes into one JAX cluster (gloo collectives on CPU,
  so cross-process ``collective_permute``/``all_gather`` run on virtual CPU devices too);
* :func:`process_info` / :func:`is_multi_controller` say where this process stands;
* :func:`publish` / :func:`fetch` / :func:`broadcast_string` move a string (the
  serialized plan) from one process to the others through the coordination service's
  key-value store.

Settings come from arguments or, where an argument is ``None``, from these environment
variables (``python -m alpa_mlir.runtime.launch`` sets all four):

* ``ALPA_COORDINATOR``: ``host:port`` of process 0's coordination service.
* ``ALPA_NUM_PROCESSES``: the number of processes in the cluster.
* ``ALPA_PROCESS_ID``: this process's id, ``0 <= id < num_processes``.
* ``ALPA_LOCAL_DEVICES``: virtual CPU devices this process owns (optional; GPU and TPU
  backends use their physical devices and ignore it).

All of this must run before the first JAX computation (or ``jax.devices()``): JAX fixes
its backend, and with it the device count and the cluster, the first time it is used.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import jax

ENV_COORDINATOR = "ALPA_COORDINATOR"
ENV_NUM_PROCESSES = "ALPA_NUM_PROCESSES"
ENV_PROCESS_ID = "ALPA_PROCESS_ID"
ENV_LOCAL_DEVICES = "ALPA_LOCAL_DEVICES"

# Keys this module writes in the coordination service's key-value store live under
# one prefix, so they cannot collide with JAX's own keys. Values need no chunking: a
# 300 MB value went through in one piece (jax 0.10.2, CPU).
_KEY_PREFIX = "alpa_mlir/"


def _distributed_state() -> Any:
    """JAX's process-wide ``jax.distributed`` state (there is no public accessor)."""
    from jax._src import distributed

    return distributed.global_state


def _backends_are_initialized() -> bool:
    from jax._src import xla_bridge

    return xla_bridge.backends_are_initialized()


def _setting(value: Any, argument: str, env: str, required: bool = True) -> str | None:
    """``value`` as text, or the environment variable ``env`` when ``value`` is None."""
    if value is not None:
        return str(value)
    from_env = os.environ.get(env)
    if from_env is None or not from_env.strip():
        if required:
            raise ValueError(
                f"initialize(): `{argument}` is not set; pass it or set the environment variable {env} "
                "(python -m alpa_mlir.runtime.launch sets it for each process)"
            )
        return None
    return from_env.strip()


def _integer(text: str | None, argument: str, env: str, minimum: int) -> int | None:
    if text is None:
        return None
    try:
        number = int(text)
    except ValueError:
        raise ValueError(f"initialize(): `{argument}` (or {env}) must be an integer, got {text!r}") from None
    if number < minimum:
        raise ValueError(f"initialize(): `{argument}` (or {env}) must be at least {minimum}, got {number}")
    return number


def _cpu_device_count() -> int:
    """Virtual CPU devices of this process (initialises the backend if it is not yet)."""
    configured = jax.config.jax_num_cpu_devices
    return configured if configured >= 0 else len(jax.local_devices(backend="cpu"))


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None, local_device_count: int | None = None,
               timeout_s: int = 300) -> None:
    """Join this process to the multi-controller cluster.

    Sets CPU collectives to gloo and this process's virtual CPU device count, then calls
    ``jax.distributed.initialize``. Must run before anything initialises the JAX backend.
    Calling it again with the same settings does nothing.

    Args:
      coordinator_address: ``host:port`` of process 0's coordination service
        (``ALPA_COORDINATOR``). Process 0 serves it on that port.
      num_processes: processes in the cluster (``ALPA_NUM_PROCESSES``).
      process_id: this process's id in ``range(num_processes)`` (``ALPA_PROCESS_ID``).
      local_device_count: virtual CPU devices this process owns (``ALPA_LOCAL_DEVICES``).
        When neither is set, the count stays what ``XLA_FLAGS`` says (1 by default).
        It sets ``jax_num_cpu_devices``, which overrides
        ``--xla_force_host_platform_device_count`` and, unlike ``XLA_FLAGS``, is read
        when the backend starts rather than whenever XLA first parsed its flags.
      timeout_s: how long to wait for all processes to connect.

    In a cluster of more than one process, an uncaught exception then prints its
    traceback and ends the process at once with exit code 1 (skipping other exit
    handlers): JAX would otherwise keep a failed process alive at its shutdown barrier
    for up to five minutes, and its peers and the launcher could not tell it failed.
    ``sys.exit(n)`` still waits at that barrier; raise an exception to fail fast.

    Raises:
      ValueError: a setting is missing (the message names the argument and its
        environment variable) or malformed.
      RuntimeError: the backend is already initialised (JAX cannot join a cluster then),
        or the cluster was already initialised with different settings.
    """
    address = _setting(coordinator_address, "coordinator_address", ENV_COORDINATOR)
    assert address is not None
    if ":" not in address or not address.rsplit(":", 1)[1].isdigit():
        raise ValueError(
            f"initialize(): `coordinator_address` (or {ENV_COORDINATOR}) must be host:port, got {address!r}"
        )
    count = _integer(_setting(num_processes, "num_processes", ENV_NUM_PROCESSES),
                     "num_processes", ENV_NUM_PROCESSES, minimum=1)
    rank = _integer(_setting(process_id, "process_id", ENV_PROCESS_ID),
                    "process_id", ENV_PROCESS_ID, minimum=0)
    devices = _integer(_setting(local_device_count, "local_device_count", ENV_LOCAL_DEVICES, required=False),
                       "local_device_count", ENV_LOCAL_DEVICES, minimum=1)
    assert count is not None and rank is not None
    if rank >= count:
        raise ValueError(
            f"initialize(): `process_id` (or {ENV_PROCESS_ID}) is {rank} but must be below "
            f"`num_processes` (or {ENV_NUM_PROCESSES}) = {count}"
        )

    state = _distributed_state()
    if state.client is not None:
        current = (state.coordinator_address, state.num_processes, state.process_id)
        if current != (address, count, rank):
            raise RuntimeError(
                "initialize(): this process already joined a cluster as "
                f"(coordinator_address={current[0]!r}, num_processes={current[1]}, process_id={current[2]}); "
                f"it cannot rejoin as ({address!r}, {count}, {rank}). Use one setting per process."
            )
        if devices is not None and devices != _cpu_device_count():
            raise RuntimeError(
                f"initialize(): this process already runs with {_cpu_device_count()} CPU devices; "
                f"`local_device_count` (or {ENV_LOCAL_DEVICES}) = {devices} cannot change that"
            )
        return

    if _backends_are_initialized():
        have = _cpu_device_count()
        mismatch = (f" with {have} CPU devices, but {devices} were asked for"
                    if devices is not None and devices != have else "")
        raise RuntimeError(
            f"initialize(): the JAX backend is already initialised{mismatch}. Call "
            "alpa_mlir.runtime.distributed.initialize() before any JAX computation or jax.devices() call, "
            "e.g. first thing in the script"
        )

    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    if devices is not None:
        jax.config.update("jax_num_cpu_devices", devices)
    jax.distributed.initialize(coordinator_address=address, num_processes=count, process_id=rank,
                               initialization_timeout=timeout_s)
    if count > 1:
        _exit_at_once_on_uncaught_exceptions()


def _exit_at_once_on_uncaught_exceptions() -> None:
    """Make a process that dies of an exception exit now, with code 1.

    JAX's exit handler waits at a shutdown barrier until every process arrives (up to
    five minutes), so without this a failed process would sit there, still alive, while
    its peers wait for it in a collective, and no launcher could tell that it failed.
    """
    previous = sys.excepthook

    def report_and_exit(kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
        previous(kind, error, tb)
        sys.stderr.write(f"alpa_mlir: process {_distributed_state().process_id} failed; exiting without "
                         "waiting for the other processes at JAX's shutdown barrier\n")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)

    sys.excepthook = report_and_exit


def is_multi_controller() -> bool:
    """Whether this process joined a cluster of more than one process (no backend start)."""
    state = _distributed_state()
    return state.client is not None and (state.num_processes or 1) > 1


@dataclass(frozen=True, slots=True)
class ProcessInfo:
    """Where this process stands in the cluster.

    Attributes:
      process_id: this process's id (0 for a single controller).
      num_processes: processes in the cluster (1 for a single controller).
      local_devices: the devices this process drives, in JAX's order.
    """

    process_id: int
    num_processes: int
    local_devices: tuple[jax.Device, ...]

    @property
    def is_coordinator(self) -> bool:
        """Process 0 searches and publishes the plan."""
        return self.process_id == 0


def process_info() -> ProcessInfo:
    """This process's :class:`ProcessInfo` (starts the JAX backend if it is not yet)."""
    return ProcessInfo(jax.process_index(), jax.process_count(), tuple(jax.local_devices()))


def _client() -> Any:
    client = _distributed_state().client
    if client is None:
        raise RuntimeError("the coordination service is not running; call "
                           "alpa_mlir.runtime.distributed.initialize() first")
    return client


def publish(key: str, value: str) -> None:
    """Store ``value`` under ``key`` for every process to :func:`fetch`.

    A key is written once per cluster run; publish a new key (e.g. with a step number)
    for a new value.

    Raises:
      RuntimeError: :func:`initialize` has not run, or ``key`` was already published.
    """
    try:
        _client().key_value_set(_KEY_PREFIX + key, value)
    except Exception as error:  # jaxlib raises its own XlaRuntimeError type
        if "ALREADY_EXISTS" in str(error):
            raise RuntimeError(f"publish(): key {key!r} was already published; use a new key") from None
        raise


def fetch(key: str, timeout_s: float = 300.0) -> str:
    """The value some process :func:`publish`-ed under ``key``, waiting up to ``timeout_s``.

    Raises:
      RuntimeError: :func:`initialize` has not run.
      TimeoutError: nothing was published under ``key`` in time (did process 0 fail
        before publishing?).
    """
    client = _client()
    try:
        return client.blocking_key_value_get(_KEY_PREFIX + key, max(1, int(timeout_s * 1000)))
    except Exception as error:  # jaxlib raises its own XlaRuntimeError type
        if "DEADLINE_EXCEEDED" in str(error):
            raise TimeoutError(
                f"fetch(): nothing was published under {key!r} within {timeout_s:g} s; "
                "check that the publishing process is alive and uses the same key"
            ) from None
        raise


def broadcast_string(key: str, value: str | None, timeout_s: float = 300.0, source: int = 0) -> str:
    """Process ``source``'s ``value``, on every process.

    Every process calls it with the same ``key``; only ``source`` needs a ``value``
    (others may pass ``None``). With a single controller it returns ``value``.

    Raises:
      ValueError: ``source`` passed no value.
      TimeoutError: as :func:`fetch`.
    """
    state = _distributed_state()
    rank = state.process_id if state.client is not None else 0
    if rank == source:
        if value is None:
            raise ValueError(f"broadcast_string(): process {source} is the source of {key!r} but passed no value")
        if state.client is not None:
            publish(key, value)
        return value
    return fetch(key, timeout_s)
