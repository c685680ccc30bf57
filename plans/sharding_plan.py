"""The intra-op plan as data: what ``alpa-auto-sharding`` decided, saved as JSON.

The plan records the mesh, the sharding of every argument and result (with the
shapes and dtypes it was searched for, so loading it against other shapes fails, and
their names when the JAX API made it: ``params['w1']``), per op the chosen algorithm
with its predicted communication, and the solver's statistics. The pass writes it with
its ``report`` option; the JAX API keeps it next to the annotated module.

Per-op entries are most of a plan's JSON (every op of a training step, with its source
location), and re-applying a plan needs none of them: ``to_json(details=False)`` leaves
them out, keeping what they predict summed per collective (:class:`CollectiveTotal`),
and :meth:`ShardingPlan.from_json` reads both forms. ``print(plan)`` gives the summary
of :mod:`.plan_summary`; :meth:`ShardingPlan.draw` the picture of :mod:`.drawing`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from ..dialect.mesh import DeviceMesh
from ..dialect.sharding import ShardingSpec
from .drawing import draw_shardings, pyplot
from .plan_summary import sharding_summary

CollectiveKind = Literal["all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute"]


@dataclass(frozen=True, slots=True)
class Collective:
    """One collective an algorithm or a resharding performs.

    ``bytes`` is the per-device buffer the collective works on, as XLA's partitioned
    HLO shows it: the operand of an all-reduce, reduce-scatter or all-to-all, the
    result of an all-gather (Tables 2 and 3 use the same convention).
    """

    kind: CollectiveKind
    mesh_axes: tuple[int, ...]
    bytes: float
    cost: float


@dataclass(frozen=True, slots=True)
class CollectiveTotal:
    """The predicted collectives of one kind over one set of mesh axes, summed over a plan's ops."""

    kind: CollectiveKind
    mesh_axes: tuple[int, ...]
    count: int
    bytes: float
    cost: float


def collective_totals(collectives: Iterable[Collective]) -> tuple[CollectiveTotal, ...]:
    """``collectives`` summed per (kind, mesh axes), in order of first appearance."""
    totals: dict[tuple[str, tuple[int, ...]], list[float]] = {}
    for c in collectives:
        entry = totals.setdefault((c.kind, c.mesh_axes), [0, 0.0, 0.0])
        entry[0] += 1
        entry[1] += c.bytes
        entry[2] += c.cost
    return tuple(CollectiveTotal(kind, axes, int(n), b, cost) for (kind, axes), (n, b, cost) in totals.items())


PLAN_VERSION = 1


class PlanError(ValueError):
    """A plan file that cannot be read or does not fit the program it is used for."""


@dataclass(frozen=True)
class ValuePlan:
    """One function argument or result: its type and sharding."""

    shape: tuple[int, ...] | None
    dtype: str
    spec: ShardingSpec | None
    sharding: str  # mhlo.sharding text on the plan's mesh
    name: str = ""  # its pytree path (``params['w1']``, ``result[0]``) when the JAX API made the plan


@dataclass(frozen=True)
class OpPlan:
    """The algorithm chosen for one op, and what it communicates (Tables 2 and 3)."""

    op: str
    location: str
    strategy: str
    results: tuple[str, ...]
    communication: tuple[Collective, ...] = ()
    resharding: tuple[tuple[int, Collective], ...] = ()  # (operand number, collective)
    trips: int = 1  # runs per step (inside counted loops: their trip counts' product)


@dataclass(frozen=True)
class PeakMemory:
    """Bytes per device, as ``memory_analysis()`` names them."""

    arguments: float
    outputs: float
    aliased: float  # outputs written into donated arguments' buffers
    temporaries: float  # the largest sum of live temporaries at one program point
    at: str = ""  # the op where that peak is reached

    @property
    def total(self) -> float:
        """Arguments + outputs - aliased + temporaries: XLA's figure for the whole program."""
        return self.arguments + self.outputs - self.aliased + self.temporaries


