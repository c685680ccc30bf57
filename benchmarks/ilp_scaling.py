"""How ``alpa-auto-sharding``'s ILP (Sec. 4.2, Eq. 1) scales with the depth of a GPT training step.

For each mesh and number of layers, a GPT-3 training step (Adam) with the 1.3B model's
width is lowered from abstract shapes (nothing is allocated), parsed into an alpa
context, brought into form by ``alpa-import-pipeline`` and planned by
``alpa-auto-sharding``. One row per run: ops the pass plans, ILP nodes before and after
the exact elimination of chains and trees, variables, constraints, build and solve
seconds, the solver's status and objective, and the pass's wall time. Results go to
``OUT.json`` (after every run, so an interrupted sweep keeps what finished) and
``OUT.md``, each with the machine and settings.

    python benchmarks/ilp_scaling.py --quick
    python benchmarks/ilp_scaling.py --layers 1,2,4,8,16,24,32,48 --meshes 1x8,2x4,8x8
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # lowering needs no accelerator

import jax  # noqa: E402
from jax._src.lib.mlir import ir  # noqa: E402

import alpa_mlir  # noqa: E402
import alpa_mlir.passes  # noqa: E402, F401  (registers every pass)
from alpa_mlir import models  # noqa: E402
from alpa_mlir.dialect import make_context  # noqa: E402
from alpa_mlir.passes import run_pipeline  # noqa: E402

FULL_LAYERS = (1, 2, 4, 8, 16, 24, 32, 48)
FULL_MESHES = ((1, 8), (2, 4), (8, 8))
SOLVER_FIELDS = ("nodes", "nodes_after_reduction", "edges_after_reduction", "variables", "constraints",
                 "build_seconds", "solve_seconds", "status", "method", "objective")


def lower_gpt(config: models.GPTConfig, batch_size: int) -> tuple[str, tuple[int, ...]]:
    """The StableHLO of one training step, and the numbers of ``main``'s batch arguments."""
    args = models.abstract_args(config, batch_size)
    # keep_unused: every leaf stays an argument, so the batch is the last leaves.
    text = jax.jit(models.build(config).train_step, keep_unused=True).lower(*args).as_text()
    count, batch = len(jax.tree.leaves(args)), len(jax.tree.leaves(args[-1]))
    return text, tuple(range(count - batch, count))


def count_ops(module: ir.Module) -> int:
    """Ops in the module's functions, nested regions included (not the funcs themselves)."""
    def walk(op: ir.Operation) -> int:
        return 1 + sum(walk(child) for region in op.regions for block in region.blocks for child in block.operations)
    return sum(walk(func) - 1 for func in module.body.operations)


def run_one(config: models.GPTConfig, mesh: tuple[int, ...], batch_size: int, time_limit: float,
            workdir: Path, share_reshardings: bool = False, *, tie_repeated_layers: bool = False) -> dict:
    """Lower, import and auto-shard one GPT step; the row of the table (with ``error`` on failure)."""
    row: dict = {"layers": config.layers, "mesh": "x".join(map(str, mesh))}
    start = time.perf_counter()
    text, batch_args = lower_gpt(config, batch_size)
    row["lower_seconds"] = time.perf_counter() - start
    module = ir.Module.parse(text, context=make_context())
    shape = ",".join(map(str, mesh))
    start = time.perf_counter()
    run_pipeline(module, f"builtin.module(alpa-import-pipeline{{mesh-shape={shape}}})")
    row["import_seconds"] = time.perf_counter() - start
    row["ops"] = count_ops(module)
    report = workdir / f"plan_{row['mesh']}_{config.layers}.json"
    # allow-flattened-mesh: as ShardParallel plans (and as the pass did before it was an option).
    options = f"mesh-shape={shape} allow-flattened-mesh batch-args={','.join(map(str, batch_args))} report={report}"
    if time_limit:
        options += f" solver-time-limit={time_limit}"
    if share_reshardings:
        options += " share-reshardings"
    if tie_repeated_layers:
        options += " tie-repeated-layers"
    start = time.perf_counter()
    try:
        warnings = run_pipeline(module, f"builtin.module(alpa-auto-sharding{{{options}}})")
    except (ir.MLIRError, ValueError) as error:
        row.update(pass_seconds=time.perf_counter() - start, status="error", error=str(error).splitlines()[-1])
        return row
    row["pass_seconds"] = time.perf_counter() - start
    plan = json.loads(report.read_text())
    row.update({key: plan["solver"][key] for key in SOLVER_FIELDS})
    row["warnings"] = len(warnings)
    row["reshardings"] = sum(len(op["resharding"]) for op in plan["ops"])
    return row


