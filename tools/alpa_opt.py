"""``alpa-opt``: run alpa and upstream MLIR passes over a ``.mlir`` file, like ``mlir-opt``.

    alpa-opt input.mlir --alpa-import-sharding --alpa-verify-sharding
    alpa-opt input.mlir --pass-pipeline='builtin.module(inline,alpa-import-sharding{mesh-shape=2,4})'
    alpa-opt tests.mlir --split-input-file --verify-diagnostics --alpa-verify-sharding

Pass flags (``--alpa-x``, ``--alpa-x='opt=1 other=2'``, ``--canonicalize``, ...) run
in command-line order. Errors are ``file:line:col: error: message`` with exit code 1;
when a pass fails, the command that reproduces it is printed.
"""

from __future__ import annotations

import argparse
import inspect
import logging
import os
import re
import shlex
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import alpa_mlir.lowering  # noqa: F401  (importing the two packages registers every pass)
import alpa_mlir.passes  # noqa: F401

from ..dialect.alpa_ops import verify_alpa_ops
from ..dialect.context import check_unregistered_ops, make_context
from ..dialect.pass_registry import (
    PipelineError,
    build_pass_manager,
    option_fields,
    option_name,
    option_type_text,
    option_value_text,
    parse_element,
    parse_pipeline,
    pipeline_text,
    registered,
)
from ..dialect.text import nesting_too_deep
from ..services import provide
from . import diagnostics as diag

SPLIT_MARKER = re.compile(r"^// -----", re.M)
# Deeper input is refused before parsing (the parser and the passes recurse per level);
# real programs nest a few dozen levels at most.
MAX_NESTING = 256
PROG = "alpa-opt"
STDIN_NAME = "<stdin>"  # what mlir-opt calls standard input in diagnostics and locations


class UsageError(Exception):
    """Bad command line: reported as ``alpa-opt: error: ...``, exit code 1."""


def describe(name: str, cls, full: bool) -> str:
    """Help text of a pass or pipeline: its summary (or whole docstring) and options."""
    doc = inspect.cleandoc(cls.__doc__ or "")
    text = doc if full else doc.splitlines()[0] if doc else ""
    lines = [f"  --{name}", *("      " + line if line else "" for line in text.splitlines())]
    fields = option_fields(cls)
    if fields:
        lines.append("      Options:")
        for field in fields:
            shown = option_value_text(field.default)
            help_text = field.metadata.get("help", "")
            # An option whose help already says what its default means gets no second one.
            suffix = "" if "default" in help_text else f" (default: {shown or 'none'})"
            lines.append(f"        {option_name(field)}=<{option_type_text(cls, field)}>  "
                         f"{help_text}{suffix}")
    return "\n".join(lines)


def pass_catalogue(full: bool) -> str:
    return "\n\n".join(describe(n, c, full) for n, c in registered().items())


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise UsageError(message)


class _Once(argparse.Action):
    """An option that may be given once: a second value is an error, not silently the winner."""

    def __call__(self, parser, namespace, values, option_string=None):
        if getattr(namespace, self.dest) is not None:
            raise UsageError(f"{option_string} is given more than once")
        setattr(namespace, self.dest, values)


def make_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter, add_help=False,
        description="Run alpa and upstream MLIR passes over a .mlir file (mlir-opt style).",
        epilog="Passes (as flags, in order, or inside --pass-pipeline='builtin.module(...)'):\n\n"
               + pass_catalogue(full=False)
               + "\n\nAny pass registered in jaxlib's MLIR also works as a flag or pipeline element:"
                 "\n  --canonicalize, --cse, --inline, --symbol-dce, --sdy-propagation-pipeline, ..."
                 "\n\nSee --list-passes for each pass's full description.",
    )
    parser.add_argument("input", nargs="?", default="-", help="input file, or - for stdin (default)")
    parser.add_argument("-o", dest="output", action=_Once, help="output file (default: stdout)")
    parser.add_argument("--pass-pipeline", action=_Once,
                        help="textual pipeline, e.g. 'builtin.module(alpa-verify-sharding)'")
    parser.add_argument("--split-input-file", action="store_true",
                        help="split the input at '// -----' and process each part on its own")
    parser.add_argument("--verify-diagnostics", action="store_true",
                        help="check reported diagnostics against expected-* comments in the input")
    parser.add_argument("--mlir-print-ir-after-all", action="store_true",
                        help="print the IR after every pass (to stderr)")
    parser.add_argument("--mlir-print-debuginfo", action="store_true", help="print locations")
    parser.add_argument("--allow-unregistered-dialect", action="store_true",
                        help="accept ops of dialects other than func, stablehlo, chlo, mhlo, sdy, mpmd, alpa")
    parser.add_argument("--solver-log", action="store_true",
                        help="print the ILP solver's own log (CVXPY, HiGHS) on stderr")
    parser.add_argument("--list-passes", action="store_true",
                        help="describe every pass and pipeline with its options, and exit")
    parser.add_argument("-h", "--help", action="store_true", help="show this help and exit")
    return parser


