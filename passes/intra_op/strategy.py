"""The vocabulary of the intra-op pass: ops as loop nests, and their parallel algorithms.

Sec. 4.1 derives an op's parallel algorithms from its loop nest: a matmul
``C[b,i,j] = sum_k A[b,i,k] B[b,k,j]`` has loops ``b, i, j, k``; mapping a loop to a
mesh axis partitions every tensor dimension that loop indexes, and partitioning a
loop that no result indexes (a reduction loop) leaves partial results that an
all-reduce over that axis combines (Table 3). :class:`IterationSpace` is that loop
nest for any op; :class:`Strategy` is one parallel algorithm with its costs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ...dialect.sharding import ShardingSpec
from ...plans.sharding_plan import Collective

Reducer = Literal["sum", "max", "min", "and", "or", "mul"]


@dataclass(frozen=True, slots=True)
class IterationSpace:
    """An op as a loop nest.

    Args:
      loop_sizes: the extent of every loop; a loop can be split ``k`` ways only if
        ``k`` divides its extent.
      operands: per operand, per tensor dimension, the loop that indexes it, or
        ``None`` when that dimension must stay whole (a window, a sliced or
        concatenated dimension). ``None`` instead of a tuple for an operand that is
        not a ranked tensor (a token).
      results: the same for every result.
      reducer: how partial results of a split reduction loop (a loop that indexes
        some operand but no result) combine; ``None`` when the op has no such loop
        or it cannot be split.
      heavy: matmul-like ops (dot, convolution) whose computation should never be
        replicated (Sec. 4.2, compute cost).
      flops: floating-point operations of the whole op.
      partial_itemsize: bytes per element of the partial results a split reduction
        loop leaves, where not the result's: 4 for a 16-bit float contraction, whose
        partials the lowering sums in f32 (``alpa-widen-split-contractions``).
    """

    loop_sizes: tuple[int, ...]
    operands: tuple[tuple[int | None, ...] | None, ...]
    results: tuple[tuple[int | None, ...] | None, ...]
    reducer: Reducer | None = None
    heavy: bool = False
    flops: float = 0.0
    partial_itemsize: int | None = None

    @property
    def reduction_loops(self) -> tuple[int, ...]:
        """Loops that index an operand but no result."""
        in_results = {loop for dims in self.results if dims for loop in dims if loop is not None}
        in_operands = {loop for dims in self.operands if dims for loop in dims if loop is not None}
        return tuple(sorted(in_operands - in_results))


@dataclass(frozen=True, slots=True)
class Strategy:
    """One parallel algorithm of an op: what it needs, what it gives, what it costs.

    ``loop_axes[l]`` are the mesh axes (major to minor) loop ``l`` is split over.
    ``operands[i]`` is the sharding operand ``i`` must have (``None`` for non-tensor
    operands); ``results[r]`` the sharding result ``r`` comes out with.
    """

    name: str
    loop_axes: tuple[tuple[int, ...], ...]
    operands: tuple[ShardingSpec | None, ...]
    results: tuple[ShardingSpec | None, ...]
    communication: tuple[Collective, ...] = ()
    compute_cost: float = 0.0

    @property
    def communication_cost(self) -> float:
        return sum(c.cost for c in self.communication)

    @property
    def cost(self) -> float:
        """``c_v + d_v`` of Eq. 1 for this algorithm."""
        return self.communication_cost + self.compute_cost
