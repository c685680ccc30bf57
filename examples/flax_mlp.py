"""Train a Flax MLP with alpa-mlir, first sharded on one mesh, then pipelined over two.

Shows the usual Flax training loop (a ``linen`` module, an optax optimizer in a flax
``TrainState``, a ``train_step(state, batch)`` that returns the new state and nothing
else) run by ``alpa_mlir.parallelize`` with

* ``ShardParallel``: every op sharded over one 2x4 device mesh by the intra-op ILP, and
* ``PipeshardParallel``: the model cut into pipeline layers where it calls
  ``alpa_mlir.mark_pipeline_boundary``, the layers grouped into stages on submeshes,
  micro-batches pipelined under 1F1B,

and checks both against plain ``jax.jit`` of the same step. On a machine without
accelerators it runs on 8 virtual CPU devices::

    python examples/flax_mlp.py --steps 8 --hidden 256 --depth 4

The markers are identities under ``jax.jit``: the same model code runs anywhere.
"""

from __future__ import annotations

import os

# Before jax is imported: eight host devices to parallelize over, when there are no others.
if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=8".strip()

import argparse  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from typing import Any  # noqa: E402

import flax.linen as nn  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from flax.training import train_state  # noqa: E402

import alpa_mlir  # noqa: E402


class MLP(nn.Module):
    """``depth`` ReLU layers and a linear head; a pipeline boundary after every ``layers_per_stage`` layers."""

    hidden: int
    depth: int
    outputs: int
    layers_per_stage: int

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        for i in range(self.depth):
            x = nn.relu(nn.Dense(self.hidden)(x))
            if (i + 1) % self.layers_per_stage == 0 and i + 1 < self.depth:
                x = alpa_mlir.mark_pipeline_boundary(x)
        return nn.Dense(self.outputs)(x)


def make_batch(key: jax.Array, size: int, features: int, outputs: int) -> dict[str, jax.Array]:
    """A regression batch: targets from a fixed random teacher, so that the loss can fall."""
    teacher = jax.random.normal(jax.random.key(42), (features, outputs)) / np.sqrt(features)
    x = jax.random.normal(key, (size, features))
    return {"x": x, "y": jnp.sin(x @ teacher)}


def loss_fn(params: Any, apply_fn: Callable, batch: dict[str, jax.Array]) -> jax.Array:
    return jnp.mean((apply_fn({"params": params}, batch["x"]) - batch["y"]) ** 2)


def train_step(state: train_state.TrainState, batch: dict[str, jax.Array]) -> train_state.TrainState:
    grads = jax.grad(loss_fn)(state.params, state.apply_fn, batch)
    return state.apply_gradients(grads=grads)


def train(step: Callable, state: train_state.TrainState, batches: Sequence[dict], name: str
          ) -> tuple[train_state.TrainState, list[float]]:
    """Run ``step`` over ``batches``; each batch's loss before its step (the training loss)."""
    evaluate = jax.jit(loss_fn, static_argnums=1)
    losses, start = [], time.perf_counter()
    for i, batch in enumerate(batches):
        # A pipelined step leaves each stage's parameters on its own submesh: bring them
        # to the host (one numpy array per leaf) to evaluate the loss on one device.
        losses.append(float(evaluate(jax.device_get(state.params), state.apply_fn, batch)))
        state = step(state, batch)
        print(f"{name:>9} step {i}: loss {losses[-1]:.6f}")
    print(f"{name:>9}: {len(batches)} steps in {time.perf_counter() - start:.1f} s (the first traces, plans and "
          "compiles)")
    return state, losses


def max_difference(params: Any, reference: Any) -> float:
    return max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
               for a, b in zip(jax.tree.leaves(params), jax.tree.leaves(reference)))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--batch", type=int, default=64, help="examples per step (divisible by --micro-batches)")
    parser.add_argument("--features", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--depth", type=int, default=4, help="hidden layers (divisible by --stages)")
    parser.add_argument("--outputs", type=int, default=8)
    parser.add_argument("--stages", type=int, default=2, help="pipeline stages for PipeshardParallel")
    parser.add_argument("--micro-batches", type=int, default=4)
    parser.add_argument("--learning-rate", type=float, default=3e-3)
    parser.add_argument("--tolerance", type=float, default=1e-4, help="largest parameter difference from jax.jit")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict[str, tuple[train_state.TrainState, list[float]]]:
    """Train with ShardParallel, PipeshardParallel and jax.jit; return each one's final state and losses."""
    args = parse_args(argv)
    if args.depth % args.stages:
        raise SystemExit(f"--depth {args.depth} must divide into --stages {args.stages}")
    print(f"{len(jax.devices())} {jax.devices()[0].platform} devices")
    model = MLP(args.hidden, args.depth, args.outputs, layers_per_stage=args.depth // args.stages)
    batches = [make_batch(jax.random.key(1 + i), args.batch, args.features, args.outputs) for i in range(args.steps)]
    params = model.init(jax.random.key(0), batches[0]["x"])["params"]
    print(f"{sum(p.size for p in jax.tree.leaves(params)):,} parameters")
    state = train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.adam(args.learning_rate))

    methods = {
        "shard": alpa_mlir.ShardParallel(mesh_shape=(2, 4)),
        # One pipeline layer per marked segment, one stage per layer, each stage on
        # an equal share of the devices (AutoStageOption() lets Algorithm 1 choose).
        "pipeshard": alpa_mlir.PipeshardParallel(num_micro_batches=args.micro_batches,
                                                 layer_option=alpa_mlir.ManualLayerOption(),
                                                 stage_option=alpa_mlir.UniformStageOption(num_stages=args.stages)),
    }
    results = {"jit": train(jax.jit(train_step), state, batches, "jax.jit")}
    for name, method in methods.items():
        step = alpa_mlir.parallelize(train_step, method=method)
        results[name] = train(step, state, batches, name)
        if name == "pipeshard":
            for i, stage in enumerate(step.get_plan(state, batches[0]).stages):
                print(f"  stage {i}: layers [{stage.layers[0]}, {stage.layers[1]}), devices {stage.devices}")

    for name in methods:
        difference = max_difference(results[name][0].params, results["jit"][0].params)
        print(f"{name}: largest parameter difference from jax.jit after {args.steps} steps: {difference:.2e}")
        if difference > args.tolerance:
            raise SystemExit(f"{name} differs from jax.jit by {difference:.2e} > --tolerance {args.tolerance}")
    return results


if __name__ == "__main__":
    main()
