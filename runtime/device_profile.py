"""Measure this machine's :class:`~alpa_mlir.plans.device_profile.DeviceProfile`, once, and cache it.

:func:`local_profile` reads the profile of the local devices from the cache directory
(``$ALPA_MLIR_CACHE_DIR``, else ``$XDG_CACHE_HOME/alpa_mlir``, else
``~/.cache/alpa_mlir``), keyed by platform, device kind, device count and, on CPUs, the
host's cores; where there is none it measures one (13 s on a quiet 2-core machine with 8
virtual devices, longer beside other work, whose load it then records) and writes it there.

Every measurement is the median of timed runs after a warm-up, with the time of an
empty program on as many devices taken off, except ``launch``, which is that time
itself through the runtime's own :class:`~alpa_mlir.runtime.mesh_executable.MeshExecutable`.

:func:`local_dot_seconds` completes the profile's dot table: the dots a stage search
asks for that the cache lacks are timed (:func:`time_dots`) and added to the cached file.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import hashlib
import json
import logging
import os
import re
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from ..dialect.mesh import DeviceMesh
from ..dialect.sharding import ShardingSpec
from ..plans.device_profile import DeviceProfile, DeviceProfileError, Dot
from ..plans.reshard_plan import plan_reshard
from .distributed import broadcast_string, is_multi_controller, process_info
from .profiling import time_module
from .transfer import CrossMeshTransfer

logger = logging.getLogger(__name__)

MATMUL = (64, 128, 256, 512)  # sides of the square matmuls each device computes
MATMUL_WORK = 2.0**28  # FLOPs per device of each matmul measurement
ELEMENTWISE = 1 << 20  # float32 elements per device
COLLECTIVE_BYTES = (1 << 14, 1 << 20)  # per device
COLLECTIVE_CHAIN = 4  # collectives one after the other in each timed program
DTYPES = ("float32", "bfloat16")
REPEATS = 5
DOT_ROUNDS = 7  # timed rounds over all the dots asked at once (each program's median)
DOT_CHAIN = 4  # more dots in the longer of a dot's two programs
SYNC_CHAIN = 12  # collectives between matmuls in the collective_sync program
CALL_BUFFERS = 32  # arguments and results of the program that call_buffers times
CALL_REPEATS = 15  # timed calls of each program for call_buffers and transfer_launch (each well under 1 ms)
BUSY = (40, 128)  # matmuls and their side of the program that gives device_copy's value (about 1 ms here)


@functools.cache
def local_profile() -> DeviceProfile:
    """This machine's profile: from the cache, else measured now and cached. Under
    ``jax.distributed`` every process takes the coordinator's, so that all plan alike."""
    if not is_multi_controller():
        return cached_profile(cache_path())
    coordinator = process_info().is_coordinator
    text = broadcast_string("device-profile", cached_profile(cache_path()).to_json() if coordinator else None)
    return DeviceProfile.from_json(text, "the coordinator's device profile")


def cache_path() -> Path:
    """Where :func:`local_profile` keeps the profile of the local devices."""
    root = os.environ.get("ALPA_MLIR_CACHE_DIR") or \
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "alpa_mlir"
    device = jax.local_devices()[0]
    # The CPUs this process may run on (launch --cpus-per-process gives it fewer than the host's).
    cores = f"-{len(os.sched_getaffinity(0))}cores" if device.platform == "cpu" else ""
    kind = re.sub(r"[^A-Za-z0-9]+", "_", device.device_kind).strip("_")
    return Path(root) / f"device-profile-{device.platform}-{kind}-{len(jax.local_devices())}{cores}.json"


