"""A device profile: what one machine's devices compute and communicate per second.

The stage DP prices a candidate stage (Eq. 3's ``t_intra``) from this profile instead of
constants (Alpa keeps such a profiling database per cluster). It is measured once per
machine by ``runtime.device_profile`` and read back from a JSON file:

- ``matmul_flops[dtype][n][f]``: FLOP/s of one device in a matmul of ``f`` FLOPs per
  device while ``n`` devices of its host compute at once (small matmuls run below the
  peak; on XLA:CPU's virtual devices, which share the host's cores, it falls as ``n``
  grows; on a GPU it is flat in ``n``), log-linear in ``f`` between measured sizes;
- ``memory_bandwidth[n]``: bytes/s one device writes in an element-wise op, ``n`` at once;
- ``launch[n]``: seconds of one program call on ``n`` devices through the runtime
  (a stage's forward and backward are one call each);
- ``collectives``: measured ``(kind, n, bytes, seconds)`` samples of collectives inside
  one host, launch excluded, ``bytes`` as ``intra_op.cost_model`` counts them (an
  all-gather's output, the others' input per device); ``intra_host_link`` fits that
  model's alpha-beta (``alpha + beta * volume``) to them;
- ``collective_sync[n]``: seconds a small all-reduce over ``n`` devices costs between
  computations, every device computing before it. Alone in a program a collective finds
  its peers waiting; inside a stage each waits for the slowest peer, and on XLA:CPU's
  virtual devices, more devices than cores, that took 3-7x longer here (a 4-device
  all-reduce of 8 KB: 89-173 us against 25 us alone), which the alpha above does not hold.
  Empty in files written before it (then nothing is added);
- ``call_buffers[n]``: seconds one more argument or result array adds to a program call
  on ``n`` devices through the runtime (placing it, wrapping its shards, freeing it): a
  GPT stage's backward takes and gives 60-130 arrays, more than its launch. Empty in
  files written before it (then nothing is added);
- ``transfer_launch[n]``: seconds of one program of a cross-mesh transfer whose two meshes
  have ``n`` devices together (a collective permute, or a local all-gather), through the
  runtime's ``CrossMeshTransfer`` on a tiny array: here 2-4x an empty program's launch.
  Files written before it price those programs at ``launch``;
- ``device_copy[n]``: seconds of one device-to-device copy of a cross-mesh transfer whose
  two meshes have ``n`` devices together, as one process runs them (``runtime/device_copies.py``),
  on a tiny array given by a program that kept the source devices busy just before, as a
  step's copies follow its stages (XLA:CPU's threads go on running after a program: a copy
  then took 1.8x one after nothing). Files written before it price a copy at
  ``transfer_launch``;
- ``dots``: seconds of distinct dots (:class:`Dot`: one device's share of a
  ``dot_general`` with its dimension numbers, ``devices`` of a host computing theirs at
  once), each timed in a program of such dots the first time a search prices it (Alpa's
  profiling database): square matmuls at a FLOP/s mispredict the skinny, batched and
  transposed dots of real models by up to 3x. A dot the table lacks is priced at
  ``matmul_flops``; ``dot_peaks[dtype][n]`` is the highest FLOP/s per device a timed dot
  of ``dtype`` reached on ``n`` devices (some beat the square matmuls), for bounds.

Sizes between the measured ones take the nearest measured size below.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .json_files import VersionedFile

# The ring volume factor of each collective kind (intra_op.cost_model's table).
_VOLUME = {"all-reduce": 2.0, "all-gather": 1.0, "reduce-scatter": 1.0, "all-to-all": 1.0}


# Dots timed faster than this are left out of the peaks: their FLOP/s would be the timer's noise.
PEAK_RESOLUTION = 1e-6


class DeviceProfileError(ValueError):
    """A profile file that cannot be read; the message says what is wrong."""


@dataclass(frozen=True)
class Dot:
    """One device's share of a ``dot_general`` (``stablehlo.dot_general``'s dimension numbers
    over these operand shapes) while ``devices`` devices of its host compute theirs at once."""

    lhs: tuple[int, ...]
    rhs: tuple[int, ...]
    lhs_batch: tuple[int, ...]
    rhs_batch: tuple[int, ...]
    lhs_contracting: tuple[int, ...]
    rhs_contracting: tuple[int, ...]
    dtype: str  # of the operands, as numpy names it
    result_dtype: str
    devices: int

    @property
    def key(self) -> str:
        """The dot as the profile's table names it, e.g.
        ``float32[64,256]x[256,512] batch []x[] contracting [1]x[0] -> float32 on 4``."""
        def dims(values: tuple[int, ...]) -> str:
            return "[" + ",".join(map(str, values)) + "]"
        return (f"{self.dtype}{dims(self.lhs)}x{dims(self.rhs)} batch {dims(self.lhs_batch)}x{dims(self.rhs_batch)} "
                f"contracting {dims(self.lhs_contracting)}x{dims(self.rhs_contracting)} -> {self.result_dtype} "
                f"on {self.devices}")

    @property
    def flops(self) -> float:
        """Multiply-adds times two: every lhs element meets every free rhs element."""
        free = [size for d, size in enumerate(self.rhs) if d not in self.rhs_batch + self.rhs_contracting]
        return 2.0 * math.prod(self.lhs) * math.prod(free)


@dataclass(frozen=True)
class DeviceProfile(VersionedFile):
    platform: str  # jax's platform name: cpu, gpu, tpu
    device_kind: str
    devices: int  # devices of one host the profile measured
    matmul_flops: dict[str, dict[int, dict[float, float]]]
    memory_bandwidth: dict[int, float]
    launch: dict[int, float]
    collectives: tuple[tuple[str, int, float, float], ...]  # (kind, devices, bytes as the cost model counts, s)
    dots: dict[str, float] = field(default_factory=dict)  # Dot.key -> seconds
    dot_peaks: dict[str, dict[int, float]] = field(default_factory=dict)  # dtype -> devices -> FLOP/s per device
    collective_sync: dict[int, float] = field(default_factory=dict)  # devices -> seconds per collective
    call_buffers: dict[int, float] = field(default_factory=dict)  # devices -> seconds per array of a call
    transfer_launch: dict[int, float] = field(default_factory=dict)  # devices of both meshes -> seconds
    device_copy: dict[int, float] = field(default_factory=dict)  # devices of both meshes -> seconds per copy

    VERSION: ClassVar[int] = 1
    WHAT: ClassVar[str] = "a device profile"
    ERROR: ClassVar[type[ValueError]] = DeviceProfileError

    def matmul_seconds(self, flops: float, dtype: str, n: int) -> float:
        """Seconds of ``flops`` matmul FLOPs of ``dtype`` split over ``n`` devices computing at once
        (a dtype the profile lacks is priced as float32)."""
        by_size = _nearest(self.matmul_flops.get(dtype, self.matmul_flops["float32"]), n)
        per_device = flops / n
        sizes = sorted(by_size)
        rate = np.interp(np.log(max(per_device, 1.0)), np.log(sizes), [by_size[f] for f in sizes])
        return per_device / float(rate)

    def fastest_matmul_seconds(self, flops: float, dtype: str, n: int) -> float:
        """A lower bound on the seconds of any matmul of ``flops`` FLOPs of ``dtype`` over ``n``
        devices: at the higher of the square matmuls' FLOP/s and the fastest timed dot's."""
        peak = self.dot_peaks.get(dtype, {}).get(min(n, self.devices), 0.0)  # as Dot.devices counts them
        return min(self.matmul_seconds(flops, dtype, n), flops / n / peak if peak else math.inf)

    def with_dots(self, timed: dict[Dot, float]) -> DeviceProfile:
        """The profile with ``timed`` (seconds of each dot) in its dot table and peaks."""
        peaks = {dtype: dict(by_n) for dtype, by_n in self.dot_peaks.items()}
        for dot, seconds in timed.items():
            if seconds > PEAK_RESOLUTION:
                by_n = peaks.setdefault(dot.dtype, {})
                by_n[dot.devices] = max(by_n.get(dot.devices, 0.0), dot.flops / seconds)
        return dataclasses.replace(self, dots={**self.dots, **{dot.key: s for dot, s in timed.items()}},
                                   dot_peaks=peaks)

    def dot_seconds(self, dot: Dot) -> float:
        """Seconds of ``dot``: measured, else its FLOPs at the profile's matmul FLOP/s."""
        seconds = self.dots.get(dot.key)
        return seconds if seconds is not None else \
            self.matmul_seconds(dot.flops * dot.devices, dot.dtype, dot.devices)

    def elementwise_seconds(self, nbytes: float, n: int) -> float:
        """Seconds to write ``nbytes`` of element-wise results split over ``n`` devices."""
        return nbytes / (n * _nearest(self.memory_bandwidth, n))

    def launch_seconds(self, n: int) -> float:
        return _nearest(self.launch, n)

    def sync_seconds(self, n: int) -> float:
        """Seconds a collective over ``n`` devices costs between computations (0: not measured)."""
        return _nearest(self.collective_sync, n) if self.collective_sync and n > 1 else 0.0

    def buffer_seconds(self, n: int) -> float:
        """Seconds one argument or result array adds to a program call on ``n`` devices (0: not measured)."""
        return _nearest(self.call_buffers, n) if self.call_buffers else 0.0

    def transfer_launch_seconds(self, n: int) -> float:
        """Seconds of one program of a cross-mesh transfer over ``n`` devices of both meshes
        (an empty program's launch where not measured)."""
        return _nearest(self.transfer_launch, n) if self.transfer_launch else self.launch_seconds(n)

    def copy_seconds(self, n: int) -> float:
        """Seconds of one device-to-device copy of a cross-mesh transfer over ``n`` devices of
        both meshes, its bytes aside (a transfer program's launch where not measured)."""
        return _nearest(self.device_copy, n) if self.device_copy else self.transfer_launch_seconds(n)

    def intra_host_link(self) -> tuple[float, float]:
        """(alpha seconds, beta seconds per byte) of a collective inside one host: the fit of
        ``alpha + beta * volume`` to the measured collectives (``volume``: the ring bytes of
        ``intra_op.cost_model``) that minimises the squared relative errors, neither negative."""
        if not self.collectives:
            raise DeviceProfileError("the device profile measured no collectives (one device)")
        volume = np.array([_VOLUME[kind] * (n - 1) / n * nbytes for kind, n, nbytes, _ in self.collectives])
        seconds = np.array([max(s, 1e-9) for *_, s in self.collectives])
        rows = np.stack([np.ones_like(volume), volume], axis=1) / seconds[:, None]
        import scipy.optimize  # here, not with the module: 0.45 s of every pass tool's start-up

        (alpha, beta), _ = scipy.optimize.nnls(rows, np.ones_like(seconds))
        return float(alpha), float(beta)

    @classmethod
    def _from_data(cls, data: dict, where: str) -> DeviceProfile:
        try:
            profile = cls(
                platform=str(data["platform"]), device_kind=str(data["device_kind"]), devices=int(data["devices"]),
                matmul_flops={str(dtype): {int(n): {float(f): float(r) for f, r in by_size.items()}
                                           for n, by_size in table.items()}
                              for dtype, table in data["matmul_flops"].items()},
                memory_bandwidth=_by_size(data["memory_bandwidth"]), launch=_by_size(data["launch"]),
                collectives=tuple((str(kind), int(n), float(b), float(s)) for kind, n, b, s in data["collectives"]),
                dots={str(key): float(seconds) for key, seconds in data.get("dots", {}).items()},
                dot_peaks={str(dtype): _by_size(by_n) for dtype, by_n in data.get("dot_peaks", {}).items()},
                collective_sync=_by_size(data.get("collective_sync", {})),
                call_buffers=_by_size(data.get("call_buffers", {})),
                transfer_launch=_by_size(data.get("transfer_launch", {})),
                device_copy=_by_size(data.get("device_copy", {})))
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise DeviceProfileError(f"{where}: malformed device profile ({type(error).__name__}: {error})") from None
        positive = [*profile.memory_bandwidth.values(), *profile.launch.values(), *profile.dots.values(),
                    *(v for by_n in profile.dot_peaks.values() for v in by_n.values()),
                    *(v for table in profile.matmul_flops.values() for by_size in table.values()
                      for v in (*by_size, *by_size.values()))]
        if "float32" not in profile.matmul_flops or not profile.memory_bandwidth or not profile.launch or \
                not all(np.isfinite(v) and v > 0 for v in positive) or \
                any(kind not in _VOLUME or n < 2 for kind, n, _, _ in profile.collectives) or \
                not all(np.isfinite(v) and v >= 0 for table in (profile.collective_sync, profile.call_buffers,
                                                                profile.transfer_launch, profile.device_copy)
                        for v in table.values()):
            raise DeviceProfileError(f"{where}: a device profile needs float32 matmul FLOP/s, memory bandwidth and "
                                     f"launch times, all positive, collectives of known kinds on 2+ devices, and "
                                     f"collective sync, call buffer and transfer times of at least 0")
        return profile


def _by_size(table: dict) -> dict[int, float]:
    return {int(n): float(v) for n, v in table.items()}


def _nearest(table: dict[int, float], n: int) -> float:
    """The value measured at the largest size <= n (the smallest size where n is below all)."""
    sizes = sorted(table)
    return table[sizes[max(bisect.bisect_right(sizes, n) - 1, 0)]]
