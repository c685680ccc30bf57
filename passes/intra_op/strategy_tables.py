"""The strategy and resharding tables cost graphs share, and who keeps them.

Building a :class:`~.cost_graph.Graph` enumerates each op's strategies and prices the
reshardings between them; graphs of the same layers on the same mesh compute the same
entries. They share them by being built with the same :class:`StrategyTables`, which a
:class:`TableCache` keeps apart by mesh, options and forbidden collectives.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...dialect.mesh import DeviceMesh
from .strategies import StrategyOptions


@dataclass
class StrategyTables:
    """What every :class:`Graph` built with these tables shares, by what each entry is
    computed from: strategies and their costs by iteration space and operand types,
    resharding costs by (src, dst, shape, itemsize), resharding matrices and strategies'
    bytes by the strategy keys. Valid for one mesh, one set of strategy options and of
    forbidden collectives (:class:`TableCache` keeps them apart); a graph that XLA prices a
    resharding for takes copies of the prices (``Graph.measure_reshardings``)."""

    strategies: dict = field(default_factory=dict)
    costs: dict = field(default_factory=dict)
    matrices: dict = field(default_factory=dict)
    memory: dict = field(default_factory=dict)


class TableCache:
    """:class:`StrategyTables` by mesh, strategy options and forbidden collectives, kept by
    whoever plans many graphs: one ``alpa-auto-sharding`` run (its attempts with and
    without recompute), the stage search (the same layers in many candidates)."""

    def __init__(self) -> None:
        self._tables: dict[tuple, StrategyTables] = {}

    def tables(self, mesh: DeviceMesh, options: StrategyOptions, forbidden: frozenset[str]) -> StrategyTables:
        return self._tables.setdefault((mesh, options, forbidden), StrategyTables())
