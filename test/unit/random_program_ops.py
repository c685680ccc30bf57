"""The op families of the random programs (random_programs.py): each adds one op to a Builder.

One family per group of rules in ``passes/intra_op/rules``: elementwise ops and
converts, select, dot_general with batch dimensions, reductions, broadcasts,
transposes, reshapes, concatenates, slices, dynamic slices and updates, gathers,
scatters, convolutions, cumulative reductions, sorts, argmax, and the control flow
(fori_loop, cond/switch, scan) whose bodies hold further ops.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
from jax import lax
from random_programs import BF16, DTYPES, EXACT_LIMIT, F32, I32, MAX_RANK, SHORT, Builder, Rejected, Value, clamp_start

# Shape-preserving ops on one value: name, function, bound of the result from the operand's, rounds.
UNARY = (
    ("negate", jnp.negative, lambda b: b, False),
    ("abs", jnp.abs, lambda b: b, False),
    ("relu", lambda x: jnp.maximum(x, 0), lambda b: b, False),
    ("double", lambda x: x * 2, lambda b: 2 * b, False),
    ("increment", lambda x: x + 1, lambda b: b + 1, False),
)
TANH = ("tanh", jnp.tanh, lambda b: 1.0, True)
BINARY = (
    ("add", jnp.add, lambda p, q: p + q),
    ("subtract", jnp.subtract, lambda p, q: p + q),
    ("multiply", jnp.multiply, lambda p, q: p * q),
    ("maximum", jnp.maximum, max),
    ("minimum", jnp.minimum, max),
)


def _unary(b: Builder, value: Value) -> tuple:
    return b.choice(UNARY + ((TANH,) if value.is_float else ()))


def _axis(b: Builder, value: Value) -> int:
    return int(b.rng.integers(value.rank))


def _factor(b: Builder, total: int, rank: int) -> tuple[int, ...]:
    """A random shape of ``rank`` dimensions with ``total`` elements."""
    dims = [1] * rank
    n, p = total, 2
    while n > 1:
        while n % p == 0:
            dims[int(b.rng.integers(rank))] *= p
            n //= p
        p += 1
    return tuple(dims)


def _length(b: Builder, size: int) -> int:
    """A slice length up to ``size``; even lengths (which mesh axes split) half the time."""
    even = [n for n in range(2, size + 1, 2)]
    return int(b.choice(even)) if even and b.rng.random() < 0.5 else int(b.rng.integers(1, size + 1))


def elementwise(b: Builder) -> None:
    x = b.pick()
    v = b.values[x]
    kind = b.choice(("unary", "binary", "binary", "convert"))
    if kind == "convert":
        target = b.choice([d for d in DTYPES if d != v.dtype])
        if v.is_float and target == I32 and not v.exact:
            raise Rejected  # a rounding difference would move the integer
        b.one(f"convert(v{x}, {SHORT[target]})", [x], lambda e, ref: e[x].astype(target), v.bound)
    elif kind == "binary":
        y = b.like(x)
        name, fn, bound = b.choice(BINARY)
        b.one(f"{name}(v{x}, v{y})", [x, y], lambda e, ref: fn(e[x], e[y]), bound(v.bound, b.values[y].bound))
    else:
        name, fn, bound, rounds = _unary(b, v)
        b.one(f"{name}(v{x})", [x], lambda e, ref: fn(e[x]), bound(v.bound), rounds)


def select(b: Builder) -> None:
    x = b.pick()
    y = b.like(x)
    v, w = b.values[x], b.values[y]
    if v.exact and w.exact and b.rng.random() < 0.6:
        b.one(f"where(v{x} > v{y}, v{x}, v{y})", [x, y], lambda e, ref: jnp.where(e[x] > e[y], e[x], e[y]),
              max(v.bound, w.bound))
        return
    p = b.ints(v.shape, -1, 1)
    b.one(f"where(v{p} > 0, v{x}, v{y})", [p, x, y], lambda e, ref: jnp.where(e[p] > 0, e[x], e[y]),
          max(v.bound, w.bound))


def dot_general(b: Builder) -> None:
    """Leading batch dimensions, one contracting dimension anywhere, the rhs's free
    dimension before or after its contracting one, either operand first."""
    x = b.pick(min_rank=1)
    v = b.values[x]
    batch = int(b.rng.integers(0, v.rank)) if v.rank >= 2 and b.rng.random() < 0.6 else 0
    contract = int(b.rng.integers(batch, v.rank))
    k = v.shape[contract]
    free = (b.size(),) if b.rng.random() < 0.8 else ()
    k_first = b.rng.random() < 0.5
    w = b.data(v.shape[:batch] + ((k,) + free if k_first else free + (k,)), v.dtype)
    w_contract = batch if k_first else batch + len(free)
    batch_dims = tuple(range(batch))
    if b.rng.random() < 0.3:
        numbers = (((w_contract,), (contract,)), (batch_dims, batch_dims))
        text, run = f"dot_general(v{w}, v{x}, {numbers})", lambda e, ref: lax.dot_general(e[w], e[x], numbers)
    else:
        numbers = (((contract,), (w_contract,)), (batch_dims, batch_dims))
        text, run = f"dot_general(v{x}, v{w}, {numbers})", lambda e, ref: lax.dot_general(e[x], e[w], numbers)
    b.one(text, [x, w], run, v.bound * b.values[w].bound * k)


def reduce(b: Builder) -> None:
    x = b.pick(min_rank=1)
    v = b.values[x]
    axes = tuple(sorted(int(a) for a in b.rng.choice(v.rank, size=int(b.rng.integers(1, v.rank + 1)),
                                                     replace=False)))
    name, fn = b.choice((("sum", jnp.sum), ("max", jnp.max), ("min", jnp.min)))
    if v.nan:
        # XLA:CPU's all-reduce max/min drops NaNs where a one-device reduce keeps them
        # (plain jax.jit with the same shardings too), so NaNs only meet sums.
        name, fn = "sum", jnp.sum
    keep = bool(b.rng.random() < 0.3)
    bound = v.bound * math.prod(v.shape[a] for a in axes) if name == "sum" else v.bound
    b.one(f"{name}(v{x}, axis={axes}, keepdims={keep})", [x], lambda e, ref: fn(e[x], axis=axes, keepdims=keep), bound)


def broadcast(b: Builder) -> None:
    x = b.pick(max_rank=MAX_RANK - 1)
    v = b.values[x]
    ones = [d for d, size in enumerate(v.shape) if size == 1]
    if ones and b.rng.random() < 0.5:
        shape = list(v.shape)
        shape[b.choice(ones)] = b.size()
        b.one(f"broadcast_to(v{x}, {tuple(shape)})", [x], lambda e, ref: jnp.broadcast_to(e[x], shape), v.bound)
        return
    axis = int(b.rng.integers(v.rank + 1))
    shape = v.shape[:axis] + (b.size(),) + v.shape[axis:]
    b.one(f"broadcast_to(expand_dims(v{x}, {axis}), {shape})", [x],
          lambda e, ref: jnp.broadcast_to(jnp.expand_dims(e[x], axis), shape), v.bound)


def transpose(b: Builder) -> None:
    x = b.pick(min_rank=2)
    v = b.values[x]
    permutation = tuple(int(d) for d in b.rng.permutation(v.rank))
    if permutation == tuple(range(v.rank)):
        permutation = permutation[1:] + permutation[:1]
    b.one(f"transpose(v{x}, {permutation})", [x], lambda e, ref: jnp.transpose(e[x], permutation), v.bound)


def reshape(b: Builder) -> None:
    x = b.pick()
    v = b.values[x]
    shape = _factor(b, math.prod(v.shape), int(b.rng.integers(1, MAX_RANK + 1)))
    if shape == v.shape:
        raise Rejected
    b.one(f"reshape(v{x}, {shape})", [x], lambda e, ref: jnp.reshape(e[x], shape), v.bound)


def concatenate(b: Builder) -> None:
    x = b.pick(min_rank=1)
    v = b.values[x]
    axis = _axis(b, v)
    if b.rng.random() < 0.3:
        y = x
    else:
        shape = list(v.shape)
        shape[axis] = b.size()
        y = b.data(tuple(shape), v.dtype)
    parts = [x, y] if b.rng.random() < 0.5 else [y, x]
    out = b.one(f"concatenate([v{parts[0]}, v{parts[1]}], axis={axis})", parts,
                lambda e, ref: jnp.concatenate([e[i] for i in parts], axis=axis), max(v.bound, b.values[y].bound))
    b.maybe_pin(out, [axis])


def slice_(b: Builder) -> None:
    x = b.pick(min_rank=1)
    v = b.values[x]
    axes = [d for d, size in enumerate(v.shape) if size >= 2]
    if not axes:
        raise Rejected
    axis = b.choice(axes)
    start = int(b.rng.integers(0, v.shape[axis] - 1))
    stop = int(b.rng.integers(start + 1, v.shape[axis] + 1))
    stride = int(b.choice((1, 1, 2, 3)))
    out = b.one(f"slice_in_dim(v{x}, {start}, {stop}, {stride}, axis={axis})", [x],
                lambda e, ref: lax.slice_in_dim(e[x], start, stop, stride, axis), v.bound)
    b.maybe_pin(out, [axis])


def dynamic_slice(b: Builder) -> None:
    """One or two dimensions sliced at argument starts (in range, past the end, negative)."""
    x = b.pick(min_rank=1)
    v = b.values[x]
    axes = [int(a) for a in b.rng.choice(v.rank, size=min(v.rank, int(b.rng.integers(1, 3))), replace=False)]
    lengths = list(v.shape)
    starts: dict[int, int] = {}
    for a in axes:
        lengths[a] = _length(b, v.shape[a])
        starts[a] = b.start(v.shape[a], lengths[a])

    def run(e, ref):
        index = [clamp_start(e[starts[a]], v.shape[a], lengths[a], ref) if a in starts else 0
                 for a in range(v.rank)]
        return lax.dynamic_slice(e[x], index, lengths)

    text = ", ".join(f"v{starts[a]}" if a in starts else "0" for a in range(v.rank))
    out = b.one(f"dynamic_slice(v{x}, ({text}), {tuple(lengths)})", [x, *starts.values()], run, v.bound)
    b.maybe_pin(out, axes)


def dynamic_update_slice(b: Builder) -> None:
    x = b.pick(min_rank=1)
    v = b.values[x]
    axis = _axis(b, v)
    shape = list(v.shape)
    shape[axis] = _length(b, v.shape[axis])
    update = b.data(tuple(shape), v.dtype)
    start = b.start(v.shape[axis], shape[axis])

    def run(e, ref):
        index = [clamp_start(e[start], v.shape[axis], shape[axis], ref) if a == axis else 0 for a in range(v.rank)]
        return lax.dynamic_update_slice(e[x], e[update], index)

    out = b.one(f"dynamic_update_slice(v{x}, v{update}, v{start} on axis {axis})", [x, update, start], run,
                max(v.bound, b.values[update].bound))
    b.maybe_pin(out, [axis])


def gather(b: Builder) -> None:
    """``take`` with clipped or filled out-of-range indices, or ``take_along_axis``."""
    x = b.pick(min_rank=1)
    v = b.values[x]
    axis = _axis(b, v)
    size = v.shape[axis]
    if b.rng.random() < 0.3:
        shape = list(v.shape)
        shape[axis] = b.size()
        index = b.ints(tuple(shape), -size, size - 1)
        out = b.one(f"take_along_axis(v{x}, v{index}, axis={axis})", [x, index],
                    lambda e, ref: jnp.take_along_axis(e[x], e[index], axis=axis), v.bound)
        b.maybe_pin(out, [axis])
        return
    rank = int(b.rng.integers(1, 3))
    index = b.ints(b.shape(rank), -size - 2, size + 1)
    mode = b.choice(("clip", "fill"))
    bound = 2.0**31 if mode == "fill" and not v.is_float else v.bound  # ints fill with INT_MIN
    out = b.one(f"take(v{x}, v{index}, axis={axis}, mode={mode})", [x, index],
                lambda e, ref: jnp.take(e[x], e[index], axis=axis, mode=mode), bound, nan=mode == "fill")
    b.maybe_pin(out, range(axis, axis + rank))


def scatter(b: Builder) -> None:
    """``.at[idx].add`` with repeated and out-of-range indices, or ``.set`` at unique ones."""
    x = b.pick(min_rank=1)
    v = b.values[x]
    axis = _axis(b, v)
    size = v.shape[axis]
    if b.rng.random() < 0.3:
        count = int(b.rng.integers(1, size + 1))
        index = b.argument(b.rng.permutation(size)[:count].astype(I32), Value((count,), I32, float(size), True))
        update = b.data(v.shape[:axis] + (count,) + v.shape[axis + 1:], v.dtype)
        where = (slice(None),) * axis
        out = b.one(f"v{x}.at[{axis * ':, '}v{index}].set(v{update})", [x, index, update],
                    lambda e, ref: e[x].at[where + (e[index],)].set(e[update], unique_indices=True),
                    max(v.bound, b.values[update].bound))
        b.maybe_pin(out, [axis])
        return
    count = b.size()
    index = b.ints((count,), -size - 1, size)
    update = b.data(v.shape[:axis] + (count,) + v.shape[axis + 1:], v.dtype)
    mode = b.choice(("drop", "clip"))
    where = (slice(None),) * axis
    out = b.one(f"v{x}.at[{axis * ':, '}v{index}].add(v{update}, mode={mode})", [x, index, update],
                lambda e, ref: e[x].at[where + (e[index],)].add(e[update], mode=mode),
                v.bound + b.values[update].bound * count)
    b.maybe_pin(out, [axis])


def conv(b: Builder) -> None:
    """A 1-D or 2-D convolution (a value of another rank is reshaped to N, C, W), maybe grouped."""
    x = b.pick(min_rank=1, dtypes=(F32, BF16))
    v = b.values[x]
    shape = v.shape if v.rank in (3, 4) and b.rng.random() < 0.7 else _factor(b, math.prod(v.shape), 3)
    channels, spatial = shape[1], shape[2:]
    groups = 1 if b.rng.random() < 0.5 else int(b.choice([g for g in range(1, channels + 1) if channels % g == 0]))
    features = groups * int(b.rng.integers(1, 3))
    window = tuple(int(b.rng.integers(1, min(3, s) + 1)) for s in spatial)
    kernel = b.data((features, channels // groups) + window, v.dtype)
    strides = tuple(int(b.choice((1, 2))) for _ in spatial)
    padding = b.choice(("SAME", "VALID"))
    out = b.one(f"conv(reshape(v{x}, {shape}), v{kernel}, strides={strides}, padding={padding}, groups={groups})",
                [x, kernel], lambda e, ref: lax.conv_general_dilated(jnp.reshape(e[x], shape), e[kernel], strides,
                                                                    padding, feature_group_count=groups),
                v.bound * b.values[kernel].bound * (channels // groups) * math.prod(window))
    b.maybe_pin(out, range(2, len(shape)))


def cumulative(b: Builder) -> None:
    x = b.pick(min_rank=1)
    v = b.values[x]
    axis = _axis(b, v)
    name, fn = b.choice((("cumsum", lax.cumsum), ("cummax", lax.cummax), ("cummin", lax.cummin)))
    reverse = bool(b.rng.random() < 0.3)
    bound = v.bound * v.shape[axis] if name == "cumsum" else v.bound
    out = b.one(f"{name}(v{x}, axis={axis}, reverse={reverse})", [x],
                lambda e, ref: fn(e[x], axis=axis, reverse=reverse), bound)
    b.maybe_pin(out, [axis])


def sort(b: Builder) -> None:
    """Values, a stable argsort, or a stable key-value sort (keys exact: ties must not move)."""
    x = b.pick(min_rank=1)
    v = b.values[x]
    axis = _axis(b, v)
    kind = b.choice(("values", "argsort", "pairs")) if v.exact else "values"
    if kind == "values":
        out = b.one(f"sort(v{x}, axis={axis})", [x], lambda e, ref: jnp.sort(e[x], axis=axis), v.bound)
    elif kind == "argsort":
        out = b.one(f"argsort(v{x}, axis={axis}, stable=True)", [x],
                    lambda e, ref: jnp.argsort(e[x], axis=axis, stable=True).astype(I32), float(v.shape[axis]))
    else:
        y = b.like(x)
        out, _ = b.op(f"sort((v{x}, v{y}), dimension={axis}, num_keys=1)", [x, y],
                      lambda e, ref: tuple(lax.sort((e[x], e[y]), dimension=axis, num_keys=1)),
                      [v.bound, b.values[y].bound])
    b.maybe_pin(out, [axis])


def argmax(b: Builder) -> None:
    x = b.pick(min_rank=1, exact=True)
    v = b.values[x]
    axis = b.choice(list(range(v.rank)) + [None])
    name, fn = b.choice((("argmax", jnp.argmax), ("argmin", jnp.argmin)))
    keep = axis is not None and bool(b.rng.random() < 0.3)
    b.one(f"{name}(v{x}, axis={axis}, keepdims={keep})", [x],
          lambda e, ref: fn(e[x], axis=axis, keepdims=keep).astype(I32), float(math.prod(v.shape)))


def fori_loop(b: Builder) -> None:
    """``c = f(c) [@ w] + stack[k]`` for k < T, T static or an argument; k can pass the stack's end."""
    x = b.pick(max_rank=3)
    v = b.values[x]
    trips = int(b.rng.integers(1, 5))
    depth = int(b.rng.integers(1, 4))
    stack = b.data((depth,) + v.shape, v.dtype)
    name, fn, grow, rounds = _unary(b, v)
    square = b.data((v.shape[-1],) * 2, v.dtype) if v.rank >= 1 and b.rng.random() < 0.3 else None
    trip_count = b.ints((), trips, trips) if b.rng.random() < 0.4 else None
    operands = [x, stack] + [i for i in (square, trip_count) if i is not None]

    def run(e, ref):
        def body(k, carry):
            carry = fn(carry)
            if square is not None:
                carry = carry @ e[square]
            return carry + lax.dynamic_index_in_dim(e[stack], clamp_start(k, depth, 1, ref), 0, keepdims=False)

        return lax.fori_loop(0, e[trip_count] if trip_count is not None else trips, body, e[x])

    bound = v.bound
    for _ in range(trips):
        bound = grow(bound) * (b.values[square].bound * v.shape[-1] if square is not None else 1)
        bound += b.values[stack].bound
    matmul = f" @ v{square}" if square is not None else ""
    upper = f"v{trip_count}" if trip_count is not None else trips
    b.one(f"fori_loop(0, {upper}, c = {name}(c){matmul} + v{stack}[k], init=v{x})", operands, run, bound, rounds)


