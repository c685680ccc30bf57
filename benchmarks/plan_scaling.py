"""How long planning takes at scale, beside XLA's own compile of the same step.

For GPT-3 training steps (Adam, sequence 1024) on abstract arguments (``jax.ShapeDtypeStruct``:
nothing is allocated), one row per (model, mesh) times, in one process and one after the
other:

- **plan**: ``parallelize(step, method=ShardParallel(mesh_shape=...)).get_plan(*args)``,
  the whole first-call planning: tracing, import, strategies, costs, the ILP (with its
  defaults: XLA-priced and shared reshardings, repeated layers solved once), annotation;
- **compile**: XLA's compile of the data-parallel ``jax.jit`` of the same step (batch split
  over every device, the rest replicated), lowered and compiled for the same devices.

A ``:scan`` row writes the layers as one ``lax.scan`` over stacked parameters
(``GPTConfig.scan_layers``, as MaxText and Flax's ``nn.scan`` do): JAX traces the body
once, and the planner plans it once and prices it per trip (``dialect/loops.py``), so
planning time no longer grows with depth; so does XLA's compile.

The goal (issue 30) is plan / compile at most 0.5. ``--busy N`` runs N processes that
keep a core busy each, to show how planning behaves under load. Results go to
``OUT.json`` (after every row) and ``OUT.md``, with the machine and settings.

    python benchmarks/plan_scaling.py --quick
    python benchmarks/plan_scaling.py --rows 1.3B:2x4,6.7B:2x4,39B:8x8 --busy 1 --out /tmp/busy
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# 96 layers plan only: XLA:CPU's compile of that step ran out of this machine's 24 GiB.
DEFAULT_ROWS = "1.3B:8,1.3B:2x4,1.3B@96:2x4:plan,6.7B:8,6.7B:2x4,39B:8x8,1.3B:2x4:scan,1.3B@96:2x4:scan"
QUICK_ROWS = "1.3B@4:2x4"


def parse_row(text: str) -> tuple[str, int | None, tuple[int, ...], bool, bool]:
    """``MODEL[@LAYERS]:MESH[:plan][:scan]`` (``1.3B@96:2x4``: the 1.3B model's width with 96
    layers; ``:plan``: planning only, no XLA compile; ``:scan``: the layers in a ``lax.scan``)."""
    model, mesh, *flags = text.split(":")
    if not set(flags) <= {"plan", "scan"} or len(set(flags)) < len(flags):
        raise SystemExit(f"row {text!r}: expected MODEL[@LAYERS]:MESH[:plan][:scan]")
    name, _, layers = model.partition("@")
    return (name, int(layers) if layers else None, tuple(int(d) for d in mesh.split("x")), "plan" in flags,
            "scan" in flags)


def _spin() -> None:
    while True:
        pass


@contextlib.contextmanager
def busy(processes: int) -> Iterator[None]:
    """``processes`` other processes keeping a core busy each while the block runs."""
    workers = [multiprocessing.get_context("spawn").Process(target=_spin, daemon=True) for _ in range(processes)]
    for worker in workers:
        worker.start()
    try:
        yield
    finally:
        for worker in workers:
            worker.terminate()
            worker.join()


def run_one(name: str, layers: int | None, mesh: tuple[int, ...], batch_size: int, compile_too: bool,
            scan: bool = False) -> dict:
    import jax
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    import alpa_mlir
    from alpa_mlir import models

    config = dataclasses.replace(models.GPT3[name], layers=layers or models.GPT3[name].layers, scan_layers=scan)
    model = models.build(config)
    args = model.abstract_args(batch_size)
    devices = jax.devices()[:math.prod(mesh)]
    row = {"model": name, "layers": config.layers, "scan": scan, "mesh": "x".join(map(str, mesh)), "batch": batch_size,
           "params": models.num_params(config)}
    start = time.perf_counter()
    step = alpa_mlir.parallelize(model.train_step, method=alpa_mlir.ShardParallel(
        mesh_shape=mesh, devices=devices, batch_argnums=(2,)))
    plan = step.get_plan(*args)
    row["plan_seconds"] = time.perf_counter() - start
    row.update(objective=plan.objective, nodes=plan.solver.get("nodes"),
               nodes_after_reduction=plan.solver.get("nodes_after_reduction"), method=plan.solver.get("method"),
               solve_seconds=plan.solver.get("solve_seconds"))
    if not compile_too:
        return row
    flat = jax.sharding.Mesh(devices, ("d",))
    replicated, split = NamedSharding(flat, P()), NamedSharding(flat, P("d"))
    state = jax.tree.map(lambda _: replicated, args[:2])
    batch = jax.tree.map(lambda _: split, args[2])
    start = time.perf_counter()
    jax.jit(model.train_step, in_shardings=(*state, batch), out_shardings=(*state, replicated)
            ).lower(*args).compile()
    row["compile_seconds"] = time.perf_counter() - start
    row["ratio"] = row["plan_seconds"] / row["compile_seconds"]
    return row


COLUMNS = (("model", "model", "{}"), ("layers", "layers", "{}"), ("scan", "scan", "{}"), ("mesh", "mesh", "{}"),
           ("batch", "batch", "{}"),
           ("nodes", "ILP nodes", "{}"), ("nodes_after_reduction", "solved", "{}"), ("method", "method", "{}"),
           ("objective", "objective", "{:.7g}"),
           ("solve_seconds", "solve s", "{:.1f}"), ("plan_seconds", "plan s", "{:.1f}"),
           ("compile_seconds", "XLA compile s", "{:.1f}"), ("ratio", "plan / compile", "{:.2f}"))


def add_row_options(parser: argparse.ArgumentParser, rows: str, quick: str) -> None:
    """``--rows`` (default ``rows``) and ``--quick`` (``quick`` only): the GPT-3 steps to run."""
    parser.add_argument("--rows", default=rows, help="comma-separated MODEL[@LAYERS]:MESH[:plan], e.g. 6.7B:2x4")
    parser.add_argument("--quick", action="store_true", help=f"only {quick} (about a minute)")


def chosen_rows(args: argparse.Namespace, quick: str) -> tuple[list[tuple], int]:
    """The parsed rows, and the devices the largest mesh needs, made that many virtual CPU
    devices (before JAX starts)."""
    rows = [parse_row(r) for r in (quick if args.quick else args.rows).split(",")]
    devices = max(math.prod(row[2]) for row in rows)
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               f" --xla_force_host_platform_device_count={devices}").strip()
    return rows, devices


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_row_options(parser, DEFAULT_ROWS, QUICK_ROWS)
    parser.add_argument("--batch-size", type=int, default=8,
                        help="sequences per step (raised to the mesh's device count where that is larger)")
    parser.add_argument("--busy", type=int, default=0, help="other processes keeping a core busy each")
    parser.add_argument("--out", default="benchmarks/results/plan_scaling", help="output path without extension")
    args = parser.parse_args(argv)
    rows, devices = chosen_rows(args, QUICK_ROWS)
    sys.path.insert(0, str(Path(__file__).parent))
    from ilp_scaling import command_line, machine_info, markdown_table, save

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    result = {"machine": machine_info(), "command": command_line("plan_scaling.py", argv),
              "settings": {"rows": [list(r) for r in rows], "batch_size": args.batch_size, "busy": args.busy,
                           "devices": devices}, "runs": []}

    def markdown(result: dict) -> str:
        return markdown_table(
            "Planning time at scale against XLA's compile", result,
            f"GPT-3 (Adam, sequence 1024, float32), abstract arguments, {devices} virtual CPU devices; "
            f"{args.busy} other busy process(es). \"plan s\": ShardParallel's get_plan with its defaults "
            "(tracing to annotation); \"XLA compile s\": lowering and compiling the data-parallel jax.jit of the "
            f"same step. Made with `{result['command']}`.", COLUMNS)

    with busy(args.busy):
        for i, (name, layers, mesh, plan_only, scan) in enumerate(rows, 1):
            batch = max(args.batch_size, math.prod(mesh))
            print(f"[{i}/{len(rows)}] GPT-3 {name}{f' x {layers} layers' if layers else ''}{' scanned' if scan else ''}"
                  f" on {'x'.join(map(str, mesh))}, batch {batch} ...", file=sys.stderr, flush=True)
            row = run_one(name, layers, mesh, batch, compile_too=not plan_only, scan=scan)
            result["runs"].append(row)
            print(f"    plan {row['plan_seconds']:.1f} s" + (f", XLA compile {row['compile_seconds']:.1f} s, ratio "
                                                             f"{row['ratio']:.2f}" if not plan_only else ""),
                  file=sys.stderr, flush=True)
            save(result, out, markdown)
    print(f"wrote {out}.json and {out}.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
