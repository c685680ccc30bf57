"""Compile an annotated StableHLO module for one device mesh with XLA's SPMD partitioner.

The module's shardings (``mhlo.sharding`` strings from ``alpa-auto-sharding``, or
``sdy.sharding``) number devices by partition id: partition ``p`` is the row-major
mesh position ``p``, i.e. the shardings are written against ``DeviceMesh(mesh.shape)``.
The device assignment sends partition ``p`` to the global device ``mesh.device_ids[p]``,
so the same module runs on any submesh of the same shape (devices 4..7 as well as
0..3). Input and output shardings come back as ``jax.sharding.NamedSharding`` over
``mesh.to_jax_mesh()``.

Host callbacks (``jax.debug.print``, ``io_callback``, ...): the module's callback custom
calls name their Python callable by position (``mhlo.backend_config = {index = k}``) in
the list JAX made when it lowered the function; :func:`compile_module` takes that list
(``host_callbacks``) and the executable holds it, so the callables live as long as it.

Donation: JAX marks a donated argument with ``tf.aliasing_output = k`` (when output
``k`` can reuse its buffer) or ``jax.buffer_donor = true``. XLA turns them into the
module's ``input_output_alias`` and ``buffer_donor``, and PJRT then consumes those
input buffers at execution: the caller's arrays are deleted, as under ``jax.jit``.
"""

from __future__ import annotations

import concurrent.futures
import functools
import hashlib
import io
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import jax
import numpy as np
from jax._src.lib import xla_client as xc
from jax._src.lib.mlir import ir
from jax._src.sharding_impls import GSPMDSharding
from jax.sharding import NamedSharding

from ..dialect.context import make_context, walk
from ..dialect.host_callbacks import callback_index, is_host_callback
from ..dialect.jax_interop import aval_of, spec_to_partition_spec
from ..dialect.mesh import DeviceMesh
from ..dialect.pass_registry import Diagnostics
from ..dialect.sdy import export_shardings
from ..dialect.sharding import ShardingError, ShardingSpec
from .clamp_dynamic_slice_starts import ClampDynamicSliceStartsPass
from .hlo_collectives import HloCollective, parse_collectives
from .reshape_degenerate_transposes import ReshapeDegenerateTransposesPass
from .squeeze_broadcast_operands import SqueezeBroadcastOperandsPass
from .widen_split_contractions import WidenSplitContractionsPass

JaxSharding = NamedSharding | GSPMDSharding
Partitioner = Literal["shardy", "gspmd"]


BUFFER_DONOR = "jax.buffer_donor"


class LoweringError(ValueError):
    """A module or mesh that cannot be compiled as asked; the message says what to change."""


@dataclass(frozen=True, slots=True)
class ModuleSignature:
    """What compilation and execution need to know about ``@main``, as plain Python values."""

    in_avals: tuple[jax.ShapeDtypeStruct, ...]
    out_avals: tuple[jax.ShapeDtypeStruct, ...]
    input_output_aliases: tuple[tuple[int, int], ...]  # (argument, result) from tf.aliasing_output
    donated: tuple[bool, ...]  # per argument: tf.aliasing_output or jax.buffer_donor
    num_partitions: int | None
    num_replicas: int | None
    uses_shardy: bool
    host_callbacks: int = 0  # how many Python callables the module's host callbacks index (highest + 1)


@dataclass(frozen=True, slots=True)
class SpmdExecutable:
    """A module compiled for ``mesh``: the loaded XLA executable and its shardings."""

    executable: Any  # jaxlib LoadedExecutable
    mesh: DeviceMesh
    jax_mesh: jax.sharding.Mesh
    devices: tuple[jax.Device, ...]  # partition order: devices[p] runs partition p
    signature: ModuleSignature
    input_shardings: tuple[JaxSharding, ...]
    output_shardings: tuple[JaxSharding, ...]
    hlo_text: str  # the partitioned HLO module
    host_callbacks: tuple[Callable[..., Any], ...] = ()  # what its callback custom calls call; kept alive here

    @property
    def in_avals(self) -> tuple[jax.ShapeDtypeStruct, ...]:
        return self.signature.in_avals

    @property
    def out_avals(self) -> tuple[jax.ShapeDtypeStruct, ...]:
        return self.signature.out_avals

    @property
    def donated(self) -> tuple[bool, ...]:
        return self.signature.donated

    def collectives(self) -> list[HloCollective]:
        """The collectives XLA inserted, with the mesh axes their groups span."""
        return parse_collectives(self.hlo_text, self.mesh)


def _int_attr(attributes: Any, name: str) -> int | None:
    return ir.IntegerAttr(attributes[name]).value if name in attributes else None


