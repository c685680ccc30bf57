"""Measure this machine's :class:`~alpa_mlir.plans.device_profile.DeviceProfile`, once, and cache it.

:func:`local_profile` reads the profile of the local devices from the cache directory
(``$ALPA_MLIR_CACHE_DIR``, else ``$XDG_CACHE_HOME/alpa_mlir``, else
``~/.cache/alpa_mlir``), keyed by platform, device kind, device count and, on CPUs, the
host's cores; where there is none it measures one (13 s on a quiet 2-core machine with 8
virtual devices, longer beside other work, whose load it then records) and writes it there.

Every measurement is the median of timed runs after a warm-up, with the time of an
empty program on as many devices taken off, except ``launch``, which is that time
itself through the runtime's own :class:`~alpa_mlir.runtime.mesh_executable.MeshExecutable`.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from ..dialect.mesh import DeviceMesh
from ..plans.device_profile import DeviceProfile, DeviceProfileError
from .distributed import broadcast_string, is_multi_controller, process_info
from .profiling import time_module

logger = logging.getLogger(__name__)

MATMUL = (64, 128, 256, 512)  # sides of the square matmuls each device computes
MATMUL_WORK = 2.0**28  # FLOPs per device of each matmul measurement
ELEMENTWISE = 1 << 20  # float32 elements per device
COLLECTIVE_BYTES = (1 << 14, 1 << 20)  # per device
COLLECTIVE_CHAIN = 4  # collectives one after the other in each timed program
DTYPES = ("float32", "bfloat16")
REPEATS = 5


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
    cores = f"-{os.cpu_count()}cores" if device.platform == "cpu" else ""
    kind = re.sub(r"[^A-Za-z0-9]+", "_", device.device_kind).strip("_")
    return Path(root) / f"device-profile-{device.platform}-{kind}-{len(jax.local_devices())}{cores}.json"


def cached_profile(path: Path) -> DeviceProfile:
    """The profile saved at ``path``; where there is none (or it does not read), the local
    devices measured and saved there."""
    if path.exists():
        try:
            return DeviceProfile.load(path)
        except DeviceProfileError as error:
            logger.warning("%s; measuring the devices again", error)
    logger.info("measuring this machine's device profile (once; cached in %s)", path)
    start = time.perf_counter()
    profile = measure_profile()
    logger.info("device profile measured in %.1f s", time.perf_counter() - start)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        profile.save(temporary)
        os.replace(temporary, path)  # whole or not at all, should another process read it
    except OSError as error:
        logger.warning("cannot cache the device profile in %s: %s", path, error.strerror)
    return profile


def measure_profile(devices: list | None = None) -> DeviceProfile:
    """Measure the profile of ``devices`` (the local ones), at every power-of-two count of them."""
    devices = list(devices or jax.local_devices())
    sizes = sorted({1 << k for k in range(len(devices).bit_length()) if 1 << k <= len(devices)} | {len(devices)})
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
        launch[n] = time_module(_EMPTY_MODULE, DeviceMesh((1, n)), REPEATS)
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
                         collectives=tuple(collectives))


# The module of an empty program (it adds a 2-element vector to itself), for launch[n].
_EMPTY_MODULE = """
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %x, %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""

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


def _seconds(function: Callable, *args: jax.Array) -> float:
    """Median seconds of a call, after one warm-up call."""
    jax.block_until_ready(function(*args))
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        jax.block_until_ready(function(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times)
