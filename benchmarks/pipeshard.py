"""PipeshardParallel on 8 CPU devices: step time against Eq. 2, runtime overhead, Sec. 6's
cross-mesh resharding, the peak memory of 1F1B against GPipe, and interleaved 1F1B against 1F1B.

Five measurements, each a table in ``OUT.md`` (all numbers in ``OUT.json``):

1. **Step time.** An MLP and a small GPT (``alpa_mlir.models``) pipelined on 2 and 4
   stages (equal submeshes of the 8 devices, layers clustered by Sec. 5.2's DP), 1F1B,
   B micro-batches: the median step against the plan's predicted latency T* (Eq. 2, with
   ``alpa-stage-construction{cost-model=profile}`` so the stage latencies are CPU seconds),
   and against what the CPU runtime can reach (its meshes run in threads but share the
   host's cores: B times the sum of the stage latencies), and with the meshes in threads
   against one global order. References: the same step under ``jax.jit`` on one device
   and under ``ShardParallel`` on all eight.
2. **Runtime overhead.** A tiny MLP, so the programs are trivial: step time per
   instruction of ``PipeshardExecutable.order``, and the part spent outside the
   programs (every program call timed from outside).
3. **Cross-mesh resharding** (Fig. 11 scaled down): ``CrossMeshTransfer`` with and
   without local all-gather for a few (mesh, spec) -> (mesh, spec) cases, 1-64 MB:
   bytes across meshes, ``ppermute`` rounds, time.
4. **Peak memory, 1F1B vs GPipe.** The peak bytes per device of live per-micro-batch
   values per mesh, simulated by walking the real instruction order (sizes from the
   stage programs' output shardings), and sampled from ``jax.live_arrays()`` while a
   step runs.
5. **Interleaved 1F1B vs 1F1B** (beyond the paper). The same model clustered into
   ``S v`` layers on the same ``S`` equal submeshes: 1F1B with ``S`` stages of ``v``
   layers, interleaved 1F1B with ``S v`` stages of one layer, stage ``k`` on mesh
   ``k mod S``. Bubble fraction and clocks from the clock tables (unit-time chunks),
   activations in flight per mesh (clock table, in whole stages' worth), peak memory per
   mesh (part 4's simulation and sampling) and the measured step.

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python benchmarks/pipeshard.py --quick
    XLA_FLAGS=--xla_force_host_platform_device_count=8 python benchmarks/pipeshard.py
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import math
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # XLA's GSPMD deprecation warning, once per compile
if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()

import jax  # noqa: E402
import numpy as np  # noqa: E402

from alpa_mlir import ShardParallel, parallelize  # noqa: E402
from alpa_mlir.dialect.jax_interop import spec_to_named_sharding  # noqa: E402
from alpa_mlir.dialect.mesh import DeviceMesh  # noqa: E402
from alpa_mlir.dialect.schedule_ops import Free, Move, Run, Send  # noqa: E402
from alpa_mlir.dialect.sharding import ShardingSpec  # noqa: E402
from alpa_mlir.models import GPTConfig, MLPConfig, build  # noqa: E402
from alpa_mlir.passes.inter_op.stage_construction import StageConstructionPass  # noqa: E402
from alpa_mlir.pipeshard import AutoLayerOption, ManualStageOption, PipeshardParallel  # noqa: E402
from alpa_mlir.plans.clock_tables import bubble_fraction, clock_table, in_flight  # noqa: E402
from alpa_mlir.plans.reshard_plan import ReshardPlan, plan_bytes, plan_reshard, volume  # noqa: E402
from alpa_mlir.runtime.pipeshard import PipeshardExecutable  # noqa: E402
from alpa_mlir.runtime.transfer import CrossMeshTransfer  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from ilp_scaling import command_line, machine_info, markdown_table, save  # noqa: E402

MB = 2**20


@dataclasses.dataclass(frozen=True)
class Workload:
    """A model step and its arguments: ``state`` leading arguments that the step returns updated."""

    name: str
    step: Callable
    args: tuple
    state: int
    batch_argnums: tuple[int, ...]
    delta: float  # Sec. 5.2's FLOP tolerance for the layer clustering


# The models as the tables' settings name them; every one fits a 2-core CPU's time budget.
WORKLOADS = {
    "mlp": ("MLPConfig(sizes=(512,) + (1024,) * 8 + (512,)), batch 256, SGD; layer clustering delta 0.3",
            lambda: build(MLPConfig(sizes=(512,) + (1024,) * 8 + (512,))), 256, 0.3),
    "gpt": ("GPTConfig(vocab=1024, hidden=128, layers=4, heads=4, seq_len=64), batch 16, Adam; delta 0.6 "
            "(the default)", lambda: build(GPTConfig(vocab=1024, hidden=128, layers=4, heads=4, seq_len=64)), 16, 0.6),
    # Programs that do almost nothing, so that the runtime's own cost shows.
    "tiny-mlp": ("MLPConfig(sizes=(8, 8, 8, 8, 8)), batch 16, SGD", lambda: build(MLPConfig(sizes=(8,) * 5)), 16, 0.6),
}


def workload(name: str) -> Workload:
    _, make, batch, delta = WORKLOADS[name]
    model = make()
    args = model.init(jax.random.key(0), batch)
    state = len(args) - 1  # (params, batch) or (params, opt_state, batch)
    return Workload(name, model.train_step, args, state, (state,), delta)


@dataclasses.dataclass(frozen=True)
class BenchmarkPipeshard(PipeshardParallel):
    """PipeshardParallel with two options of ``alpa-stage-construction`` the API does not
    expose: ``cost-model`` (``profile``: stage latencies measured, so that the plan's Eq. 2
    is in this machine's seconds; the analytic default assumes 1e13 FLOP/s) and
    ``logical-mesh-space=physical`` (each submesh's own shape: one plan per set of
    stages, so a noisy timing cannot make two compilations pick different plans)."""

    cost_model: str = "profile"

    def passes(self, hosts: int, per_host: int, on_plan: Any = None, state: tuple = (), accumulate: str = "mean",
               device_memory: float = 0.0) -> list:
        return [dataclasses.replace(p, cost_model=self.cost_model, logical_mesh_space="physical", profile_repeats=5)
                if isinstance(p, StageConstructionPass) else p
                for p in super().passes(hosts, per_host, on_plan, state, accumulate, device_memory)]


def pipelined(work: Workload, stages: int, micro_batches: int, schedule: str = "1f1b",
              cost_model: str = "profile") -> Any:
    """The step on ``stages`` equal submeshes of the 8 devices, forward clustered into as many layers."""
    method = BenchmarkPipeshard(
        num_micro_batches=micro_batches, layer_option=AutoLayerOption(layer_num=stages, delta=work.delta),
        stage_option=ManualStageOption((1,) * stages, ((1, 8 // stages),) * stages),
        pipeline_schedule=schedule, batch_argnums=work.batch_argnums, cost_model=cost_model)
    return parallelize(work.step, method=method)


def step_times(step: Callable, work: Workload, warmup: int, repeat: int) -> tuple[list[float], tuple]:
    """Seconds of ``repeat`` steps after ``warmup``, each fed the state the previous one
    returned (as training does: the parameters stay on their meshes); and the last arguments."""
    args, times = work.args, []
    for i in range(warmup + repeat):
        start = time.perf_counter()
        out = jax.block_until_ready(step(*args))
        if i >= warmup:
            times.append(time.perf_counter() - start)
        args = (*out[:work.state], *work.args[work.state:])
    return times, args


def threads_and_order(step: Callable, executable: PipeshardExecutable, work: Workload, warmup: int,
                      repeat: int) -> tuple[list[float], list[float], tuple]:
    """Step seconds with a thread per mesh (the CPU default) and with the one global order
    (``concurrent_meshes=False``), on the same programs, in alternating rounds so that both
    see the same load; and the last arguments."""
    times: dict[bool, list[float]] = {True: [], False: []}
    args = work.args
    for round_ in range(2):
        for threads in (True, False):
            executable.concurrent_meshes = threads
            some, args = step_times(step, dataclasses.replace(work, args=args), warmup if round_ == 0 else 0,
                                    (repeat + 1) // 2)
            times[threads] += some
    executable.concurrent_meshes = True
    return times[True], times[False], args


class CallTimer:
    """Times every stage-program and transfer call of a :class:`PipeshardExecutable` from
    outside, by wrapping its ``executables`` and ``transfers`` entries while active;
    ``after`` (if given) runs after every call, outside the timed part."""

    def __init__(self, executable: PipeshardExecutable, after: Callable[[], None] | None = None) -> None:
        self.executable, self.after = executable, after
        self.calls: list[tuple[str, Any, float]] = []  # ("run" | "transfer", callee or key, seconds)

    def _wrap(self, kind: str, key: Any, program: Callable) -> Callable:
        def timed(*args: Any) -> Any:
            start = time.perf_counter()
            out = jax.block_until_ready(program(*args))
            self.calls.append((kind, key, time.perf_counter() - start))
            if self.after is not None:
                self.after()
            return out
        return timed

    def __enter__(self) -> CallTimer:
        self._saved = dict(self.executable.executables), dict(self.executable.transfers)
        for name, program in self._saved[0].items():
            self.executable.executables[name] = self._wrap("run", name, program)
        for key, transfer in self._saved[1].items():
            self.executable.transfers[key] = self._wrap("transfer", key, transfer)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.executable.executables.update(self._saved[0])
        self.executable.transfers.update(self._saved[1])

    def seconds(self, kind: str, keys: Any = None) -> float:
        return sum(s for k, key, s in self.calls if k == kind and (keys is None or key in keys))


def breakdown(executable: PipeshardExecutable, step: Callable, args: tuple) -> dict:
    """One step with every program call timed: the seconds of forward/backward runs, apply
    parts and transfers; each stage's t_i (median forward + median backward over its
    micro-batches) and Eq. 2 with those t_i."""
    with CallTimer(executable) as timer:
        start = time.perf_counter()
        jax.block_until_ready(step(*args))
        total = time.perf_counter() - start
    if not timer.calls:
        raise RuntimeError("no program call was timed: PipeshardExecutable no longer calls its programs through "
                           "its executables/transfers dicts; update CallTimer")
    calls = {c.callee: c for c in executable.flow.calls.values()}
    applies = {n for n, c in calls.items() if c.kind == "apply"}
    per_part: dict[str, list[float]] = defaultdict(list)
    for kind, key, seconds in timer.calls:
        if kind == "run":
            per_part[key].append(seconds)
    latencies = []
    for s in range(executable.flow.num_stages):
        latencies.append(sum(statistics.median(per_part[n]) for n, c in calls.items()
                             if c.stage == s and c.kind != "apply" and per_part[n]))
    b = executable.num_micro_batches
    runs = timer.seconds("run") - timer.seconds("run", applies)
    return {"instrumented_step": total, "run_seconds": runs, "apply_seconds": timer.seconds("run", applies),
            "transfer_seconds": timer.seconds("transfer"), "measured_stage_latencies": latencies,
            "eq2_measured": sum(latencies) + (b - 1) * max(latencies),
            "outside_programs": total - timer.seconds("run") - timer.seconds("transfer"),
            "program_calls": len(timer.calls),
            "per_call": (timer.seconds("run") + timer.seconds("transfer")) / max(len(timer.calls), 1)}


def count_instructions(executable: PipeshardExecutable) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for _, instruction in executable.order:
        counts[type(instruction).__name__.lower()] += 1
    return dict(counts)


# ----------------------------------------------------------------------------- 1 and 2


def measure_pipeline(work: Workload, stages: int, micro_batches: int, warmup: int, repeat: int,
                     compiled: dict) -> dict:
    """Part 1's row; the pipelined step is kept in ``compiled`` under (model, S, B, "1f1b")."""
    row: dict[str, Any] = {"model": work.name, "stages": stages, "micro_batches": micro_batches}
    step = compiled[work.name, stages, micro_batches, "1f1b"] = pipelined(work, stages, micro_batches)
    start = time.perf_counter()
    jax.block_until_ready(step(*work.args))
    row["compile_seconds"] = time.perf_counter() - start
    plan = step.get_plan(*work.args)
    executable = step.get_executable(*work.args)
    times, ordered, last = threads_and_order(step, executable, work, warmup, repeat)
    t = [s.latency for s in plan.stages]
    row.update(step_seconds=statistics.median(times), step_seconds_all=times,
               ordered_seconds=statistics.median(ordered), predicted=plan.latency,
               plan_stage_latencies=t, serial_prediction=micro_batches * sum(t),
               logical_meshes=["x".join(map(str, s.logical_mesh)) for s in plan.stages],
               instructions=len(executable.order), instruction_counts=count_instructions(executable))
    executable.concurrent_meshes = False  # every program call timed alone: one at a time
    row.update(breakdown(executable, step, last))
    executable.concurrent_meshes = True
    step_level = executable.flow.step_transfers
    sizes = {key: math.prod(transfer.shape) for key, transfer in executable.transfers.items()}
    row["transfers_per_micro_batch"] = sum(key not in step_level for key in sizes)
    row["transfers_per_step"] = sum(key in step_level for key in sizes)
    row["scalar_transfers_per_step"] = sum(key in step_level and n == 1 for key, n in sizes.items())
    # The same stages priced by the device profile instead of timed (the API's default costs).
    modelled = pipelined(work, stages, micro_batches, cost_model="analytic").get_plan(*work.args)
    ratios = [m.latency / p for m, p in zip(modelled.stages, t)]
    row.update(modelled_predicted=modelled.latency, modelled_stage_latencies=[m.latency for m in modelled.stages],
               modelled_ratio_cell=f"{min(ratios):.2f}-{max(ratios):.2f}")
    row["ratio"] = row["step_seconds"] / row["predicted"]
    row["threads_speedup"] = row["ordered_seconds"] / row["step_seconds"]
    row["serial_ratio"] = row["step_seconds"] / row["serial_prediction"]
    # The step as the runtime runs it (runtime/step_model.py), from profiled and from modelled t_i.
    row.update(runtime_predicted=plan.step, runtime_ratio=row["step_seconds"] / plan.step,
               modelled_step=modelled.step, modelled_step_ratio=row["step_seconds"] / modelled.step)
    row["overhead_per_instruction"] = row["outside_programs"] / row["instructions"]
    row["step_per_instruction"] = row["step_seconds"] / row["instructions"]
    return row


