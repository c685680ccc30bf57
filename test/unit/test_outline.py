"""passes/inter_op/outline.py: groups of @main's ops become functions; the module computes the same."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src.lib.mlir import ir

from alpa_mlir import models
from alpa_mlir.dialect.context import make_context
from alpa_mlir.dialect.mesh import DeviceMesh
from alpa_mlir.lowering.spmd import compile_module
from alpa_mlir.passes import run_pipeline
from alpa_mlir.passes.annotations import funcs
from alpa_mlir.passes.inter_op.outline import OutlineError, outline
from alpa_mlir.passes.inter_op.training_step import step_ops
from alpa_mlir.runtime.mesh_executable import MeshExecutable


def lowered(fn, *args) -> ir.Module:
    module = ir.Module.parse(jax.jit(fn).lower(*args).as_text(), context=make_context())
    run_pipeline(module, "builtin.module(alpa-import-pipeline)")
    return module


def main_of(module: ir.Module) -> ir.Operation:
    return next(f for f in funcs(module.operation) if ir.StringAttr(f.attributes["sym_name"]).value == "main")


def run(module: ir.Module, args: list) -> list[np.ndarray]:
    executable = MeshExecutable(compile_module(module, DeviceMesh((1,))))
    return [np.asarray(x) for x in executable(*args)]


def mlp_step():
    model = models.mlp(models.MLPConfig(sizes=(16, 32, 8)))
    params, batch = model.init(jax.random.key(0), 8)
    return model.train_step, (params, batch)


@pytest.mark.parametrize("chunks", [1, 3, 7])
def test_contiguous_chunks_compute_the_same(chunks: int) -> None:
    step, args = mlp_step()
    flat = jax.tree.leaves(args)
    module = lowered(step, *args)
    expected = run(module, flat)
    main = main_of(module)
    count = len(step_ops(main))
    groups = [i * chunks // count for i in range(count)]
    created = outline(main, groups, [f"stage{g}" for g in range(chunks)])
    assert [ir.StringAttr(f.attributes["sym_name"]).value for f in created] == [f"stage{g}" for g in range(chunks)]
    module.operation.verify()
    ops = [op.name for op in step_ops(main)]
    assert ops == ["func.call"] * chunks  # @main keeps only the calls
    for got, want in zip(run(module, flat), expected):
        np.testing.assert_array_equal(got, want)


def test_groups_in_any_order_run_in_dependency_order() -> None:
    # Group numbers opposite to program order: the callee of group 1 still runs first.
    step, args = mlp_step()
    flat = jax.tree.leaves(args)
    module = lowered(step, *args)
    expected = run(module, flat)
    main = main_of(module)
    count = len(step_ops(main))
    created = outline(main, [0 if i >= count // 2 else 1 for i in range(count)], ["late", "early"],
                      [{"alpa.stage": ir.IntegerAttr.get(ir.IntegerType.get_signless(64, main.context), g)}
                       for g in range(2)])
    assert [ir.StringAttr(f.attributes["sym_name"]).value for f in created] == ["early", "late"]
    assert ir.IntegerAttr(created[0].attributes["alpa.stage"]).value == 1
    for got, want in zip(run(module, flat), expected):
        np.testing.assert_array_equal(got, want)


def test_a_loop_reading_a_value_of_another_group() -> None:
    # The while body reads w, which group 0 computes: w becomes an argument of group 1.
    def f(w, x):
        w = w * 2.0
        return jax.lax.fori_loop(0, 3, lambda i, h: jnp.tanh(h @ w), x)

    args = [jnp.ones((4, 4)) * 0.1, jnp.ones((2, 4))]
    module = lowered(f, *args)
    expected = run(module, args)
    main = main_of(module)
    ops = step_ops(main)
    loop = next(i for i, op in enumerate(ops) if op.name == "stablehlo.while")
    created = outline(main, [0 if i < loop else 1 for i in range(len(ops))], ["before", "loop"])
    loop_type = ir.FunctionType(ir.TypeAttr(created[1].attributes["function_type"]).value)
    assert "tensor<4x4xf32>" in [str(t) for t in loop_type.inputs]
    for got, want in zip(run(module, args), expected):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_a_cycle_between_groups_is_an_error() -> None:
    # a -> b -> c with a and c in one group and b in the other: no call order exists.
    def f(x):
        return jnp.sin(jnp.cos(jnp.exp(x)))

    module = lowered(f, jnp.ones((4,)))
    main = main_of(module)
    names = [op.name for op in step_ops(main)]
    assert names == ["stablehlo.exponential", "stablehlo.cosine", "stablehlo.sine"]
    with pytest.raises(OutlineError, match="cycle: a, b cannot be called in any order"):
        outline(main, [0, 1, 0], ["a", "b"])


def test_group_numbers_are_checked() -> None:
    module = lowered(lambda x: jnp.exp(x), jnp.ones((4,)))
    main = main_of(module)
    with pytest.raises(OutlineError, match="2 group numbers for 1 ops"):
        outline(main, [0, 0], ["a"])
    with pytest.raises(OutlineError, match=r"group numbers must lie in 0..0"):
        outline(main, [1], ["a"])