def local_dot_seconds(dots: Sequence[Dot]) -> dict[str, float]:
    """Seconds of each of ``dots`` on the local devices (by ``Dot.key``): from the cached
    profile or this process's earlier answers, the rest timed now, all at once, and added
    to the cached profile. Under ``jax.distributed`` the coordinator times them and every
    process takes its answer (all ask alike, as all plan alike)."""
    missing = [dot for dot in dict.fromkeys(dots) if dot.key not in _TIMED_DOTS and dot.key not in local_profile().dots]
    if missing:
        coordinator = not is_multi_controller() or process_info().is_coordinator
        measured = time_dots(missing) if coordinator else None
        name = hashlib.sha1("\n".join(dot.key for dot in missing).encode()).hexdigest()
        measured = json.loads(broadcast_string(f"dot-profile-{name}", json.dumps(measured) if coordinator else None))
        _TIMED_DOTS.update(measured)
        if coordinator:
            _add_dots(cache_path(), {dot: measured[dot.key] for dot in missing})
    return {dot.key: _TIMED_DOTS[dot.key] if dot.key in _TIMED_DOTS else local_profile().dots[dot.key]
            for dot in dots}


# The dots this process timed (local_profile() stays what the cache held when it was read).
_TIMED_DOTS: dict[str, float] = {}


def _add_dots(path: Path, dots: dict[Dot, float]) -> None:
    """``dots`` added to the profile cached at ``path`` (as it is now: another process may
    have added its own)."""
    try:
        _save(path, DeviceProfile.load(path).with_dots(dots))
    except (DeviceProfileError, OSError) as error:
        logger.warning("cannot add the timed dots to the device profile in %s: %s", path, error)


def time_dots(dots: Sequence[Dot], devices: list | None = None) -> dict[str, float]:
    """Seconds of each of ``dots`` (by ``Dot.key``) on ``devices`` (the local ones), as one
    more dot costs inside a program: the difference between a program of ``DOT_CHAIN + 1``
    of them (each on operands of its own) and one of one, over ``DOT_CHAIN``. (Alone in its
    program a dot measured up to 1.4x slower than in a stage's program here;
    ``benchmarks/dot_costs.py`` measures the table against the stages.) In
    each program ``dot.devices`` devices compute their share at once. All programs are
    compiled first, then timed in ``DOT_ROUNDS`` rounds over all of them, so that a busy
    moment of the machine touches every dot alike; each program's time is its median."""
    devices = list(devices or jax.local_devices())
    logger.info("timing %d dots (once; cached with the device profile)", len(dots))
    start = time.perf_counter()
    programs = []
    for dot in dots:
        mesh = Mesh(np.array(devices[:dot.devices]), ("d",))
        numbers = ((dot.lhs_contracting, dot.rhs_contracting), (dot.lhs_batch, dot.rhs_batch))
        body = functools.partial(_dots, numbers, np.dtype(jnp.dtype(dot.result_dtype)))
        call = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("d"), out_specs=P("d")))
        # Operands of their own for every dot of the chain: none is laid out once for all.
        operands = [(_placed(mesh, (dot.devices, *dot.lhs), dot.dtype, 1.0 / max(1, *dot.lhs)),
                     _placed(mesh, (dot.devices, *dot.rhs), dot.dtype, 1.0 / max(1, *dot.rhs)))
                    for _ in range(DOT_CHAIN + 1)]
        programs += [(call, (tuple(operands[:1]),)), (call, (tuple(operands),))]
    with concurrent.futures.ThreadPoolExecutor(len(os.sched_getaffinity(0))) as pool:  # XLA compiles without the GIL
        programs = list(zip(pool.map(lambda program: program[0].lower(*program[1]).compile(), programs),
                            (args for _, args in programs)))
    for call, args in programs:  # warms up
        jax.block_until_ready(call(*args))
    times: list[list[float]] = [[] for _ in programs]
    for _ in range(DOT_ROUNDS):
        for (call, args), timed in zip(programs, times):
            begin = time.perf_counter()
            jax.block_until_ready(call(*args))
            timed.append(time.perf_counter() - begin)
    medians = [statistics.median(t) for t in times]
    seconds = {dot.key: max((medians[2 * k + 1] - medians[2 * k]) / DOT_CHAIN, 1e-7) for k, dot in enumerate(dots)}
    logger.info("%d dots timed in %.1f s", len(dots), time.perf_counter() - start)
    return seconds


