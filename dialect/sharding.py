"""Sharding specs (Sec. 4.1) and their ``mhlo.sharding`` text form.

A :class:`ShardingSpec` says, for every tensor dimension, the ordered mesh axes it
is split on: the paper's ``S^0``, ``S^1``, ``S^{01}`` and ``R``. Mesh axes that no
dimension uses replicate the tensor (partial replication). The spec is relative to a
:class:`~alpa_mlir.dialect.mesh.DeviceMesh`; with the mesh it converts losslessly to
and from ``mhlo.sharding`` strings, whose grammar is XLA's::

    {replicated}  {maximal device=3}  {manual}  {unknown}
    {devices=[2,4]0,1,2,3,4,5,6,7}                    explicit tile assignment
    {devices=[4,2]<=[2,4]T(1,0)}                      iota tile assignment
    {devices=[2,1,4]<=[8] last_tile_dim_replicate}    partial replication
    {{replicated}, {devices=[2,1]0,1}}                one element per op result
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from dataclasses import dataclass

import numpy as np

from .mesh import MAX_DEVICES, DeviceMesh
from .text import split_top_level


def split_bytes(counts: tuple[int, ...] | list[int], shape: tuple[int, ...], itemsize: int) -> float:
    """Bytes of one piece of a tensor of ``shape`` cut into ``counts[d]`` pieces along each
    dimension ``d`` (the last piece of an uneven cut is padded, as XLA pads it)."""
    return float(math.prod(math.ceil(size / k) for size, k in zip(shape, counts)) * itemsize)


def tile_bytes(spec: ShardingSpec, shape: tuple[int, ...], itemsize: int, mesh: DeviceMesh) -> float:
    """Bytes of one device's tile of a tensor of ``shape`` sharded as ``spec``."""
    return split_bytes(spec.tile_shape(mesh), shape, itemsize)


@functools.lru_cache(maxsize=65536)
def _tile_shape(dims: tuple[tuple[int, ...], ...], mesh_shape: tuple[int, ...]) -> tuple[int, ...]:
    # The planner asks this for every strategy of every op (hundreds of thousands of
    # times for a GPT stage) with few distinct answers.
    return tuple(math.prod(mesh_shape[a] for a in axes) for axes in dims)


@functools.lru_cache(maxsize=65536)
def _mhlo_text(spec: ShardingSpec, mesh: DeviceMesh) -> str:
    # The planner writes the text of every chosen strategy's results for every stage
    # candidate it plans (tens of thousands of times for a GPT stage search), with few
    # distinct answers.
    spec.check_mesh(mesh)
    if spec.is_replicated:
        return "{replicated}"
    tiled = spec.tile_assignment(mesh)
    if mesh.is_iota:
        return _tiled_text(tiled, _iota_text(mesh.shape, spec.device_order(mesh)))
    return _format(tiled)


class ShardingError(ValueError):
    """A sharding that cannot be parsed or expressed; the message names it."""


