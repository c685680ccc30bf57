"""Rematerialisation chosen with the plan, at scale: GPT-3 steps that do not fit without it.

Per row (model, mesh, budget in GiB), on abstract arguments (nothing allocated), with the
training state donated:

- **remat plan**: ``ShardParallel(mesh_shape=..., memory_budget=...)``'s ``get_plan``
  (``rematerialize="auto"``, the default): planning time, the layers recomputed, the
  predicted memory per device; then XLA's compile of the planned step: its
  ``memory_analysis`` (arguments + outputs - aliased + temporaries) against the budget,
  and its FLOPs per device (``cost_analysis``);
- **without**: the plan without a budget (and so without recompute), compiled: its FLOPs
  and memory, the reference of "FLOPs at most 1.35x those of the plan without recompute".

Results go to ``OUT.json`` (after every row) and ``OUT.md``, with the machine and settings.
Run one at a time on a quiet machine: the budgeted ILP has a time limit.

    python benchmarks/remat.py                       # GPT-3 6.7B on (8,) within 24 GiB
    python benchmarks/remat.py --quick               # GPT-3 350M width, 4 layers, on (8,)
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

DEFAULT_ROWS = "6.7B:8:24"
QUICK_ROWS = "350M@4:8:1.2"
GIB = 2 ** 30


def parse_row(text: str) -> tuple[str, int | None, tuple[int, ...], float]:
    """``MODEL[@LAYERS]:MESH:BUDGET_GIB`` (``6.7B:2x4:24``)."""
    try:
        model, mesh, budget = text.split(":")
        name, _, layers = model.partition("@")
        return name, int(layers) if layers else None, tuple(int(d) for d in mesh.split("x")), float(budget)
    except ValueError:
        raise SystemExit(f"row {text!r}: expected MODEL[@LAYERS]:MESH:BUDGET_GIB") from None


def compiled(step, args) -> dict:
    """XLA's memory (bytes per device) and FLOPs per device of the planned step."""
    executable = step.get_executable(*args).compiled.executable
    memory = executable.get_compiled_memory_stats()
    cost = executable.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    return {"xla_bytes": memory.argument_size_in_bytes + memory.output_size_in_bytes
            - memory.alias_size_in_bytes + memory.temp_size_in_bytes, "flops": float(cost["flops"])}


def run_one(name: str, layers: int | None, mesh: tuple[int, ...], budget_gib: float, batch_size: int) -> dict:
    import alpa_mlir
    from alpa_mlir import models

    config = models.GPT3[name] if layers is None else dataclasses.replace(models.GPT3[name], layers=layers)
    model = models.build(config)
    args = model.abstract_args(batch_size)
    row = {"model": name, "layers": config.layers, "mesh": "x".join(map(str, mesh)), "batch": batch_size,
           "budget_gib": budget_gib}
    for key, budget in (("remat", budget_gib * GIB), ("without", 0.0)):
        method = alpa_mlir.ShardParallel(mesh_shape=mesh, batch_argnums=(2,), memory_budget=budget)
        step = alpa_mlir.parallelize(model.train_step, method=method, donate_argnums=(0, 1))
        start = time.perf_counter()
        plan = step.get_plan(*args)
        part = {"plan_seconds": time.perf_counter() - start, "recomputed": list(plan.recomputed),
                "predicted_bytes": plan.peak_memory, "objective": plan.objective}
        start = time.perf_counter()
        part.update(compiled(step, args), compile_seconds=time.perf_counter() - start)
        row[key] = part
    remat, without = row["remat"], row["without"]
    row.update(plan_seconds=remat["plan_seconds"], compile_seconds=remat["compile_seconds"],
               recomputed=len(remat["recomputed"]), predicted_gib=remat["predicted_bytes"] / GIB,
               xla_gib=remat["xla_bytes"] / GIB, xla_over_budget=remat["xla_bytes"] / (budget_gib * GIB),
               flops_ratio=remat["flops"] / without["flops"], without_xla_gib=without["xla_bytes"] / GIB)
    return row


COLUMNS = (("model", "model", "{}"), ("layers", "layers", "{}"), ("mesh", "mesh", "{}"), ("batch", "batch", "{}"),
           ("budget_gib", "budget GiB", "{:.2f}"), ("plan_seconds", "plan s", "{:.1f}"),
           ("recomputed", "layers recomputed", "{}"), ("predicted_gib", "predicted GiB", "{:.2f}"),
           ("xla_gib", "XLA GiB", "{:.2f}"), ("xla_over_budget", "XLA / budget", "{:.3f}"),
           ("flops_ratio", "FLOPs / without", "{:.3f}"), ("without_xla_gib", "without: XLA GiB", "{:.2f}"),
           ("compile_seconds", "XLA compile s", "{:.1f}"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default=DEFAULT_ROWS, help="comma-separated MODEL[@LAYERS]:MESH:BUDGET_GIB")
    parser.add_argument("--quick", action="store_true", help=f"only {QUICK_ROWS} (about a minute)")
    parser.add_argument("--batch-size", type=int, default=8, help="sequences per step")
    parser.add_argument("--out", default="benchmarks/results/remat", help="output path without extension")
    args = parser.parse_args(argv)
    rows = [parse_row(r) for r in (QUICK_ROWS if args.quick else args.rows).split(",")]
    devices = max(math.prod(row[2]) for row in rows)
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               f" --xla_force_host_platform_device_count={devices}").strip()
    sys.path.insert(0, str(Path(__file__).parent))
    from ilp_scaling import command_line, machine_info, markdown_table, save

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    result = {"machine": machine_info(), "command": command_line("remat.py", argv),
              "settings": {"rows": [list(r) for r in rows], "batch_size": args.batch_size}, "runs": []}

    def markdown(result: dict) -> str:
        return markdown_table(
            "Rematerialisation chosen with the plan", result,
            f"GPT-3 (Adam, sequence 1024, float32, state donated), abstract arguments, {devices} virtual CPU "
            "devices. ShardParallel's defaults (rematerialize=auto) with memory_budget; \"plan s\" includes "
            "XLA's compile of each plan checked against the budget (parallel_function.MAX_MEMORY_REPLANS), "
            "whose executable the first call then uses (\"XLA compile s\"); \"without\": the plan without a "
            f"budget, and so without recompute. Made with `{result['command']}`.", COLUMNS)

    for i, (name, layers, mesh, budget) in enumerate(rows, 1):
        print(f"[{i}/{len(rows)}] GPT-3 {name} on {'x'.join(map(str, mesh))} within {budget} GiB ...",
              file=sys.stderr, flush=True)
        result["runs"].append(run_one(name, layers, mesh, budget, args.batch_size))
        save(result, out, markdown)
    print(f"wrote {out}.json and {out}.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
