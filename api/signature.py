"""What a call looks like to the compiler: flat array leaves, their types, and the static values.

``jax.jit(f, keep_unused=True).lower(*args)`` gives ``@main`` one argument per leaf of
``(dynamic positional args, kwargs)`` in ``jax.tree_util`` order; this module computes the
same flattening, so flat argument numbers (batch arguments, donated arguments) and the
cache key agree with the lowered module.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np
from jax._src.lax import lax as lax_internal  # weak types have no public constructor


@dataclass(frozen=True)
class CallSignature:
    """One call, flattened.

    ``key`` identifies the program the call needs: the argument structure, every leaf's
    shape, dtype and weak type, and the static arguments' values (not the placement of
    the arrays: the executable moves them to its shardings).
    """

    key: Hashable
    leaves: tuple[Any, ...]  # the dynamic leaves, in @main's argument order
    leaf_names: tuple[str, ...]  # e.g. "params['w1']", for messages
    leaf_args: tuple[int, ...]  # per leaf: the positional argument it belongs to (-1: a keyword)
    num_args: int  # positional arguments of the call


def normalize_argnums(argnums: int | Sequence[int], count: int, what: str, function: str = "the function",
                      strict: bool = True, declared: int | None = None) -> tuple[int, ...]:
    """``argnums`` as non-negative positions among ``count`` positional arguments. A
    position past them names a parameter the call leaves to its default when it is one of
    the ``declared`` positional parameters (``positional_parameters``), and is dropped;
    past those too it is a ``ValueError`` naming ``what`` and ``function``, unless not
    ``strict`` (a default, such as a method's ``batch_argnums=(1,)``, which a call with
    one argument leaves out)."""
    numbers = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    result = []
    for number in numbers:
        if not isinstance(number, (int, np.integer)) or isinstance(number, bool):
            raise TypeError(f"{what} must be integers; got {number!r}")
        position = int(number) + count if number < 0 else int(number)
        if 0 <= position < count:
            result.append(position)
        elif strict and not (number >= 0 and declared is not None and position < declared):
            raise ValueError(f"{what}={argnums!r} names positional argument {int(number)}, but {function} was "
                             f"called with {count} positional argument{'s' if count != 1 else ''}")
    return tuple(sorted(set(result)))


def batch_argnums_strict(batch_argnums: int | Sequence[int] | None, method_default: Sequence[int]) -> bool:
    """Whether a ``batch_argnums`` past the call's arguments is an error: unless it is the
    methods' default ``(1,)`` (``batch_argnums`` None), which a one-argument call leaves out."""
    return batch_argnums is not None or tuple(method_default) != (1,)


def parameters_of(fn: Callable) -> inspect.Signature | None:
    """``fn``'s signature, None where Python cannot tell it (some builtins)."""
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def positional_parameters(parameters: inspect.Signature | None) -> int | None:
    """How many positional parameters a function declares; None when it takes ``*args`` or
    Python cannot tell."""
    if parameters is None:
        return None
    kinds = [p.kind for p in parameters.parameters.values()]
    if inspect.Parameter.VAR_POSITIONAL in kinds:
        return None
    return sum(k in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD) for k in kinds)


