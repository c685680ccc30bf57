"""What XLA's SPMD partitioner emits for one resharding, asked of XLA itself.

The alpha-beta model of Table 2 prices a resharding as all-to-alls plus an
all-gather, but the partitioner has its own repertoire: a collective permute where
every target tile lives whole on one source device, one all-gather over several axes
where the model expects an all-to-all first, or a full rematerialization (gather
everything, then slice) where it finds no cheaper path. :func:`probe_resharding`
compiles the resharding alone — a value produced in ``src``, constrained to ``dst``
and consumed there — and reads the collectives back from the partitioned HLO.

Shapes only scale the answer. Every shard count of a ``ShardingSpec`` is a product
of mesh axis sizes, so it divides ``mesh.size``; the probe's dimension ``d`` is
``gcd(shape[d], mesh.size)``, which every shard count of the real shape still
divides, and each collective's bytes grow with the element count. So one compile per
(mesh, src, dst, probe shape) answers every tensor of that divisibility pattern.
"""

from __future__ import annotations

import functools
import math

import jax

from ..dialect.mesh import DeviceMesh
from ..dialect.sharding import ShardingSpec
from .hlo_collectives import HloCollective, parse_collectives
from .spmd import Partitioner, compile_module, default_partitioner

PROBE_ITEMSIZE = 4  # the probe is f32; bytes scale to the real element size


class ProbeError(ValueError):
    """The probe cannot run here (too few devices for the mesh)."""


def check_devices(mesh: DeviceMesh) -> None:
    """Raise :class:`ProbeError` unless there are devices to compile ``mesh``'s probes for."""
    if len(jax.devices()) < mesh.size:
        raise ProbeError(f"asking XLA for resharding costs on mesh {list(mesh.shape)} needs {mesh.size} devices "
                         f"but {len(jax.devices())} are available (on CPU, set XLA_FLAGS="
                         f"--xla_force_host_platform_device_count={mesh.size} before importing jax)")


def resharding_probe(mesh: DeviceMesh):
    """:func:`probe_resharding` on ``mesh``, after :func:`check_devices`: the
    ``resharding_probe`` that ``alpa-auto-sharding{resharding-costs=xla}`` asks for."""
    check_devices(mesh)
    return functools.partial(probe_resharding, mesh=mesh)


def probe_shape(shape: tuple[int, ...], mesh: DeviceMesh) -> tuple[int, ...]:
    """The smallest shape with ``shape``'s divisibility by every shard count on ``mesh``."""
    return tuple(math.gcd(size, mesh.size) if size else 0 for size in shape)


def probe_resharding(src: ShardingSpec, dst: ShardingSpec, shape: tuple[int, ...], itemsize: int,
                     mesh: DeviceMesh) -> tuple[tuple[HloCollective, float], ...]:
    """The collectives XLA emits to turn ``shape`` sharded as ``src`` into ``dst``, each
    with the factor that scales its probe bytes to this tensor (``bytes * factor``).
    Call :func:`check_devices` first."""
    probe = probe_shape(shape, mesh)
    if math.prod(probe) == 0:
        return ()
    factor = math.prod(shape) / math.prod(probe) * itemsize / PROBE_ITEMSIZE
    # The partitioner that will compile the plan prices it (they partition reshardings alike
    # once every value's sharding is pinned, but the cache must not mix them).
    return tuple((c, factor) for c in _probe(src, dst, probe, DeviceMesh(mesh.shape), default_partitioner()))


@functools.lru_cache(maxsize=4096)
def _probe(src: ShardingSpec, dst: ShardingSpec, shape: tuple[int, ...], mesh: DeviceMesh,
           partitioner: Partitioner) -> tuple[HloCollective, ...]:
    tensor = f"tensor<{'x'.join(map(str, shape))}xf32>"
    given, need = src.to_mhlo(mesh), dst.to_mhlo(mesh)
    # An add in src and a multiply in dst pin the value's layout on both sides, as a
    # producer and a consumer do in a planned module.
    text = f"""module attributes {{mhlo.num_partitions = {mesh.size} : i32}} {{
  func.func @main(%a: {tensor} {{mhlo.sharding = "{given}"}}) -> ({tensor} {{mhlo.sharding = "{need}"}}) {{
    %0 = stablehlo.add %a, %a {{mhlo.sharding = "{given}"}} : {tensor}
    %1 = stablehlo.custom_call @Sharding(%0) {{backend_config = "", mhlo.sharding = "{need}"}} : ({tensor}) -> {tensor}
    %2 = stablehlo.multiply %1, %1 {{mhlo.sharding = "{need}"}} : {tensor}
    return %2 : {tensor}
  }}
}}"""
    return tuple(parse_collectives(compile_module(text, mesh, partitioner=partitioner).hlo_text, mesh))
