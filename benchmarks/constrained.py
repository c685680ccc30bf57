"""``auto_shard`` + plain ``jax.jit``: what XLA emits with and without ``AutoShardResult.constrained``.

For Hugging Face Flax models (GPT-2, BERT, Llama, ViT; ``plan_quality_models.hf_flax``)
on meshes of 8 virtual CPU devices, one AdamW step ``step(state, batch)`` on abstract
shapes is compiled three ways, never run:

- **parallelize**: ``parallelize(step, method=ShardParallel(mesh_shape=...))``'s program;
- **constrained**: ``jax.jit(r.constrained(step), in_shardings=r.in_shardings,
  out_shardings=r.out_shardings)`` with ``r = auto_shard(step, ...)`` (the same plan);
- **shardings only**: ``jax.jit(step, in_shardings=r.in_shardings, out_shardings=r.out_shardings)``,
  XLA's propagation choosing every op between.

Per program: ring-weighted collective bytes per device (``plan_quality.emitted``) and
FLOPs per device (``cost_analysis``); the table gives each over parallelize's.

    python benchmarks/constrained.py
    python benchmarks/constrained.py --models gpt2,bert --meshes 2x4
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from plan_quality import emitted, executable_stats, parse_meshes  # sets XLA_FLAGS before jax starts
from plan_quality_models import hf_flax

# isort: split
import jax

import alpa_mlir
from alpa_mlir.dialect.mesh import DeviceMesh

# family: (layers, hidden, heads, seq or image size, vocab or classes, batch)
MODELS = {"gpt2": (4, 256, 4, 64, 1024, 16), "bert": (4, 256, 4, 64, 1024, 16),
          "llama": (4, 256, 4, 64, 1024, 16), "vit": (4, 256, 4, 32, 64, 16)}


def measure(family: str, shape: tuple[int, ...]) -> dict:
    *shape, vocab, batch = MODELS[family]
    work = hf_flax(f"hf-{family}", family, *shape, vocab=vocab, batch=batch)
    mesh = DeviceMesh(shape)
    method = alpa_mlir.ShardParallel(mesh_shape=shape)
    row: dict = {"model": work.name, "mesh": "x".join(map(str, shape)), "description": work.description}
    fn = alpa_mlir.parallelize(work.step, method=method, batch_argnums=(1,))
    compiled = fn.get_executable(work.state, work.batch).compiled
    row["parallelize"] = {"emitted": emitted(compiled.hlo_text, mesh),
                          **executable_stats(compiled.executable.cost_analysis(), None)}
    plan = alpa_mlir.auto_shard(work.step, work.state, work.batch, method=method, batch_argnums=(1,))
    for name, step in (("constrained", plan.constrained(work.step)), ("shardings_only", work.step)):
        start = time.perf_counter()
        program = jax.jit(step, in_shardings=plan.in_shardings, out_shardings=plan.out_shardings) \
            .lower(work.state, work.batch).compile()
        row[name] = {"compile_seconds": time.perf_counter() - start, "emitted": emitted(program.as_text(), mesh),
                     **executable_stats(program.cost_analysis(), None)}
    base = row["parallelize"]
    for name in ("constrained", "shardings_only"):
        row[name]["bytes_ratio"] = row[name]["emitted"]["ring_bytes"] / max(base["emitted"]["ring_bytes"], 1.0)
        row[name]["flops_ratio"] = row[name]["flops"] / base["flops"]
    return row


def markdown(rows: list[dict], command: str) -> str:
    lines = [f"`{command}`", "",
             "| model | mesh | parallelize ring MiB | FLOPs/device | constrained bytes | constrained FLOPs "
             "| shardings only bytes | shardings only FLOPs |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        p, c, s = r["parallelize"], r["constrained"], r["shardings_only"]
        lines.append(f"| {r['model']} | {r['mesh']} | {p['emitted']['ring_bytes'] / 2**20:.2f} | {p['flops']:.3e} "
                     f"| {c['bytes_ratio']:.3f}x | {c['flops_ratio']:.3f}x | {s['bytes_ratio']:.3f}x "
                     f"| {s['flops_ratio']:.3f}x |")
    lines += ["", "Ratios are over parallelize's program. Models:", ""]
    lines += sorted({f"- {r['model']}: {r['description']}" for r in rows})
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated: " + ", ".join(MODELS))
    parser.add_argument("--meshes", default="8,2x4", help="comma-separated mesh shapes, e.g. 8,2x4")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "constrained"),
                        help="output path without extension (.json and .md are written)")
    args = parser.parse_args(argv)
    families = args.models.split(",")
    unknown = sorted(set(families) - set(MODELS))
    if unknown:
        parser.error(f"--models: unknown {unknown}; choose from {sorted(MODELS)}")
    rows = []
    for family in families:
        for shape in parse_meshes(args.meshes):
            rows.append(measure(family, shape))
            r = rows[-1]
            print(f"{r['model']} {r['mesh']}: constrained {r['constrained']['bytes_ratio']:.3f}x bytes "
                  f"{r['constrained']['flops_ratio']:.3f}x FLOPs; shardings only "
                  f"{r['shardings_only']['bytes_ratio']:.3f}x, {r['shardings_only']['flops_ratio']:.3f}x",
                  file=sys.stderr, flush=True)
    command = "python benchmarks/constrained.py " + " ".join(argv if argv is not None else sys.argv[1:])
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out + ".json").write_text(json.dumps({"command": command.strip(), "rows": rows}, indent=1))
    Path(args.out + ".md").write_text(markdown(rows, command.strip()))
    print(markdown(rows, command.strip()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
