"""What XLA emits per training step for ``ShardParallel``'s plans, against hand-written baselines.

For a model zoo (``plan_quality_models.py``: MLPs in the data- and model-parallel regimes,
GPT, a BERT layer, GShard MoE, Wide-ResNet, a ``flax.linen`` CNN and a Hugging Face
``FlaxGPT2LMHeadModel``) and the logical meshes (8,), (1, 8), (2, 4), (2, 2, 2) of 8 virtual
CPU devices, every step ``step(state, batch) -> (state, loss)`` is traced on abstract
shapes and compiled, never run:

- **plan**: ``parallelize(step, method=ShardParallel(mesh_shape=...), batch_argnums=(1,))``;
  the collectives of its partitioned HLO (``parse_collectives``: per-device buffer bytes
  per kind and mesh axes), plus the state's re-layout: a state leaf whose result sharding
  differs from its argument sharding must be moved back before the next step, and what
  that costs is read from a ``jax.jit`` identity compiled from the one sharding to the
  other. Emitted + re-layout is the plan's *steady-state* bytes per step.
- **predicted**: the plan's own collectives (``ShardingPlan.predicted_collectives``).
- **baselines**, ``jax.jit(step, in_shardings=..., out_shardings=...)`` with the state's
  out sharding equal to its in sharding: data parallel, ZeRO-2 (optimizer state sharded),
  ZeRO-3 (parameters too), Megatron (batch on the leading axes, tensor parallel on the
  last; per-model column/row rules).

Byte counts follow the project's convention (Tables 2-3, ``HloCollective.bytes``): the
per-device buffer (operand of all-reduce, reduce-scatter, all-to-all, permute; result of
all-gather). Since an all-reduce moves about as much as a reduce-scatter and an
all-gather of the same buffer together, the "ring" columns also weigh each collective
by a ring algorithm's traffic per device (all-reduce 2(n-1)/n, the others (n-1)/n of the
buffer, a permute all of it). Also per device: FLOPs (``cost_analysis``) and memory
(arguments + outputs + temporaries, ``memory_analysis``) of the plan and of DP.

    python benchmarks/plan_quality.py --quick
    python benchmarks/plan_quality.py --models gpt,bert --meshes 2x4,2x2x2
    python benchmarks/plan_quality.py --no-steady-state   # ShardParallel(steady_state=False)
"""

from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import sys
import time
import traceback
import warnings
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # XLA's GSPMD deprecation warning, once per compile
if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
# LLVM's optimisation level only: the HLO passes (SPMD partitioner, collective combiners, buffer
# assignment) are the same, so are the collectives, FLOPs and memory; compiling takes half the time.
if "xla_backend_optimization_level" not in os.environ["XLA_FLAGS"]:
    os.environ["XLA_FLAGS"] += " --xla_backend_optimization_level=0"

import jax  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

from alpa_mlir import ShardParallel, parallelize  # noqa: E402
from alpa_mlir.dialect.mesh import DeviceMesh  # noqa: E402
from alpa_mlir.lowering.hlo_collectives import parse_collectives, ring_factor  # noqa: E402
from alpa_mlir.passes.intra_op.cost_model import collective  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from ilp_scaling import machine_info, markdown_table, save  # noqa: E402
from plan_quality_models import MissingLibrary, Workload, zoo  # noqa: E402

MB = 2**20
MESHES = ((8,), (1, 8), (2, 4), (2, 2, 2))
QUICK_MESHES = ((8,), (2, 4))
BASELINES = ("dp", "zero2", "zero3", "megatron", "fsdp-tp")
KIND_SHORT = {"all-reduce": "AR", "all-gather": "AG", "reduce-scatter": "RS", "all-to-all": "A2A",
              "collective-permute": "CP"}


# -------------------------------------------------------------- collectives