@dataclass(frozen=True)
class ShardingPlan:
    mesh: DeviceMesh
    arguments: tuple[ValuePlan, ...]
    results: tuple[ValuePlan, ...]
    ops: tuple[OpPlan, ...] = ()
    solver: dict = field(default_factory=dict)
    objective: float = 0.0
    # (argument, result) pairs that keep one sharding: donated buffers and training state.
    tied: tuple[tuple[int, int], ...] = ()
    # What the ops predict, summed per collective, and how many there were: derived from
    # ``ops`` when it has any, read from the JSON of a compact plan (which has none).
    communication: tuple[CollectiveTotal, ...] = ()
    num_ops: int = 0
    memory: PeakMemory | None = None  # predicted per device (alpa-auto-sharding's plans have it)
    # The layers whose activations the backward pass computes again (alpa-rematerialize).
    recomputed: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.ops:
            object.__setattr__(self, "communication", collective_totals(self.predicted_collectives()))
            object.__setattr__(self, "num_ops", len(self.ops))

    @property
    def peak_memory(self) -> float | None:
        """Predicted bytes per device: arguments + outputs - donated + peak temporaries
        (what ``compiled.memory_analysis()`` adds up); ``None`` where not predicted."""
        return None if self.memory is None else self.memory.total

    def predicted_collectives(self) -> list[Collective]:
        """Every collective the plan predicts per step: algorithms' own and reshardings', an
        op's once per run (none in a compact plan)."""
        return [c for op in self.ops for _ in range(op.trips) for c in op.communication] + \
               [c for op in self.ops for _ in range(op.trips) for _, c in op.resharding]

    def compact(self) -> ShardingPlan:
        """The plan without its per-op entries (what ``to_json(details=False)`` keeps)."""
        return replace(self, ops=())

    def with_names(self, arguments: Iterable[str], results: Iterable[str]) -> ShardingPlan:
        """The plan with its arguments and results named (pytree paths), in order."""
        def named(values: tuple[ValuePlan, ...], names: Iterable[str]) -> tuple[ValuePlan, ...]:
            given = list(names)
            return tuple(replace(v, name=given[i]) if i < len(given) else v for i, v in enumerate(values))

        return replace(self, arguments=named(self.arguments, arguments), results=named(self.results, results))

    # ------------------------------------------------------------------ reading

    def summary(self) -> str:
        """Mesh; per argument its name, shape, dtype, sharding and bytes per device; totals;
        the predicted communication; the solver's statistics."""
        return sharding_summary(self)

    def __str__(self) -> str:
        return self.summary()

    def draw(self, path: str | os.PathLike | None = None, results: bool = False) -> Any:
        """A picture of the arguments' shardings (the results' too with ``results``), in the spirit
        of the paper's Fig. 10: per tensor, which dimension is split over which mesh axis and
        which devices hold which tile (grey: replicated). Written as PNG to ``path`` when given;
        returns the matplotlib figure. Needs matplotlib (the ``plot`` extra)."""
        return draw_shardings(pyplot(PlanError, "a sharding plan"), self, path, results)

    # ------------------------------------------------------------------ JSON

    def to_json(self, details: bool = True) -> dict:
        """The plan as a JSON object; without ``details``, the per-op entries become their
        ``communication`` totals and ``num_ops`` (a few hundred bytes instead of megabytes)."""
        mesh = self.mesh
        data = {
            "version": PLAN_VERSION,
            "mesh": {"shape": list(mesh.shape), "axes": list(mesh.axis_names),
                     "device_ids": list(mesh.device_ids), "alpha": list(mesh.alpha), "beta": list(mesh.beta)},
            "arguments": [_value_json(v) for v in self.arguments],
            "results": [_value_json(v) for v in self.results],
        }
        if details and self.ops:
            data["ops"] = [{"op": o.op, "location": o.location, "strategy": o.strategy, "results": list(o.results),
                            "communication": [asdict(c) for c in o.communication],
                            "resharding": [{"operand": k, **asdict(c)} for k, c in o.resharding],
                            **({"trips": o.trips} if o.trips != 1 else {})}
                           for o in self.ops]
        else:
            data["num_ops"] = self.num_ops
            data["communication"] = [asdict(t) for t in self.communication]
        data.update(solver=self.solver, objective=self.objective, tied=[list(pair) for pair in self.tied])
        if self.memory is not None:
            data["memory"] = asdict(self.memory)
        if self.recomputed:
            data["recomputed"] = list(self.recomputed)
        return data

    @classmethod
    def from_json(cls, data: dict) -> ShardingPlan:
        try:
            if data.get("version") != PLAN_VERSION:
                raise PlanError(f"plan version {data.get('version')!r} is not {PLAN_VERSION}")
            mesh = data["mesh"]
            return cls(
                mesh=DeviceMesh(tuple(mesh["shape"]), tuple(mesh["device_ids"]), tuple(mesh["axes"]),
                                tuple(mesh["alpha"]), tuple(mesh["beta"])),
                arguments=tuple(_value_from_json(v) for v in data["arguments"]),
                results=tuple(_value_from_json(v) for v in data["results"]),
                ops=tuple(OpPlan(o["op"], o["location"], o["strategy"], tuple(o["results"]),
                                 tuple(_collective(c) for c in o["communication"]),
                                 tuple((c["operand"], _collective(c)) for c in o["resharding"]),
                                 int(o.get("trips", 1)))
                          for o in data.get("ops", ())),
                solver=dict(data.get("solver", {})),
                objective=float(data.get("objective", 0.0)),
                tied=tuple((int(a), int(r)) for a, r in data.get("tied", ())),
                communication=tuple(CollectiveTotal(t["kind"], tuple(t["mesh_axes"]), int(t["count"]),
                                                    float(t["bytes"]), float(t["cost"]))
                                    for t in data.get("communication", ())),
                num_ops=int(data.get("num_ops", 0)),
                memory=PeakMemory(**data["memory"]) if "memory" in data else None,
                recomputed=tuple(int(layer) for layer in data.get("recomputed", ())),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise PlanError(f"malformed plan: missing or wrong entry {error}") from None

    def save(self, path: str | Path, details: bool = True) -> None:
        """Write the plan as JSON, with its per-op entries unless ``details`` is false (the
        ``report`` of ``alpa-auto-sharding`` keeps them: they are what it reports)."""
        Path(path).write_text(json.dumps(self.to_json(details), indent=1) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> ShardingPlan:
        try:
            return cls.from_json(json.loads(Path(path).read_text()))
        except (OSError, json.JSONDecodeError) as error:
            raise PlanError(f"cannot read plan {path}: {error}") from None


def _value_json(value: ValuePlan) -> dict:
    named = {"name": value.name} if value.name else {}
    return {**named, "shape": list(value.shape) if value.shape is not None else None, "dtype": value.dtype,
            "spec": [list(d) for d in value.spec.dims] if value.spec is not None else None,
            "sharding": value.sharding}


def _value_from_json(data: dict) -> ValuePlan:
    spec = data["spec"]
    return ValuePlan(tuple(data["shape"]) if data["shape"] is not None else None, data["dtype"],
                     ShardingSpec(tuple(tuple(d) for d in spec)) if spec is not None else None, data["sharding"],
                     str(data.get("name", "")))


def _collective(data: dict) -> Collective:
    return Collective(data["kind"], tuple(data["mesh_axes"]), float(data["bytes"]), float(data["cost"]))