def split_pass_flags(argv: list[str], parser: argparse.ArgumentParser) -> tuple[list[str], list[str]]:
    """Separate pass flags (``--name`` or ``--name=options``) from driver flags, keeping
    pass order. Anything that is not a driver flag is a pass; after ``--`` nothing is a
    flag (``alpa-opt --cse -- -input.mlir``)."""
    driver = {s for a in parser._actions for s in a.option_strings}
    rest, passes = [], []
    for position, token in enumerate(argv):
        if token == "--":
            rest.extend(argv[position:])
            break
        flag = token.split("=", 1)[0]
        if len(flag) > 2 and flag[0] == "-" and flag[1] != "-":  # -split-input-file, like mlir-opt
            token, flag = "-" + token, "-" + flag
        if token.startswith("--") and flag not in driver and len(token) > 2:
            name, _, options = token[2:].partition("=")
            passes.append(f"{name}{{{options}}}" if options else name)
        else:
            rest.append(token)
    return rest, passes


@dataclass
class Chunk:
    text: str        # padded with newlines so that line numbers are those of the file
    first_line: int


def split_input(source: str, split: bool) -> list[Chunk]:
    if not split:
        return [Chunk(source, 1)]
    chunks, start, line = [], 0, 1
    for match in SPLIT_MARKER.finditer(source):
        chunks.append(Chunk("\n" * (line - 1) + source[start:match.start()], line))
        line += source[start:match.end()].count("\n")
        start = source.find("\n", match.end())
        start = len(source) if start < 0 else start
    chunks.append(Chunk("\n" * (line - 1) + source[start:], line))
    return chunks


@dataclass
class Outcome:
    output: str | None
    diagnostics: list[diag.Diagnostic]
    pipeline_failed: bool


def run_chunk(chunk: Chunk, elements: list, args, input_name: str) -> Outcome:
    """Parse, verify, run the pipeline and print one input part."""
    from jax._src.lib.mlir import ir

    context = make_context()
    reported: list[diag.Diagnostic] = []

    def handler(d) -> bool:
        reported.extend(diag.from_mlir(d, input_name))
        return True

    context.attach_diagnostic_handler(handler)
    refused = _refused_text(chunk.text, input_name)
    if refused is not None:
        return Outcome(None, [refused], False)
    with context:
        try:
            module = ir.Module.parse(chunk.text)
        except ir.MLIRError as error:
            return Outcome(None, reported + _errors(error, input_name), False)
        problems = (check_unregistered_ops(module, args.allow_unregistered_dialect)
                    + verify_alpa_ops(module.operation))
        if problems:
            return Outcome(None, reported + [diag.from_location(op.location, "error", m, input_name)
                                             for op, m in problems], False)
        warnings: list = []
        manager = build_pass_manager(elements, warnings)
        if args.mlir_print_ir_after_all:
            manager.enable_ir_printing()
        failed = False
        try:
            manager.run(module.operation)
        except ir.MLIRError as error:
            reported.extend(_errors(error, input_name))
            failed = True
        reported.extend(diag.from_location(loc, sev, msg, input_name) for loc, sev, msg in warnings)
        if failed:
            return Outcome(None, reported, True)
        problems = verify_alpa_ops(module.operation)
        if problems:
            reported.extend(diag.from_location(op.location, "error", m, input_name) for op, m in problems)
            return Outcome(None, reported, True)
        text = module.operation.get_asm(enable_debug_info=args.mlir_print_debuginfo)
        if args.mlir_print_debuginfo and input_name != diag.PARSER_FILE:
            text = text.replace(f'"{diag.PARSER_FILE}":', f'"{input_name}":')
        return Outcome(text, reported, False)


def _refused_text(text: str, input_name: str) -> diag.Diagnostic | None:
    """What MLIR's parser must not see: nesting that would overflow its stack, and NUL,
    where it silently stops reading."""
    deep = nesting_too_deep(text, MAX_NESTING)
    nul = text.find("\0")
    if deep is None and nul < 0:
        return None
    offset, message = (deep, f"brackets nested deeper than {MAX_NESTING} levels") if deep is not None \
        and (nul < 0 or deep < nul) else (nul, "NUL character in the input")
    line = text.count("\n", 0, offset) + 1
    return diag.Diagnostic("error", input_name, line, offset - text.rfind("\n", 0, offset), message)


