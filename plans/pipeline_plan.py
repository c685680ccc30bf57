"""The stage plan ``alpa-stage-construction`` reports: JSON that loads back, and a picture of it.

The picture has the paper's two views: the stages on the cluster's device grid (Sec. 5.2's
submeshes, placed as Appendix A covers them) and the predicted pipeline timeline of one
step (Fig. 5): every stage runs the forward and the backward of each micro-batch. A
stage's latency ``t_i`` is forward plus backward; the timeline draws the forward as a
third of it and the backward as two thirds (a backward computes two gradients per
forward matmul), each stage running its tasks in the order of the plan's schedule
(``gpipe``, ``1f1b``, ``interleaved-1f1b`` or ``inference``: ``clock_tables.mesh_orders``)
as soon as their inputs are ready and their mesh is free (``virtual_stages`` stages per
mesh under ``interleaved-1f1b``, stage ``k`` on mesh ``k mod S``). The schedule is the one
the step runs under (the API sets it; a report of ``alpa-opt`` says ``1f1b``, the schedule
whose memory Eq. 5 checks).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import ClassVar

from .clock_tables import SCHEDULES, ScheduleName, dependencies, mesh_orders, stage_meshes
from .drawing import pyplot
from .json_files import VersionedFile
from .plan_summary import pipeline_summary

FORWARD_SHARE = 1 / 3  # of a stage's forward + backward latency (drawing only)


class PipelinePlanError(ValueError):
    """A plan file that cannot be read; the message says what is wrong."""


@dataclass(frozen=True)
class StagePlacement:
    """One stage: its layers ``[start, end)``, its submesh and devices, its logical mesh, its costs."""

    layers: tuple[int, int]
    submesh: tuple[int, int]
    devices: tuple[int, ...]
    logical_mesh: tuple[int, int]
    latency: float  # t_intra, seconds (forward + backward of one micro-batch; forward only at inference)
    param_bytes: float  # per device
    activation_bytes: float  # per device and micro-batch


@dataclass(frozen=True)
class PipelinePlan(VersionedFile):
    cluster: tuple[int, int]
    num_micro_batches: int
    latency: float  # Eq. 2
    t_max: float
    stages: tuple[StagePlacement, ...]
    search: dict  # intra-op plans, candidates, seconds
    schedule: ScheduleName = "1f1b"  # the pipeline schedule the step runs under
    virtual_stages: int = 1  # stages per mesh (interleaved-1f1b)
    # The step as the compiled pipeline's runtime runs it (runtime/step_model.py): every
    # instruction priced, transfers and apply parts included; None until compiled.
    step: float | None = None

    VERSION: ClassVar[int] = 1
    WHAT: ClassVar[str] = "a pipeline plan"
    ERROR: ClassVar[type[ValueError]] = PipelinePlanError

    @classmethod
    def _from_data(cls, data: dict, where: str) -> PipelinePlan:
        try:
            stages = tuple(StagePlacement(tuple(s["layers"]), tuple(s["submesh"]), tuple(s["devices"]),
                                          tuple(s["logical_mesh"]), float(s["latency"]), float(s["param_bytes"]),
                                          float(s["activation_bytes"])) for s in data["stages"])
            schedule = data.get("schedule", "1f1b")
            if schedule not in SCHEDULES:
                raise ValueError(f"schedule {schedule!r} is none of {', '.join(SCHEDULES)}")
            virtual = int(data.get("virtual_stages", 1))
            stage_meshes(len(stages), virtual)  # a ValueError unless the stages fill the meshes evenly
            return cls(tuple(data["cluster"]), int(data["num_micro_batches"]), float(data["latency"]),
                       float(data["t_max"]), stages, dict(data["search"]), schedule, virtual,
                       None if data.get("step") is None else float(data["step"]))
        except (KeyError, TypeError, ValueError) as error:
            raise PipelinePlanError(f"{where}: malformed pipeline plan ({error!r})") from None

    def summary(self) -> str:
        """The stages (layers, submesh, logical mesh, devices, latency, memory per device) and the
        predicted step, as text."""
        return pipeline_summary(self)

    def __str__(self) -> str:
        return self.summary()

    def timeline(self) -> list[tuple[int, int, str, float, float]]:
        """(stage, micro-batch, "forward" | "backward", start, end) of one step under the plan's
        schedule: each stage takes its tasks in the schedule's order, each when its inputs are ready."""
        count = len(self.stages)
        share = 1.0 if self.schedule == "inference" else FORWARD_SHARE  # inference: forwards only
        duration = {"forward": [s.latency * share for s in self.stages]}
        duration["backward"] = [s.latency - f for s, f in zip(self.stages, duration["forward"])]
        orders = mesh_orders(self.schedule, count // self.virtual_stages, self.num_micro_batches,
                             self.virtual_stages)
        end: dict = {}
        free = [0.0] * len(orders)  # when each mesh is done with its previous task
        position = [0] * len(orders)
        events = []
        while any(position[k] < len(order) for k, order in enumerate(orders)):
            before = sum(position)
            for k, order in enumerate(orders):
                while position[k] < len(order) and all(d in end for d in dependencies(order[position[k]], count)):
                    task = order[position[k]]
                    start = max([free[k], *(end[d] for d in dependencies(task, count))])
                    end[task] = free[k] = start + duration[task.kind][task.stage]
                    events.append((task.stage, task.micro_batch, task.kind, start, end[task]))
                    position[k] += 1
            if sum(position) == before:  # the schedules' orders never get here; a wrong order would
                raise ValueError(f"the {self.schedule} orders wait on each other")
        return sorted(events, key=lambda e: (e[3], e[0]))

    def draw(self, path: str | os.PathLike) -> None:
        """Write a PNG: the stages on the device grid, and the predicted timeline (needs matplotlib)."""
        plt = pyplot(PipelinePlanError, "a pipeline plan")
        hosts, per_host = self.cluster
        colours = plt.get_cmap("tab10")
        figure, (grid, timeline) = plt.subplots(1, 2, figsize=(12, 1.2 + 0.5 * max(hosts, len(self.stages))),
                                                gridspec_kw={"width_ratios": [1, 3]})
        meshes = len(self.stages) // self.virtual_stages
        per_mesh = f" ({self.virtual_stages} stages per mesh)" if self.virtual_stages > 1 else ""
        for number, stage in enumerate(self.stages[:meshes]):  # a mesh's stages: number, number + meshes, ...
            label = "S" + ",".join(str(k) for k in range(number, len(self.stages), meshes))
            for device in stage.devices:
                host, slot = divmod(device, per_host)
                grid.add_patch(plt.Rectangle((slot, hosts - 1 - host), 1, 1, color=colours(number % 10)))
                grid.text(slot + 0.5, hosts - 0.5 - host, label, ha="center", va="center", fontsize=8)
        grid.set(xlim=(0, per_host), ylim=(0, hosts), xticks=[], yticks=[], aspect="equal",
                 title=f"{hosts} x {per_host} devices")
        for s, b, phase, start, stop in self.timeline():
            timeline.barh(s, stop - start, left=start, color=colours(s % meshes % 10),
                          alpha=0.5 if phase == "forward" else 1, edgecolor="black", linewidth=0.3)
            if stop - start > 0:
                timeline.text((start + stop) / 2, s, str(b), ha="center", va="center", fontsize=6)
        timeline.set(yticks=range(len(self.stages)), ylim=(len(self.stages) - 0.5, -0.5), xlabel="seconds",
                     yticklabels=[f"S{i} [{st.layers[0]},{st.layers[1]})" for i, st in enumerate(self.stages)],
                     title=f"{self.schedule}{per_mesh}, {self.num_micro_batches} micro-batches: forward (light), "
                           f"backward (dark); Eq. 2 latency {self.latency:.3g} s")
        figure.tight_layout()
        figure.savefig(path, dpi=120)
        plt.close(figure)
