"""Plans for 1-7B models against the plans their users write by hand, at equal memory (issue 30).

For GPT-3 1.3B and 6.7B and Llama 2 7B (f32, and bf16 with f32 Adam moments), batch
8 x 1024, on the meshes (8,), (2, 4) and (8, 8) of virtual CPU devices, every training step
is traced on abstract shapes and compiled, never run (``plan_quality.measure``):

- **plan**: ``ShardParallel`` on the mesh priced as the GPU cluster below, with each
  device's memory less ``MEMORY_RESERVE`` as its budget;
- **baselines**, plain ``jax.jit`` with ``NamedSharding``s: data parallel (DP), FSDP
  (ZeRO-3), Megatron (tensor parallel on the last axis, batch on the others) and FSDP x TP
  (2-D meshes, MaxText's default).

Compared, against the best baseline whose XLA ``memory_analysis`` fits the budget:

- the collectives XLA emitted, ring-weighted bytes per device per step, per mesh axis;
- the predicted step time: FLOPs per device (XLA's ``cost_analysis``) at the GPU's peak,
  plus every emitted collective on the alpha-beta model of its mesh axes
  (``cost_model.collective``), one after the other (no overlap of compute and
  communication, for the plan and the baselines alike).

The GPU profile (``PROFILE``): DGX A100 80 GB hosts of 8 GPUs. A mesh of 8 is one host, so
all its axes are NVLink; (8, 8) is 8 hosts, its first axis across hosts (InfiniBand), its
second within them (Alpa's Sec. 5.1 places meshes the same way).

    python benchmarks/plan_scale.py --models gpt3-6.7b --meshes 8,2x4
    python benchmarks/plan_scale.py --models gpt3-1.3b --meshes 8x8       # 64 virtual devices
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path


def _device_count(argv: list[str]) -> int:
    """The virtual devices the largest mesh asked for needs (XLA reads it once, before JAX starts)."""
    meshes = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--meshes"), "8,2x4")
    return max(math.prod(int(n) for n in m.split("x")) for m in meshes.split(",") if m)


if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count="
                               f"{max(8, _device_count(sys.argv[1:]))}").strip()

sys.path.insert(0, str(Path(__file__).parent))
from plan_quality import build, library_versions, measure, parse_meshes, source_version  # noqa: E402, I001 (JAX's flags first)
import jax  # noqa: E402
from ilp_scaling import machine_info, save  # noqa: E402
from plan_quality_models import zoo  # noqa: E402

from alpa_mlir import ShardParallel  # noqa: E402
from alpa_mlir.methods import MEMORY_RESERVE  # noqa: E402
from alpa_mlir.dialect.mesh import DeviceMesh, PhysicalCluster  # noqa: E402

GIB = 2**30
MB = 2**20
MODELS = ("gpt3-1.3b", "gpt3-6.7b", "llama2-7b", "llama2-7b-bf16")
MESHES = ((8,), (2, 4), (8, 8))
BASELINES = ("dp", "zero3", "megatron", "fsdp-tp")
BASELINE_NAMES = {"dp": "DP", "zero3": "FSDP", "megatron": "Megatron", "fsdp-tp": "FSDP x TP"}


@dataclass(frozen=True)
class GpuProfile:
    """A GPU cluster's figures (NVIDIA's data sheets: A100 SXM4 80 GB, DGX A100)."""

    name: str = "DGX A100 80 GB (8 GPUs per host)"
    devices_per_host: int = 8
    memory_bytes: float = 80e9
    tf32_flops_per_second: float = 156e12  # dense tensor-core peaks: f32 dots run as TF32 on A100
    bf16_flops_per_second: float = 312e12
    nvlink_bytes_per_second: float = 300e9  # NVLink 3: 12 links x 25 GB/s per direction
    nvlink_alpha: float = 10e-6
    network_bytes_per_second: float = 25e9  # one 200 Gb/s HDR InfiniBand NIC per GPU
    network_alpha: float = 20e-6

    def flops_per_second(self, dtype: str) -> float:
        return self.bf16_flops_per_second if dtype == "bfloat16" else self.tf32_flops_per_second

    def mesh(self, shape: tuple[int, ...]) -> DeviceMesh:
        """``shape`` over the fewest whole hosts: an axis within a host runs on NVLink, one across on the network."""
        size = math.prod(shape)
        hosts = max(1, size // self.devices_per_host)
        cluster = PhysicalCluster(hosts, min(size, self.devices_per_host), self.nvlink_alpha,
                                  1 / self.nvlink_bytes_per_second, self.network_alpha,
                                  1 / self.network_bytes_per_second)
        physical = cluster.submesh(0, hosts, 0, cluster.devices_per_host)
        return cluster.logical_mesh(physical, shape)

    @property
    def budget(self) -> float:
        return self.memory_bytes * (1 - MEMORY_RESERVE)


PROFILE = GpuProfile()


def step_seconds(entry: dict, flops_per_second: float) -> float | None:
    """FLOPs at the GPU's peak plus the emitted collectives on the mesh's alpha-beta model."""
    if entry.get("flops") is None or "emitted" not in entry:
        return None
    return entry["flops"] / flops_per_second + entry["emitted"]["seconds"]


def judged(row: dict, dtype: str) -> None:
    """The row's step times, what fits the budget, and the plan over the best fitting baseline."""
    rate = PROFILE.flops_per_second(dtype)
    for key in ("plan", *BASELINES):
        entry = row.get(key, {})
        if "emitted" in entry:
            entry["step_seconds"] = step_seconds(entry, rate)
            entry["fits"] = entry.get("memory_bytes", math.inf) <= PROFILE.budget
    fitting = [k for k in BASELINES if row.get(k, {}).get("fits")]
    plan = row["plan"]
    if fitting:
        fastest = min(fitting, key=lambda k: row[k]["step_seconds"])
        fewest = min(fitting, key=lambda k: row[k]["emitted"]["ring_bytes"])
        row["best_time"], row["best_ring"] = fastest, fewest
        row["time_over_best"] = plan["step_seconds"] / row[fastest]["step_seconds"]
        best_ring = row[fewest]["emitted"]["ring_bytes"]
        row["ring_over_best"] = plan["emitted"]["ring_bytes"] / best_ring if best_ring else math.inf


