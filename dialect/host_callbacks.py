"""Host callbacks: the custom calls of ``jax.debug.print``, ``jax.debug.callback``,
``jax.experimental.io_callback`` and ``jax.pure_callback``, and the device they run on.

JAX lowers a callback to ``stablehlo.custom_call @xla_ffi_python_cpu_callback`` (``_gpu_``
on GPUs, ``xla_python_*`` in older releases, ``_partitioned_`` for per-shard callbacks)
whose ``mhlo.backend_config = {index = k}`` is the callback's position in the list of
Python callables the executable is compiled with. Under ``jax.jit`` on several devices
the callback sees whole values and runs once, on one device: JAX gives the op a
maximal sharding (``{maximal device=0}``, or ``sdy.sharding_per_value`` on a maximal
mesh). The passes keep that form; :func:`callback_sharding` writes it, one element
per result when there are several (a token and the values of an ordered callback):

    stablehlo.custom_call @xla_ffi_python_cpu_callback(%loss)
        {has_side_effect = true, mhlo.backend_config = {index = 0 : ui64},
         mhlo.sharding = "{maximal device=0}"} : (tensor<f32>) -> ()
"""

from __future__ import annotations

import re

from jax._src.lib.mlir import ir

from .annotations import MHLO_SHARDING, sharding_text
from .sharding import Maximal, ShardingError, parse_mhlo_sharding

CALLBACK_TARGET = re.compile(r"xla(_ffi)?(_partitioned)?_python_(cpu|gpu)_callback")
# What a callback runs on when nothing says otherwise: JAX's choice (the first device).
DEFAULT_DEVICE = 0


def is_host_callback(op: ir.Operation) -> bool:
    """Whether ``op`` calls back into Python on the host."""
    return (op.name == "stablehlo.custom_call" and "call_target_name" in op.attributes
            and CALLBACK_TARGET.fullmatch(ir.StringAttr(op.attributes["call_target_name"]).value) is not None)


def callback_sharding(device: int, num_results: int) -> str:
    """The ``mhlo.sharding`` that runs a callback with ``num_results`` results on ``device``:
    one maximal sharding for the op (no or one result), a tuple of them for several."""
    one = f"{{maximal device={device}}}"
    return one if num_results < 2 else "{" + ", ".join([one] * num_results) + "}"


def maximal_device(text: str) -> int:
    """The device a callback's ``mhlo.sharding`` places it on (one maximal sharding, or a
    tuple of maximal shardings of one device).

    Raises:
      ShardingError: the sharding splits or replicates the callback, or names several devices.
    """
    parsed = parse_mhlo_sharding(text)
    elements = parsed if isinstance(parsed, tuple) else (parsed,)
    devices = {e.device for e in elements if isinstance(e, Maximal)}
    if len(devices) != 1 or not all(isinstance(e, Maximal) for e in elements):
        raise ShardingError(f"a host callback runs once, on one device, but its sharding is '{text}'; give it "
                            f"'{{maximal device=N}}' (JAX's is '{{maximal device={DEFAULT_DEVICE}}}')")
    return devices.pop()


def callback_device(op: ir.Operation) -> int:
    """The device the callback ``op`` runs on: its maximal sharding's, else the first."""
    if MHLO_SHARDING not in op.attributes:
        return DEFAULT_DEVICE
    return maximal_device(sharding_text(op.attributes[MHLO_SHARDING]))


def callback_index(op: ir.Operation) -> int | None:
    """The callback's position in the executable's list of Python callables
    (``mhlo.backend_config = {index = k}``); ``None`` where the op names none."""
    if "mhlo.backend_config" not in op.attributes:
        return None
    config = op.attributes["mhlo.backend_config"]
    if not isinstance(config, ir.DictAttr) or "index" not in config:
        return None
    return ir.IntegerAttr(config["index"]).value
