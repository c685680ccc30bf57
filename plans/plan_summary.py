"""The plans as text a person reads: ``print(plan)`` of a :class:`ShardingPlan` or a :class:`PipelinePlan`.

A sharding plan prints, per argument, its name (its pytree path when the JAX API made
the plan), shape, element type, sharding in the paper's notation (``S^0R``: dimension 0
split over mesh axis 0, dimension 1 replicated; ``S^{01}``: split over axes 0 and 1) and
as a ``PartitionSpec`` over the mesh's axis names, and the bytes of one device's tile;
then the results that do not keep an argument's sharding, the totals, the collectives
the plan predicts (summed per kind and mesh axes, in the cost units of the mesh's alpha
and beta: Eq. 1's objective) and the solver's statistics. A pipeline plan prints its
stages: layers, submesh, logical mesh, devices, latency and memory per device (Eq. 5).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..dialect.mesh import DeviceMesh
from ..dialect.sharding import ShardingSpec, tile_bytes
from .clock_tables import in_flight

if TYPE_CHECKING:
    from .pipeline_plan import PipelinePlan
    from .sharding_plan import ShardingPlan, ValuePlan

_ELEMENT = re.compile(r"^(?:complex<)?[a-z]*?(\d+)")  # f32, bf16, i1, ui8, f8E4M3FN, complex<f32>


def element_bytes(dtype: str) -> int:
    """Bytes per element of an MLIR element type (``f32``: 4, ``i1``: 1, ``complex<f64>``: 16);
    0 for what is not a number type (tokens, tuples)."""
    found = _ELEMENT.match(dtype)
    if found is None:
        return 8 if dtype == "index" else 0
    size = max(1, int(found[1]) // 8)
    return 2 * size if dtype.startswith("complex<") else size


def value_tile_bytes(value: ValuePlan, mesh: DeviceMesh) -> int:
    """Bytes of one device's tile of ``value`` (the whole value where it is replicated)."""
    if value.shape is None:
        return 0
    spec = value.spec if value.spec is not None else ShardingSpec.replicated(len(value.shape))
    return int(tile_bytes(spec, tuple(value.shape), element_bytes(value.dtype), mesh))


def value_bytes(value: ValuePlan) -> int:
    """Bytes of the whole value."""
    return 0 if value.shape is None else math.prod(value.shape) * element_bytes(value.dtype)


def partition_spec_text(spec: ShardingSpec | None, axis_names: Sequence[str]) -> str:
    """``spec`` as JAX writes a ``PartitionSpec``: ``P('x', None)``, ``P(('x', 'y'),)``."""
    if spec is None:
        return "-"

    def one(axes: tuple[int, ...]) -> str:
        if not axes:
            return "None"
        names = [repr(axis_names[a]) for a in axes]
        return names[0] if len(names) == 1 else "(" + ", ".join(names) + ")"

    dims = [one(axes) for axes in spec.dims]
    return "P(" + ", ".join(dims) + ("," if len(dims) == 1 and spec.dims[0] else "") + ")"


