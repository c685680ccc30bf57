"""A plan saved with the annotated module it was made for, so a later run skips the search.

The file is the plan's own JSON (``ShardingPlan.to_json``; without its per-op entries
unless saved with ``details=True``: the module carries every op's sharding) with one more
entry, ``saved_module``: the annotated StableHLO text and the function it came from. So
``ShardingPlan.load`` reads any saved plan, and a plan written by ``plan.save`` alone
(without a module) still loads here, as a plan that fixes only the shardings of the
arguments and results. ``PipeshardParallel``'s plans are saved as :class:`SavedPipeline`:
the stage plan and the compiled module (stages, transfers, schedules) under one
``saved_pipeline`` entry.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from jax._src.lib.mlir import ir

from .dialect.annotations import get_value_attrs, value_types
from .plans.json_files import json_text
from .plans.pipeline_plan import PipelinePlan, PipelinePlanError
from .plans.sharding_plan import PlanError, ShardingPlan

SAVED_MODULE_KEY = "saved_module"
RESULT_INFO = "jax.result_info"  # what JAX names a result of @main with
SAVED_MODULE_VERSION = 1


@dataclass(frozen=True)
class SavedPlan:
    """A :class:`ShardingPlan` and, when known, the annotated module that realises it."""

    plan: ShardingPlan
    module_text: str | None = None  # annotated StableHLO (alpa-auto-sharding's output)
    function: str = ""  # the Python function the plan was made for, for messages

    def __str__(self) -> str:
        return self.plan.summary() + _module_line(self.module_text, self.function)

    def to_json(self, details: bool = False) -> dict:
        """The plan's JSON (its per-op entries only with ``details``) and the module's."""
        data = self.plan.to_json(details)
        if self.module_text is not None:
            data[SAVED_MODULE_KEY] = {"version": SAVED_MODULE_VERSION, "function": self.function,
                                      "module": self.module_text}
        return data

    @classmethod
    def from_json(cls, data: dict) -> SavedPlan:
        plan = ShardingPlan.from_json(data)
        saved = data.get(SAVED_MODULE_KEY)
        if saved is None:
            return cls(plan)
        if not isinstance(saved, dict) or saved.get("version") != SAVED_MODULE_VERSION or \
                not isinstance(saved.get("module"), str):
            raise PlanError(f"malformed '{SAVED_MODULE_KEY}' entry: expected version {SAVED_MODULE_VERSION} "
                            "with the module text")
        return cls(plan, saved["module"], str(saved.get("function", "")))

    def save(self, path: str | os.PathLike, details: bool = False) -> None:
        """Write the plan and its module; the plan's per-op entries (strategies, predicted
        collectives, source locations: most of the bytes) only with ``details``. Loading
        needs none of them: the module carries every op's sharding."""
        Path(path).write_text(json_text(self.to_json(details)))

    @classmethod
    def load(cls, path: str | os.PathLike) -> SavedPlan:
        return cls.from_json(_read_object(path))


def _module_line(module_text: str | None, function: str) -> str:
    if module_text is None:
        return "\nno module: loading it fixes the arguments' and results' shardings, and plans the rest again"
    lines = module_text.count("\n") + 1
    return f"\nsaved {'for ' + function + ' ' if function else ''}with its annotated module ({lines} lines)"


def _read_object(path: str | os.PathLike) -> dict:
    """The JSON object in the file at ``path``; :class:`PlanError` when there is none."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise PlanError(f"cannot read plan {path}: {error}") from None
    if not isinstance(data, dict):
        raise PlanError(f"cannot read plan {path}: expected a JSON object")
    return data


SAVED_PIPELINE_KEY = "saved_pipeline"


@dataclass(frozen=True)
class SavedPipeline:
    """A :class:`PipelinePlan` with the compiled module (stage functions, transfers and
    per-mesh schedules) that realises it: ``PipeshardParallel``'s saved plan."""

    plan: PipelinePlan
    module_text: str
    function: str = ""  # the Python function it was compiled for, for messages

    def __str__(self) -> str:
        return self.plan.summary() + _module_line(self.module_text, self.function)

    def save(self, path: str | os.PathLike) -> None:
        entry = {"version": SAVED_MODULE_VERSION, "function": self.function, "module": self.module_text,
                 "plan": json.loads(self.plan.to_json())}
        Path(path).write_text(json.dumps({SAVED_PIPELINE_KEY: entry}) + "\n")

    @classmethod
    def from_json(cls, data: dict, where: str) -> SavedPipeline:
        saved = data[SAVED_PIPELINE_KEY]
        if not isinstance(saved, dict) or saved.get("version") != SAVED_MODULE_VERSION or \
                not isinstance(saved.get("module"), str) or not isinstance(saved.get("plan"), dict):
            raise PlanError(f"cannot read plan {where}: malformed '{SAVED_PIPELINE_KEY}' entry: expected version "
                            f"{SAVED_MODULE_VERSION} with the module text and the pipeline plan")
        try:
            plan = PipelinePlan.from_json(json.dumps(saved["plan"]), str(where))
        except PipelinePlanError as error:
            raise PlanError(str(error)) from None
        return cls(plan, saved["module"], str(saved.get("function", "")))


