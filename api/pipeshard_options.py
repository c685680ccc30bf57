"""The layer and stage options of ``PipeshardParallel``, under Alpa's names (Sec. 5.2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .passes.inter_op.layer_clustering import DEFAULT_DELTA


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


@dataclass(frozen=True)
class ManualStageOption:
    """The user's stages: layers per stage and each stage's submesh as (hosts, devices per host)."""

    stage_layers: tuple[int, ...]
    submeshes: tuple[tuple[int, int], ...]


StageOption = AutoStageOption | UniformStageOption | ManualStageOption
