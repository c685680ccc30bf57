"""Ordered effects in a lowered step: JAX's effect tokens, started inside the step instead.

``io_callback(..., ordered=True)`` is an ordered effect: ``jax.jit`` threads a
``!stablehlo.token`` through ``@main`` (a leading argument and result marked
``jax.token``, one per effect) from one call to the next, and chains the step's
callbacks on it. The pytrees JAX describes the step with (arguments, results, donation)
do not count the tokens, and alpa's meshes hold tensors only, so :func:`start_tokens_in_step`
starts each token in the step (``stablehlo.after_all``) and drops it from the results::

    func.func @main(%tok: !stablehlo.token {jax.token = true}, %x: tensor<8xf32>)
        -> (!stablehlo.token {jax.token = true}, tensor<8xf32>)

becomes::

    func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
      %tok = stablehlo.after_all : !stablehlo.token

The callbacks of a step keep their order (the chain is unchanged), and steps keep theirs:
each runs its callbacks on one device, which runs the steps one after the other.
"""

from __future__ import annotations

from jax._src.lib.mlir import ir

from .dialect.annotations import find_main, get_value_attrs, set_value_attrs


def _is_token(value_type: ir.Type) -> bool:
    return str(value_type) == "!stablehlo.token"


def start_tokens_in_step(module: ir.Module) -> int:
    """Start ``@main``'s effect tokens in its body and drop them from its results (in place);
    how many tokens it took."""
    main = find_main(module.operation)
    block = main.regions[0].blocks[0]
    function_type = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    inputs, results = list(function_type.inputs), list(function_type.results)
    taken = [i for i, t in enumerate(inputs) if _is_token(t)]
    given = [i for i, t in enumerate(results) if _is_token(t)]
    if not taken and not given:
        return 0
    arg_attrs, res_attrs = get_value_attrs(main, "arg_attrs"), get_value_attrs(main, "res_attrs")
    with module.context, main.location:
        with ir.InsertionPoint.at_block_begin(block):
            for i in taken:
                fresh = ir.Operation.create("stablehlo.after_all", results=[inputs[i]], operands=[])
                block.arguments[i].replace_all_uses_with(fresh.result)
        for i in reversed(taken):
            block.erase_argument(i)
        ret = block.operations[len(block.operations) - 1].operation
        kept = [v for i, v in enumerate(ret.operands) if i not in given]
        with ir.InsertionPoint(ret), ret.location:
            ir.Operation.create(ret.name, operands=kept)
        ret.erase()
        main.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
            [t for i, t in enumerate(inputs) if i not in taken], [t for i, t in enumerate(results) if i not in given]))
        set_value_attrs(main, "arg_attrs", [a for i, a in enumerate(arg_attrs) if i not in taken])
        set_value_attrs(main, "res_attrs", [a for i, a in enumerate(res_attrs) if i not in given])
    return len(taken)
