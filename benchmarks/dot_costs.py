"""How well the device profile prices a stage's dots: its dot table against its square-matmul FLOP/s.

For ``benchmarks/pipeshard.py``'s MLP and GPT on 2 stages of (1, 4) devices, 4
micro-batches, every stage module the stage search costs (its forward and backward,
planned) is kept with the prices ``alpa-stage-construction`` gave it (the API's default
costs: ``device-profile=local``). Each is then compiled and timed twice, in alternating
rounds: whole, and with every ``dot_general`` cut out (its result made an argument of the
module, so that what reads it is not constant-folded away). The difference is what the
dots cost inside the stage's program (their operands' layout copies included), against
their price from the dot table (``plans/device_profile.py``: each dot's share under the
stage's plan, timed) and at the profile's square-matmul FLOP/s (the price before the
table). The rest of the stage (element-wise ops, reductions, communication, launches) is
compared the same way. A ``jax.profiler`` trace of the whole stage (XLA:CPU records each
thunk) counts its collectives and the time each device spends in their rendezvous,
waiting for its peers, against the wait the stage's price holds for them
(``profile_pricing.sync_seconds``: the device profile's ``collective_sync``).

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python benchmarks/dot_costs.py
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()

import jax  # noqa: E402
import numpy as np  # noqa: E402
from ilp_scaling import command_line, machine_info, markdown_table, save  # noqa: E402
from jax._src.lib.mlir import ir  # noqa: E402
from pipeshard import WORKLOADS, pipelined, workload  # noqa: E402

from alpa_mlir.dialect.context import make_context  # noqa: E402
from alpa_mlir.dialect.mesh import DeviceMesh  # noqa: E402
from alpa_mlir.lowering.spmd import compile_module  # noqa: E402
from alpa_mlir.passes.inter_op import profile_pricing, stage_costing  # noqa: E402
from alpa_mlir.runtime.mesh_executable import MeshExecutable  # noqa: E402
from alpa_mlir.runtime.profiling import time_module  # noqa: E402


def costed_stages(model: str) -> list[dict]:
    """The stage modules the search costs for ``model`` (S=2, B=4), with their prices."""
    stages = []
    cost = stage_costing._stage_latency

    def keep(options, profile, cache, work, planned, tiles):
        seconds = cost(options, profile, cache, work, planned, tiles)
        mesh = work.mesh
        table = rate = 0.0
        for n in work.indices:
            dot = profile_pricing.device_share(cache.graph.ops[n], mesh.size, profile.devices, tiles[n]) \
                if n in tiles else None
            if dot is not None:
                table += profile.dot_seconds(dot)
                rate += profile.matmul_seconds(dot.flops * dot.devices, dot.dtype, dot.devices)
        stages.append({"model": model, "mesh": "x".join(map(str, mesh.shape)), "module": str(planned.module),
                       "priced": seconds, "dots_table": table, "dots_rate": rate,
                       "sync_priced": profile_pricing.sync_seconds(planned.plan, mesh, profile)})
        return seconds

    stage_costing._stage_latency = keep
    try:
        work = workload(model)
        pipelined(work, 2, 4, cost_model="analytic").get_plan(*work.args)
    finally:
        stage_costing._stage_latency = cost
    return stages


def without_dots(text: str) -> ir.Module:
    """The module with every ``dot_general`` of its ``main`` replaced by a new argument of the
    dot's result type and sharding."""
    module = ir.Module.parse(text)
    main = next(f for f in module.body.operations if ir.StringAttr(f.attributes["sym_name"]).value == "main")
    block = main.regions[0].blocks[0]
    signature = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    inputs = list(signature.inputs)
    attributes = list(ir.ArrayAttr(main.attributes["arg_attrs"])) if "arg_attrs" in main.attributes else \
        [ir.DictAttr.get({})] * len(inputs)
    for op in list(block.operations):
        if op.operation.name == "stablehlo.dot_general":
            argument = block.add_argument(op.results[0].type, ir.Location.unknown())
            inputs.append(op.results[0].type)
            attributes.append(ir.DictAttr.get({name: op.attributes[name] for name in ("mhlo.sharding",)
                                               if name in op.attributes}))
            op.results[0].replace_all_uses_with(argument)
            op.operation.erase()
    main.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, list(signature.results)))
    main.attributes["arg_attrs"] = ir.ArrayAttr.get(attributes)
    return module