@dataclass(frozen=True, slots=True)
class ShardingSpec:
    """Per tensor dimension, the mesh axes (major to minor) it is partitioned over.

    ``ShardingSpec(((0,), ()))`` is the paper's ``S^0R``; ``((0, 1), ())`` is
    ``S^{01}R``; ``((), ())`` is ``RR``.
    """

    dims: tuple[tuple[int, ...], ...]

    def __post_init__(self) -> None:
        dims = tuple(tuple(int(a) for a in axes) for axes in self.dims)
        used = [a for axes in dims for a in axes]
        if len(set(used)) != len(used) or any(a < 0 for a in used):
            raise ShardingError(f"sharding spec {dims} uses a mesh axis twice or a negative axis")
        object.__setattr__(self, "dims", dims)

    @classmethod
    def replicated(cls, rank: int) -> ShardingSpec:
        return cls(((),) * rank)

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def used_axes(self) -> tuple[int, ...]:
        return tuple(a for axes in self.dims for a in axes)

    @property
    def is_replicated(self) -> bool:
        return not self.used_axes

    def __str__(self) -> str:
        def one(axes: tuple[int, ...]) -> str:
            if not axes:
                return "R"
            digits = "".join(str(a) for a in axes)
            return f"S^{digits}" if len(axes) == 1 else f"S^{{{digits}}}"

        return "".join(one(axes) for axes in self.dims) or "scalar"

    def check_mesh(self, mesh: DeviceMesh) -> None:
        bad = [a for a in self.used_axes if a >= mesh.ndim]
        if bad:
            raise ShardingError(
                f"sharding spec {self} uses mesh axis {bad[0]} but the mesh has {mesh.ndim} axes"
            )

    def num_shards(self, dim: int, mesh: DeviceMesh) -> int:
        return math.prod(mesh.shape[a] for a in self.dims[dim])

    def tile_shape(self, mesh: DeviceMesh) -> tuple[int, ...]:
        return _tile_shape(self.dims, mesh.shape)

    def replication(self, mesh: DeviceMesh) -> int:
        """How many devices hold each tile."""
        return mesh.size // math.prod(self.tile_shape(mesh))

    def device_order(self, mesh: DeviceMesh) -> tuple[int, ...]:
        """Mesh axes in tile-assignment order: each dimension's axes, then unused ones."""
        self.check_mesh(mesh)
        return self.used_axes + tuple(a for a in range(mesh.ndim) if a not in self.used_axes)

    def tile_assignment(self, mesh: DeviceMesh) -> TiledSharding:
        """The XLA tile assignment of this spec on ``mesh``."""
        order = self.device_order(mesh)
        tile = self.tile_shape(mesh)
        replication = self.replication(mesh)
        shape = tile + ((replication,) if replication > 1 else ())
        devices = mesh.device_array.transpose(order).reshape(shape)
        return TiledSharding(shape, tuple(int(d) for d in devices.flat), replication > 1)

    def to_mhlo(self, mesh: DeviceMesh) -> str:
        """The ``mhlo.sharding`` string, in iota form when the mesh devices are iota."""
        return _mhlo_text(self, mesh)

    @classmethod
    def from_mhlo(cls, text: str, mesh: DeviceMesh, rank: int) -> ShardingSpec:
        """Parse a non-tuple ``mhlo.sharding`` string for a value of ``rank`` on ``mesh``."""
        sharding = parse_mhlo_sharding(text)
        if isinstance(sharding, tuple):
            raise ShardingError(f"sharding {text!r} is a tuple sharding; expected one value's sharding")
        return spec_from_sharding(sharding, mesh, rank, text)


@dataclass(frozen=True, slots=True)
class Replicated:
    """``{replicated}``: every device holds the whole tensor."""


@dataclass(frozen=True, slots=True)
class Maximal:
    """``{maximal device=N}``: one device holds the whole tensor."""

    device: int


@dataclass(frozen=True, slots=True)
class TiledSharding:
    """``{devices=[shape]...}``: ``devices`` (row-major over ``shape``) hold the tiles.

    With ``last_tile_dim_replicate`` the last entry of ``shape`` is not a tensor
    dimension: devices along it hold the same tile.
    """

    shape: tuple[int, ...]
    devices: tuple[int, ...]
    last_tile_dim_replicate: bool = False

    @property
    def tensor_rank(self) -> int:
        return len(self.shape) - (1 if self.last_tile_dim_replicate else 0)

    def device_array(self) -> np.ndarray:
        return np.asarray(self.devices, dtype=np.int64).reshape(self.shape)


Sharding = Replicated | Maximal | TiledSharding
"""One value's sharding; an op with several results has a ``tuple[Sharding, ...]``."""


def _iota_text(mesh_shape: tuple[int, ...], order: tuple[int, ...]) -> str:
    """``<=[dims]T(perm)`` for ``arange(mesh).reshape(mesh_shape).transpose(order)``,
    dropping size-1 axes and merging axes that stay adjacent (XLA's canonical form)."""
    axes = [a for a in order if mesh_shape[a] > 1]
    kept = sorted(axes)
    # Merge runs of axes that are consecutive both in the mesh and in the order.
    groups: list[list[int]] = []
    for a in axes:
        if groups and kept.index(a) == kept.index(groups[-1][-1]) + 1:
            groups[-1].append(a)
        else:
            groups.append([a])
    by_mesh = sorted(groups, key=lambda g: g[0])
    dims = [math.prod(mesh_shape[a] for a in g) for g in by_mesh]
    perm = [by_mesh.index(g) for g in groups]
    size = math.prod(dims)
    if perm == sorted(perm):
        return f"<=[{size}]"
    return f"<=[{','.join(map(str, dims))}]T({','.join(map(str, perm))})"


