"""Enumeration of sharding specs for the property tests, written independently of the
library's own search so that the two check each other."""

from __future__ import annotations

import itertools

from alpa_mlir.dialect import ShardingSpec


def all_specs(rank: int, mesh_ndim: int):
    """Every spec of ``rank``: each mesh axis goes to one dimension (any order) or none."""
    for targets in itertools.product(range(rank + 1), repeat=mesh_ndim):
        groups = [[a for a in range(mesh_ndim) if targets[a] == d] for d in range(rank)]
        for orders in itertools.product(*(itertools.permutations(g) for g in groups)):
            yield ShardingSpec(tuple(orders))
