"""A cross-mesh transfer inside one process, as copies between devices (no collective program).

Where one process holds both meshes, :class:`runtime.transfer.CrossMeshTransfer` needs no
rendezvous of the two meshes' devices: each destination device's block is

- copied whole (``jax.device_put``, PJRT's device-to-device copy) from a source device
  that holds it (the holders of a tile taken in turn);
- or, the first time a block no source device holds is met, assembled on its device from
  the source tiles it overlaps (one holder of each): a partial tile is cut on its source
  device, every piece is copied, and one small program writes them into the block;
- or, met again (a destination replicated over devices), copied from the device that
  assembled it;
- or, empty (an array with a dimension of 0), made on its device.

On XLA:CPU the permute program's rendezvous of every device of both meshes cost 0.3-1 ms
per transfer; the columns of a (1, 2) mesh gathered onto another (1, 2) mesh took 0.5-0.7
ms as copies against 0.9-2.9 ms as the plan's permute and gather programs. The plan's moves
and gathers save links between hosts, which one process does not have.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import jax
import jax.numpy as jnp
from jax import lax

from ..plans.reshard_plan import Tile

Shape = tuple[int, ...]


def tile_shape(tile: Tile) -> Shape:
    return tuple(limit - start for start, limit in tile)


def tile_offset(tile: Tile, outer: Tile) -> tuple[int, ...]:
    """Where ``tile`` starts inside ``outer``."""
    return tuple(t0 - o0 for (t0, _), (o0, _) in zip(tile, outer))


@dataclass(frozen=True, slots=True)
class Piece:
    """The part of ``src_device``'s shard at ``start`` (None: all of it) of ``shape``, written at
    ``offset`` in a destination block."""

    src_device: int
    start: tuple[int, ...] | None
    shape: Shape
    offset: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class LocalBlock:
    """Destination ``device``'s block: copied whole from ``source`` (a source device, or a
    destination device earlier in the order), or else assembled from ``pieces`` (none: an
    empty block)."""

    device: int
    source: int | None
    pieces: tuple[Piece, ...] = ()


def plan_copies(src_tiles: Mapping[int, Tile], dst_tiles: Mapping[int, Tile]) -> tuple[LocalBlock, ...]:
    """The copies that make every destination device's tile (``dst_tiles``, in destination
    order) from the source devices' (``src_tiles``, in source order), as the module says."""
    holders: dict[Tile, list[int]] = defaultdict(list)
    for device, tile in src_tiles.items():
        holders[tile].append(device)
    turn: dict[Tile, int] = defaultdict(int)

    def holder(tile: Tile) -> int:
        turn[tile] += 1
        return holders[tile][(turn[tile] - 1) % len(holders[tile])]

    assembled: dict[Tile, int] = {}
    blocks = []
    for device, tile in dst_tiles.items():
        if not math.prod(tile_shape(tile)):  # an empty block: made on its device
            blocks.append(LocalBlock(device, None))
        elif tile in holders:
            blocks.append(LocalBlock(device, holder(tile)))
        elif tile in assembled:
            blocks.append(LocalBlock(device, assembled[tile]))
        else:
            pieces = []
            for src_tile in holders:
                part = tuple((max(a, c), min(b, e)) for (a, b), (c, e) in zip(tile, src_tile))
                if all(a < b for a, b in part):
                    start = None if part == src_tile else tile_offset(part, src_tile)
                    pieces.append(Piece(holder(src_tile), start, tile_shape(part), tile_offset(part, tile)))
            blocks.append(LocalBlock(device, None, tuple(pieces)))
            assembled[tile] = device
    return tuple(blocks)


def copy_work(blocks: Sequence[LocalBlock], dst_tiles: Mapping[int, Tile], itemsize: int) -> tuple[int, int, int]:
    """(device-to-device copies, programs that cut or assemble a block on one device, bytes
    written on the destination devices) of ``blocks``."""
    copies = launches = written = 0
    for block in blocks:
        assembles = len(block.pieces) > 1
        copies += 1 if block.source is not None else len(block.pieces)
        launches += sum(p.start is not None for p in block.pieces) + assembles
        written += math.prod(tile_shape(dst_tiles[block.device])) * itemsize * (1 + assembles)
    return copies, launches, written


def run_copies(blocks: Sequence[LocalBlock], held: dict[int, jax.Array], devices: Mapping[int, jax.Device],
               dst_tiles: Mapping[int, Tile]) -> list[jax.Array]:
    """The destination blocks, in the order of ``blocks``, made from the source shards
    ``held`` (device id -> its shard; the blocks are added to it as they are made)."""
    for block in blocks:
        device = devices[block.device]
        if block.source is not None:
            held[block.device] = jax.device_put(held[block.source], device)
            continue
        if not block.pieces:  # an empty block
            dtype = next(iter(held.values())).dtype
            held[block.device] = jnp.zeros(tile_shape(dst_tiles[block.device]), dtype, device=device)
            continue
        parts = [jax.device_put(held[p.src_device] if p.start is None else _cut(held[p.src_device], p.start, p.shape),
                                device) for p in block.pieces]
        held[block.device] = parts[0] if len(parts) == 1 else \
            _assemble(parts, tile_shape(dst_tiles[block.device]), tuple(p.offset for p in block.pieces))
    return [held[block.device] for block in blocks]


@partial(jax.jit, static_argnums=(1, 2))
def _cut(shard: jax.Array, start: tuple[int, ...], shape: Shape) -> jax.Array:
    return lax.slice(shard, start, tuple(a + n for a, n in zip(start, shape)))


@partial(jax.jit, static_argnums=(1, 2))
def _assemble(parts: list[jax.Array], block: Shape, offsets: tuple[tuple[int, ...], ...]) -> jax.Array:
    out = jnp.zeros(block, parts[0].dtype)
    for part, offset in zip(parts, offsets):
        out = lax.dynamic_update_slice(out, part, offset)
    return out
