"""Train Hugging Face's Flax GPT-2 with alpa-mlir, sharded on one mesh and pipelined over two.

Shows model code nobody wrote for alpa-mlir: ``transformers``' ``FlaxGPT2LMHeadModel``
(built from a ``GPT2Config``, nothing downloaded) in a flax ``TrainState`` with optax's
AdamW, and a ``train_step(state, batch)`` returning the new state and the loss, run by
``alpa_mlir.parallelize`` with

* ``ShardParallel``: every op sharded over one 2x4 device mesh by the intra-op ILP, and
* ``PipeshardParallel``: the forward pass clustered into pipeline layers by
  ``AutoLayerOption`` (no markers in the model: Sec. 5.2's operator clustering), the
  layers grouped into stages on submeshes, micro-batches pipelined under 1F1B,

and checks both against plain ``jax.jit``. On a machine without accelerators it runs
on 8 virtual CPU devices::

    python examples/hf_gpt2.py --steps 5 --layers 2 --hidden 128
"""

from __future__ import annotations

import os

# Before jax is imported: eight host devices to parallelize over, when there are no others.
if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=8".strip()

import argparse  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from flax.training import train_state  # noqa: E402
from transformers import FlaxGPT2LMHeadModel, GPT2Config  # noqa: E402

import alpa_mlir  # noqa: E402


def make_batch(key: jax.Array, size: int, length: int, vocab: int) -> jax.Array:
    """Token sequences that follow a fixed rule (next = 5 * token + 1 mod vocab) from a random start."""
    tokens = [jax.random.randint(key, (size,), 0, vocab)]
    for _ in range(length - 1):
        tokens.append((5 * tokens[-1] + 1) % vocab)
    return jnp.stack(tokens, axis=1)


def train_step(state: train_state.TrainState, ids: jax.Array) -> tuple[train_state.TrainState, jax.Array]:
    def loss_fn(params):
        # train=False: no dropout, so no random key to thread through the step (the
        # config sets no dropout rates either).
        logits = state.apply_fn(ids, params=params, train=False).logits
        return optax.softmax_cross_entropy_with_integer_labels(logits[:, :-1], ids[:, 1:]).mean()

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), loss


def train(step: Callable, state: train_state.TrainState, batches: Sequence[jax.Array], name: str
          ) -> tuple[train_state.TrainState, list[float]]:
    losses, start = [], time.perf_counter()
    for i, ids in enumerate(batches):
        state, loss = step(state, ids)
        losses.append(float(loss))
        print(f"{name:>9} step {i}: loss {losses[-1]:.6f}")
    print(f"{name:>9}: {len(batches)} steps in {time.perf_counter() - start:.1f} s (the first traces, plans and "
          "compiles)")
    return state, losses


def max_difference(params: dict, reference: dict) -> float:
    return max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
               for a, b in zip(jax.tree.leaves(params), jax.tree.leaves(reference)))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--batch", type=int, default=16, help="sequences per step (divisible by --micro-batches)")
    parser.add_argument("--length", type=int, default=32, help="tokens per sequence")
    parser.add_argument("--vocab", type=int, default=512)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2, help="transformer blocks")
    parser.add_argument("--stages", type=int, default=2, help="pipeline stages (and clustered layers)")
    parser.add_argument("--micro-batches", type=int, default=4)
    parser.add_argument("--learning-rate", type=float, default=3e-3)
    # Adam divides each gradient by its running RMS: where a gradient is near zero (a
    # token the batch barely touches), rounding differences (the devices sum in another
    # order) grow to a fraction of the learning rate.
    parser.add_argument("--tolerance", type=float, default=1e-3, help="largest parameter difference from jax.jit")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict[str, tuple[train_state.TrainState, list[float]]]:
    """Train with ShardParallel, PipeshardParallel and jax.jit; return each one's final state and losses."""
    args = parse_args(argv)
    print(f"{len(jax.devices())} {jax.devices()[0].platform} devices")
    config = GPT2Config(vocab_size=args.vocab, n_positions=args.length, n_embd=args.hidden, n_head=args.heads,
                        n_layer=args.layers, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    # _do_init=False and a jitted init_weights: the parameters from one compiled program
    # rather than op by op (seconds on a CPU, more for a bigger model).
    model = FlaxGPT2LMHeadModel(config, _do_init=False)
    params = jax.jit(model.init_weights, static_argnums=1)(jax.random.PRNGKey(0), (1, args.length))
    print(f"{sum(p.size for p in jax.tree.leaves(params)):,} parameters")
    state = train_state.TrainState.create(apply_fn=model.__call__, params=params, tx=optax.adamw(args.learning_rate))
    batches = [make_batch(jax.random.key(1 + i), args.batch, args.length, args.vocab) for i in range(args.steps)]

    methods = {
        "shard": alpa_mlir.ShardParallel(mesh_shape=(2, 4)),
        # Clustered into as many layers as stages, one stage each on an equal share of
        # the devices (AutoStageOption() lets Algorithm 1 choose stages and submeshes).
        "pipeshard": alpa_mlir.PipeshardParallel(num_micro_batches=args.micro_batches,
                                                 layer_option=alpa_mlir.AutoLayerOption(layer_num=args.stages),
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