def cell(entry: dict) -> str:
    """A baseline's cell: step ms, ring-weighted GiB, memory GiB (struck through where it does not fit)."""
    if "emitted" not in entry:
        return entry.get("skipped", entry.get("error", ""))[:40]
    text = (f"{entry['step_seconds'] * 1e3:.0f} ms, {entry['emitted']['ring_bytes'] / GIB:.2f} GiB, "
            f"mem {entry['memory_bytes'] / GIB:.1f}")
    return text if entry["fits"] else f"~~{text}~~"


def axes_text(entry: dict) -> str:
    by_axes = entry.get("emitted", {}).get("ring_by_axes", {})
    return ", ".join(f"{axes} {size / GIB:.2f}" for axes, size in sorted(by_axes.items(), key=lambda kv: -kv[1]))


def markdown(result: dict) -> str:
    m = result["machine"]
    lines = ["# Plans at scale against hand-written plans, at equal memory", "",
             f"Machine: {m['cpus']} CPUs ({m['cpus_usable']} usable), {m['processor']}; Python {m['python']}, "
             f"JAX {m['jax']}, alpa-mlir {m['alpa_mlir']}; {m['date']}. {result['settings']['note']}", "",
             f"GPU profile: {PROFILE.name}; budget {PROFILE.budget / GIB:.1f} GiB per device "
             f"({PROFILE.memory_bytes / 1e9:.0f} GB less {MEMORY_RESERVE:.0%}); NVLink "
             f"{PROFILE.nvlink_bytes_per_second / 1e9:.0f} GB/s per direction, alpha "
             f"{PROFILE.nvlink_alpha * 1e6:.0f} us; network {PROFILE.network_bytes_per_second / 1e9:.0f} GB/s "
             f"per GPU, alpha {PROFILE.network_alpha * 1e6:.0f} us; peak "
             f"{PROFILE.tf32_flops_per_second / 1e12:.0f} TFLOP/s for f32 models (TF32), "
             f"{PROFILE.bf16_flops_per_second / 1e12:.0f} for bf16. "
             "8 devices are one host (every axis NVLink); (8, 8) is 8 hosts, x across them.", "",
             "Each cell: predicted step time (FLOPs per device at peak + every emitted collective on its axes' "
             "alpha-beta model, no overlap), ring-weighted collective bytes per device per step, XLA's memory "
             "per device (arguments + outputs + temporaries - aliased). ~~Struck through~~: over the budget. "
             "*best*: the fitting baseline of least step time; the ratios are the plan over it (step time) and "
             "over the fitting baseline of fewest ring-weighted bytes.", "",
             "| model | mesh | plan | " + " | ".join(BASELINE_NAMES[k] for k in BASELINES) +
             " | best | plan / best (time) | plan / best (ring bytes) | plan s |",
             "|---|---|---|" + "---|" * len(BASELINES) + "---|---|---|---|"]
    for row in result["runs"]:
        if "error" in row:
            lines.append(f"| {row['model']} | {row['mesh']} | error: {row['error']} |" + " |" * (len(BASELINES) + 4))
            continue
        cells = [row["model"], row["mesh"], cell(row["plan"])] + [cell(row.get(k, {})) for k in BASELINES]
        cells += [BASELINE_NAMES.get(row.get("best_time", ""), "none fits"),
                  f"{row['time_over_best']:.2f}" if "time_over_best" in row else "",
                  f"{row['ring_over_best']:.2f}" if "ring_over_best" in row else "", f"{row['plan_seconds']:.0f}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "## Ring-weighted collective bytes per mesh axis (GiB per device per step)", "",
              "| model | mesh | plan | best baseline |", "|---|---|---|---|"]
    for row in result["runs"]:
        if "error" not in row:
            best = row.get("best_time")
            lines.append(f"| {row['model']} | {row['mesh']} | {axes_text(row['plan'])} | "
                         f"{BASELINE_NAMES[best] + ': ' + axes_text(row[best]) if best else ''} |")
    lines += ["", "## Models", ""] + [f"- **{name}**: {note}" for name, note in result["models"].items()]
    warned = [f"- {row['model']} on {row['mesh']}: {w}" for row in result["runs"] for w in row.get("plan_warnings", [])]
    if warned:
        lines += ["", "## Planner warnings", ""] + warned
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated subset of: " + ", ".join(MODELS))
    parser.add_argument("--meshes", default="8,2x4", help="comma-separated meshes of 8 or 64 devices, e.g. 8,2x4,8x8")
    parser.add_argument("--partial-sums", choices=("float32", "result"), default="float32",
                        help="the plan's ShardParallel(partial_sums=...); result: bf16 partials, as the baselines")
    parser.add_argument("--note", default="", help="a sentence on the run's conditions, for the table")
    parser.add_argument("--out", default="benchmarks/results/plan_scale", help="output path without extension")
    args = parser.parse_args(argv)
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"--models: unknown {unknown}; choose from {', '.join(MODELS)}")
    meshes = parse_meshes(args.meshes)
    if any(math.prod(m) > len(jax.devices()) for m in meshes):
        parser.error(f"--meshes {args.meshes} needs more than the {len(jax.devices())} devices there are")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    result: dict = {"machine": machine_info(), "models": {}, "runs": [],
                    "settings": {"models": names, "meshes": args.meshes, "note": args.note,
                                 "partial_sums": args.partial_sums,
                                 "profile": vars(PROFILE),
                                 "libraries": library_versions(), "source": source_version()}}
    constructors = zoo(quick=False)
    for name in names:
        work = build(name, constructors[name], result)
        dtype = "bfloat16" if name.endswith("bf16") else "float32"
        for shape in meshes:
            label = "x".join(map(str, shape))
            print(f"{name} on {label} ...", file=sys.stderr, flush=True)
            start = time.perf_counter()
            dmesh = PROFILE.mesh(shape)
            method = ShardParallel(mesh_shape=shape, mesh_alpha=dmesh.alpha, mesh_beta=dmesh.beta,
                                   memory_budget=PROFILE.budget, partial_sums=args.partial_sums)
            try:
                row = measure(work, dmesh, method, BASELINES)
                judged(row, dtype)
            except Exception as error:  # report and go on: one row must not lose the others
                traceback.print_exc()
                row = {"model": name, "mesh": label, "error": f"{type(error).__name__}: {str(error)[:300]}"}
            row["seconds"] = time.perf_counter() - start
            result["runs"].append(row)
            save(result, out, markdown)
            print(f"    {row.get('time_over_best', '-')} time, {row.get('ring_over_best', '-')} ring bytes over "
                  f"{row.get('best_time', '-')}; {row['seconds']:.0f} s", file=sys.stderr, flush=True)
    print(f"wrote {out}.json and {out}.md")
    return 1 if any("error" in row for row in result["runs"]) else 0


if __name__ == "__main__":
    sys.exit(main())