def read_signature(module: ir.Module) -> ModuleSignature:
    """Types, aliasing and partition counts of ``module``'s public ``@main``."""
    main = None
    uses_shardy = False
    for op in module.body.operations:
        name = op.operation.name
        uses_shardy |= name.startswith("sdy.")
        if name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == "main":
            main = op
    if main is None:
        raise LoweringError("module has no func.func @main to compile; rename the entry function to main")
    ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    try:
        in_avals = tuple(aval_of(t, f"argument {i} of @main") for i, t in enumerate(ftype.inputs))
        out_avals = tuple(aval_of(t, f"result {i} of @main") for i, t in enumerate(ftype.results))
    except ValueError as error:
        raise LoweringError(str(error)) from None
    aliases, donated = [], [False] * len(in_avals)
    arg_attrs = main.attributes["arg_attrs"] if "arg_attrs" in main.attributes else None
    for i in range(len(in_avals) if arg_attrs is not None else 0):
        attrs = ir.DictAttr(ir.ArrayAttr(arg_attrs)[i])
        uses_shardy |= "sdy.sharding" in attrs
        if "tf.aliasing_output" in attrs:
            aliases.append((i, ir.IntegerAttr(attrs["tf.aliasing_output"]).value))
            donated[i] = True
        if BUFFER_DONOR in attrs and ir.BoolAttr(attrs[BUFFER_DONOR]).value:
            donated[i] = True
    module_attrs = module.operation.attributes
    indices = [callback_index(op) for op in walk(module.operation) if is_host_callback(op)]
    return ModuleSignature(in_avals, out_avals, tuple(aliases), tuple(donated),
                           _int_attr(module_attrs, "mhlo.num_partitions"),
                           _int_attr(module_attrs, "mhlo.num_replicas"), uses_shardy,
                           max((i + 1 for i in indices if i is not None), default=0))


def xla_bytecode(module: ir.Module | str, mesh: DeviceMesh, partitioner: Partitioner,
                 digest: bool = False) -> tuple[bytes, bool, bytes | None, ModuleSignature]:
    """What XLA is given to compile ``module`` for ``mesh``: its bytecode, whether it is for
    Shardy, its digest (where ``digest``) and its signature (see :func:`_xla_bytecode`).
    ``module`` is a module object (from any context), copied rather than changed, or its text."""
    if isinstance(module, str):
        with make_context():
            try:
                parsed = ir.Module.parse(module)
            except ir.MLIRError as error:
                raise LoweringError(f"cannot parse the module text: {error}") from None
            signature = read_signature(parsed)
            return *_xla_bytecode(parsed.operation, signature, mesh, partitioner, digest), signature
    with module.context:
        signature = read_signature(module)
        return *_xla_bytecode(module.operation.clone(), signature, mesh, partitioner, digest), signature


def _xla_bytecode(module: ir.Operation, signature: ModuleSignature, mesh: DeviceMesh, partitioner: Partitioner,
                  digest: bool) -> tuple[bytes, bool, bytes | None]:
    """``module`` (changed in place) as the bytecode XLA compiles, whether for Shardy, and
    (where ``digest``) a digest of it without source locations (equal programs from
    different places are equal).

    First the passes that keep XLA (jaxlib 0.10.2) from computing wrong values or adding
    collectives: ``alpa-clamp-dynamic-slice-starts`` (its simplifier folds the
    partitioner's slices of a dynamic slice with the wrong clamp),
    ``alpa-reshape-degenerate-transposes`` (its import drops the sharding of such a
    transpose), ``alpa-squeeze-broadcast-operands`` (its partitioner all-reduces a
    broadcast operand split along a size-1 dimension) and ``alpa-widen-split-contractions``
    (its partitioner rounds a 16-bit dot's partial sums before it adds them). Then, for Shardy, the
    ``mhlo.sharding`` annotations in ``sdy`` form, every op's sharding pinned by a
    closed ``sdy.sharding_constraint`` (XLA's Shardy import keeps no other op
    shardings), so that Shardy's propagation has nothing left to choose and XLA
    partitions the plan as written, as GSPMD does. Shardings that no axes of a mesh of
    this shape express (a permuted device order) have no ``sdy`` form: such a module
    stays with GSPMD.
    """
    for xla_workaround in (ClampDynamicSliceStartsPass(), ReshapeDegenerateTransposesPass(),
                           SqueezeBroadcastOperandsPass(), WidenSplitContractionsPass()):
        xla_workaround.apply(module, Diagnostics([]))
    use_shardy = signature.uses_shardy
    if partitioner == "shardy" and not use_shardy:
        exported = module.clone()
        # The shardings number partitions: row-major positions of a mesh of this shape.
        if not export_shardings(exported, DeviceMesh(mesh.shape, axis_names=mesh.axis_names), constrain_results=True):
            module, use_shardy = exported, True
    output = io.BytesIO()
    module.write_bytecode(file=output)
    return output.getvalue(), use_shardy, \
        hashlib.sha256(module.get_asm(enable_debug_info=False).encode()).digest() if digest else None


