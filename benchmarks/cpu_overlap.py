"""Do two XLA:CPU programs on disjoint virtual devices run at once, and do more devices add compute?

The pipeline runtime runs each mesh's instruction stream in a thread of its own on CPU
(``runtime/mesh_threads.py``); whether that brings the step toward Eq. 2's T* depends on
whether XLA:CPU computes two meshes' programs at once, and whether a mesh of n virtual
devices computes n times as fast as one. For each mesh size (1, 2, 4 devices) and two
workloads (a chain of 512^2 matmuls, compute-bound; a chain of 128^2 matmuls, many small
steps), two meshes on disjoint devices each run the same chain on every device:
mesh A alone, A then B, and A and B in two threads; and the devices' throughput as
FLOP/s of the whole mesh, against one device's.

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python benchmarks/cpu_overlap.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from ilp_scaling import command_line, machine_info, markdown_table, save  # noqa: E402

WORKLOADS = ((512, 20), (128, 200))  # (matrix side, matmuls in the chain)


def chain(devices: list, side: int, length: int) -> Callable[[], object]:
    """A call that runs ``length`` matmuls of ``side``^2 on each of ``devices`` (no communication)."""
    mesh = Mesh(np.array(devices), ("d",))

    def body(x: jax.Array, w: jax.Array) -> jax.Array:
        return jax.lax.fori_loop(0, length, lambda _, y: jnp.tanh(y @ w[0]), x[0])[None]

    call = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P("d"), P("d")), out_specs=P("d")))
    x, w = (jax.device_put(jnp.ones((len(devices), side, side)) / side, NamedSharding(mesh, P("d")))
            for _ in range(2))
    jax.block_until_ready(call(x, w))
    return lambda: jax.block_until_ready(call(x, w))


def median_seconds(function: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(size: int, side: int, length: int, repeat: int) -> dict:
    devices = jax.devices()
    a, b = chain(devices[:size], side, length), chain(devices[size:2 * size], side, length)

    def both() -> None:
        other = threading.Thread(target=b)
        other.start()
        a()
        other.join()

    alone, serial, threads = (median_seconds(f, repeat) for f in (a, lambda: (a(), b()), both))
    return {"devices": size, "side": side, "length": length, "alone": alone, "serial": serial, "threads": threads,
            "overlap": serial / threads, "flops_per_second": size * length * 2.0 * side**3 / alone}


COLUMNS = (("devices", "devices per mesh", "{}"), ("side", "matmul side", "{}"), ("length", "chain", "{}"),
           ("alone_ms", "A alone ms", "{:.1f}"), ("serial_ms", "A then B ms", "{:.1f}"),
           ("threads_ms", "A and B in threads ms", "{:.1f}"), ("overlap", "speed-up of threads", "{:.2f}"),
           ("gflops", "mesh GFLOP/s", "{:.0f}"), ("scaling", "mesh / 1 device", "{:.2f}"))


def markdown(result: dict) -> str:
    rows = []
    for run in result["runs"]:
        one = next(r for r in result["runs"] if r["devices"] == 1 and r["side"] == run["side"])
        rows.append({**run, "alone_ms": run["alone"] * 1e3, "serial_ms": run["serial"] * 1e3,
                     "threads_ms": run["threads"] * 1e3, "gflops": run["flops_per_second"] / 1e9,
                     "scaling": run["flops_per_second"] / one["flops_per_second"]})
    return markdown_table("Two meshes' programs at once on XLA:CPU", {**result, "runs": rows},
                          f"Command: `{result['command']}`; median of {result['repeat']} runs each. Speed-up of "
                          "threads: (A then B) / (A and B in two threads), 2 at most; mesh / 1 device: the mesh's "
                          "FLOP/s over one device's (n if each virtual device computed on cores of its own).",
                          COLUMNS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--out", default="benchmarks/results/cpu_overlap", help="output path without extension")
    args = parser.parse_args(argv)
    result = {"machine": machine_info(), "command": command_line("cpu_overlap.py", argv), "repeat": args.repeat,
              "runs": []}
    for size in (1, 2, 4):
        for side, length in WORKLOADS:
            result["runs"].append(measure(size, side, length, args.repeat))
            print(result["runs"][-1], file=sys.stderr)
            save(result, Path(args.out), markdown)
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
