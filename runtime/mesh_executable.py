"""Run an SPMD-compiled module on its mesh: place flat inputs, execute, assemble outputs.

A :class:`MeshExecutable` is the unit the runtime launches per mesh (the paper's
per-stage SPMD executable, Sec. 5): flat positional arrays in, global
``jax.Array`` outputs with the compiled output shardings out. Pytrees are the caller's
business.

Donation: a donated ``jax.Array`` argument is always invalid after the call. When it
already had its compiled sharding and XLA aliased it to an output
(``tf.aliasing_output``, or a ``jax.buffer_donor`` XLA found a matching output for),
PJRT consumed its buffers; otherwise this class deletes it, so the memory the caller
gave up is freed either way. (``jax.jit`` instead keeps arrays it could not donate
and warns.)

Host callbacks (``jax.debug.print`` and the like in the module): as under ``jax.jit``, the
call hands JAX the execution's runtime token, so ``jax.effects_barrier()`` waits until
every callback of the step has run.
"""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

import jax
import numpy as np
from jax._src import core as jax_core
from jax._src import dispatch
from jax._src.lib import xla_client

from ..lowering.spmd import SpmdExecutable

_PYTHON_SCALARS = (bool, int, float, complex)
Result = TypeVar("Result")


def compile_at_once(work: dict[Hashable, Callable[[], Result]]) -> dict[Hashable, Result]:
    """Each of ``work``'s compile calls, run in threads, one per core: XLA compiles
    without holding the GIL, so independent programs compile side by side. The first
    error raised is raised here, once every call has ended."""
    if len(work) < 2:
        return {key: compile_one() for key, compile_one in work.items()}
    with concurrent.futures.ThreadPoolExecutor(min(len(work), len(os.sched_getaffinity(0)))) as pool:
        futures = {key: pool.submit(compile_one) for key, compile_one in work.items()}
    return {key: future.result() for key, future in futures.items()}


def _avals(given: Sequence[Any] | None, compiled: tuple[jax.ShapeDtypeStruct, ...],
           what: str) -> tuple[jax.ShapeDtypeStruct, ...]:
    """``given`` (anything with ``.shape``/``.dtype``) checked against the compiled signature."""
    if given is None:
        return compiled
    avals = tuple(jax.ShapeDtypeStruct(tuple(a.shape), np.dtype(a.dtype)) for a in given)
    if len(avals) != len(compiled):
        raise ValueError(f"{len(avals)} {what}s were given but the compiled module has {len(compiled)}")
    for i, (aval, expected) in enumerate(zip(avals, compiled)):
        if (aval.shape, aval.dtype) != (expected.shape, expected.dtype):
            raise ValueError(
                f"{what} {i} is given as {aval.dtype}{list(aval.shape)} but the compiled module has "
                f"{expected.dtype}{list(expected.shape)}"
            )
    return avals