def mesh_devices(mesh: DeviceMesh, devices: Sequence[jax.Device] | None = None) -> tuple[jax.Device, ...]:
    """The JAX devices of ``mesh`` in partition order (``mesh.device_ids``, row-major)."""
    available = list(devices) if devices is not None else jax.devices()
    by_id = {d.id: d for d in available}
    missing = [d for d in mesh.device_ids if d not in by_id]
    if missing:
        raise LoweringError(
            f"mesh {list(mesh.shape)} uses device ids {list(mesh.device_ids)} but devices {missing} are not "
            f"among the {len(available)} available devices (ids {sorted(by_id)}); use a smaller mesh, or on "
            "CPU set XLA_FLAGS=--xla_force_host_platform_device_count=N before importing jax"
        )
    return tuple(by_id[d] for d in mesh.device_ids)


def compile_options(mesh: DeviceMesh, use_shardy: bool) -> xc.CompileOptions:
    """SPMD build options: one replica, ``mesh.size`` partitions, partition p on ``mesh.device_ids[p]``."""
    options = xc.CompileOptions()
    build = options.executable_build_options
    build.num_replicas = 1
    build.num_partitions = mesh.size
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = use_shardy
    build.device_assignment = xc.DeviceAssignment.create(np.asarray(mesh.device_ids).reshape(1, mesh.size))
    return options


def _jax_sharding(op_sharding: Any, aval: jax.ShapeDtypeStruct, mesh: DeviceMesh,
                  jax_mesh: jax.sharding.Mesh, devices: tuple[jax.Device, ...]) -> JaxSharding:
    """XLA's sharding of one parameter/result as a NamedSharding, or a GSPMDSharding when no
    mesh axes express it (e.g. a permuted device order)."""
    hlo_sharding = xc.HloSharding.from_proto(op_sharding)
    # Shardings number partitions, i.e. row-major positions of a mesh of the same shape.
    positions = DeviceMesh(mesh.shape, axis_names=mesh.axis_names)
    try:
        spec = ShardingSpec.from_mhlo(str(hlo_sharding), positions, len(aval.shape))
    except ShardingError:
        return GSPMDSharding(devices, hlo_sharding)
    return NamedSharding(jax_mesh, spec_to_partition_spec(spec, mesh))


def default_partitioner() -> Partitioner:
    """JAX's choice: Shardy, unless ``jax.config.jax_use_shardy_partitioner`` is off."""
    return "shardy" if jax.config.jax_use_shardy_partitioner else "gspmd"


