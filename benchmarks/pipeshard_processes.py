"""A pipeline with one process per mesh, each on CPU cores of its own (issue 31): the step
against Eq. 2's T* and against B·Σt_i, the stages run one after another.

Two stages, B micro-batches, 1F1B, each stage on a (1, 1) mesh. With the launcher, each
mesh is a process of its own, pinned to one core (``--cpus-per-process 1``) and driving
one virtual CPU device, as each host of a cluster drives its own hardware; values cross
between the processes over gloo. Without it, one process drives both meshes (two virtual
devices, a thread per mesh, both cores shared): the reference the first one must beat.

    python -m alpa_mlir.runtime.launch --num-processes 2 --cpus-per-process 1 \\
        benchmarks/pipeshard_processes.py [--quick]
    python benchmarks/pipeshard_processes.py [--quick]

Each run replaces its own rows (by process count) in ``OUT.json`` and rewrites ``OUT.md``
from all rows. Stage latencies t_i are profiled by process 0, on its own core
(``alpa-stage-construction{cost-model=profile}``), so T* = Σt_i + (B - 1) max t_i (Eq. 2)
is in this machine's seconds; ``plan.step`` is the runtime's own step model
(``runtime/step_model.py``), which adds the transfers and the instructions' overhead.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

LAUNCHED = "ALPA_NUM_PROCESSES" in os.environ
if not LAUNCHED:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    os.environ["XLA_FLAGS"] = " ".join([f for f in os.environ.get("XLA_FLAGS", "").split()
                                        if "xla_force_host_platform_device_count" not in f]
                                       + ["--xla_force_host_platform_device_count=2"])

from alpa_mlir.runtime import distributed  # noqa: E402

if LAUNCHED:
    distributed.initialize()

import jax  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from ilp_scaling import command_line, machine_info, markdown_table  # noqa: E402
from pipeshard import WORKLOADS, BenchmarkPipeshard, Workload, step_times, workload  # noqa: E402
from plan_quality_models import hf_gpt2  # noqa: E402

from alpa_mlir import parallelize  # noqa: E402
from alpa_mlir.dialect.schedule_ops import Apply, Run, Send  # noqa: E402
from alpa_mlir.pipeshard import AutoLayerOption, ManualStageOption  # noqa: E402
from alpa_mlir.runtime.pipeshard import PipeshardExecutable  # noqa: E402

STAGES = 2


def gpt2_workload() -> Workload:
    """transformers' Flax GPT-2, 4 layers, 256 wide, AdamW, with values (the same on every
    process: host arrays from a seeded generator)."""
    abstract = hf_gpt2("hf-gpt2", layers=4, hidden=256, heads=4, seq_len=64, vocab=2048, batch=16)
    rng = np.random.default_rng(0)

    def value(leaf: jax.ShapeDtypeStruct) -> np.ndarray:
        if np.issubdtype(leaf.dtype, np.integer):
            return rng.integers(0, 2048, leaf.shape).astype(leaf.dtype)
        return (0.02 * rng.standard_normal(leaf.shape)).astype(leaf.dtype)

    state = jax.tree.map(value, abstract.state)
    return Workload("hf-gpt2", abstract.step, (state, jax.tree.map(value, abstract.batch)), 1, (1,), 0.6)


def instruction_seconds(executable: PipeshardExecutable, step: object, args: tuple) -> dict[str, float]:
    """One step with every instruction this process executes timed (by wrapping the
    executable's ``_execute``: the benchmark's view inside the runtime): seconds in stage
    and apply programs (``runs``), in transfers (``transfers``: a send or recv also waits
    there for its peer), and in everything else (``other``)."""
    spent: dict[str, float] = defaultdict(float)
    execute = executable._execute

    def timed(values: object, k: int, instruction: object, index: int) -> None:
        start = time.perf_counter()
        execute(values, k, instruction, index)
        kind = "runs" if isinstance(instruction, Run | Apply) else "transfers" if isinstance(instruction, Send) else \
            "other"
        spent[kind] += time.perf_counter() - start

    executable._execute = timed
    try:
        start = time.perf_counter()
        jax.block_until_ready(step(*args))
        spent["step"] = time.perf_counter() - start
    finally:
        del executable._execute  # the class's method again
    return dict(spent)


def per_process(key: str, mine: dict) -> list[dict]:
    """``mine`` of every process, on every process (through the coordination service)."""
    return [json.loads(distributed.broadcast_string(f"{key}-{p}", json.dumps(mine) if p == jax.process_index()
                                                    else None, source=p)) for p in range(jax.process_count())]


def measure(work: Workload, micro_batches: int, warmup: int, repeat: int) -> dict:
    hosts = jax.process_count()
    submesh = (1, 1)
    method = BenchmarkPipeshard(
        num_micro_batches=micro_batches, layer_option=AutoLayerOption(layer_num=STAGES, delta=work.delta),
        stage_option=ManualStageOption((1,) * STAGES, (submesh,) * STAGES), batch_argnums=work.batch_argnums,
        cluster_shape=(hosts, STAGES // hosts))
    step = parallelize(work.step, method=method)
    times, last = step_times(step, work, warmup, repeat)
    spent = per_process(f"spent-{work.name}", instruction_seconds(step.get_executable(*work.args), step, last))
    plan = step.get_plan(*work.args)
    t = [s.latency for s in plan.stages]
    serial = micro_batches * sum(t)
    step_s = statistics.median(times)
    return {"model": work.name, "processes": hosts, "cpus_per_process": len(os.sched_getaffinity(0)),
            "stages": STAGES, "micro_batches": micro_batches, "schedule": "1f1b",
            "step_seconds": step_s, "step_seconds_all": times, "stage_latencies": t,
            "predicted": plan.latency, "ratio": step_s / plan.latency,
            "serial_prediction": serial, "serial_ratio": step_s / serial,
            "per_process": spent, "runtime_predicted": plan.step,
            "runtime_ratio": None if plan.step is None else step_s / plan.step}


COLUMNS = (("model", "model", "{}"), ("processes", "processes", "{}"), ("cpus_per_process", "CPUs each", "{}"),
           ("micro_batches", "B", "{}"), ("stage_ms", "t_i ms", "{}"), ("step_ms", "step ms", "{:.1f}"),
           ("predicted_ms", "T* ms (Eq. 2)", "{:.1f}"), ("ratio", "step / T*", "{:.2f}"),
           ("serial_ms", "B Σt_i ms", "{:.1f}"), ("serial_ratio", "step / B Σt_i", "{:.2f}"),
           ("spent", "per process: programs + transfers ms", "{}"),
           ("runtime_ms", "plan.step ms", "{:.1f}"), ("runtime_ratio", "step / plan.step", "{:.2f}"))


def markdown(result: dict) -> str:
    runs = [dict(r, stage_ms=" / ".join(f"{1e3 * s:.1f}" for s in r["stage_latencies"]),
                 step_ms=1e3 * r["step_seconds"],
                 predicted_ms=1e3 * r["predicted"], serial_ms=1e3 * r["serial_prediction"],
                 spent=" / ".join(f"{1e3 * s['runs']:.0f} + {1e3 * s.get('transfers', 0.0):.0f}"
                                  for s in r["per_process"]),
                 runtime_ms=None if r["runtime_predicted"] is None else 1e3 * r["runtime_predicted"])
            for r in result["runs"]]
    settings = ("Two stages on (1, 1) meshes, 1F1B, layers clustered by AutoLayerOption(layer_num=2), t_i profiled "
                "(cost-model=profile); median of the timed steps. Processes = 2: `python -m alpa_mlir.runtime.launch "
                "--num-processes 2 --cpus-per-process 1 benchmarks/pipeshard_processes.py`, one mesh and one core per "
                "process, transfers over gloo; processes = 1: `python benchmarks/pipeshard_processes.py`, both "
                "meshes in one process (a thread each) on every core. Per process: one more step with each "
                "instruction a process executes timed, the seconds in its stage and apply programs and in its "
                "transfers (a transfer waits there for its peer). Commands: " +
                "; ".join(f"`{c}`" for c in result["commands"]) + ".")
    return markdown_table("A pipeline with one process per mesh", dict(result, runs=runs), settings, COLUMNS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the MLP only, fewer timed steps")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "pipeshard_processes")
    args = parser.parse_args(argv)
    warmup, repeat = (1, 3) if args.quick else (2, 7)
    works = [workload("mlp")] + ([] if args.quick else [gpt2_workload()])
    rows = [measure(work, 8, warmup, repeat) for work in works]
    if jax.process_index() != 0:
        return 0
    path = Path(f"{args.out}.json")
    previous = json.loads(path.read_text()) if path.exists() else {"runs": [], "commands": []}
    command = command_line("pipeshard_processes.py", argv)
    if LAUNCHED:
        command = f"python -m alpa_mlir.runtime.launch --num-processes {jax.process_count()} " \
                  f"--cpus-per-process {rows[0]['cpus_per_process']} {command.removeprefix('python ')}"
    kept = [r for r in previous["runs"] if r["processes"] != jax.process_count()]
    result = {"machine": machine_info(), "workloads": {"mlp": WORKLOADS["mlp"][0],
                                                       "hf-gpt2": "transformers FlaxGPT2LMHeadModel, 4 layers, hidden "
                                                                  "256, 4 heads, seq 64, vocab 2048, batch 16, AdamW"},
              "commands": [c for c in previous["commands"] if (" launch " in c) != LAUNCHED] + [command],
              "runs": sorted(kept + rows, key=lambda r: (r["model"], r["processes"]))}
    path.write_text(json.dumps(result, indent=1) + "\n")
    Path(f"{args.out}.md").write_text(markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
