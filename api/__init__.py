"""alpa-mlir: automatic inter- and intra-operator parallelism for JAX, as MLIR passes.

The user API lives here; the compiler is in the subpackages ``dialect`` (meshes,
sharding specs, ``alpa`` ops), ``passes`` (the pass registry and passes),
``lowering``, ``runtime`` and ``tools`` (``alpa-opt``).

Parallelize a function with ``@parallelize(method=ShardParallel(mesh_shape=(2, 4)))``
(or the presets ``DataParallel``, ``Zero2Parallel``, ``Zero3Parallel``), or pipeline it
over submeshes with ``PipeshardParallel(num_micro_batches=B, ...)``; keep plain
``jax.jit`` with the shardings ``auto_shard`` finds; save a plan with
``save_plan`` and reuse it with ``parallelize(..., load_plan=path)``.
"""

import importlib
import typing

from .dialect import DeviceMesh, PhysicalCluster, ShardingSpec

# The API pulls in the whole compiler (CVXPY alone takes over a second to import), so it
# loads on first use: ``import alpa_mlir.dialect`` and ``alpa-opt`` stay fast (PEP 562).
_LAZY = {
    "AutoShardResult": ".jax_shardings",
    "auto_shard": ".jax_shardings",
    "grad": ".markers",
    "mark_pipeline_boundary": ".markers",
    "value_and_grad": ".markers",
    "DataParallel": ".methods",
    "ShardParallel": ".methods",
    "Zero2Parallel": ".methods",
    "Zero3Parallel": ".methods",
    "ParallelizedFunction": ".parallel_function",
    "parallelize": ".parallel_function",
    "AutoLayerOption": ".pipeshard",
    "AutoStageOption": ".pipeshard",
    "ManualLayerOption": ".pipeshard",
    "ManualStageOption": ".pipeshard",
    "PipeshardParallel": ".pipeshard",
    "PipeshardStepError": ".runtime.pipeshard",
    "to_host": ".host_values",
    "UniformStageOption": ".pipeshard",
    "AutoShardingError": ".pipeline",
    "AutoShardingWarning": ".pipeline",
    "SavedPlan": ".saved_plan",
    "SavedPipeline": ".saved_plan",
    "load_plan": ".saved_plan",
    "PlanError": ".plans.sharding_plan",
    "ShardingPlan": ".plans.sharding_plan",
    "PipelinePlan": ".plans.pipeline_plan",
    "PipelinePlanError": ".plans.pipeline_plan",
}

if typing.TYPE_CHECKING:
    from .host_values import to_host
    from .jax_shardings import AutoShardResult, auto_shard
    from .markers import grad, mark_pipeline_boundary, value_and_grad
    from .methods import DataParallel, ShardParallel, Zero2Parallel, Zero3Parallel
    from .parallel_function import ParallelizedFunction, parallelize
    from .pipeline import AutoShardingError, AutoShardingWarning
    from .pipeshard import (
        AutoLayerOption,
        AutoStageOption,
        ManualLayerOption,
        ManualStageOption,
        PipeshardParallel,
        UniformStageOption,
    )
    from .plans.pipeline_plan import PipelinePlan, PipelinePlanError
    from .plans.sharding_plan import PlanError, ShardingPlan
    from .runtime.pipeshard import PipeshardStepError
    from .saved_plan import SavedPipeline, SavedPlan, load_plan


def __getattr__(name: str) -> typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'alpa_mlir' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "AutoLayerOption",
    "AutoShardResult",
    "AutoShardingError",
    "AutoShardingWarning",
    "AutoStageOption",
    "DataParallel",
    "DeviceMesh",
    "ManualLayerOption",
    "ManualStageOption",
    "ParallelizedFunction",
    "PhysicalCluster",
    "PipeshardParallel",
    "PipeshardStepError",
    "PipelinePlan",
    "PipelinePlanError",
    "PlanError",
    "SavedPipeline",
    "SavedPlan",
    "ShardParallel",
    "ShardingPlan",
    "ShardingSpec",
    "UniformStageOption",
    "Zero2Parallel",
    "Zero3Parallel",
    "auto_shard",
    "grad",
    "load_plan",
    "mark_pipeline_boundary",
    "parallelize",
    "to_host",
    "value_and_grad",
]
__version__ = "0.1.0"
