"""Device meshes: the N-D logical view of devices that every sharding refers to.

The paper (Sec. 4.1) uses 2-D meshes; nothing here depends on the rank, so a mesh
may have any number of axes. Each axis carries the alpha-beta communication model
the cost functions use: a collective over axis ``i`` moving ``b`` bytes costs
``alpha[i] + beta[i] * b`` (plus the collective's own volume factor).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

DEFAULT_AXIS_NAMES = ("x", "y", "z", "w")


class MeshError(ValueError):
    """A mesh description that cannot be built; the message says which field."""


def default_axis_names(ndim: int) -> tuple[str, ...]:
    if ndim <= len(DEFAULT_AXIS_NAMES):
        return DEFAULT_AXIS_NAMES[:ndim]
    return tuple(f"a{i}" for i in range(ndim))


# Meshes are arrays of device ids and cost tables grow with their size; no cluster
# this compiler plans for comes near (the largest TPU pods hold ~9k chips).
MAX_DEVICES = 1 << 16


@dataclass(frozen=True, slots=True)
class DeviceMesh:
    """An N-D logical mesh of devices.

    Args:
      shape: size of every mesh axis, major to minor.
      device_ids: the device at every mesh position, row-major; ``range(size)``
        when omitted.
      axis_names: one name per axis (``x``, ``y``, ``z``, ... when omitted).
      alpha: per-axis latency of one collective (seconds, or any consistent unit).
      beta: per-axis inverse bandwidth (time per byte).
    """

    shape: tuple[int, ...]
    device_ids: tuple[int, ...] = ()
    axis_names: tuple[str, ...] = ()
    alpha: tuple[float, ...] = ()
    beta: tuple[float, ...] = ()
    _array: np.ndarray = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        shape = tuple(int(s) for s in self.shape)
        if not shape:
            raise MeshError("mesh shape is empty: give at least one axis size")
        if any(s <= 0 for s in shape):
            raise MeshError(f"mesh shape {list(shape)} has a non-positive axis size")
        size = math.prod(shape)
        if size > MAX_DEVICES:
            raise MeshError(f"mesh shape {list(shape)} holds {size} devices; at most {MAX_DEVICES} are supported")
        ids = tuple(int(d) for d in self.device_ids) or tuple(range(size))
        if len(ids) != size:
            raise MeshError(
                f"mesh shape {list(shape)} holds {size} devices but {len(ids)} device ids were given"
            )
        if len(set(ids)) != len(ids) or min(ids) < 0:
            raise MeshError(f"device ids {list(ids)} must be distinct and non-negative")
        names = tuple(self.axis_names) or default_axis_names(len(shape))
        if len(names) != len(shape) or len(set(names)) != len(names):
            raise MeshError(f"axis names {list(names)} must be {len(shape)} distinct names")
        alpha = tuple(float(a) for a in self.alpha) or (1.0,) * len(shape)
        beta = tuple(float(b) for b in self.beta) or (1.0,) * len(shape)
        for label, values in (("alpha", alpha), ("beta", beta)):
            if len(values) != len(shape):
                raise MeshError(
                    f"mesh {label} has {len(values)} values but the mesh has {len(shape)} axes"
                )
            if any(not v >= 0 for v in values):  # NaN is neither
                raise MeshError(f"mesh {label} {list(values)} has a negative or NaN value")
        for name, value in (("shape", shape), ("device_ids", ids), ("axis_names", names),
                            ("alpha", alpha), ("beta", beta)):
            object.__setattr__(self, name, value)
        array = np.asarray(ids, dtype=np.int64).reshape(shape)
        array.flags.writeable = False
        object.__setattr__(self, "_array", array)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def device_array(self) -> np.ndarray:
        """Device ids laid out in the mesh's shape (read-only)."""
        return self._array

    @property
    def is_iota(self) -> bool:
        """True when the devices are ``0..size-1`` in row-major order."""
        return self.device_ids == tuple(range(self.size))

    def axis_index(self, name: str) -> int:
        try:
            return self.axis_names.index(name)
        except ValueError:
            raise MeshError(
                f"mesh has no axis named {name!r}; its axes are {list(self.axis_names)}"
            ) from None

    def coordinates(self, device: int) -> tuple[int, ...]:
        """Mesh position of ``device``."""
        flat = self.device_ids.index(device)
        return tuple(int(c) for c in np.unravel_index(flat, self.shape))

    def to_jax_mesh(self, devices=None):
        """The equivalent ``jax.sharding.Mesh`` over ``devices`` (``jax.devices()`` by default).

        Device ``i`` of this mesh is the JAX device whose ``id`` is ``i``.
        """
        import jax

        by_id = {d.id: d for d in (devices if devices is not None else jax.devices())}
        missing = [d for d in self.device_ids if d not in by_id]
        if missing:
            raise MeshError(
                f"mesh uses device ids {missing} that are not among the {len(by_id)} JAX devices"
            )
        objects = np.array([by_id[d] for d in self.device_ids], dtype=object).reshape(self.shape)
        return jax.sharding.Mesh(objects, self.axis_names)