def _dots(numbers, result_dtype, operands: tuple[tuple[jax.Array, jax.Array], ...]) -> tuple[jax.Array, ...]:
    """One device's dots, one per (lhs, rhs) pair, on its blocks (a leading axis of 1) of
    operands split on that axis."""
    return tuple(jax.lax.dot_general(lhs[0], rhs[0], numbers, preferred_element_type=result_dtype)[None]
                 for lhs, rhs in operands)


def cached_profile(path: Path) -> DeviceProfile:
    """The profile saved at ``path``; where there is none (or it does not read), the local
    devices measured and saved there; one saved before ``collective_sync``, ``call_buffers``,
    ``transfer_launch`` or ``device_copy`` existed gets what it lacks measured and saved."""
    profile = None
    if path.exists():
        try:
            profile = DeviceProfile.load(path)
        except DeviceProfileError as error:
            logger.warning("%s; measuring the devices again", error)
    if profile is None:
        logger.info("measuring this machine's device profile (once; cached in %s)", path)
        start = time.perf_counter()
        profile = measure_profile()
        logger.info("device profile measured in %.1f s", time.perf_counter() - start)
    else:
        lacking = {name: measure for name, measure in (("collective_sync", measure_sync),
                                                       ("call_buffers", measure_call_buffers),
                                                       ("transfer_launch", measure_transfer_launch),
                                                       ("device_copy", measure_device_copy))
                   if not getattr(profile, name) and (profile.devices > 1 or name == "call_buffers")}
        if not lacking:
            return profile
        logger.info("measuring %s (once; added to %s)", ", ".join(lacking), path)
        profile = dataclasses.replace(profile, **{name: measure() for name, measure in lacking.items()})
    try:
        _save(path, profile)
    except OSError as error:
        logger.warning("cannot cache the device profile in %s: %s", path, error.strerror)
    return profile


