"""The pass infrastructure: the base of every pass and pipeline, their registry by name,
the parser for MLIR's textual pipeline syntax, and the entry point that runs them.

It sits with the IR, below the passes and the lowering, so that both define passes:
the compiler's in ``alpa_mlir.passes``, XLA's workarounds in ``alpa_mlir.lowering``.

Python passes are not in MLIR's pass registry, so ``PassManager.parse`` cannot name
them. This module parses ``builtin.module(alpa-import-sharding, canonicalize,
alpa-verify-sharding{mesh-shape=2,4})`` itself: ``alpa-*`` names become Python pass
instances with typed options, every other element is handed to MLIR unchanged
(``canonicalize``, ``cse``, ``inline``, ``symbol-dce``, ``sdy-*``, ``func.func(...)``).
"""

from __future__ import annotations

import abc
import dataclasses
import difflib
import math
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from jax._src.lib.mlir import ir, passmanager

from .text import split_top_level


class PipelineError(ValueError):
    """A pipeline or option the user wrote that cannot be built; says what exists."""


class Diagnostics:
    """What a running pass reports. Errors go through MLIR (``Location.emit_error``);
    warnings and remarks, which jaxlib's bindings cannot emit, are collected here and
    printed by the driver in MLIR's format."""

    def __init__(self, sink: list[tuple[ir.Location, str, str]]):
        self._sink = sink
        self.failed = False

    def error(self, where: ir.Operation | ir.Location, message: str) -> None:
        _location(where).emit_error(message)
        self.failed = True

    def warning(self, where: ir.Operation | ir.Location, message: str) -> None:
        self._sink.append((_location(where), "warning", message))

    def remark(self, where: ir.Operation | ir.Location, message: str) -> None:
        self._sink.append((_location(where), "remark", message))


def _location(where: ir.Operation | ir.Location) -> ir.Location:
    return where if isinstance(where, ir.Location) else where.location


@dataclass(frozen=True)
class Pass(abc.ABC):
    """Base of every alpa pass: a frozen dataclass whose fields are its options.

    Subclasses set ``name`` (kebab-case, ``alpa-`` prefix), give every option field a
    ``metadata={"help": ...}``, and implement :meth:`apply` over the module.
    """

    name: typing.ClassVar[str]

    @abc.abstractmethod
    def apply(self, module: ir.Operation, diagnostics: Diagnostics) -> None:
        """Transform ``module`` (a ``builtin.module``) in place; report through ``diagnostics``."""


@dataclass(frozen=True)
class Pipeline(abc.ABC):
    """A named sequence of passes; its fields are options forwarded to its passes."""

    name: typing.ClassVar[str]

    @abc.abstractmethod
    def expand(self) -> list[Pass | str]:
        """The pipeline's elements: pass instances or pipeline text."""


_REGISTRY: dict[str, type[Pass] | type[Pipeline]] = {}


def register(cls):
    """Class decorator: make a :class:`Pass` or :class:`Pipeline` available by its ``name``."""
    if cls.name in _REGISTRY:
        raise ValueError(f"pass {cls.name!r} is registered twice")
    _REGISTRY[cls.name] = cls
    return cls


def registered() -> dict[str, type[Pass] | type[Pipeline]]:
    """The registered passes and pipelines by name. A pass registers when its module is
    imported: importing ``alpa_mlir.passes`` registers the compiler's passes, importing
    ``alpa_mlir.lowering`` the rewrites XLA needs before it compiles."""
    return dict(sorted(_REGISTRY.items()))


# ----------------------------------------------------------------------------- options


def option_name(field: dataclasses.Field) -> str:
    return field.name.replace("_", "-")


def provided(what: str) -> typing.Any:
    """A pass field that is not an option: something the pass asks of a layer it may not
    import (XLA's resharding probe, the runtime's stage timer) or hands back to its
    caller (its plan), given by whoever builds the pass; ``alpa_mlir.services.provide``
    gives lowering's and the runtime's implementations. ``None`` until given; left out
    of comparisons, ``repr`` and pipeline text. ``what`` says what it is for."""
    return dataclasses.field(default=None, compare=False, repr=False, metadata={"provided": what})


def option_fields(cls: type) -> list[dataclasses.Field]:
    return [f for f in dataclasses.fields(cls) if f.init and "provided" not in f.metadata]


def provided_fields(cls: type) -> list[dataclasses.Field]:
    """The fields of ``cls`` made with :func:`provided`."""
    return [f for f in dataclasses.fields(cls) if "provided" in f.metadata]


def option_type_text(cls: type, field: dataclasses.Field) -> str:
    hint = typing.get_type_hints(cls)[field.name]
    if typing.get_origin(hint) is typing.Literal:
        return " | ".join(str(v) for v in typing.get_args(hint))
    if typing.get_origin(hint) is tuple:
        element = typing.get_args(hint)[0]
        if typing.get_origin(element) is tuple:  # pairs, written a:b
            return "list of " + ":".join(t.__name__ for t in typing.get_args(element))
        return f"list of {element.__name__}"
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return " or ".join(a.__name__ for a in typing.get_args(hint) if a is not type(None))
    return hint.__name__


