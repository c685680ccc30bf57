"""The paper's training workloads (Sec. 8.1, Appendix A) in plain ``jax.numpy``, for tests and benchmarks.

The families: an MLP; GPT-3 (:data:`GPT3`) and GShard MoE (:data:`MOE`); Wide-ResNet
(:data:`WIDE_RESNET`); and, beyond the paper, Llama 2 (:data:`LLAMA2`: grouped-query
attention, rotary positions, SwiGLU, optionally bf16 with f32 Adam moments). Each family has
a frozen config with presets from the published tables; :func:`build` makes a
:class:`Model` of it, whose ``abstract_args`` lower a step of a billion-parameter model
without allocating it::

    model = build(GPT3["1.3B"])
    lowered = jax.jit(model.train_step).lower(*model.abstract_args(batch_size=8))

The MLP steps with SGD, ``train_step(params, batch) -> (params, loss)``; the others with
Adam, ``train_step(params, opt_state, batch) -> (params, opt_state, loss)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .markers import mark_pipeline_boundary


@dataclass(frozen=True)
class Model:
    """A training workload: its step, its loss, and example arguments of the step."""

    init: Callable[[jax.Array, int], tuple]  # (key, batch_size) -> arguments of train_step
    loss: Callable[..., jax.Array]  # (params, batch) -> scalar
    train_step: Callable[..., tuple]

    def abstract_args(self, batch_size: int) -> tuple:
        """The arguments of ``train_step`` as ``jax.ShapeDtypeStruct`` pytrees; nothing is allocated."""
        return jax.eval_shape(lambda key: self.init(key, batch_size), jax.random.key(0))


@dataclass(frozen=True)
class Adam:
    """Adam (Kingma & Ba) written out as the elementwise chain a training step lowers to."""

    lr: float = 1e-3
    b1: float = 0.9
    b2: float = 0.999
    eps: float = 1e-8

    def init(self, params: dict | list, dtype: str | None = None) -> dict:
        """The step count and both moments; the moments in ``dtype``, by default each parameter's own."""
        zeros = jax.tree.map(lambda p: jnp.zeros_like(p, dtype), params)
        return {"step": jnp.zeros((), jnp.int32), "mu": zeros, "nu": zeros}

    def update(self, params: dict | list, grads: dict | list, state: dict) -> tuple[dict | list, dict]:
        step = state["step"] + 1
        t = step.astype(jnp.float32)
        # The moments' dtype throughout (bf16 gradients of f32 moments are cast up; a no-op where the
        # dtypes agree); the step is cast to each parameter's dtype below.
        grads = jax.tree.map(lambda g, m: g.astype(m.dtype), grads, state["mu"])
        mu = jax.tree.map(lambda m, g: self.b1 * m + (1 - self.b1) * g, state["mu"], grads)
        nu = jax.tree.map(lambda v, g: self.b2 * v + (1 - self.b2) * g * g, state["nu"], grads)
        scale = self.lr * jnp.sqrt(1 - self.b2**t) / (1 - self.b1**t)  # both bias corrections
        params = jax.tree.map(lambda p, m, v: p - (scale * m / (jnp.sqrt(v) + self.eps)).astype(p.dtype),
                              params, mu, nu)
        return params, {"step": step, "mu": mu, "nu": nu}

    def train_step(self, loss: Callable) -> Callable:
        """``train_step(params, opt_state, batch) -> (params, opt_state, loss)`` for ``loss(params, batch)``."""
        def train_step(params: dict | list, opt_state: dict, batch: dict) -> tuple:
            value, grads = jax.value_and_grad(loss)(params, batch)
            return *self.update(params, grads, opt_state), value
        return train_step


def _normal(key: jax.Array, shape: tuple[int, ...], fan_in: int) -> jax.Array:
    return jax.random.normal(key, shape) / math.sqrt(fan_in)


def _dense(key: jax.Array, m: int, n: int) -> dict:
    return {"w": _normal(key, (m, n), m), "b": jnp.zeros(n)}


