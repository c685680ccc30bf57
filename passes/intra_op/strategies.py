"""An op's parallel algorithms on a device mesh, from its loop nest (Sec. 4.1, Table 3).

A parallel algorithm maps loops of the op's :class:`~.strategy.IterationSpace` to mesh
axes: every tensor dimension a loop indexes is split over that loop's axes, every
other dimension is whole, and mesh axes no loop uses replicate the computation.
Splitting a reduction loop leaves partial results that an all-reduce over its axes
combines (Table 3, rows 2, 3, 5 and 7). Optionally (``reduce_scatter``), the ILP is
also offered Sec. 4.2's post-ILP rewrite directly: a reduce-scatter that leaves the
result split over the reduction axes.

Fidelity against XLA (``test_strategy_fidelity.py``): compiled alone with the
strategy's shardings, every algorithm makes XLA:CPU emit exactly the collectives
listed here (kind, per-device bytes, mesh axes), except the reduce-scatter variants:
the SPMD partitioner always emits an all-reduce of the same buffer followed by a
local dynamic-slice; only XLA:GPU's ``ReduceScatterCreator`` pass (which XLA:CPU
lacks) fuses the two into a reduce-scatter. On CPU a variant is thus its base
algorithm plus a free slice (Table 2, case 1), which the ILP already has, so the
variants are off by default; enable them when compiling for GPU.

Which mappings are enumerated:

- each mesh axis of size > 1 splits at most one loop, or none;
- by default a loop gets at most one axis; ``allow_flattened_mesh`` adds the
  mappings where all axes split one loop (``S^{01}``, Table 3 rows 6 and 7: 1-D data
  parallelism over the whole mesh); ``allow_mixed_mesh_shape`` (XLA's auto-sharding
  option of that name) allows any grouping of axes on loops, ascending within a loop
  (on 3-D meshes also two axes on one loop beside the third);
- the axes on a loop must divide its extent evenly (SPMD partitions evenly);
- heavy ops (dot, convolution) never replicate work (Sec. 4.2, "we do not allow
  replicated computation") unless ``allow_recompute_heavy_op``; then the redundant
  flops are charged to ``compute_cost`` (otherwise ``d_v = 0``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ...dialect.mesh import DeviceMesh
from ...dialect.sharding import ShardingSpec, tile_bytes
from ...plans.sharding_plan import Collective
from .cost_model import collective
from .strategy import IterationSpace, Strategy

Shape = tuple[int, ...]
LoopAxes = tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class StrategyOptions:
    """Which parallel algorithms :func:`enumerate_strategies` produces.

    Args:
      allow_flattened_mesh: let all mesh axes together split one loop (``S^{01}``).
      allow_mixed_mesh_shape: let any several mesh axes split one loop (``S^{01}``, or
        two axes of a 3-D mesh beside the third); without either option each loop gets
        at most one axis.
      allow_recompute_heavy_op: keep algorithms of heavy ops (dot, conv) that leave a
        mesh axis unused and so replicate work.
      reduce_scatter: also emit reduce-scatter variants of split sum reductions.
        Off by default: XLA:CPU runs them as all-reduce + slice (module docstring);
        XLA:GPU turns that into a reduce-scatter, so turn it on for GPU meshes.
      float32_partials: a split contraction of a 16-bit dot all-reduces f32 partials
        (``IterationSpace.partial_itemsize``, as ``alpa-widen-split-contractions`` emits
        them); false: partials of the result's own type, as plain XLA emits them.
      flop_cost: bytes' transfer time on the mesh's fastest axis per flop computed again:
        a heavy op's redundant flops, and the flops of the ops ``alpa-rematerialize``
        computes again in the backward pass (1e-3: a device that computes 1000 flops in the
        time its fastest link moves a byte).
    """

    allow_flattened_mesh: bool = False
    allow_mixed_mesh_shape: bool = False
    allow_recompute_heavy_op: bool = False
    reduce_scatter: bool = False
    float32_partials: bool = True
    flop_cost: float = 1e-3


def loop_assignments(space: IterationSpace, mesh: DeviceMesh, options: StrategyOptions) -> Iterator[LoopAxes]:
    """Every mapping of mesh axes (size > 1) to loops the options allow, as
    ``loop_axes[l]``, in a fixed order starting with the replicated one.

    Loops whose extent the axes' product does not divide are skipped.
    """
    axes = [a for a in range(mesh.ndim) if mesh.shape[a] > 1]
    loops = len(space.loop_sizes)
    for targets in itertools.product((None, *range(loops)), repeat=len(axes)):
        used = [t for t in targets if t is not None]
        flattened = len(axes) > 1 and len(used) == len(axes) and len(set(used)) == 1
        if len(set(used)) != len(used) and not options.allow_mixed_mesh_shape \
                and not (flattened and options.allow_flattened_mesh):
            continue
        loop_axes = tuple(tuple(a for a, t in zip(axes, targets) if t == loop) for loop in range(loops))
        if all(space.loop_sizes[loop] % _ways(mesh, loop_axes[loop]) == 0 for loop in range(loops)):
            yield loop_axes


def _ways(mesh: DeviceMesh, axes: Sequence[int]) -> int:
    return math.prod(mesh.shape[a] for a in axes)


def strategy_name(loop_axes: LoopAxes) -> str:
    """``l0->0 l2->1`` as Table 3 writes ``i -> 0, j -> 1``; ``l1->{0,1}`` for a loop
    split over several axes; ``replicated`` when no loop is split."""
    parts = []
    for loop, axes in enumerate(loop_axes):
        if axes:
            target = str(axes[0]) if len(axes) == 1 else "{" + ",".join(map(str, axes)) + "}"
            parts.append(f"l{loop}->{target}")
    return " ".join(parts) or "replicated"


def _spec(dims: tuple[int | None, ...] | None, loop_axes: LoopAxes) -> ShardingSpec | None:
    if dims is None:
        return None
    return ShardingSpec(tuple(loop_axes[loop] if loop is not None else () for loop in dims))


def _algorithms(space: IterationSpace, loop_axes: LoopAxes, result_shapes: Sequence[Shape | None],
                result_itemsizes: Sequence[int], mesh: DeviceMesh, options: StrategyOptions) -> list[Strategy]:
    """The algorithm of one loop mapping, plus its reduce-scatter variants."""
    split_reductions = [loop for loop in space.reduction_loops if loop_axes[loop]]
    if split_reductions and space.reducer is None:
        return []
    name = strategy_name(loop_axes)
    operands = tuple(_spec(dims, loop_axes) for dims in space.operands)
    results = tuple(_spec(dims, loop_axes) for dims in space.results)
    reduction_axes = tuple(sorted(a for loop in split_reductions for a in loop_axes[loop]))
    if not reduction_axes:
        return [Strategy(name, loop_axes, operands, results)]

    # Table 3: partial sums of a split reduction loop meet in one all-reduce per
    # result, over the reduction loops' axes, on the result's tile.
    partial = space.partial_itemsize if options.float32_partials else None
    all_reduces = tuple(
        collective("all-reduce", tile_bytes(spec, result_shapes[r], partial or result_itemsizes[r], mesh),
                   reduction_axes, mesh)
        for r, spec in enumerate(results) if spec is not None
    )
    strategies = [Strategy(name, loop_axes, operands, results, all_reduces)]
    if not (options.reduce_scatter and space.reducer == "sum" and len(results) == 1 and results[0] is not None):
        return strategies

    # Sec. 4.2's post-ILP rewrite, offered to the ILP directly: the reduce-scatter
    # moves half the bytes of the all-reduce and leaves the result split over the
    # reduction axes along a dimension no split loop indexes. Priced as XLA:GPU runs
    # it; XLA:CPU runs an all-reduce of the same buffer plus a slice instead.
    (spec,), shape, dims = results, result_shapes[0], space.results[0]
    ways = _ways(mesh, reduction_axes)
    for d, size in enumerate(shape):
        if (dims[d] is not None and loop_axes[dims[d]]) or size % ways:
            continue
        scattered = ShardingSpec(spec.dims[:d] + (reduction_axes,) + spec.dims[d + 1:])
        scatter: Collective = collective("reduce-scatter", all_reduces[0].bytes, reduction_axes, mesh)
        strategies.append(Strategy(f"{name} reduce-scatter(dim {d})", loop_axes, operands, (scattered,),
                                   (scatter,)))
    return strategies


def enumerate_strategies(space: IterationSpace, operand_shapes: Sequence[Shape | None],
                         operand_itemsizes: Sequence[int], result_shapes: Sequence[Shape | None],
                         result_itemsizes: Sequence[int], mesh: DeviceMesh,
                         *, options: StrategyOptions = StrategyOptions()) -> list[Strategy]:
    """The parallel algorithms of an op with loop nest ``space`` on ``mesh``.

    Args:
      space: the op's loop nest (from :func:`.rules.iteration_space`).
      operand_shapes, operand_itemsizes: per operand (``None`` shape for tokens);
        the operand specs follow from ``space`` alone, the arguments keep the
        signature symmetric for callers.
      result_shapes, result_itemsizes: per result; they size the collectives.
      mesh: the device mesh.
      options: which families to enumerate.

    Returns the strategies in a deterministic order, the replicated one first when
    present.
    """
    del operand_shapes, operand_itemsizes  # the specs come from the loop maps
    strategies = [
        strategy
        for loop_axes in loop_assignments(space, mesh, options)
        for strategy in _algorithms(space, loop_axes, result_shapes, result_itemsizes, mesh, options)
    ]
    if not space.heavy:
        return strategies
    every_axis = {a for a in range(mesh.ndim) if mesh.shape[a] > 1}
    if not options.allow_recompute_heavy_op:
        # Sec. 4.2: heavy operators never replicate computation; small ops whose
        # loops no full split divides keep their replicated algorithms.
        return [s for s in strategies if _used_axes(s) == every_axis] or strategies
    redundant = compute_costs(space, strategies, mesh, options) - \
        options.flop_cost * min(mesh.beta) * space.flops / mesh.size
    return [Strategy(s.name, s.loop_axes, s.operands, s.results, s.communication, float(cost))
            for s, cost in zip(strategies, redundant)]


def compute_costs(space: IterationSpace, strategies: Sequence[Strategy], mesh: DeviceMesh,
                  options: StrategyOptions) -> np.ndarray:
    """Per strategy, ``flop_cost`` bytes' time on the mesh's fastest axis (seconds where
    beta is seconds per byte) times the FLOPs of the op each device computes (the op's
    FLOPs over the devices its loops are split across)."""
    rate = options.flop_cost * min(mesh.beta)
    return np.array([rate * space.flops / _ways(mesh, tuple(_used_axes(s))) for s in strategies])


def _used_axes(strategy: Strategy) -> set[int]:
    return {a for axes in strategy.loop_axes for a in axes}
