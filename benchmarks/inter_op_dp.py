"""Time the two inter-op DPs alone, at the sizes of the paper's largest runs.

The stage DP (Algorithm 1, ``solve_stage_dp``) on a synthetic transformer-like cost table:
``L`` layers of equal cost, the first and last heavier (embedding, head), on every
submesh shape of an ``N x M`` cluster and three logical views, latencies from perfect
scaling times an overhead that grows with the mesh (more across hosts), memory with
Eq. 5 binding. The clustering DP (Sec. 5.2, ``cluster_operators``) on a synthetic op sequence
of ``K`` ops, one heavy op in ten, edges to the next few ops. Best of ``--repeat`` runs.

    python benchmarks/inter_op_dp.py
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from alpa_mlir.passes.inter_op.layer_clustering import Value, cluster_operators
from alpa_mlir.passes.inter_op.stage_dp import StageCosts, solve_stage_dp
from alpa_mlir.passes.inter_op.submesh import submesh_shapes

sys.path.insert(0, str(Path(__file__).parent))
from ilp_scaling import machine_info, markdown_table, save  # noqa: E402


def stage_costs(layers: int, cluster: tuple[int, int]) -> StageCosts:
    shapes = submesh_shapes(cluster)
    views = 3
    work = np.ones(layers)
    work[0] = work[-1] = 2.0
    prefix = np.concatenate([[0.0], np.cumsum(work)])
    latency = np.full((layers + 1, layers + 1, len(shapes), views), np.inf)
    param = np.zeros_like(latency)
    act = np.zeros_like(latency)
    for k, (n, m) in enumerate(shapes):
        for p in range(views):
            for i in range(layers):
                span = prefix[i + 1:] - prefix[i]
                # Intra-op communication grows with the mesh, more so across hosts.
                overhead = 1 + 0.2 * np.log2(n * m) + 0.5 * (n > 1) + 0.05 * p
                latency[i, i + 1:, k, p] = span / (n * m) * overhead
                param[i, i + 1:, k, p] = span * 2e9 / (n * m) / (1 + p)
                act[i, i + 1:, k, p] = span * 1e8 / (n * m)
    return StageCosts(latency, shapes, param, act, device_memory=16e9)


def clustering_input(ops: int, seed: int = 0) -> tuple[np.ndarray, list[Value]]:
    rng = np.random.default_rng(seed)
    flops = np.where(np.arange(ops) % 10 == 0, 1e9, 1e6)
    values = [Value(i, tuple(sorted({min(ops - 1, i + int(d)) for d in rng.integers(1, 6, 2)})), 4e6)
              for i in range(ops - 1)]
    return flops, values


def timed(fn, *args, repeat: int, **kwargs):
    """``fn(*args, **kwargs)``'s result and its best wall time of ``repeat`` runs."""
    best, result = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return result, float(best)


COLUMNS = (("dp", "DP", "{}"), ("size", "size", "{}"), ("seconds", "best s", "{:.3f}"), ("result", "result", "{}"))


def markdown(result: dict) -> str:
    return markdown_table("Inter-op DPs alone", result, f"Best of {result['settings']['repeat']} runs; synthetic "
                          "inputs (see the script's docstring).", COLUMNS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default="benchmarks/results/inter_op_dp", help="output path without extension")
    args = parser.parse_args(argv)
    result = {"machine": machine_info(), "settings": {"repeat": args.repeat}, "runs": []}
    for layers, cluster, batches in ((48, (8, 8), 64), (96, (8, 8), 64), (48, (4, 8), 16)):
        plan, seconds = timed(solve_stage_dp, stage_costs(layers, cluster), cluster, batches, repeat=args.repeat)
        result["runs"].append({"dp": "stage (Alg. 1)", "size": f"L={layers}, {cluster[0]}x{cluster[1]}, B={batches}",
                               "seconds": seconds, "result": f"{len(plan.stages)} stages, T*={plan.latency:.4g}"})
    for ops, layers in ((10_000, 48), (20_000, 96)):
        flops, values = clustering_input(ops)
        found, seconds = timed(cluster_operators, flops, values, layers, repeat=args.repeat)
        result["runs"].append({"dp": "clustering (Sec. 5.2)", "size": f"K={ops}, L={layers}, all cuts",
                               "seconds": seconds, "result": f"max received {found.max_received:.3g} B"})
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    save(result, out, markdown)
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
