"""Submesh shapes of the N x M cluster mesh and their placement on physical devices (Sec. 5.2, Appendix A).

The stage DP picks one submesh shape per pipeline stage; it only checks that the device counts add up to
N * M. Sec. 5.2 restricts the shapes to ``(1, 1), (1, 2), (1, 4), ..., (1, M)`` and ``(2, M), ..., (N, M)``
so that such a list can always tile the cluster (Appendix A's theorem, for M a power of two).
:func:`cover_submeshes` finds that tiling: it gives each stage a rectangle of hosts x devices whose ids,
numbered host-major (``host * M + device``), a :class:`~alpa_mlir.dialect.mesh.PhysicalCluster`
``submesh(host_start, host_count, device_start, device_count)`` call takes as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral

Shape = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Placement:
    """Where one stage's submesh sits: ``host_count`` hosts from ``host_start``, on each of them
    ``device_count`` devices from ``device_start``."""

    host_start: int
    host_count: int
    device_start: int
    device_count: int
    device_ids: tuple[int, ...]  # host-major: host * M + device

    @property
    def shape(self) -> Shape:
        return (self.host_count, self.device_count)


def submesh_shapes(cluster: Shape, space: str = "power-of-two") -> tuple[Shape, ...]:
    """The submesh shapes the stage DP may assign to a stage.

    Args:
      cluster: the cluster mesh ``(N, M)``: N hosts of M devices.
      space: ``"power-of-two"`` for Sec. 5.2's ``(1, 2^p)`` (p while ``2^p < M``), ``(1, M)`` and
        ``(2, M), ..., (N, M)``; ``"all"`` for every ``(n, m)`` with ``n <= N`` and ``m <= M`` (those with
        ``1 < n`` and ``m < M`` are outside what :func:`cover_submeshes` can place).
    """
    num_hosts, per_host = _check_cluster(cluster)
    if space == "all":
        return tuple((n, m) for n in range(1, num_hosts + 1) for m in range(1, per_host + 1))
    if space != "power-of-two":
        raise ValueError(f"submesh space {space!r} is not one of 'power-of-two', 'all'")
    one_host = []
    m = 1
    while m < per_host:
        one_host.append((1, m))
        m *= 2
    # M itself even when it is not a power of two: a stage may always take one whole host.
    one_host.append((1, per_host))
    return tuple(one_host) + tuple((n, per_host) for n in range(2, num_hosts + 1))


def cover_submeshes(cluster: Shape, shapes: Sequence[Shape]) -> tuple[Placement, ...]:
    """Place one submesh per shape so that together they use every device of ``cluster`` once.

    ``placements[i]`` is where ``shapes[i]`` (stage i) goes. Stages are laid out in order, one after the
    other along the host-major device ids, whenever no stage then straddles a host boundary (a whole-host
    stage must start one); neighbouring stages are then neighbours on the devices. Otherwise, as Sec. 5.2
    assigns devices, larger submeshes come first: every ``(n, M)`` shape takes n whole hosts, and the
    ``(1, m)`` shapes are packed into the hosts left over, largest first; the blocks are then ordered
    along the hosts by the first stage they hold, to keep neighbouring stages close.

    Raises ``ValueError`` when the device counts do not add up to N * M, when a shape is neither one
    host's ``(1, m)`` nor whole hosts' ``(n, M)``, or when the ``(1, m)`` shapes cannot share the leftover
    hosts (never with M and every m powers of two, Appendix A).
    """
    num_hosts, per_host = _check_cluster(cluster)
    shapes = [_check_shape(shape, num_hosts, per_host) for shape in shapes]
    total = sum(n * m for n, m in shapes)
    if total != num_hosts * per_host:
        raise ValueError(f"submeshes {shapes} hold {total} devices but the {num_hosts}x{per_host} cluster has "
                         f"{num_hosts * per_host}; the stage DP must use every device exactly once")
    in_order = _cover_in_order(shapes, per_host)
    if in_order is not None:
        return in_order

    # Blocks of whole hosts, each a list of (stage, device_start): whole-host stages first (Sec. 5.2).
    blocks: list[list[tuple[int, int]]] = [[(i, 0)] for i, (_, m) in enumerate(shapes) if m == per_host]
    whole_hosts = sum(n for n, m in shapes if m == per_host)
    partial = [i for i, (_, m) in enumerate(shapes) if m < per_host]
    hosts = _pack_one_host_shapes([shapes[i][1] for i in partial], num_hosts - whole_hosts, per_host)
    if hosts is None:
        sizes = sorted((shapes[i][1] for i in partial), reverse=True)
        raise ValueError(f"one-host submeshes of {sizes} devices cannot share {num_hosts - whole_hosts} hosts of "
                         f"{per_host} devices; use widths and M that are powers of two, which always fit "
                         f"(Appendix A)")
    for members in hosts:
        block, start = [], 0
        for i in sorted(partial[p] for p in members):
            block.append((i, start))
            start += shapes[i][1]
        blocks.append(block)

    placements: dict[int, Placement] = {}
    host = 0
    for block in sorted(blocks, key=lambda b: min(i for i, _ in b)):
        for i, start in block:
            placements[i] = _placement(host, shapes[i][0], start, shapes[i][1], per_host)
        host += shapes[block[0][0]][0]
    return tuple(placements[i] for i in range(len(shapes)))


def _cover_in_order(shapes: list[Shape], per_host: int) -> tuple[Placement, ...] | None:
    """Stages one after the other along the device ids, or None if one would straddle a host boundary."""
    placements, offset = [], 0
    for n, m in shapes:
        host, start = divmod(offset, per_host)
        if start + m > per_host:  # a whole-host shape thus starts a host
            return None
        placements.append(_placement(host, n, start, m, per_host))
        offset += n * m
    return tuple(placements)


def _pack_one_host_shapes(sizes: list[int], num_hosts: int, per_host: int) -> list[list[int]] | None:
    """Indices of ``sizes`` per host so that every host is exactly full, or None if impossible.

    Largest first, each into the first host with room: for power-of-two sizes that first try always
    succeeds (Appendix A's induction pairs up the smallest pieces). Other sizes may need the backtracking;
    a failed (piece, free space of each host) state is remembered so that it is tried once.
    """
    order = sorted(range(len(sizes)), key=lambda i: -sizes[i])
    free = [per_host] * num_hosts
    members: list[list[int]] = [[] for _ in range(num_hosts)]
    failed: set[tuple[int, tuple[int, ...]]] = set()

    def place(pos: int) -> bool:
        if pos == len(order):
            return all(f == 0 for f in free)
        key = (pos, tuple(sorted(free)))
        if key in failed:
            return False
        size, tried = sizes[order[pos]], set()
        for host in range(num_hosts):
            if free[host] < size or free[host] in tried:  # hosts with equal free space are interchangeable
                continue
            tried.add(free[host])
            free[host] -= size
            members[host].append(order[pos])
            if place(pos + 1):
                return True
            free[host] += size
            members[host].pop()
        failed.add(key)
        return False

    return members if place(0) else None


def _placement(host: int, host_count: int, start: int, device_count: int, per_host: int) -> Placement:
    ids = tuple(h * per_host + d for h in range(host, host + host_count) for d in range(start, start + device_count))
    return Placement(host, host_count, start, device_count, ids)


def _check_cluster(cluster: Shape) -> Shape:
    if not _is_shape(cluster):
        raise ValueError(f"cluster {cluster!r} must be (hosts, devices per host), two positive integers")
    return int(cluster[0]), int(cluster[1])


def _check_shape(shape: Shape, num_hosts: int, per_host: int) -> Shape:
    if not _is_shape(shape):
        raise ValueError(f"submesh {shape!r} must be (hosts, devices per host), two positive integers")
    n, m = int(shape[0]), int(shape[1])
    if n > num_hosts or m > per_host:
        raise ValueError(f"submesh {shape!r} does not fit the {num_hosts}x{per_host} cluster")
    if n > 1 and m < per_host:
        raise ValueError(f"submesh {shape!r} spans {n} hosts but not whole ones; only (1, m) and (n, {per_host}) "
                         f"shapes can always be placed (Sec. 5.2)")
    return n, m


def _is_shape(shape: Shape) -> bool:
    return (len(shape) == 2 and all(isinstance(x, Integral) and not isinstance(x, bool) for x in shape)
            and min(shape) >= 1)