def measure_reference(work: Workload, method: str, warmup: int, repeat: int) -> dict:
    if method == "jax.jit":
        device = jax.devices()[0]
        step = jax.jit(work.step)
        work = dataclasses.replace(work, args=jax.device_put(work.args, device))
    else:
        step = parallelize(work.step, method=ShardParallel(batch_argnums=work.batch_argnums))
    start = time.perf_counter()
    jax.block_until_ready(step(*work.args))
    compile_seconds = time.perf_counter() - start
    times, _ = step_times(step, work, warmup, repeat)
    return {"model": work.name, "method": method, "devices": 1 if method == "jax.jit" else 8,
            "compile_seconds": compile_seconds, "step_seconds": statistics.median(times), "step_seconds_all": times}


# ----------------------------------------------------------------------------- 3


@dataclasses.dataclass(frozen=True)
class ReshardCase:
    """A tensor moved from ``src_spec`` on a mesh of devices 0-3 to ``dst_spec`` on devices 4-7."""

    src_shape: tuple[int, int]
    src_spec: ShardingSpec
    dst_shape: tuple[int, int]
    dst_spec: ShardingSpec
    why: str

    @property
    def name(self) -> str:
        return f"{self.src_shape} {self.src_spec} -> {self.dst_shape} {self.dst_spec}".replace(" ", "")


