"""Submesh shapes (Sec. 5.2) and their placement on the cluster (Appendix A), with error paths."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from alpa_mlir.passes.inter_op.submesh import Placement, cover_submeshes, submesh_shapes

Cluster = tuple[int, int]


def test_power_of_two_shapes() -> None:
    assert submesh_shapes((2, 8)) == ((1, 1), (1, 2), (1, 4), (1, 8), (2, 8))
    assert submesh_shapes((4, 8)) == ((1, 1), (1, 2), (1, 4), (1, 8), (2, 8), (3, 8), (4, 8))
    assert submesh_shapes((1, 6)) == ((1, 1), (1, 2), (1, 4), (1, 6))  # M itself, though not a power of two
    assert submesh_shapes((3, 1)) == ((1, 1), (2, 1), (3, 1))


def test_all_shapes() -> None:
    assert submesh_shapes((2, 3), "all") == ((1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3))


@pytest.mark.parametrize(("cluster", "space", "match"), [
    ((0, 4), "power-of-two", "two positive integers"),
    ((2,), "power-of-two", "two positive integers"),
    ((2, 4.0), "power-of-two", "two positive integers"),
    ((2, 4), "square", "not one of"),
])
def test_bad_shape_space(cluster: Cluster, space: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        submesh_shapes(cluster, space)


def check_cover(cluster: Cluster, shapes: list[tuple[int, int]], placements: tuple[Placement, ...]) -> None:
    """Every device once; each placement a (hosts x devices) rectangle of its stage's shape."""
    num_hosts, per_host = cluster
    assert len(placements) == len(shapes)
    for shape, p in zip(shapes, placements):
        assert p.shape == shape
        assert 0 <= p.host_start and p.host_start + p.host_count <= num_hosts
        assert 0 <= p.device_start and p.device_start + p.device_count <= per_host
        assert p.device_ids == tuple(h * per_host + d for h in range(p.host_start, p.host_start + p.host_count)
                                     for d in range(p.device_start, p.device_start + p.device_count))
        if shape[1] == per_host:
            assert p.device_start == 0  # whole-host shapes take whole hosts
    used = sorted(i for p in placements for i in p.device_ids)
    assert used == list(range(num_hosts * per_host))


def random_shapes(rng: np.random.Generator, cluster: Cluster, space: tuple[tuple[int, int], ...]) -> list:
    """Shapes from ``space`` drawn until their devices add up to the cluster's, in random order."""
    left, shapes = cluster[0] * cluster[1], []
    while left:
        fitting = [s for s in space if s[0] * s[1] <= left]
        shape = fitting[rng.integers(len(fitting))]
        shapes.append(shape)
        left -= shape[0] * shape[1]
    return [shapes[i] for i in rng.permutation(len(shapes))]


@pytest.mark.parametrize("cluster", [(1, 1), (1, 4), (2, 2), (2, 4), (3, 4), (4, 4), (1, 8), (2, 8), (3, 8), (4, 8)])
def test_power_of_two_shapes_always_cover(cluster: Cluster) -> None:
    rng = np.random.default_rng(sum(cluster))
    for _ in range(40):
        shapes = random_shapes(rng, cluster, submesh_shapes(cluster))
        check_cover(cluster, shapes, cover_submeshes(cluster, shapes))


def packs(sizes: list[int], num_hosts: int, per_host: int) -> bool:
    """Exhaustive: some assignment of the one-host pieces to hosts fills every host exactly."""
    for hosts in itertools.product(range(num_hosts), repeat=len(sizes)):
        if all(sum(s for s, h in zip(sizes, hosts) if h == host) == per_host for host in range(num_hosts)):
            return True
    return False


@pytest.mark.parametrize("cluster", [(2, 3), (2, 5), (2, 6), (3, 6), (2, 7)])
def test_other_one_host_shapes_cover_when_possible(cluster: Cluster) -> None:
    # M not a power of two, pieces of any width: Appendix A does not apply; cover exactly when some packing does.
    rng = np.random.default_rng(sum(cluster))
    one_host = tuple((1, m) for m in range(1, cluster[1] + 1))
    covered = refused = 0
    for _ in range(25):
        shapes = random_shapes(rng, cluster, one_host)
        if len(shapes) > 8:
            continue
        whole = sum(1 for _, m in shapes if m == cluster[1])
        possible = packs([m for _, m in shapes if m < cluster[1]], cluster[0] - whole, cluster[1])
        if possible:
            check_cover(cluster, shapes, cover_submeshes(cluster, shapes))
            covered += 1
        else:
            with pytest.raises(ValueError, match="cannot share"):
                cover_submeshes(cluster, shapes)
            refused += 1
    assert covered >= 5


def test_stages_in_order_when_sizes_permit() -> None:
    placements = cover_submeshes((1, 8), [(1, 2), (1, 2), (1, 4)])
    assert [(p.host_start, p.device_start) for p in placements] == [(0, 0), (0, 2), (0, 4)]
    placements = cover_submeshes((3, 4), [(1, 4), (1, 2), (1, 2), (1, 4)])
    assert [p.device_ids for p in placements] == [(0, 1, 2, 3), (4, 5), (6, 7), (8, 9, 10, 11)]


def test_whole_hosts_first_then_larger_pieces() -> None:
    # In order, (1, 4) would start at device 1. It takes host 1 whole; the pieces share host 0 in stage order.
    placements = cover_submeshes((2, 4), [(1, 1), (1, 4), (1, 2), (1, 1)])
    assert [p.device_ids for p in placements] == [(0,), (4, 5, 6, 7), (1, 2), (3,)]
    # Stage 1 takes two whole hosts; stages 0 and 2 share the third, placed first to sit next to stage 0.
    placements = cover_submeshes((3, 8), [(1, 4), (2, 8), (1, 4)])
    assert [(p.host_start, p.host_count, p.device_start) for p in placements] == [(0, 1, 0), (1, 2, 0), (0, 1, 4)]


def test_packing_backtracks() -> None:
    # Largest first, first fit puts 3 + 3 on one host and then 2 + 2 + 2 + 2 cannot fill 7; 3 + 2 + 2 twice can.
    shapes = [(1, 3), (1, 3), (1, 2), (1, 2), (1, 2), (1, 2)]
    check_cover((2, 7), shapes, cover_submeshes((2, 7), shapes))


@pytest.mark.parametrize(("cluster", "shapes", "match"), [
    ((2, 4), [(1, 4), (1, 2)], "hold 6 devices"),
    ((2, 4), [(2, 2), (1, 4)], "not whole ones"),
    ((2, 4), [(3, 4)], "does not fit"),
    ((2, 4), [(1, 0), (2, 4)], "two positive integers"),
    ((2, 6), [(1, 4), (1, 4), (1, 4)], "cannot share"),
])
def test_cover_errors(cluster: Cluster, shapes: list, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        cover_submeshes(cluster, shapes)
