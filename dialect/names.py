"""Names the passes, the lowering and the runtime share: the ``alpa.*`` attributes the
passes write on ops, functions and modules, and the phases of a training step. One
owner for each, so that renaming one changes one line.
"""

from __future__ import annotations

from typing import Literal

# alpa-lower-pipeline-markers: the forward segment between two pipeline boundaries an
# op belongs to, and the ops that apply the gradients.
SEGMENT_ATTR = "alpa.segment"
APPLY_GRAD_ATTR = "alpa.apply_grad"
# alpa-layer-construction: an op's layer and its phase.
LAYER_ATTR = "alpa.layer"
PHASE_ATTR = "alpa.phase"
# alpa-stage-construction: a stage function's stage number, and on the ops of an
# extracted stage their position (to find them after planning).
STAGE_ATTR = "alpa.stage"
COPY_ATTR = "alpa.copy"
# alpa-pipeline-schedule: the schedule and micro-batch count on @main, and the transfer
# number on the cross-mesh ops.
SCHEDULE_ATTR = "alpa.schedule"
NUM_MICRO_BATCHES_ATTR = "alpa.num_micro_batches"
TRANSFER_ATTR = "alpa.transfer"

# The phases of a training step, in order.
Phase = Literal["forward", "backward", "apply"]
FORWARD: Phase = "forward"
BACKWARD: Phase = "backward"
APPLY: Phase = "apply"