# Fig. 11's setting: the two meshes on two hosts; alpa-stage-construction's defaults.
INTER_HOST_BANDWIDTH = 3.125e9  # bytes/s: 25 Gbit/s, shared by all cross-mesh traffic
INTRA_HOST_BANDWIDTH = 1e11  # bytes/s per device, for the local all-gathers

RR, S0R, S1R, RS1 = (ShardingSpec(d) for d in (((), ()), ((0,), ()), ((1,), ()), ((), (1,))))
RESHARD_CASES = (
    ReshardCase((1, 4), RS1, (1, 4), RR, "Fig. 6a (Megatron): columns over 4 devices to replicated"),
    ReshardCase((2, 2), S0R, (2, 2), RR, "rows over mesh axis 0 to replicated"),
    ReshardCase((1, 4), S1R, (2, 2), S1R, "rows over 4 devices to rows over axis 1, replicated over axis 0"),
    ReshardCase((2, 2), S0R, (2, 2), S0R, "same spec, each row block on 2 destination devices"),
    ReshardCase((1, 4), S1R, (1, 4), S1R, "control: no destination tile is replicated, so the same plan"),
)


def modelled_seconds(plan: ReshardPlan, itemsize: int) -> float:
    """The plan's time with the meshes on two hosts (Fig. 11): every move over the shared
    inter-host link, then the local all-gathers at the busiest destination device's share."""
    gathered: dict[int, float] = defaultdict(float)  # bytes each destination device receives in gathers
    for gather in plan.gathers:
        k = len(gather.devices)
        for d in gather.devices:
            gathered[d] += volume(gather.tile) * itemsize * (k - 1) / k
    return (plan_bytes(plan, itemsize) / INTER_HOST_BANDWIDTH
            + max(gathered.values(), default=0.0) / INTRA_HOST_BANDWIDTH)


