"""Names the API, the passes, the lowering and the runtime share: the ``alpa`` dialect's
ops, the ``alpa.*`` attributes the passes write on ops, functions and modules, the
pipeline markers the API writes, and the phases of a training step. One owner for
each, so that renaming one changes one line.
"""

from __future__ import annotations

from typing import Literal

# The ops of the alpa dialect (``alpa_ops.py`` verifies and builds them): a cross-mesh
# transfer's sends, recvs and local all-gathers, and the assemble that rebuilds the value.
DIALECT_PREFIX = "alpa."
SEND_OP = "alpa.send"
RECV_OP = "alpa.recv"
ALL_GATHER_OP = "alpa.all_gather"
ASSEMBLE_OP = "alpa.assemble"
TRANSFER_OPS = (SEND_OP, RECV_OP, ALL_GATHER_OP, ASSEMBLE_OP)

# The pipeline markers: ``alpa_mlir.mark_pipeline_boundary`` and ``alpa_mlir.grad`` write
# them as custom calls (api/markers.py), alpa-lower-pipeline-markers reads them.
MARKER_TARGET = "alpa.pipeline_marker"
MARKER_KIND = "alpa.marker"
# A user boundary in the forward pass (``mark_pipeline_boundary``).
BOUNDARY = "boundary"
# The transpose of a boundary's tangent: the same boundary, met by the backward pass.
BACKWARD_BOUNDARY = "backward_boundary"
# A boundary's tangent in forward-mode AD (``jax.jvp``); it sits beside its primal marker.
TANGENT_BOUNDARY = "tangent_boundary"
# The gradients of ``alpa_mlir.grad``: what reads them is the apply-gradient part.
GRAD = "grad"
MARKER_KINDS = (BOUNDARY, BACKWARD_BOUNDARY, TANGENT_BOUNDARY, GRAD)
# Kinds whose last operand is a link to the marker they derive from.
LINKED_KINDS = (BACKWARD_BOUNDARY, TANGENT_BOUNDARY)

# alpa-lower-pipeline-markers: the forward segment between two pipeline boundaries an
# op belongs to, and the ops that apply the gradients.
SEGMENT_ATTR = "alpa.segment"
APPLY_GRAD_ATTR = "alpa.apply_grad"
# alpa-layer-construction: an op's layer and its phase.
LAYER_ATTR = "alpa.layer"
PHASE_ATTR = "alpa.phase"
# alpa-rematerialize: an op computed again in the backward pass (a clone of a forward op).
RECOMPUTE_ATTR = "alpa.recompute"
# alpa-stage-construction: a stage function's stage number, and on the ops of an
# extracted stage their position (to find them after planning).
STAGE_ATTR = "alpa.stage"
COPY_ATTR = "alpa.copy"
# alpa-pipeline-schedule: the schedule and micro-batch count on @main, and the transfer
# number on the cross-mesh ops.
SCHEDULE_ATTR = "alpa.schedule"
NUM_MICRO_BATCHES_ATTR = "alpa.num_micro_batches"
ACCUMULATE_ATTR = "alpa.accumulate"  # "sum" where the micro-batches' values add up (absent: their mean)
TRANSFER_ATTR = "alpa.transfer"
# alpa-auto-sharding{partial-sums=result} on the module: a 16-bit dot split over its
# contraction sums partials of its own type, as planned (alpa-widen-split-contractions
# leaves the module as it is); absent, f32 partials.
PARTIAL_SUMS_ATTR = "alpa.partial_sums"
# Outlining (passes/inter_op/outline.py): the group of each top-level op while it is outlined.
OUTLINE_GROUP_ATTR = "alpa.outline_group"

# How a micro-batched step combines its micro-batches' accumulated values: their mean (a
# loss averaged over examples) or their sum (a loss summed over examples).
Accumulation = Literal["mean", "sum"]
ACCUMULATIONS: tuple[Accumulation, ...] = ("mean", "sum")


def check_accumulation(value: str) -> None:
    """``ValueError`` naming the option ``accumulate`` unless ``value`` is an :data:`Accumulation`."""
    if value not in ACCUMULATIONS:
        raise ValueError(f"option 'accumulate' must be {' or '.join(ACCUMULATIONS)}; got {value!r}")

# The phases of a training step, in order.
Phase = Literal["forward", "backward", "apply"]
FORWARD: Phase = "forward"
BACKWARD: Phase = "backward"
APPLY: Phase = "apply"