def _convert(cls: type, field: dataclasses.Field, text: str, pass_name: str):
    hint = typing.get_type_hints(cls)[field.name]
    label = f"option '{option_name(field)}' of {pass_name}"
    optional = typing.get_origin(hint) in (typing.Union, types.UnionType)
    if optional:
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
    try:
        if typing.get_origin(hint) is typing.Literal:
            choices = [str(v) for v in typing.get_args(hint)]
            if text not in choices:
                raise PipelineError(f"{label} must be one of {', '.join(choices)}; got {text!r}")
            return text
        if hint is bool:
            if text.lower() in ("", "true", "1"):
                return True
            if text.lower() in ("false", "0"):
                return False
            raise PipelineError(f"{label} must be true or false; got {text!r}")
        if typing.get_origin(hint) is tuple:
            element = typing.get_args(hint)[0]
            items = [v.strip() for v in text.split(",")]
            if any(not v for v in items) and text.strip():
                raise PipelineError(f"{label} has an empty list element; got {text!r}")
            if typing.get_origin(element) is tuple:  # pairs, written a:b
                kinds = typing.get_args(element)
                pairs = [v.split(":") for v in items if v]
                if any(len(p) != len(kinds) for p in pairs):
                    raise ValueError
                return tuple(tuple(_checked(k(x.strip()), label, x) for k, x in zip(kinds, p)) for p in pairs)
            return tuple(_checked(element(v), label, v) for v in items if v)
        return _checked(hint(text), label, text)
    except ValueError as error:
        if isinstance(error, PipelineError):
            raise
        raise PipelineError(f"{label} expects {option_type_text(cls, field)}; got {text!r}") from None


# Every integer option (mesh sizes, counts, indices) fits in 32 bits; a larger value is
# a typo, and one that reached a pass could size an allocation.
_INT_OPTION_LIMIT = 1 << 31


def _checked(value, label: str, text: str):
    """``value`` parsed from ``text``, refused when no option could mean it."""
    if isinstance(value, float) and math.isnan(value):
        raise PipelineError(f"{label} is not a number; got {text!r}")
    if isinstance(value, int) and not isinstance(value, bool) and not -_INT_OPTION_LIMIT <= value < _INT_OPTION_LIMIT:
        raise PipelineError(f"{label} is out of range (32-bit integers); got {text!r}")
    return value


def parse_options(text: str) -> list[tuple[str, str]]:
    """``a=1 b=2,3 c="x y" flag`` -> [(a, 1), (b, 2,3), (c, x y), (flag, '')]."""
    items, i = [], 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        start = i
        while i < len(text) and not text[i].isspace() and text[i] != "=":
            i += 1
        key = text[start:i]
        value = ""
        if i < len(text) and text[i] == "=":
            i += 1
            if i < len(text) and text[i] in "\"'":
                quote, i = text[i], i + 1
                end = text.find(quote, i)
                if end < 0:
                    raise PipelineError(f"unterminated quote in options {{{text}}}")
                value, i = text[i:end], end + 1
            else:
                vstart, depth = i, 0
                while i < len(text) and (depth or not text[i].isspace()):
                    depth += {"{": 1, "}": -1}.get(text[i], 0)
                    i += 1
                value = text[vstart:i]
        items.append((key, value))
    return items