def _save(path: Path, profile: DeviceProfile) -> None:
    """``profile`` saved at ``path``, whole or not at all, should another process read it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    profile.save(temporary)
    os.replace(temporary, path)


def measure_profile(devices: list | None = None) -> DeviceProfile:
    """Measure the profile of ``devices`` (the local ones), at every power-of-two count of them."""
    devices = list(devices or jax.local_devices())
    sizes = _device_counts(len(devices))
    matmul: dict[str, dict[int, dict[float, float]]] = {dtype: {} for dtype in DTYPES}
    bandwidth, launch, collectives = {}, {}, []
    for n in sizes:
        mesh = Mesh(np.array(devices[:n]), ("d",))
        empty = _seconds(jax.jit(lambda x: x + 1), _placed(mesh, (n,), "float32"))
        for dtype in DTYPES:
            matmul[dtype][n] = {}
            for side in MATMUL:  # on each device a chain of square matmuls, ~2^28 FLOPs in all
                flops = 2.0 * side**3
                chain = max(1, int(MATMUL_WORK // flops))
                seconds = _seconds(jax.jit(functools.partial(_matmul_chain, chain)),
                                   _placed(mesh, (n, side, side), dtype),
                                   _placed(mesh, (n, side, side), dtype, value=1.0 / side)) - empty
                matmul[dtype][n][flops] = chain * flops / max(seconds, 1e-9)
        seconds = _seconds(jax.jit(lambda x: x * 2 + 1), _placed(mesh, (n * ELEMENTWISE,), "float32")) - empty
        bandwidth[n] = 4.0 * ELEMENTWISE / max(seconds, 1e-9)
        launch[n] = time_module(_identity_module(1), DeviceMesh((1, n)), REPEATS)
        if n > 1:
            for kind, body in _COLLECTIVES.items():
                call = jax.jit(jax.shard_map(functools.partial(_collective_chain, body), mesh=mesh,
                                             in_specs=P("d"), out_specs=P("d")))
                for nbytes in COLLECTIVE_BYTES:
                    elements = nbytes // 4
                    seconds = (_seconds(call, _placed(mesh, (n * elements,), "float32")) - empty) / COLLECTIVE_CHAIN
                    counted = nbytes * n if kind == "all-gather" else nbytes  # the cost model's M
                    collectives.append((kind, n, float(counted), max(seconds, 0.0)))
    device = devices[0]
    return DeviceProfile(platform=device.platform, device_kind=device.device_kind, devices=len(devices),
                         matmul_flops=matmul, memory_bandwidth=bandwidth, launch=launch,
                         collectives=tuple(collectives), collective_sync=measure_sync(devices),
                         call_buffers=measure_call_buffers(devices), transfer_launch=measure_transfer_launch(devices),
                         device_copy=measure_device_copy(devices))


def measure_sync(devices: list | None = None) -> dict[int, float]:
    """``collective_sync`` of ``devices`` (the local ones) at every power-of-two count from 2:
    a program of ``SYNC_CHAIN`` steps, each a 64x256 by 256x256 matmul on every device and
    then an all-reduce of one 256-element row, less the same program without the
    all-reduces, over ``SYNC_CHAIN``."""
    devices = list(devices or jax.local_devices())
    sync = {}
    for n in _device_counts(len(devices))[1:]:
        mesh = Mesh(np.array(devices[:n]), ("d",))
        x, w = _placed(mesh, (n * 64, 256), "float32", 1.0), _placed(mesh, (n * 256, 256), "float32", 1.0 / 256)
        seconds = [_seconds(jax.jit(jax.shard_map(functools.partial(_sync_chain, reduce), mesh=mesh,
                                                  in_specs=P("d"), out_specs=P("d"))), x, w)
                   for reduce in (False, True)]
        sync[n] = max(seconds[1] - seconds[0], 0.0) / SYNC_CHAIN
    return sync


def measure_call_buffers(devices: list | None = None) -> dict[int, float]:
    """``call_buffers`` of ``devices`` (the local ones) at every power-of-two count: a program
    taking and giving ``CALL_BUFFERS`` 2-element vectors against the empty one (one of each),
    both through the runtime's ``MeshExecutable``, per array more."""
    devices = list(devices or jax.local_devices())
    buffers = {}
    for n in _device_counts(len(devices)):
        mesh = DeviceMesh((1, n), device_ids=tuple(d.id for d in devices[:n]))
        seconds = [time_module(_identity_module(count), mesh, CALL_REPEATS) for count in (1, CALL_BUFFERS)]
        buffers[n] = max(seconds[1] - seconds[0], 0.0) / (2 * (CALL_BUFFERS - 1))
    return buffers


def measure_transfer_launch(devices: list | None = None) -> dict[int, float]:
    """``transfer_launch`` of ``devices`` (the local ones) at every even count from 2: a
    vector of 2 elements per device moved from the first half of them to the second, each
    device's block to one device, run as the plan's programs (one collective permute)
    through the runtime's ``CrossMeshTransfer``, per program."""
    return _tiny_transfers(devices, direct=False)


def measure_device_copy(devices: list | None = None) -> dict[int, float]:
    """``device_copy`` of ``devices`` (the local ones): the transfer of
    :func:`measure_transfer_launch` as one process runs it, each block copied to its device,
    per copy, each time on a value :func:`_busy` just gave."""
    return _tiny_transfers(devices, direct=True)


def _tiny_transfers(devices: list | None, direct: bool) -> dict[int, float]:
    devices = list(devices or jax.local_devices())
    seconds = {}
    for n in (n for n in _device_counts(len(devices))[1:] if n % 2 == 0):
        half = n // 2
        src, dst = (DeviceMesh((1, half), device_ids=tuple(d.id for d in side))
                    for side in (devices[:half], devices[half:n]))
        spec = ShardingSpec(((1,),))
        transfer = CrossMeshTransfer(plan_reshard((2 * half,), spec, src, spec, dst), src, spec, dst, spec,
                                     np.float32, devices=jax.devices(), direct=direct)
        value = jax.device_put(np.zeros(2 * half, np.float32), transfer.src_sharding)
        if direct:
            weights = jax.device_put(np.eye(BUSY[1], dtype=np.float32), NamedSharding(transfer.src_sharding.mesh, P()))
            produce = functools.partial(jax.jit(_busy, out_shardings=transfer.src_sharding), value, weights)
            seconds[n] = _seconds_after(transfer, produce, CALL_REPEATS) / half
        else:
            seconds[n] = _seconds(transfer, value, repeats=CALL_REPEATS) / (1 + len(transfer.stages))
    return seconds


