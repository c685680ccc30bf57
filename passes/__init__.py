"""The compiler's passes, grouped by phase; importing this package registers every one
of them by name. The pass infrastructure (``alpa_mlir.dialect.pass_registry``) is
re-exported here, so that ``from alpa_mlir.passes import run_pipeline`` finds every pass."""

from ..dialect.pass_registry import (  # noqa: E402  (after the passes, which register themselves)
    Diagnostics,
    Pass,
    Pipeline,
    PipelineError,
    build_pass_manager,
    parse_pipeline,
    register,
    registered,
    run_pipeline,
)
from . import pipelines  # noqa: F401
from .export import export_sdy, strip_sharding  # noqa: F401
from .imports import (  # noqa: F401
    capture_while_invariants,
    fold_broadcasts,
    import_sharding,
    lower_pipeline_markers,
    verify_sharding,
)
from .inter_op import layer_construction, stage_construction  # noqa: F401
from .intra_op import auto_sharding  # noqa: F401
from .reshard import cross_mesh_resharding  # noqa: F401
from .schedule import accumulate_gradients, mark_apply_gradients, pipeline_schedule, rematerialize  # noqa: F401

__all__ = [
    "Diagnostics",
    "Pass",
    "Pipeline",
    "PipelineError",
    "build_pass_manager",
    "parse_pipeline",
    "register",
    "registered",
    "run_pipeline",
]
