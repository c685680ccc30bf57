"""A pipeline step's time as its runtime runs it: the instruction order, each instruction priced.

Eq. 2 (``T* = sum t_i + (B - 1) max t_j``) prices the stages' forward and backward
parts only, and assumes every mesh runs at once. A step also moves values between
meshes, adds up gradients and runs the apply parts, and a runtime that runs one
program at a time (the CPU runtime, ``runtime/pipeshard.py``) runs no two meshes at
once. :func:`step_seconds` walks the real order (``PipeshardExecutable.order``) with
a price per instruction:

Each instruction keeps some clocks busy (``clocks``): those of the hardware it runs
on. It starts when every clock it involves is free (a transfer involves both of its
meshes': it is a rendezvous, as the order's streams are) and keeps them busy for its
price; the step ends when the last clock is free. Meshes on hardware of their own (GPUs;
on CPU, processes on cores of their own) each have a clock, and meet at transfers: with
stages that all take as long, and transfers, accumulations and apply parts priced 0, a
1F1B or GPipe order takes Eq. 2's ``T*`` (test_step_time.py). Meshes that share one clock
(the virtual devices of one CPU process) run one after another: the prices add up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..dialect.schedule_ops import Instruction


def step_seconds(order: Sequence[tuple[int, Instruction]], seconds: Callable[[int, Instruction], float],
                 clocks: Callable[[int, Instruction], tuple[int, ...]]) -> float:
    """The step's seconds. ``order``: (mesh, instruction) in the runtime's order;
    ``seconds(mesh, instruction)``: its price; ``clocks(mesh, instruction)``: the clocks it
    keeps busy (its mesh's, or those of both ends of a transfer)."""
    free: dict[int, float] = {}
    for k, instruction in order:
        busy = clocks(k, instruction)
        end = max(free.get(m, 0.0) for m in busy) + seconds(k, instruction)
        free.update((m, end) for m in busy)
    return max(free.values(), default=0.0)