def _device_counts(devices: int) -> list[int]:
    """The device counts a profile measures: every power of two up to ``devices``, and ``devices``."""
    return sorted({1 << k for k in range(devices.bit_length()) if 1 << k <= devices} | {devices})


def _busy(x: jax.Array, w: jax.Array) -> jax.Array:
    """``x + 1``, after matmuls that keep every device of its mesh busy for a while, as a stage does
    (XLA:CPU's threads go on running after a program: a copy right after one took 1.8x as long
    as one after nothing, here)."""
    y = w
    for _ in range(BUSY[0]):
        y = jnp.tanh(y @ w)
    return x + 1 + 1e-30 * y[0, 0]


def _sync_chain(reduce: bool, x: jax.Array, w: jax.Array) -> jax.Array:
    for _ in range(SYNC_CHAIN):
        x = jnp.tanh(x @ w)
        if reduce:  # every device waits for the others' matmul
            x = x + 1e-9 * jax.lax.psum(x[:1], "d")
    return x


def _identity_module(count: int) -> str:
    """A program that takes ``count`` 2-element vectors and gives each added to itself
    (one: the empty program of ``launch[n]``)."""
    types = ", ".join(["tensor<2xf32>"] * count)
    body = "".join(f"  %{k} = stablehlo.add %x{k}, %x{k} : tensor<2xf32>\n" for k in range(count))
    return (f"func.func @main({', '.join(f'%x{k}: tensor<2xf32>' for k in range(count))}) -> ({types}) {{\n{body}"
            f"  return {', '.join(f'%{k}' for k in range(count))} : {types}\n}}\n")


# Each collective on a device's block of a vector split over the devices, as its output.
_COLLECTIVES: dict[str, Callable] = {
    "all-reduce": lambda x: jax.lax.psum(x, "d"),
    "all-gather": lambda x: jax.lax.all_gather(x, "d", tiled=True)[:x.shape[0]],
    "reduce-scatter": lambda x: jnp.tile(jax.lax.psum_scatter(x, "d", tiled=True), jax.lax.axis_size("d")),
    "all-to-all": lambda x: jax.lax.all_to_all(x, "d", 0, 0, tiled=True),
}


def _collective_chain(body: Callable, x: jax.Array) -> jax.Array:
    for _ in range(COLLECTIVE_CHAIN):  # each on the last one's result: not combined
        x = body(x) * 0.5
    return x


def _matmul_chain(length: int, x: jax.Array, w: jax.Array) -> jax.Array:
    # w's entries are 1/side: x stays all ones.
    return jax.lax.fori_loop(0, length, lambda _, y: jnp.matmul(y, w), x)


def _placed(mesh: Mesh, shape: tuple[int, ...], dtype: str, value: float = 1.0) -> jax.Array:
    """A ``shape`` array of ``value`` split over the devices on its first dimension."""
    return jax.device_put(jnp.full(shape, value, dtype), NamedSharding(mesh, P("d")))


def _seconds_after(function: Callable, make_input: Callable[[], jax.Array], repeats: int) -> float:
    """Median seconds of a call on an input ``make_input`` made (untimed) just before it, after
    one warm-up call: what a step's instruction pays right after the program that gave its value."""
    jax.block_until_ready(function(make_input()))
    times = []
    for _ in range(repeats):
        value = jax.block_until_ready(make_input())
        start = time.perf_counter()
        jax.block_until_ready(function(value))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _seconds(function: Callable, *args: jax.Array, repeats: int = REPEATS) -> float:
    """Median seconds of a call on ``args``, after one warm-up call."""
    return _seconds_after(lambda same: function(*same), lambda: args, repeats)