_TILED = re.compile(
    r"devices=\[(?P<shape>[\d,\s]*)\]\s*"
    r"(?:<=\[(?P<iota>[\d,\s]*)\](?:T\((?P<perm>[\d,\s]*)\))?|(?P<list>[\d,\s]*\d))"
    r"(?P<rest>.*)",
    re.S,
)


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(t) for t in text.replace(" ", "").split(",") if t)


@functools.lru_cache(maxsize=65536)  # the stage search reads the same few strings on every candidate's ops
def parse_mhlo_sharding(text: str) -> Sharding | tuple[Sharding, ...]:
    """Parse an ``mhlo.sharding`` string; tuple shardings give a tuple.

    ``{manual}``, ``{unknown}`` and forms this project cannot represent raise
    :class:`ShardingError` naming the string.
    """
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        raise ShardingError(f"sharding {text!r} must be enclosed in braces")
    body = stripped[1:-1].strip()
    if body.startswith("{") or body == "":
        try:
            parts = split_top_level(body, "{", "}")
        except ValueError:
            raise ShardingError(f"unbalanced braces in sharding {text!r}") from None
        return tuple(_parse_single(p, text) for p in parts)
    return _parse_single(stripped, text)


def mhlo_tuple_elements(text: str) -> list[str] | None:
    """The elements of a tuple ``mhlo.sharding`` string as written; ``None`` if it is
    not a tuple. Raises :class:`ShardingError` as :func:`parse_mhlo_sharding` does."""
    if not isinstance(parse_mhlo_sharding(text), tuple):
        return None
    body = text.strip()[1:-1].strip()
    return split_top_level(body, "{", "}") if body else []


def _parse_single(part: str, text: str) -> Sharding:
    if not (part.startswith("{") and part.endswith("}")):
        raise ShardingError(f"malformed element {part!r} in sharding {text!r}")
    body = re.sub(r"\s*metadata=\{.*\}\s*$", "", part[1:-1].strip(), flags=re.S).strip()
    if body == "replicated":
        return Replicated()
    if body in ("manual", "unknown"):
        raise ShardingError(
            f"sharding {text!r} is {{{body}}}, which alpa cannot plan around; "
            "remove it or replace it with a tiled or replicated sharding"
        )
    maximal = re.fullmatch(r"maximal\s+device=(\d+)", body)
    if maximal:
        return Maximal(int(maximal.group(1)))
    match = _TILED.fullmatch(body)
    if not match:
        raise ShardingError(f"cannot parse sharding {text!r}")
    return _parse_tiled(match, text)


def _parse_tiled(match: re.Match, text: str) -> Sharding:
    """A ``devices=[...]`` sharding: its tile shape, device list or iota, and replication."""
    shape = _ints(match.group("shape"))
    if not shape or any(s <= 0 for s in shape):
        raise ShardingError(f"sharding {text!r} has an empty or non-positive tile shape")
    size = math.prod(shape)
    if size > MAX_DEVICES:
        raise ShardingError(f"sharding {text!r} tiles over {size} devices; at most {MAX_DEVICES} are supported")
    devices = _tile_devices(match, size, text)
    rest = match.group("rest").strip()
    if rest in ("last_tile_dim_replicate", "last_tile_dims={replicated}"):
        replicate = True
    elif rest == "":
        replicate = False
    else:
        raise ShardingError(f"sharding {text!r} has unsupported attributes {rest!r}")
    if replicate and shape[-1] == 1:
        shape, replicate = shape[:-1], False
    if replicate and len(shape) == 1:
        return Replicated()
    return TiledSharding(shape, devices, replicate)


