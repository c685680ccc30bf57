"""Parallelization methods: what ``parallelize`` asks the compiler for (Alpa's user API).

A method is a frozen dataclass whose fields are the options of ``alpa-auto-sharding``
(snake_case), plus where to run: the logical mesh shape and the devices. The presets
fix the options Alpa's presets fix: ``DataParallel`` splits the batch over every
device and replicates the rest, ``Zero2Parallel`` also shards the weight update with
reduce-scatter, ``Zero3Parallel`` also shards the parameters (Sec. 8.1's baselines).

Options are checked when the method is built, by the pass itself, so a method that
constructs is one the pass accepts; messages name the option as written here.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import typing
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal

import jax

from .dialect.mesh import DeviceMesh, MeshError
from .dialect.pass_registry import option_fields
from .passes.inter_op.layer_construction import LayerConstructionPass
from .passes.intra_op.auto_sharding import AutoShardingPass
from .passes.intra_op.ilp import HIGHS_MIP_GAP
from .pipeshard_options import AutoLayerOption, LayerOption, ManualLayerOption
from .plans.sharding_plan import ShardingPlan
from .saved_plan import SavedPlan

# Pass options the method sets itself (from the call) rather than the user.
_CALL_OPTIONS = ("mesh_shape", "batch_args", "state", "report")
# Pass options the method sets from others: allow_mixed_mesh_shape=None is the flattened mesh alone.
_DERIVED_OPTIONS = ("allow_mixed_mesh_shape", "allow_flattened_mesh")
# Option names in the pass's messages (kebab-case) that the method spells differently.
_RENAMED = {"batch-args": "batch_argnums"}
# The share of each device's memory a plan leaves free by default (memory_budget=None):
# what XLA's runtime takes beside the buffers its buffer assignment counts (cuBLAS and
# cuDNN workspaces, collective buffers, executables) and the allocator's fragmentation.
MEMORY_RESERVE = 0.10


def device_memory_budget(devices: Sequence[Any]) -> float:
    """The default ``memory_budget``: the least memory any of ``devices`` reports
    (``memory_stats()["bytes_limit"]``, GPU and TPU) less :data:`MEMORY_RESERVE`; 0 (no
    budget) where a device reports none, as XLA:CPU's do."""
    limits = []
    for device in devices:
        stats = device.memory_stats()
        if not stats or not stats.get("bytes_limit"):
            return 0.0
        limits.append(float(stats["bytes_limit"]))
    return min(limits) * (1 - MEMORY_RESERVE) if limits else 0.0


