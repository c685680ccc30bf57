"""The first call of a pipelined Hugging Face model: where its time goes (issue 12, item 6).

transformers' Flax GPT-2, built from a config (no download), in a flax ``TrainState``
with optax Adam, under ``PipeshardParallel`` with the default options (auto layers and
stages) on 8 CPU devices. One row per layer count: the first call's seconds split into
lowering, the stage search (its intra-op plans), compiling the stage and transfer
programs, the first step, and the second call; the plan's stages and its
predicted step against the measured one. Phases are read from the ``alpa_mlir``
loggers' lines. Results go to ``OUT.json`` and ``OUT.md``.

    python benchmarks/first_call.py --layers 2,4
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import time
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # XLA's GSPMD deprecation warning, once per compile
if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402
from flax.training import train_state  # noqa: E402
from transformers import FlaxGPT2LMHeadModel, GPT2Config  # noqa: E402

from alpa_mlir import parallelize  # noqa: E402
from alpa_mlir.pipeshard import AutoLayerOption, PipeshardParallel  # noqa: E402
from alpa_mlir.runtime.device_profile import local_profile  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from ilp_scaling import machine_info, markdown_table, save  # noqa: E402

HIDDEN, HEADS, VOCAB, SEQ, BATCH, MICRO_BATCHES = 256, 4, 512, 64, 16, 4


class Phases(logging.Handler):
    """Keeps the alpa_mlir log lines with the time each arrived."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[tuple[float, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((time.perf_counter(), record.getMessage()))


def measure(layers: int) -> dict:
    model = FlaxGPT2LMHeadModel(GPT2Config(n_layer=layers, n_embd=HIDDEN, n_head=HEADS, vocab_size=VOCAB,
                                           n_positions=SEQ), seed=0)
    state = train_state.TrainState.create(apply_fn=model.__call__, params=model.params, tx=optax.adam(1e-3))
    ids = jax.random.randint(jax.random.key(0), (BATCH, SEQ), 0, VOCAB)
    batch = {"ids": ids, "labels": jnp.roll(ids, -1, axis=1)}

    def step(state, batch):
        def loss(params):
            logits = state.apply_fn(batch["ids"], params=params, train=False).logits
            return optax.softmax_cross_entropy_with_integer_labels(logits, batch["labels"]).mean()

        value, grads = jax.value_and_grad(loss)(state.params)
        return state.apply_gradients(grads=grads), value

    pipelined = parallelize(step, method=PipeshardParallel(num_micro_batches=MICRO_BATCHES,
                                                           layer_option=AutoLayerOption(layer_num=layers)))
    phases = Phases()
    logger = logging.getLogger("alpa_mlir")
    logger.addHandler(phases)
    logger.setLevel(logging.INFO)
    try:
        start = time.perf_counter()
        out = jax.block_until_ready(pipelined(state, batch))
        first = time.perf_counter() - start
    finally:
        logger.removeHandler(phases)
    start = time.perf_counter()
    jax.block_until_ready(pipelined(out[0], batch))
    second = time.perf_counter() - start
    plan = pipelined.get_plan(state, batch)

    def seconds(pattern: str) -> float:
        found = [float(m[1]) for _, line in phases.lines if (m := re.search(pattern, line))]
        return sum(found)

    plans = [int(m[1]) for _, line in phases.lines if (m := re.search(r"(\d+) intra-op plans so far", line))]
    compiled = next(m for _, line in phases.lines if (m := re.search(
        r"compiled (\d+) stage programs and (\d+) transfers \((\d+) programs loaded from an equal one\) in ([\d.]+) s",
        line)))
    return {"layers": layers, "first_call_seconds": first,
            "lower_seconds": seconds(r"traced and lowered in ([\d.]+) s"),
            "search_seconds": seconds(r"candidates in ([\d.]+) s"), "intra_op_plans": max(plans, default=0),
            "compile_seconds": float(compiled[4]), "programs": "{} / {} / {}".format(*compiled.groups()[:3]),
            "first_step_seconds": seconds(r"first step in ([\d.]+) s"), "second_call_seconds": second,
            "predicted_step": plan.latency, "predicted_run": plan.step,
            "stages": " ".join(f"[{s.layers[0]},{s.layers[1]})@{len(s.devices)}" for s in plan.stages)}


COLUMNS = (("layers", "layers", "{}"), ("first_call_seconds", "first call s", "{:.1f}"),
           ("lower_seconds", "lowering s", "{:.1f}"), ("search_seconds", "stage search s", "{:.1f}"),
           ("intra_op_plans", "intra-op plans", "{}"), ("compile_seconds", "stage and transfer programs s", "{:.1f}"),
           ("programs", "stage programs / transfers / programs loaded", "{}"),
           ("first_step_seconds", "first step s", "{:.1f}"), ("second_call_seconds", "second call s", "{:.2f}"),
           ("predicted_step", "predicted step s (Eq. 2)", "{:.3g}"),
           ("predicted_run", "predicted step s (as the runtime runs it)", "{:.3g}"),
           ("stages", "stages (layers @ devices)", "{}"))


def markdown(result: dict) -> str:
    return markdown_table(
        "First call of a pipelined Hugging Face GPT-2", result,
        f"transformers FlaxGPT2LMHeadModel, hidden {HIDDEN}, {HEADS} heads, vocab {VOCAB}, seq {SEQ}, batch "
        f"{BATCH}; flax TrainState with optax Adam; PipeshardParallel(num_micro_batches={MICRO_BATCHES}, "
        "layer_option=AutoLayerOption(layer_num=layers)), default stage option, 8 CPU devices. The phases "
        "do not add up to the first call: the rest is planning each stage whole, outlining and the schedule. "
        "The device profile the stage costs assume (runtime/device_profile.py) was read or measured before "
        f"the first call, in {result['device_profile_seconds']:.1f} s (once per machine, then cached). The "
        "second call is one step; the predicted steps are the plan's Eq. 2, which assumes the meshes run at "
        "once, and PipelinePlan.step, the runtime's instructions priced one program at a time as the CPU "
        "runtime runs them (runtime/step_model.py).",
        COLUMNS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", default="2,4", help="comma-separated layer counts")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "first_call"))
    args = parser.parse_args(argv)
    # The device profile the stage costs use is measured once per machine, before any first call.
    start = time.perf_counter()
    local_profile()
    result = {"machine": machine_info(), "runs": [], "device_profile_seconds": time.perf_counter() - start}
    for layers in (int(n) for n in args.layers.split(",")):
        print(f"GPT-2, {layers} layers ...", file=sys.stderr)
        result["runs"].append(measure(layers))
        save(result, Path(args.out), markdown)
    print(f"wrote {args.out}.json and {args.out}.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