# Branches of cond/switch on (x, y): text, function, bound.
BRANCHES = (
    ("x * 2 - y", lambda x, y: x * 2 - y, lambda p, q: 2 * p + q),
    ("maximum(x, y) + 1", lambda x, y: jnp.maximum(x, y) + 1, lambda p, q: max(p, q) + 1),
    ("-x", lambda x, y: -x, lambda p, q: p),
    ("x * y", lambda x, y: x * y, lambda p, q: p * q),
)


def cond(b: Builder) -> None:
    """``lax.cond`` on an argument or on the sign of an exact sum, or a 3-way ``lax.switch``
    on an argument that may be out of range (clamped)."""
    x = b.pick()
    y = b.like(x)
    v, w = b.values[x], b.values[y]
    if b.rng.random() < 0.35:
        index = b.ints((), -1, 3)
        picked = [BRANCHES[int(i)] for i in b.rng.choice(len(BRANCHES), size=3, replace=False)]
        b.one(f"switch(v{index}, [{'; '.join(p[0] for p in picked)}], x=v{x}, y=v{y})", [index, x, y],
              lambda e, ref: lax.switch(e[index], [p[1] for p in picked], e[x], e[y]),
              max(p[2](v.bound, w.bound) for p in picked))
        return
    then, otherwise = (BRANCHES[int(i)] for i in b.rng.choice(len(BRANCHES), size=2, replace=False))
    bound = max(then[2](v.bound, w.bound), otherwise[2](v.bound, w.bound))
    if v.exact and v.bound * math.prod(v.shape) <= EXACT_LIMIT[v.dtype] and b.rng.random() < 0.5:
        b.one(f"cond(sum(v{x}) > 0, {then[0]}, {otherwise[0]}, x=v{x}, y=v{y})", [x, y],
              lambda e, ref: lax.cond(jnp.sum(e[x]) > 0, then[1], otherwise[1], e[x], e[y]), bound)
        return
    p = b.ints((), 0, 1)
    b.one(f"cond(v{p} > 0, {then[0]}, {otherwise[0]}, x=v{x}, y=v{y})", [p, x, y],
          lambda e, ref: lax.cond(e[p] > 0, then[1], otherwise[1], e[x], e[y]), bound)


