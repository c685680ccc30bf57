"""Named pipelines: the orders in which passes are meant to run, and why."""

from __future__ import annotations

from dataclasses import dataclass

from ..dialect.annotations import MeshOptions
from ..dialect.pass_registry import Pass, Pipeline, register
from .export.export_sdy import ExportSdyPass
from .imports.capture_while_invariants import CaptureWhileInvariantsPass
from .imports.fold_broadcasts import FoldBroadcastsPass
from .imports.import_sharding import ImportShardingPass
from .imports.lower_pipeline_markers import LowerPipelineMarkersPass
from .imports.verify_sharding import VerifyShardingPass


@register
@dataclass(frozen=True)
class ImportPipeline(MeshOptions, Pipeline):
    """Bring a module from ``jax.jit(f).lower(...)`` (``alpa_mlir.markers.lower`` to keep the
    pipeline markers) into the form every alpa pass expects.

    ``inline`` first, because JAX emits nested ``func.call``s and the passes plan one
    function; ``symbol-dce`` drops the callees left behind; pipeline markers
    (``mark_pipeline_boundary``, ``alpa_mlir.grad``) become ``alpa.segment`` and
    ``alpa.apply_grad`` attributes, since XLA cannot compile them; then the user's shardings
    are imported into canonical ``mhlo.sharding`` form; chained broadcasts (a bias's
    ``[n] -> [1, n] -> [B, n]``) fold into one, after the import so that a broadcast
    the user pinned keeps its pin; loop-invariant ``while``
    operands become implicit captures, as XLA's conversion will make them (so the
    shardings the planner writes fit the loops XLA sees); last, every annotation is
    verified, so a bad one is reported before any planning starts.
    """

    name = "alpa-import-pipeline"

    def expand(self) -> list[Pass | str]:
        mesh = {"mesh_shape": self.mesh_shape, "mesh_axes": self.mesh_axes}
        return ["inline", "symbol-dce", LowerPipelineMarkersPass(), ImportShardingPass(**mesh),
                FoldBroadcastsPass(), CaptureWhileInvariantsPass(), VerifyShardingPass(**mesh)]


@register
@dataclass(frozen=True)
class SdyRoundTripPipeline(MeshOptions, Pipeline):
    """Import the user's shardings, verify them, and export them as Shardy shardings.

    The shortest useful end-to-end pipeline: what the bundled example runs.
    """

    name = "alpa-sdy-roundtrip-pipeline"

    def expand(self) -> list[Pass | str]:
        mesh = {"mesh_shape": self.mesh_shape, "mesh_axes": self.mesh_axes}
        return [*ImportPipeline(**mesh).expand(), ExportSdyPass(**mesh)]
