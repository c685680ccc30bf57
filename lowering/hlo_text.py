"""Instructions, shapes and computations of HLO module text (``HloModule.to_string()``).

The reading that does not depend on what is read (:mod:`.hlo_collectives` reads the
collectives with it): one :class:`Instruction` per ``name = shape opcode(operands)
attributes`` line, the leaf array shapes of an HLO shape, the computation each
instruction belongs to, and how often each computation runs per execution of the
module (:func:`computation_trips`: a ``while`` body once per trip of the loop).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..dialect.text import split_top_level

_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?(?P<name>[\w.\-]+)\s*=\s*")
_OPCODE = re.compile(r"\s*(?P<opcode>[\w\-]+)\(")
_ARRAY_SHAPE = re.compile(r"(?P<dtype>[a-z][a-z0-9]*)\[(?P<dims>[^\]]*)\](?:\{[^}]*\})?")
COMPUTATION = re.compile(r"^(?:ENTRY\s+)?%?(?P<name>[\w.\-]+)\s*\(.*\)\s*->.*\{\s*$")
_CALLED = re.compile(
    r"\b(?P<key>body|condition|calls|to_apply|true_computation|false_computation)=%?(?P<name>[\w.\-]+)")
_BRANCHES = re.compile(r"\bbranch_computations=\{(?P<names>[^}]*)\}")
_TRIP_COUNT = re.compile(r'"known_trip_count":\{"n":"(?P<n>\d+)"\}')

Shape = tuple[int, ...]


class HloParseError(ValueError):
    """HLO text that cannot be read; the message quotes the line."""


def strip_comments(text: str) -> str:
    """``text`` without its ``/* ... */`` comments."""
    return re.sub(r"/\*.*?\*/", "", text)


def balanced(text: str, start: int, opening: str, closing: str) -> int:
    """Index just past the bracket that closes the one at ``text[start]``."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == opening:
            depth += 1
        elif text[i] == closing:
            depth -= 1
            if depth == 0:
                return i + 1
    raise HloParseError(f"unbalanced {opening}{closing} in HLO line {text!r}")


def parse_shape(text: str) -> tuple[tuple[Shape, str], ...]:
    """Leaf array shapes of an HLO shape (``f32[4,8]{1,0}`` or a nested tuple), in order."""
    leaves = []
    for match in _ARRAY_SHAPE.finditer(text):
        dims = match.group("dims").replace("<=", "").replace("?", "")
        leaves.append((tuple(int(d) for d in dims.split(",") if d.strip()), match.group("dtype")))
    return tuple(leaves)


def tuple_elements(text: str) -> list[str]:
    """Top-level elements of a tuple shape ``(a, (b, c))``; a non-tuple is one element."""
    text = text.strip()
    return split_top_level(text[1:-1], "({[", ")}]") if text.startswith("(") else [text]


@dataclass(frozen=True, slots=True)
class Instruction:
    """One instruction line: ``name = shape opcode(operands)attributes``, each part as text."""

    name: str
    shape: str
    opcode: str
    operands: str
    attributes: str


def parse_instruction(line: str) -> Instruction | None:
    """The instruction on ``line``; ``None`` for any other line (a header, a brace, blank)."""
    head = _INSTRUCTION.match(line)
    if not head:
        return None
    at = head.end()
    if line.startswith("(", at):
        end = balanced(line, at, "(", ")")
    else:
        shape = _ARRAY_SHAPE.match(line, at)
        if not shape:
            return None
        end = shape.end()
    opcode = _OPCODE.match(line, end)
    if not opcode:
        return None
    close = balanced(line, opcode.end() - 1, "(", ")")
    return Instruction(head.group("name"), line[at:end], opcode.group("opcode"),
                        line[opcode.end():close - 1], line[close:])


def instructions(hlo_text: str) -> list[tuple[Instruction, str]]:
    """Every instruction, in text order, with the computation it belongs to."""
    found, name = [], ""
    for line in strip_comments(hlo_text).splitlines():
        header = COMPUTATION.match(line)
        if header:
            name = header.group("name")
        elif (inst := parse_instruction(line)) is not None:
            found.append((inst, name))
    return found


def computation_trips(hlo_text: str) -> dict[str, int]:
    """How often each computation runs per execution of the module: one nothing calls (the
    entry) once; a ``while`` body (and condition) the loop's ``known_trip_count`` times per
    run of its caller (once where XLA did not count it); any other called computation once
    per run of its caller, summed over its callers."""
    name, names = "", []
    calls: dict[str, list[tuple[str, int]]] = {}  # callee -> (caller, runs per caller run)
    for line in strip_comments(hlo_text).splitlines():
        header = COMPUTATION.match(line)
        if header:
            name = header.group("name")
            names.append(name)
            continue
        if "=" not in line:
            continue
        count = _TRIP_COUNT.search(line)
        for called in _CALLED.finditer(line):
            looped = called.group("key") in ("body", "condition") and count is not None
            calls.setdefault(called.group("name"), []).append((name, int(count.group("n")) if looped else 1))
        for branches in _BRANCHES.finditer(line):
            for callee in branches.group("names").split(","):
                calls.setdefault(callee.strip().lstrip("%"), []).append((name, 1))
    trips: dict[str, int] = {}

    def runs(computation: str) -> int:
        if computation not in calls:
            return 1
        if computation not in trips:
            trips[computation] = 0  # a call cycle (not valid HLO) counts nothing more
            trips[computation] = sum(runs(caller) * n for caller, n in calls[computation])
        return trips[computation]

    return {computation: runs(computation) for computation in names}
