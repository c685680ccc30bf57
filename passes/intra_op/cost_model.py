"""Communication costs on the alpha-beta model of a mesh axis (Sec. 4.2, Tables 2 and 3).

A collective over mesh axes ``G`` among ``n = prod(mesh.shape[a] for a in G)`` devices
costs ``alpha + beta * volume``, where ``alpha``/``beta`` are those of the slowest
axis in ``G`` (a ring over several axes runs at the pace of its slowest link) and
the volume is what each device sends in a ring implementation:

- all-reduce of ``M`` bytes: ``2 (n-1)/n * M``;
- all-gather producing ``M`` bytes: ``(n-1)/n * M``;
- reduce-scatter of ``M`` bytes: ``(n-1)/n * M``;
- all-to-all of ``M`` bytes: ``(n-1)/n * M`` (each device keeps ``1/n`` of its tile);
- collective permute of ``M`` bytes: ``M`` (each device sends its buffer once; XLA's
  partitioner reshards with them).
"""

from __future__ import annotations

import math

from ...dialect.mesh import DeviceMesh
from ...dialect.sharding import ShardingSpec
from .strategy import Collective, CollectiveKind

_VOLUME = {"all-reduce": 2.0, "all-gather": 1.0, "reduce-scatter": 1.0, "all-to-all": 1.0,
           "collective-permute": 1.0}


def group_size(mesh: DeviceMesh, axes: tuple[int, ...]) -> int:
    return math.prod(mesh.shape[a] for a in axes)


def collective(kind: CollectiveKind, nbytes: float, axes: tuple[int, ...], mesh: DeviceMesh,
               group: int | None = None) -> Collective:
    """The :class:`Collective` ``kind`` over ``axes`` on a per-device buffer of ``nbytes``.

    ``group``: the devices per group when XLA's groups span no set of mesh axes (then
    ``axes`` is empty and the slowest axis prices the collective).
    """
    n = group_size(mesh, axes) if group is None else group
    if n == 1:
        return Collective(kind, axes, nbytes, 0.0)
    links = axes or tuple(range(mesh.ndim))
    alpha = max(mesh.alpha[a] for a in links)
    beta = max(mesh.beta[a] for a in links)
    ring = 1.0 if kind == "collective-permute" else (n - 1) / n
    return Collective(kind, axes, nbytes, alpha + beta * _VOLUME[kind] * ring * nbytes)


def tile_bytes(spec: ShardingSpec, shape: tuple[int, ...], itemsize: int, mesh: DeviceMesh) -> float:
    """Bytes of one device's tile of a tensor of ``shape`` sharded as ``spec``."""
    elements = math.prod(math.ceil(size / spec.num_shards(d, mesh)) for d, size in enumerate(shape))
    return float(elements * itemsize)


def resharding_collectives(src: ShardingSpec, dst: ShardingSpec, shape: tuple[int, ...],
                           itemsize: int, mesh: DeviceMesh) -> tuple[Collective, ...]:
    """The collectives that turn a tensor sharded as ``src`` into ``dst`` (Table 2).

    Per mesh axis: unused in ``src`` but used in ``dst`` is a local slice (free, case
    1); used in ``src`` on another dimension or position than in ``dst`` is an
    all-to-all on the source tile (cases 4 and 5); used in ``src`` but not in ``dst``
    is an all-gather (cases 2 and 3), all such axes in one collective whose result is
    the tile that remains sharded on the other axes.
    """
    def place(spec: ShardingSpec, axis: int) -> tuple[int, int] | None:
        for dim, axes in enumerate(spec.dims):
            if axis in axes:
                return dim, axes.index(axis)
        return None

    moved, gathered = [], []
    for axis in range(mesh.ndim):
        if mesh.shape[axis] == 1:
            continue
        before, after = place(src, axis), place(dst, axis)
        if before is None or before == after:
            continue
        (moved if after is not None else gathered).append(axis)
    result = []
    source_tile = tile_bytes(src, shape, itemsize, mesh)
    for axis in moved:
        result.append(collective("all-to-all", source_tile, (axis,), mesh))
    if gathered:
        kept = ShardingSpec(tuple(tuple(a for a in axes if a not in gathered) for axes in src.dims))
        result.append(collective("all-gather", tile_bytes(kept, shape, itemsize, mesh), tuple(gathered), mesh))
    return tuple(result)
