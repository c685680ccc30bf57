"""The reference models train (the loss falls over three steps on CPU), the presets have the
published parameter counts, GPT-3 1.3B and Llama-2 7B steps lower from abstract shapes alone,
and the Llama model computes what transformers' Flax Llama does."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alpa_mlir import models

TINY_GPT = models.GPTConfig(vocab=64, hidden=32, layers=2, heads=4, seq_len=16)
TINY_MOE = models.MoEConfig(vocab=64, hidden=32, layers=2, heads=4, seq_len=16, experts=4)
TINY_WRN = models.WideResNetConfig(stages=(1, 1), base_channels=8, width_factor=2, image_size=16, classes=10,
                                   depthwise=True)
TINY_LLAMA = models.LlamaConfig(vocab=64, hidden=32, layers=2, heads=4, kv_heads=2, ffn=64, seq_len=16)


def _losses(config, steps: int = 3, batch_size: int = 4) -> list[float]:
    model = models.build(config)
    *state, batch = model.init(jax.random.key(0), batch_size)
    step = jax.jit(model.train_step)
    losses = []
    for _ in range(steps):
        *state, loss = step(*state, batch)
        losses.append(float(loss))
    return losses


# Recorded on CPU (threefry keys, float32); the loss of the same batch falls step by step.
@pytest.mark.parametrize("config, expected", [
    (models.MLPConfig(), [1.82154, 1.44062, 1.18714]),
    (TINY_GPT, [4.15000, 4.09168, 4.04237]),
    (dataclasses.replace(TINY_GPT, scan_layers=True), [4.15000, 4.09168, 4.04237]),
    (dataclasses.replace(TINY_GPT, tied_embedding=False), [4.61402, 4.07873, 3.68332]),
    (TINY_MOE, [4.16403, 4.10017, 4.04692]),
    (dataclasses.replace(TINY_MOE, top_k=1, layers=4, scan_layers=True), [4.13941, 4.08340, 4.03666]),
    (TINY_WRN, [3.00475, 2.59126, 2.25392]),
    (TINY_LLAMA, [4.61856, 4.08104, 3.76065]),
    (dataclasses.replace(TINY_LLAMA, scan_layers=True), [4.61856, 4.08104, 3.76065]),
], ids=["mlp", "gpt", "gpt-scan", "gpt-untied", "moe-top2", "moe-top1-scan", "wide-resnet", "llama",
        "llama-scan"])
def test_loss_decreases_over_three_steps(config, expected):
    losses = _losses(config)
    assert losses == pytest.approx(expected, rel=1e-3)
    assert losses[0] > losses[1] > losses[2]


def test_moe_dispatch_matches_dense_experts_when_nothing_overflows():
    """With room for every token, dispatch/combine is sum_k gate_k * FFN_{expert_k}(x)."""
    config = dataclasses.replace(TINY_MOE, capacity_factor=4.0)  # capacity = top_k * tokens: no drops
    layer = models._layer_init(jax.random.key(1), config, moe=True)["moe"]
    x = jax.random.normal(jax.random.key(2), (3, config.seq_len, config.hidden))
    gates, index = jax.lax.top_k(jax.nn.softmax(x @ layer["gate"], axis=-1), config.top_k)
    w1, w2 = layer["w1"][index], layer["w2"][index]  # (g, s, k, m, f), (g, s, k, f, m)
    expected = jnp.einsum("gsk,gskm->gsm", gates,
                          jnp.einsum("gskf,gskfm->gskm", jax.nn.gelu(jnp.einsum("gsm,gskmf->gskf", x, w1)), w2))
    np.testing.assert_allclose(models._moe_ffn(x, layer, config), expected, rtol=1e-4, atol=1e-5)


def test_moe_drops_tokens_past_capacity():
    config = dataclasses.replace(TINY_MOE, top_k=1, experts=2, capacity_factor=0.25)  # 2 slots per expert
    layer = models._layer_init(jax.random.key(1), config, moe=True)["moe"]
    x = jax.random.normal(jax.random.key(2), (1, config.seq_len, config.hidden))
    kept = np.abs(np.asarray(models._moe_ffn(x, layer, config))).sum(axis=-1) > 0
    assert kept.sum() == 4  # two experts x two slots; the other 12 tokens pass through the residual only


def _size(name: str) -> float:
    return float(name[:-1]) * {"M": 1e6, "B": 1e9}[name[-1]]


@pytest.mark.parametrize("family, name", [(f, n) for f in ("GPT3", "MOE", "WIDE_RESNET")
                                          for n in getattr(models, f)])
def test_presets_have_the_papers_parameter_counts(family, name):
    assert models.num_params(getattr(models, family)[name]) == pytest.approx(_size(name), rel=0.05)


def test_gpt3_1_3b_lowers_from_abstract_shapes():
    config = models.GPT3["1.3B"]
    params, opt_state, batch = models.abstract_args(config, batch_size=8)
    assert all(isinstance(leaf, jax.ShapeDtypeStruct) for leaf in jax.tree.leaves((params, opt_state, batch)))
    assert batch["tokens"].shape == (8, 1024) and params["wte"].shape == (51200, 2048)
    text = jax.jit(models.build(config).train_step).lower(params, opt_state, batch).as_text()
    # Per layer, six matmuls forward (qkv, q.k, probs.v, output projection, fc1, fc2) and
    # two backward for each (the gradient of both operands: activations and weights or
    # both activations of attention): 18. The tied output projection adds 1 + 2.
    assert config.layers == 24
    assert text.count("stablehlo.dot_general") == 18 * 24 + 3 == 435
    assert "stablehlo.while" not in text


def test_scan_layers_lowers_to_while_loops():
    config = dataclasses.replace(models.GPT3["1.3B"], scan_layers=True)
    text = jax.jit(models.build(config).train_step).lower(*models.abstract_args(config, 8)).as_text()
    assert text.count("stablehlo.while") == 2  # the forward scan and its transpose
    assert text.count("stablehlo.dot_general") == 18 + 3


# -------------------------------------------------------------- Llama 2


def test_llama2_presets_have_the_published_parameter_counts():
    # Embedding; per layer q, k, v, o, gate, up, down (no biases) and two RMSNorm weights;
    # the final RMSNorm; the untied head. 70B's k and v are 8 heads of 128 wide.
    counts = {name: models.num_params(config) for name, config in models.LLAMA2.items()}
    assert counts == {"7B": 6_738_415_616, "13B": 13_015_864_320, "70B": 68_976_648_192}


def _llama_params_from_hf(hf: dict, layers: int) -> dict:
    """transformers' Flax Llama parameters in this model's tree (both keep kernels as (in, out))."""
    def layer(p: dict) -> dict:
        attn, mlp = p["self_attn"], p["mlp"]
        return {"attn_norm": p["input_layernorm"]["weight"], "wq": attn["q_proj"]["kernel"],
                "wk": attn["k_proj"]["kernel"], "wv": attn["v_proj"]["kernel"], "wo": attn["o_proj"]["kernel"],
                "mlp_norm": p["post_attention_layernorm"]["weight"], "w_gate": mlp["gate_proj"]["kernel"],
                "w_up": mlp["up_proj"]["kernel"], "w_down": mlp["down_proj"]["kernel"]}
    model = hf["model"]
    return {"embed": model["embed_tokens"]["embedding"],
            "layers": [layer(model["layers"][str(i)]) for i in range(layers)],
            "norm": model["norm"]["weight"], "head": hf["lm_head"]["kernel"]}


def test_llama_matches_transformers_flax_llama():
    """Code nobody here wrote, with grouped-query attention (4 heads on 2 K/V heads): same logits and loss."""
    from transformers import FlaxLlamaForCausalLM
    from transformers import LlamaConfig as HFLlamaConfig

    config = models.LlamaConfig(vocab=256, hidden=64, layers=2, heads=4, kv_heads=2, ffn=128, seq_len=16)
    # max_position_embeddings above 2 * head_dim: transformers' Flax sin/cos table keeps only the
    # first max_position_embeddings columns. A wide initializer_range keeps attention far from
    # uniform, so that a wrong rotary pairing or head grouping moves the logits by O(1).
    hf = FlaxLlamaForCausalLM(HFLlamaConfig(
        vocab_size=256, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=128, max_position_embeddings=64, rms_norm_eps=1e-5, rope_theta=10000.0,
        tie_word_embeddings=False, initializer_range=0.2), seed=0)
    # The RMSNorm weights start at ones; scaled like every parameter by U(0.5, 1.5), their mapping matters too.
    leaves, tree = jax.tree.flatten(hf.params)
    keys = jax.random.split(jax.random.key(4), len(leaves))
    hf_params = tree.unflatten([a * jax.random.uniform(k, a.shape, minval=0.5, maxval=1.5)
                                for a, k in zip(leaves, keys)])
    params = _llama_params_from_hf(hf_params, config.layers)
    tokens = jax.random.randint(jax.random.key(3), (2, config.seq_len), 0, config.vocab, jnp.int32)
    targets = jnp.roll(tokens, -1, axis=1)

    expected = hf(np.asarray(tokens), params=hf_params).logits
    np.testing.assert_allclose(models._llama_logits(params, tokens, config), expected, rtol=1e-4, atol=1e-4)
    expected_loss = -np.mean(np.take_along_axis(jax.nn.log_softmax(expected), np.asarray(targets)[..., None], -1))
    loss = models.build(config).loss(params, {"tokens": tokens, "targets": targets})
    assert float(loss) == pytest.approx(float(expected_loss), rel=1e-5)


def test_llama_attention_reads_kv_heads_without_repeating_them():
    config = TINY_LLAMA  # 4 query heads in 2 groups of 2 over 2 K/V heads, head size 8
    layer = models._llama_layer_init(jax.random.key(0), config)
    x = jnp.zeros((3, config.seq_len, config.hidden))
    jaxpr = jax.make_jaxpr(models._gqa_attention, static_argnums=2)(x, layer, config, *models._rotary_tables(config))
    attention = [tuple(v.aval.shape for v in e.invars) for e in jaxpr.eqns
                 if e.primitive.name == "dot_general" and e.invars[0].aval.ndim > 3]
    kv = (3, config.seq_len, 2, 8)
    assert len(attention) == 2 and all(kv in operands for operands in attention)  # scores with k, context with v


def test_llama_bf16_params_with_f32_adam_moments():
    config = dataclasses.replace(TINY_LLAMA, dtype="bfloat16", state_dtype="float32")
    params, opt_state, batch = models.abstract_args(config, batch_size=4)
    assert {leaf.dtype for leaf in jax.tree.leaves(params)} == {jnp.dtype(jnp.bfloat16)}
    assert {leaf.dtype for leaf in jax.tree.leaves((opt_state["mu"], opt_state["nu"]))} == {jnp.dtype(jnp.float32)}

    model = models.build(config)
    params, opt_state, batch = model.init(jax.random.key(0), 4)
    step, losses = jax.jit(model.train_step), []
    for _ in range(3):
        params, opt_state, loss = step(params, opt_state, batch)
        losses.append(float(loss))
    assert loss.dtype == jnp.float32 and all(np.isfinite(losses))
    assert losses[0] > losses[1] > losses[2]
    # The step keeps the recipe: bf16 parameters, f32 moments.
    assert {leaf.dtype for leaf in jax.tree.leaves(params)} == {jnp.dtype(jnp.bfloat16)}
    assert {leaf.dtype for leaf in jax.tree.leaves(opt_state["mu"])} == {jnp.dtype(jnp.float32)}


def test_llama2_7b_lowers_from_abstract_shapes():
    config = dataclasses.replace(models.LLAMA2["7B"], seq_len=128)
    params, opt_state, batch = models.abstract_args(config, batch_size=1)
    assert batch["tokens"].shape == (1, 128) and params["embed"].shape == (32000, 4096)
    text = jax.jit(models.build(config).train_step).lower(params, opt_state, batch).as_text()
    # Per layer nine matmuls forward (q, k, v, q.k, probs.v, o, gate, up, down), two backward
    # for each: 27. The head adds 1 + 2.
    assert config.layers == 32
    assert text.count("stablehlo.dot_general") == 27 * 32 + 3 == 867
    assert "stablehlo.while" not in text


def test_llama_scan_layers_lowers_to_while_loops():
    config = dataclasses.replace(models.LLAMA2["7B"], seq_len=128, scan_layers=True)
    text = jax.jit(models.build(config).train_step).lower(*models.abstract_args(config, 1)).as_text()
    assert text.count("stablehlo.while") == 2  # the forward scan and its transpose
    assert text.count("stablehlo.dot_general") == 27 + 3