@dataclass(frozen=True)
class ShardParallel:
    """Intra-operator parallelism planned by the ILP of Sec. 4 on one device mesh.

    Args:
      mesh_shape: logical mesh shape, e.g. ``(2, 4)``; ``(1, n)`` over the ``n`` devices
        when omitted.
      devices: the JAX devices to run on, row-major over the mesh (``jax.devices()``).
      batch_argnums: positional arguments whose leaves have the batch as leading dimension.
      steady_state: arguments that come back as results (same pytree position, shapes
        and dtypes: the training state) keep one sharding in and out, so step after step
        runs without re-laying out the state (Alpa's ``donate_argnums="auto"`` finds them
        the same way). ``False`` lets the plan return them in any sharding.
      memory_budget: bytes per device the plan may hold (``ShardingPlan.peak_memory``:
        what XLA's ``memory_analysis`` adds up). ``None`` (the default): each device's
        memory (``memory_stats()["bytes_limit"]``) less :data:`MEMORY_RESERVE`, where the
        backend reports it (GPU, TPU), no budget where it does not (CPU); ``0``: none.
        Under a budget the planned step is compiled at once and planned again where XLA
        allocates more than the budget (``parallel_function.MAX_MEMORY_REPLANS``).
      plan: a saved plan to reuse instead of searching: a :class:`SavedPlan`, a path to
        one, or a bare :class:`ShardingPlan` (which fixes the shardings of arguments and
        results; the ops in between are planned again).
      resharding_costs: ``"xla"`` (the default here) prices every resharding the plan
        picks as XLA's SPMD partitioner emits it, asked of XLA on the devices the plan
        runs on; ``"model"`` uses Table 2's collectives alone (the pass's default).
      share_reshardings: ``True`` (the default here; off in the pass) prices a
        resharding that several matmuls need once, as XLA makes it, rather than per
        user as Eq. 1 does: plans closer to what XLA emits, at 2.5x the ILP time on a
        24-layer GPT (``alpa-auto-sharding``'s option of that name).
      tie_repeated_layers: ``True`` (the default here; off in the pass) solves identical
        layers once: ops whose neighbourhoods in the cost graph look alike share one choice
        (``alpa-auto-sharding``'s option of that name). The ILP of a 24-layer GPT-3 1.3B
        step shrinks to about that of 3 layers; the plan is then improved op by op.
      allow_mixed_mesh_shape: ``True``: a tensor dimension may be split over any several
        mesh axes; ``False``: over one axis at most (XLA's and Alpa's meaning of the
        option); ``None`` (the default): over one axis or over all of them together
        (``S^{01}``: plain data parallelism on a 2-D mesh, which ``False`` rules out;
        ``True`` makes the ILP of a 3-D mesh several times larger).
      force_zero_stage_3: Alpa's name for :class:`Zero3Parallel`'s settings
        (force_data_parallel, zero_stage=3, prefer_reduce_scatter).
      partial_sums: what a bf16 or f16 dot split over its contraction all-reduces:
        ``"float32"`` partials, so that the step computes what ``jax.jit`` computes (its
        unsplit dot accumulates in f32), or ``"result"``: partials of the dot's own type,
        half the bytes on a GPU, rounded before they are summed, as XLA does for a sharded
        ``jax.jit`` and Megatron-LM's tensor parallelism does (``alpa-auto-sharding``'s
        option). XLA:CPU runs bf16 collectives in f32 either way.
      num_micro_batches: gradient accumulation: the step is planned for one micro-batch
        (the batch arguments' leading dimension divided by it) and runs the gradient part
        once per micro-batch, reducing the gradients over the devices once per step
        (``alpa-accumulate-gradients``); the micro-batches' gradients and outputs are
        averaged, or added up where nothing in the step depends on the batch size (a
        loss summed over examples; :mod:`alpa_mlir.accumulation`). The step may take its
        gradients with ``jax.grad`` (``alpa-mark-apply-gradients`` finds the update) or
        with ``alpa_mlir.grad``, whose markers say it.
      rematerialize: ``"auto"`` (the default here; ``"none"`` in the pass): where no plan
        fits the memory budget, the backward pass computes layers' activations again
        instead of keeping them, the layers whose recompute gives the cheapest plan that
        fits (``alpa-auto-sharding``'s option); ``"all"``: every layer; ``"none"``: never.
        The layers are ``layer_option``'s, or the user's ``mark_pipeline_boundary``
        segments, or sqrt(n) layers for a forward pass of n matmuls (``alpa-layer-construction``).
      layer_option: how the forward pass is cut into layers (``AutoLayerOption``,
        ``ManualLayerOption``, as for ``PipeshardParallel``); ``remat_layer=True`` in it
        recomputes every layer (Alpa's option), as ``rematerialize="all"`` does.
      The other fields are the options of ``alpa-auto-sharding``, documented there.
    """

    mesh_shape: tuple[int, ...] | None = None
    devices: tuple[Any, ...] | None = None
    batch_argnums: tuple[int, ...] = (1,)
    steady_state: bool = True
    mesh_axes: tuple[str, ...] = ()
    mesh_alpha: tuple[float, ...] = ()
    mesh_beta: tuple[float, ...] = ()
    memory_budget: float | None = None
    prefer_reduce_scatter: bool = False
    zero_stage: int = 0
    force_data_parallel: bool = False
    force_batch_dim_to_mesh_dim: int = -1
    allow_recompute_heavy_op: bool = False
    allow_mixed_mesh_shape: bool | None = None
    allow_all_gather: bool = True
    allow_all_to_all: bool = True
    allow_replicated_parameters: bool = True
    share_reshardings: bool = True
    tie_repeated_layers: bool = True
    force_zero_stage_3: bool = False
    keep_user_shardings: Literal["all", "io", "none"] = "all"
    resharding_costs: Literal["model", "xla"] = "xla"
    solver: str = "HIGHS"
    solver_time_limit: float = 0.0
    mip_gap: float = HIGHS_MIP_GAP
    partial_sums: Literal["float32", "result"] = "float32"
    num_micro_batches: int = 1
    rematerialize: Literal["none", "auto", "all"] = "auto"
    layer_option: LayerOption | None = None
    plan: SavedPlan | ShardingPlan | None = field(default=None, hash=False)

    def __new__(cls, *args: Any, **kwargs: Any) -> ShardParallel:
        # An unknown option is a user error worth a suggestion, not a bare TypeError.
        known = [f.name for f in fields(cls)]
        for name in kwargs:
            if name not in known:
                close = difflib.get_close_matches(name, known, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise ValueError(f"{cls.__name__} has no option '{name}'{hint}; its options are: {', '.join(known)}")
        return super().__new__(cls)

    def __post_init__(self) -> None:
        hints = typing.get_type_hints(AutoShardingPass)
        for option in option_fields(AutoShardingPass):
            if option.name == "memory_budget" and self.memory_budget is None:
                continue  # the devices' memory, when the call knows the devices
            if option.name not in _CALL_OPTIONS + _DERIVED_OPTIONS:
                self._set(option.name, _checked(self, option.name, getattr(self, option.name), hints[option.name]))
        if not (self.allow_mixed_mesh_shape is None or isinstance(self.allow_mixed_mesh_shape, bool)):
            raise ValueError(f"{type(self).__name__} option 'allow_mixed_mesh_shape' must be True, False or None; "
                             f"got {self.allow_mixed_mesh_shape!r}")
        if self.mesh_shape is not None:
            self._set("mesh_shape", _checked(self, "mesh_shape", self.mesh_shape, tuple[int, ...]))
        self._set("batch_argnums", _checked(self, "batch_argnums", self.batch_argnums, tuple[int, ...]))
        self._set("steady_state", _checked(self, "steady_state", self.steady_state, bool))
        self._set("num_micro_batches", _checked(self, "num_micro_batches", self.num_micro_batches, int))
        if self.num_micro_batches < 1:
            raise ValueError(f"{type(self).__name__} option 'num_micro_batches' must be a positive integer; got "
                             f"{self.num_micro_batches!r}")
        self._expand_zero_stage_3()
        self._check_objects()
        # The pass validates the rest; the batch is known only at the call, so stand in for it.
        self.auto_sharding_pass(self.mesh_shape or (), batch_args=(0,))

    def _expand_zero_stage_3(self) -> None:
        """``force_zero_stage_3`` as the options it stands for."""
        if _checked(self, "force_zero_stage_3", self.force_zero_stage_3, bool):
            if self.zero_stage not in (0, 3):
                raise ValueError(f"{type(self).__name__}: option 'force_zero_stage_3' contradicts "
                                 f"zero_stage={self.zero_stage}")
            for name, value in (("force_data_parallel", True), ("zero_stage", 3), ("prefer_reduce_scatter", True)):
                self._set(name, value)

    def _check_objects(self) -> None:
        """The options that are Python objects: devices, layer option and plan."""
        if self.devices is not None:
            self._set("devices", tuple(self.devices))
            if not self.devices:
                raise ValueError(f"{type(self).__name__} option 'devices' is empty")
        if self.layer_option is not None and not isinstance(self.layer_option, (AutoLayerOption, ManualLayerOption)):
            raise ValueError(f"{type(self).__name__} option 'layer_option' must be AutoLayerOption(layer_num=...), "
                             f"ManualLayerOption() or None; got {self.layer_option!r}")
        if isinstance(self.plan, (str, os.PathLike)):
            self._set("plan", SavedPlan.load(self.plan))
        elif self.plan is not None and not isinstance(self.plan, (SavedPlan, ShardingPlan)):
            raise ValueError(f"{type(self).__name__} option 'plan' must be a SavedPlan, a ShardingPlan or a path; "
                             f"got {type(self.plan).__name__}")

    def layer_construction(self, memory_budget: float) -> LayerConstructionPass | None:
        """The ``alpa-layer-construction`` that gives the layers to recompute, where any may
        be: with ``layer_option``, its layers; else, with recompute possible (a budget, or
        ``rematerialize="all"``), the user's segments or sqrt(n) layers, and a step that is
        not a training step is left as it is."""
        if self.layer_option is not None:
            return LayerConstructionPass(**self.layer_option.pass_options())
        if self.rematerialize == "all" or (self.rematerialize == "auto" and memory_budget):
            return LayerConstructionPass(default_layers="sqrt", relax_delta=True,
                                         require_training_step=self.rematerialize == "all")
        return None

    def _set(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)

    # ------------------------------------------------------------------ what a call needs

    def device_mesh(self, override: DeviceMesh | jax.sharding.Mesh | Sequence[int] | None = None
                    ) -> tuple[DeviceMesh, tuple[Any, ...]]:
        """The mesh to plan for (device ids are JAX device ids) and its devices in mesh order."""
        name = type(self).__name__
        if isinstance(override, jax.sharding.Mesh):
            devices = tuple(override.devices.flat)
            return DeviceMesh(override.devices.shape, tuple(d.id for d in devices), tuple(override.axis_names),
                              self.mesh_alpha, self.mesh_beta), devices
        available = self.devices if self.devices is not None else tuple(jax.devices())
        if isinstance(override, DeviceMesh):
            by_id = {d.id: d for d in available}
            missing = [i for i in override.device_ids if i not in by_id]
            if missing:
                raise ValueError(f"mesh uses device ids {missing} that are not among the available devices "
                                 f"{sorted(by_id)}")
            return override, tuple(by_id[i] for i in override.device_ids)
        shape = tuple(override) if override is not None else self.mesh_shape or (1, len(available))
        size = math.prod(shape)
        if size > len(available):
            raise ValueError(f"{name}: mesh shape {list(shape)} needs {size} devices but {len(available)} are "
                             "available; use a smaller mesh_shape (on CPU, set XLA_FLAGS="
                             "--xla_force_host_platform_device_count=N before importing jax)")
        devices = available[:size]
        try:
            mesh = DeviceMesh(shape, tuple(d.id for d in devices), self.mesh_axes, self.mesh_alpha, self.mesh_beta)
        except MeshError as error:
            raise ValueError(f"{name}: {error}") from None
        return mesh, devices

    def auto_sharding_pass(self, mesh_shape: tuple[int, ...], batch_args: tuple[int, ...],
                           report: str = "", state: tuple[tuple[int, int], ...] = (),
                           **overrides: Any) -> AutoShardingPass:
        """The ``alpa-auto-sharding`` instance for one call; option errors name this method's fields."""
        options = {f.name: getattr(self, f.name) for f in option_fields(AutoShardingPass)
                   if f.name not in _CALL_OPTIONS + _DERIVED_OPTIONS}
        if options["memory_budget"] is None:
            options["memory_budget"] = 0.0  # the call passes the devices' own (device_memory_budget)
        if self.layer_option is not None and self.layer_option.remat_layer:
            options["rematerialize"] = "all"
        options["allow_mixed_mesh_shape"] = self.allow_mixed_mesh_shape is True
        options["allow_flattened_mesh"] = self.allow_mixed_mesh_shape is None
        options.update(overrides)
        if not mesh_shape:
            options["mesh_axes"] = ()
        try:
            return AutoShardingPass(mesh_shape=tuple(mesh_shape), batch_args=tuple(batch_args), report=report,
                                    state=state if self.steady_state else (), **options)
        except MeshError as error:
            raise ValueError(f"{type(self).__name__} option 'mesh_shape'/'mesh_axes': {error}") from None
        except ValueError as error:
            raise ValueError(f"{type(self).__name__}: {_snake_case_options(str(error))}") from None


@dataclass(frozen=True)
class DataParallel(ShardParallel):
    """Split the batch arguments over all devices; replicate parameters and optimizer state."""

    force_data_parallel: bool = True


@dataclass(frozen=True)
class Zero2Parallel(ShardParallel):
    """Data parallelism with the weight update sharded (reduce-scatter, then all-gather)."""

    force_data_parallel: bool = True
    zero_stage: int = 2
    prefer_reduce_scatter: bool = True


@dataclass(frozen=True)
class Zero3Parallel(ShardParallel):
    """Data parallelism with parameters, gradients and optimizer state sharded."""

    force_data_parallel: bool = True
    zero_stage: int = 3
    prefer_reduce_scatter: bool = True


def _checked(method: ShardParallel, name: str, value: Any, hint: Any) -> Any:
    """``value`` in the type the pass declares for option ``name``, or a ValueError naming it."""
    label = f"{type(method).__name__} option '{name}'"
    if typing.get_origin(hint) is typing.Literal:
        choices = typing.get_args(hint)
        if value not in choices:
            raise ValueError(f"{label} must be one of {', '.join(map(repr, choices))}; got {value!r}")
        return value
    if typing.get_origin(hint) is tuple:
        element = typing.get_args(hint)[0]
        if isinstance(value, (int, float)) and element is not str:
            value = (value,)  # batch_argnums=1 means (1,)
        if not isinstance(value, (tuple, list)):
            raise ValueError(f"{label} must be a sequence of {element.__name__}; got {value!r}")
        return tuple(_scalar(label, v, element) for v in value)
    return _scalar(label, value, hint)


def _scalar(label: str, value: Any, kind: type) -> Any:
    if kind is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{label} must be True or False; got {value!r}")
        return value
    if kind is int and (isinstance(value, bool) or not isinstance(value, int) and not hasattr(value, "__index__")):
        raise ValueError(f"{label} must be an integer; got {value!r}")
    if kind is float and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise ValueError(f"{label} must be a number; got {value!r}")
    if kind is str and not isinstance(value, str):
        raise ValueError(f"{label} must be a string; got {value!r}")
    return kind(value)


def _snake_case_options(message: str) -> str:
    """The pass names options as on the command line ('zero-stage'); say 'zero_stage'."""
    return re.sub(r"'([a-z][a-z0-9-]*)'",
                  lambda m: f"'{_RENAMED.get(m[1], m[1].replace('-', '_'))}'" if "-" in m[1] else m[0], message)
