"""Diagnostics as ``file:line:col: severity: message``, and ``--verify-diagnostics``.

``--verify-diagnostics`` follows ``mlir-opt``: the input declares the diagnostics it
expects in comments, ``// expected-error {{text}}`` on the line it is reported at, or
with ``@+N`` / ``@-N`` / ``@above`` / ``@below`` for another line. Every reported
diagnostic must be expected (its text contains the expected text) and every expected
one must be reported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from jax._src.lib.mlir import ir

_FILE_LINE_COL = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')
_EXPECTED = re.compile(
    r"expected-(error|warning|note|remark)(?:@(above|below|[+-]\d+))?\s*\{\{(.*?)\}\}")
_SEVERITIES = {
    ir.DiagnosticSeverity.ERROR: "error",
    ir.DiagnosticSeverity.WARNING: "warning",
    ir.DiagnosticSeverity.NOTE: "note",
    ir.DiagnosticSeverity.REMARK: "remark",
}
PARSER_FILE = "-"  # the file name jaxlib's Module.parse gives to every location


@dataclass(frozen=True)
class Diagnostic:
    severity: str
    file: str
    line: int
    column: int
    message: str

    def format(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}" if self.line else self.file
        return f"{where}: {self.severity}: {self.message}"


def from_location(location: ir.Location, severity: str, message: str, input_name: str) -> Diagnostic:
    """The diagnostic at the first file position in ``location`` (name, call-site and
    fused locations wrap one), with the parser's ``-`` replaced by ``input_name``."""
    match = _FILE_LINE_COL.search(str(location))
    if match is None:
        return Diagnostic(severity, input_name, 0, 0, message)
    file = input_name if match.group(1) == PARSER_FILE else match.group(1)
    return Diagnostic(severity, file, int(match.group(2)), int(match.group(3)), message)


def from_mlir(info, input_name: str) -> list[Diagnostic]:
    """A ``Diagnostic``/``DiagnosticInfo`` from the bindings and its notes."""
    result = [from_location(info.location, _SEVERITIES.get(info.severity, "error"), info.message,
                            input_name)]
    for note in info.notes:
        result.extend(from_mlir(note, input_name))
    return result


@dataclass(frozen=True)
class Expected:
    severity: str
    line: int         # where the diagnostic is expected
    text: str
    at_line: int      # where the designator is: a missing diagnostic is reported there
    at_column: int


def expected_diagnostics(source: str) -> list[Expected]:
    """The ``expected-*`` comments of ``source`` with the lines they refer to (1-based).

    As in mlir-opt, ``@above`` and ``@below`` skip lines that hold designators
    themselves, so several of them can stack above or below one op."""
    designators = [list(_EXPECTED.finditer(line)) for line in source.splitlines()]
    result = []
    for number, matches in enumerate(designators, start=1):
        for match in matches:
            offset = match.group(2)
            target = number
            if offset in ("above", "below"):
                step = -1 if offset == "above" else 1
                target += step
                while 1 <= target <= len(designators) and designators[target - 1]:
                    target += step
            elif offset:
                target += int(offset)
            result.append(Expected(match.group(1), target, match.group(3), number, match.start() + 1))
    return result


def verify(expected: list[Expected], reported: list[Diagnostic], input_name: str) -> list[str]:
    """Mismatches between expected and reported diagnostics, as error lines."""
    remaining = list(expected)
    problems = []
    for diagnostic in reported:
        match = next((e for e in remaining if e.severity == diagnostic.severity
                      and e.line == diagnostic.line and diagnostic.file == input_name
                      and e.text in diagnostic.message), None)
        if match is None:
            problems.append(Diagnostic("error", diagnostic.file, diagnostic.line, diagnostic.column,
                                       f"unexpected {diagnostic.severity}: {diagnostic.message}").format())
        else:
            remaining.remove(match)
    for e in remaining:
        problems.append(Diagnostic("error", input_name, e.at_line, e.at_column,
                                   f'expected {e.severity} "{e.text}" was not produced').format())
    return problems
