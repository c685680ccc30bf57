"""Collectives of a partitioned HLO module, read from its text.

After XLA's SPMD partitioner has run, the communication a sharding plan costs is in
the HLO: ``all-reduce``, ``all-gather``, ``reduce-scatter``, ``all-to-all`` and
``collective-permute`` instructions. :func:`parse_collectives` lists them with their
per-device buffer size and their device groups, and names the mesh axes the groups
span, so tests and benchmarks can compare XLA's communication with the auto-sharding
cost model (Sec. 4.2).

Conventions:

- One :class:`HloCollective` per instruction. A variadic (tuple-shaped) collective,
  e.g. an all-reduce that XLA's combiner merged or XLA:CPU's tuple all-to-all, is one
  entry whose ``bytes`` sum over its elements; ``elements`` lists each element's
  (shape, dtype) and ``shape``/``dtype`` are the first element's.
- ``bytes`` is the per-device buffer: the operand of all-reduce, reduce-scatter,
  all-to-all and collective-permute, the result of all-gather. Sub-byte types
  (``s4``, ``u2``, ...) round up to whole bytes per buffer.
- Async pairs (``all-reduce-start``/``-done``, ...) count once, at the ``-start``.
- ``trips`` is how often the instruction runs per execution of the module: the product
  of the ``known_trip_count`` of the ``while`` loops around it (a loop XLA cannot count
  counts once), summed over the places its computation is called from
  (:func:`computation_trips`). A ``lax.scan`` over 24 layers runs its body's collectives 24 times.
- Group members are partition ids (the module runs with one replica, so the global
  device ids of ``use_global_device_ids`` are partition ids); partition ``p`` is the
  row-major mesh position ``p``. Collective permutes get the connected components of
  their ``source_target_pairs`` as groups, and as ``mesh_axes`` the axes along which
  some pair moves data.

XLA:CPU has no reduce-scatter (no ``ReduceScatterCreator``): a planned reduce-scatter
runs as an all-reduce whose result every device only dynamic-slices to its shard.
:func:`sliced_all_reduce_elements` finds those, so traffic can be counted per kind as
a GPU build would emit it; :func:`ring_factor` weighs a collective's buffer by a ring
algorithm's traffic.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass

import numpy as np

from ..dialect.mesh import DeviceMesh
from .hlo_text import (
    COMPUTATION,
    HloParseError,
    Instruction,
    Shape,
    balanced,
    computation_trips,
    instructions,
    parse_instruction,
    parse_shape,
    strip_comments,
    tuple_elements,
)

COLLECTIVE_KINDS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")

_BITS = {"pred": 8, "token": 0, "c64": 64, "c128": 128, "tf32": 32}
_IOTA_GROUPS = re.compile(r"\[(?P<shape>[\d,\s]+)\]<=\[(?P<dims>[\d,\s]+)\](?:T\((?P<perm>[\d,\s]+)\))?")
_MESH_GROUPS = re.compile(
    r"mesh\[(?P<axes>[^\]]*)\](?:,\s*device_ids=\((?P<ids>(?:[^()]|\([^()]*\))*)\))?\s*\{(?P<refs>[^}]*)\}"
)
_MAXIMAL_GROUPS = re.compile(r"maximal_mesh\[device_id=(?P<device>\d+)\]")
_NUM_PARTITIONS = re.compile(r"\bnum_partitions=(\d+)")

@dataclass(frozen=True, slots=True)
class HloCollective:
    """One collective instruction of a partitioned HLO module (see the module docstring)."""

    kind: str
    shape: Shape
    dtype: str
    bytes: int
    replica_groups: tuple[tuple[int, ...], ...]
    mesh_axes: tuple[int, ...] | None
    name: str
    elements: tuple[tuple[Shape, str], ...] = ()
    channel_id: int | None = None
    use_global_device_ids: bool = False
    source_target_pairs: tuple[tuple[int, int], ...] = ()
    trips: int = 1

    @property
    def group_size(self) -> int:
        """Devices in the largest group (a permute's components can differ in size)."""
        return max((len(g) for g in self.replica_groups), default=1)


def dtype_bits(dtype: str) -> int:
    """Bit width of an HLO element type: ``f32`` 32, ``pred`` 8, ``f8e4m3fn`` 8, ``s4`` 4."""
    if dtype in _BITS:
        return _BITS[dtype]
    match = re.match(r"[a-z]+?(\d+)", dtype)
    if not match:
        raise HloParseError(f"unknown HLO element type {dtype!r}")
    return int(match.group(1))


def buffer_bytes(elements: tuple[tuple[Shape, str], ...]) -> int:
    return sum(math.ceil(math.prod(shape) * dtype_bits(dtype) / 8) for shape, dtype in elements)


def _operand_elements(operands: str, shapes: dict[str, str]) -> tuple[tuple[Shape, str], ...]:
    """Shapes of the operands, printed inline (``f32[8] %x``) or looked up by name."""
    leaves: list[tuple[Shape, str]] = []
    for operand in tuple_elements(f"({operands})"):
        inline = parse_shape(operand)
        if inline:
            leaves.extend(inline)
            continue
        name = operand.strip().lstrip("%")
        if name not in shapes:
            raise HloParseError(f"operand {operand!r} of a collective is not defined in the module")
        leaves.extend(parse_shape(shapes[name]))
    return tuple(leaves)


def _mesh_axes_groups(match: re.Match) -> tuple[tuple[int, ...], ...]:
    """Groups of XLA's mesh-axes form ``mesh['a'=2,'b'=4], device_ids=(...) {'b'}``.

    A referenced axis (or sub-axis ``'b':(pre)size``) varies inside a group; the
    others pick the group. Sub-axes split their axis into ``[pre, size, rest]``.
    """
    axes = [a.split("=") for a in match.group("axes").split(",") if a.strip()]
    names = [n.strip().strip("'\"") for n, _ in axes]
    sizes = [int(s) for _, s in axes]
    ids = _device_ids(match.group("ids"), sizes)
    refs = []
    for ref in (r.strip() for r in match.group("refs").split(",") if r.strip()):
        sub = re.fullmatch(r"(?P<name>.+?):\((?P<pre>\d+)\)(?P<size>\d+)", ref)
        name = (sub.group("name") if sub else ref).strip("'\"")
        if name not in names:
            raise HloParseError(f"replica groups {match.group(0)!r} refer to unknown mesh axis {name!r}")
        refs.append((names.index(name), (int(sub.group("pre")), int(sub.group("size"))) if sub else None))
    # Split every mesh axis into factors; remember which factor each reference is.
    factors: list[int] = []
    where: dict[int, int] = {}
    for axis, size in enumerate(sizes):
        own = [(r[1], i) for i, r in enumerate(refs) if r[0] == axis]
        if any(sub is None for sub, _ in own):
            where.update({i: len(factors) for _, i in own})
            factors.append(size)
            continue
        own.sort()
        covered = 1
        for (pre, sub_size), i in own:
            if pre != covered:
                factors.append(pre // covered)
            where[i] = len(factors)
            factors.append(sub_size)
            covered = pre * sub_size
        if covered != size:
            factors.append(size // covered)
    grouped = [where[i] for i in range(len(refs))]
    order = [f for f in range(len(factors)) if f not in grouped] + grouped
    group_size = math.prod(factors[f] for f in grouped)
    return _rows(ids.reshape(factors).transpose(order).reshape(-1, group_size))


def _device_ids(text: str | None, sizes: list[int]) -> np.ndarray:
    if not text:
        return np.arange(math.prod(sizes))
    iota = re.fullmatch(r"\s*(?:<=)?\[(?P<dims>[\d,\s]+)\](?:T\((?P<perm>[\d,\s]+)\))?\s*", text)
    if iota:
        return _iota(iota.group("dims"), iota.group("perm")).reshape(-1)
    return np.asarray([int(d) for d in re.findall(r"\d+", text)])


def _replica_groups(attributes: str, num_partitions: int | None) -> tuple[tuple[int, ...], ...]:
    at = attributes.find("replica_groups=")
    if at < 0:
        return _all_partitions(num_partitions)
    value = attributes[at + len("replica_groups="):]
    if value.startswith("{"):
        inner = value[1:balanced(value, 0, "{", "}") - 1]
        groups = tuple(tuple(int(d) for d in re.findall(r"\d+", g)) for g in re.findall(r"\{([^{}]*)\}", inner))
        return groups or _all_partitions(num_partitions)
    for pattern, build in ((_MESH_GROUPS, _mesh_axes_groups), (_IOTA_GROUPS, _iota_groups),
                           (_MAXIMAL_GROUPS, lambda m: ((int(m.group("device")),),))):
        match = pattern.match(value)
        if match:
            return build(match)
    raise HloParseError(f"cannot read replica groups in {value[:120]!r}")


def _ints(text: str | None) -> Shape:
    return tuple(int(d) for d in (text or "").split(",") if d.strip())


def _iota(dims: str, perm: str | None) -> np.ndarray:
    """XLA's iota device list ``<=[dims]T(perm)``: ``arange(prod(dims)).reshape(dims).transpose(perm)``."""
    shape = _ints(dims)
    return np.arange(math.prod(shape)).reshape(shape).transpose(_ints(perm) or tuple(range(len(shape))))


def _rows(array: np.ndarray) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(int(d) for d in row) for row in array)


def _iota_groups(match: re.Match) -> tuple[tuple[int, ...], ...]:
    """``[groups,size]<=[dims]T(perm)``: the iota device list cut into rows."""
    return _rows(_iota(match.group("dims"), match.group("perm")).reshape(_ints(match.group("shape"))))


def _all_partitions(num_partitions: int | None) -> tuple[tuple[int, ...], ...]:
    """Empty replica groups mean one group of every participant."""
    return (tuple(range(num_partitions)),) if num_partitions else ()


def _permute_groups(pairs: tuple[tuple[int, int], ...]) -> tuple[tuple[int, ...], ...]:
    """Connected components of the source->target graph, each sorted."""
    components: list[set[int]] = []
    for pair in map(set, pairs):
        touching = [c for c in components if c & pair]
        components = [c for c in components if not c & pair] + [pair.union(*touching)]
    return tuple(sorted(tuple(sorted(c)) for c in components))


def mesh_axes_of_groups(groups: tuple[tuple[int, ...], ...], mesh: DeviceMesh) -> tuple[int, ...] | None:
    """The mesh axes whose devices (by row-major position) form exactly ``groups``.

    An ordered match (group members in the order of the axes, major to minor) wins;
    otherwise groups equal as sets give the axes in ascending order. Axes of size 1
    never appear. ``None`` when no axis set matches.
    """
    if not groups or sum(len(g) for g in groups) != mesh.size:
        return None
    positions = np.arange(mesh.size).reshape(mesh.shape)
    as_sets = sorted(tuple(sorted(g)) for g in groups)
    wide = [a for a in range(mesh.ndim) if mesh.shape[a] > 1]
    set_match = None
    for count in range(len(wide) + 1):
        for axes in itertools.permutations(wide, count):
            rest = [a for a in range(mesh.ndim) if a not in axes]
            expected = positions.transpose(rest + list(axes)).reshape(-1, math.prod(mesh.shape[a] for a in axes))
            rows = _rows(expected)
            if sorted(rows) == sorted(groups):
                return tuple(axes)
            if set_match is None and sorted(tuple(sorted(r)) for r in rows) == as_sets:
                set_match = tuple(sorted(axes))
    return set_match


def parse_collectives(hlo_text: str, mesh: DeviceMesh | None = None) -> list[HloCollective]:
    """Every collective of a partitioned HLO module, in text order.

    Args:
      hlo_text: ``HloModule.to_string()`` of a compiled module (operand shapes may be
        printed inline or not).
      mesh: when given, each collective's ``mesh_axes`` names the mesh axes its groups
        span (partition ``p`` = row-major mesh position ``p``).
    """
    text = strip_comments(hlo_text)
    header = _NUM_PARTITIONS.search(text)
    num_partitions = int(header.group(1)) if header else (mesh.size if mesh else None)
    listed = instructions(text)
    shapes = {inst.name: inst.shape for inst, _ in listed}
    trips = computation_trips(text)
    found = []
    for inst, computation in listed:
        kind = inst.opcode.removesuffix("-start")
        if kind in COLLECTIVE_KINDS:
            found.append(_collective(inst, kind, shapes, num_partitions, mesh, trips.get(computation, 1)))
    return found


def _collective(inst: Instruction, kind: str, shapes: dict[str, str], num_partitions: int | None,
                mesh: DeviceMesh | None, trips: int) -> HloCollective:
    pairs: tuple[tuple[int, int], ...] = ()
    if kind == "collective-permute":
        match = re.search(r"source_target_pairs=(\{(?:\{\d+,\d+\},?)*\})", inst.attributes.replace(" ", ""))
        if not match:
            raise HloParseError(f"collective-permute {inst.name} has no source_target_pairs")
        pairs = tuple((int(s), int(t)) for s, t in re.findall(r"\{(\d+),(\d+)\}", match.group(1)))
        groups = _permute_groups(pairs)
    else:
        groups = _replica_groups(inst.attributes, num_partitions)
    if kind != "all-gather":
        elements = _operand_elements(inst.operands, shapes)
    elif inst.opcode.endswith("-start"):
        # all-gather-start returns (operands, results); the results are the gathered buffers.
        elements = parse_shape(tuple_elements(inst.shape)[-1])
    else:
        elements = parse_shape(inst.shape)
    if not elements:
        raise HloParseError(f"cannot find the buffer shapes of {kind} {inst.name}")
    channel = re.search(r"channel_id=(\d+)", inst.attributes)
    mesh_axes = None
    if mesh is not None and groups:
        mesh_axes = mesh_axes_of_groups(groups, mesh) if not pairs else _permute_axes(pairs, mesh)
    return HloCollective(
        kind=kind, shape=elements[0][0], dtype=elements[0][1], bytes=buffer_bytes(elements),
        replica_groups=groups, mesh_axes=mesh_axes, name=inst.name, elements=elements,
        channel_id=int(channel.group(1)) if channel else None,
        use_global_device_ids="use_global_device_ids=true" in inst.attributes,
        source_target_pairs=pairs, trips=trips,
    )


def _permute_axes(pairs: tuple[tuple[int, int], ...], mesh: DeviceMesh) -> tuple[int, ...] | None:
    """Mesh axes along which some pair moves data (sources and targets compared by position)."""
    if any(max(p) >= mesh.size for p in pairs):
        return None
    moved = set()
    for source, target in pairs:
        s, t = np.unravel_index(source, mesh.shape), np.unravel_index(target, mesh.shape)
        moved.update(a for a in range(mesh.ndim) if s[a] != t[a])
    return tuple(sorted(moved))


def ring_factor(kind: str, group: int) -> float:
    """Traffic per device of a ring algorithm, per byte of the collective's buffer (see ``bytes``):
    an all-reduce is a reduce-scatter and an all-gather, 2(n-1)/n; the others (n-1)/n; a permute 1."""
    if kind == "collective-permute":
        return 1.0
    return (2.0 if kind == "all-reduce" else 1.0) * (group - 1) / group


def sliced_all_reduce_elements(hlo_text: str) -> dict[str, tuple[bool, ...]]:
    """For every all-reduce (by name), per element: whether each use of it only dynamic-slices it.

    Such an element is a reduce-scatter as XLA:CPU runs one (see the module docstring).
    Uses are followed through ``get-tuple-element``, ``bitcast``, ``copy`` and into fused
    computations; an element that is a computation's root, or has no use, is not sliced.
    """
    computations, roots = _computations(hlo_text)
    users: dict[tuple[str, str], list[tuple[Instruction, int]]] = {}
    for computation, held in computations.items():
        for inst in held:
            for position, operand in enumerate(tuple_elements(f"({inst.operands})")):
                tokens = operand.split()
                if tokens:
                    users.setdefault((computation, tokens[-1].lstrip("%")), []).append((inst, position))

    def parameter(computation: str, number: int) -> str | None:
        return next((i.name for i in computations.get(computation, ())
                     if i.opcode == "parameter" and i.operands.strip() == str(number)), None)

    def only_sliced(computation: str, value: str, index: int | None = None) -> bool:
        uses = users.get((computation, value), [])
        if (computation, value) in roots or not uses:
            return False
        for user, position in uses:
            if user.opcode == "get-tuple-element":
                if index is not None and f"index={index}" not in user.attributes.replace(" ", "").split(","):
                    continue
                ok = only_sliced(computation, user.name)
            elif user.opcode in ("bitcast", "copy"):
                ok = only_sliced(computation, user.name, index)
            elif user.opcode == "dynamic-slice":
                ok = position == 0
            elif user.opcode == "fusion":
                called = re.search(r"calls=%?([\w.\-]+)", user.attributes)
                inner = parameter(called.group(1), position) if called else None
                ok = inner is not None and only_sliced(called.group(1), inner, index)
            else:
                ok = False
            if not ok:
                return False
        return True

    found = {}
    for computation, held in computations.items():
        for inst in held:
            if inst.opcode.removesuffix("-start") != "all-reduce":
                continue
            elements = parse_shape(inst.shape)
            if inst.shape.strip().startswith("("):
                found[inst.name] = tuple(only_sliced(computation, inst.name, i) for i in range(len(elements)))
            else:
                found[inst.name] = (only_sliced(computation, inst.name),)
    return found


def _computations(hlo_text: str) -> tuple[dict[str, list[Instruction]], set[tuple[str, str]]]:
    """The instructions of each computation, and each computation's root as (computation, name)."""
    computations: dict[str, list[Instruction]] = {}
    roots: set[tuple[str, str]] = set()
    body: list[Instruction] = []
    name = ""
    for line in strip_comments(hlo_text).splitlines():
        header = COMPUTATION.match(line)
        if header:
            name, body = header.group("name"), computations.setdefault(header.group("name"), [])
        elif (inst := parse_instruction(line)) is not None:
            body.append(inst)
            if line.lstrip().startswith("ROOT"):
                roots.add((name, inst.name))
    return computations, roots