def byte_text(count: float) -> str:
    """``count`` bytes in binary units: ``96 B``, ``16 KiB``, ``1.5 MiB``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(count) < 1024 or unit == "GiB":
            return f"{count:.4g} {unit}"
        count /= 1024
    raise AssertionError("unreachable")


def seconds_text(seconds: float) -> str:
    """``seconds`` in the unit that reads best: ``250 us``, ``12.5 ms``, ``1.2 s``."""
    if seconds == 0 or not math.isfinite(seconds) or abs(seconds) >= 1:
        return f"{seconds:.3g} s"
    if abs(seconds) >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} us"


def table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    """Lines of a plain-text table; columns in ``right`` aligned to the right (numbers)."""
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]

    def line(row: Sequence[str]) -> str:
        cells = [str(c).rjust(w) if i in right else str(c).ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        return "  " + "  ".join(cells).rstrip()

    return [line(header), *(line(row) for row in rows)]


def mesh_text(mesh: DeviceMesh) -> str:
    axes = ", ".join(f"{name}={size}" for name, size in zip(mesh.axis_names, mesh.shape))
    return f"{' x '.join(map(str, mesh.shape))} ({axes}; devices {devices_text(mesh.device_ids)})"


def devices_text(devices: Sequence[int]) -> str:
    """``0-3`` for a run of consecutive ids, else the ids: ``0,2,4``."""
    if devices and list(devices) == list(range(devices[0], devices[0] + len(devices))) and len(devices) > 2:
        return f"{devices[0]}-{devices[-1]}"
    return ",".join(map(str, devices))


def value_rows(values: Sequence[tuple[int, ValuePlan]], mesh: DeviceMesh, label: str) -> list[list[str]]:
    rows = []
    for i, v in values:
        shape = "-" if v.shape is None else "[" + ",".join(map(str, v.shape)) + "]"
        rows.append([str(i), v.name or f"{label} {i}", shape, v.dtype, str(v.spec) if v.spec is not None else "-",
                     partition_spec_text(v.spec, mesh.axis_names), byte_text(value_tile_bytes(v, mesh))])
    return rows


VALUE_HEADER = ("#", "name", "shape", "dtype", "sharding", "PartitionSpec", "per device")


def sharding_summary(plan: ShardingPlan) -> str:
    """The text of ``print(plan)`` for a :class:`ShardingPlan` (see the module docstring)."""
    mesh = plan.mesh
    lines = [f"ShardingPlan on mesh {mesh_text(mesh)}"]
    whole = sum(value_bytes(v) for v in plan.arguments)
    per_device = sum(value_tile_bytes(v, mesh) for v in plan.arguments)
    replicated = sum(1 for v in plan.arguments if v.spec is not None and v.spec.is_replicated)
    lines.append(f"arguments: {len(plan.arguments)}, {byte_text(whole)} in all, {byte_text(per_device)} per device "
                 f"({replicated} replicated)")
    lines += table(VALUE_HEADER, value_rows(list(enumerate(plan.arguments)), mesh, "argument"), right=(0, 6))
    tied = {r for _, r in plan.tied}
    free = [(i, v) for i, v in enumerate(plan.results) if i not in tied]
    lines.append(f"results: {len(plan.results)}, {byte_text(sum(value_tile_bytes(v, mesh) for v in plan.results))} "
                 f"per device" + (f"; {len(tied)} keep their argument's sharding (training state)" if tied else ""))
    if free:
        lines += table(VALUE_HEADER, value_rows(free, mesh, "result"), right=(0, 6))
    lines += communication_lines(plan)
    if plan.memory is not None:
        m = plan.memory
        lines.append(f"predicted memory per device: {byte_text(m.total)} (arguments {byte_text(m.arguments)} + "
                     f"outputs {byte_text(m.outputs)} - donated {byte_text(m.aliased)} + peak temporaries "
                     f"{byte_text(m.temporaries)}, at {m.at})")
    if plan.recomputed:
        lines.append(f"rematerialised: the backward pass computes the activations of layers "
                     f"{', '.join(map(str, plan.recomputed))} again")
    solver = plan.solver
    if solver:
        stats = [f"objective {plan.objective:.4g}", str(solver.get("solver", "")), str(solver.get("status", "")),
                 f"{solver.get('nodes', '?')} nodes", f"{solver.get('solve_seconds', 0.0):.2f} s to solve"]
        lines.append("ILP (Eq. 1): " + ", ".join(s for s in stats if s))
    return "\n".join(lines)


def communication_lines(plan: ShardingPlan) -> list[str]:
    totals = plan.communication
    where = f"over {plan.num_ops} ops" if plan.num_ops else "no per-op entries"
    if not totals:
        return [f"predicted communication: none ({where})"]
    names = plan.mesh.axis_names
    rows = [[t.kind, ",".join(names[a] for a in t.mesh_axes) or "-", str(t.count), byte_text(t.bytes),
             f"{t.cost:.4g}"] for t in totals]
    rows.append(["total", "", str(sum(t.count for t in totals)), byte_text(sum(t.bytes for t in totals)),
                 f"{sum(t.cost for t in totals):.4g}"])
    return [f"predicted communication ({where}; bytes per device; cost in alpha-beta units):",
            *table(("collective", "mesh axes", "count", "bytes", "cost"), rows, right=(2, 3, 4))]


def stage_memory(plan: PipelinePlan, stage: int) -> float:
    """Peak bytes per device of a stage under the plan's schedule: its parameters and optimizer
    state and the activations of the micro-batches in flight (Eq. 5: ``S - s`` under 1F1B for
    stage ``s`` of ``S``; every micro-batch under GPipe; one at inference; under interleaved
    1F1B its share of the chunks in flight on its mesh, ``clock_tables.in_flight``)."""
    s = plan.stages[stage]
    if plan.schedule == "interleaved-1f1b":
        meshes = len(plan.stages) // plan.virtual_stages
        chunks = in_flight(plan.schedule, len(plan.stages), plan.num_micro_batches, plan.virtual_stages)
        return s.param_bytes + chunks[stage % meshes] / plan.virtual_stages * s.activation_bytes
    in_flight_here = {"1f1b": min(len(plan.stages) - stage, plan.num_micro_batches),
                      "gpipe": plan.num_micro_batches, "inference": 1}[plan.schedule]
    return s.param_bytes + in_flight_here * s.activation_bytes


def pipeline_summary(plan: PipelinePlan) -> str:
    """The text of ``print(plan)`` for a :class:`PipelinePlan` (see the module docstring)."""
    hosts, per_host = plan.cluster
    lines = [f"PipelinePlan: {len(plan.stages)} stages on {hosts} x {per_host} devices (hosts x devices per host), "
             f"{plan.schedule}{f' ({plan.virtual_stages} per mesh)' if plan.virtual_stages > 1 else ''}, "
             f"{plan.num_micro_batches} micro-batches",
             f"predicted step latency (Eq. 2): {seconds_text(plan.latency)}; slowest stage {seconds_text(plan.t_max)}"
             + ("" if plan.step is None else
                f"; as the runtime runs it (transfers, accumulation and apply parts too): {seconds_text(plan.step)}")]
    rows = [[str(i), f"[{s.layers[0]},{s.layers[1]})", "x".join(map(str, s.submesh)),
             "x".join(map(str, s.logical_mesh)), devices_text(s.devices), seconds_text(s.latency),
             byte_text(s.param_bytes), byte_text(s.activation_bytes), byte_text(stage_memory(plan, i))]
            for i, s in enumerate(plan.stages)]
    lines += table(("stage", "layers", "submesh", "logical mesh", "devices", "latency", "params", "activations",
                    "peak memory"), rows, right=(0, 5, 6, 7, 8))
    lines.append(("  (latency: forward of one micro-batch; bytes per device; activations: none are kept for a backward "
                  "pass; peak memory: Eq. 5)") if plan.schedule == "inference" else
                 ("  (latency: forward + backward of one micro-batch; bytes per device; activations per micro-batch; "
                  "peak memory: Eq. 5)"))
    scalars = [f"{key} {value:.3g}" if isinstance(value, float) else f"{key} {value}"
               for key, value in plan.search.items() if isinstance(value, (int, float, str))]
    if scalars:
        lines.append("search: " + ", ".join(scalars))
    return "\n".join(lines)
