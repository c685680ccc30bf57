"""passes/inter_op/outline.py: groups of @main's ops become functions; the module computes the same."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src.lib.mlir import ir

from alpa_mlir import models
from alpa_mlir.dialect.annotations import funcs
from alpa_mlir.dialect.context import make_context
from alpa_mlir.dialect.mesh import DeviceMesh
from alpa_mlir.lowering.spmd import compile_module
from alpa_mlir.passes import run_pipeline
from alpa_mlir.passes.inter_op.outline import OutlineError, extract, outline
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


def mlp_case() -> tuple[ir.Module, list, list[np.ndarray], ir.Operation, int]:
    """An MLP step's module, its flat arguments, its outputs, its @main and @main's op count."""
    step, args = mlp_step()
    flat = jax.tree.leaves(args)
    module = lowered(step, *args)
    main = main_of(module)
    return module, flat, run(module, flat), main, len(step_ops(main))


@pytest.mark.parametrize("chunks", [1, 3, 7])
def test_contiguous_chunks_compute_the_same(chunks: int) -> None:
    module, flat, expected, main, count = mlp_case()
    groups = [i * chunks // count for i in range(count)]
    created = outline(main, groups, [f"stage{g}" for g in range(chunks)])
    assert [ir.StringAttr(o.func.attributes["sym_name"]).value for o in created] == [f"stage{g}" for g in range(chunks)]
    module.operation.verify()
    ops = [op.name for op in step_ops(main)]
    assert ops == ["func.call"] * chunks  # @main keeps only the calls
    for got, want in zip(run(module, flat), expected):
        np.testing.assert_array_equal(got, want)


def test_groups_in_any_order_run_in_dependency_order() -> None:
    # Group numbers opposite to program order: the callee of group 1 still runs first.
    module, flat, expected, main, count = mlp_case()
    created = outline(main, [0 if i >= count // 2 else 1 for i in range(count)], ["late", "early"],
                      [{"alpa.stage": ir.IntegerAttr.get(ir.IntegerType.get_signless(64, main.context), g)}
                       for g in range(2)])
    assert [ir.StringAttr(o.func.attributes["sym_name"]).value for o in created] == ["early", "late"]
    assert [o.group for o in created] == [1, 0]
    assert ir.IntegerAttr(created[0].func.attributes["alpa.stage"]).value == 1
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
    loop_type = ir.FunctionType(ir.TypeAttr(created[1].func.attributes["function_type"]).value)
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


def test_extracted_ops_compute_what_they_computed_in_place() -> None:
    # The second half of an MLP step as a module of its own: fed the values the first
    # half computes, it returns what @main returns from it.
    module, flat, outputs, main, count = mlp_case()
    first = extract(main, range(count // 2))
    second = extract(main, range(count // 2, count))
    assert len(step_ops(main)) == count  # the original is unchanged
    assert [str(v.type) for v in second.inputs] == [str(v.type) for v in second.module.body.operations[0].regions[0]
                                                    .blocks[0].arguments]
    arguments = list(main.regions[0].blocks[0].arguments)
    assert all(v in arguments for v in first.inputs)  # the first half reads only @main's arguments
    produced = dict(zip(first.outputs, run(first.module, [flat[arguments.index(v)] for v in first.inputs])))
    fed = [flat[arguments.index(v)] if v in arguments else produced[v] for v in second.inputs]
    expected = dict(zip(list(main.regions[0].blocks[0].operations)[-1].operands, outputs))
    assert sum(value in expected for value in second.outputs) >= 2  # new parameters and the loss
    for value, got in zip(second.outputs, run(second.module, fed)):
        if value in expected:
            np.testing.assert_array_equal(got, expected[value])
