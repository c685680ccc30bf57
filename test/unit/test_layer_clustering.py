"""Operator clustering (Sec. 5.2) against exhaustive search, plus its structure and error paths."""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest

from alpa_mlir.passes.inter_op.layer_clustering import (
    FLOP_SLACK,
    ClusteringInfeasibleError,
    Value,
    cluster_operators,
)


def received(values: list, start: int, stop: int) -> float:
    """C(i, k) from the paper's words: inputs of ops start..stop-1 made before start, once each."""
    values = [v if isinstance(v, Value) else Value(v[0], (v[1],), v[2]) for v in values]
    return sum(v.nbytes for v in values if v.producer < start and any(start <= c < stop for c in v.consumers))


def brute_force(flops, values, num_layers, delta, boundaries=(), candidates=None):
    """Lexicographic min of (max C, FLOP variance) over every allowed cut, or None."""
    k = len(flops)
    allowed = set(range(k - 1)) if candidates is None else set(candidates) | set(boundaries)
    bound = (1 + delta) * sum(flops) / num_layers * (1 + FLOP_SLACK)
    best = None
    for cuts in itertools.combinations(sorted(allowed), num_layers - 1):
        if not set(boundaries) <= set(cuts):
            continue
        edges = (0, *(c + 1 for c in cuts), k)
        layer_flops = [sum(flops[s:e]) for s, e in zip(edges, edges[1:])]
        if max(layer_flops) > bound:
            continue
        key = (max(received(values, s, e) for s, e in zip(edges, edges[1:])), float(np.var(layer_flops)))
        if best is None or key[0] < best[0] or (key[0] == best[0] and key[1] < best[1] - 1e-9):
            best = key
    return best


def random_instance(rng: np.random.Generator):
    k = int(rng.integers(3, 10))
    flops = [float(f) for f in rng.integers(0, 20, size=k)]
    values = []
    for producer in range(k - 1):
        for _ in range(int(rng.integers(0, 3))):
            readers = rng.choice(np.arange(producer + 1, k), size=int(rng.integers(1, k - producer)), replace=False)
            values.append(Value(producer, tuple(int(r) for r in readers), float(rng.integers(1, 50))))
    return flops, values


def check_against_brute_force(seed: int, restrict: str) -> None:
    rng = np.random.default_rng(seed)
    flops, values = random_instance(rng)
    k = len(flops)
    num_layers = int(rng.integers(1, min(4, k) + 1))
    delta = float(rng.choice([0.0, 0.3, 0.6, 1.5]))
    boundaries: tuple[int, ...] = ()
    candidates: tuple[int, ...] | None = None
    if restrict == "boundaries" and k > 1:
        boundaries = tuple(int(b) for b in rng.choice(k - 1, size=int(rng.integers(0, num_layers)), replace=False))
    if restrict == "candidates" and k > 1:
        candidates = tuple(int(c) for c in rng.choice(k - 1, size=int(rng.integers(0, k)), replace=False))
    expected = brute_force(flops, values, num_layers, delta, boundaries, candidates)
    kwargs = {"delta": delta, "boundaries": boundaries, "candidates": candidates}
    if expected is None:
        with pytest.raises(ClusteringInfeasibleError):
            cluster_operators(flops, values, num_layers, **kwargs)
        return
    got = cluster_operators(flops, values, num_layers, **kwargs)
    assert (got.max_received, got.flop_variance) == pytest.approx(expected, abs=1e-9)
    # The reported layers are what they claim to be.
    edges = (*got.starts, k)
    assert len(got.starts) == num_layers and got.starts[0] == 0
    assert set(b + 1 for b in boundaries) <= set(got.starts)
    assert got.layer_flops == tuple(sum(flops[s:e]) for s, e in zip(edges, edges[1:]))
    assert got.layer_received == tuple(received(values, s, e) for s, e in zip(edges, edges[1:]))


@pytest.mark.parametrize("restrict", ["none", "boundaries", "candidates"])
def test_matches_brute_force(restrict: str) -> None:
    for seed in range(120):
        check_against_brute_force(1000 * len(restrict) + seed, restrict)


def test_a_value_read_twice_in_a_layer_counts_once() -> None:
    values = [Value(0, (1, 2), 10.0), (0, 3, 4.0)]
    forced = cluster_operators([1.0, 1.0, 1.0, 1.0], values, 2, delta=1.0, boundaries=[0])
    assert forced.layer_received == (0.0, 14.0)  # not 24: ops 1 and 2 share one copy
    # Cutting after op 2 leaves only the 4-byte edge to receive.
    free = cluster_operators([1.0, 1.0, 1.0, 1.0], values, 2, delta=1.0)
    assert free.starts == (0, 3) and free.max_received == 4.0 and free.flop_variance == 1.0