def _tile_devices(match: re.Match, size: int, text: str) -> tuple[int, ...]:
    """The tile assignment of a tiled sharding, listed or as an iota."""
    if match.group("list") is not None:
        devices = _ints(match.group("list"))
        if len(devices) != size:
            raise ShardingError(
                f"sharding {text!r} lists {len(devices)} devices for a tile shape of {size}"
            )
        if len(set(devices)) != len(devices):
            raise ShardingError(f"sharding {text!r} lists a device twice")
        return devices
    reshape = _ints(match.group("iota"))
    perm = _ints(match.group("perm") or "") or tuple(range(len(reshape)))
    if math.prod(reshape) != size or sorted(perm) != list(range(len(reshape))):
        raise ShardingError(f"iota tile assignment of sharding {text!r} is inconsistent")
    return tuple(int(d) for d in np.arange(size).reshape(reshape).transpose(perm).flat)


def spec_from_sharding(sharding: Sharding, mesh: DeviceMesh, rank: int,
                       text: str | None = None) -> ShardingSpec:
    """The :class:`ShardingSpec` on ``mesh`` with the same tile assignment as ``sharding``.

    Searches the assignments of mesh axes to tensor dimensions whose sizes match the
    tile shape; the device order inside a replicated group does not matter (XLA's
    equality ignores it too). Raises :class:`ShardingError` when none matches.
    """
    label = text if text is not None else _format(sharding)
    if isinstance(sharding, Replicated):
        return ShardingSpec.replicated(rank)
    if isinstance(sharding, Maximal):
        raise ShardingError(
            f"sharding {label!r} places the value on one device; a mesh sharding spec cannot express it"
        )
    if sharding.tensor_rank != rank:
        raise ShardingError(
            f"sharding {label!r} has {sharding.tensor_rank} tiled dimensions but the value has rank {rank}"
        )
    if math.prod(sharding.shape) != mesh.size:
        raise ShardingError(
            f"sharding {label!r} uses {math.prod(sharding.shape)} devices but the mesh "
            f"{list(mesh.shape)} has {mesh.size}"
        )
    target = _canonical_devices(sharding.device_array(), sharding.last_tile_dim_replicate)
    for spec in _candidate_specs(sharding.shape[:rank], mesh):
        tiled = spec.tile_assignment(mesh)
        if tiled.last_tile_dim_replicate != sharding.last_tile_dim_replicate:
            continue
        if np.array_equal(_canonical_devices(tiled.device_array(), tiled.last_tile_dim_replicate),
                          target):
            return spec
    raise ShardingError(
        f"sharding {label!r} is not expressible on mesh {list(mesh.shape)} with devices "
        f"{list(mesh.device_ids)}: no assignment of mesh axes to tensor dimensions gives its device order"
    )


def _canonical_devices(devices: np.ndarray, replicate: bool) -> np.ndarray:
    return np.sort(devices, axis=-1) if replicate else devices


def _candidate_specs(tile: tuple[int, ...], mesh: DeviceMesh):
    """Every spec whose tile shape is ``tile`` on ``mesh``: mesh axes of size > 1 go to
    a tensor dimension (in some order) or stay unused."""
    axes = [a for a in range(mesh.ndim) if mesh.shape[a] > 1]
    rank = len(tile)
    for targets in itertools.product(range(rank + 1), repeat=len(axes)):
        groups = [[a for a, t in zip(axes, targets) if t == d] for d in range(rank)]
        if any(math.prod(mesh.shape[a] for a in g) != tile[d] for d, g in enumerate(groups)):
            continue
        for orders in itertools.product(*(itertools.permutations(g) for g in groups)):
            yield ShardingSpec(tuple(orders))


def _format(sharding: Sharding) -> str:
    if isinstance(sharding, Replicated):
        return "{replicated}"
    if isinstance(sharding, Maximal):
        return f"{{maximal device={sharding.device}}}"
    return _tiled_text(sharding, ",".join(map(str, sharding.devices)))


def _tiled_text(sharding: TiledSharding, devices: str) -> str:
    """``{devices=[shape]<devices>}`` with the replication suffix; ``devices`` is an
    explicit list or an iota form."""
    suffix = " last_tile_dim_replicate" if sharding.last_tile_dim_replicate else ""
    return f"{{devices=[{','.join(map(str, sharding.shape))}]{devices}{suffix}}}"


def format_mhlo_sharding(sharding: Sharding | tuple[Sharding, ...]) -> str:
    """The ``mhlo.sharding`` string of a parsed sharding (explicit device lists)."""
    if isinstance(sharding, tuple):
        return "{" + ", ".join(_format(s) for s in sharding) + "}"
    return _format(sharding)
