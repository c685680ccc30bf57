"""Inter-op plan search (Sec. 5) for the paper's models on their GPU counts (Appendix A, Sec. 8.3-8.4).

Each model of the paper's tables (GPT-3 350M-39B, GShard MoE 380M-70B, Wide-ResNet
250M-13B) is lowered from abstract shapes (``jax.ShapeDtypeStruct``: nothing is
allocated) with one micro-batch's shapes, imported, clustered by
``alpa-layer-construction`` and sliced by ``alpa-stage-construction`` on the paper's
cluster for it (1, 4, 8 GPUs as 1xN; 16, 32, 64 as 2x8, 4x8, 8x8). One row per run:
seconds to lower and import, to cluster, for all intra-op plans (and how many), for the
DP; the plan (stages, submeshes, logical meshes) and its predicted latency (Eq. 2,
analytic costs). The ablation (Sec. 8.3) runs ``auto``, ``equal-layer`` and
``equal-operator`` on the same model. Results go to ``OUT.json`` (after every run) and
``OUT.md``.

The search space is cut as the options say (``--max-costed-layers``: ranges of more
layers composed from planned ones; ``--logical-mesh-space``); see
``alpa-stage-construction --help``. ``--virtual-stages v`` searches for interleaved 1F1B
(its Eq. 2, each mesh's layers in ``v`` chunks).

    python benchmarks/paper_search.py --quick
    python benchmarks/paper_search.py --models gpt:39B --timeout 900
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # lowering needs no accelerator

from jax._src.lib.mlir import ir  # noqa: E402

import alpa_mlir.passes  # noqa: E402, F401  (registers every pass)
from alpa_mlir import models  # noqa: E402
from alpa_mlir.dialect import make_context  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from ilp_scaling import machine_info, markdown_table, save  # noqa: E402
from stage_search import lowered, search  # noqa: E402

# The paper's GPU count per model (Sec. 8.1, Fig. 7) as a cluster of 8-GPU hosts.
CLUSTERS = {1: (1, 1), 4: (1, 4), 8: (1, 8), 16: (2, 8), 32: (4, 8), 64: (8, 8)}
GPUS = (1, 4, 8, 16, 32, 64)
FAMILIES = {"gpt": models.GPT3, "moe": models.MOE, "wresnet": models.WIDE_RESNET}


def workload(family: str, preset: str) -> tuple:
    """(config, GPUs, clustered layers L, micro-batch size, micro-batches B) of a preset; GPT and
    MoE with a global batch of 1024 sequences, Wide-ResNet of 1536 images (Sec. 8.1)."""
    config = FAMILIES[family][preset]
    gpus = GPUS[list(FAMILIES[family]).index(preset)]
    if family == "wresnet":
        blocks = sum(config.stages)
        return config, gpus, 16 if blocks > 16 else 8, 64, 24
    # At most 16 layers; at most 8 for narrow models, whose LM head alone holds too large a
    # share of the FLOPs for more layers within Sec. 5.2's delta.
    return config, gpus, min(16 if config.hidden >= 2048 else 8, config.layers // 2), 16, 64


def run_model(family: str, preset: str, modes: list[str], options: str, workdir: Path) -> list[dict]:
    config, gpus, layers, micro_batch, micro_batches = workload(family, preset)
    cluster = CLUSTERS[gpus]
    base = {"model": f"{family} {preset}", "gpus": gpus, "cluster": "x".join(map(str, cluster)),
            "model_layers": config.layers if family != "wresnet" else 3 * sum(config.stages) + 2,
            "layers": layers, "micro_batch": micro_batch, "micro_batches": micro_batches}
    start = time.perf_counter()
    try:
        # Text, parsed afresh for every mode.
        text = lowered(config, micro_batch).operation.get_asm(enable_debug_info=True)
    except Exception as error:  # noqa: BLE001  (a row with the error; the sweep goes on)
        return [base | {"status": "error", "error": f"lowering: {error}".splitlines()[0]}]
    lower_seconds = time.perf_counter() - start
    rows = []
    for mode in modes:
        start = time.perf_counter()
        try:
            module = ir.Module.parse(text, context=make_context())
            row = base | {"lower_seconds": lower_seconds} | search(module, layers, cluster, micro_batches, mode,
                                                                  options, workdir=workdir)
        except (ir.MLIRError, ValueError) as error:
            row = base | {"mode": mode, "status": "error", "error": str(error).splitlines()[-1]}
        row["total_seconds"] = lower_seconds + time.perf_counter() - start
        rows.append(row)
    return rows


COLUMNS = (("model", "model", "{}"), ("gpus", "GPUs", "{}"), ("cluster", "cluster", "{}"),
           ("layers", "L", "{}"), ("mode", "mode", "{}"), ("lower_seconds", "lower s", "{:.0f}"),
           ("clustering_seconds", "clustering s", "{:.1f}"), ("intra_op_plans", "ILPs", "{}"),
           ("cost_seconds", "ILPs s", "{:.1f}"), ("dp_seconds", "DP s", "{:.3f}"),
           ("total_seconds", "total s", "{:.0f}"), ("latency", "predicted latency s", "{:.4g}"),
           ("layering", "layering", "{}"), ("stages", "stages", "{}"))


def markdown(result: dict) -> str:
    s = result["settings"]
    return markdown_table(
        "Inter-op plan search for the paper's models", result,
        f"Options of alpa-stage-construction: `{s['options']}`; analytic stage costs (1e13 FLOP/s per device, "
        "100 GB/s in a host, 25 Gbit/s between hosts). GPT/MoE: seq 1024, micro-batches of 16 sequences, B = 64 "
        "(global batch 1024); Wide-ResNet: 224x224 images, micro-batches of 64, B = 24 (1536). L: clustered "
        "layers. \"total s\" is lowering + clustering + stage construction (with the final whole-stage plans and "
        "outlining). \"layering\": the layers of the plan (auto searches the clustered and the equal-operator "
        "ones). Stages are `[first, last) layer @ submesh (logical mesh)`.", COLUMNS)


QUICK = ["gpt:350M", "gpt:1.3B", "moe:380M", "wresnet:250M"]
ALL = [f"{family}:{preset}" for family in FAMILIES for preset in FAMILIES[family]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(ALL), help="comma-separated family:preset, e.g. gpt:39B")
    parser.add_argument("--ablation", default="", help="comma-separated models also run with equal-layer and "
                                                       "equal-operator (Sec. 8.3)")
    parser.add_argument("--max-costed-layers", type=int, default=2)
    parser.add_argument("--logical-mesh-space", default="physical", choices=("physical", "all"))
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                        help="processes planning candidates (default: the usable CPUs)")
    parser.add_argument("--virtual-stages", type=int, default=1,
                        help="v > 1: the DP of interleaved 1F1B (each mesh's layers in v chunks)")
    parser.add_argument("--quick", action="store_true", help=f"{', '.join(QUICK)}; ablation on gpt:1.3B")
    parser.add_argument("--out", default="benchmarks/results/paper_search", help="output path without extension")
    args = parser.parse_args(argv)
    chosen = QUICK if args.quick else args.models.split(",")
    ablation = ["gpt:1.3B"] if args.quick else [m for m in args.ablation.split(",") if m]
    options = (f"max-costed-layers={args.max_costed_layers} logical-mesh-space={args.logical_mesh_space} "
               f"jobs={args.jobs}" + (f" virtual-stages={args.virtual_stages}" if args.virtual_stages > 1 else ""))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    result = {"machine": machine_info(), "settings": {"options": options, "models": chosen,
                                                      "ablation": ablation}, "runs": []}
    with tempfile.TemporaryDirectory() as workdir:
        for name in dict.fromkeys(chosen + ablation):
            family, preset = name.split(":")
            modes = ["auto", "equal-layer", "equal-operator"] if name in ablation else ["auto"]
            print(f"{name} ({', '.join(modes)}) ...", flush=True)
            for row in run_model(family, preset, modes, options, Path(workdir)):
                result["runs"].append(row)
                print("    " + json.dumps(row), flush=True)
                save(result, out, markdown)
    print(f"wrote {out}.json and {out}.md")
    return 1 if any("error" in row for row in result["runs"]) else 0


if __name__ == "__main__":
    sys.exit(main())