class MeshExecutable:
    """A compiled SPMD module callable on flat positional arrays.

    Args:
      compiled: the result of :func:`alpa_mlir.lowering.spmd.compile_module`.
      in_avals: shapes and dtypes of the flat inputs (the module's ``@main`` signature
        when omitted); checked against the module.
      out_avals: shapes and dtypes of the flat outputs, likewise.
      donated: per input, whether the caller gives up its buffer. Defaults to what the
        module declares (``tf.aliasing_output`` / ``jax.buffer_donor``); an input the
        module aliases must be marked donated, since XLA will consume it.
    """

    def __init__(self, compiled: SpmdExecutable, in_avals: Sequence[Any] | None = None,
                 out_avals: Sequence[Any] | None = None, donated: Sequence[bool] = ()) -> None:
        self.compiled = compiled
        self.in_avals = _avals(in_avals, compiled.in_avals, "input")
        self.out_avals = _avals(out_avals, compiled.out_avals, "output")
        module_donated = compiled.donated
        donated = tuple(bool(d) for d in donated) or module_donated
        if len(donated) != len(self.in_avals):
            raise ValueError(f"donated has {len(donated)} entries for {len(self.in_avals)} inputs")
        forced = [i for i, (mine, module) in enumerate(zip(donated, module_donated)) if module and not mine]
        if forced:
            raise ValueError(
                f"inputs {forced} are donated by the module (tf.aliasing_output / jax.buffer_donor) but not "
                "in donated=; mark them donated or compile a module without the aliasing attributes"
            )
        self.donated = donated
        # jax.jit's own output path: each output's shards made a jax.Array in C++, unchecked
        # (XLA gave them the compiled shardings).
        self._handlers = [xla_client.array_result_handler(jax_core.ShapedArray(aval.shape, aval.dtype), sharding,
                                                          committed=True, _skip_checks=True)
                          for aval, sharding in zip(self.out_avals, self.output_shardings)]

    @property
    def input_shardings(self) -> tuple[jax.sharding.Sharding, ...]:
        return self.compiled.input_shardings

    @property
    def output_shardings(self) -> tuple[jax.sharding.Sharding, ...]:
        return self.compiled.output_shardings

    def __call__(self, *flat_args: Any) -> list[jax.Array]:
        if len(flat_args) != len(self.in_avals):
            raise TypeError(f"expected {len(self.in_avals)} positional arguments, got {len(flat_args)}")
        self._check_donation_aliasing(flat_args)
        placed = [self._place(i, arg) for i, arg in enumerate(flat_args)]
        executable = self.compiled.executable
        if self.compiled.host_callbacks:
            results = executable.execute_sharded(placed, with_tokens=True)
            token = results.consume_token()
            for i, device in enumerate(executable.local_devices()):  # what jax.jit's executables do
                dispatch.runtime_tokens.set_output_runtime_token(device, token.get_token(i))
        else:
            results = executable.execute_sharded(placed)
        outputs = results.consume_with_handlers(self._handlers)
        for arg, donated in zip(flat_args, self.donated):
            if donated and isinstance(arg, jax.Array) and not arg.is_deleted():
                arg.delete()
        return outputs

    def _check_donation_aliasing(self, flat_args: Sequence[Any]) -> None:
        """A donated array passed in two positions would be read after XLA consumed it."""
        for i, (arg, donated) in enumerate(zip(flat_args, self.donated)):
            if not (donated and isinstance(arg, jax.Array)):
                continue
            others = [j for j, other in enumerate(flat_args) if other is arg and j != i]
            if others:
                raise ValueError(f"argument {i} is donated but is also passed as argument(s) {others}")

    def _place(self, index: int, arg: Any) -> jax.Array:
        """``arg`` as a ``jax.Array`` with input ``index``'s compiled sharding."""
        expected = self.in_avals[index]
        sharding = self.input_shardings[index]
        if isinstance(arg, jax.Array):
            if arg.is_deleted():
                raise ValueError(f"argument {index} is a deleted array (was it donated to an earlier call?)")
            self._check_aval(index, arg.shape, arg.dtype)
            if arg.sharding.is_equivalent_to(sharding, len(expected.shape)):
                return arg
            return jax.device_put(arg, sharding)
        if isinstance(arg, _PYTHON_SCALARS):
            value = np.asarray(arg, dtype=expected.dtype)
        else:
            value = np.asarray(arg)
        self._check_aval(index, value.shape, value.dtype)
        return jax.device_put(value, sharding)

    def _check_aval(self, index: int, shape: Sequence[int], dtype: Any) -> None:
        expected = self.in_avals[index]
        if np.dtype(dtype) != expected.dtype:
            raise TypeError(f"argument {index} has dtype {np.dtype(dtype)} but the executable expects "
                            f"{expected.dtype} (shape {list(expected.shape)})")
        if tuple(shape) != tuple(expected.shape):
            raise ValueError(f"argument {index} has shape {list(shape)} but the executable expects "
                             f"{list(expected.shape)} ({expected.dtype})")
