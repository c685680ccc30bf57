"""Cross-mesh resharding plans (Sec. 6): which tiles move between which devices.

A plan moves one tensor of ``shape`` from its sharding on a source mesh to its
sharding on a destination mesh (disjoint device sets). Tiles are global coordinates:
one ``(start, limit)`` per dimension of the unsharded tensor.

Every destination device ends up holding its destination tile, assembled from the
tiles it receives directly (moves with ``gather is None``) and the tiles of the local
all-gathers it takes part in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..dialect.mesh import DeviceMesh
from ..dialect.sharding import ShardingSpec
from ..dialect.tile_map import tile_map

Tile = tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class TileMove:
    """Send ``tile`` from ``src_device`` (which holds it) to ``dst_device``.

    ``gather`` is the index in :attr:`ReshardPlan.gathers` of the local all-gather this
    move delivers one piece of, or ``None`` when ``dst_device`` keeps the tile as is.
    """

    channel_id: int
    src_device: int
    dst_device: int
    tile: Tile
    gather: int | None = None


@dataclass(frozen=True, slots=True)
class LocalGather:
    """An all-gather inside the destination mesh (the second step of Sec. 6's rewrite).

    Device ``devices[k]`` received the ``k``-th piece of ``tile`` split evenly along
    ``dim``; afterwards every device of ``devices`` holds the whole ``tile``.
    """

    devices: tuple[int, ...]
    dim: int
    tile: Tile


@dataclass(frozen=True, slots=True)
class ReshardPlan:
    """All moves and local all-gathers of one cross-mesh resharding.

    ``dst_tiles`` maps every destination device to the tile it holds at the end.
    """

    shape: tuple[int, ...]
    moves: tuple[TileMove, ...]
    gathers: tuple[LocalGather, ...]
    dst_tiles: dict[int, Tile]


@dataclass(frozen=True, slots=True)
class Piece:
    """One part of a destination device's final tile: a tile that move ``move`` delivers
    as is, or the tile of local all-gather ``gather`` (exactly one of the two is set)."""

    tile: Tile
    move: int | None = None
    gather: int | None = None


# A delivery before senders are picked: (tile, destination device, gather index, source tile).
_Job = tuple[Tile, int, int | None, Tile]


def plan_reshard(shape: tuple[int, ...], src_spec: ShardingSpec, src_mesh: DeviceMesh,
                 dst_spec: ShardingSpec, dst_mesh: DeviceMesh, local_all_gather: bool = True) -> ReshardPlan:
    """The moves and local all-gathers that take a tensor of ``shape`` from ``src_spec`` on
    ``src_mesh`` to ``dst_spec`` on ``dst_mesh``, the two meshes' device sets disjoint.

    Sec. 6, first iteration: every distinct destination tile is intersected with every
    distinct source tile; each non-empty intersection goes to every destination device
    holding that destination tile, from one of the source devices holding the source
    tile. Second iteration (``local_all_gather``): where the destination spec
    replicates the tile on a group of k > 1 devices, the intersection is split into k
    equal pieces along its largest dimension divisible by k, piece i goes to the i-th
    device of the group (mesh order) and a :class:`LocalGather` over the group rebuilds
    it, so it crosses between meshes once instead of k times. An intersection with no
    dimension divisible by k is sent whole to each device of the group.

    Senders are balanced: the deliveries of one source tile go, largest first, to the
    holder of that tile that has sent the fewest elements so far (ties: lowest device
    id). Channel ids number the moves 0..n-1 in order: destination tiles in mesh order,
    then source tiles in mesh order, then the devices of the group.

    Raises ``ValueError`` when the meshes share a device, and
    :class:`~alpa_mlir.dialect.sharding.ShardingError` when a spec does not fit its mesh
    or ``shape``.
    """
    shape = tuple(int(s) for s in shape)
    shared = sorted(set(src_mesh.device_ids) & set(dst_mesh.device_ids))
    if shared:
        raise ValueError(f"cross-mesh resharding needs disjoint meshes; devices {shared} are in both")
    src_groups = _tile_groups(_bounds_map(src_spec, src_mesh, shape))
    dst_tiles = _bounds_map(dst_spec, dst_mesh, shape)
    jobs: list[_Job] = []
    gathers: list[LocalGather] = []
    for dst_tile, group in _tile_groups(dst_tiles).items():
        for src_tile in src_groups:
            needed = intersect(dst_tile, src_tile)
            if needed is None:
                continue
            dim = split_dim(needed, len(group)) if local_all_gather else None
            if dim is None:
                jobs.extend((needed, device, None, src_tile) for device in group)
                continue
            gathers.append(LocalGather(group, dim, needed))
            pieces = split_tile(needed, dim, len(group))
            jobs.extend((piece, device, len(gathers) - 1, src_tile) for piece, device in zip(pieces, group))
    senders = _balance_senders(jobs, src_groups)
    moves = tuple(TileMove(channel, sender, device, tile, gather)
                  for channel, ((tile, device, gather, _), sender) in enumerate(zip(jobs, senders)))
    return ReshardPlan(shape, moves, tuple(gathers), dst_tiles)


def volume(tile: Tile) -> int:
    """Number of elements of ``tile``."""
    return math.prod(limit - start for start, limit in tile)


def intersect(a: Tile, b: Tile) -> Tile | None:
    """The common part of two tiles, ``None`` when it holds no element."""
    common = tuple((max(sa, sb), min(la, lb)) for (sa, la), (sb, lb) in zip(a, b))
    return common if all(start < limit for start, limit in common) else None


def split_dim(tile: Tile, parts: int) -> int | None:
    """The largest dimension of ``tile`` that splits into ``parts`` equal pieces (ties:
    the first), or ``None`` when ``parts`` < 2 or no dimension divides."""
    if parts < 2:
        return None
    extents = [limit - start for start, limit in tile]
    divisible = [d for d, extent in enumerate(extents) if extent % parts == 0]
    return max(divisible, key=lambda d: (extents[d], -d), default=None)


def split_tile(tile: Tile, dim: int, parts: int) -> list[Tile]:
    """``tile`` cut into ``parts`` equal pieces along ``dim``, in order."""
    start, limit = tile[dim]
    step = (limit - start) // parts
    return [tile[:dim] + ((start + i * step, start + (i + 1) * step),) + tile[dim + 1:] for i in range(parts)]


def device_pieces(plan: ReshardPlan) -> dict[int, list[Piece]]:
    """For every destination device, the pieces its final tile is assembled from, in tile
    order: the tiles moved to it as is and the tiles of the local all-gathers it is in."""
    pieces: dict[int, list[Piece]] = {device: [] for device in plan.dst_tiles}
    for index, move in enumerate(plan.moves):
        if move.gather is None:
            pieces[move.dst_device].append(Piece(move.tile, move=index))
    for index, gather in enumerate(plan.gathers):
        for device in gather.devices:
            pieces[device].append(Piece(gather.tile, gather=index))
    return {device: sorted(found, key=lambda p: p.tile) for device, found in pieces.items()}


def plan_bytes(plan: ReshardPlan, itemsize: int) -> int:
    """Bytes that cross between the two meshes (every move once)."""
    return itemsize * sum(volume(move.tile) for move in plan.moves)


def check_plan(plan: ReshardPlan) -> None:
    """Raise ``ValueError`` unless ``plan`` is consistent: channel ids are 0..n-1, every
    local all-gather gets piece k of its split tile on its k-th device, and every
    destination device's pieces exactly partition its destination tile."""
    if [move.channel_id for move in plan.moves] != list(range(len(plan.moves))):
        raise ValueError("channel ids are not 0..n-1 in move order")
    for index, gather in enumerate(plan.gathers):
        delivered = {m.dst_device: m.tile for m in plan.moves if m.gather == index}
        expected = dict(zip(gather.devices, split_tile(gather.tile, gather.dim, len(gather.devices))))
        if delivered != expected:
            raise ValueError(f"local all-gather {index} over {gather.devices} receives {delivered}, "
                             f"expected {expected}")
    for device, pieces in device_pieces(plan).items():
        if not partitions(plan.dst_tiles[device], [p.tile for p in pieces]):
            raise ValueError(f"the pieces of device {device} do not partition its tile {plan.dst_tiles[device]}: "
                             f"{[p.tile for p in pieces]}")


def partitions(tile: Tile, pieces: list[Tile]) -> bool:
    """Whether ``pieces`` lie inside ``tile``, do not overlap and cover it."""
    inside = all(intersect(piece, tile) == piece for piece in pieces if volume(piece))
    disjoint = all(intersect(a, b) is None for i, a in enumerate(pieces) for b in pieces[i + 1:])
    return inside and disjoint and sum(volume(p) for p in pieces) == volume(tile)


def _bounds_map(spec: ShardingSpec, mesh: DeviceMesh, shape: tuple[int, ...]) -> dict[int, Tile]:
    """:func:`tile_map` with ``(start, limit)`` pairs instead of slices."""
    return {device: tuple((s.start, s.stop) for s in slices)
            for device, slices in tile_map(spec, mesh, shape).items()}


def _tile_groups(tiles: dict[int, Tile]) -> dict[Tile, tuple[int, ...]]:
    """Every distinct non-empty tile with the devices holding it, both in mesh order."""
    groups: dict[Tile, list[int]] = {}
    for device, tile in tiles.items():
        if volume(tile):
            groups.setdefault(tile, []).append(device)
    return {tile: tuple(devices) for tile, devices in groups.items()}


def _balance_senders(jobs: list[_Job], src_groups: dict[Tile, tuple[int, ...]]) -> list[int]:
    """The sender of every job: per source tile, largest jobs first, each to the holder
    that has sent the fewest elements so far (ties: lowest device id)."""
    sent = {device: 0 for holders in src_groups.values() for device in holders}
    senders = [0] * len(jobs)
    # Largest first (LPT): with uneven tiles, taking jobs in plan order can leave one
    # sender a big tile after it took small ones; LPT matched brute force on small cases.
    for index in sorted(range(len(jobs)), key=lambda i: -volume(jobs[i][0])):
        tile, _, _, src_tile = jobs[index]
        sender = min(src_groups[src_tile], key=lambda d: (sent[d], d))
        sent[sender] += volume(tile)
        senders[index] = sender
    return senders
