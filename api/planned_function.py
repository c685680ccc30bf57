"""What the two parallelized-function classes share: a function planned and compiled once per call signature.

``parallel_function.ParallelizedFunction`` (one mesh: ``ShardParallel`` and its presets)
and ``pipeshard.PipeshardFunction`` (stages on submeshes: ``PipeshardParallel``) take the
same arguments as ``jax.jit`` would and keep one program per call signature
(``signature.call_signature``: the arguments' shapes, dtypes, shardings and static
values); a subclass says how a signature is compiled (``_compile``) into a program that
has at least ``plan``, ``module_text`` and ``executable``.
"""

from __future__ import annotations

import abc
import contextlib
import functools
from collections.abc import Callable, Hashable, Sequence
from contextlib import AbstractContextManager
from typing import Any, ClassVar

import jax

from .signature import (
    CallSignature,
    batch_argnums_strict,
    call_signature,
    normalize_argnums,
    parameters_of,
    positional_call,
    positional_parameters,
)


class PlannedFunction(abc.ABC):
    """A function planned and compiled per call signature; see :func:`alpa_mlir.parallelize`."""

    # Whether the traced jax.jit donates ``donate_argnums`` (the lowered module then says so,
    # and the plan keeps it), or the runtime frees them itself.
    _jit_donates: ClassVar[bool] = True

    def __init__(self, fn: Callable, method: Any, *, static_argnums: int | Sequence[int],
                 donate_argnums: int | Sequence[int], batch_argnums: int | Sequence[int] | None) -> None:
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.method = method
        self.static_argnums = static_argnums
        self.donate_argnums = donate_argnums
        self.batch_argnums = method.batch_argnums if batch_argnums is None else batch_argnums
        self._batch_strict = batch_argnums_strict(batch_argnums, method.batch_argnums)
        self._name = getattr(fn, "__qualname__", None) or repr(fn)
        self._parameters = parameters_of(fn)
        self._declared = positional_parameters(self._parameters)
        self._jitted = jax.jit(fn, static_argnums=static_argnums, keep_unused=True,
                               donate_argnums=donate_argnums if self._jit_donates else ())
        self._programs: dict[Hashable, Any] = {}

    def __repr__(self) -> str:
        return f"parallelize({self._name}, method={self.method!r})"

    @property
    def num_compilations(self) -> int:
        """How many signatures have been planned and compiled (cache misses) so far."""
        return len(self._programs)

    def eval_shape(self, *args: Any, **kwargs: Any) -> Any:
        """The outputs' shapes and dtypes (``jax.ShapeDtypeStruct``s) for these arguments, as
        ``jax.jit(f).eval_shape``: nothing is planned; static arguments may be given by name."""
        return self._jitted.eval_shape(*args, **kwargs)

    def get_plan(self, *args: Any, **kwargs: Any) -> Any:
        """The plan for these arguments (arrays or ``jax.ShapeDtypeStruct``s; nothing runs)."""
        return self._program(args, kwargs)[0].plan

    def get_module_text(self, *args: Any, **kwargs: Any) -> str:
        """The compiled module for these arguments: on one mesh, the annotated StableHLO
        (``mhlo.sharding`` on every op; Shardy shardings and the accumulation loop when
        ``num_micro_batches`` > 1); pipelined, the stage functions, cross-mesh transfers and
        per-mesh schedules."""
        return self._program(args, kwargs)[0].module_text

    def get_executable(self, *args: Any, **kwargs: Any) -> Any:
        """The compiled executable for these arguments (flat arrays in, flat arrays out)."""
        return self._program(args, kwargs)[0].executable

    def _static(self, args: tuple[Any, ...]) -> tuple[int, ...]:
        """The positions of the static arguments among ``args`` (keywords made positional)."""
        return normalize_argnums(self.static_argnums, len(args), "static_argnums", self._name,
                                 declared=self._declared)

    def _program(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, CallSignature]:
        """The program of this call's signature (compiled on the first call with it), and the
        signature."""
        args, kwargs = positional_call(self._parameters, args, kwargs, self._name)
        static = self._static(args)
        signature = call_signature(args, kwargs, static, self._name)
        program = self._programs.get(signature.key)
        if program is None:
            with self._compiling():
                program = self._compile(args, kwargs, signature, static)
            self._programs[signature.key] = program
        return program, signature

    def _compiling(self) -> AbstractContextManager:
        """What a compilation runs under (the pipeline's progress lines on stderr)."""
        return contextlib.nullcontext()

    @abc.abstractmethod
    def _compile(self, args: tuple[Any, ...], kwargs: dict[str, Any], signature: CallSignature,
                 static: tuple[int, ...]) -> Any:
        """The program of one call signature: its plan, module text and executable."""
