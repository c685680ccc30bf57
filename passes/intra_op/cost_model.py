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

import functools
import math

from ...dialect.mesh import DeviceMesh
from ...dialect.sharding import ShardingSpec, split_bytes, tile_bytes
from ...plans.sharding_plan import Collective, CollectiveKind

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


# Pure in its arguments, and asked the same pairs by every candidate the stage search plans.
@functools.lru_cache(maxsize=1 << 16)
def resharding_collectives(src: ShardingSpec, dst: ShardingSpec, shape: tuple[int, ...],
                           itemsize: int, mesh: DeviceMesh) -> tuple[Collective, ...]:
    """The collectives XLA's SPMD partitioner emits to turn ``src`` into ``dst``: Table 2's
    cases in the partitioner's order and repertoire.

    Per mesh axis: *new* (unused in ``src``, used in ``dst``: a local slice, case 1),
    *gathered* (used in ``src`` only: cases 2 and 3) or *moved* (on another dimension or
    position: cases 4 and 5). With ``s`` and ``t`` the shard counts per dimension of
    ``src`` and ``dst``, the partitioner (checked against its output, see
    ``lowering.reshard_probe`` and ``test_reshard_probe``) does, first match:

    1. nothing gathered or moved: a local slice, free;
    2. each ``t[d]`` a multiple of ``s[d]`` (every destination tile inside a source
       tile): a local slice and a collective permute of the destination tile;
    3. only gathered axes: one all-gather per tensor dimension, the last first, each
       growing the tile the previous one left (not one all-gather over all axes);
    4. each ``s[d]`` a multiple of ``t[d]``: a collective permute of the source tile
       that lines the devices up, then the all-gathers of 3 down to ``t``;
    5. none gathered or new, and the moved axes go together, in their order, from one
       tensor dimension to another (``S^{01}R`` to ``RS^{01}``, or one axis): one
       all-to-all over them of the source tile;
    6. otherwise: all-gathers as in 3 down to ``dst``'s number of tiles, then an
       all-to-all and a collective permute of the destination tile. Table 2 composes
       cheaper all-to-alls here that the partitioner does not emit; this rule is
       exact for 3 in 5 of the pairs it prices and off by up to 7x either way on the
       rest, which ``resharding-costs=xla`` asks XLA about.

    Measured on 2,174 pairs of layouts of rank-2 and rank-3 tensors on (2, 2, 2) and
    (2, 4) meshes: rules 1-5 are exact on all 1,139 they price, 81% of all pairs are
    exact. Table 2's cases alone were exact for 3 in 10 of the (2, 2, 2) pairs and
    priced a quarter of them below what XLA emits.
    """
    def place(spec: ShardingSpec, axis: int) -> tuple[int, int] | None:
        for dim, axes in enumerate(spec.dims):
            if axis in axes:
                return dim, axes.index(axis)
        return None

    moved, gathered, new = [], [], []
    for axis in range(mesh.ndim):
        before, after = place(src, axis), place(dst, axis)
        if mesh.shape[axis] == 1 or before == after:
            continue
        (new if before is None else moved if after is not None else gathered).append(axis)
    s, t = src.tile_shape(mesh), dst.tile_shape(mesh)
    changed = tuple(sorted(moved + gathered + new))
    if not moved and not gathered:
        return ()
    if all(b % a == 0 for a, b in zip(s, t)):
        return (collective("collective-permute", tile_bytes(dst, shape, itemsize, mesh), changed, mesh),)
    if not moved and not new:
        return _gathers_to(src, dst, shape, itemsize, mesh)
    if all(a % b == 0 for a, b in zip(s, t)):
        permute = collective("collective-permute", tile_bytes(src, shape, itemsize, mesh), changed, mesh)
        return (permute,) + _gathers_to(src, dst, shape, itemsize, mesh)
    if not gathered and not new and _one_block(src, dst, moved):
        return (collective("all-to-all", tile_bytes(src, shape, itemsize, mesh), tuple(sorted(moved)), mesh),)
    target = tile_bytes(dst, shape, itemsize, mesh)
    return _gathers_to(src, dst, shape, itemsize, mesh) + (collective("all-to-all", target, changed, mesh),
                                                           collective("collective-permute", target, changed, mesh))


def _one_block(src: ShardingSpec, dst: ShardingSpec, moved: list[int]) -> bool:
    """Whether the ``moved`` axes lie, in the same order, on one dimension of ``src`` and
    on one of ``dst``."""
    def order(spec: ShardingSpec) -> list[tuple[int, ...]]:
        return [tuple(a for a in axes if a in moved) for axes in spec.dims if any(a in moved for a in axes)]

    return len(order(src)) == 1 and order(src) == order(dst)


def _gathers_to(src: ShardingSpec, dst: ShardingSpec, shape: tuple[int, ...], itemsize: int,
                mesh: DeviceMesh) -> tuple[Collective, ...]:
    """All-gathers by shard counts, one per tensor dimension, the last first, each down to
    the greatest common divisor of the source's and the destination's count there, until
    no more tiles than ``dst``'s remain; each one's result is the next one's operand."""
    counts, target = list(src.tile_shape(mesh)), dst.tile_shape(mesh)
    result = []
    for dim in reversed(range(len(counts))):
        if math.prod(counts) <= math.prod(target):
            break
        kept = math.gcd(counts[dim], target[dim])
        if kept < counts[dim]:
            group = counts[dim] // kept
            counts[dim] = kept
            lost = tuple(sorted(a for a in src.dims[dim] if a not in dst.dims[dim] and mesh.shape[a] > 1))
            axes = lost if math.prod(mesh.shape[a] for a in lost) == group else ()
            result.append(collective("all-gather", split_bytes(counts, shape, itemsize), axes, mesh, group=group))
    return tuple(result)