@dataclass(frozen=True, slots=True)
class PhysicalCluster:
    """``num_hosts`` hosts with ``devices_per_host`` devices each (Sec. 5.1).

    Devices are numbered host-major: device ``h * devices_per_host + d`` is device
    ``d`` of host ``h``. Communication inside a host uses the ``intra_host``
    alpha/beta, across hosts the ``inter_host`` ones.
    """

    num_hosts: int
    devices_per_host: int
    intra_host_alpha: float = 1.0
    intra_host_beta: float = 1.0
    inter_host_alpha: float = 1.0
    inter_host_beta: float = 10.0

    def __post_init__(self) -> None:
        if self.num_hosts <= 0 or self.devices_per_host <= 0:
            raise MeshError(
                f"cluster shape {self.num_hosts}x{self.devices_per_host} must be positive"
            )

    @property
    def num_devices(self) -> int:
        return self.num_hosts * self.devices_per_host

    def submesh(self, host_start: int, num_hosts: int,
                device_start: int, num_devices: int) -> DeviceMesh:
        """The physical submesh of ``num_hosts`` hosts from ``host_start`` and, on each,
        ``num_devices`` devices from ``device_start``, as a ``(num_hosts, num_devices)`` mesh."""
        if not (0 <= host_start and num_hosts > 0 and host_start + num_hosts <= self.num_hosts):
            raise MeshError(
                f"hosts {host_start}..{host_start + num_hosts - 1} are outside the cluster's "
                f"{self.num_hosts} hosts"
            )
        if not (0 <= device_start and num_devices > 0
                and device_start + num_devices <= self.devices_per_host):
            raise MeshError(
                f"devices {device_start}..{device_start + num_devices - 1} are outside the "
                f"{self.devices_per_host} devices of a host"
            )
        ids = [h * self.devices_per_host + d
               for h in range(host_start, host_start + num_hosts)
               for d in range(device_start, device_start + num_devices)]
        return DeviceMesh(
            (num_hosts, num_devices), tuple(ids),
            alpha=(self.inter_host_alpha, self.intra_host_alpha),
            beta=(self.inter_host_beta, self.intra_host_beta),
        )

    def logical_mesh(self, physical: DeviceMesh, shape: tuple[int, ...],
                     axis_names: tuple[str, ...] = ()) -> DeviceMesh:
        """View a physical submesh (from :meth:`submesh`) as a logical mesh of ``shape``.

        Devices keep their row-major order. A logical axis whose devices sit on one
        host gets the intra-host alpha/beta; one that crosses hosts gets the
        inter-host ones.
        """
        if math.prod(shape) != physical.size:
            raise MeshError(
                f"logical mesh shape {list(shape)} does not hold the submesh's {physical.size} devices"
            )
        per_host = physical.shape[-1]
        # Host of every logical position (row-major over the physical submesh).
        hosts = (np.arange(physical.size) // per_host).reshape(tuple(shape))
        alpha, beta = [], []
        for axis in range(len(shape)):
            crosses = bool(np.any(np.diff(hosts, axis=axis)))
            alpha.append(self.inter_host_alpha if crosses else self.intra_host_alpha)
            beta.append(self.inter_host_beta if crosses else self.intra_host_beta)
        return DeviceMesh(tuple(shape), physical.device_ids, axis_names,
                          tuple(alpha), tuple(beta))