def repeated_blocks(num_blocks: int):
    """Identical 5-op blocks (matmul, gelu, add, matmul, norm): heavy traffic inside a block."""
    flops, values = [], []
    for b in range(num_blocks):
        base = 5 * b
        flops += [100.0, 1.0, 1.0, 100.0, 1.0]
        values += [(base + i, base + i + 1, 8.0) for i in range(4)]
        values += [(base, base + 3, 1000.0), (base + 1, base + 4, 1000.0)]
        if b + 1 < num_blocks:  # into the next block: the chain edge and a residual read twice
            values += [(base + 4, base + 5, 8.0), Value(base + 4, (base + 5, base + 9), 64.0)]
    return flops, values


def test_repeated_blocks_cluster_at_block_boundaries() -> None:
    flops, values = repeated_blocks(4)
    got = cluster_operators(flops, values, 4, delta=0.6)
    assert got.starts == (0, 5, 10, 15)
    assert got.layer_flops == (203.0,) * 4 and got.flop_variance == 0.0
    assert got.layer_received == (0.0, 72.0, 72.0, 72.0) and got.max_received == 72.0
    assert got.layer_of_op == tuple(i // 5 for i in range(20))
    # Two layers: every block boundary receives 72 bytes; the FLOP variance picks the middle.
    assert cluster_operators(flops, values, 2, delta=0.6).starts == (0, 10)


def test_user_boundaries_win() -> None:
    flops, values = repeated_blocks(4)
    got = cluster_operators(flops, values, 4, delta=0.6, boundaries=[7])
    assert 8 in got.starts
    assert got.max_received == pytest.approx(brute_force(flops, values, 4, 0.6, boundaries=[7])[0])


def test_infeasible_delta_says_what_delta_is_needed() -> None:
    flops = [10.0, 1.0, 1.0, 1.0, 1.0]  # one op is 10 / (14 / 2) = 1.43x the average of 2 layers
    with pytest.raises(ClusteringInfeasibleError, match=r"delta >= 0\.428") as err:
        cluster_operators(flops, [], 2, delta=0.2)
    assert err.value.delta == 0.2
    assert err.value.required_delta == pytest.approx(10 / 7 - 1, rel=1e-6)
    assert cluster_operators(flops, [], 2, delta=err.value.required_delta + 1e-6).starts == (0, 1)


def test_too_few_cut_positions_is_not_a_delta_problem() -> None:
    with pytest.raises(ClusteringInfeasibleError, match="more cut positions") as err:
        cluster_operators([1.0] * 6, [], 3, candidates=[2])
    assert math.isinf(err.value.required_delta)
    with pytest.raises(ClusteringInfeasibleError):
        cluster_operators([1.0] * 6, [], 2, boundaries=[1, 3])  # three user segments, two layers


@pytest.mark.parametrize(
    "args",
    [([], [], 1), ([1.0], [], 0), ([1.0, -1.0], [], 1), ([1.0, 1.0], [(1, 0, 4.0)], 1), ([1.0, 1.0], [(0, 2, 4.0)], 1)],
)
def test_bad_input(args) -> None:
    with pytest.raises(ValueError):
        cluster_operators(*args)


def test_bad_cut_position() -> None:
    with pytest.raises(ValueError, match="cuts go after ops 0..2"):
        cluster_operators([1.0] * 4, [], 2, boundaries=[3])


def test_gpt_sized_graph_is_fast() -> None:
    """K = 10,000 ops, ~1,000 candidate cuts, L = 48 (a GPT-3 step), in well under a few seconds."""
    rng = np.random.default_rng(0)
    k = 10_000
    flops = np.where(rng.random(k) < 0.1, 1e12, 1e8).tolist()
    values = [(i, i + 1, 4096.0) for i in range(k - 1)]
    values += [(int(s), int(s) + int(rng.integers(2, 200)), 4096.0) for s in rng.integers(0, k - 200, size=10_000)]
    candidates = sorted(rng.choice(k - 1, size=1000, replace=False).tolist())
    begin = time.perf_counter()
    got = cluster_operators(flops, values, 48, candidates=candidates)
    assert time.perf_counter() - begin < 5.0
    assert len(got.starts) == 48
    assert max(got.layer_flops) <= 1.6 * sum(flops) / 48 * (1 + FLOP_SLACK)
