"""Trip counts of ``stablehlo.while`` loops as JAX emits them (``dialect/loops.py``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax._src.lib.mlir import ir

from alpa_mlir.dialect.context import make_context, walk
from alpa_mlir.dialect.loops import trip_count


def trip_counts(fn, *args) -> list[int | None]:
    module = ir.Module.parse(jax.jit(fn).lower(*args).as_text(), context=make_context())
    return [trip_count(op) for op in walk(module.operation) if op.name == "stablehlo.while"]


X = jnp.zeros(4)
W = jnp.zeros((6, 4))


def scan(w, x, reverse=False):
    return jax.lax.scan(lambda x, w: (jnp.tanh(x * w), None), x, w, reverse=reverse)[0]


@pytest.mark.parametrize(("fn", "args", "expected"), [
    (scan, (W, X), [6]),
    (lambda w, x: scan(w, x, reverse=True), (W, X), [6]),
    (lambda x: jax.lax.fori_loop(2, 9, lambda i, x: x * 2, x), (X,), [7]),
    (lambda x: jax.lax.fori_loop(0, 10, lambda i, x: x * 2, x, unroll=2), (X,), [5]),
    (jax.grad(lambda w, x: scan(w, x).sum()), (W, X), [6, 6]),  # the forward scan and the backward one
    (lambda x: jax.lax.while_loop(lambda c: c[1].sum() < 3, lambda c: (c[0] + 1, c[1] * 2), (0, x))[1], (X,),
     [None]),  # the condition reads data, not a counter
])
def test_counted_loops_have_their_trip_count(fn, args, expected):
    assert trip_counts(fn, *args) == expected


LOOP = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {{
  %start = stablehlo.constant dense<{start}> : tensor<i32>
  %0:2 = stablehlo.while(%i = %start, %v = %x) : tensor<i32>, tensor<4xf32>
  cond {{
    %bound = stablehlo.constant dense<{bound}> : tensor<i32>
    %p = stablehlo.compare {direction}, {compared}, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }} do {{
    %step = stablehlo.constant dense<{step}> : tensor<i32>
    %n = stablehlo.add %i, %step : tensor<i32>
    %y = stablehlo.add %v, %v : tensor<4xf32>
    stablehlo.return %n, %y : tensor<i32>, tensor<4xf32>
  }}
  return %0#1 : tensor<4xf32>
}}
"""


@pytest.mark.parametrize(("start", "bound", "step", "direction", "compared", "expected"), [
    (0, 10, 3, "LT", "%i, %bound", 4),
    (0, 10, 3, "LE", "%i, %bound", 4),
    (0, 9, 3, "LE", "%i, %bound", 4),
    (0, 10, 3, "GT", "%bound, %i", 4),  # bound > i is i < bound
    (10, 0, -2, "GT", "%i, %bound", 5),
    (10, 0, -2, "GE", "%i, %bound", 6),
    (0, 12, 3, "NE", "%i, %bound", 4),
    (0, 10, 3, "NE", "%i, %bound", None),  # never equal: not a counted loop
    (5, 0, 1, "LT", "%i, %bound", 0),
    (0, 10, -1, "LT", "%i, %bound", None),  # counts away from its bound
    (0, 10, 1, "EQ", "%i, %bound", None),
])
def test_the_counter_pattern_in_every_direction(start, bound, step, direction, compared, expected):
    with make_context():
        module = ir.Module.parse(LOOP.format(start=start, bound=bound, step=step, direction=direction,
                                             compared=compared))
        (loop,) = [op for op in walk(module.operation) if op.name == "stablehlo.while"]
        assert trip_count(loop) == expected
