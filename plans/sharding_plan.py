"""The intra-op plan as data: what ``alpa-auto-sharding`` decided, saved as JSON.

The plan records the mesh, the sharding of every argument and result (with the
shapes and dtypes it was searched for, so loading it against other shapes fails),
per op the chosen algorithm with its predicted communication, and the solver's
statistics. The pass writes it with its ``report`` option; the JAX API keeps it next
to the annotated module.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from ..dialect.mesh import DeviceMesh
from ..dialect.sharding import ShardingSpec

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


@dataclass(frozen=True)
class OpPlan:
    """The algorithm chosen for one op, and what it communicates (Tables 2 and 3)."""

    op: str
    location: str
    strategy: str
    results: tuple[str, ...]
    communication: tuple[Collective, ...] = ()
    resharding: tuple[tuple[int, Collective], ...] = ()  # (operand number, collective)


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

    def predicted_collectives(self) -> list[Collective]:
        """Every collective the plan predicts: algorithms' own and reshardings'."""
        return [c for op in self.ops for c in op.communication] + \
               [c for op in self.ops for _, c in op.resharding]

    # ------------------------------------------------------------------ JSON

    def to_json(self) -> dict:
        mesh = self.mesh
        return {
            "version": PLAN_VERSION,
            "mesh": {"shape": list(mesh.shape), "axes": list(mesh.axis_names),
                     "device_ids": list(mesh.device_ids), "alpha": list(mesh.alpha), "beta": list(mesh.beta)},
            "arguments": [_value_json(v) for v in self.arguments],
            "results": [_value_json(v) for v in self.results],
            "ops": [{"op": o.op, "location": o.location, "strategy": o.strategy, "results": list(o.results),
                     "communication": [asdict(c) for c in o.communication],
                     "resharding": [{"operand": k, **asdict(c)} for k, c in o.resharding]}
                    for o in self.ops],
            "solver": self.solver,
            "objective": self.objective,
            "tied": [list(pair) for pair in self.tied],
        }

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
                                 tuple((c["operand"], _collective(c)) for c in o["resharding"]))
                          for o in data["ops"]),
                solver=dict(data.get("solver", {})),
                objective=float(data.get("objective", 0.0)),
                tied=tuple((int(a), int(r)) for a, r in data.get("tied", ())),
            )
        except (KeyError, TypeError) as error:
            raise PlanError(f"malformed plan: missing or wrong entry {error}") from None

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> ShardingPlan:
        try:
            return cls.from_json(json.loads(Path(path).read_text()))
        except (OSError, json.JSONDecodeError) as error:
            raise PlanError(f"cannot read plan {path}: {error}") from None


def _value_json(value: ValuePlan) -> dict:
    return {"shape": list(value.shape) if value.shape is not None else None, "dtype": value.dtype,
            "spec": [list(d) for d in value.spec.dims] if value.spec is not None else None,
            "sharding": value.sharding}


def _value_from_json(data: dict) -> ValuePlan:
    spec = data["spec"]
    return ValuePlan(tuple(data["shape"]) if data["shape"] is not None else None, data["dtype"],
                     ShardingSpec(tuple(tuple(d) for d in spec)) if spec is not None else None, data["sharding"])


def _collective(data: dict) -> Collective:
    return Collective(data["kind"], tuple(data["mesh_axes"]), float(data["bytes"]), float(data["cost"]))