def load_plan(path: str | os.PathLike) -> SavedPlan | SavedPipeline:
    """Read a plan saved by ``parallelize(...).save_plan`` (or ``ShardingPlan.save``): a
    :class:`SavedPlan` for ``ShardParallel``, a :class:`SavedPipeline` for ``PipeshardParallel``."""
    data = _read_object(path)
    if SAVED_PIPELINE_KEY in data:
        return SavedPipeline.from_json(data, str(path))
    return SavedPlan.from_json(data)


def main_signature(module: ir.Module) -> tuple[list[tuple[tuple[int, ...] | None, str]],
                                                list[tuple[tuple[int, ...] | None, str]]]:
    """(shape, element type) of every argument and result of ``@main``, as the plan records them."""
    main = _main(module)

    def described(t: ir.Type) -> tuple[tuple[int, ...] | None, str]:
        if isinstance(t, ir.ShapedType):
            return tuple(t.shape), str(t.element_type)
        return None, str(t)

    return ([described(t) for t in value_types(main, "arg_attrs")],
            [described(t) for t in value_types(main, "res_attrs")])


def value_names(module: ir.Module) -> tuple[list[str], list[str]]:
    """The pytree paths JAX gave the arguments and results of ``@main`` (``params['w1']``,
    ``result[0]``): the arguments' name locations and the results' ``jax.result_info``; "" where
    there is none (a module not lowered by JAX, or printed without debug information)."""
    main = _main(module)
    # A name location (``loc("params['w1']")``) has a name; file and unknown locations have none.
    arguments = [str(getattr(a.location, "name_str", "")) for a in main.regions[0].blocks[0].arguments]
    results = [attrs.get(RESULT_INFO) for attrs in get_value_attrs(main, "res_attrs")]
    return arguments, [ir.StringAttr(info).value if info is not None else "" for info in results]


def _main(module: ir.Module) -> ir.Operation:
    main = next((op.operation for op in module.body.operations if op.operation.name == "func.func"
                 and ir.StringAttr(op.attributes["sym_name"]).value == "main"), None)
    if main is None:
        raise PlanError("the module has no func.func @main")
    return main


def check_fits(plan: ShardingPlan, module: ir.Module, names: Sequence[str], result_names: Sequence[str],
               where: str) -> None:
    """Raise :class:`PlanError` unless ``plan`` was made for the signature of ``module``."""
    arguments, results = main_signature(module)
    for kind, planned, actual, labels in (("argument", plan.arguments, arguments, names),
                                          ("result", plan.results, results, result_names)):
        if len(planned) != len(actual):
            raise PlanError(f"the plan {where} has {len(planned)} {kind}s but this call has {len(actual)}; "
                            "it was made for another function or another argument structure")
        for i, (value, (shape, dtype)) in enumerate(zip(planned, actual)):
            if (value.shape, value.dtype) != (shape, dtype):
                label = labels[i] if i < len(labels) else f"{kind} {i}"
                raise PlanError(f"{kind} {label} is {_type_text(shape, dtype)} in this call but "
                                f"{_type_text(value.shape, value.dtype)} in the plan {where}; search a new plan "
                                "for these shapes (drop the plan) or call with the shapes it was made for")


def check_same_signature(saved: ir.Module, module: ir.Module, names: Sequence[str], where: str) -> None:
    """Raise :class:`PlanError` unless ``@main`` of ``saved`` takes and returns what ``@main``
    of ``module`` does (``names``: the arguments' names, for the message)."""
    for kind, planned, actual in zip(("argument", "result"), main_signature(saved), main_signature(module)):
        if len(planned) != len(actual):
            raise PlanError(f"{where} has {len(planned)} {kind}s but this call has {len(actual)}; it was made for "
                            "another function or another argument structure")
        for i, ((shape, dtype), (saved_shape, saved_dtype)) in enumerate(zip(actual, planned)):
            if (shape, dtype) != (saved_shape, saved_dtype):
                label = names[i] if kind == "argument" and i < len(names) else f"{kind} {i}"
                raise PlanError(f"{kind} {label} is {_type_text(shape, dtype)} per micro-batch in this call but "
                                f"{_type_text(saved_shape, saved_dtype)} in {where}; search a new plan for these "
                                "shapes or call with the shapes it was made for")


def _type_text(shape: tuple[int, ...] | None, dtype: str) -> str:
    return dtype if shape is None else f"{dtype}[{','.join(map(str, shape))}]"

