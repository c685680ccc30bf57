"""The scripts in examples/ run and agree with jax.jit, at tiny sizes, in this process.

Each example's ``main(argv)`` trains with ShardParallel, PipeshardParallel and plain
``jax.jit`` from one initial state and returns every method's final state and losses;
jax is already up with the eight CPU devices of conftest.py, as in a notebook.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import jax
import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load_example(name: str) -> ModuleType:
    """examples/<name>.py as a module (registered first: dataclasses, such as a flax
    Module, look their module up while the class is being made)."""
    module_name = f"examples_{name}"
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name, EXAMPLES / f"{name}.py")
        sys.modules[module_name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[module_name])
    return sys.modules[module_name]


def assert_like_jit(results: dict, steps: int, atol: float) -> None:
    """Both methods took every step, with jax.jit's losses and (within ``atol``) its parameters."""
    state, losses = results["jit"]
    assert len(losses) == steps and int(state.step) == steps
    assert losses[-1] < losses[0], losses
    for name in ("shard", "pipeshard"):
        mine, my_losses = results[name]
        assert int(mine.step) == steps
        np.testing.assert_allclose(my_losses, losses, rtol=1e-5, err_msg=name)
        assert jax.tree.structure(mine.params) == jax.tree.structure(state.params)
        for a, b in zip(jax.tree.leaves(mine.params), jax.tree.leaves(state.params)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=atol, rtol=0, err_msg=name)


def test_flax_mlp(capsys: pytest.CaptureFixture[str]) -> None:
    example = load_example("flax_mlp")
    results = example.main(["--steps", "3", "--batch", "16", "--features", "8", "--hidden", "16", "--depth", "2",
                            "--outputs", "4", "--micro-batches", "2", "--learning-rate", "1e-2"])
    assert_like_jit(results, steps=3, atol=1e-5)
    out = capsys.readouterr().out
    assert "pipeshard step 2: loss" in out
    assert "stage 1: layers [1, 2), devices (4, 5, 6, 7)" in out  # one marked segment per stage


def test_hf_gpt2(capsys: pytest.CaptureFixture[str]) -> None:
    example = load_example("hf_gpt2")
    results = example.main(["--steps", "2", "--batch", "8", "--length", "8", "--vocab", "32", "--hidden", "16",
                            "--heads", "2", "--layers", "1", "--micro-batches", "2", "--learning-rate", "1e-2"])
    assert_like_jit(results, steps=2, atol=1e-3)
    assert "stage 1: layers [1, 2)" in capsys.readouterr().out
