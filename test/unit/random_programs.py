"""Random JAX programs over the op families the intra-op rules cover (test_random_programs.py).

A program is a short chain of ops drawn from one seed: every op takes a recent value
(or a fresh argument) and adds its results; every result no later op reads is
returned. Arguments are small integers, so float arithmetic is exact (equal under any
summation order, hence under any sharding) until a value outgrows its dtype's mantissa
or passes through ``tanh``; :class:`Value` tracks that, ops whose result would flip
with a rounding difference (argmax, comparisons, float-to-int converts) only take exact
operands, and exact outputs are compared exactly.

Sharding constraints pull the plan away from replicating small ops (which would cost it
nothing otherwise): on half the values, and on half the results of slicing, indexing,
joining, sorting and windowed ops with the dimension the op changed split, the
boundary where a rule must keep a dimension whole. Dynamic-slice starts are arguments
drawn in range, negative or past the end.

The reference (``fn(reference=True)``, for ``jax.jit`` on one device) drops the
constraints and writes the clamp of dynamic-slice starts out, because XLA's simplifier
folds a dynamic slice of a dynamic slice with the wrong clamp, which jax.jit hits too
(see ``alpa-clamp-dynamic-slice-starts``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

F32, BF16, I32 = np.dtype(np.float32), np.dtype(jnp.bfloat16), np.dtype(np.int32)
DTYPES = (F32, BF16, I32)
SIZES = (1, 2, 3, 4, 5, 6, 8, 12, 16)  # odd sizes and sizes every mesh axis divides
MESHES = ((2, 4), (8,), (2, 2, 2))
MESH_AXES = ("x", "y", "z")
DATA_BOUND = 8  # arguments are integers in [-8, 8]: few repeats, so a wrong element shows
MAX_ELEMENTS, MAX_RANK = 384, 4
# Integers up to these magnitudes are exact in the dtype (int32 wraps the same way in any order).
EXACT_LIMIT = {F32: 2.0**24, BF16: 256.0, I32: math.inf}
SHORT = {F32: "f32", BF16: "bf16", I32: "i32"}

Env = dict[int, jax.Array]


@dataclass(frozen=True)
class Value:
    """A value of the program: its type, a bound on ``|element|``, whether it is exact and
    whether it may hold NaNs (``take`` fills out-of-range floats with NaN)."""

    shape: tuple[int, ...]
    dtype: np.dtype
    bound: float
    exact: bool
    nan: bool = False

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_float(self) -> bool:
        return self.dtype != I32


@dataclass(frozen=True)
class Step:
    text: str
    operands: tuple[int, ...]
    outs: tuple[int, ...]
    run: Callable[[Env, bool], tuple[jax.Array, ...]]


@dataclass(frozen=True)
class Program:
    """One generated program; ``describe()`` prints it for a failure report."""

    seed: int
    mesh_shape: tuple[int, ...]
    args: tuple[np.ndarray, ...]
    arg_ids: tuple[int, ...]
    steps: tuple[Step, ...]
    outputs: tuple[int, ...]
    values: tuple[Value, ...]

    def fn(self, reference: bool = False) -> Callable[..., tuple[jax.Array, ...]]:
        def program(*args: jax.Array) -> tuple[jax.Array, ...]:
            env: Env = dict(zip(self.arg_ids, args))
            for step in self.steps:
                env.update(zip(step.outs, step.run(env, reference)))
            return tuple(env[o] for o in self.outputs)

        return program

    def describe(self) -> str:
        lines = [f"seed {self.seed} on mesh {self.mesh_shape}"]
        for number, (vid, arg) in enumerate(zip(self.arg_ids, self.args)):
            shown = arg.astype(np.float32) if arg.dtype == BF16 else arg
            text = f" = {np.array2string(shown, separator=', ')}" if arg.size <= 8 else ""
            lines.append(f"  v{vid} = argument {number}: {_type(self.values[vid])}{text}")
        lines += [f"  {step.text}" for step in self.steps]
        lines.append("  return " + ", ".join(f"v{o}" for o in self.outputs))
        return "\n".join(lines)


def _type(value: Value) -> str:
    return f"{SHORT[value.dtype]}[{','.join(map(str, value.shape))}]"


def clamp_start(start: jax.Array, size: int, length: int, explicit: bool) -> jax.Array:
    """A dynamic-slice start as given, or with JAX's wrap of negatives and XLA's clamp written out."""
    if not explicit:
        return start
    start = jnp.where(start < 0, start + size, start)
    return jnp.clip(start, 0, size - length)


class Rejected(Exception):
    """The drawn op does not fit (too big, wrong operand): draw again."""


class Builder:
    """Draws one program: values, arguments and steps."""

    def __init__(self, seed: int, mesh_shape: tuple[int, ...]):
        self.rng = np.random.default_rng(seed)
        self.mesh_shape = mesh_shape
        self.values: list[Value] = []
        self.args: list[np.ndarray] = []
        self.arg_ids: list[int] = []
        self.steps: list[Step] = []

    # ---------------------------------------------------------------- drawing values

    def choice(self, options: Sequence):
        return options[int(self.rng.integers(len(options)))]

    def size(self) -> int:
        return int(self.choice(SIZES))

    def shape(self, rank: int) -> tuple[int, ...]:
        return tuple(self.size() for _ in range(rank))

    def argument(self, array: np.ndarray, value: Value) -> int:
        self.values.append(value)
        self.args.append(array)
        self.arg_ids.append(len(self.values) - 1)
        return len(self.values) - 1

    def data(self, shape: tuple[int, ...], dtype: np.dtype) -> int:
        """A fresh argument of small integers (exact in every dtype)."""
        array = self.rng.integers(-DATA_BOUND, DATA_BOUND + 1, size=shape).astype(dtype)
        return self.argument(array, Value(tuple(shape), dtype, float(DATA_BOUND), True))

    def ints(self, shape: tuple[int, ...], low: int, high: int) -> int:
        """A fresh int32 argument in ``[low, high]`` (indices, starts, predicates)."""
        array = self.rng.integers(low, high + 1, size=shape).astype(I32)
        return self.argument(array, Value(tuple(shape), I32, float(max(abs(low), abs(high))), True))

    def start(self, size: int, length: int) -> int:
        """A scalar start for a slice of ``length`` out of ``size``: in range, negative (wrapped
        once, then clamped) or, half the time, past the end (clamped to ``size - length``)."""
        kind = int(self.rng.integers(4))
        if kind == 0:
            return self.ints((), *(2 * [int(self.rng.integers(0, size - length + 1))]))
        if kind >= 2:
            past = size - length + int(self.rng.integers(1, size + 3))
            return self.ints((), past, past)
        below = -int(self.rng.integers(1, 2 * size + 3))
        return self.ints((), below, below)

    def pick(self, min_rank: int = 0, max_rank: int = MAX_RANK, exact: bool = False,
             dtypes: Sequence[np.dtype] = DTYPES) -> int:
        """A recent value that fits (the last one most often), else a fresh argument."""
        fits = [i for i, v in enumerate(self.values)
                if min_rank <= v.rank <= max_rank and v.dtype in dtypes and (v.exact or not exact)]
        if fits and self.rng.random() < 0.85:
            return fits[-1] if self.rng.random() < 0.6 else int(self.choice(fits))
        rank = int(self.rng.integers(max(min_rank, 1), min(max_rank, 3) + 1))
        return self.data(self.shape(rank), self.choice(list(dtypes)))

    def like(self, x: int) -> int:
        """Another value of ``x``'s type, or a fresh argument of it."""
        v = self.values[x]
        same = [i for i, w in enumerate(self.values) if i != x and w.shape == v.shape and w.dtype == v.dtype]
        if same and self.rng.random() < 0.5:
            return int(self.choice(same))
        return self.data(v.shape, v.dtype)

    # ---------------------------------------------------------------- adding ops

    def op(self, text: str, operands: Sequence[int], run: Callable[[Env, bool], tuple[jax.Array, ...]],
           bounds: Sequence[float], rounds: bool = False, nan: bool = False) -> tuple[int, ...]:
        """Adds a step whose results have these bounds; their types come from tracing ``run``.

        A float result is exact when its operands are, ``rounds`` is false and its bound fits
        the dtype; it may hold NaNs when an operand may or ``nan`` says so.
        """
        env = {i: jax.ShapeDtypeStruct(self.values[i].shape, self.values[i].dtype) for i in operands}
        avals = jax.eval_shape(lambda e: run(e, True), env)
        exact = all(self.values[i].exact for i in operands) and not rounds
        nan = nan or any(self.values[i].nan for i in operands)
        outs = []
        for aval, bound in zip(avals, bounds, strict=True):
            if len(aval.shape) > MAX_RANK or math.prod(aval.shape) > MAX_ELEMENTS or 0 in aval.shape:
                raise Rejected
            dtype = np.dtype(aval.dtype)
            fits = dtype == I32 or (exact and bound <= EXACT_LIMIT[dtype])
            self.values.append(Value(tuple(aval.shape), dtype, float(bound), fits, nan and dtype != I32))
            outs.append(len(self.values) - 1)
        names = ", ".join(f"v{o}: {_type(self.values[o])}" for o in outs)
        self.steps.append(Step(f"{names} = {text}", tuple(operands), tuple(outs), run))
        return tuple(outs)

    def one(self, text: str, operands: Sequence[int], run: Callable[[Env, bool], jax.Array], bound: float,
            rounds: bool = False, nan: bool = False) -> int:
        return self.op(text, operands, lambda env, ref: (run(env, ref),), [bound], rounds, nan)[0]

    def pin(self, x: int, prefer: Sequence[int] = ()) -> None:
        """A sharding constraint on ``x``: each mesh axis splits a dimension it divides, or
        none; a dimension of ``prefer`` (one the op sliced or indexed) first, where one fits."""
        v = self.values[x]
        axes: list[list[int]] = [[] for _ in v.shape]
        for axis in self.rng.permutation(len(self.mesh_shape)):
            fits = [d for d in range(v.rank)
                    if v.shape[d] % (math.prod(self.mesh_shape[a] for a in axes[d]) * self.mesh_shape[axis]) == 0]
            preferred = [d for d in fits if d in prefer]
            if preferred:
                axes[int(self.choice(preferred))].append(int(axis))
            elif fits and self.rng.random() < 0.7:
                axes[int(self.choice(fits))].append(int(axis))
        if not any(axes):
            raise Rejected
        names = [tuple(MESH_AXES[a] for a in dim) or None for dim in axes]
        shape = self.mesh_shape

        def run(env: Env, reference: bool) -> jax.Array:
            if reference:
                return env[x]
            mesh = jax.sharding.Mesh(np.array(jax.devices()[:math.prod(shape)]).reshape(shape), MESH_AXES[:len(shape)])
            spec = jax.sharding.PartitionSpec(*names)
            return jax.lax.with_sharding_constraint(env[x], jax.sharding.NamedSharding(mesh, spec))

        text = ", ".join("+".join(dim) if dim else "None" for dim in names)
        self.one(f"with_sharding_constraint(v{x}, P({text}))", [x], run, v.bound)

    def maybe_pin(self, x: int, dims: Sequence[int]) -> None:
        """Half the time, a constraint that splits one of ``dims`` of ``x`` (the dimensions
        an op sliced, indexed or joined: rules keep them whole, their users may not)."""
        if self.rng.random() < 0.5:
            try:
                self.pin(x, dims)
            except Rejected:
                pass

    def attempt(self, family: Callable[[Builder], object]) -> bool:
        """Runs ``family`` once; on rejection, undoes the arguments and values it added."""
        mark = (len(self.values), len(self.args), len(self.steps))
        try:
            family(self)
            return True
        except Rejected:
            del self.values[mark[0]:], self.args[mark[1]:], self.arg_ids[mark[1]:], self.steps[mark[2]:]
            return False


def generate(seed: int, families: Sequence[Callable[[Builder], object]]) -> Program:
    """The program of ``seed``: its mesh and first op family follow from the seed, so
    consecutive seeds cover every (family, mesh) pair."""
    mesh_shape = MESHES[(seed // len(families)) % len(MESHES)]
    builder = Builder(seed, mesh_shape)
    chain = [families[seed % len(families)]] + [builder.choice(families) for _ in range(builder.rng.integers(2, 5))]
    for family in chain:
        for _ in range(8):
            if builder.attempt(family):
                break
            family = builder.choice(families)
        # Pin half the values (an argument, or what the op made).
        if builder.rng.random() < 0.5:
            pinned = len(builder.values) - 1
            builder.attempt(lambda b, x=pinned: b.pin(x))
    # Every result no later op reads, so that no op is dead code.
    used = {i for step in builder.steps for i in step.operands}
    outputs = tuple(o for step in builder.steps for o in step.outs if o not in used)
    return Program(seed, mesh_shape, tuple(builder.args), tuple(builder.arg_ids), tuple(builder.steps), outputs,
                   tuple(builder.values))
