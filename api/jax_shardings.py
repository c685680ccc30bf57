"""``auto_shard``: search a plan and hand it back as ``jax.sharding`` objects, for plain ``jax.jit``.

For users who keep their own ``jax.jit``: the compiler chooses the shardings of the
arguments and results, and ``jax.jit(f, in_shardings=r.in_shardings,
out_shardings=r.out_shardings)`` lets XLA's propagation fill in the ops between.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
from jax.sharding import NamedSharding, PartitionSpec

from .dialect.jax_interop import spec_to_partition_spec
from .dialect.mesh import DeviceMesh
from .markers import lower
from .methods import ShardParallel
from .pipeline import module_text, parse_lowered, plan_module
from .plans.sharding_plan import PlanError, ShardingPlan
from .saved_plan import SavedPlan, check_fits
from .signature import batch_argnums_strict, normalize_argnums, output_names, training_state


@dataclass(frozen=True)
class AutoShardResult:
    """A plan and the shardings it gives the function's arguments and results.

    ``in_shardings`` is a tuple with one pytree per (non-static) positional argument;
    ``out_shardings`` has the structure of the function's output.
    """

    plan: ShardingPlan
    in_shardings: tuple[Any, ...]
    out_shardings: Any
    mesh: jax.sharding.Mesh
    module_text: str  # the annotated StableHLO module


def auto_shard(fn_or_lowered: Callable | jax.stages.Lowered, *args: Any,
               mesh: DeviceMesh | jax.sharding.Mesh | Sequence[int] | None = None,
               method: ShardParallel | None = None, static_argnums: int | Sequence[int] = (),
               batch_argnums: int | Sequence[int] | None = None) -> AutoShardResult:
    """Plan ``fn(*args)`` (or an already lowered function) for a mesh; return the plan as shardings.

    Args:
      fn_or_lowered: a function traceable by ``jax.jit`` (then ``args`` are its arguments,
        arrays or ``jax.ShapeDtypeStruct``s), or a ``jax.stages.Lowered`` (then no ``args``;
        ``batch_argnums`` count its non-static positional arguments).
      mesh: a ``DeviceMesh``, a ``jax.sharding.Mesh`` or a mesh shape; the method's by default.
      method: search options (``ShardParallel()`` by default).
      static_argnums: static positional arguments of ``fn``.
      batch_argnums: positional arguments whose leaves carry the batch (the method's by default).

    Raises:
      AutoShardingError: the compiler could not plan the function.
      PlanError: ``method.plan`` was made for other shapes.
    """
    method = method if method is not None else ShardParallel()
    strict = batch_argnums_strict(batch_argnums, method.batch_argnums)
    batch_argnums = method.batch_argnums if batch_argnums is None else batch_argnums
    if isinstance(fn_or_lowered, jax.stages.Lowered):
        if args:
            raise TypeError("auto_shard of a jax.stages.Lowered takes no arguments: they were fixed when lowering")
        lowered, name = fn_or_lowered, "the lowered function"
    else:
        name = getattr(fn_or_lowered, "__qualname__", None) or repr(fn_or_lowered)
        lowered = lower(jax.jit(fn_or_lowered, static_argnums=static_argnums, keep_unused=True), *args)
    positional, keywords = jax.tree_util.tree_unflatten(lowered.in_tree, range(lowered.in_tree.num_leaves))
    if keywords:
        raise TypeError(f"auto_shard: {name} was lowered with keyword arguments {sorted(keywords)}; jax.jit's "
                        "in_shardings cover positional arguments only, so pass them positionally")
    kept = _kept_arguments(lowered)
    module_argument = {leaf: number for number, leaf in enumerate(kept)}
    leaf_names = [f"args{jax.tree_util.keystr(p)}" for p, _ in jax.tree_util.tree_flatten_with_path(positional)[0]]
    batch = normalize_argnums(batch_argnums, len(positional), "batch_argnums", name, strict)
    batch_args = tuple(module_argument[leaf] for position in batch
                       for leaf in jax.tree_util.tree_leaves(positional[position]) if leaf in module_argument)

    module = parse_lowered(lowered)
    saved = method.plan.plan if isinstance(method.plan, SavedPlan) else method.plan
    if mesh is None and saved is not None and method.mesh_shape is None:
        mesh = saved.mesh.shape
    device_mesh, devices = method.device_mesh(mesh)
    names = [leaf_names[leaf] for leaf in kept]
    if saved is not None:
        if saved.mesh.shape != device_mesh.shape:
            raise PlanError(f"the plan given as method.plan was made for mesh {list(saved.mesh.shape)}, not "
                            f"{list(device_mesh.shape)}")
        check_fits(saved, module, names, output_names(lowered.out_tree), "given as method.plan")
        plan, text = saved, ""
    else:
        state = tuple((module_argument[a], r) for a, r in training_state(lowered, batch) if a in module_argument)
        plan = plan_module(module, method, device_mesh, batch_args, name, stacklevel=3, state=state,
                           devices=devices)
        text = module_text(module)

    jax_mesh = device_mesh.to_jax_mesh(devices)

    def sharding(spec: Any) -> NamedSharding:
        partition = spec_to_partition_spec(spec, device_mesh) if spec is not None else PartitionSpec()
        return NamedSharding(jax_mesh, partition)

    flat_in = [sharding(plan.arguments[module_argument[leaf]].spec) if leaf in module_argument
               else NamedSharding(jax_mesh, PartitionSpec()) for leaf in range(len(leaf_names))]
    in_shardings = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(positional), flat_in)
    out_shardings = jax.tree_util.tree_unflatten(lowered.out_tree, [sharding(v.spec) for v in plan.results])
    return AutoShardResult(plan, tuple(in_shardings), out_shardings, jax_mesh, text)


def _kept_arguments(lowered: jax.stages.Lowered) -> list[int]:
    """Flat argument numbers that ``@main`` kept: ``jax.jit`` drops unused ones unless ``keep_unused``.

    JAX records them only in its private lowering state; without it, assume all were kept
    (true for every lowering made with ``keep_unused=True``).
    """
    count = lowered.in_tree.num_leaves
    compile_args = getattr(getattr(lowered, "_lowering", None), "compile_args", None)
    kept = compile_args.get("kept_var_idx") if isinstance(compile_args, dict) else None
    return sorted(kept) if kept is not None else list(range(count))
