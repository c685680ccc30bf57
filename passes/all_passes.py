"""Imports every pass module so that each registers itself (see ``registry.register``)."""

from . import pipelines  # noqa: F401
from .export import (  # noqa: F401
    clamp_dynamic_slice_starts,
    export_sdy,
    reshape_degenerate_transposes,
    squeeze_broadcast_operands,
    strip_sharding,
)
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
from .schedule import accumulate_gradients, pipeline_schedule  # noqa: F401