def summary(collectives: Sequence[tuple[str, tuple[int, ...] | None, float, int]], mesh: DeviceMesh,
            repeat: int = 1) -> dict:
    """Bytes per device of (kind, mesh axes, bytes, group size) collectives: total, ring-weighted,
    per kind and per kind and axes (``?`` where the groups are not mesh axes), ring-weighted
    per axes; and their seconds on the alpha-beta model of ``mesh``'s axes (``cost_model.collective``)."""
    total = ring = seconds = 0.0
    by_kind: dict[str, float] = defaultdict(float)
    by_axes: dict[str, float] = defaultdict(float)
    ring_by_axes: dict[str, float] = defaultdict(float)
    for kind, axes, size, group in collectives:
        total += repeat * size
        ring += repeat * size * ring_factor(kind, group)
        seconds += repeat * collective(kind, size, axes or (), mesh, None if axes is not None else group).cost
        by_kind[kind] += repeat * size
        label = "?" if axes is None else ",".join(mesh.axis_names[a] for a in axes)
        by_axes[f"{kind}({label})"] += repeat * size
        ring_by_axes[label] += repeat * size * ring_factor(kind, group)
    return {"bytes": total, "ring_bytes": ring, "seconds": seconds, "count": len(collectives) * repeat,
            "by_kind": dict(by_kind), "by_kind_axes": dict(by_axes), "ring_by_axes": dict(ring_by_axes)}


def emitted(hlo_text: str, mesh: DeviceMesh, repeat: int = 1) -> dict:
    """What XLA's partitioned HLO communicates per step (a loop's collectives once per trip)."""
    return summary([(c.kind, c.mesh_axes, c.bytes, c.group_size)
                    for c in parse_collectives(hlo_text, mesh) for _ in range(c.trips)], mesh, repeat)


def added(a: dict, b: dict) -> dict:
    out = {key: a[key] + b[key] for key in ("bytes", "ring_bytes", "seconds", "count")}
    for key in ("by_kind", "by_kind_axes", "ring_by_axes"):
        out[key] = dict(a[key])
        for name, size in b[key].items():
            out[key][name] = out[key].get(name, 0.0) + size
    return out


def predicted(plan: Any) -> dict:
    """What the plan's cost model says the step communicates (algorithms' and reshardings')."""
    shape = plan.mesh.shape
    return summary([(c.kind, c.mesh_axes, c.bytes, math.prod(shape[a] for a in c.mesh_axes))
                    for c in plan.predicted_collectives()], plan.mesh)


def executable_stats(cost: Any, memory: Any) -> dict:
    """Per-device FLOPs and bytes (arguments + outputs + temporaries - aliased) of a compiled module."""
    if isinstance(cost, list):  # older jaxlibs: one dict per partition
        cost = cost[0] if cost else None
    stats: dict = {"flops": float(cost["flops"]) if cost and "flops" in cost else None}
    if memory is not None:
        stats["memory_bytes"] = (memory.argument_size_in_bytes + memory.output_size_in_bytes
                                 + memory.temp_size_in_bytes - memory.alias_size_in_bytes)
        stats["temp_bytes"] = memory.temp_size_in_bytes
    return stats


# -------------------------------------------------------------- the state's re-layout

def moves_data(shape: tuple[int, ...], source: Any, target: Any) -> bool:
    """Whether some device's target tile is not inside its source tile (so data must cross devices)."""
    have, want = source.devices_indices_map(shape), target.devices_indices_map(shape)
    for device, index in want.items():
        for dim, (w, h) in enumerate(zip(index, have[device])):
            w0, w1, _ = w.indices(shape[dim])
            h0, h1, _ = h.indices(shape[dim])
            if w0 < h0 or w1 > h1:
                return True
    return False


def sharding_text(sharding: Any) -> str:
    return str(sharding.spec) if isinstance(sharding, NamedSharding) else str(sharding)


