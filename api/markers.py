"""User boundaries for inter-operator parallelism: ``mark_pipeline_boundary`` and ``grad``.

Alpa's user API (next to the paper's ``@parallelize``, Sec. 3) lets a user cut the
model into layers by hand (``mark_pipeline_boundary``) and tells the compiler where
computing the gradients ends and applying them begins (``alpa.grad``). Both are
identities on values that lower to an ``alpa.pipeline_marker`` custom call (its IR
form is documented in ``passes/imports/lower_pipeline_markers.py``);
``alpa-lower-pipeline-markers`` reads them, records ``alpa.segment`` and
``alpa.apply_grad`` on the ops and removes them.

Under differentiation a boundary stays a boundary: the tangent of a ``boundary`` marker
is a ``tangent_boundary`` marker on the non-zero tangents, linked to the primal marker
by one of its results, and the transpose of that is a ``backward_boundary`` marker on
the cotangents with the same link, so the backward pass carries the same cuts in
reverse order and each backward cut names its forward one. Under ``vmap`` a marker
marks the batched values. Called outside of ``jit`` a marker is the identity.

The custom call is for the compiler only: under plain ``jax.jit`` (and any other
lowering) a marker lowers to nothing, so the same model code compiles and runs without
alpa-mlir. :func:`lower` lowers a jitted function with the markers, as ``parallelize``
does; ``alpa-lower-pipeline-markers`` removes them again before XLA compiles.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax._src.lib.mlir import ir
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from .dialect.names import (
    BACKWARD_BOUNDARY,
    BOUNDARY,
    GRAD,
    LINKED_KINDS,
    MARKER_KIND,
    MARKER_TARGET,
    TANGENT_BOUNDARY,
)

pipeline_marker_p = Primitive("alpa_pipeline_marker")
pipeline_marker_p.multiple_results = True


def _num_values(operands: Sequence[Any], kind: str) -> int:
    """How many operands cross the marker: all but the link of a linked kind."""
    return len(operands) - 1 if kind in LINKED_KINDS else len(operands)


def _impl(*operands: jax.Array, kind: str) -> list[jax.Array]:
    return list(operands[:_num_values(operands, kind)])


def _abstract_eval(*avals: Any, kind: str) -> list[Any]:
    return list(avals[:_num_values(avals, kind)])


def _identity_lowering(ctx: mlir.LoweringRuleContext, *operands: ir.Value, kind: str) -> list[ir.Value]:
    return list(operands[:_num_values(operands, kind)])


def _lowering(ctx: mlir.LoweringRuleContext, *operands: ir.Value, kind: str) -> list[ir.Value]:
    # Built generically: the op is all attributes, and jaxlib's CustomCallOp builder
    # changes between releases. The location is the user's call site (JAX sets it).
    op = ir.Operation.create(
        "stablehlo.custom_call",
        results=[value.type for value in operands[:_num_values(operands, kind)]],
        operands=list(operands),
        attributes={
            "call_target_name": ir.StringAttr.get(MARKER_TARGET),
            "has_side_effect": ir.BoolAttr.get(True),
            MARKER_KIND: ir.StringAttr.get(kind),
        },
    )
    return list(op.results)


def _jvp(primals: Sequence[Any], tangents: Sequence[Any], *, kind: str) -> tuple[list, list]:
    primals_out = pipeline_marker_p.bind(*primals, kind=kind)
    count = _num_values(primals, kind)
    tangents_out = list(tangents[:count])
    # Zero tangents stay symbolic: a marker on them would be a constant of the forward
    # pass. The grad marker is one point of the program; its tangents pass through.
    nonzero = [i for i in range(count) if type(tangents[i]) is not ad.Zero]
    if nonzero and kind != GRAD:
        # The link (a primal result) ties the tangent marker, and the backward marker
        # that transposing it makes, to this marker.
        marked = pipeline_marker_p.bind(*(tangents[i] for i in nonzero), primals_out[0], kind=TANGENT_BOUNDARY)
        for i, tangent in zip(nonzero, marked):
            tangents_out[i] = tangent
    return primals_out, tangents_out


def _transpose(cotangents: Sequence[Any], *operands: Any, kind: str) -> list:
    count = _num_values(operands, kind)
    if kind in LINKED_KINDS:
        # Materialised zeros keep one backward marker per forward boundary; XLA folds
        # them once the marker is gone.
        transposed = BACKWARD_BOUNDARY if kind == TANGENT_BOUNDARY else TANGENT_BOUNDARY
        cotangents = pipeline_marker_p.bind(*map(ad.instantiate_zeros, cotangents), operands[-1], kind=transposed)
    # A transposed boundary or grad marker (``jax.linear_transpose`` of marked code) has
    # no forward marker to link to, so its cotangents pass unmarked. A link is no value.
    linear = [ct if ad.is_undefined_primal(value) else None for ct, value in zip(cotangents, operands[:count])]
    return linear + [None] * (len(operands) - count)


def _batch(operands: Sequence[jax.Array], dims: Sequence[int | None], *, kind: str) -> tuple[list, Sequence]:
    return pipeline_marker_p.bind(*operands, kind=kind), dims[:_num_values(operands, kind)]


pipeline_marker_p.def_impl(_impl)
pipeline_marker_p.def_abstract_eval(_abstract_eval)
mlir.register_lowering(pipeline_marker_p, _identity_lowering)
ad.primitive_jvps[pipeline_marker_p] = _jvp
ad.primitive_transposes[pipeline_marker_p] = _transpose
batching.primitive_batchers[pipeline_marker_p] = _batch


# The lowering the compiler reads: markers as ``alpa.pipeline_marker`` custom calls.
_WITH_MARKERS = mlir.LoweringParameters(override_lowering_rules=((pipeline_marker_p, _lowering),))


def lower(jitted: Any, *args: Any, **kwargs: Any) -> jax.stages.Lowered:
    """``jitted.lower(*args, **kwargs)`` with the pipeline markers kept as
    ``alpa.pipeline_marker`` custom calls (plain lowering drops them)."""
    return lower_traced(jitted.trace(*args, **kwargs))


def lower_traced(traced: jax.stages.Traced) -> jax.stages.Lowered:
    """``traced.lower()`` with the pipeline markers kept (see :func:`lower`)."""
    return traced.lower(_private_parameters=_WITH_MARKERS)


def _is_marked(leaf: Any) -> bool:
    """Arrays are program values; Python scalars are trace-time constants and float0
    arrays (integer tangents) have no data, so neither crosses as a value."""
    return (isinstance(leaf, jax.Array | np.ndarray | np.generic)
            and np.dtype(leaf.dtype) != jax.dtypes.float0)


def _mark(tree: Any, kind: str) -> Any:
    leaves, treedef = jax.tree.flatten(tree)
    positions = [i for i, leaf in enumerate(leaves) if _is_marked(leaf)]
    if not positions:
        return tree
    marked = pipeline_marker_p.bind(*(leaves[i] for i in positions), kind=kind)
    for i, value in zip(positions, marked):
        leaves[i] = value
    return jax.tree.unflatten(treedef, leaves)


def mark_pipeline_boundary(*values: Any) -> Any:
    """Mark a pipeline boundary (a cut between two user layers) on ``values``.

    Pass every value that crosses the boundary and use what comes back in their place::

        x = layer_1(params, x)
        x = alpa_mlir.mark_pipeline_boundary(x)
        x = layer_2(params, x)

    Args:
      *values: pytrees of arrays: the activations (and anything else computed before
        the boundary) that the ops after it read. Non-array leaves pass unchanged.

    Returns:
      ``values`` unchanged (one pytree for one argument, a tuple for several).

    Why values, when the paper's ``mark_pipeline_boundary()`` takes none: a JAX
    function is pure dataflow; an op with no operands and results is tied to nothing,
    is dropped as dead code and has no transpose. A marker on the crossing values is a
    cut of the dataflow itself: the ops after it read through it, reverse mode gives
    the backward pass the matching boundary, and the cut survives ``jit``, ``grad`` and
    ``vmap``. A value that bypasses the marker gets no backward boundary.
    """
    if not values:
        raise TypeError("mark_pipeline_boundary needs the values that cross the boundary: "
                        "x = mark_pipeline_boundary(x) (a JAX function is dataflow; a marker "
                        "on no values marks nothing)")
    marked = _mark(values, BOUNDARY)
    return marked[0] if len(values) == 1 else marked


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, *,
                   holomorphic: bool = False, allow_int: bool = False) -> Callable:
    """``jax.value_and_grad`` whose gradients pass through the compute-grad / apply-grad marker.

    Args:
      fun, argnums, has_aux, holomorphic, allow_int: as for ``jax.value_and_grad``.

    Returns:
      A function returning ``(value, gradients)`` (``((value, aux), gradients)`` with
      ``has_aux``). Ops that read the gradients form the apply-gradient part.
    """
    value_and_grad_fun = jax.value_and_grad(fun, argnums, has_aux, holomorphic=holomorphic, allow_int=allow_int)

    @functools.wraps(fun)
    def marked(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        value, gradients = value_and_grad_fun(*args, **kwargs)
        return value, _mark(gradients, GRAD)

    return marked


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, *,
         holomorphic: bool = False, allow_int: bool = False) -> Callable:
    """``jax.grad`` whose gradients pass through the compute-grad / apply-grad marker.

    Everything that reads the returned gradients (the optimizer update) is the
    apply-gradient part that Alpa places with the stages that own the parameters.

    Args:
      fun, argnums, has_aux, holomorphic, allow_int: as for ``jax.grad``.

    Returns:
      A function returning the gradients (``(gradients, aux)`` with ``has_aux``).
    """
    value_and_grad_fun = value_and_grad(fun, argnums, has_aux, holomorphic=holomorphic, allow_int=allow_int)

    @functools.wraps(fun)
    def gradient(*args: Any, **kwargs: Any) -> Any:
        value, gradients = value_and_grad_fun(*args, **kwargs)
        return (gradients, value[1]) if has_aux else gradients

    return gradient
