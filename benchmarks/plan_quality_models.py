"""The model zoo of ``plan_quality.py``: training steps ``step(state, batch) -> (state, loss)``.

Every workload is built from abstract shapes (``jax.ShapeDtypeStruct``; nothing is
allocated) as ``state = (params, optimizer_state)`` and a batch whose leaves all have the
batch as leading dimension. Each also says how Megatron-LM (Shoeybi et al., 2019) would
split its parameters over a tensor-parallel mesh axis: a list of (regular expression on
the leaf's key path, the dimension to split) pairs; optimizer state follows its parameter
because its key path ends the same way. Where that split is not a natural one the
workload says so in ``megatron_note``, or has no rules at all.

Flax and Hugging Face ``transformers`` are not dependencies of alpa-mlir: their
workloads raise :class:`MissingLibrary` when the library is not installed, and the
benchmark reports the model as skipped.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import jax
import jax.numpy as jnp

from alpa_mlir import models

# (key-path regex, dimension split over the tensor-parallel axis)
TensorParallelRules = tuple[tuple[str, int], ...]


class MissingLibrary(RuntimeError):
    """The workload needs a library that is not installed; the message says which and how to get it."""


@dataclass(frozen=True)
class Workload:
    name: str
    description: str  # sizes and optimizer, for the table's notes
    step: Callable  # step(state, batch) -> (state, loss)
    state: Any  # (params, optimizer state), ShapeDtypeStruct leaves
    batch: Any
    megatron: TensorParallelRules | None  # None: no Megatron baseline for this model
    megatron_note: str = ""


def _abstract(fn: Callable, *args: Any) -> Any:
    return jax.eval_shape(fn, *args)


def _require(module: str, install: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise MissingLibrary(f"{module} is not installed (pip install '{install}'); it is no dependency of "
                             "alpa-mlir, so this model is skipped")


def _optimizer() -> tuple[str, Callable, Callable]:
    """(name, init(params), update(params, grads, state) -> (params, state)): optax's Adam when
    installed, else the plain-jax Adam of ``alpa_mlir.models``."""
    if importlib.util.find_spec("optax") is not None:
        import optax

        tx = optax.adam(1e-3)

        def update(params: Any, grads: Any, state: Any) -> tuple[Any, Any]:
            updates, state = tx.update(grads, state, params)
            return optax.apply_updates(params, updates), state
        return "optax.adam", tx.init, update
    adam = models.Adam()
    return "Adam (plain jax)", adam.init, adam.update


def _adam_step(loss: Callable, update: Callable) -> Callable:
    def step(state: tuple, batch: Any) -> tuple[tuple, jax.Array]:
        params, opt_state = state
        value, grads = jax.value_and_grad(loss)(params, batch)
        return update(params, grads, opt_state), value
    return step


# -------------------------------------------------------------- alpa_mlir.models

def mlp(name: str, sizes: tuple[int, ...], batch: int) -> Workload:
    """``alpa_mlir.models.mlp`` (SGD: the state is the parameters and an empty optimizer state)."""
    model = models.mlp(models.MLPConfig(sizes=sizes))
    params, data = model.abstract_args(batch)

    def step(state: tuple, batch: dict) -> tuple[tuple, jax.Array]:
        params, loss = model.train_step(state[0], batch)
        return (params, ()), loss
    # Consecutive dense layers alternate column (split the output) and row (split the input) parallel.
    rules = tuple((rf"\[0\]\[{i}\]\['w'\]$", 1 - i % 2) for i in range(len(sizes) - 1)) + \
        tuple((rf"\[0\]\[{i}\]\['b'\]$", 0) for i in range(0, len(sizes) - 1, 2))
    return Workload(name, f"MLP {'-'.join(map(str, sizes))}, batch {batch}, SGD", step, (params, ()), data, rules)


# Megatron for the GPT blocks of alpa_mlir.models: qkv and fc1 column-parallel, out and fc2
# row-parallel, the (tied) embedding vocabulary-parallel.
GPT_RULES: TensorParallelRules = (
    (r"\['(qkv|fc1)'\]\['w'\]$", 1), (r"\['(qkv|fc1)'\]\['b'\]$", 0), (r"\['(out|fc2)'\]\['w'\]$", 0),
    (r"\['wte'\]$", 0))
FUSED_QKV = ("qkv is fused as [3, heads, head dim]: splitting its 3h columns is not head-aligned, so XLA "
             "re-lays q, k, v out (Megatron splits per head)")


def _model_step(config: models.ModelConfig, batch: int) -> tuple[Callable, tuple, dict]:
    """An ``alpa_mlir.models`` model's Adam step as ``step(state, batch) -> (state, loss)``,
    with its abstract state ``(params, optimizer state)`` and batch."""
    model = models.build(config)
    params, opt_state, data = model.abstract_args(batch)

    def step(state: tuple, batch: dict) -> tuple[tuple, jax.Array]:
        params, opt_state, loss = model.train_step(*state, batch)
        return (params, opt_state), loss
    return step, (params, opt_state), data


# Megatron's Llama: q, k, v, gate and up column-parallel, o and down row-parallel, the
# embedding vocab-parallel, the head column-parallel over the vocabulary.
LLAMA_RULES: TensorParallelRules = (
    (r"\['(wq|wk|wv|w_gate|w_up)'\]$", 1), (r"\['(wo|w_down)'\]$", 0), (r"\['embed'\]$", 0),
    (r"\['head'\]$", 1))


def llama(name: str, config: models.LlamaConfig, batch: int) -> Workload:
    """``alpa_mlir.models.llama`` (Llama 2), Adam."""
    step, state, data = _model_step(config, batch)
    precision = config.dtype if config.state_dtype in (None, config.dtype) else \
        f"{config.dtype} parameters and activations, {config.state_dtype} Adam moments"
    description = (f"Llama 2, hidden {config.hidden}, {config.layers} layers, {config.heads} heads "
                   f"({config.kv_heads} K/V), FFN {config.ffn}, seq {config.seq_len}, vocab {config.vocab}, "
                   f"batch {batch}, Adam, {precision}")
    return Workload(name, description, step, state, data, LLAMA_RULES)


def gpt(name: str, config: models.GPTConfig, batch: int) -> Workload:
    """``alpa_mlir.models.gpt`` (GPT-3, or GShard MoE for a ``MoEConfig``), Adam."""
    step, state, data = _model_step(config, batch)
    rules, note = GPT_RULES, FUSED_QKV
    kind = "GPT"
    if isinstance(config, models.MoEConfig):
        kind = f"GShard MoE ({config.experts} experts, top-{config.top_k}, every {config.moe_every}. layer)"
        # The experts' FFN split like fc1/fc2 inside every expert; the gate replicated.
        rules += ((r"\['moe'\]\['w1'\]$", 2), (r"\['moe'\]\['w2'\]$", 1))
        note += "; expert FFNs split like fc1/fc2 (tensor, not expert, parallel)"
    description = (f"{kind}, hidden {config.hidden}, {config.layers} layers, {config.heads} heads, seq "
                   f"{config.seq_len}, vocab {config.vocab}, batch {batch}, Adam")
    return Workload(name, description, step, state, data, rules, note)


def wide_resnet(name: str, config: models.WideResNetConfig, batch: int) -> Workload:
    step, state, data = _model_step(config, batch)
    description = (f"Wide-ResNet, stages {config.stages}, base {config.base_channels}, width x{config.width_factor}, "
                   f"{config.image_size}x{config.image_size} images, {config.classes} classes, batch {batch}, Adam")
    return Workload(name, description, step, state, data, None,
                    "none: its column/row splits pair dense layers, and convolutions have no such pairing")


# -------------------------------------------------------------- BERT layer (plain jax)

def bert_layer(name: str, hidden: int, heads: int, seq_len: int, layers: int, batch: int) -> Workload:
    """Post-LN BERT encoder layers (bidirectional attention with separate q, k, v; GELU FFN 4x)
    on given embeddings, regressed onto a target (MSE), Adam (plain jax)."""
    def dense(key: jax.Array, m: int, n: int) -> dict:
        return {"w": jax.random.normal(key, (m, n)) / math.sqrt(m), "b": jnp.zeros(n)}

    def init(key: jax.Array) -> tuple:
        blocks = []
        for k in jax.random.split(key, layers):
            k = jax.random.split(k, 6)
            norm = {"scale": jnp.ones(hidden), "bias": jnp.zeros(hidden)}
            blocks.append({"q": dense(k[0], hidden, hidden), "k": dense(k[1], hidden, hidden),
                           "v": dense(k[2], hidden, hidden), "o": dense(k[3], hidden, hidden), "ln1": norm,
                           "fc1": dense(k[4], hidden, 4 * hidden), "fc2": dense(k[5], 4 * hidden, hidden),
                           "ln2": norm})
        return blocks, models.Adam().init(blocks)

    def layer_norm(x: jax.Array, p: dict) -> jax.Array:
        mean = x.mean(-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-12) * p["scale"] + p["bias"]

    def loss(blocks: list, batch: dict) -> jax.Array:
        x = batch["x"]
        b, s, h = x.shape
        for p in blocks:
            q, k, v = ((x @ p[n]["w"] + p[n]["b"]).reshape(b, s, heads, h // heads) for n in "qkv")
            scores = jnp.einsum("bqnd,bknd->bnqk", q, k) / math.sqrt(h // heads)
            context = jnp.einsum("bnqk,bknd->bqnd", jax.nn.softmax(scores, -1), v).reshape(b, s, h)
            x = layer_norm(x + context @ p["o"]["w"] + p["o"]["b"], p["ln1"])
            ffn = jax.nn.gelu(x @ p["fc1"]["w"] + p["fc1"]["b"]) @ p["fc2"]["w"] + p["fc2"]["b"]
            x = layer_norm(x + ffn, p["ln2"])
        return jnp.mean((x - batch["y"]) ** 2)

    state = _abstract(init, jax.random.key(0))
    data = {"x": jax.ShapeDtypeStruct((batch, seq_len, hidden), jnp.float32),
            "y": jax.ShapeDtypeStruct((batch, seq_len, hidden), jnp.float32)}
    rules = ((r"\['(q|k|v|fc1)'\]\['w'\]$", 1), (r"\['(q|k|v|fc1)'\]\['b'\]$", 0), (r"\['(o|fc2)'\]\['w'\]$", 0))
    description = (f"BERT encoder, {layers} layer(s), hidden {hidden}, {heads} heads, seq {seq_len}, batch {batch}, "
                   "Adam (plain jax)")
    return Workload(name, description, _adam_step(loss, models.Adam().update), state, data, rules)


# -------------------------------------------------------------- Flax and transformers

def flax_cnn(name: str, channels: int, image: int, classes: int, batch: int) -> Workload:
    """A ``flax.linen`` CNN: two 3x3 convolutions, global average pool, a two-layer dense head."""
    _require("flax", "flax")
    import flax.linen as nn

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x: jax.Array) -> jax.Array:
            x = nn.relu(nn.Conv(channels, (3, 3))(x))
            x = nn.relu(nn.Conv(2 * channels, (3, 3), strides=(2, 2))(x))
            x = x.mean(axis=(1, 2))
            x = nn.relu(nn.Dense(8 * channels)(x))
            return nn.Dense(classes)(x)

    model = CNN()
    images = jax.ShapeDtypeStruct((batch, image, image, 3), jnp.float32)
    opt_name, opt_init, update = _optimizer()
    params = _abstract(model.init, jax.random.key(0), images)
    state = (params, _abstract(opt_init, params))

    def loss(params: Any, batch: dict) -> jax.Array:
        logp = jax.nn.log_softmax(model.apply(params, batch["images"]))
        return -jnp.mean(jnp.take_along_axis(logp, batch["labels"][:, None], axis=-1))

    data = {"images": images, "labels": jax.ShapeDtypeStruct((batch,), jnp.int32)}
    # flax.linen Dense kernels are (in, out): Dense_0 column-, Dense_1 row-parallel.
    rules = ((r"'Dense_0'\]\['kernel'\]$", 1), (r"'Dense_0'\]\['bias'\]$", 0), (r"'Dense_1'\]\['kernel'\]$", 0))
    description = (f"flax.linen CNN, conv {channels}-{2 * channels}, dense {8 * channels}-{classes}, "
                   f"{image}x{image} images, batch {batch}, {opt_name}")
    return Workload(name, description, _adam_step(loss, update), state, data, rules,
                    "the dense head only; the convolutions are data-parallel over the other axes "
                    "(replicated on mesh 8)")


def hf_gpt2(name: str, layers: int, hidden: int, heads: int, seq_len: int, vocab: int, *, batch: int) -> Workload:
    """Hugging Face ``FlaxGPT2LMHeadModel`` from a ``GPT2Config`` (random init, nothing downloaded),
    next-token cross-entropy, deterministic (no dropout)."""
    _require("transformers", "transformers<5")
    _require("flax", "flax")
    import transformers

    if int(transformers.__version__.split(".")[0]) >= 5:
        raise MissingLibrary(f"transformers {transformers.__version__} has no Flax models (removed in v5); "
                             "pip install 'transformers<5'")
    from transformers import FlaxGPT2LMHeadModel, GPT2Config
    from transformers.utils import logging

    logging.set_verbosity_error()  # the v5 deprecation notice, once per model
    config = GPT2Config(n_layer=layers, n_embd=hidden, n_head=heads, n_positions=seq_len, vocab_size=vocab)
    model = FlaxGPT2LMHeadModel(config, input_shape=(1, seq_len), _do_init=False)
    opt_name, opt_init, update = _optimizer()
    params = _abstract(lambda key: model.init_weights(key, (1, seq_len)), jax.random.key(0))
    state = (params, _abstract(opt_init, params))

    def loss(params: Any, batch: dict) -> jax.Array:
        logits = model(batch["input_ids"], params=params, train=False).logits[:, :-1]
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.take_along_axis(logp, batch["input_ids"][:, 1:, None], axis=-1))

    data = {"input_ids": jax.ShapeDtypeStruct((batch, seq_len), jnp.int32)}
    # FlaxConv1D keeps its kernels as (out, in): c_attn and c_fc split dim 0, the c_projs dim 1.
    rules = ((r"\['(c_attn|c_fc)'\]\['kernel'\]$", 0), (r"\['(c_attn|c_fc)'\]\['bias'\]$", 0),
             (r"\['c_proj'\]\['kernel'\]$", 1), (r"\['wte'\]\['embedding'\]$", 0))
    description = (f"transformers {transformers.__version__} FlaxGPT2LMHeadModel, {layers} layers, hidden {hidden}, "
                   f"{heads} heads, seq {seq_len}, vocab {vocab}, batch {batch}, {opt_name}")
    return Workload(name, description, _adam_step(loss, update), state, data, rules,
                    "c_attn is fused q|k|v: splitting its 3h rows is not head-aligned")


def hf_flax(name: str, family: str, layers: int, hidden: int, heads: int, seq_len: int, *, vocab: int,
            batch: int) -> Workload:
    """A Hugging Face Flax model of ``family`` from a small config (random init, nothing
    downloaded), trained with AdamW: ``bert`` (``FlaxBertForMaskedLM``: masked-token
    cross-entropy on every position), ``llama`` (``FlaxLlamaForCausalLM``, half as many K/V heads as heads, next-token
    cross-entropy; its Flax port keeps only ``max_position_embeddings`` of the rotary
    table's 2 x head-dimension columns, so that is at least those), ``vit`` (``FlaxViTForImageClassification``,
    ``seq_len`` x ``seq_len`` images of 4 x 4 patches, ``vocab`` classes); ``gpt2`` is
    :func:`hf_gpt2`. No Megatron rules."""
    if family == "gpt2":
        return hf_gpt2(name, layers, hidden, heads, seq_len, vocab, batch=batch)
    _require("transformers", "transformers<5")
    _require("flax", "flax")
    _require("optax", "optax")
    import optax
    import transformers
    from transformers.utils import logging

    logging.set_verbosity_error()
    sizes = dict(num_hidden_layers=layers, hidden_size=hidden, num_attention_heads=heads,
                 intermediate_size=4 * hidden)
    if family == "bert":
        model = transformers.FlaxBertForMaskedLM(transformers.BertConfig(
            vocab_size=vocab, max_position_embeddings=seq_len, **sizes), _do_init=False)
        inputs = {"input_ids": jax.ShapeDtypeStruct((batch, seq_len), jnp.int32)}
    elif family == "llama":
        model = transformers.FlaxLlamaForCausalLM(transformers.LlamaConfig(
            vocab_size=vocab, max_position_embeddings=max(seq_len, 2 * hidden // heads),
            num_key_value_heads=max(1, heads // 2), **sizes),
            _do_init=False)
        inputs = {"input_ids": jax.ShapeDtypeStruct((batch, seq_len), jnp.int32)}
    elif family == "vit":
        model = transformers.FlaxViTForImageClassification(transformers.ViTConfig(
            image_size=seq_len, patch_size=4, num_labels=vocab, **sizes), _do_init=False)
        inputs = {"pixel_values": jax.ShapeDtypeStruct((batch, 3, seq_len, seq_len), jnp.float32),
                  "labels": jax.ShapeDtypeStruct((batch,), jnp.int32)}
    else:
        raise ValueError(f"hf_flax: unknown family {family!r} (gpt2, bert, llama, vit)")
    params = _abstract(lambda key: model.init_weights(key, model.input_shape), jax.random.key(0))
    tx = optax.adamw(1e-3)

    def loss(params: Any, batch: dict) -> jax.Array:
        if family == "vit":
            logits, labels = model(batch["pixel_values"], params=params, train=False).logits, batch["labels"]
        else:
            logits, labels = model(batch["input_ids"], params=params, train=False).logits, batch["input_ids"]
            if family == "llama":
                logits, labels = logits[:, :-1], labels[:, 1:]
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.take_along_axis(logp, labels[..., None], axis=-1))

    def update(params: Any, grads: Any, state: Any) -> tuple[Any, Any]:
        updates, state = tx.update(grads, state, params)
        return optax.apply_updates(params, updates), state

    description = (f"transformers {transformers.__version__} {type(model).__name__}, {layers} layers, hidden "
                   f"{hidden}, {heads} heads, {'image' if family == 'vit' else 'seq'} {seq_len}, "
                   f"{'classes' if family == 'vit' else 'vocab'} {vocab}, batch {batch}, optax.adamw")
    return Workload(name, description, _adam_step(loss, update), (params, _abstract(tx.init, params)), inputs, None)


# -------------------------------------------------------------- the zoo

def zoo(quick: bool) -> dict[str, Callable[[], Workload]]:
    """Workload constructors by name, at full or ``--quick`` size (built lazily: the Flax and
    transformers ones import their library)."""
    if quick:
        return {
            "mlp-dp": lambda: mlp("mlp-dp", (64, 64, 64, 64), 2048),
            "mlp-mp": lambda: mlp("mlp-mp", (256, 1024, 256, 1024, 256), 256),
            "gpt": lambda: gpt("gpt", models.GPTConfig(vocab=512, hidden=64, layers=1, heads=4, seq_len=32), 8),
            "bert": lambda: bert_layer("bert", 64, 4, 32, 1, 8),
            "moe": lambda: gpt("moe", models.MoEConfig(vocab=512, hidden=64, layers=2, heads=4, seq_len=32,
                                                       experts=8, expert_ffn=2), 8),
            "wresnet": lambda: wide_resnet("wresnet", models.WideResNetConfig(
                stages=(1, 1), base_channels=8, width_factor=2, image_size=16, classes=16), 8),
            "flax-cnn": lambda: flax_cnn("flax-cnn", 8, 16, 16, 16),
            "hf-gpt2": lambda: hf_gpt2("hf-gpt2", 1, 64, 4, 32, 512, batch=8),
        }
    return {
        "mlp-dp": lambda: mlp("mlp-dp", (128, 128, 128, 128, 128), 16384),
        "mlp-mp": lambda: mlp("mlp-mp", (1024, 4096, 1024, 4096, 1024), 1024),
        "gpt": lambda: gpt("gpt", models.GPTConfig(vocab=1024, hidden=128, layers=2, heads=4, seq_len=64), 16),
        "bert": lambda: bert_layer("bert", 256, 8, 128, 1, 16),
        "moe": lambda: gpt("moe", models.MoEConfig(vocab=1024, hidden=128, layers=2, heads=4, seq_len=64,
                                                   experts=8, expert_ffn=4), 16),
        "wresnet": lambda: wide_resnet("wresnet", models.WideResNetConfig(
            stages=(1, 1, 1, 1), base_channels=16, width_factor=2, image_size=32, classes=64), 32),
        "flax-cnn": lambda: flax_cnn("flax-cnn", 32, 32, 64, 64),
        "hf-gpt2": lambda: hf_gpt2("hf-gpt2", 2, 128, 4, 64, 1024, batch=16),
        # At scale (not in the default sweep: each compile takes about 40 s): Appendix A's
        # GPT-3 1.3B, batch 8 x 1024.
        "gpt3-1.3b": lambda: gpt("gpt3-1.3b", models.GPT3["1.3B"], 8),
        "gpt3-6.7b": lambda: gpt("gpt3-6.7b", models.GPT3["6.7B"], 8),
        # Llama 2 7B at GPT-3's batch 8 x 1024 (its context is 4096).
        "llama2-7b": lambda: llama("llama2-7b", replace(models.LLAMA2["7B"], seq_len=1024), 8),
        "llama2-7b-bf16": lambda: llama("llama2-7b-bf16", replace(models.LLAMA2["7B"], seq_len=1024,
                                                                  dtype="bfloat16", state_dtype="float32"), 8),
    }