def traced(module: ir.Module, mesh: DeviceMesh, runs: int = 5) -> tuple[float, float]:
    """Per device and run of ``module``: the collectives it runs, and the seconds it spends in
    their rendezvous (from a ``jax.profiler`` trace of ``runs`` runs)."""
    executable = MeshExecutable(compile_module(module, mesh))
    inputs = [np.zeros(aval.shape, aval.dtype) for aval in executable.in_avals]
    jax.block_until_ready(executable(*inputs))
    with tempfile.TemporaryDirectory() as directory:
        with jax.profiler.trace(directory):
            for _ in range(runs):
                jax.block_until_ready(executable(*inputs))
        trace = jax.profiler.ProfileData.from_file(str(next(Path(directory).rglob("*.xplane.pb"))))
    events = [event for plane in trace.planes if plane.name == "/host:CPU" for line in plane.lines
              for event in line.events]
    count = sum(1 for e in events if re.fullmatch(r"(all-reduce|all-gather|all-to-all|reduce-scatter)[.\d]*", e.name))
    waited = sum(e.duration_ns for e in events if e.name == "Rendezvous") * 1e-9
    return count / (runs * mesh.size), waited / (runs * mesh.size)


def measure(stage: dict, rounds: int) -> dict:
    with make_context(), ir.Location.unknown():
        whole, cut = ir.Module.parse(stage["module"]), without_dots(stage["module"])
        mesh = DeviceMesh(tuple(int(s) for s in stage["mesh"].split("x")))
        times = [(time_module(whole, mesh, 3), time_module(cut, mesh, 3)) for _ in range(rounds)]
        collectives, rendezvous = traced(whole, mesh)
    measured, rest = statistics.median(t for t, _ in times), statistics.median(t for _, t in times)
    dots = measured - rest
    row = {k: v for k, v in stage.items() if k != "module"}
    return {**row, "measured": measured, "dots_measured": dots, "rest_measured": rest,
            "rest_priced": stage["priced"] - stage["dots_table"],
            "dots_table_ratio": stage["dots_table"] / dots, "dots_rate_ratio": stage["dots_rate"] / dots,
            "ratio": stage["priced"] / measured, "collectives": collectives, "rendezvous": rendezvous}


COLUMNS = (("model", "model", "{}"), ("mesh", "mesh", "{}"), ("measured_ms", "stage measured ms", "{:.2f}"),
           ("priced_ms", "priced ms", "{:.2f}"), ("ratio", "priced / measured", "{:.2f}"),
           ("dots_measured_ms", "dots measured ms", "{:.2f}"), ("dots_table_ms", "dots, table ms", "{:.2f}"),
           ("dots_table_ratio", "table / measured", "{:.2f}"), ("dots_rate_ms", "dots, FLOP/s ms", "{:.2f}"),
           ("dots_rate_ratio", "FLOP/s / measured", "{:.2f}"), ("rest_measured_ms", "rest measured ms", "{:.2f}"),
           ("rest_priced_ms", "rest priced ms", "{:.2f}"), ("collectives", "collectives (trace)", "{:.0f}"),
           ("rendezvous_ms", "rendezvous ms per device (trace)", "{:.2f}"),
           ("sync_priced_ms", "collectives' wait priced ms", "{:.2f}"))


def markdown(result: dict) -> str:
    rows = [{**row, **{f"{k}_ms": row[k] * 1e3 for k in ("measured", "priced", "dots_measured", "dots_table",
                                                          "dots_rate", "rest_measured", "rest_priced",
                                                          "rendezvous", "sync_priced")}}
            for row in result["runs"]]
    return markdown_table("A stage's dots: priced against measured", {**result, "runs": rows},
                          f"Command: `{result['command']}`. {WORKLOADS['mlp'][0]}; {WORKLOADS['gpt'][0]}. "
                          f"2 stages on (1, 4) devices, 4 micro-batches, each stage module as the search costs "
                          f"it; medians of {result['rounds']} alternating rounds of 3 timed runs.", COLUMNS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default="benchmarks/results/dot_costs", help="output path without extension")
    args = parser.parse_args(argv)
    result = {"machine": machine_info(), "command": command_line("dot_costs.py", argv), "rounds": args.rounds,
              "runs": []}
    for model in ("mlp", "gpt"):
        for stage in costed_stages(model):
            result["runs"].append(measure(stage, args.rounds))
            save(result, Path(args.out), markdown)
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
