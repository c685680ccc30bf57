"""The values of one call of a pipelined step, as its instructions make, combine and drop them."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..plans.schedules import argument_number

# Each micro-batch's copy of a per-example output, joined along the batch in order.
_concatenate = jax.jit(lambda *pieces: jnp.concatenate(pieces))


class StepValues:
    """One call's values: its arguments, their micro-batches, what the instructions made so far.

    An accumulated value is the mean (or the sum) of the micro-batches' copies, folded in
    by the accumulation programs as they come; a ``concatenated`` one (a per-example
    output) keeps every micro-batch's copy and is read as them joined along the leading
    dimension, the whole batch's."""

    def __init__(self, args: Sequence[Any], micro: dict[int, list[Any]], concatenated: Collection[str] = ()) -> None:
        self.args, self.micro = args, micro
        self.concatenated = concatenated
        self.store: dict[tuple[str, int | None], Any] = {}
        self.sums: dict[str, Any] = {}  # accumulated values: the mean (or sum) over the micro-batches so far
        self.pieces: dict[str, list[Any]] = {}  # concatenated values: the micro-batches' copies so far
        self.placed: dict[tuple[int, int], Any] = {}  # (argument, mesh) -> the argument as that mesh takes it

    def accumulate(self, values: tuple[str, ...], m: int, programs: Mapping[tuple[tuple[str, ...], bool], Callable]
                   ) -> None:
        """Fold micro-batch ``m``'s copies of ``values`` in: ``programs[names, first]`` adds
        ``names`` into their sums (``first``: none yet); a concatenated value is kept."""
        for name in values:
            if name in self.concatenated:
                self.pieces.setdefault(name, []).append(self.store[name, m])
        summed = tuple(name for name in values if name not in self.concatenated)
        if summed:
            first = summed[0] not in self.sums
            self.sums.update(zip(summed, programs[summed, first](
                tuple(None if first else self.sums[n] for n in summed), tuple(self.store[n, m] for n in summed))))

    def free(self, values: tuple[str, ...], m: int | None) -> None:
        """Drop micro-batch ``m``'s copies of ``values`` (``None``: the step-level values)."""
        for name in values:
            self.store.pop((name, m), None)
            if m is None:
                self.sums.pop(name, None)
                self.pieces.pop(name, None)

    def read(self, name: str, m: int | None, mesh: int) -> Any:
        """Value ``name`` of micro-batch ``m`` (``None``: step-level) as mesh ``mesh`` reads it."""
        number = argument_number(name)
        if number is not None:
            if number in self.micro and m is not None:
                return self.micro[number][m]
            return self.placed.get((number, mesh), self.args[number])
        if m is None and name in self.pieces:
            return _concatenate(*self.pieces[name])
        return self.sums[name] if m is None and name in self.sums else self.store[name, m]


def host_batch(number: int, value: Any) -> Any:
    """A batch argument as this process's host value (each process cuts its own micro-batches)."""
    if not isinstance(value, jax.Array) or not value.committed:
        return np.asarray(value)
    if value.is_fully_replicated and value.addressable_shards:
        return np.asarray(value.addressable_data(0))
    raise ValueError(f"batch argument {number} is a global array sharded over devices "
                     f"{sorted(d.id for d in value.sharding.device_set)}; with several processes pass the batch as "
                     "a host value (numpy), the same on every process, or fully replicated")
