"""The plan's predicted memory per device against what XLA allocates for it.

For GPT-3 training steps (Adam, sequence 1024, float32) on abstract arguments, one row
per ``MODEL[@LAYERS]:MESH[:scan]`` (``:scan``: the layers in a ``lax.scan``):
``ShardParallel``'s plan (its defaults), with the parameters and optimizer state donated
(``donate_argnums=(0, 1)``, as a training loop would) unless ``--no-donate``;
``ShardingPlan.memory`` (``passes/intra_op/peak_memory.py``) beside the compiled plan's
``memory_analysis()``: arguments, outputs, aliased, temporaries, and the total
(arguments + outputs - aliased + temporaries). Nothing is allocated; each row
compiles the plan for the mesh's virtual CPU devices. Results go to ``OUT.json`` (after
every row) and ``OUT.md``.

With ``--zoo`` the rows are ``benchmarks/plan_quality.py``'s models (full size) on its
meshes, planned as that benchmark plans them (nothing donated).

    python benchmarks/memory_model.py --quick
    python benchmarks/memory_model.py --rows 1.3B:8,1.3B:2x4,6.7B:8,6.7B:2x4
    python benchmarks/memory_model.py --rows 1.3B:2x4:scan,1.3B@96:2x4:scan --out /tmp/scanned
    python benchmarks/memory_model.py --zoo --out benchmarks/results/memory_model_zoo
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

DEFAULT_ROWS = "1.3B:8,1.3B:2x4,6.7B:8,6.7B:2x4"
QUICK_ROWS = "350M@2:8,350M@2:2x4"
MB = 2**20
PARTS = ("arguments", "outputs", "aliased", "temporaries")


def run_one(name: str, layers: int | None, scan: bool, mesh: tuple[int, ...], batch_size: int,
            donate: bool) -> dict:
    from alpa_mlir import models

    config = dataclasses.replace(models.GPT3[name], layers=layers or models.GPT3[name].layers, scan_layers=scan)
    model = models.build(config)
    row = measure(model.train_step, model.abstract_args(batch_size), mesh, (2,), (0, 1) if donate else ())
    return {"model": name, "layers": f"{config.layers}{' scanned' if scan else ''}", "batch": batch_size,
            "donated": donate, **row}


def run_zoo_one(work, mesh: tuple[int, ...]) -> dict:
    """A model of plan_quality.py's zoo, planned as that benchmark plans it."""
    return {"model": work.name, "layers": "", "batch": "", "donated": False,
            **measure(work.step, (work.state, work.batch), mesh, (1,), ())}


def measure(fn, args: tuple, mesh: tuple[int, ...], batch_argnums: tuple[int, ...],
            donate_argnums: tuple[int, ...]) -> dict:
    import warnings

    import jax

    import alpa_mlir

    step = alpa_mlir.parallelize(fn, method=alpa_mlir.ShardParallel(
        mesh_shape=mesh, devices=jax.devices()[:math.prod(mesh)], batch_argnums=batch_argnums),
        donate_argnums=donate_argnums)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the plan's own warnings (layer construction, XLA's partitioner)
        memory = step.get_plan(*args).memory
        xla = step.get_executable(*args).compiled.executable.get_compiled_memory_stats()
    measured = {"arguments": xla.argument_size_in_bytes, "outputs": xla.output_size_in_bytes,
                "aliased": xla.alias_size_in_bytes, "temporaries": xla.temp_size_in_bytes}
    row = {"mesh": "x".join(map(str, mesh)), "peak_at": memory.at}
    for part in PARTS:
        row[f"predicted_{part}_mb"] = getattr(memory, part) / MB
        row[f"xla_{part}_mb"] = measured[part] / MB
    row["exact_parts"] = all(getattr(memory, part) == measured[part] for part in PARTS[:3])
    row["predicted_mb"] = memory.total / MB
    row["xla_mb"] = (measured["arguments"] + measured["outputs"] - measured["aliased"] + measured["temporaries"]) / MB
    row["ratio"] = row["predicted_mb"] / row["xla_mb"]
    return row


