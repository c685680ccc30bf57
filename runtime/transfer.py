"""Cross-mesh transfer programs: run a :class:`ReshardPlan` on devices (Sec. 6).

A :class:`CrossMeshTransfer` moves one ``jax.Array`` from its sharding on a source
mesh to a sharding on a disjoint destination mesh, as the plan says: tiles go from
source to destination devices, then the destination runs the plan's local
all-gathers (the second iteration of Sec. 6's planning rewrites repeated sends to a
replicated tile into one send per piece plus an all-gather over the fast links).

XLA:CPU cannot compile ``stablehlo.send``/``recv``, so the transfer is two kinds of
collective programs, each built with ``jax.shard_map`` (GPUs run the same over NCCL):

1. The *permute program*, over a 1-D mesh ``u`` of the union of both meshes' devices
   (source devices first). Each device's input block is its source shard (devices
   outside the source mesh get a dummy block). The plan's moves are grouped by tile
   shape and split into rounds in which every device sends at most one tile and
   receives at most one (a bipartite edge colouring, König: as many rounds as the
   busiest device has moves). A round is one ``lax.ppermute``; per-device constant
   tables indexed by ``lax.axis_index`` say where the tile is cut from the source
   block and where it lands: in the destination block, or, for a move that delivers
   a piece of a local all-gather, in a slot of a per-device piece buffer.
2. Per *arrangement* of the destination devices as ``(groups, group_size)`` (one for
   plans whose gathers run over the destination's replication groups), a *gather
   program*: every round is one ``lax.all_gather(..., tiled=True)`` along the group
   axis, whose result is written into the destination block.

Where one process holds both meshes, no program runs: the blocks are copied between
devices (``runtime/device_copies.py``).

Blocks enter and leave the programs as per-device buffers
(``addressable_shards`` in, ``jax.make_array_from_single_device_arrays`` out, no
copies), so every process of a multi-controller run builds the same programs and
touches only its own devices. JAX arrays are evenly sharded, so both shardings must
divide the shape.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from ..dialect.jax_interop import spec_to_named_sharding
from ..dialect.mesh import DeviceMesh
from ..dialect.sharding import ShardingSpec
from ..dialect.tile_map import tile_map
from ..lowering.spmd import SharedCompiles, compile_module
from ..plans.reshard_plan import LocalGather, ReshardPlan, Tile, TileMove, check_plan, plan_bytes
from .device_copies import Shape, copy_work, plan_copies, run_copies, tile_offset, tile_shape
from .mesh_executable import MeshExecutable


def _edge_colouring(edges: Sequence[tuple[int, int]]) -> list[int]:
    """A colour per edge of a bipartite multigraph (left, right) so that no two edges
    at a node share one, using max-degree colours (König; alternating-path swaps)."""
    colour = [-1] * len(edges)
    at: tuple[defaultdict[int, dict[int, int]], ...] = (defaultdict(dict), defaultdict(dict))

    def free(node: dict[int, int]) -> int:
        c = 0
        while c in node:
            c += 1
        return c

    for e, (u, v) in enumerate(edges):
        a, b = free(at[0][u]), free(at[1][v])
        if a in at[1][v]:
            # Swap a and b along the a/b path from v; bipartiteness keeps u off it,
            # and afterwards a is free at both ends.
            path, side, node, c = [], 1, v, a
            while c in at[side][node]:
                f = at[side][node][c]
                path.append(f)
                side, node = 1 - side, edges[f][1 - side]
                c = b if c == a else a
            for f in path:
                del at[0][edges[f][0]][colour[f]], at[1][edges[f][1]][colour[f]]
            for f in path:
                colour[f] = b if colour[f] == a else a
                at[0][edges[f][0]][colour[f]] = at[1][edges[f][1]][colour[f]] = f
        colour[e] = a
        at[0][u][a] = at[1][v][a] = e
    return colour


def permute_rounds(moves: Sequence[TileMove]) -> tuple[tuple[TileMove, ...], ...]:
    """The moves as ``ppermute`` rounds: one tile shape per round, every device at most
    once a source and once a target. Per shape, as many rounds as the busiest device
    has moves of that shape."""
    by_shape: dict[Shape, list[TileMove]] = defaultdict(list)
    for move in moves:
        by_shape[tile_shape(move.tile)].append(move)
    rounds = []
    for shape in sorted(by_shape):
        group = by_shape[shape]
        colours = _edge_colouring([(m.src_device, m.dst_device) for m in group])
        for c in range(max(colours) + 1):
            rounds.append(tuple(m for m, k in zip(group, colours) if k == c))
    return tuple(rounds)


@dataclass(frozen=True, slots=True)
class GatherStage:
    """Destination devices arranged as ``rows`` (each a group, in all-gather order)
    and the gathers run on that arrangement, as rounds of one (dim, piece shape) each
    with at most one gather per row."""

    rows: tuple[tuple[int, ...], ...]
    rounds: tuple[tuple[int, ...], ...]  # indices into plan.gathers


def piece_shape(gather: LocalGather) -> Shape:
    shape = list(tile_shape(gather.tile))
    shape[gather.dim] //= len(gather.devices)
    return tuple(shape)


def gather_stages(gathers: Sequence[LocalGather], dst_devices: Sequence[int]) -> tuple[GatherStage, ...]:
    """Pack the gathers' device groups into as few arrangements of the destination
    devices as disjointness allows; devices in no group fill rows of the same size."""
    stages: list[tuple[list[tuple[int, ...]], dict[tuple[int, ...], list[int]]]] = []
    for g, gather in enumerate(gathers):
        row = gather.devices
        for rows, members in stages:
            if row in members or (len(rows[0]) == len(row)
                                  and not set(row) & {d for r in rows for d in r}):
                break
        else:
            rows, members = [], {}
            stages.append((rows, members))
        if row not in members:
            rows.append(row)
            members[row] = []
        members[row].append(g)
    result = []
    for rows, members in stages:
        size = len(rows[0])
        used = {d for r in rows for d in r}
        rest = [d for d in dst_devices if d not in used]
        if len(rest) % size:
            raise ValueError(
                f"local all-gathers over groups {rows} leave {len(rest)} destination devices, which do not "
                f"form groups of {size}; the plan's gathers must partition the destination mesh")
        rows = rows + [tuple(rest[i:i + size]) for i in range(0, len(rest), size)]
        rounds: dict[tuple[int, Shape, int], list[int]] = defaultdict(list)
        for row_gathers in members.values():
            seen: dict[tuple[int, Shape], int] = defaultdict(int)
            for g in row_gathers:
                key = (gathers[g].dim, piece_shape(gathers[g]))
                rounds[key + (seen[key],)].append(g)
                seen[key] += 1
        result.append(GatherStage(tuple(rows), tuple(tuple(r) for r in rounds.values())))
    return tuple(result)


class _PermuteRound(NamedTuple):
    """One round of the permute program: every move in it is one ``ppermute`` pair. Tables
    have a row per device of the program (sources, then destinations)."""

    shape: Shape  # of the tile each pair sends
    pairs: list[tuple[int, int]]  # (source, destination) positions
    src_offset: np.ndarray  # where each source cuts its tile from its shard
    dst_offset: np.ndarray  # where a destination writes it into its shard (direct moves)
    direct: np.ndarray  # the destinations that write it into their shard
    slot: np.ndarray  # where the others keep it, in their pieces for a later gather
    to_slot: np.ndarray  # the destinations that keep it for a gather


class _GatherRound(NamedTuple):
    """One round of a gather program: each active device all-gathers its pieces of one
    local gather (``LocalGather``) along ``dim``."""

    dim: int
    shape: Shape  # of the piece each device holds, with a leading 1
    slot: np.ndarray  # where each device keeps its piece
    offset: np.ndarray  # where the gathered tile goes in its shard
    active: np.ndarray  # the devices that take part in this round


def _masked_update(buffer: jax.Array, update: jax.Array, active: jax.Array,
                   offset: Sequence[jax.Array]) -> jax.Array:
    """``buffer`` with ``update`` written at ``offset`` on devices where ``active``."""
    current = lax.dynamic_slice(buffer, offset, update.shape)
    return lax.dynamic_update_slice(buffer, jnp.where(active, update, current), offset)


def _row(table: np.ndarray, index: jax.Array) -> list[jax.Array]:
    """The per-device entries of a constant ``(devices, k)`` table as ``k`` scalars."""
    picked = jnp.asarray(table)[index]
    return [picked[k] for k in range(table.shape[1])]


def _stacked(block: Shape, count: int, dtype: np.dtype, sharding: NamedSharding) -> jax.ShapeDtypeStruct:
    """The global shape of ``count`` per-device blocks stacked along dim 0."""
    return jax.ShapeDtypeStruct((count * block[0],) + block[1:], dtype, sharding=sharding)


def _from_blocks(blocks: Sequence[jax.Array], block: Shape, count: int, dtype: np.dtype,
                 sharding: NamedSharding) -> jax.Array:
    """The global array of :func:`_stacked` from this process's blocks (no copy)."""
    return jax.make_array_from_single_device_arrays(_stacked(block, count, dtype, sharding).shape, sharding,
                                                    list(blocks), dtype=dtype)


