"""A stage's program priced by a device profile: its ops' compute and launches, and its collectives' waits.

The analytic latency of a candidate stage (``stage_costing.py``) is its compute plus its
intra-op plan's communication on the alpha-beta model (Eq. 1's value). With a device
profile (``plans/device_profile.py``) the compute is the profile's: each ``dot_general``
at the measured seconds of one device's share of it under the plan, other matmuls at the
profile's FLOP/s, other ops at its memory bandwidth for the bytes they write (XLA fuses
element-wise chains), two program launches per stage; and each collective adds its wait
for the slowest peer (``collective_sync``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import hlo

from ...dialect.mesh import DeviceMesh
from ...dialect.sharding import ShardingSpec
from ...plans.device_profile import DeviceProfile, Dot
from ...plans.sharding_plan import ShardingPlan
from ..intra_op.rules import itemsize_of, shape_of
from .layer_construction import op_flops
from .training_step import StepGraph


def sync_seconds(plan: ShardingPlan, mesh: DeviceMesh, profile: DeviceProfile) -> float:
    """What ``plan``'s collectives on ``mesh`` cost inside a stage's program beyond the
    alpha-beta model its Eq. 1 priced them on: each its wait for the slowest peer, the
    profile's ``collective_sync`` for as many devices less the alpha already counted."""
    return sum(c.count * max(0.0, profile.sync_seconds(math.prod(mesh.shape[a] for a in c.mesh_axes)) -
                             max(mesh.alpha[a] for a in c.mesh_axes))
               for c in plan.communication if c.mesh_axes)


# Ops XLA fuses into their readers or turns into views: they write nothing of their own.
_FREE_OPS = frozenset({"stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.constant", "stablehlo.iota",
                       "stablehlo.bitcast_convert", "stablehlo.get_tuple_element", "stablehlo.tuple"})
# Element-wise ops: XLA fuses a chain of them (with the free ops) into one loop that writes
# only what leaves the chain.
_ELEMENTWISE = frozenset(f"stablehlo.{name}" for name in (
    "abs add and cbrt ceil clamp compare convert cosine divide exponential exponential_minus_one floor is_finite "
    "log log_plus_one logistic maximum minimum multiply negate not or power remainder round_nearest_even rsqrt "
    "select sign sine sqrt subtract tan tanh xor").split())
_MATMULS = frozenset({"stablehlo.dot_general", "stablehlo.dot", "stablehlo.convolution"})
_DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16", "f64": "float64"}