def command_line(script: str, argv: list[str] | None) -> str:
    """How ``benchmarks/<script>`` was run: its arguments (``argv``, else the process's)."""
    return " ".join(["python", f"benchmarks/{script}", *(sys.argv[1:] if argv is None else argv)])


def machine_info() -> dict:
    return {"cpus": os.cpu_count(), "cpus_usable": len(os.sched_getaffinity(0)), "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(), "python": platform.python_version(),
            "jax": jax.__version__, "alpa_mlir": alpa_mlir.__version__,
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")}


COLUMNS = (("mesh", "mesh", "{}"), ("layers", "layers", "{}"), ("ops", "ops", "{}"),
           ("nodes", "ILP nodes", "{}"), ("nodes_after_reduction", "after reduction", "{}"),
           ("variables", "variables", "{}"), ("constraints", "constraints", "{}"),
           ("build_seconds", "build s", "{:.2f}"), ("solve_seconds", "solve s", "{:.2f}"),
           ("status", "status", "{}"), ("method", "method", "{}"), ("objective", "objective", "{:.4g}"),
           ("pass_seconds", "pass s", "{:.1f}"))
# With --tie: the same step planned with tie-repeated-layers, beside the untied run.
TIED_COLUMNS = (("tied_nodes_after_reduction", "tied: after reduction", "{}"),
                ("tied_solve_seconds", "tied: solve s", "{:.2f}"), ("tied_method", "tied: method", "{}"),
                ("tied_objective", "tied: objective", "{:.4g}"), ("tied_ratio", "tied / untied", "{:.6f}"),
                ("tied_pass_seconds", "tied: pass s", "{:.1f}"))


def markdown(result: dict) -> str:
    s = result["settings"]
    return markdown_table(
        "alpa-auto-sharding ILP scaling on GPT training steps", result,
        f"Model: GPT (Adam), hidden {s['hidden']}, heads {s['heads']}, seq {s['seq_len']}, vocab {s['vocab']}, "
        f"{s['dtype']}, global batch {s['batch_size']}; solver HiGHS, time limit {s['time_limit'] or 'none'}"
        f"{'; share-reshardings' if s.get('share_reshardings') else ''}. "
        "\"pass s\" is the wall time of alpa-auto-sharding (strategy enumeration, costs, ILP, annotation); "
        "build/solve s are the ILP's own."
        + (" \"tied\": the same step with tie-repeated-layers (repeated layers solved once); \"tied / untied\" is "
           "the ratio of Eq. 1's objectives (at most 1 + the mip gap, 1e-4, for the tied plan to be as good)."
           if s.get("tie") else ""), COLUMNS + (TIED_COLUMNS if s.get("tie") else ()))


def markdown_table(title: str, result: dict, settings: str, columns: tuple) -> str:
    """A benchmark's Markdown: title, machine, settings, one table row per run (and its error)."""
    m = result["machine"]
    lines = [f"# {title}", "",
             f"Machine: {m['cpus']} CPUs ({m['cpus_usable']} usable), {m['processor']}, {m['platform']}; "
             f"Python {m['python']}, JAX {m['jax']}, alpa-mlir {m['alpa_mlir']}; {m['date']}.", "", settings, "",
             "| " + " | ".join(title for _, title, _ in columns) + " |", "|" + "---|" * len(columns)]
    for row in result["runs"]:
        cells = [fmt.format(row[key]) if row.get(key) is not None else "" for key, _, fmt in columns]
        lines.append("| " + " | ".join(cells) + " |")
        if "error" in row:
            lines.append(f"|  | error: {row['error']} |" + " |" * (len(columns) - 2))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", default=",".join(map(str, FULL_LAYERS)), help="comma-separated layer counts")
    parser.add_argument("--meshes", default=",".join("x".join(map(str, m)) for m in FULL_MESHES),
                        help="comma-separated logical meshes, e.g. 1x8,2x4")
    parser.add_argument("--quick", action="store_true", help="layers 1,2 on 2x4 (about a minute)")
    parser.add_argument("--batch-size", type=int, default=8, help="global batch (sequences per step)")
    parser.add_argument("--hidden", type=int, default=2048)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--seq-len", type=int, default=1024)
    parser.add_argument("--vocab", type=int, default=51200)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--time-limit", type=float, default=0.0, help="ILP solver seconds per run (0: none)")
    parser.add_argument("--share-reshardings", action="store_true",
                        help="the pass option share-reshardings (ShardParallel's default)")
    parser.add_argument("--tie", action="store_true",
                        help="also plan each step with tie-repeated-layers and compare the objectives")
    parser.add_argument("--out", default="benchmarks/results/ilp_scaling", help="output path without extension")
    args = parser.parse_args(argv)
    layers = [1, 2] if args.quick else [int(n) for n in args.layers.split(",")]
    meshes = [(2, 4)] if args.quick else [tuple(int(d) for d in m.split("x")) for m in args.meshes.split(",")]
    base = dataclasses.replace(models.GPT3["1.3B"], hidden=args.hidden, heads=args.heads, seq_len=args.seq_len,
                               vocab=args.vocab, dtype=args.dtype)
    settings = {"hidden": args.hidden, "heads": args.heads, "seq_len": args.seq_len, "vocab": args.vocab,
                "dtype": args.dtype, "batch_size": args.batch_size, "time_limit": args.time_limit,
                "share_reshardings": args.share_reshardings, "tie": args.tie,
                "layers": layers, "meshes": ["x".join(map(str, m)) for m in meshes]}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    result = {"machine": machine_info(), "settings": settings, "runs": []}
    runs = [(m, n) for m in meshes for n in layers]
    with tempfile.TemporaryDirectory() as workdir:
        for i, (mesh, n) in enumerate(runs, 1):
            print(f"[{i}/{len(runs)}] mesh {'x'.join(map(str, mesh))}, {n} layers ...", flush=True)
            config = dataclasses.replace(base, layers=n)
            row = run_one(config, mesh, args.batch_size, args.time_limit, Path(workdir), args.share_reshardings)
            if args.tie and "error" not in row:
                tied = run_one(config, mesh, args.batch_size, args.time_limit, Path(workdir), args.share_reshardings,
                               tie_repeated_layers=True)
                row.update({f"tied_{key}": value for key, value in tied.items() if key not in ("layers", "mesh")})
                if "error" not in tied:
                    row["tied_ratio"] = tied["objective"] / row["objective"]
            result["runs"].append(row)
            print("    " + (f"error: {row['error']}" if "error" in row else
                           f"{row['ops']} ops, {row['nodes']} -> {row['nodes_after_reduction']} nodes, "
                           f"{row['variables']} vars, {row['constraints']} constraints, build "
                           f"{row['build_seconds']:.2f} s, solve {row['solve_seconds']:.2f} s, {row['status']} "
                           f"({row['method']}), "
                           f"pass {row['pass_seconds']:.1f} s"), flush=True)
            save(result, out, markdown)
    print(f"wrote {out}.json and {out}.md")
    return 1 if any("error" in row for row in result["runs"]) else 0


def save(result: dict, out: Path, markdown: Callable[[dict], str]) -> None:
    """Write OUT.json and OUT.md (after every run, so an interrupted sweep keeps what finished)."""
    Path(f"{out}.json").write_text(json.dumps(result, indent=1) + "\n")
    Path(f"{out}.md").write_text(markdown(result))


if __name__ == "__main__":
    sys.exit(main())