def relayout(work: Workload, compiled: Any, mesh: DeviceMesh) -> tuple[dict, list[dict]]:
    """Bytes per step to move every state leaf from its result sharding back to its argument
    sharding, measured on a ``jax.jit`` identity; and one record per distinct move."""
    count = len(jax.tree.leaves(work.state))  # flat arguments and results both start with the state
    moves: dict[tuple, dict] = {}
    total = summary([], mesh)
    for i in range(count):
        aval, source, target = compiled.in_avals[i], compiled.output_shardings[i], compiled.input_shardings[i]
        result = compiled.out_avals[i]
        if (aval.shape, aval.dtype) != (result.shape, result.dtype):
            continue  # not the same state leaf
        if source.is_equivalent_to(target, len(aval.shape)):
            continue
        key = (aval.shape, str(aval.dtype), repr(source), repr(target))
        if key not in moves:
            identity = jax.jit(lambda x: x, in_shardings=source, out_shardings=target)
            hlo = identity.lower(jax.ShapeDtypeStruct(aval.shape, aval.dtype)).compile().as_text()
            cost = emitted(hlo, mesh)
            estimated = cost["count"] == 0 and moves_data(aval.shape, source, target)
            if estimated:  # XLA showed no collective for a move that needs one: the target tile, sent once
                tile = target.shard_shape(aval.shape)
                cost = summary([("collective-permute", None, math.prod(tile) * aval.dtype.itemsize, mesh.size)],
                               mesh)
            moves[key] = {"shape": list(aval.shape), "dtype": str(aval.dtype), "from": sharding_text(source),
                          "to": sharding_text(target), "leaves": 0, "bytes": cost["bytes"], "estimated": estimated,
                          "cost": cost}
        moves[key]["leaves"] += 1
        total = added(total, moves[key]["cost"])
    return total, list(moves.values())


# -------------------------------------------------------------- baselines

def largest_divisible(shape: tuple[int, ...], ways: int) -> int | None:
    dims = [d for d in range(len(shape)) if shape[d] % ways == 0 and shape[d] >= ways]
    return max(dims, key=lambda d: shape[d]) if dims else None


def split(shape: tuple[int, ...], dim: int | None, axes: tuple[str, ...], mesh: jax.sharding.Mesh) -> P:
    """``shape`` split on ``dim`` over ``axes`` (replicated if it does not divide)."""
    ways = math.prod(mesh.shape[a] for a in axes)
    if dim is None or not axes or ways == 1 or shape[dim] % ways:
        return P()
    entries = [None] * len(shape)
    entries[dim] = axes if len(axes) > 1 else axes[0]
    return P(*entries)


def baseline_specs(work: Workload, kind: str, mesh: jax.sharding.Mesh) -> tuple[Any, Any] | None:
    """PartitionSpec pytrees (state, batch) of a baseline; ``None`` where it does not apply."""
    everything = tuple(mesh.axis_names)
    ways = mesh.size

    def zero(leaf: jax.ShapeDtypeStruct) -> P:
        return split(leaf.shape, largest_divisible(leaf.shape, ways), everything, mesh)

    def replicate(leaf: jax.ShapeDtypeStruct) -> P:
        return P()

    batch_axes = everything
    if kind == "fsdp-tp":  # MaxText's default: FSDP (ZeRO-3) over the leading axes, tensor parallel on the last
        if work.megatron is None or len(everything) < 2:
            return None
        batch_axes, model = everything[:-1], everything[-1:]
        fsdp_ways = math.prod(mesh.shape[a] for a in batch_axes)

        def fsdp_tp(path: tuple, leaf: jax.ShapeDtypeStruct) -> P:
            name, shape = jax.tree_util.keystr(path), leaf.shape
            entries: list = [None] * len(shape)
            tp = next((dim for pattern, dim in work.megatron if re.search(pattern, name)), None)
            if tp is not None and shape[tp] % mesh.shape[model[0]] == 0:
                entries[tp] = model[0]
            free = [d for d in range(len(shape)) if entries[d] is None and shape[d] % fsdp_ways == 0
                    and shape[d] >= fsdp_ways]
            if free:
                entries[max(free, key=lambda d: shape[d])] = batch_axes if len(batch_axes) > 1 else batch_axes[0]
            return P(*entries)
        state = jax.tree_util.tree_map_with_path(fsdp_tp, work.state)  # optimizer state as its parameter
    elif kind == "megatron":
        if work.megatron is None:
            return None
        batch_axes, model = everything[:-1], everything[-1:]
        def tensor_parallel(path: tuple, leaf: jax.ShapeDtypeStruct) -> P:
            name = jax.tree_util.keystr(path)
            for pattern, dim in work.megatron:
                if re.search(pattern, name):
                    return split(leaf.shape, dim, model, mesh)
            return P()
        state = jax.tree_util.tree_map_with_path(tensor_parallel, work.state)
    else:
        params_rule = zero if kind == "zero3" else replicate
        opt_rule = zero if kind in ("zero2", "zero3") else replicate
        state = (jax.tree.map(params_rule, work.state[0]), jax.tree.map(opt_rule, work.state[1]))
    batch = jax.tree.map(lambda leaf: split(leaf.shape, 0, batch_axes, mesh), work.batch)
    return state, batch


