"""The predicted step of a compiled pipeline: its instruction order priced by the device profile.

Eq. 2 prices the stages' forward and backward parts, and on meshes that run at once.
:func:`predicted_step` prices what the runtime actually runs (``plans/step_time.py``
walks it):

- a forward or backward run of stage ``i``: its share of the plan's ``t_i`` (the
  stage's forward + backward latency, priced at planning time, its two launches
  included);
- an apply part: one program launch, and the bytes per device of what it writes at the
  profile's memory bandwidth (its updates are element-wise);
- an accumulation: one launch, and the bytes per device of the values it adds up;
- and for each of those program calls, the profile's ``call_buffers`` per argument and
  result array (a GPT block's backward takes and gives over a hundred);
- an explicit cross-mesh transfer: the profile's ``transfer_launch`` per program (the
  permute and each local all-gather), plus ``alpha`` per ``ppermute`` round and
  ``beta`` per byte that crosses, from the profile's fit of the host's collectives; or,
  one that copies blocks between devices (``CrossMeshTransfer.direct``: in one process),
  the profile's price of a copy per copy, a one-device launch per block cut or assembled,
  and the bytes written on the destination devices at the memory bandwidth;
- a move, a recv, a free: nothing (a move's value is placed by its reader's program).

On GPUs the meshes run at once and meet at transfers, and so do meshes driven by
different processes on cores of their own (``launch --cpus-per-process``): each has a
clock (``PipeshardExecutable.clocks``). The meshes of one CPU process share its cores,
whether they walk one order or run in threads of their own: one program already keeps
them all busy (XLA:CPU runs its partitions, and their matmuls' threads, in pools over all
the cores), so their prices add up. Measured on 2 cores, two meshes of one device each
took as long in threads as one after the other (docs/pipeshard.md). A transfer between
processes (gloo) is priced by the same fit of the host's collectives as one inside a
process: the profile has no measurement across processes, and underprices it
(``benchmarks/pipeshard_processes.py`` shows by how much).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..dialect.names import BACKWARD, FORWARD
from ..dialect.schedule_ops import Accumulate, Apply, Instruction, Move, Run, Send
from ..plans.device_profile import DeviceProfile
from ..plans.pipeline_plan import FORWARD_SHARE, PipelinePlan
from ..plans.step_time import step_seconds

if TYPE_CHECKING:
    from .pipeshard import PipeshardExecutable, Placement


def predicted_step(executable: PipeshardExecutable, plan: PipelinePlan, profile: DeviceProfile) -> float:
    """Seconds of one step of ``executable``, whose stages ``plan`` describes, on devices like
    ``profile``'s."""
    flow = executable.flow
    alpha, beta = profile.intra_host_link() if profile.collectives else (0.0, 0.0)
    share = {FORWARD: FORWARD_SHARE, BACKWARD: 1 - FORWARD_SHARE}

    def devices(mesh: int) -> int:
        return len(executable.meshes[mesh].device_ids)

    def arrays(mesh: int, count: int) -> float:
        return count * profile.buffer_seconds(devices(mesh))

    def part_arrays(mesh: int, callee: str) -> float:  # a stage or apply part's arguments and results
        return arrays(mesh, sum(map(len, executable.declared[callee])))

    accumulated: set[tuple[str, ...]] = set()  # the first accumulation of its values has no sums to read

    def written(placements: Sequence[Placement], mesh: int) -> float:  # element-wise: bytes per device
        nbytes = sum(math.prod(p.sharding.shard_shape(p.shape)) * p.dtype.itemsize for p in placements)
        return profile.elementwise_seconds(nbytes * devices(mesh), devices(mesh))

    def seconds(mesh: int, instruction: Instruction) -> float:
        match instruction:
            case Run(callee):
                call = flow.calls[callee]
                return plan.stages[call.stage].latency * share[call.kind] + part_arrays(mesh, callee)
            case Apply(callee):
                return profile.launch_seconds(devices(mesh)) + written(executable.declared[callee][1], mesh) + \
                    part_arrays(mesh, callee)
            case Accumulate(values):
                sums = 2 if values in accumulated else 1  # read and written, or only written
                accumulated.add(values)
                return profile.launch_seconds(devices(mesh)) + arrays(mesh, (1 + sums) * len(values)) + \
                    written([executable.result_placement(name) for name in values], mesh)
            case Send(key) if not isinstance(key, Move):
                transfer = executable.transfers[key]
                union = len(transfer.src_devices) + len(transfer.dst_devices)
                if transfer.direct:  # blocks copied between devices, some cut or assembled on one
                    copies, launches, nbytes = transfer.local_work
                    return copies * profile.copy_seconds(union) + launches * profile.launch_seconds(1) + \
                        profile.elementwise_seconds(nbytes, len(transfer.dst_devices))
                programs = 1 + len(transfer.stages)
                return programs * profile.transfer_launch_seconds(union) + transfer.num_rounds * alpha + \
                    transfer.bytes_moved * beta
        return 0.0

    def clocks(mesh: int, instruction: Instruction) -> tuple[int, ...]:
        if isinstance(instruction, Send):
            transfer = flow.transfers[instruction.transfer]
            return executable.clocks[transfer.src_mesh], executable.clocks[transfer.dst_mesh]
        return (executable.clocks[mesh],)

    return step_seconds(executable.order, seconds, clocks)