def _cast(tree: dict | list, dtype: str) -> dict | list:
    return jax.tree.map(lambda a: a.astype(dtype) if jnp.issubdtype(a.dtype, jnp.floating) else a, tree)


def _cross_entropy(logits: jax.Array, labels: jax.Array) -> jax.Array:
    logp = jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[..., None], axis=-1))


# -------------------------------------------------------------- MLP

@dataclass(frozen=True)
class MLPConfig:
    sizes: tuple[int, ...] = (16, 32, 8)  # input, hidden..., output
    lr: float = 0.1
    boundaries: bool = False  # mark_pipeline_boundary after every hidden layer (one pipeline layer each)


def mlp(config: MLPConfig = MLPConfig()) -> Model:
    """Dense layers with ReLU and a mean-squared-error loss, stepped with SGD."""
    def init(key: jax.Array, batch_size: int) -> tuple:
        keys = jax.random.split(key, len(config.sizes) + 1)
        params = [_dense(k, m, n) for k, m, n in zip(keys, config.sizes[:-1], config.sizes[1:])]
        return params, {"x": jax.random.normal(keys[-2], (batch_size, config.sizes[0])),
                        "y": jax.random.normal(keys[-1], (batch_size, config.sizes[-1]))}

    def loss(params: list, batch: dict) -> jax.Array:
        h = batch["x"]
        for layer in params[:-1]:
            h = jax.nn.relu(h @ layer["w"] + layer["b"])
            if config.boundaries:
                h = mark_pipeline_boundary(h)
        return jnp.mean((h @ params[-1]["w"] + params[-1]["b"] - batch["y"]) ** 2)

    def train_step(params: list, batch: dict) -> tuple:
        value, grads = jax.value_and_grad(loss)(params, batch)
        return jax.tree.map(lambda p, g: p - config.lr * g, params, grads), value

    return Model(init, loss, train_step)


# -------------------------------------------------------------- GPT and GShard MoE

@dataclass(frozen=True)
class GPTConfig:
    vocab: int = 51200
    hidden: int = 1024
    layers: int = 24
    heads: int = 16
    seq_len: int = 1024
    tied_embedding: bool = True  # the output projection is the token embedding transposed
    scan_layers: bool = False  # lax.scan over stacked layers: one stablehlo.while instead of unrolled layers
    dtype: str = "float32"
    adam: Adam = field(default_factory=Adam)


@dataclass(frozen=True)
class MoEConfig(GPTConfig):
    """GShard MoE: every ``moe_every``-th layer's MLP is replaced by ``experts`` expert MLPs."""

    vocab: int = 32000
    experts: int = 8
    top_k: int = 2  # 2: GShard's top-2 gating; 1: Switch-style top-1
    capacity_factor: float = 1.0  # expert capacity = top_k * tokens per group * factor / experts (GShard: 2N/E)
    moe_every: int = 2  # Sec. 8.1: MoE layers replace the MLP "every two layers"
    # Expert FFN width in multiples of hidden. The paper does not give it; with 8 and
    # moe_every=2 the presets have the parameter counts of the MoE table (380M ... 70B).
    expert_ffn: int = 8


# Appendix A, GPT-3 table: hidden size, #layers, #heads; seq 1024, vocab 51200.
GPT3 = {name: GPTConfig(hidden=h, layers=n, heads=a) for name, h, n, a in (
    ("350M", 1024, 24, 16), ("1.3B", 2048, 24, 32), ("2.6B", 2560, 32, 32),
    ("6.7B", 4096, 32, 32), ("15B", 5120, 48, 32), ("39B", 8192, 48, 64))}
# Appendix A, MoE table: hidden size, #layers, #heads, #experts; seq 1024, vocab 32000.
MOE = {name: MoEConfig(hidden=h, layers=n, heads=a, experts=e) for name, h, n, a, e in (
    ("380M", 768, 8, 16, 8), ("1.3B", 768, 16, 16, 16), ("2.4B", 1024, 16, 16, 16),
    ("10B", 1536, 16, 16, 32), ("27B", 2048, 16, 32, 48), ("70B", 2048, 32, 32, 64))}