def compile_baseline(work: Workload, specs: tuple[Any, Any], mesh: jax.sharding.Mesh, dmesh: DeviceMesh) -> dict:
    def named(tree: Any) -> Any:
        return jax.tree.map(lambda spec: NamedSharding(mesh, spec), tree, is_leaf=lambda x: isinstance(x, P))
    state, batch = named(specs[0]), named(specs[1])
    start = time.perf_counter()
    compiled = jax.jit(work.step, in_shardings=(state, batch), out_shardings=(state, NamedSharding(mesh, P()))) \
        .lower(work.state, work.batch).compile()
    row = {"compile_seconds": time.perf_counter() - start, "emitted": emitted(compiled.as_text(), dmesh)}
    row.update(executable_stats(compiled.cost_analysis(), compiled.memory_analysis()))
    return row


# -------------------------------------------------------------- one (model, mesh)

def measure(work: Workload, dmesh: DeviceMesh, method: ShardParallel, baselines: Sequence[str] = BASELINES) -> dict:
    """The plan ``method`` makes, its prediction, its re-layout and the ``baselines`` of one
    model on one mesh; collectives priced on ``dmesh``'s alpha-beta model."""
    shape = dmesh.shape
    row: dict = {"model": work.name, "mesh": "x".join(map(str, shape))}
    mesh = dmesh.to_jax_mesh(jax.devices()[:dmesh.size])
    fn = parallelize(work.step, method=method, batch_argnums=(1,))
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plan = fn.get_plan(work.state, work.batch)
    row["plan_seconds"] = time.perf_counter() - start
    row["plan_warnings"] = [str(w.message).splitlines()[0] for w in caught]
    start = time.perf_counter()
    executable = fn.get_executable(work.state, work.batch)
    compiled = executable.compiled
    row["compile_seconds"] = time.perf_counter() - start
    plan_row = {"emitted": emitted(compiled.hlo_text, plan.mesh), "predicted": predicted(plan),
                "objective": plan.objective, "solver_status": plan.solver.get("status"),
                "predicted_memory_bytes": plan.peak_memory}
    plan_row.update(executable_stats(compiled.executable.cost_analysis(),
                                     compiled.executable.get_compiled_memory_stats()))
    plan_row["relayout"], plan_row["relayout_moves"] = relayout(work, compiled, plan.mesh)
    plan_row["steady"] = added(plan_row["emitted"], plan_row["relayout"])
    row["plan"] = plan_row
    seen: dict[str, str] = {}
    for kind in baselines:
        specs = baseline_specs(work, kind, mesh)
        if specs is None:
            row[kind] = {"skipped": "a 2-D mesh's baseline" if kind == "fsdp-tp" and len(shape) < 2 and work.megatron
                         else work.megatron_note or "no rules"}
            continue
        key = repr(specs)
        if key in seen:  # e.g. ZeRO-2 of an SGD model is DP: nothing to shard
            row[kind] = dict(row[seen[key]], same_as=seen[key])
            continue
        seen[key] = kind
        try:
            row[kind] = compile_baseline(work, specs, mesh, dmesh)
        except Exception as error:  # one failed baseline should not lose the rest of the row
            row[kind] = {"error": f"{type(error).__name__}: {str(error).splitlines()[0][:300]}"}
    finish(row)
    return row


