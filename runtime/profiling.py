"""Measured run time of a compiled module on its mesh (the stage DP's ``profile`` cost model)."""

from __future__ import annotations

import statistics
import time

import jax
import numpy as np

from ..lowering.spmd import compile_module
from .mesh_executable import MeshExecutable


def time_module(module, mesh, repeats: int = 3) -> float:
    """Median seconds of one run of ``module`` on ``mesh`` (local devices), after a warm-up run.

    Inputs are zeros of the module's argument types, placed with its input shardings: the
    run time of XLA's programs does not depend on the values. Raises
    ``alpa_mlir.lowering.spmd.LoweringError`` when the mesh needs more devices than exist.
    """
    executable = MeshExecutable(compile_module(module, mesh))
    inputs = [np.zeros(aval.shape, aval.dtype) for aval in executable.in_avals]
    times = []
    for _ in range(repeats + 1):  # the first run warms up
        placed = [jax.device_put(x, sharding) for x, sharding in zip(inputs, executable.input_shardings)]
        start = time.perf_counter()
        jax.block_until_ready(executable(*placed))
        times.append(time.perf_counter() - start)
    return statistics.median(times[1:])
