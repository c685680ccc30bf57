"""``PipeshardParallel``'s options, and its layer and stage options under Alpa's names (Sec. 5.2)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import jax

from .dialect.names import Accumulation
from .passes.inter_op.layer_clustering import DEFAULT_DELTA
from .passes.inter_op.layer_construction import LayerConstructionPass
from .passes.inter_op.stage_construction import StageConstructionPass
from .passes.reshard.cross_mesh_resharding import CrossMeshReshardingPass
from .passes.schedule.pipeline_schedule import PipelineSchedulePass
from .passes.schedule.rematerialize import RematerializePass
from .plans.pipeline_plan import PipelinePlan


@dataclass(frozen=True)
class AutoLayerOption:
    """Cluster the forward pass into ``layer_num`` layers (Sec. 5.2's DP with tolerance ``delta``);
    ``remat_layer``: see :class:`ManualLayerOption`.

    ``delta=None``: :data:`DEFAULT_DELTA` (0.6, Alpa's), or where no clustering keeps to it
    (a model of few, unequal ops), the least delta that admits one, with a warning; a delta
    given is kept to, and an error says which would do."""

    layer_num: int
    delta: float | None = None
    remat_layer: bool = False

    def pass_options(self) -> dict[str, Any]:
        """The options of ``alpa-layer-construction`` that do this."""
        return {"layers": self.layer_num, "delta": DEFAULT_DELTA if self.delta is None else self.delta,
                "relax_delta": self.delta is None}


@dataclass(frozen=True)
class ManualLayerOption:
    """One layer per segment between ``mark_pipeline_boundary`` calls.

    ``remat_layer`` (here and in :class:`AutoLayerOption`, Alpa's option): the backward
    pass computes every layer's activations again instead of keeping them
    (``alpa-rematerialize``)."""

    remat_layer: bool = False

    def pass_options(self) -> dict[str, Any]:
        """The options of ``alpa-layer-construction`` that do this."""
        return {}


LayerOption = AutoLayerOption | ManualLayerOption


@dataclass(frozen=True)
class AutoStageOption:
    """Stages and submeshes from the DP of Eq. 3-4 (Algorithm 1); see ``alpa-stage-construction``.
    ``device_memory``: bytes per device for Eq. 5; ``None`` (the default): each device's
    memory less ``methods.MEMORY_RESERVE`` where the backend reports it, unlimited where it
    does not (CPU); ``0``: unlimited."""

    submesh_space: Literal["power-of-two", "all"] = "power-of-two"
    logical_mesh_space: Literal["all", "physical"] = "all"
    cost_model: Literal["analytic", "profile"] = "analytic"
    device_memory: float | None = None
    epsilon: float = 0.0
    jobs: int = 1

    def pass_options(self, device_memory: float) -> dict[str, Any]:
        """The options of ``alpa-stage-construction`` that do this; ``device_memory``: the
        devices' own, taken where this option's is ``None``."""
        return {"submesh_space": self.submesh_space, "logical_mesh_space": self.logical_mesh_space,
                "cost_model": self.cost_model, "epsilon": self.epsilon, "jobs": self.jobs,
                "device_memory": device_memory if self.device_memory is None else self.device_memory}


@dataclass(frozen=True)
class UniformStageOption:
    """Stages of equally many layers (Sec. 8.3's equal-layer baseline); ``num_stages=0``: the DP picks."""

    num_stages: int = 0

    def pass_options(self, device_memory: float) -> dict[str, Any]:
        """The options of ``alpa-stage-construction`` that do this (Eq. 5's memory check is
        ``AutoStageOption``'s: ``device_memory`` is not used)."""
        return {"stage_mode": "equal-layer", "num_stages": self.num_stages}


@dataclass(frozen=True)
class ManualStageOption:
    """The user's stages: layers per stage and each stage's submesh as (hosts, devices per host)."""

    stage_layers: tuple[int, ...]
    submeshes: tuple[tuple[int, int], ...]

    def pass_options(self, device_memory: float) -> dict[str, Any]:
        """The options of ``alpa-stage-construction`` that do this (the user's stages are
        not checked against memory: ``device_memory`` is not used)."""
        return {"stage_mode": "manual", "stage_layers": tuple(self.stage_layers),
                "stage_submeshes": tuple(n for pair in self.submeshes for n in pair)}


StageOption = AutoStageOption | UniformStageOption | ManualStageOption


@dataclass(frozen=True)
class PipeshardParallel:
    """Pipeline the step over submeshes, each stage auto-sharded on its own mesh (Sec. 5-6).

    Args:
      num_micro_batches: B; the batch arguments' leading dimension must divide by it.
      layer_option: how the forward pass is cut into layers.
      stage_option: how layers become stages on submeshes.
      pipeline_schedule: ``1f1b`` (at most S - i micro-batches in flight on stage i),
        ``gpipe`` (all forwards, then all backwards), ``interleaved-1f1b`` (v stages per mesh,
        stage k on mesh k mod S: a bubble 1/v as long, more activations in flight), or
        ``inference``: a forward-only step (no gradients; every op a forward op, clustered
        into layers), each micro-batch's outputs joined (per-example ones) or combined as
        under training; the stage DP then holds one micro-batch in flight per stage.
      virtual_stages: v under ``interleaved-1f1b``: the stage DP (``AutoStageOption``) gives each
        of S meshes a multiple of v layers and minimises interleaved 1F1B's Eq. 2 over S that
        divide B; or ``UniformStageOption(num_stages=S v)``, or a ``ManualStageOption`` of S v
        layer counts on S submeshes; B a multiple of S.
      cluster_shape: (hosts, devices per host). When omitted: one host per process that
        owns some of the devices (``(1, len(devices))`` in one process; with
        ``jax.distributed``, (processes, devices per process)).
      devices: the JAX devices, host-major (``jax.devices()``).
      batch_argnums: positional arguments whose leaves have the batch as leading dimension.
      local_all_gather: Sec. 6's rewrite of cross-mesh transfers to replicated destinations.
      instruction_timeout: seconds one instruction of a step (a stage run, a transfer)
        may take before a watchdog prints where the step was and ends the process with
        exit code 124, so that a dead or stuck peer cannot hang the cluster. ``None``: 600
        s with several processes, off in one; ``0``: off. The first step's first transfers
        also wait for the other processes to finish compiling.
      device_profile: what the stage costs (and the plan's predicted latencies) assume of
        the devices: ``local`` (this machine's, measured on first use and cached; see
        ``runtime.device_profile``), the path of a saved profile, or ``""`` for
        ``alpa-stage-construction``'s constant FLOP/s and bandwidths.
      concurrent_meshes: on CPU, run each mesh's instructions in a thread of its own, so
        that the meshes compute at once and meet at transfers (``runtime/mesh_threads.py``);
        ``None``: on with one process, off with several (each process drives its own
        meshes); on GPUs the meshes run at once either way.
      progress: while a signature is compiled and first run, write a line per phase
        (lowering, the stage search's phases, compiling, the first step) on stderr:
        the ``alpa_mlir`` loggers' INFO lines, unless the application configured
        logging (then they go where it says).
    """

    num_micro_batches: int = 1
    layer_option: AutoLayerOption | ManualLayerOption = field(default_factory=ManualLayerOption)
    stage_option: StageOption = field(default_factory=AutoStageOption)
    pipeline_schedule: Literal["1f1b", "gpipe", "interleaved-1f1b", "inference"] = "1f1b"
    virtual_stages: int = 1
    cluster_shape: tuple[int, int] | None = None
    devices: tuple[Any, ...] | None = None
    batch_argnums: tuple[int, ...] = (1,)
    local_all_gather: bool = True
    instruction_timeout: float | None = None
    device_profile: str = "local"
    concurrent_meshes: bool | None = None
    progress: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.num_micro_batches, int) or self.num_micro_batches < 1:
            raise ValueError(f"PipeshardParallel option 'num_micro_batches' must be a positive integer; got "
                             f"{self.num_micro_batches!r}")
        if not isinstance(self.layer_option, (AutoLayerOption, ManualLayerOption)):
            raise ValueError("PipeshardParallel option 'layer_option' must be AutoLayerOption(layer_num=...) or "
                             f"ManualLayerOption(); got {self.layer_option!r}")
        if not isinstance(self.stage_option, (AutoStageOption, UniformStageOption, ManualStageOption)):
            raise ValueError("PipeshardParallel option 'stage_option' must be AutoStageOption, UniformStageOption "
                             f"or ManualStageOption; got {self.stage_option!r}")
        if self.pipeline_schedule not in ("1f1b", "gpipe", "interleaved-1f1b", "inference"):
            raise ValueError(f"PipeshardParallel option 'pipeline_schedule' must be '1f1b', 'gpipe', "
                             f"'interleaved-1f1b' or 'inference'; got {self.pipeline_schedule!r}")
        if self.pipeline_schedule == "inference" and self.layer_option.remat_layer:
            raise ValueError("PipeshardParallel option 'layer_option': remat_layer recomputes activations in the "
                             "backward pass, which pipeline_schedule='inference' has none of")
        self._check_virtual_stages()
        timeout = self.instruction_timeout
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout < 0):
            raise ValueError(f"PipeshardParallel option 'instruction_timeout' must be a number of seconds >= 0 "
                             f"(0: no watchdog) or None; got {timeout!r}")
        if not (self.concurrent_meshes is None or isinstance(self.concurrent_meshes, bool)):
            raise ValueError(f"PipeshardParallel option 'concurrent_meshes' must be True, False or None; got "
                             f"{self.concurrent_meshes!r}")
        if self.devices is not None:
            object.__setattr__(self, "devices", tuple(self.devices))
        batch = (self.batch_argnums,) if isinstance(self.batch_argnums, int) else tuple(self.batch_argnums)
        object.__setattr__(self, "batch_argnums", batch)
        self.passes(*(self.cluster_shape or (1, 1)))  # the passes check their options now, not at the first call

    def _check_virtual_stages(self) -> None:
        v, stage = self.virtual_stages, self.stage_option
        if not isinstance(v, int) or v < 1 or (v > 1 and self.pipeline_schedule != "interleaved-1f1b"):
            raise ValueError(f"PipeshardParallel option 'virtual_stages' must be a positive integer, and 1 unless "
                             f"pipeline_schedule='interleaved-1f1b'; got {v!r} with {self.pipeline_schedule!r}")
        meshes = (len(stage.submeshes) if isinstance(stage, ManualStageOption) else
                  stage.num_stages // v if isinstance(stage, UniformStageOption) else 0)
        if self.pipeline_schedule == "interleaved-1f1b" and meshes and self.num_micro_batches % meshes:
            raise ValueError(f"PipeshardParallel option 'num_micro_batches' ({self.num_micro_batches}) must be a "
                             f"multiple of the {meshes} meshes under interleaved-1f1b, which takes the "
                             "micro-batches in groups of one per mesh")

    def device_list(self) -> tuple[Any, ...]:
        return self.devices if self.devices is not None else tuple(jax.devices())

    def cluster(self) -> tuple[int, int]:
        """The physical cluster the stages are placed on: (hosts, devices per host). Its device
        ``i`` (host-major) is ``device_list()[i]``."""
        devices = self.device_list()
        hosts = len({d.process_index for d in devices})
        shape = tuple(self.cluster_shape or (hosts, len(devices) // hosts))
        if len(shape) != 2 or min(shape) < 1 or math.prod(shape) != len(devices):
            raise ValueError(f"PipeshardParallel option 'cluster_shape' {list(shape)} must be (hosts, devices per "
                             f"host) covering the {len(devices)} devices")
        stage = self.stage_option
        asked = sum(h * d for h, d in stage.submeshes) if isinstance(stage, ManualStageOption) else len(devices)
        if asked != len(devices):
            raise ValueError(f"PipeshardParallel: ManualStageOption's submeshes {[tuple(m) for m in stage.submeshes]} "
                             f"hold {asked} devices, but the cluster "
                             f"({shape[0]}x{shape[1]}) has {len(devices)}; the stages' submeshes must use every "
                             "device once")
        return shape

    def passes(self, hosts: int, per_host: int, on_plan: Callable[[PipelinePlan], None] | None = None,
               state: tuple[tuple[int, int], ...] = (), accumulate: Accumulation = "mean",
               device_memory: float = 0.0) -> list:
        """The compiler's passes after the import pipeline, for a cluster of hosts x per_host;
        ``on_plan`` receives the stage plan; ``state``: the step's (flat argument, flat result)
        pairs of training state (``signature.training_state``); ``accumulate``: how the micro-
        batches combine (``accumulation``); ``device_memory``: see ``AutoStageOption``."""
        layer = self.layer_option
        layers = [LayerConstructionPass(**layer.pass_options(), forward_only=self.pipeline_schedule == "inference"),
                  *([RematerializePass()] if layer.remat_layer else [])]
        stage = self.stage_option
        options: dict[str, Any] = {"cluster_shape": (hosts, per_host), "num_micro_batches": self.num_micro_batches,
                                   "device_profile": self.device_profile, "state": state, "on_plan": on_plan}
        options.update(stage.pass_options(device_memory), virtual_stages=self.virtual_stages)
        try:
            return [*layers, StageConstructionPass(**options),
                    CrossMeshReshardingPass(local_all_gather=self.local_all_gather),
                    PipelineSchedulePass(schedule=self.pipeline_schedule, num_micro_batches=self.num_micro_batches,
                                         accumulate=accumulate, virtual_stages=self.virtual_stages)]
        except ValueError as error:
            raise ValueError(f"PipeshardParallel: {error}") from None