def finish(row: dict) -> None:
    """The flat columns of the table: MiB per device per step, ratios."""
    plan = row["plan"]
    row["plan_mb"] = plan["emitted"]["bytes"] / MB
    row["relayout_mb"] = plan["relayout"]["bytes"] / MB
    row["steady_mb"] = plan["steady"]["bytes"] / MB
    row["predicted_mb"] = plan["predicted"]["bytes"] / MB
    valid = {k: row[k]["emitted"] for k in BASELINES if "emitted" in row.get(k, {})}
    for kind, cost in valid.items():
        row[f"{kind}_mb"] = cost["bytes"] / MB
    if valid:
        best = min(valid, key=lambda k: valid[k]["bytes"])
        best_ring = min(valid, key=lambda k: valid[k]["ring_bytes"])
        row["best"] = best
        row["best_ring"] = best_ring
        row["steady_over_best"] = ratio(plan["steady"]["bytes"], valid[best]["bytes"])
        row["steady_over_best_ring"] = ratio(plan["steady"]["ring_bytes"], valid[best_ring]["ring_bytes"])
    row["predicted_over_emitted"] = ratio(plan["predicted"]["bytes"], plan["emitted"]["bytes"])
    dp = row.get("dp", {})
    if plan.get("flops") and dp.get("flops"):
        row["flops_over_dp"] = plan["flops"] / dp["flops"]
        if row.get("best") and row[row["best"]].get("flops"):
            # A baseline can save bytes by computing redundantly (Megatron on a 1-D mesh replicates the batch).
            row["best_flops_over_dp"] = row[row["best"]]["flops"] / dp["flops"]
    if "memory_bytes" in plan:
        row["memory_mb"] = plan["memory_bytes"] / MB
        if plan.get("predicted_memory_bytes"):
            row["memory_predicted_over_xla"] = plan["predicted_memory_bytes"] / plan["memory_bytes"]
    if "memory_bytes" in dp:
        row["dp_memory_mb"] = dp["memory_bytes"] / MB


def ratio(a: float, b: float) -> float:
    if b:
        return a / b
    return 1.0 if not a else math.inf


# -------------------------------------------------------------- tables

COLUMNS = (("model", "model", "{}"), ("mesh", "mesh", "{}"), ("plan_mb", "plan emitted", "{:.3g}"),
           ("relayout_mb", "re-layout", "{:.3g}"), ("steady_mb", "plan steady", "{:.3g}"),
           ("dp_mb", "DP", "{:.3g}"), ("zero2_mb", "ZeRO-2", "{:.3g}"), ("zero3_mb", "ZeRO-3", "{:.3g}"),
           ("megatron_mb", "Megatron", "{:.3g}"), ("fsdp-tp_mb", "FSDP x TP", "{:.3g}"),
           ("best", "best baseline", "{}"),
           ("steady_over_best", "steady / best", "{:.2f}"), ("best_ring", "best (ring)", "{}"),
           ("steady_over_best_ring", "steady / best (ring)", "{:.2f}"), ("predicted_mb", "predicted", "{:.3g}"),
           ("predicted_over_emitted", "predicted / emitted", "{:.2f}"), ("flops_over_dp", "FLOPs plan / DP", "{:.2f}"),
           ("best_flops_over_dp", "FLOPs best / DP", "{:.2f}"),
           ("memory_mb", "mem plan", "{:.3g}"), ("memory_predicted_over_xla", "mem predicted / XLA", "{:.2f}"),
           ("dp_memory_mb", "mem DP", "{:.3g}"),
           ("plan_seconds", "plan s", "{:.1f}"))


def breakdown(cost: dict) -> str:
    """``AR(x,y) 1.02, AG(y) 0.031`` in MiB, largest first."""
    items = sorted(cost["by_kind_axes"].items(), key=lambda kv: -kv[1])
    return ", ".join(f"{KIND_SHORT.get(k.split('(')[0], k.split('(')[0])}({k.split('(')[1]} {v / MB:.3g}"
                     for k, v in items) or "none"


