"""Inter-op plan search (Sec. 5) on GPT training steps: time per phase and the plans found.

A GPT-3 training step (Adam) is lowered from abstract shapes, clustered into layers by
``alpa-layer-construction`` and sliced into stages by ``alpa-stage-construction`` on a
cluster, with the DP (``auto``) and with the paper's two ablation baselines (Sec. 8.3):
``equal-layer`` (every stage as many layers) and ``equal-operator`` (layers of equally
many forward ops). One row per run: seconds for clustering, for the intra-op plans of
every (layer range, submesh, logical mesh), for the DP; the number of intra-op plans
solved and of candidates; the predicted pipeline latency (Eq. 2, analytic costs) and the
stages. Results go to ``OUT.json`` (after every run) and ``OUT.md``.

    python benchmarks/stage_search.py --quick
    python benchmarks/stage_search.py --model 350M --model-layers 8 --layers 4 --cluster 1x8 --micro-batches 8
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # lowering needs no accelerator

import jax  # noqa: E402
from jax._src.lib.mlir import ir  # noqa: E402

import alpa_mlir.passes  # noqa: E402, F401  (registers every pass)
from alpa_mlir import models  # noqa: E402
from alpa_mlir.dialect import make_context  # noqa: E402
from alpa_mlir.passes import run_pipeline  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from ilp_scaling import machine_info, markdown_table, save  # noqa: E402


def lowered(config, batch_size: int) -> ir.Module:
    """The imported training step of ``config`` (any model of ``alpa_mlir.models``) for a batch."""
    args = models.abstract_args(config, batch_size)
    text = jax.jit(models.build(config).train_step, keep_unused=True).lower(*args).as_text(debug_info=True)
    module = ir.Module.parse(text, context=make_context())
    run_pipeline(module, "builtin.module(alpa-import-pipeline)")
    return module


def search(module: ir.Module, layers: int, cluster: tuple[int, int], micro_batches: int, mode: str, options: str,
           *, workdir: Path) -> dict:
    """Layer and stage construction of ``module`` (in place) in ``mode``, with more
    ``options`` of the stage pass: the row of timings and the plan. Raises what the passes raise."""
    row: dict = {"mode": mode}
    start = time.perf_counter()
    run_pipeline(module, f"builtin.module(alpa-layer-construction{{layers={layers}}})")
    row["clustering_seconds"] = time.perf_counter() - start
    report = workdir / f"stages_{mode}.json"
    pipeline = (f"cluster-shape={cluster[0]},{cluster[1]} num-micro-batches={micro_batches} {options} "
                f"report={report}" + (f" stage-mode={mode}" if mode != "auto" else ""))
    start = time.perf_counter()
    run_pipeline(module, f"builtin.module(alpa-stage-construction{{{pipeline}}})")
    row["stage_construction_seconds"] = time.perf_counter() - start
    plan = json.loads(report.read_text())
    row.update(status="ok", latency=plan["latency"], intra_op_plans=plan["search"]["intra_op_plans"],
               candidates=plan["search"]["candidates"], cost_seconds=plan["search"]["cost_seconds"],
               dp_seconds=plan["search"]["dp_seconds"], layering=plan["search"]["layering"],
               stages=" ".join(f"[{s['layers'][0]},{s['layers'][1]})@{s['submesh'][0]}x{s['submesh'][1]}"
                               f"({s['logical_mesh'][0]}x{s['logical_mesh'][1]})" for s in plan["stages"]))
    return row


def run_one(config: models.GPTConfig, batch_size: int, layers: int, cluster: tuple[int, int],
            micro_batches: int, mode: str, *, jobs: int, workdir: Path) -> dict:
    row = {"mode": mode, "cluster": "x".join(map(str, cluster)), "layers": layers}
    try:
        return row | search(lowered(config, batch_size), layers, cluster, micro_batches, mode, f"jobs={jobs}",
                            workdir=workdir)
    except (ir.MLIRError, ValueError) as error:
        return row | {"status": "error", "error": str(error).splitlines()[-1]}


COLUMNS = (("mode", "mode", "{}"), ("cluster", "cluster", "{}"), ("layers", "layers", "{}"),
           ("clustering_seconds", "clustering s", "{:.1f}"), ("intra_op_plans", "intra-op plans", "{}"),
           ("candidates", "candidates", "{}"), ("cost_seconds", "costs s", "{:.1f}"),
           ("dp_seconds", "DP s", "{:.3f}"), ("latency", "predicted latency s", "{:.4g}"), ("stages", "stages", "{}"))


def markdown(result: dict) -> str:
    s = result["settings"]
    return markdown_table(
        "Inter-op plan search on GPT training steps", result,
        f"Model: GPT-3 {s['model']} width, {s['model_layers']} transformer layers, seq {s['seq_len']}, Adam, "
        f"global batch {s['batch_size']}, {s['micro_batches']} micro-batches, {s.get('jobs', 1)} planning "
        "processes; analytic stage costs "
        "(alpa-stage-construction defaults: 1e13 FLOP/s per device, 100 GB/s in a host, 25 Gbit/s between hosts). "
        "Stages are `[first, last) layer @ submesh (logical mesh)`.", COLUMNS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="350M", choices=sorted(models.GPT3), help="GPT-3 width preset")
    parser.add_argument("--model-layers", type=int, default=8, help="transformer layers of the traced model")
    parser.add_argument("--seq-len", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4, help="layers L of the clustering")
    parser.add_argument("--cluster", default="1x8", help="hosts x devices per host")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--micro-batches", type=int, default=8)
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                        help="processes planning candidates (default: the usable CPUs)")
    parser.add_argument("--quick", action="store_true", help="2 transformer layers, 2 clustered, cluster 1x4")
    parser.add_argument("--out", default="benchmarks/results/stage_search", help="output path without extension")
    args = parser.parse_args(argv)
    if args.quick:
        args.model_layers, args.layers, args.cluster = 2, 2, "1x4"
    cluster = tuple(int(d) for d in args.cluster.split("x"))
    config = dataclasses.replace(models.GPT3[args.model], layers=args.model_layers, seq_len=args.seq_len)
    settings = {"model": args.model, "model_layers": args.model_layers, "seq_len": args.seq_len,
                "batch_size": args.batch_size, "micro_batches": args.micro_batches, "layers": args.layers,
                "jobs": args.jobs,
                "cluster": args.cluster}
    modes = ["auto", "equal-layer", "equal-operator"]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    result = {"machine": machine_info(), "settings": settings, "runs": []}
    with tempfile.TemporaryDirectory() as workdir:
        for mode in modes:
            print(f"{mode} ...", flush=True)
            row = run_one(config, args.batch_size, args.layers, cluster, args.micro_batches, mode, jobs=args.jobs,
                          workdir=Path(workdir))
            result["runs"].append(row)
            print("    " + json.dumps(row), flush=True)
            save(result, out, markdown)
    print(f"wrote {out}.json and {out}.md")
    return 1 if any("error" in row for row in result["runs"]) else 0


if __name__ == "__main__":
    sys.exit(main())
