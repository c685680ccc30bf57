"""``auto_shard``: search a plan and hand it back as ``jax.sharding`` objects, for plain ``jax.jit``.

For users who keep their own ``jax.jit``: the compiler chooses the shardings of the
arguments and results. ``jax.jit(f, in_shardings=r.in_shardings,
out_shardings=r.out_shardings)`` lets XLA's propagation fill in the ops between, its
own way (on HF Flax GPT-2 on (2, 4), 4.4x the plan's collective bytes);
``jax.jit(r.constrained(f), ...)`` runs the plan's ops as planned: the planned module,
exported (:mod:`~alpa_mlir.exported`) and inlined where the function is called.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from .dialect.jax_interop import spec_to_partition_spec
from .dialect.mesh import DeviceMesh
from .exported import export_planned
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
    module_text: str  # the annotated StableHLO module ("" for a plan given as method.plan)
    static_argnums: tuple[int, ...] = ()
    source_digest: bytes = field(default=b"", repr=False)  # of the unplanned lowering (see _source_digest)

    def constrained(self, fn: Callable) -> Callable:
        """``fn`` running this plan inside the ops, for ``jax.jit(r.constrained(fn),
        in_shardings=r.in_shardings, out_shardings=r.out_shardings)`` (also inside a larger
        jitted function). Where traced, it lowers ``fn`` for the arguments' shapes, checks
        that this is the program planned (the same ops on the same types: ``fn`` may be
        another Python object, say a bound method fetched again), and calls the planned
        module's ``jax.export`` artifact, which the caller's program inlines with every
        op's sharding pinned.

        Raises (when called):
          PlanError: ``fn`` with these arguments lowers to another program than the one
            planned, or the plan was given as ``method.plan`` (no planned module).
        """
        if not self.module_text:
            raise PlanError("this plan was given as method.plan, so auto_shard made no planned module to run; "
                            "call auto_shard without method.plan to get one")
        name = getattr(fn, "__qualname__", None) or repr(fn)
        static = self.static_argnums
        cache: dict[Any, jax.export.Exported] = {}

        def planned(*args: Any) -> Any:
            dynamic = tuple(a for i, a in enumerate(args) if i not in static)
            leaves, tree = jax.tree_util.tree_flatten(dynamic)
            abstract = [jax.ShapeDtypeStruct(np.shape(x), jax.dtypes.result_type(x)) for x in leaves]
            key = (tree, tuple(args[i] for i in static if i < len(args)),
                   tuple((a.shape, a.dtype) for a in abstract))
            exported = cache.get(key)
            if exported is None:
                shaped = list(jax.tree_util.tree_unflatten(tree, abstract))
                call_args = tuple(args[i] if i in static else shaped.pop(0) for i in range(len(args)))
                if _source_digest(lower(jax.jit(fn, static_argnums=static, keep_unused=True),
                                        *call_args)) != self.source_digest:
                    raise PlanError(f"{name} called with these arguments is not the program this plan was made "
                                    "for (its lowering differs: other shapes, or other operations); plan it with "
                                    "auto_shard")
                jitted = jax.jit(fn, static_argnums=static, in_shardings=self.in_shardings,
                                 out_shardings=self.out_shardings, keep_unused=True)
                exported = cache[key] = export_planned(jitted, call_args, self.module_text, self.plan.mesh, name)
            return exported.call(*dynamic)

        planned.__name__ = planned.__qualname__ = f"planned_{getattr(fn, '__name__', 'function')}"
        return planned


def _source_digest(lowered: jax.stages.Lowered) -> bytes:
    """A digest of the program ``lowered`` is, whatever the function's name (the module's)."""
    text = re.sub(r"^module @\S+", "module", lowered.as_text(debug_info=False), count=1, flags=re.MULTILINE)
    return hashlib.sha256(text.encode()).digest()


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

    flat_in = [named_sharding(plan.arguments[module_argument[leaf]].spec, device_mesh, jax_mesh)
               if leaf in module_argument else NamedSharding(jax_mesh, PartitionSpec())
               for leaf in range(len(leaf_names))]
    in_shardings = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(positional), flat_in)
    out_shardings = jax.tree_util.tree_unflatten(
        lowered.out_tree, [named_sharding(v.spec, device_mesh, jax_mesh) for v in plan.results])
    static = () if isinstance(fn_or_lowered, jax.stages.Lowered) else \
        normalize_argnums(static_argnums, len(args), "static_argnums", name)
    return AutoShardResult(plan, tuple(in_shardings), out_shardings, jax_mesh, text, static, _source_digest(lowered))


def named_sharding(spec: Any, mesh: DeviceMesh, jax_mesh: jax.sharding.Mesh) -> NamedSharding:
    """A plan's sharding of a value (a ``ShardingSpec``; ``None``: replicated) over ``jax_mesh``."""
    return NamedSharding(jax_mesh, spec_to_partition_spec(spec, mesh) if spec is not None else PartitionSpec())


def _kept_arguments(lowered: jax.stages.Lowered) -> list[int]:
    """Flat argument numbers that ``@main`` kept: ``jax.jit`` drops unused ones unless ``keep_unused``.

    JAX records them only in its private lowering state; without it, assume all were kept
    (true for every lowering made with ``keep_unused=True``).
    """
    count = lowered.in_tree.num_leaves
    compile_args = getattr(getattr(lowered, "_lowering", None), "compile_args", None)
    kept = compile_args.get("kept_var_idx") if isinstance(compile_args, dict) else None
    return sorted(kept) if kept is not None else list(range(count))
