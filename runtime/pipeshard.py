"""Run a pipelined training step: the module ``alpa-pipeline-schedule`` wrote, on its meshes.

The module holds the stage parts (``@stage<s>_forward/_backward/_apply``, each with
its ``alpa.mesh``), ``@main`` (one micro-batch's dataflow: the stage calls and the
cross-mesh transfers between them) and one ``@mesh<k>_schedule`` per mesh (Sec. 5-6).
:class:`PipeshardExecutable` compiles every stage part for its mesh with XLA's SPMD
partitioner (:class:`MeshExecutable`) and every transfer into its collective programs
(:class:`CrossMeshTransfer`), then, per call, executes the per-mesh instruction streams
in the rendezvous order of :func:`interleave`:

- ``run``: the stage part on micro-batch ``m``; a batch argument is cut to its ``m``-th
  slice along the leading dimension, every other argument is passed whole;
- ``send``/``recv``: the transfer's programs run once, when the pair meets (over the
  union of both meshes' devices); ``all_gather`` is part of those programs;
- ``accumulate``: fold micro-batch ``m``'s values into the step's means or sums (one
  program, compiled with the stages); ``free``: drop the buffers; ``apply``: the apply part.

Device ids in the module (meshes and transfer plans) are positions in the cluster
(``0 .. n-1``, host-major); ``devices[p]`` is the JAX device of position ``p``, and the
runtime uses its ``.id`` (with several CPU processes, process 1's devices are 2048..).
JAX dispatches asynchronously, so the stages of a clock run at the same time on their
devices while Python walks on (but see below for CPU).

On CPU the runtime waits for every program before it launches the next on its mesh:
XLA:CPU runs the partitions of all programs in flight in one shared thread pool, and two
programs with collectives in flight on the same devices can hold its threads while
waiting for each other's partitions (seen as ``InProcessCommunicator::CollectivePermute``
stuck, then an abort). So that the meshes still run at once, each mesh walks its own
stream in a thread (``concurrent_meshes``, ``runtime/mesh_threads.py``), meeting the
others at transfers; no two programs in flight then share a device. On GPUs the
programs are only dispatched, so the stages of a clock overlap from the one order.

Transfers that are equal (the same plan between the same shardings, e.g. every layer's
activations) share one :class:`CrossMeshTransfer`, so their programs compile once.

**Multi-controller** (one process per host, ``jax.distributed``; see
``runtime/distributed.py``). Every process builds the executable from the same module and
walks the same global order; it compiles and runs the stage parts, accumulations and frees
of the meshes that hold one of its devices, and takes part in the transfers whose source
or destination mesh holds one (a transfer is one collective program over both meshes, so
all their processes call it). Arguments: a host value (numpy, a Python scalar, or an
uncommitted ``jax.Array``, JAX's per-process value) must be the same on every process, and
each process cuts its own micro-batches of a batch argument; a committed ``jax.Array`` is
a global array (JAX's multi-controller convention), e.g. an output of the previous step:
it is used where it lies when it lies on the reading mesh, read from the local replica
when fully replicated over a superset, and otherwise moved to the reading mesh once per
step by a transfer planned like Sec. 6's (every process decides the same from the global
sharding). Outputs follow JAX's convention too: global ``jax.Array`` s with the sharding
their stage part declares on their mesh (``mhlo.sharding``), whose shards only that mesh's
processes can read; a process that holds none gets an array without addressable shards.
``alpa_mlir.to_host`` gathers them to numpy on every process.

**Failures.** An error while an instruction executes names where the step was (process,
mesh, stage, instruction): the runtime's own errors (a gloo collective whose peer died
fails at once with "Connection closed by peer") become :class:`PipeshardStepError`;
``ValueError``/``TypeError`` about arguments keep their type with that note added. A peer
that stops without dying leaves the collective waiting: a watchdog thread then ends the
process after ``instruction_timeout`` seconds without progress (exit code
:data:`~alpa_mlir.runtime.watchdog.EXIT_STEP_TIMEOUT`, after printing the same position:
the main thread cannot be interrupted inside the collective); the launcher stops the others.
A failed step returns nothing, and the caller's arrays (the parameters) stay as they were,
unless the caller donated them and an apply part that reuses their buffers had run.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import jax
import numpy as np
from jax._src.lib.mlir import ir
from jax.sharding import NamedSharding

from ..dialect.annotations import MHLO_SHARDING, funcs, get_value_attrs, value_types
from ..dialect.jax_interop import aval_of, spec_from_partition_spec, spec_to_partition_spec
from ..dialect.mesh import DeviceMesh
from ..dialect.names import APPLY
from ..dialect.schedule_ops import Accumulate, AllGather, Apply, Free, Instruction, Move, Recv, Run, Send, describe
from ..dialect.sharding import ShardingError, ShardingSpec
from ..lowering.spmd import SharedCompiles, compile_module
from ..lowering.stages import stage_mesh, stage_module
from ..plans.reshard_plan import ReshardPlan, plan_reshard
from ..plans.schedules import StepProgram, analyse, argument_number, interleave, is_argument, reusable_arguments
from ..plans.step_reader import accumulation, read_step, read_streams, read_transfers
from .mesh_executable import MeshExecutable, compile_at_once
from .mesh_threads import run_streams, split_order
from .step_values import StepValues, host_batch
from .transfer import CrossMeshTransfer
from .watchdog import Watchdog

# Without a setting, the watchdog runs only when several processes drive the meshes.
DEFAULT_MULTI_CONTROLLER_TIMEOUT_S = 600.0


class PipeshardStepError(RuntimeError):
    """A step failed while executing an instruction; the message says where and why."""


@dataclass(frozen=True, slots=True)
class Placement:
    """A value's global layout: shape and dtype, sharded as ``spec`` on ``mesh`` (JAX device ids)."""

    shape: tuple[int, ...]
    dtype: np.dtype
    mesh: DeviceMesh
    spec: ShardingSpec
    sharding: NamedSharding

    @classmethod
    def of(cls, shape: Sequence[int], dtype: Any, sharding: NamedSharding) -> Placement:
        mesh = sharding.mesh
        ids = DeviceMesh(tuple(mesh.devices.shape), tuple(d.id for d in mesh.devices.flat), tuple(mesh.axis_names))
        spec = spec_from_partition_spec(sharding.spec, ids, len(shape))
        return cls(tuple(shape), np.dtype(dtype), ids, spec, sharding)

    def absent(self) -> jax.Array:
        """The value as a process that holds none of its devices sees it: no addressable shards."""
        return jax.make_array_from_single_device_arrays(self.shape, self.sharding, [], dtype=self.dtype)