def instantiate(name: str, options_text: str = "") -> Pass | Pipeline:
    """Build the pass or pipeline ``name`` with options ``a=1 b=2`` (MLIR syntax)."""
    registry = registered()
    cls = registry.get(name)
    if cls is None:
        close = difflib.get_close_matches(name, registry, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise PipelineError(f"unknown pass '{name}'{hint}; alpa passes are: {', '.join(registry)}")
    fields = {option_name(f): f for f in option_fields(cls)}
    values = {}
    for key, value in parse_options(options_text):
        field = fields.get(key)
        if field is None:
            known = ", ".join(fields) or "none"
            raise PipelineError(f"unknown option '{key}' for {name}; its options are: {known}")
        if field.name in values:
            raise PipelineError(f"option '{key}' of {name} is given more than once")
        values[field.name] = _convert(cls, field, value, name)
    try:
        return cls(**values)
    except ValueError as error:
        raise PipelineError(f"{name}: {error}") from None


# ----------------------------------------------------------------------------- pipelines


def parse_element(text: str) -> list[Pass | str]:
    """One pipeline element: an alpa pass or pipeline with options, or upstream text."""
    name = text.split("{", 1)[0].split("(", 1)[0].strip()
    if not name.startswith("alpa-"):
        if "alpa-" in text:
            raise PipelineError(
                f"'{text}': alpa passes run on the module; list them at the top level of "
                "builtin.module(...), not nested under an operation"
            )
        return [text]
    rest = text[len(name):].strip()
    options = ""
    if rest.startswith("{") and rest.endswith("}"):
        options = rest[1:-1]
    elif rest:
        raise PipelineError(f"cannot parse pipeline element '{text}'")
    return flatten([instantiate(name, options)])


def flatten(elements: Iterable[Pass | Pipeline | str]) -> list[Pass | str]:
    """``elements`` with every pipeline replaced by its passes and every text element parsed."""
    flat: list[Pass | str] = []
    for element in elements:
        if isinstance(element, str):
            flat.extend(parse_element(element))
        elif isinstance(element, Pipeline):
            flat.extend(flatten(element.expand()))
        else:
            flat.append(element)
    return flat


def parse_pipeline(text: str) -> list[Pass | str]:
    """``builtin.module(a, b{x=1})`` (or the bare ``a, b{x=1}``) -> pipeline elements."""
    text = text.strip()
    if text.startswith("builtin.module(") and text.endswith(")"):
        text = text[len("builtin.module("):-1]
    elif text.startswith("builtin.module"):
        raise PipelineError(f"cannot parse pipeline '{text}': expected builtin.module(...)")
    try:
        parts = split_top_level(text)
    except ValueError:
        raise PipelineError(f"unbalanced brackets in pipeline '{text}'") from None
    if "" in parts:
        raise PipelineError(f"empty element in pipeline '{text}' (two commas, or one at an end)")
    return [e for part in parts for e in parse_element(part)]


def pipeline_text(elements: Iterable[Pass | str]) -> str:
    """The textual pipeline of ``elements``: parse_pipeline(pipeline_text(x)) rebuilds x."""
    return "builtin.module(" + ",".join(element_text(e) for e in elements) + ")"


def option_value_text(value) -> str:
    """An option value as MLIR's syntax writes it: ``2,4``, ``true``, ``x``."""
    if isinstance(value, tuple):
        return ",".join(":".join(map(str, v)) if isinstance(v, tuple) else str(v) for v in value)
    return str(value).lower() if isinstance(value, bool) else str(value)


def element_text(element: Pass | str) -> str:
    if isinstance(element, str):
        return element
    options = []
    for field in option_fields(type(element)):
        value = getattr(element, field.name)
        if value == field.default:
            continue
        text = option_value_text(value)
        options.append(f"{option_name(field)}={text!r}" if " " in text else f"{option_name(field)}={text}")
    return element.name + ("{" + " ".join(options) + "}" if options else "")


def build_pass_manager(elements: list[Pass | str],
                       warnings: list[tuple[ir.Location, str, str]]) -> passmanager.PassManager:
    """A PassManager on ``builtin.module`` running ``elements`` in order (in the current
    context). Warnings and remarks of alpa passes go to ``warnings``."""
    manager = passmanager.PassManager("builtin.module")
    for element in elements:
        if isinstance(element, str):
            anchor = element.split("(", 1)[0].strip() if "(" in element.split("{", 1)[0] else None
            if anchor is not None and not ir.Context.current.is_registered_operation(anchor):
                raise PipelineError(f"'{anchor}' in pipeline element '{element}' is not an operation; "
                                    "nest passes under one, e.g. func.func(cse)")
            try:
                manager.add(element)
            except ValueError as error:
                # MLIR's message reads "<parser>:1:1: error: <what>"; keep <what>.
                first = str(error).strip().splitlines()[0].split("error: ", 1)[-1]
                raise PipelineError(
                    f"{first} (upstream element '{element}'); alpa passes are: "
                    f"{', '.join(registered())}"
                ) from None
        else:
            manager.add(_runner(element, warnings), name=type(element).__name__,
                        argument=element.name)
    return manager


def _runner(instance: Pass, warnings) -> Callable:
    def run(op: ir.Operation, pass_) -> None:
        diagnostics = Diagnostics(warnings)
        try:
            instance.apply(op, diagnostics)
        except Exception as error:  # a bug in the pass: report it at the module, do not crash
            diagnostics.error(op, f"internal error in {instance.name}: {type(error).__name__}: {error}")
        if diagnostics.failed:
            pass_.signal_pass_failure()

    return run


def run_pipeline(module: ir.Module,
                 pipeline: str | Iterable[Pass | Pipeline | str]) -> list[tuple[ir.Location, str, str]]:
    """Run ``pipeline`` (pass and pipeline objects and text elements, or
    ``builtin.module(...)`` text as for ``alpa-opt --pass-pipeline``) on ``module`` in
    place, in the module's context.

    Returns the warnings and remarks of alpa passes as (location, severity, message).
    Raises :class:`PipelineError` for a bad pipeline and ``ir.MLIRError`` (with the
    diagnostics) when a pass fails.
    """
    elements = parse_pipeline(pipeline) if isinstance(pipeline, str) else flatten(pipeline)
    warnings: list[tuple[ir.Location, str, str]] = []
    with module.context:
        build_pass_manager(elements, warnings).run(module.operation)
    return warnings