COLUMNS = (("model", "model", "{}"), ("layers", "layers", "{}"), ("mesh", "mesh", "{}"),
           ("batch", "batch", "{}"), ("donated", "donated", "{}"),
           ("xla_arguments_mb", "arguments", "{:.0f}"), ("xla_outputs_mb", "outputs", "{:.0f}"),
           ("xla_aliased_mb", "aliased", "{:.0f}"), ("exact_parts", "predicted equal", "{}"),
           ("predicted_temporaries_mb", "temp predicted", "{:.0f}"),
           ("xla_temporaries_mb", "temp XLA", "{:.0f}"), ("predicted_mb", "total predicted", "{:.0f}"),
           ("xla_mb", "total XLA", "{:.0f}"), ("ratio", "predicted / XLA", "{:.3f}"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sys.path.insert(0, str(Path(__file__).parent))
    from plan_scaling import add_row_options, chosen_rows

    add_row_options(parser, DEFAULT_ROWS, QUICK_ROWS)
    parser.add_argument("--batch-size", type=int, default=8, help="sequences per step")
    parser.add_argument("--no-donate", action="store_true", help="keep the state's buffers (no donate_argnums)")
    parser.add_argument("--zoo", action="store_true", help="plan_quality.py's models on its meshes instead of GPT-3")
    parser.add_argument("--out", default="benchmarks/results/memory_model", help="output path without extension")
    args = parser.parse_args(argv)
    rows = [(name, layers, mesh, scan) for name, layers, mesh, _, scan in chosen_rows(args, QUICK_ROWS)[0]]
    from ilp_scaling import command_line, machine_info, markdown_table, save

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    result = {"machine": machine_info(), "command": command_line("memory_model.py", argv),
              "settings": {"rows": [list(r) for r in rows], "batch_size": args.batch_size,
                           "donate": not args.no_donate}, "runs": []}

    def markdown(result: dict) -> str:
        return markdown_table(
            "Predicted memory per device against XLA's", result,
            ("benchmarks/plan_quality.py's models (full size, nothing donated)" if args.zoo else
             "GPT-3 (Adam, sequence 1024, float32)")
            + ", ShardParallel's plan with its defaults, compiled for virtual CPU devices. MiB per device; "
            "arguments, outputs and aliased are XLA's (\"predicted equal\": the prediction's three are the "
            "same bytes), temporaries and totals both. \"total\" = arguments + "
            f"outputs - aliased + temporaries, XLA's memory_analysis. Made with `{result['command']}`.", COLUMNS)

    if args.zoo:
        from plan_quality import MESHES, SCALE_MODELS  # noqa: I001 (sets XLA_FLAGS before JAX starts)
        from plan_quality_models import MissingLibrary, zoo

        jobs = []
        for name, make in zoo(quick=False).items():
            if name in SCALE_MODELS:  # not in plan_quality.py's default sweep; the rows above have them
                continue
            jobs += [(f"{name} on {'x'.join(map(str, mesh))}", make, mesh) for mesh in MESHES]
        result["settings"] = {"zoo": True, "meshes": [list(m) for m in MESHES]}
    else:
        jobs = [(f"GPT-3 {name} on {'x'.join(map(str, mesh))}", (name, layers, scan), mesh)
                for name, layers, mesh, scan in rows]
    works: dict = {}
    for i, (title, what, mesh) in enumerate(jobs, 1):
        print(f"[{i}/{len(jobs)}] {title} ...", file=sys.stderr, flush=True)
        if args.zoo:
            try:
                work = works.setdefault(what, what())
            except MissingLibrary as missing:
                print(f"    skipped: {missing}", file=sys.stderr)
                continue
            row = run_zoo_one(work, mesh)
        else:
            row = run_one(*what, mesh, args.batch_size, not args.no_donate)
        result["runs"].append(row)
        print(f"    predicted {row['predicted_mb']:.0f} MiB, XLA {row['xla_mb']:.0f} MiB, ratio {row['ratio']:.3f}",
              file=sys.stderr, flush=True)
        save(result, out, markdown)
    print(f"wrote {out}.json and {out}.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
