"""A parallelized function under a JAX trace: shapes yes, compilation no.

``parallelize(f)`` plans, compiles and runs ``f`` itself, on concrete arrays. When JAX
traces a call instead (``jax.eval_shape``, ``jax.make_jaxpr``, an enclosing ``jax.jit``,
``jax.grad``, ``jax.vmap``), the call becomes one ``alpa_parallelized`` primitive whose
outputs have ``f``'s shapes and dtypes. That is all ``jax.eval_shape`` needs, so it
works as for a jitted function. Anything that would compile or transform the
primitive (lowering inside ``jax.jit``, differentiation, batching) is an error that
says what to do instead: an outer ``jax.jit`` would otherwise compile ``f`` with plain
XLA and silently drop its parallelization. (``jax.eval_shape`` is itself a trace
through ``jax.jit``, so telling the two apart at call time is not possible; at lowering
time it is.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

parallelized_p = Primitive("alpa_parallelized")
parallelized_p.multiple_results = True


def is_traced(args: tuple, kwargs: dict) -> bool:
    """Whether any argument leaf is a JAX tracer (the call is being traced, not run)."""
    return any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves((args, kwargs)))


def traced_call(name: str, jitted: Callable, args: tuple, kwargs: dict) -> Any:
    """The outputs of ``jitted(*args, **kwargs)`` as one ``alpa_parallelized`` primitive
    over the argument arrays: their shapes and dtypes are ``jitted``'s."""
    shapes = jax.eval_shape(jitted, *args, **kwargs)
    flat, tree = jax.tree.flatten(shapes)
    inputs = [leaf for leaf in jax.tree.leaves((args, kwargs))
              if isinstance(leaf, jax.core.Tracer | jax.Array)]
    avals = tuple(jax.core.ShapedArray(s.shape, s.dtype, weak_type=getattr(s, "weak_type", False)) for s in flat)
    outputs = parallelized_p.bind(*inputs, avals=avals, name=name)
    return jax.tree.unflatten(tree, outputs)


def _abstract_eval(*inputs, avals: tuple, name: str) -> tuple:
    return avals


def _refuse(what: str) -> Callable:
    def rule(*args, name: str, **params):
        raise TypeError(f"{name} is parallelized by alpa_mlir.parallelize, which compiles and runs it itself: it "
                        f"cannot be {what}. Call it outside jax.jit, jax.grad and jax.vmap (jax.eval_shape works), "
                        "or call the function it wraps inside them and parallelize the outer function")
    return rule


parallelized_p.def_abstract_eval(_abstract_eval)
mlir.register_lowering(parallelized_p, _refuse("compiled inside jax.jit (or another compiling transformation)"))
ad.primitive_jvps[parallelized_p] = _refuse("differentiated (jax.grad, jax.jvp)")
batching.primitive_batchers[parallelized_p] = _refuse("batched (jax.vmap)")