def markdown(result: dict) -> str:
    s = result["settings"]
    source = s.get("source", {})
    code = f"alpa-mlir commit {source['commit'][:10]}" if source.get("commit") else "alpa-mlir (commit unknown)"
    if source.get("uncommitted_changes"):
        code += " with uncommitted changes"
    libraries = ", ".join(f"{k} {v or 'not installed'}" for k, v in s.get("libraries", {}).items())
    tie = ("ShardParallel(steady_state=True): the state comes back in the sharding it goes in"
           if s.get("steady_state", True) else "ShardParallel(steady_state=False): the state may come back in "
           "other shardings than it goes in")
    settings = (
        f"{code}; {libraries}. {tie}. "
        f"Meshes {', '.join(s['meshes'])} of 8 virtual CPU devices; every step compiled, none run. Bytes are "
        "MiB per device per step, summed over the collectives of the partitioned HLO, each counted as its "
        "per-device buffer (all-gather: the result; the others: the operand). *plan steady* = what the plan's "
        "step emits + the re-layout of state leaves whose result sharding differs from their argument sharding. "
        "The baselines keep the state's sharding, so they have no re-layout. *ring*: each collective "
        "weighted by a ring algorithm's traffic per device (all-reduce 2(n-1)/n, others (n-1)/n, permute 1). "
        "*predicted*: the plan's own collectives (algorithms' and reshardings'). Baselines (plain jax.jit, "
        "NamedShardings): DP splits the batch over all devices and replicates the state; ZeRO-2 also shards "
        "every optimizer-state leaf on its largest dimension divisible by 8 (XLA:CPU has no reduce-scatter "
        "creator, so the gradient stays an all-reduce and the new parameters are all-gathered); ZeRO-3 also "
        "shards the parameters; Megatron splits the batch over all axes but the last and the parameters "
        "column/row-wise over the last (on the 1-D mesh 8: tensor parallelism alone, batch replicated); "
        "FSDP x TP (2-D meshes, MaxText's default) splits the batch and, ZeRO-3-wise, every parameter and its "
        "optimizer state on their largest other dimension over all axes but the last, and the parameters "
        "Megatron's way over the last. "
        "best: the baseline with the fewest bytes (ring: the fewest ring-weighted bytes). FLOPs: per device, "
        "from XLA's cost analysis; mem: arguments + outputs + temporaries per device, MiB (XLA's "
        "memory_analysis); mem predicted / XLA: ShardingPlan.peak_memory over the plan's. plan s: lowering "
        "and alpa-auto-sharding.")
    out = [markdown_table("Plan quality: collectives XLA emits per training step", result, settings, COLUMNS)]
    out += ["", "## Collectives by kind and mesh axes (MiB per device per step)", "",
            "AR all-reduce, AG all-gather, RS reduce-scatter, A2A all-to-all, CP collective-permute; "
            "`?`: groups that are no set of mesh axes.", "",
            "| model | mesh | predicted | plan emitted | re-layout | best baseline emitted |",
            "|---|---|---|---|---|---|"]
    for row in result["runs"]:
        if "plan" not in row:
            continue
        plan = row["plan"]
        best = row.get("best")
        best_text = f"{best}: {breakdown(row[best]['emitted'])}" if best else ""
        out.append(f"| {row['model']} | {row['mesh']} | {breakdown(plan['predicted'])} | "
                   f"{breakdown(plan['emitted'])} | {breakdown(plan['relayout'])} | {best_text} |")
    out += ["", "## Models and notes", ""]
    for name, note in result["models"].items():
        out.append(f"- **{name}**: {note}")
    notes = sorted({f"{row['model']}: {kind} {what}" for row in result["runs"] for kind in BASELINES
                    for what in [_baseline_note(row.get(kind, {}))] if what})
    notes += [f"{row['model']} {row['mesh']}: {len(row['plan_warnings'])} planning warning(s), e.g. "
              f"{row['plan_warnings'][0]}" for row in result["runs"] if row.get("plan_warnings")]
    notes += [f"{row['model']} {row['mesh']}: re-layout of {m['leaves']} leaf/leaves {m['shape']} estimated as the "
              "target tile (the identity emitted no collective)" for row in result["runs"]
              for m in row.get("plan", {}).get("relayout_moves", []) if m["estimated"]]
    out += [f"- {n}" for n in notes]
    return "\n".join(out) + "\n"


def _baseline_note(entry: dict) -> str:
    if "same_as" in entry:
        return f"has the shardings of {entry['same_as']} (reused)"
    if "skipped" in entry:
        return f"skipped: {entry['skipped']}"
    if "error" in entry:
        return f"failed: {entry['error']}"
    return ""


# -------------------------------------------------------------- driver

MODEL_NAMES = ("mlp-dp", "mlp-mp", "gpt", "bert", "moe", "wresnet", "flax-cnn", "hf-gpt2")
# Models at scale, run only when named (--models gpt3-1.3b): their compiles take minutes.
SCALE_MODELS = ("gpt3-1.3b", "gpt3-6.7b", "llama2-7b", "llama2-7b-bf16")