def device_share(op: ir.Operation, devices: int, host_devices: int, tiles: Sequence[int]) -> Dot | None:
    """One device's share of a ``dot_general`` on ``devices`` devices (``host_devices`` of
    them at once) under a plan that splits its result dimensions into ``tiles``; None for
    other ops and non-float dots. The batch and free dimensions are split as the result
    is, and the devices that hold the same result tile split the contracting dimensions
    (partial sums: the intra-op pass keeps no algorithm that repeats a dot's work on a mesh
    axis), so the share has the dot's FLOPs over the devices (more where a dimension does
    not divide: it is rounded up, as XLA pads it)."""
    if op.name != "stablehlo.dot_general":
        return None
    lhs, rhs = list(shape_of(op.operands[0]) or ()), list(shape_of(op.operands[1]) or ())
    dtypes = [str(ir.RankedTensorType(v.type).element_type) for v in (op.operands[0], op.results[0])]
    if not lhs or not rhs or not all(dtype in _DTYPES for dtype in dtypes):
        return None
    numbers = hlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    lhs_batch, rhs_batch = tuple(numbers.lhs_batching_dimensions), tuple(numbers.rhs_batching_dimensions)
    lhs_contracting, rhs_contracting = tuple(numbers.lhs_contracting_dimensions), \
        tuple(numbers.rhs_contracting_dimensions)
    partner = {**dict(zip(lhs_batch, rhs_batch)), **dict(zip(lhs_contracting, rhs_contracting))}
    lhs_free = [d for d in range(len(lhs)) if d not in lhs_batch + lhs_contracting]
    rhs_free = [d for d in range(len(rhs)) if d not in rhs_batch + rhs_contracting]

    def split_lhs(d: int, count: int) -> None:
        lhs[d] = -(-lhs[d] // count)
        if d in partner:
            rhs[partner[d]] = lhs[d]

    for d, count in zip([*lhs_batch, *lhs_free], tiles):  # the result's dimensions: batch, lhs free, rhs free
        split_lhs(d, count)
    for d, count in zip(rhs_free, tiles[len(lhs_batch) + len(lhs_free):]):
        rhs[d] = -(-rhs[d] // count)
    rest = devices // math.prod(tiles)
    if rest > 1 and lhs_contracting:
        split_lhs(next((d for d in lhs_contracting if lhs[d] % rest == 0), max(lhs_contracting, key=lambda d: lhs[d])),
                  rest)
    return Dot(tuple(lhs), tuple(rhs), lhs_batch, rhs_batch, lhs_contracting, rhs_contracting,
               _DTYPES[dtypes[0]], _DTYPES[dtypes[1]], min(devices, host_devices))


def with_timed_dots(profile: DeviceProfile, dots: Iterable[Dot | None],
                    timer: Callable[[list[Dot]], dict[str, float]] | None) -> DeviceProfile:
    """``profile`` with the seconds ``timer`` gives for those of ``dots`` its table lacks
    (all at once; None entries skipped); ``profile`` itself without a timer."""
    missing = list({dot.key: dot for dot in dots if dot is not None and dot.key not in profile.dots}.values())
    if not missing or timer is None:
        return profile
    seconds = timer(missing)
    return profile.with_dots({dot: seconds[dot.key] for dot in missing})


def plan_tiles(graph: StepGraph, indices: Sequence[int], shardings: list[list[str]],
               mesh: DeviceMesh) -> dict[int, tuple[int, ...]]:
    """The shards of each result dimension of the dots among ``graph``'s ops ``indices``
    (``shardings``: each op's result shardings, in op order) on ``mesh``, by op number."""
    tiles = {}
    for n, texts in zip(sorted(indices), shardings):
        shape = shape_of(graph.ops[n].results[0]) if graph.ops[n].name == "stablehlo.dot_general" else None
        if shape is not None:
            spec = ShardingSpec.from_mhlo(texts[0], mesh, len(shape))
            tiles[n] = tuple(spec.num_shards(d, mesh) for d in range(len(shape)))
    return tiles


def compute_seconds(graph: StepGraph, indices: Sequence[int], devices: int, profile: DeviceProfile,
                    tiles: dict[int, tuple[int, ...]] | None = None) -> float:
    """The compute of a stage (``graph``'s ops ``indices``) on ``devices`` devices as
    ``profile`` prices it, the work split evenly over the devices: each op's
    :func:`op_seconds`, and two program launches (the forward's and the backward's)."""
    inside = set(indices)
    return 2 * profile.launch_seconds(devices) + sum(op_seconds(graph, n, devices, profile, inside, tiles)
                                                     for n in indices)


def op_seconds(graph: StepGraph, n: int, devices: int, profile: DeviceProfile, inside: set[int],
               tiles: dict[int, tuple[int, ...]] | None = None) -> float:
    """Op ``n``'s compute in a stage of the ops ``inside`` on ``devices`` devices: under a plan
    (``tiles``: the shards of each dot's result, by op number) a ``dot_general`` at the
    profile's time of one device's share (:func:`device_share`); other matmuls and
    convolutions at its FLOP/s for their result type. Without a plan every matmul is taken
    at the profile's fastest FLOP/s, a bound for the prune below what any plan's dots were
    measured to take. Other ops at its memory bandwidth for the bytes they write, where an
    element-wise op writes only what leaves its fused chain (a result read outside the stage
    or by an op that is not element-wise) and views and broadcasts write nothing."""
    op = graph.ops[n]
    dot = device_share(op, devices, profile.devices, tiles[n]) if tiles is not None and n in tiles else None
    if dot is not None:
        return profile.dot_seconds(dot)
    if op.name in _MATMULS:
        dtype = str(ir.RankedTensorType(op.results[0].type).element_type)
        price = profile.fastest_matmul_seconds if tiles is None else profile.matmul_seconds
        return price(op_flops(op), _DTYPES.get(dtype, dtype), devices)
    if op.name in _FREE_OPS:
        return 0.0
    fused = _FREE_OPS | _ELEMENTWISE
    written = [r for r in op.results if shape_of(r) is not None and (
        op.name not in _ELEMENTWISE or not graph.value_users.get(r) or
        any(u not in inside or graph.ops[u].name not in fused for u in graph.value_users[r]))]
    return profile.elementwise_seconds(sum(math.prod(shape_of(r)) * itemsize_of(r) for r in written), devices)