def _errors(error, input_name: str) -> list[diag.Diagnostic]:
    found = [d for info in error.error_diagnostics for d in diag.from_mlir(info, input_name)]
    if not found:  # an error without a diagnostic: report the message itself
        found = [diag.Diagnostic("error", input_name, 0, 0, str(error))]
    return found


def reproducer(args, chunk: Chunk, elements: list, source_is_file: bool) -> str:
    """The command that reproduces a failing pipeline on ``chunk``."""
    if source_is_file and not args.split_input_file:
        path = args.input
    else:
        fd, path = tempfile.mkstemp(prefix="alpa-opt-reproducer-", suffix=".mlir")
        with os.fdopen(fd, "w") as handle:
            handle.write(chunk.text)
    flags = " --allow-unregistered-dialect" if args.allow_unregistered_dialect else ""
    return f"{PROG} {shlex.quote(path)}{flags} --pass-pipeline={shlex.quote(pipeline_text(elements))}"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    _log_to_stderr()
    parser = make_parser()
    try:
        rest, pass_flags = split_pass_flags(argv, parser)
        args = parser.parse_args(rest)
        args.output = "-" if args.output is None else args.output
        logging.getLogger("alpa_mlir.solver").setLevel(logging.DEBUG if args.solver_log else logging.NOTSET)
        if args.help:
            parser.print_help()
            return 0
        if args.list_passes:
            print(pass_catalogue(full=True))
            return 0
        elements = _pipeline(args.pass_pipeline, pass_flags)
        source_is_file = args.input != "-"
        source = _read_input(args.input)
    except UsageError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 1

    input_name = args.input if source_is_file else STDIN_NAME
    outputs, ok = [], True
    for chunk in split_input(source, args.split_input_file):
        outcome = run_chunk(chunk, elements, args, input_name)
        if args.verify_diagnostics:
            problems = diag.verify(diag.expected_diagnostics(chunk.text), outcome.diagnostics, input_name)
            for line in problems:
                print(line, file=sys.stderr)
            ok = ok and not problems
        else:
            for d in outcome.diagnostics:
                print(d.format(), file=sys.stderr)
            if any(d.severity == "error" for d in outcome.diagnostics) or outcome.output is None:
                ok = False
            if outcome.pipeline_failed:
                print(f"note: reproduce with: {reproducer(args, chunk, elements, source_is_file)}",
                      file=sys.stderr)
        # A failed part prints nothing but keeps its place, so output part i is input part i.
        outputs.append(outcome.output or "")
    return _write_output(args.output, "// -----\n".join(outputs), ok)


def _write_output(path: str, text: str, ok: bool) -> int:
    """The exit status after writing ``text`` to stdout (``-``), or to the file ``path``
    when every part succeeded (a failed run leaves an existing file as it was)."""
    if path == "-":
        sys.stdout.write(text)
    elif ok:
        try:
            with open(path, "w") as handle:
                handle.write(text)
        except OSError as error:
            print(f"{PROG}: error: cannot write '{path}': {error.strerror}", file=sys.stderr)
            return 1
    return 0 if ok else 1


def _log_to_stderr() -> None:
    """Long passes (the stage search) log a line per phase on stderr; other libraries' logs stay off."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{PROG}: %(message)s"))
    logger = logging.getLogger("alpa_mlir")
    logger.handlers[:] = [handler]
    logger.setLevel(logging.INFO)
    logger.propagate = False


def _pipeline(pass_pipeline: str | None, pass_flags: list[str]) -> list:
    """The pipeline of ``--pass-pipeline`` or of the pass flags, validated (upstream
    names included) before the input is read, so that a bad pass name is reported at
    once rather than after waiting on stdin."""
    if pass_pipeline is not None and pass_flags:
        raise UsageError("give either --pass-pipeline or pass flags, not both")
    try:
        elements = provide(parse_pipeline(pass_pipeline) if pass_pipeline is not None
                           else [e for flag in pass_flags for e in parse_element(flag)])
    except PipelineError as error:
        raise UsageError(str(error)) from None
    with make_context():
        try:
            build_pass_manager(elements, [])
        except PipelineError as error:
            raise UsageError(str(error)) from None
    return elements


def _read_input(path: str) -> str:
    """The input's text: the file ``path``, or stdin for ``-``."""
    try:
        return sys.stdin.read() if path == "-" else Path(path).read_text()
    except OSError as error:
        raise UsageError(f"cannot read '{path}': {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise UsageError(f"cannot read '{path}': not UTF-8 text ({error.reason} at byte {error.start})") from None


if __name__ == "__main__":
    sys.exit(main())

