"""lowering.reshard_probe: XLA's answer for one resharding, probed small and scaled.

The probe compiles the resharding on the smallest shape with the tensor's
divisibility by every shard count; the scaled answer must be what XLA emits for the
tensor itself, which these tests compile directly for comparison.
"""

from __future__ import annotations

import collections
import itertools
import random

import pytest

from alpa_mlir.dialect.mesh import DeviceMesh
from alpa_mlir.dialect.sharding import ShardingSpec
from alpa_mlir.lowering.reshard_probe import _probe, probe_resharding, probe_shape
from alpa_mlir.passes.intra_op.cost_model import resharding_collectives


def specs(rank: int, mesh: DeviceMesh) -> list[ShardingSpec]:
    """Every spec that puts each mesh axis on at most one dimension (in mesh order)."""
    result = []
    for placement in itertools.product(range(rank + 1), repeat=mesh.ndim):
        dims = tuple(tuple(a for a in range(mesh.ndim) if placement[a] == d) for d in range(rank))
        result.append(ShardingSpec(dims))
    return result


def test_probe_shape_keeps_divisibility_by_every_shard_count():
    mesh = DeviceMesh((2, 4))
    assert probe_shape((1024, 48, 6, 1, 3), mesh) == (8, 8, 2, 1, 1)
    for size, probe in zip((1024, 48, 6, 1, 3), probe_shape((1024, 48, 6, 1, 3), mesh)):
        assert all((size % k == 0) == (probe % k == 0) for k in (2, 4, 8))


def tally(collectives) -> collections.Counter:
    found: collections.Counter = collections.Counter()
    for c, factor in collectives:
        found[(c.kind, c.mesh_axes)] += c.bytes * factor
    return found


@pytest.mark.parametrize("mesh_shape, shape", [((2, 4), (48, 40)), ((2, 2, 2), (8, 12, 6)), ((8,), (24, 16))])
def test_scaled_probe_is_what_xla_emits_for_the_tensor(mesh_shape, shape):
    mesh = DeviceMesh(mesh_shape)
    candidates = [s for s in specs(len(shape), mesh)
                  if all(size % s.num_shards(d, mesh) == 0 for d, size in enumerate(shape))]
    pairs = [p for p in itertools.product(candidates, repeat=2) if p[0] != p[1]]
    pairs = random.Random(0).sample(pairs, min(6, len(pairs)))
    for src, dst in pairs:
        probed = tally(probe_resharding(src, dst, shape, 4, mesh))
        direct = tally((c, 1.0) for c in _probe(src, dst, shape, mesh, "shardy"))
        assert probed == direct, f"{src} -> {dst} on {shape}"
        # bf16 halves every buffer.
        assert tally(probe_resharding(src, dst, shape, 2, mesh)) == {k: v / 2 for k, v in direct.items()}


def test_a_move_between_axes_is_a_permute_not_a_gather():
    # Columns over x (replicated over y) to columns over y: each target tile lies whole
    # on one source device, so XLA permutes it where Table 2 gathers over x.
    mesh = DeviceMesh((2, 4))
    found = probe_resharding(ShardingSpec(((), (0,))), ShardingSpec(((), (1,))), (16, 32), 4, mesh)
    assert [(c.kind, c.bytes * f) for c, f in found] == [("collective-permute", 16 * 8 * 4)]



def by_kind(pairs) -> dict[str, float]:
    """Bytes per collective kind of ``(kind, bytes)`` pairs."""
    found: collections.Counter = collections.Counter()
    for kind, nbytes in pairs:
        found[kind] += nbytes
    return dict(found)


@pytest.mark.parametrize("mesh_shape, rank", [((2, 2, 2), 2), ((2, 2, 2), 3), ((2, 4), 2), ((2, 4), 3)])
def test_the_model_is_what_xla_emits_outside_its_last_rule(mesh_shape, rank):
    # cost_model's rules 1-5 (all but "an all-to-all and a permute of the target tile")
    # are XLA's own answer, kind by kind; the last rule is an estimate.
    mesh = DeviceMesh(mesh_shape)
    shape = (16,) * rank
    pairs = [p for p in itertools.product(specs(rank, mesh), repeat=2) if p[0] != p[1]]
    checked = 0
    for src, dst in random.Random(1).sample(pairs, min(40, len(pairs))):
        model = resharding_collectives(src, dst, shape, 4, mesh)
        if {"all-to-all", "collective-permute"} <= {c.kind for c in model}:
            continue
        checked += 1
        xla = probe_resharding(src, dst, shape, 4, mesh)
        assert by_kind((c.kind, c.bytes) for c in model) == by_kind((c.kind, c.bytes * f) for c, f in xla), \
            f"{src} -> {dst}"
    assert checked >= 15
