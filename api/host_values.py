"""``to_host``: a multi-controller step's outputs (global ``jax.Array`` s) as numpy on every process."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def to_host(tree: Any) -> Any:
    """Every leaf of ``tree`` as a numpy array, on every process.

    With one process, ``np.asarray`` of each leaf. With several, committed ``jax.Array``
    leaves are global arrays (JAX's convention; a multi-controller step's outputs are):
    their bytes are summed across processes, each byte contributed by the one device
    that owns its shard (the first in the sharding's device order), so the values arrive
    bit for bit; it is then a collective, which every process calls with the same tree.
    Other leaves (host values, uncommitted arrays) are this process's own.
    """
    leaves, treedef = jax.tree.flatten(tree)
    shared = [i for i, x in enumerate(leaves)
              if jax.process_count() > 1 and isinstance(x, jax.Array) and x.committed]
    out = [None if i in shared else np.asarray(x) for i, x in enumerate(leaves)]
    if shared:
        sizes = [leaves[i].size * np.dtype(leaves[i].dtype).itemsize for i in shared]
        offsets = np.cumsum([0, *sizes])
        mine = np.zeros(int(offsets[-1]), np.uint8)
        for i, start, stop in zip(shared, offsets[:-1], offsets[1:]):
            mine[start:stop] = _owned_bytes(leaves[i])
        total = _sum_over_processes(mine)
        for i, start, stop in zip(shared, offsets[:-1], offsets[1:]):
            x = leaves[i]
            out[i] = total[start:stop].view(np.dtype(x.dtype)).reshape(x.shape).copy()
    return jax.tree.unflatten(treedef, out)


def _owned_bytes(x: jax.Array) -> np.ndarray:
    """``x``'s bytes where this process's devices own the shard, zeros elsewhere."""
    owner: dict[tuple, int] = {}
    for device, index in x.sharding.devices_indices_map(tuple(x.shape)).items():
        owner.setdefault(_index_key(index, x.shape), device.id)
    whole = np.zeros(x.shape, np.dtype(x.dtype))
    for shard in x.addressable_shards:
        if owner[_index_key(shard.index, x.shape)] == shard.device.id:
            whole[shard.index] = np.asarray(shard.data)
    return whole.reshape(-1).view(np.uint8)


def _index_key(index: tuple[slice, ...], shape: Sequence[int]) -> tuple:
    return tuple(s.indices(n)[:2] for s, n in zip(index, shape))


def _sum_over_processes(block: np.ndarray) -> np.ndarray:
    """The element-wise sum of every process's ``block`` (a psum over one device per process)."""
    count = jax.process_count()
    devices = tuple(next(d for d in jax.devices() if d.process_index == p) for p in range(count))
    program, sharding = _process_sum(devices)
    local = jax.device_put(block[None], devices[jax.process_index()])
    stacked = jax.make_array_from_single_device_arrays((count, block.size), sharding, [local])
    return np.asarray(program(stacked).addressable_data(0))[0]


@functools.cache
def _process_sum(devices: tuple[Any, ...]) -> tuple[Callable, NamedSharding]:
    mesh = Mesh(np.array(devices), ("process",))
    spec = PartitionSpec("process")
    return jax.jit(jax.shard_map(lambda b: jax.lax.psum(b, "process"), mesh=mesh, in_specs=spec,
                                 out_specs=spec)), NamedSharding(mesh, spec)