def _layer_norm(x: jax.Array, p: dict) -> jax.Array:
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * p["scale"] + p["bias"]


def _attention(x: jax.Array, p: dict, heads: int) -> jax.Array:
    b, s, h = x.shape
    qkv = (x @ p["qkv"]["w"] + p["qkv"]["b"]).reshape(b, s, 3, heads, h // heads)
    q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
    scores = jnp.einsum("bqnd,bknd->bnqk", q, k) / np.sqrt(h // heads).astype(x.dtype)
    scores = jnp.where(jnp.tril(jnp.ones((s, s), bool)), scores, jnp.finfo(x.dtype).min)  # causal
    context = jnp.einsum("bnqk,bknd->bqnd", jax.nn.softmax(scores, axis=-1), v).reshape(b, s, h)
    return context @ p["out"]["w"] + p["out"]["b"]


def _moe_ffn(x: jax.Array, p: dict, c: MoEConfig) -> jax.Array:
    """GShard's dispatch/combine: each sequence is a group of tokens sharing the experts' capacity."""
    groups, s, _ = x.shape
    capacity = max(1, math.ceil(c.top_k * s * c.capacity_factor / c.experts))
    probs = jax.nn.softmax(jnp.einsum("gsm,me->gse", x, p["gate"]), axis=-1)
    gates, index = lax.top_k(probs, c.top_k)  # (g, s, k): chlo.top_k
    mask = jax.nn.one_hot(index, c.experts, dtype=x.dtype).transpose(0, 2, 1, 3)  # (g, k, s, e)
    # A token's slot in an expert's buffer: all first choices queue before second choices.
    slot = jnp.cumsum(mask.reshape(groups, -1, c.experts), axis=1).reshape(mask.shape) * mask - 1
    # (g, k, s, e, c); a token past an expert's capacity is dropped (no slot matches)
    dispatch_k = mask[..., None] * jax.nn.one_hot(slot.astype(jnp.int32), capacity, dtype=x.dtype)
    combine = jnp.einsum("gksec,gsk->gsec", dispatch_k, gates)
    expert_in = jnp.einsum("gksec,gsm->egcm", dispatch_k, x)  # dispatch: sum over k
    hidden = jax.nn.gelu(jnp.einsum("egcm,emf->egcf", expert_in, p["w1"]))
    return jnp.einsum("gsec,egcm->gsm", combine, jnp.einsum("egcf,efm->egcm", hidden, p["w2"]))


def _layer_init(key: jax.Array, c: GPTConfig, moe: bool) -> dict:
    h, k = c.hidden, jax.random.split(key, 5)
    norm = {"scale": jnp.ones(h), "bias": jnp.zeros(h)}
    layer = {"ln1": norm, "qkv": _dense(k[0], h, 3 * h), "out": _dense(k[1], h, h), "ln2": norm}
    if moe:
        f = c.expert_ffn * h
        layer["moe"] = {"gate": _normal(k[2], (h, c.experts), h), "w1": _normal(k[3], (c.experts, h, f), h),
                        "w2": _normal(k[4], (c.experts, f, h), f)}
    else:
        layer |= {"fc1": _dense(k[3], h, 4 * h), "fc2": _dense(k[4], 4 * h, h)}
    return layer


def _blocks(x: jax.Array, layers: list[dict], c: GPTConfig) -> jax.Array:
    """Pre-LN transformer blocks: attention, then the MLP (4x, gelu) or the MoE layer."""
    for p in layers:
        x = x + _attention(_layer_norm(x, p["ln1"]), p, c.heads)
        y = _layer_norm(x, p["ln2"])
        if "moe" in p:
            x = x + _moe_ffn(y, p["moe"], c)
        else:
            x = x + jax.nn.gelu(y @ p["fc1"]["w"] + p["fc1"]["b"]) @ p["fc2"]["w"] + p["fc2"]["b"]
    return x


def gpt(c: GPTConfig) -> Model:
    """GPT-3 (or GShard MoE for a :class:`MoEConfig`): embeddings, pre-LN blocks, LM loss.

    ``params["layers"]`` is a list of per-layer dicts; with ``scan_layers`` it is one
    stacked dict per position in the dense/MoE period, scanned over ``layers / period``.
    """
    period = c.moe_every if isinstance(c, MoEConfig) else 1
    kinds = [period > 1 and i % period == period - 1 for i in range(c.layers)]  # which layers are MoE layers
    if c.scan_layers and c.layers % period:
        raise ValueError(f"scan_layers needs layers ({c.layers}) to be a multiple of moe_every ({period})")

    def init(key: jax.Array, batch_size: int) -> tuple:
        keys = jax.random.split(key, c.layers + 4)
        layers = [_layer_init(k, c, moe) for k, moe in zip(keys, kinds)]
        if c.scan_layers:
            layers = [jax.tree.map(lambda *a: jnp.stack(a), *layers[i::period]) for i in range(period)]
        params = {"wte": _normal(keys[-4], (c.vocab, c.hidden), c.hidden) * 0.1,
                  "wpe": _normal(keys[-3], (c.seq_len, c.hidden), c.hidden) * 0.1,
                  "layers": layers, "ln_f": {"scale": jnp.ones(c.hidden), "bias": jnp.zeros(c.hidden)}}
        if not c.tied_embedding:
            params["head"] = _normal(keys[-2], (c.hidden, c.vocab), c.hidden)
        params = _cast(params, c.dtype)
        tokens = jax.random.randint(keys[-1], (batch_size, c.seq_len), 0, c.vocab, jnp.int32)
        return params, c.adam.init(params), {"tokens": tokens, "targets": jnp.roll(tokens, -1, axis=1)}

    def loss(params: dict, batch: dict) -> jax.Array:
        x = jnp.take(params["wte"], batch["tokens"], axis=0) + params["wpe"]
        if c.scan_layers:  # one period of stacked layers per iteration
            x, _ = lax.scan(lambda x, period: (_blocks(x, period, c), None), x, params["layers"])
        else:
            x = _blocks(x, params["layers"], c)
        x = _layer_norm(x, params["ln_f"])
        return _cross_entropy(x @ (params["wte"].T if c.tied_embedding else params["head"]), batch["targets"])

    return Model(init, loss, c.adam.train_step(loss))


# -------------------------------------------------------------- Llama 2

@dataclass(frozen=True)
class LlamaConfig:
    """Llama 2 (Touvron et al., 2023): RMSNorm, rotary positions, grouped-query attention, SwiGLU, untied head.

    The defaults are the 7B shape. ``state_dtype="float32"`` with ``dtype="bfloat16"`` is the
    usual mixed-precision recipe: bf16 parameters and activations, f32 Adam moments.
    """

    vocab: int = 32000
    hidden: int = 4096
    layers: int = 32
    heads: int = 32
    kv_heads: int = 32  # grouped-query attention: each K/V head serves heads / kv_heads query heads
    ffn: int = 11008  # the SwiGLU intermediate size
    seq_len: int = 4096  # Llama 2's context; replace it for shorter runs
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5
    scan_layers: bool = False  # lax.scan over stacked layers: one stablehlo.while instead of unrolled layers
    dtype: str = "float32"  # parameters and activations
    state_dtype: str | None = None  # Adam's moments; None: the parameters' dtype
    adam: Adam = field(default_factory=Adam)

    def __post_init__(self) -> None:
        if self.hidden % self.heads or (self.hidden // self.heads) % 2:
            raise ValueError(f"hidden ({self.hidden}) must be heads ({self.heads}) times an even head size")
        if self.heads % self.kv_heads:
            raise ValueError(f"kv_heads ({self.kv_heads}) must divide heads ({self.heads})")


# Llama 2's released configs: hidden size, #layers, #heads, #KV heads, FFN size; vocab 32000,
# context 4096. As the paper's Table 1 says, only 70B uses grouped-query attention.
LLAMA2 = {name: LlamaConfig(hidden=h, layers=n, heads=a, kv_heads=kv, ffn=f) for name, h, n, a, kv, f in (
    ("7B", 4096, 32, 32, 32, 11008), ("13B", 5120, 40, 40, 40, 13824), ("70B", 8192, 80, 64, 8, 28672))}


def _rms_norm(x: jax.Array, weight: jax.Array, eps: float) -> jax.Array:
    return x * lax.rsqrt(jnp.mean(jnp.square(x), axis=-1, keepdims=True) + eps) * weight


def _rotary_tables(c: LlamaConfig) -> tuple[jax.Array, jax.Array]:
    """cos and sin of position * theta^(-2i/d), (seq_len, 1, head_dim): each frequency twice, for :func:`_rotary`."""
    d = c.hidden // c.heads
    inv_freq = (c.rope_theta ** (-np.arange(0, d, 2) / d)).astype(np.float32)
    angles = lax.iota(jnp.float32, c.seq_len)[:, None] * inv_freq
    angles = jnp.concatenate([angles, angles], axis=-1)[:, None, :]  # broadcasts over heads
    return jnp.cos(angles).astype(c.dtype), jnp.sin(angles).astype(c.dtype)


def _rotary(x: jax.Array, cos: jax.Array, sin: jax.Array) -> jax.Array:
    """Rotary embedding in the rotate-half (GPT-NeoX, Hugging Face Llama) form: dims i and i + d/2 are a
    rotated pair. Meta's reference pairs dims 2i and 2i + 1; that is the same model with q's and k's
    projection columns permuted within each head."""
    half = x.shape[-1] // 2
    return x * cos + jnp.concatenate([-x[..., half:], x[..., :half]], axis=-1) * sin


def _gqa_attention(x: jax.Array, p: dict, c: LlamaConfig, cos: jax.Array, sin: jax.Array) -> jax.Array:
    """Causal attention, query head ``n * group + g`` reading K/V head ``n`` (no repeated K/V)."""
    b, s, _ = x.shape
    d, group = c.hidden // c.heads, c.heads // c.kv_heads
    q = _rotary((x @ p["wq"]).reshape(b, s, c.heads, d), cos, sin).reshape(b, s, c.kv_heads, group, d)
    k = _rotary((x @ p["wk"]).reshape(b, s, c.kv_heads, d), cos, sin)
    v = (x @ p["wv"]).reshape(b, s, c.kv_heads, d)
    scores = jnp.einsum("bqngd,bknd->bngqk", q, k) / np.sqrt(d).astype(x.dtype)
    scores = jnp.where(jnp.tril(jnp.ones((s, s), bool)), scores, jnp.finfo(x.dtype).min)  # causal
    context = jnp.einsum("bngqk,bknd->bqngd", jax.nn.softmax(scores, axis=-1), v).reshape(b, s, c.hidden)
    return context @ p["wo"]


def _llama_layer_init(key: jax.Array, c: LlamaConfig) -> dict:
    h, kv, k = c.hidden, c.kv_heads * (c.hidden // c.heads), jax.random.split(key, 7)
    return {"attn_norm": jnp.ones(h), "wq": _normal(k[0], (h, h), h), "wk": _normal(k[1], (h, kv), h),
            "wv": _normal(k[2], (h, kv), h), "wo": _normal(k[3], (h, h), h), "mlp_norm": jnp.ones(h),
            "w_gate": _normal(k[4], (h, c.ffn), h), "w_up": _normal(k[5], (h, c.ffn), h),
            "w_down": _normal(k[6], (c.ffn, h), c.ffn)}


def _llama_block(x: jax.Array, p: dict, c: LlamaConfig, cos: jax.Array, sin: jax.Array) -> jax.Array:
    """Pre-norm: RMSNorm, attention, residual; RMSNorm, SwiGLU MLP, residual."""
    x = x + _gqa_attention(_rms_norm(x, p["attn_norm"], c.norm_eps), p, c, cos, sin)
    y = _rms_norm(x, p["mlp_norm"], c.norm_eps)
    return x + (jax.nn.silu(y @ p["w_gate"]) * (y @ p["w_up"])) @ p["w_down"]


def _llama_logits(params: dict, tokens: jax.Array, c: LlamaConfig) -> jax.Array:
    x = jnp.take(params["embed"], tokens, axis=0)
    cos, sin = _rotary_tables(c)
    if c.scan_layers:
        x, _ = lax.scan(lambda x, p: (_llama_block(x, p, c, cos, sin), None), x, params["layers"])
    else:
        for p in params["layers"]:
            x = _llama_block(x, p, c, cos, sin)
    return _rms_norm(x, params["norm"], c.norm_eps) @ params["head"]


def llama(c: LlamaConfig) -> Model:
    """Llama 2: token embedding, pre-norm blocks, final RMSNorm, untied head, next-token loss.

    ``params["layers"]`` is a list of per-layer dicts; with ``scan_layers`` it is one dict of
    them stacked along a leading layer axis. The loss is computed in float32 whatever ``dtype``.
    """
    def init(key: jax.Array, batch_size: int) -> tuple:
        keys = jax.random.split(key, c.layers + 3)
        layers = [_llama_layer_init(k, c) for k in keys[:c.layers]]
        if c.scan_layers:
            layers = jax.tree.map(lambda *a: jnp.stack(a), *layers)
        params = _cast({"embed": _normal(keys[-3], (c.vocab, c.hidden), c.hidden) * 0.1, "layers": layers,
                        "norm": jnp.ones(c.hidden), "head": _normal(keys[-2], (c.hidden, c.vocab), c.hidden)},
                       c.dtype)
        tokens = jax.random.randint(keys[-1], (batch_size, c.seq_len), 0, c.vocab, jnp.int32)
        return (params, c.adam.init(params, c.state_dtype),
                {"tokens": tokens, "targets": jnp.roll(tokens, -1, axis=1)})

    def loss(params: dict, batch: dict) -> jax.Array:
        return _cross_entropy(_llama_logits(params, batch["tokens"], c), batch["targets"])

    return Model(init, loss, c.adam.train_step(loss))


# -------------------------------------------------------------- Wide-ResNet

@dataclass(frozen=True)
class WideResNetConfig:
    """Bottleneck blocks; in stage ``i``, ``f = base * 2^i``: 1x1 conv to ``f``, 3x3 conv to
    ``f * width_factor``, 1x1 conv to ``4 f``. The paper does not spell the block out; with
    the 3x3 conv widened the presets have the table's parameter counts (250M ... 13B)."""

    stages: tuple[int, ...] = (3, 4, 6, 3)  # blocks per stage; 3 * sum + 2 layers: 50 here, 101 with (3, 4, 23, 3)
    base_channels: int = 64
    width_factor: int = 2
    image_size: int = 224
    classes: int = 1024
    depthwise: bool = False  # the 3x3 conv is depthwise (feature_group_count = f, channel multiplier width_factor)
    dtype: str = "float32"
    adam: Adam = field(default_factory=Adam)

# Appendix A, Wide-ResNet table: #layers, base channel, width factor; image 224x224x3, 1024 classes.
WIDE_RESNET = {name: WideResNetConfig(stages=(3, 4, 23 if n == 101 else 6, 3), base_channels=b, width_factor=w)
               for name, n, b, w in (("250M", 50, 160, 2), ("1B", 50, 320, 2), ("2B", 50, 448, 2),
                                     ("4B", 50, 640, 2), ("6.8B", 50, 320, 16), ("13B", 101, 320, 16))}


def _conv(x: jax.Array, w: jax.Array, stride: int = 1, groups: int = 1) -> jax.Array:
    return lax.conv_general_dilated(x, w, (stride, stride), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                    feature_group_count=groups)


def _batch_norm(x: jax.Array, p: dict) -> jax.Array:
    """Training mode: statistics of this batch over N, H, W (no running averages)."""
    mean, var = jnp.mean(x, axis=(0, 1, 2)), jnp.var(x, axis=(0, 1, 2))
    return (x - mean) * lax.rsqrt(var + 1e-5) * p["scale"] + p["bias"]


def _conv_bn(key: jax.Array, kernel: int, cin: int, cout: int, groups: int = 1) -> dict:
    return {"w": _normal(key, (kernel, kernel, cin // groups, cout), kernel * kernel * cin // groups),
            "bn": {"scale": jnp.ones(cout), "bias": jnp.zeros(cout)}}


def _block(x: jax.Array, p: dict, stride: int) -> jax.Array:
    y = jax.nn.relu(_batch_norm(_conv(x, p["conv1"]["w"]), p["conv1"]["bn"]))
    groups = y.shape[-1] // p["conv2"]["w"].shape[2]
    y = jax.nn.relu(_batch_norm(_conv(y, p["conv2"]["w"], stride, groups), p["conv2"]["bn"]))
    y = _batch_norm(_conv(y, p["conv3"]["w"]), p["conv3"]["bn"])
    if "proj" in p:
        x = _batch_norm(_conv(x, p["proj"]["w"], stride), p["proj"]["bn"])
    return jax.nn.relu(x + y)


def wide_resnet(c: WideResNetConfig) -> Model:
    """Stem (7x7/2 conv, max pool 3x3/2), bottleneck stages, average pool, dense head, cross-entropy."""
    strides = [2 if i > 0 and j == 0 else 1 for i, n in enumerate(c.stages) for j in range(n)]

    def init(key: jax.Array, batch_size: int) -> tuple:
        keys = iter(jax.random.split(key, 4 * len(strides) + 4))
        blocks, cin = [], c.base_channels
        for i, n in enumerate(c.stages):
            f = c.base_channels * 2**i
            for j in range(n):
                block = {"conv1": _conv_bn(next(keys), 1, cin, f),
                         "conv2": _conv_bn(next(keys), 3, f, f * c.width_factor, f if c.depthwise else 1),
                         "conv3": _conv_bn(next(keys), 1, f * c.width_factor, 4 * f)}
                if cin != 4 * f or (i > 0 and j == 0):
                    block["proj"] = _conv_bn(next(keys), 1, cin, 4 * f)
                blocks.append(block)
                cin = 4 * f
        params = _cast({"stem": _conv_bn(next(keys), 7, 3, c.base_channels), "blocks": blocks,
                        "head": _dense(next(keys), cin, c.classes)}, c.dtype)
        images = jax.random.normal(next(keys), (batch_size, c.image_size, c.image_size, 3), c.dtype)
        labels = jax.random.randint(next(keys), (batch_size,), 0, c.classes, jnp.int32)
        return params, c.adam.init(params), {"images": images, "labels": labels}

    def loss(params: dict, batch: dict) -> jax.Array:
        x = jax.nn.relu(_batch_norm(_conv(batch["images"], params["stem"]["w"], 2), params["stem"]["bn"]))
        x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
        for p, stride in zip(params["blocks"], strides):
            x = _block(x, p, stride)
        _, h, w, ch = x.shape
        x = lax.reduce_window(x, 0.0, lax.add, (1, h, w, 1), (1, 1, 1, 1), "VALID").reshape(-1, ch) / (h * w)
        return _cross_entropy(x @ params["head"]["w"] + params["head"]["b"], batch["labels"])

    return Model(init, loss, c.adam.train_step(loss))


ModelConfig = MLPConfig | GPTConfig | LlamaConfig | WideResNetConfig


def build(config: ModelConfig) -> Model:
    """The model a config describes (a :class:`MoEConfig` is a :class:`GPTConfig`)."""
    for kind, builder in ((MLPConfig, mlp), (GPTConfig, gpt), (LlamaConfig, llama), (WideResNetConfig, wide_resnet)):
        if isinstance(config, kind):
            return builder(config)
    raise TypeError(f"no model for config {type(config).__name__}")


def abstract_args(config: ModelConfig, batch_size: int) -> tuple:
    """``(params, opt_state, batch)`` (``(params, batch)`` for the MLP) as ``jax.ShapeDtypeStruct`` pytrees."""
    return build(config).abstract_args(batch_size)


def num_params(config: ModelConfig) -> int:
    """Trainable parameters, counted from abstract shapes."""
    return sum(math.prod(leaf.shape) for leaf in jax.tree.leaves(abstract_args(config, 1)[0]))