class CrossMeshTransfer:
    """Runs ``plan`` on arrays: ``transfer(src_array) -> dst_array`` (Sec. 6).

    Args:
      plan: the tile moves and local all-gathers for a tensor of ``plan.shape``. Device
        ids are global: ``jax.Device.id``, as :meth:`DeviceMesh.to_jax_mesh` reads them
        (in one process, positions in ``jax.devices()``).
      src_mesh, src_spec: where and how the input is sharded.
      dst_mesh, dst_spec: where and how the output is sharded; the meshes share no device.
      dtype: the element type of the tensor.
      devices: the JAX devices that device ids index (``jax.devices()``).
      direct: where this process holds both meshes, copy the blocks between devices
        (``runtime/device_copies.py``; the ``direct`` property says whether it does); False
        always runs the programs.

    The programs compile on the first call, or on :meth:`compile`. ``rounds`` (``ppermute`` rounds),
    ``num_rounds``, ``stages`` (gather arrangements) and ``bytes_moved`` (bytes that
    cross between the meshes) describe the transfer for benchmarks. The input array
    is left intact; each destination device also keeps a zero block of the source
    shard's shape, its input to the permute program.

    Raises:
      ValueError: the meshes overlap, a sharding does not divide the shape, the array is
        empty and cannot be copied in this process, or the plan
        does not fit the shardings (a move cuts outside its source shard or lands
        outside its destination shard, the destination tiles differ, a gather's pieces
        do not match its moves).
    """

    def __init__(self, plan: ReshardPlan, src_mesh: DeviceMesh, src_spec: ShardingSpec,
                 dst_mesh: DeviceMesh, dst_spec: ShardingSpec, dtype: Any,
                 *, devices: Sequence[jax.Device] | None = None, direct: bool = True) -> None:
        self.plan, self.dtype = plan, np.dtype(dtype)
        self.shape = tuple(plan.shape)
        self.src_sharding = spec_to_named_sharding(src_spec, src_mesh, devices)
        self.dst_sharding = spec_to_named_sharding(dst_spec, dst_mesh, devices)
        shared = set(src_mesh.device_ids) & set(dst_mesh.device_ids)
        if shared:
            raise ValueError(f"source and destination meshes share devices {sorted(shared)}; "
                             "a cross-mesh transfer needs disjoint meshes")
        for label, spec, mesh in (("source", src_spec, src_mesh), ("destination", dst_spec, dst_mesh)):
            if spec.rank != len(self.shape) or any(self.shape[d] % spec.num_shards(d, mesh) for d in range(spec.rank)):
                raise ValueError(f"{label} sharding {spec} on mesh {list(mesh.shape)} does not evenly divide "
                                 f"the plan's shape {list(self.shape)}; JAX arrays need even shardings")
        # A scalar travels as a (1,)-vector: the union arrays stack blocks on dim 0.
        self._src_tiles = {d: self._work(_tile(t)) for d, t in tile_map(src_spec, src_mesh, self.shape).items()}
        dst_tiles = {d: _tile(t) for d, t in tile_map(dst_spec, dst_mesh, self.shape).items()}
        if {d: tuple(t) for d, t in plan.dst_tiles.items()} != dst_tiles:
            raise ValueError(f"the plan's destination tiles {plan.dst_tiles} are not those of {dst_spec} "
                             f"on mesh {list(dst_mesh.shape)} devices {list(dst_mesh.device_ids)}")
        self._dst_tiles = {d: self._work(t) for d, t in dst_tiles.items()}
        self.src_devices, self.dst_devices = src_mesh.device_ids, dst_mesh.device_ids
        self.rounds = permute_rounds(plan.moves)
        self.stages = gather_stages(plan.gathers, self.dst_devices)
        self._slots = self._check_plan()
        self._devices = {d.id: d for d in (devices if devices is not None else jax.devices())}
        self._src_block = tile_shape(self._src_tiles[self.src_devices[0]])
        self._dst_block = tile_shape(self._dst_tiles[self.dst_devices[0]])
        # The piece buffer: one slot per gather a device takes part in, padded to the largest piece.
        num_slots = max([s + 1 for s in self._slots.values()], default=0)
        largest = np.max([piece_shape(g) for g in plan.gathers], axis=0) if num_slots else ()
        self._pieces_block = (num_slots,) + tuple(int(n) for n in largest)
        self._programs: tuple[Any, ...] | None = None
        self._dummies: dict[int, jax.Array] = {}
        # In one process: copies between devices (the plan's moves and gathers save links between hosts).
        here = all(self._devices[d].process_index == jax.process_index() for d in self.src_devices + self.dst_devices)
        self._copies = plan_copies({d: self._src_tiles[d] for d in self.src_devices},
                                   {d: self._dst_tiles[d] for d in self.dst_devices}) if direct and here else None
        if self._copies is None and not math.prod(self.shape):
            raise ValueError(f"{self.dtype}{list(self.shape)} is empty: an empty array crosses meshes only as copies "
                             "inside one process (direct=True), not by the plan's programs")

    @property
    def direct(self) -> bool:
        """Whether a call copies blocks between devices rather than running the programs."""
        return self._copies is not None

    @property
    def local_work(self) -> tuple[int, int, int]:
        """For a direct transfer, ``device_copies.copy_work``: (copies, programs on one device,
        bytes written); zeros for one that runs the programs."""
        return copy_work(self._copies, self._dst_tiles, self.dtype.itemsize) if self._copies else (0, 0, 0)

    @property
    def num_rounds(self) -> int:
        return len(self.rounds)

    @property
    def bytes_moved(self) -> int:
        return plan_bytes(self.plan, self.dtype.itemsize)

    def _work(self, tile: Tile) -> Tile:
        return tile if self.shape else ((0, 1),)

    def _check_plan(self) -> dict[tuple[int, int], int]:
        """Checks that the plan fits the shards (a move that cut outside its block would
        be clamped silently by ``dynamic_slice``); returns the piece-buffer slot of every
        (device, gather)."""
        try:
            check_plan(self.plan)
        except ValueError as error:
            raise ValueError(f"the plan is inconsistent: {error}") from None
        for move in self.plan.moves:
            if move.src_device not in self._src_tiles or move.dst_device not in self._dst_tiles:
                raise ValueError(f"move {move} goes from device {move.src_device} to {move.dst_device}, but the "
                                 f"source mesh is {list(self._src_tiles)} and the destination {list(self._dst_tiles)}")
            if not _inside(self._work(move.tile), self._src_tiles[move.src_device]):
                raise ValueError(f"move {move} cuts outside the source shard "
                                 f"{self._src_tiles[move.src_device]} of device {move.src_device}")
        slots: dict[tuple[int, int], int] = {}
        taken: dict[int, int] = defaultdict(int)
        for g, gather in enumerate(self.plan.gathers):
            for d in gather.devices:
                slots[(d, g)] = taken[d]
                taken[d] += 1
        return slots

    def _build(self, shared: SharedCompiles | None) -> tuple[Any, ...]:
        """Compile the permute program and one gather program per arrangement."""
        union = self.src_devices + self.dst_devices
        where = {d: i for i, d in enumerate(union)}
        rank, n, steps = len(self._src_block), len(union), []
        for moves in self.rounds:
            src_off, dst_off = np.zeros((n, rank), np.int32), np.zeros((n, rank), np.int32)
            slot, direct, to_slot = np.zeros((n, rank + 1), np.int32), np.zeros(n, bool), np.zeros(n, bool)
            for m in moves:
                tile, t = self._work(m.tile), where[m.dst_device]
                src_off[where[m.src_device]] = tile_offset(tile, self._src_tiles[m.src_device])
                if m.gather is None:
                    dst_off[t], direct[t] = tile_offset(tile, self._dst_tiles[m.dst_device]), True
                else:
                    slot[t, 0], to_slot[t] = self._slots[(m.dst_device, m.gather)], True
            perm = [(where[m.src_device], where[m.dst_device]) for m in moves]
            steps.append(_PermuteRound(tile_shape(self._work(moves[0].tile)), perm, src_off, dst_off, direct, slot,
                                       to_slot))
        dtype, dst_block, pieces_block = self.dtype, self._dst_block, self._pieces_block

        def permute(block: jax.Array) -> tuple[jax.Array, ...]:
            i = lax.axis_index("u")
            out, pieces = jnp.zeros(dst_block, dtype), jnp.zeros(pieces_block, dtype)
            for step in steps:
                got = lax.ppermute(lax.dynamic_slice(block, _row(step.src_offset, i), step.shape), "u", step.pairs)
                if step.direct.any():
                    out = _masked_update(out, got, jnp.asarray(step.direct)[i], _row(step.dst_offset, i))
                if step.to_slot.any():
                    pieces = _masked_update(pieces, got[None], jnp.asarray(step.to_slot)[i], _row(step.slot, i))
            return (out, pieces) if self.stages else (out,)

        mesh = Mesh(np.array([self._devices[d] for d in union]), ("u",))
        spec = PartitionSpec("u")
        sharding = NamedSharding(mesh, spec)
        program = jax.jit(jax.shard_map(permute, mesh=mesh, in_specs=spec,
                                        out_specs=(spec, spec) if self.stages else (spec,)))
        compiled = self._compile(program, DeviceMesh((n,), device_ids=union), shared,
                                 _stacked(self._src_block, n, dtype, sharding))
        return ((compiled, union, sharding),) + tuple(self._build_gather(s, shared) for s in self.stages)

    def _compile(self, program: Any, mesh: DeviceMesh, shared: SharedCompiles | None, *args: Any) -> MeshExecutable:
        """``program`` (a ``jax.jit`` of a ``shard_map``) lowered for ``args`` and compiled for
        ``mesh`` as the stages are: the permute of every transfer of one structure (a layer's
        activations between each pair of neighbouring meshes, say) prints alike, whatever its
        devices, so ``shared`` compiles it once and loads it onto the others' devices."""
        text = program.lower(*args).as_text()
        return MeshExecutable(compile_module(text, mesh, list(self._devices.values()), shared=shared))

    def _build_gather(self, stage: GatherStage,
                      shared: SharedCompiles | None) -> tuple[Any, tuple[int, ...], NamedSharding]:
        order = tuple(d for row in stage.rows for d in row)
        where = {d: i for i, d in enumerate(order)}
        rank, n, steps = len(self._dst_block), len(order), []
        for gathers in stage.rounds:
            slot, offset = np.zeros((n, rank + 1), np.int32), np.zeros((n, rank), np.int32)
            active = np.zeros(n, bool)
            for g in gathers:
                gather = self.plan.gathers[g]
                for d in gather.devices:
                    slot[where[d], 0], active[where[d]] = self._slots[(d, g)], True
                    offset[where[d]] = tile_offset(gather.tile, self._dst_tiles[d])
            first = self.plan.gathers[gathers[0]]
            steps.append(_GatherRound(first.dim, (1,) + piece_shape(first), slot, offset, active))
        size = len(stage.rows[0])

        def gather(out: jax.Array, pieces: jax.Array) -> jax.Array:
            i = lax.axis_index("group") * size + lax.axis_index("member")
            for step in steps:
                mine = lax.dynamic_slice(pieces, _row(step.slot, i), step.shape)[0]
                whole = lax.all_gather(mine, "member", axis=step.dim, tiled=True)
                out = _masked_update(out, whole, jnp.asarray(step.active)[i], _row(step.offset, i))
            return out

        mesh = Mesh(np.array([[self._devices[d] for d in row] for row in stage.rows]), ("group", "member"))
        spec = PartitionSpec(("group", "member"))
        sharding = NamedSharding(mesh, spec)
        program = jax.jit(jax.shard_map(gather, mesh=mesh, in_specs=(spec, spec), out_specs=spec),
                          donate_argnums=0)
        compiled = self._compile(program, DeviceMesh(mesh.devices.shape, device_ids=order), shared,
                                 _stacked(self._dst_block, n, self.dtype, sharding),
                                 _stacked(self._pieces_block, n, self.dtype, sharding))
        return compiled, order, sharding

    def _check_input(self, array: Any) -> None:
        if not isinstance(array, jax.Array):
            raise ValueError(f"a cross-mesh transfer takes a jax.Array on the source mesh, not {type(array).__name__}; "
                             "place the value on the source mesh first")
        if tuple(array.shape) != self.shape or np.dtype(array.dtype) != self.dtype:
            raise ValueError(f"array is {np.dtype(array.dtype)}{list(array.shape)} but the transfer was planned for "
                             f"{self.dtype}{list(self.shape)}")
        if not array.sharding.is_equivalent_to(self.src_sharding, len(self.shape)):
            raise ValueError(f"array has sharding {array.sharding} but the transfer was planned for "
                             f"{self.src_sharding}; reshard it on the source mesh first")

    def compile(self, shared: SharedCompiles | None = None) -> None:
        """Compile the programs now rather than on the first call; ``shared``: where a
        program equal to one compiled before is loaded from that one."""
        if self._programs is None:
            self._programs = () if self._copies is not None else self._build(shared)

    def __call__(self, array: jax.Array) -> jax.Array:
        self._check_input(array)
        if self._copies is not None:
            blocks = run_copies(self._copies, _by_device(array), self._devices, self._dst_tiles)
            return jax.make_array_from_single_device_arrays(self.shape, self.dst_sharding, blocks, dtype=self.dtype)
        self.compile()
        (permute, union, sharding), *gathers = self._programs
        shards = _by_device(array)
        local = [d for d in union if self._devices[d].process_index == jax.process_index()]
        blocks = [(shards[d].reshape(1) if not self.shape else shards[d]) if d in shards else self._dummy(d)
                  for d in local]
        out, *pieces = permute(_from_blocks(blocks, self._src_block, len(union), self.dtype, sharding))
        for program, order, sharding in gathers:
            outs, slots = _by_device(out), _by_device(pieces[0])
            mine = [d for d in order if d in outs]
            if not mine:  # this process holds no destination device: nothing to gather
                break
            out, = program(_from_blocks([outs[d] for d in mine], self._dst_block, len(order), self.dtype, sharding),
                           _from_blocks([slots[d] for d in mine], self._pieces_block, len(order), self.dtype,
                                        sharding))
        final = _by_device(out)
        blocks = [final[d] if self.shape else final[d].reshape(()) for d in self.dst_devices if d in final]
        return jax.make_array_from_single_device_arrays(self.shape, self.dst_sharding, blocks, dtype=self.dtype)

    def _dummy(self, device: int) -> jax.Array:
        """The block a device outside the source mesh feeds the permute program (kept)."""
        if device not in self._dummies:
            self._dummies[device] = jax.device_put(np.zeros(self._src_block, self.dtype), self._devices[device])
        return self._dummies[device]


def _tile(slices: Sequence[slice]) -> Tile:
    return tuple((s.start, s.stop) for s in slices)


def _inside(tile: Tile, outer: Tile) -> bool:
    return all(o0 <= t0 <= t1 <= o1 for (t0, t1), (o0, o1) in zip(tile, outer))


def _by_device(array: jax.Array) -> dict[int, jax.Array]:
    return {s.device.id: s.data for s in array.addressable_shards}