class SharedCompiles:
    """Executables shared by the programs compiled through it (one pipeline's): a module
    equal to one compiled before for as many devices, on the same client and partitioner,
    is that executable loaded onto its own devices rather than compiled again. Modules
    number devices by partition, so only the device assignment differs, and XLA
    serializes an executable and loads it with another assignment in milliseconds (a
    GPT-2 layer's stage compiles in about 0.5 s here). Equal stages on meshes of one size,
    a pipeline's repeated layers, compile once. Thread-safe: a module another thread is
    compiling is waited for. Modules with host callbacks, meshes spanning processes and
    backends that cannot serialize are compiled each time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._first: dict[tuple, concurrent.futures.Future] = {}
        self.loaded = 0  # executables loaded from an equal one rather than compiled

    def get(self, digest: bytes, placed: tuple[jax.Device, ...], options: xc.CompileOptions,
            compile_one: Callable[[], Any]) -> Any:
        """The executable of the module ``digest`` names on ``placed`` (``options``: its compile
        options); ``compile_one()`` compiles it where no equal one exists."""
        if any(d.process_index != jax.process_index() for d in placed):
            return compile_one()
        key = (digest, id(placed[0].client), len(placed), options.executable_build_options.use_shardy_partitioner)
        with self._lock:
            first = self._first.get(key)
            if first is None:
                future = self._first[key] = concurrent.futures.Future()
        if first is None:
            try:
                executable = compile_one()
            except BaseException as error:
                future.set_exception(error)
                raise
            future.set_result(executable)
            return executable
        built, client = first.result(), placed[0].client  # raises what compiling it raised
        try:
            executable = client.deserialize_executable(client.serialize_executable(built), xc.DeviceList(placed),
                                                       options)
        except Exception:  # a backend that cannot serialize or reload with another assignment
            return compile_one()
        with self._lock:
            self.loaded += 1
        return executable


def compile_module(module: ir.Module | str, mesh: DeviceMesh, devices: Sequence[jax.Device] | None = None,
                   host_callbacks: Sequence[Callable[..., Any]] = (),
                   partitioner: Partitioner | None = None, shared: SharedCompiles | None = None) -> SpmdExecutable:
    """Partition and compile ``module`` for ``mesh``.

    Args:
      module: a StableHLO module with ``mhlo.sharding`` or ``sdy.sharding`` annotations,
        as an ``ir.Module`` (any context) or text. Its entry function is ``@main``.
      mesh: the device mesh; partition ``p`` runs on device ``mesh.device_ids[p]``.
      devices: the JAX devices to pick the mesh's devices from (``jax.devices()``).
      host_callbacks: the Python callables of the module's host callbacks, in the order
        JAX lowered them (``lowered._lowering.compile_args["host_callbacks"]``).
      partitioner: ``"shardy"`` converts ``mhlo.sharding`` annotations to Shardy's and
        compiles with Shardy; ``"gspmd"`` compiles them with XLA's GSPMD propagation
        (deprecated in XLA). ``None``: :func:`default_partitioner`, as under
        ``jax.jit``. A module in ``sdy`` form always compiles with Shardy; one whose
        shardings have no ``sdy`` form (a device order no mesh axes give) with GSPMD.
      shared: where given, a module equal to one it compiled before is loaded from that one.

    Raises:
      LoweringError: the mesh needs devices that are not available, the module was
        annotated for another number of partitions, its host callbacks name callables
        that were not given, or XLA rejects the module.
    """
    partitioner = partitioner or default_partitioner()
    if partitioner not in ("shardy", "gspmd"):
        raise LoweringError(f"partitioner must be 'shardy' or 'gspmd', got {partitioner!r}")
    bytecode, use_shardy, digest, signature = xla_bytecode(module, mesh, partitioner, shared is not None)
    if signature.num_partitions is not None and signature.num_partitions != mesh.size:
        raise LoweringError(
            f"module has mhlo.num_partitions = {signature.num_partitions} but mesh {list(mesh.shape)} has "
            f"{mesh.size} devices; compile it for a mesh of {signature.num_partitions} devices or re-run "
            "the sharding passes for this mesh"
        )
    if signature.num_replicas not in (None, 1):
        raise LoweringError(f"module has mhlo.num_replicas = {signature.num_replicas}; alpa compiles one "
                            "replica with one partition per mesh device, so set it to 1")
    if signature.host_callbacks > len(host_callbacks):
        raise LoweringError(f"the module's host callbacks (jax.debug.print, io_callback, ...) call Python callable "
                            f"#{signature.host_callbacks - 1} but {len(host_callbacks)} were given; pass "
                            "host_callbacks= the callables JAX lowered the function with")
    placed = mesh_devices(mesh, devices)
    options = compile_options(mesh, use_shardy)
    try:
        compile_one = functools.partial(_compile, bytecode, placed, options, tuple(host_callbacks))
        executable = shared.get(digest, placed, options, compile_one) if digest and not signature.host_callbacks \
            else compile_one()
    except Exception as error:  # jaxlib raises JaxRuntimeError, which is not importable by a stable name
        hint = ""
        if ">= num_devices" in str(error):
            hint = ("; shardings number partitions 0..n-1 by mesh position, so write them with "
                    "spec.to_mhlo(DeviceMesh(mesh.shape)), not with the mesh's device ids")
        raise LoweringError(f"XLA could not compile the module for mesh {list(mesh.shape)}: {error}{hint}") from None
    jax_mesh = mesh.to_jax_mesh(placed)
    # A one-device executable reports no shardings (None): everything is on that device.
    replicated = NamedSharding(jax_mesh, jax.sharding.PartitionSpec())
    in_shardings = tuple(_jax_sharding(s, a, mesh, jax_mesh, placed) if s is not None else replicated
                         for s, a in zip(executable.get_parameter_shardings() or [None] * len(signature.in_avals),
                                         signature.in_avals))
    out_shardings = tuple(_jax_sharding(s, a, mesh, jax_mesh, placed) if s is not None else replicated
                          for s, a in zip(executable.get_output_shardings() or [None] * len(signature.out_avals),
                                          signature.out_avals))
    return SpmdExecutable(executable, mesh, jax_mesh, placed, signature, in_shardings, out_shardings,
                          executable.hlo_modules()[0].to_string(), tuple(host_callbacks))


def _compile(bytecode: bytes, placed: tuple[jax.Device, ...], options: xc.CompileOptions,
             host_callbacks: tuple[Callable[..., Any], ...]) -> Any:
    """XLA's loaded executable; jaxlib takes host callbacks only with a module object."""
    client = placed[0].client
    if not host_callbacks:
        return client.compile_and_load(bytecode, xc.DeviceList(placed), options)
    with make_context():
        module = ir.Module.parse(bytecode)
        return client.compile_and_load(module, executable_devices=xc.DeviceList(placed), compile_options=options,
                                       host_callbacks=list(host_callbacks))