def parse_meshes(text: str) -> list[tuple[int, ...]]:
    return [tuple(int(d) for d in m.split("x")) for m in text.split(",") if m]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="small sizes, meshes 8 and 2x4 (a few minutes on 2 cores)")
    parser.add_argument("--models", default="", help="comma-separated subset of: " + ", ".join(MODEL_NAMES) +
                        "; or, at scale (full sizes only): " + ", ".join(SCALE_MODELS))
    parser.add_argument("--meshes", default="", help="comma-separated meshes, e.g. 8,1x8,2x4,2x2x2")
    parser.add_argument("--no-steady-state", dest="steady_state", action="store_false",
                        help="ShardParallel(steady_state=False): the plan may return the state in other "
                        "shardings than it takes (then the re-layout counts)")
    parser.add_argument("--out", default="", help="output path without extension "
                        "(default benchmarks/results/plan_quality[_quick][_untied])")
    args = parser.parse_args(argv)
    constructors = zoo(args.quick)
    names = [n for n in args.models.split(",") if n] or [n for n in constructors if n not in SCALE_MODELS]
    unknown = [n for n in names if n not in constructors]
    if unknown:
        parser.error(f"unknown model(s) {unknown}; choose from {', '.join(constructors)}")
    meshes = parse_meshes(args.meshes) or list(QUICK_MESHES if args.quick else MESHES)
    if any(math.prod(m) > len(jax.devices()) for m in meshes):
        parser.error(f"meshes {meshes} need more than the {len(jax.devices())} devices there are")
    default = f"plan_quality{'_quick' if args.quick else ''}{'' if args.steady_state else '_untied'}"
    out = Path(args.out or f"benchmarks/results/{default}")
    out.parent.mkdir(parents=True, exist_ok=True)
    settings = {"quick": args.quick, "steady_state": args.steady_state, "models": names,
                "meshes": ["x".join(map(str, m)) for m in meshes], "libraries": library_versions(),
                "source": source_version()}
    result: dict = {"machine": machine_info(), "settings": settings, "models": {}, "runs": []}
    start_all = time.perf_counter()
    for name in names:
        work = build(name, constructors[name], result)
        if work is None:
            continue
        for shape in meshes:
            label = "x".join(map(str, shape))
            print(f"{name} on {label} ...", flush=True)
            start = time.perf_counter()
            try:
                row = measure(work, DeviceMesh(shape), ShardParallel(mesh_shape=shape,
                                                                     steady_state=args.steady_state))
            except Exception as error:  # report and go on: one model must not stop the sweep
                traceback.print_exc()
                row = {"model": name, "mesh": label, "error": f"{type(error).__name__}: "
                       f"{str(error).splitlines()[0][:300] if str(error) else ''}"}
            row["seconds"] = time.perf_counter() - start
            result["runs"].append(row)
            print("    " + one_line(row), flush=True)
            result["total_seconds"] = time.perf_counter() - start_all
            save(result, out, markdown)
    result["total_seconds"] = time.perf_counter() - start_all
    save(result, out, markdown)
    print(f"wrote {out}.json and {out}.md ({result['total_seconds']:.0f} s)")
    return 1 if any("error" in row for row in result["runs"]) else 0


def build(name: str, constructor: Callable[[], Workload], result: dict) -> Workload | None:
    try:
        work = constructor()
    except MissingLibrary as error:
        result["models"][name] = f"skipped: {error}"
        print(f"{name}: skipped: {error}", flush=True)
        return None
    note = work.description + (f". Megatron: {work.megatron_note}" if work.megatron_note else "")
    result["models"][name] = note
    return work


def one_line(row: dict) -> str:
    if "error" in row:
        return f"error: {row['error']}"
    cells = [f"plan {row['plan_mb']:.3g} MiB (+{row['relayout_mb']:.3g} re-layout)",
             f"predicted {row['predicted_mb']:.3g}"]
    cells += [f"{k} {row[k + '_mb']:.3g}" for k in BASELINES if f"{k}_mb" in row]
    if "steady_over_best" in row:
        cells.append(f"steady/best({row['best']}) {row['steady_over_best']:.2f}")
    return ", ".join(cells) + f"; {row['seconds']:.0f} s"


def source_version() -> dict:
    """The commit of the alpa_mlir code measured, and whether its tree had uncommitted changes."""
    import alpa_mlir
    root = Path(alpa_mlir.__file__).resolve().parent.parent
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None}
    return {"commit": commit, "uncommitted_changes": bool(dirty)}


def library_versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version
    found = {}
    for name in ("flax", "optax", "transformers"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


if __name__ == "__main__":
    sys.exit(main())