def scan(b: Builder) -> None:
    """``lax.scan`` over a fresh stack: carry and stacked outputs are two values."""
    x = b.pick(max_rank=3)
    v = b.values[x]
    length = int(b.rng.integers(1, 5))
    xs = b.data((length,) + v.shape, v.dtype)
    reverse = bool(b.rng.random() < 0.3)
    if b.rng.random() < 0.5:
        text, body = "(c + x, c * x)", lambda c, t: (c + t, c * t)
        carry = v.bound + b.values[xs].bound * length
        bounds = [carry, b.values[xs].bound * carry]
    else:
        text, body = "(maximum(c, x), c - x)", lambda c, t: (jnp.maximum(c, t), c - t)
        carry = max(v.bound, b.values[xs].bound)
        bounds = [carry, carry + b.values[xs].bound]
    b.op(f"scan({text}, init=v{x}, xs=v{xs}, reverse={reverse})", [x, xs],
         lambda e, ref: lax.scan(body, e[x], e[xs], reverse=reverse), bounds)


FAMILIES = (elementwise, select, dot_general, reduce, broadcast, transpose, reshape, concatenate, slice_,
            dynamic_slice, dynamic_update_slice, gather, scatter, conv, cumulative, sort, argmax, fori_loop, cond,
            scan)
