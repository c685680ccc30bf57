"""A plan saved with the annotated module it was made for, so a later run skips the search.

The file is the plan's own JSON (``ShardingPlan.to_json``) with one more entry,
``saved_module``: the annotated StableHLO text and the function it came from. So
``ShardingPlan.load`` reads any saved plan, and a plan written by ``plan.save`` alone
(without a module) still loads here, as a plan that fixes only the shardings of the
arguments and results.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from jax._src.lib.mlir import ir

from .dialect.annotations import value_types
from .plans.sharding_plan import PlanError, ShardingPlan

SAVED_MODULE_KEY = "saved_module"
SAVED_MODULE_VERSION = 1


@dataclass(frozen=True)
class SavedPlan:
    """A :class:`ShardingPlan` and, when known, the annotated module that realises it."""

    plan: ShardingPlan
    module_text: str | None = None  # annotated StableHLO (alpa-auto-sharding's output)
    function: str = ""  # the Python function the plan was made for, for messages

    def to_json(self) -> dict:
        data = self.plan.to_json()
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

    def save(self, path: str | os.PathLike) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n")

    @classmethod
    def load(cls, path: str | os.PathLike) -> SavedPlan:
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as error:
            raise PlanError(f"cannot read plan {path}: {error}") from None
        if not isinstance(data, dict):
            raise PlanError(f"cannot read plan {path}: expected a JSON object")
        return cls.from_json(data)


def load_plan(path: str | os.PathLike) -> SavedPlan:
    """Read a plan saved by ``parallelize(...).save_plan`` (or ``ShardingPlan.save``)."""
    return SavedPlan.load(path)


def main_signature(module: ir.Module) -> tuple[list[tuple[tuple[int, ...] | None, str]],
                                                list[tuple[tuple[int, ...] | None, str]]]:
    """(shape, element type) of every argument and result of ``@main``, as the plan records them."""
    main = next((op.operation for op in module.body.operations if op.operation.name == "func.func"
                 and ir.StringAttr(op.attributes["sym_name"]).value == "main"), None)
    if main is None:
        raise PlanError("the module has no func.func @main")

    def described(t: ir.Type) -> tuple[tuple[int, ...] | None, str]:
        if isinstance(t, ir.ShapedType):
            return tuple(t.shape), str(t.element_type)
        return None, str(t)

    return ([described(t) for t in value_types(main, "arg_attrs")],
            [described(t) for t in value_types(main, "res_attrs")])


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


def _type_text(shape: tuple[int, ...] | None, dtype: str) -> str:
    return dtype if shape is None else f"{dtype}[{','.join(map(str, shape))}]"

