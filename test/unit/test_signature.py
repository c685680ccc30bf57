"""training_state: which arguments of a step come back as results (the training state)."""

from __future__ import annotations

import inspect

import jax
import jax.numpy as jnp
import pytest

from alpa_mlir.signature import call_signature, normalize_argnums, positional_parameters, training_state

W = jax.ShapeDtypeStruct((4, 3), jnp.float32)
B = jax.ShapeDtypeStruct((3,), jnp.float32)
X = jax.ShapeDtypeStruct((8, 4), jnp.float32)
STEP = jax.ShapeDtypeStruct((), jnp.int32)


def lower(fn, *args, static_argnums=()):
    return jax.jit(fn, static_argnums=static_argnums).lower(*args)


def test_params_and_optimizer_state_at_their_positions():
    def step(params, opt_state, batch):
        return params, opt_state, jnp.sum(batch)

    # Flat arguments: params (b, w), opt_state (count, mu b, mu w), batch; results likewise.
    pairs = training_state(lower(step, {"w": W, "b": B}, {"count": STEP, "mu": {"w": W, "b": B}}, X), skip=(2,))
    assert pairs == ((0, 0), (1, 1), (2, 2), (3, 3), (4, 4))


def test_state_anywhere_in_the_output_tuple():
    def step(params, batch):
        return jnp.sum(batch), params

    assert training_state(lower(step, {"w": W, "b": B}, X), skip=(1,)) == ((0, 1), (1, 2))


def test_the_whole_output_as_state():
    def step(params, batch):
        return jax.tree.map(lambda p: p + jnp.sum(batch), params)

    assert training_state(lower(step, (W, B), X), skip=(1,)) == ((0, 0), (1, 1))


@pytest.mark.parametrize("changed", ["shape", "dtype", "structure"])
def test_no_state_when_the_result_differs(changed):
    def step(params, batch):
        w = params["w"]
        if changed == "shape":
            w = w[:2]
        elif changed == "dtype":
            w = w.astype(jnp.bfloat16)
        new = {"w": w, "b": params["b"]} if changed != "structure" else [w, params["b"]]
        return new, jnp.sum(batch)

    assert training_state(lower(step, {"w": W, "b": B}, X), skip=(1,)) == ()


def test_batch_and_static_arguments_are_skipped():
    def step(scale, params, batch):
        return params, batch * scale

    # Static scale is not among the lowered arguments: params is position 0, the batch 1.
    pairs = training_state(lower(step, 2.0, W, X, static_argnums=0), skip=(1,))
    assert pairs == ((0, 0),)
    # A batch that comes back (an identity-like step) is not state when skipped.
    assert training_state(lower(lambda b: b * 2, X), skip=(0,)) == ()


def test_a_typed_prng_key_is_refused_with_what_to_pass_instead():
    with pytest.raises(TypeError, match=r"args\[1\] of step is a typed PRNG key .*jax.random.key_data"):
        call_signature((jnp.ones(3), jax.random.key(0)), {}, (), "step")
    # Its raw data is an ordinary uint32 array.
    assert call_signature((jax.random.key_data(jax.random.key(0)),), {}, (), "step").leaves


def test_argnums_past_the_arguments_are_errors_unless_a_default():
    assert normalize_argnums((1, -1), 3, "batch_argnums") == (1, 2)
    with pytest.raises(ValueError, match=r"batch_argnums=\(5,\) names positional argument 5, but step was called "
                                         r"with 2 positional arguments"):
        normalize_argnums((5,), 2, "batch_argnums", "step")
    with pytest.raises(ValueError, match="donate_argnums=-3 names positional argument -3, but .* with 1 positional "
                                         "argument$"):
        normalize_argnums(-3, 1, "donate_argnums")
    assert normalize_argnums((1,), 1, "batch_argnums", strict=False) == ()  # the methods' default, one argument
    # A parameter the call leaves to its default (f(a, b, mode="x") called as f(a, b)), as under jax.jit.
    assert normalize_argnums((2,), 2, "static_argnums", declared=3) == ()
    with pytest.raises(ValueError, match="names positional argument 3"):
        normalize_argnums((3,), 2, "static_argnums", declared=3)
    assert positional_parameters(inspect.signature(lambda a, b=1, *, c=2: 0)) == 2
    assert positional_parameters(inspect.signature(lambda a, *rest: 0)) is None