def with_argnames(argnums: int | Sequence[int], argnames: str | Sequence[str], parameters: inspect.Signature | None,
                  what: str, function: str) -> tuple[int, ...]:
    """``argnums`` with the positions of the parameters ``argnames`` names (``static_argnames``,
    ``donate_argnames``; ``what`` is that option's name)."""
    numbers = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    names = (argnames,) if isinstance(argnames, str) else tuple(argnames)
    if not names:
        return numbers
    positional = [p.name for p in (parameters.parameters.values() if parameters is not None else ())
                  if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    unknown = [name for name in names if name not in positional]
    if unknown:
        raise ValueError(f"{what}={names!r}: {function} has no positional parameter {unknown[0]!r} (its positional "
                         f"parameters: {', '.join(positional) or 'none that Python can tell'})")
    return tuple(sorted(set(numbers) | {positional.index(name) for name in names}))


def positional_call(parameters: inspect.Signature | None, args: tuple[Any, ...], kwargs: dict[str, Any],
                    function: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The call with every keyword argument of a positional parameter moved to its position
    (up to the first parameter the call leaves to its default), so that static and donated
    argument numbers cover arguments passed by keyword, as ``jax.jit``'s do."""
    if parameters is None or not kwargs:
        return args, kwargs
    try:
        bound = parameters.bind(*args, **kwargs)
    except TypeError as error:
        raise TypeError(f"{function}: {error}") from None
    return tuple(bound.args), dict(bound.kwargs)


def call_signature(args: Sequence[Any], kwargs: dict[str, Any], static_argnums: Sequence[int],
                   function: str) -> CallSignature:
    """Flatten a call of ``function`` whose static positions are ``static_argnums`` (normalized)."""
    statics = []
    for position in static_argnums:
        value = args[position]
        try:
            hash(value)
        except TypeError:
            raise TypeError(f"argument {position} of {function} is static (static_argnums) but its value of type "
                            f"{type(value).__name__} is not hashable; pass a hashable value (a tuple, not a "
                            "list) or make the argument dynamic") from None
        statics.append((position, type(value), value))
    dynamic = tuple(a for i, a in enumerate(args) if i not in static_argnums)
    positions = tuple(i for i in range(len(args)) if i not in static_argnums)
    with_paths, treedef = jax.tree_util.tree_flatten_with_path((dynamic, kwargs))
    leaves, names, owners, types = [], [], [], []
    for path, leaf in with_paths:
        leaves.append(leaf)
        outer, inner = path[0], path[1]
        if outer.idx == 0:  # a positional argument: path[1] is its index among the dynamic ones
            position = positions[inner.idx]
            names.append(f"args[{position}]" + jax.tree_util.keystr(path[2:]))
            owners.append(position)
        else:
            names.append(f"{inner.key}" + jax.tree_util.keystr(path[2:]))
            owners.append(-1)
        types.append(_leaf_type(leaf, names[-1], function))
    key = (len(args), tuple(statics), treedef, tuple(types))
    return CallSignature(key, tuple(leaves), tuple(names), tuple(owners), len(args))


def leaves_of(signature: CallSignature, argnums: Sequence[int]) -> tuple[int, ...]:
    """Flat argument numbers of the leaves of the positional arguments ``argnums``."""
    wanted = set(argnums)
    return tuple(i for i, owner in enumerate(signature.leaf_args) if owner in wanted)


def output_names(out_tree: Any) -> tuple[str, ...]:
    """``result[0]['w1']``-style names of the flat outputs of a function with output tree ``out_tree``."""
    skeleton = jax.tree_util.tree_unflatten(out_tree, range(out_tree.num_leaves))
    return tuple("result" + jax.tree_util.keystr(path)
                 for path, _ in jax.tree_util.tree_flatten_with_path(skeleton)[0])


def _leaf_type(leaf: Any, name: str, function: str) -> tuple[tuple[int, ...], np.dtype, bool]:
    try:
        aval = jax.typeof(leaf)
    except TypeError:
        raise TypeError(f"{name} of {function} is a {type(leaf).__name__}, which is not an array type JAX "
                        "accepts; pass arrays (or make it a static argument)") from None
    if jax.dtypes.issubdtype(aval.dtype, jax.dtypes.prng_key):
        raise TypeError(f"{name} of {function} is a typed PRNG key ({aval.dtype}), which parallelize does not "
                        "take yet; pass jax.random.key_data(key) and wrap it back with jax.random.wrap_key_data "
                        "inside the function, or use a raw jax.random.PRNGKey")
    return tuple(aval.shape), np.dtype(aval.dtype), bool(getattr(aval, "weak_type", False))


def training_state(lowered: jax.stages.Lowered, skip: Sequence[int] = ()) -> tuple[tuple[int, int], ...]:
    """(flat argument, flat result) pairs of the training state of a lowered step.

    A positional argument is state when the output, or one element of an output tuple,
    has its pytree structure with leaves of the same shapes and dtypes (what Alpa's
    ``donate_argnums="auto"`` looks for): ``step(params, opt_state, batch) -> (params,
    opt_state, loss)`` ties ``params`` and ``opt_state``. The element at the argument's
    own position is preferred, then the first one not yet taken.

    Args:
      lowered: the ``jax.jit(...).lower(...)`` of the step.
      skip: positions among the non-static positional arguments that are never state
        (the batch).
    """
    positional, _ = lowered.args_info
    outputs = lowered.out_info
    children = list(outputs) if isinstance(outputs, (tuple, list)) else []
    candidates = [(k, child) for k, child in enumerate(children)] + [(-1, outputs)]
    offsets, start = [], 0
    for arg in list(positional):
        offsets.append(start)
        start += len(jax.tree_util.tree_leaves(arg))
    result_offset = {-1: 0}
    start = 0
    for k, child in enumerate(children):
        result_offset[k] = start
        start += len(jax.tree_util.tree_leaves(child))
    taken: set[int] = set()
    pairs = []
    for position, arg in enumerate(positional):
        leaves, tree = jax.tree_util.tree_flatten(arg)
        if position in skip or not leaves:
            continue
        types = [(tuple(a.shape), np.dtype(a.dtype)) for a in leaves]
        ordered = sorted(candidates, key=lambda c: (c[0] != position, c[0] == -1, c[0]))
        for k, child in ordered:
            out_leaves, out_tree = jax.tree_util.tree_flatten(child)
            if k in taken or -1 in taken or (k == -1 and taken) or out_tree != tree:
                continue
            if [(tuple(o.shape), np.dtype(o.dtype)) for o in out_leaves] != types:
                continue
            taken.add(k)
            pairs.extend((offsets[position] + i, result_offset[k] + i) for i in range(len(leaves)))
            break
    return tuple(pairs)


def micro_batch_args(args: tuple[Any, ...], static: tuple[int, ...], batch: tuple[int, ...], micro_batches: int,
                     function: str) -> list[Any]:
    """The call's arguments as abstract values, the batch arguments cut to one micro-batch."""
    def abstract(position: int, path: Any, leaf: Any) -> jax.ShapeDtypeStruct:
        aval = jax.typeof(leaf)
        shape = tuple(aval.shape)
        if position in batch:
            if not shape or shape[0] % micro_batches:
                raise ValueError(f"batch argument args[{position}]{jax.tree_util.keystr(path)} of {function} has "
                                 f"shape {list(shape)}, whose leading dimension does not divide into "
                                 f"num_micro_batches={micro_batches}")
            shape = (shape[0] // micro_batches, *shape[1:])
        return jax.ShapeDtypeStruct(shape, aval.dtype, weak_type=getattr(aval, "weak_type", False))

    return [arg if i in static else
            jax.tree_util.tree_map_with_path(functools.partial(abstract, i), arg) for i, arg in enumerate(args)]


def with_weak_types(outputs: list[jax.Array], weak: Sequence[int]) -> list[jax.Array]:
    """``outputs`` with the flat positions ``weak`` weakly typed, as ``jax.jit`` returns a
    value computed from Python scalars (a ``TrainState``'s step count), so that the next
    call has the same signature; on the devices and with the sharding each had."""
    for i in weak:
        outputs[i] = lax_internal._convert_element_type(outputs[i], np.dtype(outputs[i].dtype), weak_type=True)
    return outputs


def weak_outputs(traced: jax.stages.Traced) -> tuple[int, ...]:
    """The flat outputs of ``traced`` that ``jax.jit`` returns weakly typed."""
    return tuple(i for i, out in enumerate(jax.tree.leaves(traced.out_info)) if out.weak_type)