def measure_reshard(case: ReshardCase, megabytes: int, repeat: int) -> dict:
    src = DeviceMesh(case.src_shape, tuple(range(4)))
    dst = DeviceMesh(case.dst_shape, tuple(range(4, 8)))
    src_spec, dst_spec, name = case.src_spec, case.dst_spec, case.name
    shape = (megabytes * MB // (4 * 1024), 1024)
    x = np.random.default_rng(0).standard_normal(shape, dtype=np.float32)
    array = jax.device_put(x, spec_to_named_sharding(src_spec, src))
    row: dict[str, Any] = {"case": name, "why": case.why, "megabytes": megabytes}
    for local_all_gather in (False, True):
        suffix = "lag" if local_all_gather else "direct"
        plan = plan_reshard(shape, src_spec, src, dst_spec, dst, local_all_gather=local_all_gather)
        transfer = CrossMeshTransfer(plan, src, src_spec, dst, dst_spec, np.float32, direct=False)  # Sec. 6's
        times = timed_transfer(transfer, array, x, repeat, name)
        row.update({f"bytes_{suffix}": transfer.bytes_moved, f"rounds_{suffix}": transfer.num_rounds,
                    f"gathers_{suffix}": len(plan.gathers), f"seconds_{suffix}": statistics.median(times),
                    f"seconds_{suffix}_all": times, f"modelled_{suffix}": modelled_seconds(plan, x.itemsize)})
    # What one process runs instead: the blocks copied between devices (runtime/device_copies.py).
    copies = CrossMeshTransfer(plan, src, src_spec, dst, dst_spec, np.float32)
    times = timed_transfer(copies, array, x, repeat, name)
    row.update({"seconds_copies": statistics.median(times), "seconds_copies_all": times})
    row["speedup"] = row["seconds_direct"] / row["seconds_lag"]
    row["modelled_speedup"] = row["modelled_direct"] / row["modelled_lag"]
    return row


def timed_transfer(transfer: CrossMeshTransfer, array: jax.Array, x: np.ndarray, repeat: int, name: str) -> list[float]:
    """Seconds of ``repeat`` calls of ``transfer`` on ``array`` (holding ``x``), after one that
    compiles and is checked."""
    out = jax.block_until_ready(transfer(array))
    if not np.array_equal(np.asarray(out), x):
        raise AssertionError(f"{name}: the transfer did not deliver the tensor")
    del out
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        jax.block_until_ready(transfer(array))
        times.append(time.perf_counter() - start)
    return times


# ----------------------------------------------------------------------------- 4


def simulated_peaks(executable: PipeshardExecutable) -> tuple[list[int], list[int]]:
    """Per mesh, the peak bytes per device of live per-micro-batch values while
    ``executable.order`` runs, and the most micro-batches with live values at once: a value
    is live from the run or transfer that makes it to the ``free`` of its mesh; its size is
    its shard under the producer's output sharding."""
    flow = executable.flow
    size: dict[str, int] = {}
    for call in flow.calls.values():
        program = executable.executables[call.callee]
        for name, aval, sharding in zip(call.results, program.out_avals, program.output_shardings):
            size[name] = math.prod(sharding.shard_shape(aval.shape)) * np.dtype(aval.dtype).itemsize
    for key, transfer in flow.transfers.items():
        if not isinstance(key, Move):
            moved = executable.transfers[key]
            size[transfer.result] = math.prod(moved.dst_sharding.shard_shape(moved.shape)) * moved.dtype.itemsize
    live: dict[tuple[int, str, int], int] = {}
    peak, flight = [0] * flow.num_meshes, [0] * flow.num_meshes
    for mesh, instruction in executable.order:
        made: list[tuple[int, str]] = []
        match instruction:
            case Run(callee, m):
                made = [(mesh, name) for name in flow.calls[callee].results]
            case Send(key, m) if m is not None:
                transfer = flow.transfers[key]
                made = [(transfer.dst_mesh, transfer.result)]
            case Free(values, m) if m is not None:
                for name in values:
                    live.pop((mesh, name, m), None)
        for where, name in made:
            live[where, name, instruction.micro_batch] = size[name]
        for k in {where for where, _ in made}:
            peak[k] = max(peak[k], sum(b for (w, _, _), b in live.items() if w == k))
            flight[k] = max(flight[k], len({m for (w, _, m) in live if w == k}))
    return peak, flight


def live_bytes(mesh_devices: list[list[int]]) -> list[int]:
    """Per mesh, the most bytes any of its devices holds in live ``jax.Array`` buffers
    (each buffer once, however many arrays share it)."""
    per_device: dict[int, int] = defaultdict(int)
    seen = set()
    for array in jax.live_arrays():
        if array.is_deleted():
            continue
        for shard in array.addressable_shards:
            key = (shard.device.id, shard.data.unsafe_buffer_pointer())
            if key not in seen:
                seen.add(key)
                per_device[shard.device.id] += shard.data.nbytes
    return [max(per_device[d] for d in devices) for devices in mesh_devices]


def measured_peaks(executable: PipeshardExecutable, step: Callable, args: tuple) -> list[int]:
    """Per mesh, the peak over one step of :func:`live_bytes`, sampled after every program
    call, less its value before the step (parameters, batch)."""
    meshes = [[d.id for d in executable.devices if d.id in mesh.device_ids] for _, mesh in
              sorted(executable.meshes.items())]
    before = live_bytes(meshes)
    peak = list(before)

    def sample() -> None:
        for k, b in enumerate(live_bytes(meshes)):
            peak[k] = max(peak[k], b)

    with CallTimer(executable, after=sample):
        out = jax.block_until_ready(step(*args))
    del out
    return [p - b for p, b in zip(peak, before)]


def measure_memory(work: Workload, stages: int, micro_batches: int, schedule: str, compiled: dict) -> dict:
    """Part 4's row, reusing part 1's step when it has one (the same plan: manual stages on
    their physical meshes, whatever the cost model)."""
    step = compiled.get((work.name, stages, micro_batches, schedule))
    if step is None:
        step = pipelined(work, stages, micro_batches, schedule, cost_model="analytic")
    _, args = step_times(step, work, 1, 0)  # compiles if new; the state moves to its meshes
    executable = step.get_executable(*work.args)
    simulated, flight = simulated_peaks(executable)
    measured = measured_peaks(executable, step, args)
    return {"model": work.name, "stages": stages, "micro_batches": micro_batches, "schedule": schedule,
            "in_flight": flight,
            "simulated_mb": [b / MB for b in simulated], "measured_mb": [b / MB for b in measured],
            "simulated_bytes": simulated, "measured_bytes": measured}


# ----------------------------------------------------------------------------- 5


def interleaved_step(work: Workload, meshes: int, virtual: int, micro_batches: int, schedule: str) -> Any:
    """The model clustered into ``meshes * virtual`` layers on ``meshes`` equal submeshes: 1F1B
    with ``virtual`` layers per stage, or interleaved 1F1B with one layer per stage."""
    layers, submeshes = meshes * virtual, ((1, 8 // meshes),) * meshes
    interleaved = schedule == "interleaved-1f1b"
    method = BenchmarkPipeshard(
        num_micro_batches=micro_batches, layer_option=AutoLayerOption(layer_num=layers, delta=work.delta),
        stage_option=ManualStageOption((1,) * layers if interleaved else (virtual,) * meshes, submeshes),
        pipeline_schedule=schedule, virtual_stages=virtual if interleaved else 1,
        batch_argnums=work.batch_argnums, cost_model="analytic")
    return parallelize(work.step, method=method)


def measure_interleaved(work: Workload, meshes: int, virtual: int, micro_batches: int, schedule: str,
                        warmup: int, *, repeat: int) -> dict:
    """Part 5's row: the clock table's bubble, clocks and activations in flight (in whole
    stages: a chunk is 1/v of one), the simulated and measured peaks, the measured step."""
    v = virtual if schedule == "interleaved-1f1b" else 1
    stages = meshes * v
    chunks = in_flight(schedule, stages, micro_batches, v)
    step = interleaved_step(work, meshes, virtual, micro_batches, schedule)
    start = time.perf_counter()
    jax.block_until_ready(step(*work.args))
    compile_seconds = time.perf_counter() - start
    times, last = step_times(step, work, warmup, repeat)
    executable = step.get_executable(*work.args)
    simulated, _ = simulated_peaks(executable)
    measured = measured_peaks(executable, step, last)
    step_level = executable.flow.step_transfers
    return {"model": work.name, "meshes": meshes, "virtual": v, "layers": meshes * virtual,
            "micro_batches": micro_batches, "schedule": schedule, "stages": stages,
            "clocks": len(clock_table(schedule, stages, micro_batches, v)), "clock_share": 1 / v,
            "bubble": bubble_fraction(schedule, stages, micro_batches, v),
            "in_flight_stages": [c / v for c in chunks],
            "simulated_mb": [b / MB for b in simulated], "measured_mb": [b / MB for b in measured],
            "instructions": len(executable.order),
            "transfers_per_micro_batch": sum(key not in step_level for key in executable.flow.transfers),
            "compile_seconds": compile_seconds, "step_seconds": statistics.median(times), "step_seconds_all": times}


# ----------------------------------------------------------------------------- tables


def _per_mesh(values: list[float]) -> str:
    return " / ".join(f"{v:.2f}" for v in values)


STEP_COLUMNS = (
    ("model", "model", "{}"), ("stages", "S", "{}"), ("micro_batches", "B", "{}"),
    ("logical_meshes", "logical meshes", "{}"), ("instructions", "instructions", "{}"),
    ("compile_seconds", "first call s", "{:.1f}"), ("transfer_cell", "transfers per micro-batch / per step "
                                                                       "(scalars)", "{}"),
    ("step_cell", "step ms (median / min)", "{}"), ("ordered_seconds", "one order ms", "{:.4g}"),
    ("threads_speedup", "threads speed-up", "{:.2f}"), ("predicted", "T* ms", "{:.4g}"),
    ("ratio", "step / T*", "{:.2f}"),
    ("serial_prediction", "B·Σt_i ms", "{:.4g}"), ("serial_ratio", "step / B·Σt_i", "{:.2f}"),
    ("runtime_predicted", "predicted step ms", "{:.4g}"), ("runtime_ratio", "step / predicted", "{:.2f}"),
    ("modelled_ratio_cell", "t_i device profile / profiled", "{}"), ("modelled_predicted", "T* device profile ms",
                                                                      "{:.4g}"),
    ("modelled_step", "predicted step, device profile ms", "{:.4g}"),
    ("modelled_step_ratio", "step / predicted, device profile", "{:.2f}"),
    ("run_seconds", "fwd+bwd ms", "{:.4g}"), ("apply_seconds", "apply ms", "{:.3g}"),
    ("transfer_seconds", "transfers ms", "{:.3g}"), ("outside_programs", "outside programs ms", "{:.3g}"),
)
REFERENCE_COLUMNS = (("model", "model", "{}"), ("method", "method", "{}"), ("devices", "devices", "{}"),
                     ("compile_seconds", "compile s", "{:.1f}"), ("step_cell", "step ms (median / min)", "{}"))
OVERHEAD_COLUMNS = (
    ("stages", "S", "{}"), ("micro_batches", "B", "{}"), ("instructions", "instructions", "{}"),
    ("counts", "run / send / free / accumulate", "{}"), ("step_cell", "step ms (median / min)", "{}"),
    ("step_per_instruction", "step / instruction µs", "{:.0f}"), ("program_calls", "program calls", "{}"),
    ("per_call", "per program call µs", "{:.0f}"),
    ("overhead_per_instruction", "outside programs / instruction µs", "{:.0f}"),
)
RESHARD_COLUMNS = (
    ("case", "case", "{}"), ("megabytes", "MB", "{}"), ("bytes_direct", "bytes across, direct", "{}"),
    ("bytes_lag", "bytes across, local all-gather", "{}"), ("rounds_direct", "rounds, direct", "{}"),
    ("rounds_lag", "rounds + gathers, local all-gather", "{}"), ("seconds_direct", "direct ms", "{:.3g}"),
    ("seconds_lag", "local all-gather ms", "{:.3g}"), ("speedup", "speed-up", "{:.2f}"),
    ("seconds_copies", "copies in one process ms", "{:.3g}"),
    ("modelled_direct", "modelled direct ms", "{:.3g}"), ("modelled_lag", "modelled local all-gather ms", "{:.3g}"),
    ("modelled_speedup", "modelled speed-up", "{:.2f}"),
)
MEMORY_COLUMNS = (
    ("stages", "S", "{}"), ("micro_batches", "B", "{}"), ("schedule", "schedule", "{}"),
    ("in_flight", "micro-batches in flight, mesh 0 / 1 / ...", "{}"),
    ("simulated", "simulated peak MB per device, mesh 0 / 1 / ...", "{}"),
    ("measured", "measured peak MB per device (live arrays)", "{}"),
)
INTERLEAVED_COLUMNS = (
    ("model", "model", "{}"), ("meshes", "S", "{}"), ("micro_batches", "B", "{}"), ("schedule", "schedule", "{}"),
    ("virtual", "v", "{}"), ("clock_cell", "clocks x length", "{}"), ("bubble", "bubble fraction", "{:.3f}"),
    ("in_flight", "activations in flight, stages' worth, mesh 0 / 1 / ...", "{}"),
    ("simulated", "simulated peak MB per device", "{}"), ("measured", "measured peak MB per device", "{}"),
    ("instructions", "instructions", "{}"), ("transfers_per_micro_batch", "transfers per micro-batch", "{}"),
    ("compile_seconds", "first call s", "{:.1f}"), ("step_cell", "step ms (median / min)", "{}"),
)


def _display(section: str, row: dict) -> dict:
    """The row with the table's derived cells: milliseconds, per-mesh lists, counts."""
    row = dict(row)
    if section in ("steps", "overhead", "references", "interleaved"):
        for key in ("step_seconds", "ordered_seconds", "predicted", "serial_prediction", "modelled_predicted",
                    "runtime_predicted", "modelled_step", "run_seconds", "apply_seconds", "transfer_seconds",
                    "outside_programs"):
            if key in row:
                row[key] *= 1e3
        for key in ("step_per_instruction", "overhead_per_instruction", "per_call"):
            if key in row:
                row[key] *= 1e6
    if "step_seconds_all" in row:
        row["step_cell"] = f"{row['step_seconds']:.4g} / {min(row['step_seconds_all']) * 1e3:.4g}"
    if section in ("steps", "overhead"):
        row["logical_meshes"] = " ".join(row["logical_meshes"])
        row["transfer_cell"] = (f"{row['transfers_per_micro_batch']} / {row['transfers_per_step']} "
                                f"({row['scalar_transfers_per_step']})")
        c = row["instruction_counts"]
        row["counts"] = " / ".join(str(c.get(k, 0)) for k in ("run", "send", "free", "accumulate"))
    if section == "reshard":
        for key in ("seconds_direct", "seconds_lag", "seconds_copies", "modelled_direct", "modelled_lag"):
            row[key] *= 1e3
        row["rounds_lag"] = f"{row['rounds_lag']} + {row['gathers_lag']}"
    if section == "memory":
        row["simulated"], row["measured"] = _per_mesh(row["simulated_mb"]), _per_mesh(row["measured_mb"])
        row["in_flight"] = " / ".join(map(str, row["in_flight"]))
    if section == "interleaved":
        row["simulated"], row["measured"] = _per_mesh(row["simulated_mb"]), _per_mesh(row["measured_mb"])
        row["in_flight"] = _per_mesh(row["in_flight_stages"])
        row["clock_cell"] = f"{row['clocks']} x 1/{row['virtual']}" if row["virtual"] > 1 else f"{row['clocks']} x 1"
    return row


TABLES: dict[str, tuple[str, Callable[[dict], str], tuple]] = {
    "steps": ("Step time against Eq. 2", lambda s: (
        f"MLP: {s['mlp']}; GPT: {s['gpt']}. 1F1B; S stages on equal submeshes of the 8 devices "
        "(ManualStageOption, layers by AutoLayerOption(layer_num=S)); T* is the plan's Eq. 2 latency "
        "sum t_i + (B-1) max t_j with t_i profiled (cost-model=profile: each stage's forward+backward on one "
        "micro-batch, compiled and timed alone); 't_i device profile' are the same stages' latencies as the "
        "API prices them by default (the analytic cost model on this machine's device profile, "
        "runtime/device_profile.py) over the profiled ones (range over the stages), and T* from them. "
        "The step runs each mesh's instructions in a thread of its own (concurrent_meshes, the CPU default); "
        "'one order' is the same programs walked in one global order, one program at a time "
        "(concurrent_meshes=False), measured in alternating rounds with the threads. "
        "B·Σt_i is what one program at a time can reach at best, and what meshes whose devices share the "
        "host's cores can (each stage's program alone already keeps the 2 cores busy). 'predicted step' is "
        "PipelinePlan.step: the runtime's instruction order priced (runtime/step_model.py: the plan's t_i, "
        "transfers, accumulations and apply parts, adding up on CPU), from the profiled t_i and, as the API "
        "gives it by default, from the device profile's. "
        "The last four columns are one step in one order with every program call timed from outside; "
        "'outside programs' is the rest of the step (the instruction loop, accumulations, batch slicing)."),
        STEP_COLUMNS),
    "references": ("Reference: the same steps without pipelining", lambda s: (
        f"MLP: {s['mlp']}; GPT: {s['gpt']}. jax.jit on device 0; ShardParallel: alpa-auto-sharding on "
        "a (1, 8) mesh."), REFERENCE_COLUMNS),
    "overhead": ("Runtime overhead per instruction", lambda s: (
        f"Tiny MLP: {s['tiny_mlp']}, so every program is trivial. 'program calls' are the stage-program and "
        "transfer calls of one step, each timed from outside (MeshExecutable / CrossMeshTransfer call plus "
        "block_until_ready); 'outside programs' is the step less those calls, per instruction of "
        "PipeshardExecutable.order."), OVERHEAD_COLUMNS),
    "reshard": ("Cross-mesh resharding with and without local all-gather (Fig. 11, scaled down)", lambda s: (
        "float32 tensors of MB x 2^18 elements, shape (MB * 256, 1024); source mesh on devices 0-3, "
        "destination on 4-7; CrossMeshTransfer of plan_reshard(local_all_gather=False | True) as programs "
        "(direct=False: what runs across processes), and what one process runs instead: the blocks copied "
        "between devices (runtime/device_copies.py). Bytes across "
        "count every tile move once (plan_bytes); rounds are ppermute rounds, gathers the local all-gathers. "
        "Time: median of the timed calls, each to block_until_ready. Specs are the paper's S^axis / R per "
        "tensor dimension. Modelled: not measured; the same plans with the meshes on two hosts as in Fig. 11 "
        "(alpa-stage-construction's defaults): bytes across / 25 Gbit/s + the most bytes a destination device "
        "receives in its all-gathers / 100 GB/s."), RESHARD_COLUMNS),
    "memory": ("Peak activation memory: 1F1B against GPipe", lambda s: (
        f"GPT: {s['gpt']}; S stages on equal submeshes, each on its physical mesh shape, so both schedules run "
        "the same stage programs (1F1B's step is part 1's). "
        "Simulated: a walk over the real PipeshardExecutable.order, every per-micro-batch value (stage "
        "outputs, transfer results) live from the run or send that makes it to its mesh's free, sized by "
        "its shard under the producing program's output sharding (bytes per device); the most any moment "
        "holds, per mesh. Measured: bytes per device of all live jax.Array buffers, sampled after every "
        "program call of one step, the most any device of the mesh holds, less the same before the step "
        "(so it also counts transient buffers and step-level gradient accumulators)."), MEMORY_COLUMNS),
    "interleaved": ("Interleaved 1F1B against 1F1B (beyond the paper)", lambda s: (
        f"MLP: {s['mlp']}; GPT: {s['gpt']}. The model clustered into S·v layers (AutoLayerOption) on S equal "
        "submeshes of the 8 devices (ManualStageOption, physical mesh shapes, analytic costs): 1F1B runs S "
        "stages of v layers, interleaved-1f1b S·v stages of one layer, stage k on mesh k mod S. From the clock "
        "tables (unit-time tasks, plans/clock_tables.py): clocks, each 1/v of a 1F1B clock under interleaving "
        "(so the bubble, 2(S-1) clocks in both, is 1/v as long), the bubble fraction (idle mesh-clocks / all "
        "mesh-clocks) and the most activations in flight per mesh in whole stages' worth (a chunk is 1/v of "
        "a stage). Peaks as in part 4: simulated per-micro-batch values live on the mesh, and live arrays "
        "sampled after every program call. The step is measured on the CPU runtime, whose meshes share the "
        "host's 2 cores (see part 1): a shorter bubble cannot show there, while the extra chunk boundaries "
        "cost transfers and instructions."), INTERLEAVED_COLUMNS),
}


# ----------------------------------------------------------------------------- driver


def _load_range(result: dict) -> str:
    loads = [row["load_average"] for section in TABLES for row in result[section] if "load_average" in row]
    return f"{min(loads):.1f}-{max(loads):.1f}" if loads else "not recorded"


def markdown(result: dict) -> str:
    s = result["settings"]
    parts = [f"# PipeshardParallel on {s['devices']} CPU devices\n",
             f"Command: `{s['command']}`; {s['warmup']} warm-up and {s['repeat']} timed steps (median). "
             f"Load average (1 min) while measuring: {_load_range(result)} on {result['machine']['cpus_usable']} "
             "usable CPUs: other processes shared them, so every time here is noisy.\n"]
    for section, (title, notes, columns) in TABLES.items():
        if result[section]:
            rows = [_display(section, row) for row in result[section]]
            table = markdown_table(title, {"machine": result["machine"], "runs": rows}, notes(s), columns)
            parts.append("#" + table)  # the sections are level-2 headings
    return "\n".join(parts)


PARTS = ("steps", "overhead", "reshard", "memory", "interleaved")


class Grids(NamedTuple):
    """What each part measures."""

    steps: list[tuple[str, int, int]]  # (model, S, B)
    overhead: list[tuple[int, int]]  # (S, B) of the tiny MLP
    reshard_sizes: list[int]  # MiB
    reshard_cases: list
    memory: list[tuple[int, int]]  # (S, B) of the GPT
    interleaved: list[tuple[str, int, int, int]]  # (model, S meshes, v, B)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a one-minute subset")
    parser.add_argument("--parts", default=",".join(PARTS), help="comma-separated subset")
    parser.add_argument("--models", default="mlp,gpt", help="part 1's models (comma-separated)")
    parser.add_argument("--stages", default="2,4", help="part 1's stage counts S, each on S equal submeshes of "
                                                        "the 8 devices (comma-separated; 8: a device per mesh)")
    parser.add_argument("--delta", type=float, default=None,
                        help="the layer clustering's delta for every model (default: each model's own)")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=7, help="timed steps (median)")
    parser.add_argument("--out", default="", help="output path without extension "
                                                  "(default benchmarks/results/pipeshard[_quick])")
    return parser


def _grids(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Grids:
    try:
        models, stages = args.models.split(","), [int(s) for s in args.stages.split(",")]
    except ValueError:
        parser.error(f"--stages takes comma-separated stage counts; got {args.stages!r}")
    if set(models) - set(WORKLOADS) or any(s < 1 or 8 % s for s in stages):
        parser.error(f"--models are among {sorted(WORKLOADS)} and --stages divide the 8 devices; got "
                     f"{args.models!r}, {args.stages!r}")
    if args.quick:
        return Grids([("mlp", 2, 4)], [(2, 4)], [1, 4], RESHARD_CASES[:2], [(2, 4)], [("gpt", 2, 2, 4)])
    # The GPT has four layers to cluster, the MLP nine.
    return Grids([(m, s, b) for m in models for s in stages for b in (1, 4, 8)],
                 [(s, b) for s in (2, 4) for b in (1, 8)], [1, 4, 16, 64], RESHARD_CASES,
                 [(s, b) for s in (2, 4) for b in (4, 8)],
                 [("gpt", 2, 2, 4), ("gpt", 2, 2, 8), ("mlp", 2, 2, 8), ("mlp", 4, 2, 8)])


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if len(jax.devices()) < 8:
        parser.error("needs 8 devices: XLA_FLAGS=--xla_force_host_platform_device_count=8")
    parts = args.parts.split(",")
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown --parts {sorted(unknown)}; the parts are {', '.join(PARTS)}")
    q = args.quick
    repeat = 3 if q else args.repeat
    out = Path(args.out or ("benchmarks/results/pipeshard_quick" if q else "benchmarks/results/pipeshard"))
    out.parent.mkdir(parents=True, exist_ok=True)
    grids = _grids(args, parser)
    settings = {"devices": len(jax.devices()), "quick": q, "warmup": args.warmup, "repeat": repeat,
                "command": command_line("pipeshard.py", argv),
                **{name.replace("-", "_"): w[0] for name, w in WORKLOADS.items()}}
    result = {"machine": machine_info(), "settings": settings, "steps": [], "references": [], "overhead": [],
              "reshard": [], "memory": [], "interleaved": []}
    works = {name: workload(name) for name in WORKLOADS}
    if args.delta is not None:
        works = {name: dataclasses.replace(work, delta=args.delta) for name, work in works.items()}
    compiled: dict[tuple, Any] = {}  # (model, S, B, schedule) -> pipelined step, shared by parts 1 and 4

    def record(section: str, row: dict) -> None:
        row["load_average"] = os.getloadavg()[0]  # the 2 cores are shared: other work shows here
        result[section].append(row)
        print(f"  {section}: " + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                           for k, v in row.items() if not k.endswith("_all")), flush=True)
        save(result, out, markdown)

    warmup = args.warmup
    # Per part, its measurements in order: (section, what makes the row), run only if asked for.
    jobs = {
        "steps": [("references", functools.partial(measure_reference, works[name], method, warmup, repeat))
                  for name in sorted({m for m, _, _ in grids.steps}) for method in ("jax.jit", "ShardParallel")]
        + [("steps", functools.partial(measure_pipeline, works[name], s, b, warmup, repeat, compiled))
           for name, s, b in grids.steps],
        "overhead": [("overhead", functools.partial(measure_pipeline, works["tiny-mlp"], s, b, warmup, repeat,
                                                    compiled)) for s, b in grids.overhead],
        "reshard": [("reshard", functools.partial(measure_reshard, case, mb, repeat))
                    for case in grids.reshard_cases for mb in grids.reshard_sizes],
        "memory": [("memory", functools.partial(measure_memory, works["gpt"], s, b, schedule, compiled))
                   for s, b in grids.memory for schedule in ("1f1b", "gpipe")],
        "interleaved": [("interleaved", functools.partial(measure_interleaved, works[name], s, v, b, schedule, warmup,
                                                          repeat=repeat))
                        for name, s, v, b in grids.interleaved for schedule in ("1f1b", "interleaved-1f1b")],
    }
    for section, measure in (job for part in PARTS if part in parts for job in jobs[part]):
        record(section, measure())
    print(f"wrote {out}.json and {out}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