class PipeshardExecutable:
    """A scheduled pipeline module, compiled for its meshes; call it with ``@main``'s flat arguments.

    Args:
      module: the output of ``alpa-pipeline-schedule`` (after stage construction and,
        usually, ``alpa-cross-mesh-resharding``).
      num_micro_batches: B; must equal the schedules' ``alpa.num_micro_batches``.
      batch_args: flat argument numbers whose leading dimension is the batch: the
        call passes the whole batch, the stages see ``1/B`` of it each.
      devices: the cluster's devices in position order (``jax.devices()``).
      instruction_timeout: seconds one instruction may take before the watchdog ends the
        process; ``None``: :data:`DEFAULT_MULTI_CONTROLLER_TIMEOUT_S` when the devices
        span several processes, no watchdog otherwise; ``0``: no watchdog.
      donated_args: flat argument numbers the caller gives up (``donate_argnums``): an
        apply part that reads one last writes its update into its buffer
        (``schedules.reusable_arguments``), so a step's peak memory holds one copy of
        the parameters and optimizer state, not two.
      host_callbacks: the Python callables the stage parts' host callbacks (``jax.debug.print``,
        ``io_callback``) index, as JAX lowered the step (``compile_module``'s).
      concurrent_meshes: walk each mesh's instruction stream in a thread of its own
        (``runtime/mesh_threads.py``), so that the meshes run at once and meet at transfers,
        rather than the one global order; for one process only. ``None``: on CPU with one
        process (where every program is waited for, see above), not elsewhere (programs are
        only dispatched, so the meshes already run at once). Kept as the attribute
        ``concurrent_meshes``, which may be changed between calls.
      concatenated: flat result numbers of ``@main`` that are per-example (their leading
        dimension the micro-batch): the call returns the micro-batches' copies joined along
        it, the whole batch's, rather than their mean or sum.
    """

    def __init__(self, module: ir.Module, num_micro_batches: int, batch_args: Sequence[int],
                 devices: Sequence[jax.Device] | None = None, instruction_timeout: float | None = None,
                 donated_args: Sequence[int] = (), *, host_callbacks: Sequence[Callable] = (),
                 concurrent_meshes: bool | None = None, concatenated: Sequence[int] = ()) -> None:
        self.devices = tuple(devices if devices is not None else jax.devices())
        self.num_micro_batches = num_micro_batches
        self.batch_args = frozenset(batch_args)
        self.process = jax.process_index()
        self.multi_controller = any(d.process_index != self.process for d in self.devices)
        self._local = frozenset(d.id for d in self.devices if d.process_index == self.process)
        if instruction_timeout is None:
            instruction_timeout = DEFAULT_MULTI_CONTROLLER_TIMEOUT_S if self.multi_controller else 0.0
        if instruction_timeout < 0:
            raise ValueError(f"instruction_timeout must be a number of seconds >= 0, got {instruction_timeout}")
        self.instruction_timeout = float(instruction_timeout)
        step = read_step(module.operation)
        self.program = step.program
        self.flow = analyse(self.program)
        streams = read_streams(module.operation)
        for k, stream in streams.items():
            if stream.num_micro_batches != num_micro_batches:
                raise ValueError(f"@mesh{k}_schedule is for {stream.num_micro_batches} micro-batches, not "
                                 f"{num_micro_batches}")
        self.accumulate = accumulation(streams)
        self._concatenated = _per_example(self.program, concatenated)
        # Every process walks the same order; run it once here (it also rejects a deadlock).
        self.order = list(interleave(self.flow, {k: s.instructions for k, s in streams.items()}))
        self.meshes = {k: self._devices_of(s.mesh) for k, s in streams.items()}
        process_of = {d.id: d.process_index for d in self.devices}
        for t in self.flow.transfers.values():
            ids = self.meshes[t.src_mesh].device_ids + self.meshes[t.dst_mesh].device_ids
            if isinstance(t.key, Move) and len({process_of[d] for d in ids}) > 1:
                raise ValueError(f"mesh {t.dst_mesh} reads {t.source} from mesh {t.src_mesh} without a transfer, "
                                 "but the two meshes are driven by different processes; run "
                                 "alpa-cross-mesh-resharding so that every cross-mesh value has one")
        self.declared = self._declared_placements(module)
        donors = reusable_arguments(self.program, self.order, frozenset(donated_args) - self.batch_args)
        stages = {call.callee: stage_module(module, call.callee, donors.get(call.callee, ()))
                  for call in self.program.calls if self.holds(self.flow.mesh_of[call.stage])}  # what it runs
        self._programs: dict[str, CrossMeshTransfer] = {}
        position = {p: d.id for p, d in enumerate(self.devices)}
        self.transfers = {t: self._transfer(_plan_on_devices(spec.plan, position), self._devices_of(spec.src_mesh),
                                            spec.src_spec, self._devices_of(spec.dst_mesh), spec.dst_spec, spec.dtype)
                          for t, spec in read_transfers(module.operation).items()}
        self._carriers: dict[tuple, CrossMeshTransfer] = {}  # transfers of arguments between meshes
        self._placements: dict[str, Placement] = {}
        self._producers = {name: call for call in self.program.calls for name in call.results}
        accumulated = {tuple(n for n in i.values if n not in self._concatenated) for k, i in self.order
                       if isinstance(i, Accumulate) and self.holds(k)} - {()}
        self.shared = SharedCompiles()  # equal stages on meshes of one size compile once
        compiled = compile_at_once(  # the transfers' and accumulations' programs too, rather than in the first step
            {callee: functools.partial(compile_module, text, self._devices_of(mesh), self.devices, host_callbacks,
                                       shared=self.shared) for callee, (text, mesh) in stages.items()} |
            {id(t): functools.partial(t.compile, self.shared) for t in self._programs.values()
             if not self._local.isdisjoint(t.src_devices + t.dst_devices)} |
            {(values, first): functools.partial(self._compile_accumulation, values, first)
             for values in accumulated for first in (True, False)[:1 + (num_micro_batches > 1)]})
        self.executables = {callee: MeshExecutable(compiled[callee]) for callee in stages}
        self._accumulations = {key: compiled[key] for key in compiled if isinstance(key, tuple)}
        self.num_args = len(list(step.main.regions[0].blocks[0].arguments))
        self.synchronous = self.devices[0].platform == "cpu"
        # Per mesh, what runs it (runtime/step_model.py): its own hardware on GPUs; on CPU its
        # process, whose meshes share the process's cores. Meshes of one clock run one at a time.
        self.clocks = {k: process_of[mesh.device_ids[0]] if self.synchronous else k for k, mesh in self.meshes.items()}
        if concurrent_meshes and self.multi_controller:
            raise ValueError("concurrent_meshes runs the meshes of one process in threads, but these devices span "
                             "several processes (each of which already runs its own meshes); leave it unset")
        # Public: a benchmark may compare both ways on the same programs.
        self.concurrent_meshes = self.synchronous and not self.multi_controller if concurrent_meshes is None \
            else concurrent_meshes
        self._mesh_threads = concurrent.futures.ThreadPoolExecutor(len(streams), "alpa-mesh") \
            if len(streams) > 1 and not self.multi_controller else None
        self._streams = split_order(self.order)  # what each mesh's thread walks
        self._watchdog: Watchdog | None = None

    def _compile_accumulation(self, values: tuple[str, ...], first: bool) -> jax.stages.Compiled:
        """The program adding a micro-batch's ``values`` into their means or sums so far (``first``: none yet)."""
        b = self.num_micro_batches if self.accumulate == "mean" else 1  # x / 1 is x, exactly
        add = jax.jit(lambda sums, new: tuple(x / b if s is None else s + x / b for s, x in zip(sums, new)))
        new = tuple(jax.ShapeDtypeStruct(p.shape, p.dtype, sharding=p.sharding)
                    for p in map(self.result_placement, values))
        return add.lower((None,) * len(values) if first else new, new).compile()

    def _devices_of(self, mesh: DeviceMesh) -> DeviceMesh:
        """``mesh`` with its cluster positions replaced by the JAX device ids they stand for."""
        try:
            return replace(mesh, device_ids=tuple(self.devices[p].id for p in mesh.device_ids))
        except IndexError:
            raise ValueError(f"a mesh uses cluster positions {list(mesh.device_ids)} but only {len(self.devices)} "
                             "devices were given") from None

    def _transfer(self, plan: ReshardPlan, src_mesh: DeviceMesh, src_spec: ShardingSpec, dst_mesh: DeviceMesh,
                  dst_spec: ShardingSpec, dtype: Any) -> CrossMeshTransfer:
        """The transfer for ``plan``; equal transfers (every layer's activations, say) share one,
        and so its compiled programs."""
        key = repr((plan, src_mesh, src_spec, dst_mesh, dst_spec, np.dtype(dtype)))
        if key not in self._programs:
            self._programs[key] = CrossMeshTransfer(plan, src_mesh, src_spec, dst_mesh, dst_spec, dtype,
                                                    devices=self.devices)
        return self._programs[key]

    def holds(self, mesh: int) -> bool:
        """Whether this process drives a device of mesh ``mesh`` (and so runs its instructions)."""
        return not self._local.isdisjoint(self.meshes[mesh].device_ids)

    def _declared_placements(self, module: ir.Module) -> dict[str, tuple[tuple[Placement, ...], tuple[Placement, ...]]]:
        """Per stage part, the placements its arguments and results declare (``mhlo.sharding``,
        written against the mesh's positions; none, or one that no mesh axes express, is
        replicated): what every process knows about values it does not hold."""
        callees = {c.callee for c in self.program.calls}
        declared = {}
        for func in funcs(module.operation):
            name = ir.StringAttr(func.attributes["sym_name"]).value
            if name not in callees:
                continue
            positions = stage_mesh(func)
            mesh = self._devices_of(positions)
            jax_mesh = mesh.to_jax_mesh(self.devices)
            sides = []
            for which in ("arg_attrs", "res_attrs"):
                placements = []
                for i, (kind, attrs) in enumerate(zip(value_types(func, which), get_value_attrs(func, which))):
                    aval = aval_of(kind, f"value {i} of @{name}")
                    spec = ShardingSpec.replicated(len(aval.shape))
                    if MHLO_SHARDING in attrs:
                        with contextlib.suppress(ShardingError):
                            spec = ShardingSpec.from_mhlo(ir.StringAttr(attrs[MHLO_SHARDING]).value,
                                                          DeviceMesh(mesh.shape, axis_names=mesh.axis_names),
                                                          len(aval.shape))
                    sharding = NamedSharding(jax_mesh, spec_to_partition_spec(spec, mesh))
                    placements.append(Placement(tuple(aval.shape), np.dtype(aval.dtype), mesh, spec, sharding))
                sides.append(tuple(placements))
            declared[name] = (sides[0], sides[1])
        return declared

    def __call__(self, *args: Any) -> list[jax.Array]:
        if len(args) != self.num_args:
            raise TypeError(f"expected {self.num_args} positional arguments, got {len(args)}")
        step = StepValues(args, self._split_batch(args), self._concatenated)
        if self.instruction_timeout and self._watchdog is None:
            self._watchdog = Watchdog(self.instruction_timeout, self.where)
        try:
            if self.concurrent_meshes and self._mesh_threads is not None:
                run_streams(self._streams, functools.partial(self._execute, step), self._mesh_threads)
            else:
                for index, (k, instruction) in enumerate(self.order):
                    self._execute(step, k, instruction, index)
            return [self._output(name, step.read) for name in self.program.returned]
        finally:
            if self._watchdog is not None:
                self._watchdog.watch(None)

    def _execute(self, step: StepValues, k: int, instruction: Instruction, index: int) -> None:
        """Execute instruction ``index`` of the order, ``instruction`` of mesh ``k``, on ``step``'s values."""
        match instruction:
            case Run() | Apply():
                m = instruction.micro_batch if isinstance(instruction, Run) else None
                call = self.flow.calls[instruction.callee]
                if self.multi_controller:
                    self._place_arguments(call.callee, call.operands, step, k, index)
                if not self.holds(k):
                    return
                with self._at(k, instruction, index):
                    outputs = self.executables[call.callee](*(step.read(n, m, k) for n in call.operands))
                    step.store.update(((name, m), value) for name, value in zip(call.results, outputs))
                    self._wait(outputs)
            case Send(key, m):
                transfer = self.flow.transfers[key]
                sending, receiving = self.holds(transfer.src_mesh), self.holds(transfer.dst_mesh)
                if not (sending or receiving):
                    return
                # A process on the destination side only is at the recv.
                at = (k, instruction) if sending else (transfer.dst_mesh, Recv(key, m))
                with self._at(*at, index):
                    value = step.read(transfer.source, m, k) if sending else None
                    if not isinstance(key, Move):  # a move keeps the value: the consumer places it
                        cross = self.transfers[key]
                        if not sending:
                            value = Placement.of(cross.shape, cross.dtype, cross.src_sharding).absent()
                        value = cross(value)
                    if receiving:
                        step.store[transfer.result, m] = value
                        self._wait(value)
            case Recv() | AllGather():
                pass  # done by the send: one collective program for both sides
            case Accumulate(values, m) if self.holds(k):
                step.accumulate(values, m, self._accumulations)
            case Free(values, m) if self.holds(k):
                step.free(values, m)

    @contextlib.contextmanager
    def _at(self, mesh: int, instruction: Instruction | str, index: int) -> Iterator[None]:
        """Run the body as instruction ``index`` of the step, on ``mesh``: watched, and its errors
        say where."""
        position = (mesh, instruction, index)
        if self._watchdog is not None:
            self._watchdog.watch(position)
        try:
            yield
        except (ValueError, TypeError) as error:
            error.add_note(f"(pipeshard step at {self.where(*position)})")
            raise
        except Exception as error:  # XLA and gloo raise JaxRuntimeError
            hint = ("; another process of the cluster has probably failed: see its output"
                    if self.multi_controller else "")
            raise PipeshardStepError(f"pipeshard step failed at {self.where(*position)}: {error}{hint}") from error

    def where(self, mesh: int, instruction: Instruction | str, index: int) -> str:
        """Where a step is, in words: ``process 0, mesh 1 (stages 1, 3), instruction 7 of 40: run
        @stage1_forward (micro-batch 2)``."""
        text = instruction if isinstance(instruction, str) else describe(instruction)
        if isinstance(instruction, Send | Recv) and isinstance(instruction.transfer, int):
            transfer = self.flow.transfers[instruction.transfer]
            text += f" from mesh {transfer.src_mesh} to mesh {transfer.dst_mesh}"
        stages = ", ".join(str(s) for s, k in enumerate(self.flow.mesh_of) if k == mesh)
        return (f"process {self.process}, mesh {mesh} (stage{'s' if ',' in stages else ''} {stages}), instruction "
                f"{index + 1} of "
                f"{len(self.order)}: {text}")

    def _wait(self, values: Any) -> None:
        if self.synchronous:
            jax.block_until_ready(values)

    def result_placement(self, name: str) -> Placement:
        """How a stage call's result or a transfer's value is declared to lie."""
        if name not in self._placements:
            producer = self._producers.get(name)
            if producer is not None:
                placement = self.declared[producer.callee][1][producer.results.index(name)]
            else:
                key = next(t.key for t in self.flow.transfers.values() if t.result == name)
                cross = self.transfers[key]  # an explicit one: a move's value keeps its producer's name
                placement = Placement.of(cross.shape, cross.dtype, cross.dst_sharding)
            self._placements[name] = placement
        return self._placements[name]

    def _output(self, name: str, read: Callable[..., Any]) -> Any:
        """Returned value ``name``: the argument as given, or a global array with its declared
        sharding (on every process the same, whether or not it holds a shard)."""
        if is_argument(name):
            return read(name, None, -1)
        placement = self.result_placement(name)
        if name in self._concatenated:  # every micro-batch's rows
            placement = replace(placement, shape=(placement.shape[0] * self.num_micro_batches, *placement.shape[1:]))
        producer = self._producers.get(name)
        home = self.flow.mesh_of[producer.stage] if producer else \
            next(t.dst_mesh for t in self.flow.transfers.values() if t.result == name)
        if not self.holds(home):
            return placement.absent()
        value = read(name, None, home)
        if not value.sharding.is_equivalent_to(placement.sharding, len(placement.shape)):
            value = jax.device_put(value, placement.sharding)
        return value

    def _carry(self, value: jax.Array | None, source: Placement, target: Placement) -> jax.Array:
        """An argument moved between disjoint meshes by a transfer planned as Sec. 6's; every
        process of either mesh calls it (``value`` is ``None`` where it holds no source device)."""
        key = (source.mesh, source.spec, target.mesh, target.spec, source.shape, source.dtype)
        if key not in self._carriers:
            plan = plan_reshard(source.shape, source.spec, source.mesh, target.spec, target.mesh)
            self._carriers[key] = self._transfer(plan, source.mesh, source.spec, target.mesh, target.spec,
                                                 source.dtype)
        if value is None:
            value = source.absent()
        elif not value.sharding.is_equivalent_to(source.sharding, len(source.shape)):
            value = jax.device_put(value, source.sharding)
        out = self._carriers[key](value)
        self._wait(out)
        return out

    def _place_arguments(self, callee: str, operands: Sequence[str], step: StepValues, mesh: int,
                         index: int) -> None:
        """Make the arguments that ``callee`` (on ``mesh``) reads available there, once per step.

        Every process runs this at the same point of the order and decides from global
        metadata only, so the processes of a transfer's two meshes all call it."""
        targets = self.declared[callee][0]
        for position, name in enumerate(operands):
            number = argument_number(name)
            if number is None or number in step.micro or (number, mesh) in step.placed:
                continue
            with self._at(mesh, f"place argument {number} for @{callee}", index):
                step.placed[number, mesh] = self._argument_on(mesh, number, step.args[number], targets[position])

    def _argument_on(self, mesh: int, number: int, value: Any, target: Placement) -> Any:
        if not isinstance(value, jax.Array) or not value.committed:
            return value  # a host value, the same on every process: the executable places it
        ids = {d.id for d in value.sharding.device_set}
        mesh_ids = set(self.meshes[mesh].device_ids)
        if ids <= mesh_ids:
            return value  # on the mesh: its executables place it (within the mesh)
        if value.is_fully_replicated and mesh_ids <= ids:
            return np.asarray(value.addressable_data(0)) if self.holds(mesh) else None
        if ids.isdisjoint(mesh_ids) and isinstance(value.sharding, NamedSharding):
            if self._local.isdisjoint(ids | mesh_ids):
                return None
            source = Placement.of(value.shape, value.dtype, value.sharding)
            return self._carry(value if not self._local.isdisjoint(ids) else None, source, target)
        raise ValueError(f"argument {number} is a global array on devices {sorted(ids)}, which mesh {mesh} (devices "
                         f"{sorted(mesh_ids)}) can neither read in place nor receive whole; pass a host value, a "
                         "fully replicated array, or an array on one mesh (as the previous step returned it)")

    def _split_batch(self, args: Sequence[Any]) -> dict[int, list[Any]]:
        """Per batch argument, its micro-batches: ``B`` equal slices of the leading dimension."""
        micro = {}
        for number in sorted(self.batch_args):
            value = args[number]
            if self.multi_controller:
                value = host_batch(number, value)
            size = np.shape(value)[0] if np.ndim(value) else 0
            if size % self.num_micro_batches or size == 0:
                raise ValueError(f"batch argument {number} has leading dimension {size}, which does not divide "
                                 f"into {self.num_micro_batches} micro-batches")
            step = size // self.num_micro_batches
            micro[number] = [value[m * step:(m + 1) * step] for m in range(self.num_micro_batches)]
        return micro


def _plan_on_devices(plan: ReshardPlan, ids: dict[int, int]) -> ReshardPlan:
    """``plan`` with its cluster positions replaced by JAX device ids."""
    moves = tuple(replace(m, src_device=ids[m.src_device], dst_device=ids[m.dst_device]) for m in plan.moves)
    gathers = tuple(replace(g, devices=tuple(ids[d] for d in g.devices)) for g in plan.gathers)
    return ReshardPlan(plan.shape, moves, gathers, {ids[d]: tile for d, tile in plan.dst_tiles.items()})


def _per_example(program: StepProgram, concatenated: Sequence[int]) -> frozenset[str]:
    """The values of the results ``concatenated`` that the micro-batches make (an argument
    is whole already); refused where an apply part reads or computes one."""
    applied = {n: c.callee for c in program.calls if c.kind == APPLY for n in (*c.operands, *c.results)}
    for k in concatenated:
        if program.returned[k] in applied:
            raise ValueError(f"result {k} is per-example, but {applied[program.returned[k]]}, which runs "
                             "once on the micro-batches' combined values, computes or reads it: compute it in "
                             "the forward pass (return it from the loss function, has_aux=True)")
    return frozenset(program.returned[k] for k in concatenated if not is_argument(program.returned[k]))
