"""A generated corpus of malformed ``alpa-opt`` inputs and command lines.

Every case is bad by construction, so ``alpa-opt`` must refuse it: exit code 1, an
error at its source (``file:line:col: error:`` for IR, the option or flag named for a
command line), no traceback, no internal error, no output. Kinds:

- IR mutations of the lit inputs (each ``// -----`` part that parses): a region cut
  short, a use of an undeclared value, a result type that contradicts the function's,
  an unknown op of a registered dialect;
- bad ``mhlo.sharding`` values on the lit inputs' annotated values, bad ``sdy.mesh``
  and ``alpa.mesh`` attributes, a partition count that contradicts the mesh;
- bad values for every option of every registered pass, by option type;
- bad pipelines, flags and files; input nested thousands deep;
- modules that parse and verify but cannot be planned as written: recursive calls,
  calls to declarations, a nested module, an ``sdy.sharding`` and an ``mhlo.sharding``
  (or an ``alpa.mesh`` and an ``sdy.mesh``) that disagree.

The cases are plain data, built without running anything (the lit inputs are parsed
once to keep only the parts that are valid to begin with).
"""

from __future__ import annotations

import re
import typing
from dataclasses import dataclass
from pathlib import Path

from jax._src.lib.mlir import ir

import alpa_mlir.lowering  # noqa: F401  (importing the two packages registers every pass)
import alpa_mlir.passes  # noqa: F401
from alpa_mlir.dialect.context import make_context
from alpa_mlir.dialect.pass_registry import option_fields, option_name, registered

LIT = Path(__file__).resolve().parents[1] / "lit"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mlp_train_step.mlir"
INPUT = "{input}"  # replaced by the case's input file
VERIFY = "--pass-pipeline=builtin.module(alpa-import-sharding, alpa-verify-sharding)"


@dataclass(frozen=True)
class Case:
    """One malformed run: ``argv`` (``{input}`` stands for a file holding ``text``) and
    what the error must name: ``"located"`` (``file:line:col``) or the option or flag."""

    name: str
    argv: tuple[str, ...]
    text: str | bytes | None = None
    names: str = "located"


def lit_parts() -> list[tuple[str, str]]:
    """(name, text) of every part of the lit inputs (error tests excepted) that parses."""
    parts = []
    for path in sorted(LIT.rglob("*.mlir")):
        if path.name.endswith("_errors.mlir") or "Output" in path.parts:
            continue
        for index, text in enumerate(re.split(r"^// -----.*$", path.read_text(), flags=re.M)):
            with make_context():
                try:
                    ir.Module.parse(text)
                except ir.MLIRError:
                    continue
            parts.append((f"{path.relative_to(LIT).with_suffix('')}#{index}", text))
    return parts


def ir_mutations(parts: list[tuple[str, str]]) -> list[Case]:
    cases = []
    for name, text in parts:
        returns = [m for m in re.finditer(r"^(\s*)(?:func\.)?return (%[\w#]+)(.*): (.*)$", text, re.M)]
        if not returns:
            continue
        last = returns[-1]
        types = last.group(4).split(",")
        mutations = {
            "cut-short": text[:last.start()],
            "undeclared-value": text[:last.start(2)] + "%undeclared_value" + text[last.end(2):],
            "return-type": text[:last.start(4)] + ", ".join(["tensor<3x5x7xi7>"] * len(types)) + text[last.end(4):],
            "unknown-op": text[:last.start()] + f"{last.group(1)}stablehlo.no_such_op\n" + text[last.start():],
        }
        cases += [Case(f"{name}/{kind}", (INPUT, "--alpa-verify-sharding"), mutated)
                  for kind, mutated in _some(mutations.items(), len(cases))]
    return cases


def _some(items, start: int, count: int = 2) -> list:
    """``count`` of ``items``, in rotation from ``start``: every kind is used across the
    parts while the corpus stays small enough for CI."""
    items = list(items)
    return [items[(start + k) % len(items)] for k in range(min(count, len(items)))]


BAD_SHARDINGS = (
    '"{devices=[2,2]0,1,2}"',                  # 4 tiles, 3 devices
    '"{devices=[2,2]0,0,1,1}"',                # a device twice
    '"{replicated"',                           # unbalanced
    '"not a sharding"',
    '"{devices=[0,2]<=[0]}"',                  # an empty tile dimension
    '"{devices=[-2,-4]<=[8]}"',
    '"{devices=[99999999999999999999]<=[99999999999999999999]}"',
    '"{devices=[4294967296,2]<=[8589934592]}"',
    '"{devices=[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]<=[1]}"',  # rank 20 on a value of rank <= 4
    '"{maximal device=-1}"',
    '"{{replicated},,{replicated}}"',          # an empty tuple element
    '5 : i32',                                 # not a string
    '"{devices=[2]<=[2] bogus_flag}"',
)


# Broadcasts that alpa-fold-broadcasts folds and alpa-squeeze-broadcast-operands rewrites,
# run alone: the shardings they read are checked by them.
BROADCASTS = """func.func @main(%arg0: tensor<4xf32>) -> tensor<2x4xf32> {{
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [1] {{mhlo.sharding = {inner}}} : (tensor<4xf32>) -> tensor<1x4xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] {{mhlo.sharding = {outer}}} : (tensor<1x4xf32>) -> tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}}
"""


def broadcast_shardings() -> list[Case]:
    cases = []
    for index, bad in enumerate(BAD_SHARDINGS):
        for flag in ("--alpa-fold-broadcasts", "--alpa-squeeze-broadcast-operands"):
            text = BROADCASTS.format(inner='"{replicated}"', outer=bad)
            cases.append(Case(f"broadcast/{flag[2:]}-sharding-{index}", (INPUT, flag), text))
    return cases


def sharding_mutations(parts: list[tuple[str, str]]) -> list[Case]:
    cases = []
    for name, text in parts:
        # the first annotation outside the CHECK comments
        found = re.search(r'^(?!\s*//).*?(mhlo\.sharding = "[^"]*")', text, re.M)
        if found is None or "alpa.mesh" in text:  # imported modules: the verify pass reads them as they are
            continue
        for index, bad in _some(enumerate(BAD_SHARDINGS), len(cases), count=3):
            mutated = text[:found.start(1)] + f"mhlo.sharding = {bad}" + text[found.end(1):]
            # through the import pipeline, or straight into the verifier
            flags = (VERIFY,) if len(cases) % 2 else ("--alpa-verify-sharding",)
            cases.append(Case(f"{name}/sharding-{index}", (INPUT, *flags), mutated))
    return cases


MESH_MODULE = """module @m attributes {{mhlo.num_partitions = {partitions} : i32}} {{
  sdy.mesh @mesh = <[{axes}]>
  func.func @main(%arg0: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}}) -> tensor<8x8xf32> {{
    return %arg0 : tensor<8x8xf32>
  }}
}}
"""

ALPA_MESH_MODULE = """module @m attributes {{alpa.mesh = {{alpha = array<f64: {alpha}>, axes = {names}, \
beta = array<f64: 1.0, 1.0>, device_ids = array<i64: {ids}>, shape = array<i64: {shape}>}}, \
mhlo.num_partitions = 8 : i32}} {{
  func.func @main(%arg0: tensor<8x8xf32> {{mhlo.sharding = "{{devices=[2,1,4]<=[8] last_tile_dim_replicate}}"}}) \
-> tensor<8x8xf32> {{
    return %arg0 : tensor<8x8xf32>
  }}
}}
"""


def mesh_mutations() -> list[Case]:
    good_ids = ", ".join(map(str, range(8)))
    sdy = {
        "zero-axis": ('"x"=0, "y"=4', 8), "negative-axis": ('"x"=-2, "y"=4', 8),
        "huge-axis": ('"x"=99999999999, "y"=4', 8), "overflow-axis": ('"x"=99999999999999999999', 8),
        "duplicate-axis": ('"x"=2, "x"=4', 8), "partitions-mismatch": ('"x"=2, "y"=4', 16),
        "partitions-zero": ('"x"=2, "y"=4', 0), "partitions-negative": ('"x"=2, "y"=4', -8),
        "too-many-devices": ('"x"=65536, "y"=65536', 8),
    }
    cases = [Case(f"sdy-mesh/{k}", (INPUT, "--alpa-import-pipeline"), MESH_MODULE.format(axes=a, partitions=p))
             for k, (a, p) in sdy.items()]
    # Shardy pins the auto-sharding pass would not read: the import pipeline must come first.
    cases.append(Case("sdy-mesh/not-imported", (INPUT, "--alpa-auto-sharding"), EXAMPLE.read_text()))
    alpa = {
        "overflow-shape": dict(shape="99999999999, 2"), "negative-shape": dict(shape="-2, -4"),
        "zero-shape": dict(shape="0, 8"), "few-ids": dict(ids="0, 1, 2"),
        "duplicate-ids": dict(ids="0, 0, 1, 1, 2, 2, 3, 3"), "negative-ids": dict(ids="-1, 1, 2, 3, 4, 5, 6, 7"),
        "nan-alpha": dict(alpha="0x7FF8000000000000, 1.0"), "few-alpha": dict(alpha="1.0"),
        "one-name": dict(names='["x"]'), "duplicate-names": dict(names='["x", "x"]'),
        "names-not-strings": dict(names="[1, 2]"), "huge-mesh": dict(shape="65536, 65536"),
    }
    defaults = dict(alpha="1.0, 1.0", names='["x", "y"]', ids=good_ids, shape="2, 4")
    cases += [Case(f"alpa-mesh/{k}", (INPUT, "--alpa-verify-sharding"), ALPA_MESH_MODULE.format(**{**defaults, **v}))
              for k, v in alpa.items()]
    return cases


# Modules every line of which parses and verifies, but which no pass can plan as written:
# calls the inliner leaves (recursion, a declaration), a nested module, shardings that
# contradict each other. (name, the module's functions and attributes).
CALLS = """module @m attributes {{alpa.mesh = {{shape = array<i64: 2, 2>}}}} {{
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {{
    %0 = func.call @{callee}(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }}
{extra}}}
"""
BODY = """  func.func private @{name}(%arg0: tensor<8xf32>) -> tensor<8xf32> {{
    %0 = func.call @{callee}(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }}
"""
CONFLICTS = """module @m attributes {{{mesh}mhlo.num_partitions = 8 : i32}} {{
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x16xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>{mhlo}}}) \
-> tensor<8x16xf32> {{
    return %arg0 : tensor<8x16xf32>
  }}
}}
"""


def unplannable_modules() -> list[Case]:
    planned = (INPUT, "--pass-pipeline=builtin.module(alpa-import-pipeline, alpa-auto-sharding)")
    modules = {
        "calls/self": CALLS.format(callee="main", extra=""),
        "calls/cycle": CALLS.format(callee="f", extra=BODY.format(name="f", callee="g")
                                    + BODY.format(name="g", callee="f")),
        "calls/self-helper": CALLS.format(callee="f", extra=BODY.format(name="f", callee="f")),
        "calls/declaration": CALLS.format(callee="f", extra="  func.func private @f(tensor<8xf32>) -> tensor<8xf32>\n"),
        "nested-module": 'module @outer {\n  module @inner {\n    func.func @main(%arg0: tensor<8xf32> '
                         '{mhlo.sharding = "{manual}"}) -> tensor<8xf32> {\n      return %arg0 : tensor<8xf32>\n'
                         '    }\n  }\n}\n',
        "conflict/sdy-mhlo": CONFLICTS.format(mesh="", mhlo=', mhlo.sharding = "{devices=[1,8]<=[8]}"'),
        "conflict/alpa-sdy-mesh": CONFLICTS.format(mesh="alpa.mesh = {shape = array<i64: 4, 2>}, ", mhlo=""),
    }
    return [Case(f"unplannable/{name}", planned, text) for name, text in modules.items()]


# Values no option of the type can mean.
BAD_VALUES = {
    "int": ("x", "1.5", "99999999999999999999", "-99999999999999999999", "4294967296"),
    "float": ("x", "nan", "1.0.0"),
    "bool": ("maybe", "2"),
    "list of int": ("2,,4", "a,b", "99999999999999999999", "1.5,2", ","),
    "list of float": ("nan", "x,1", "1,,2"),
    "list of str": ("a,,b", ","),
    "list of int:int": ("1", "1:2:3", "a:b", "1:", "1:2,,3:4"),
    "literal": ("bogus", "ALL"),
}


def option_values() -> list[Case]:
    cases = []
    for pass_name, cls in registered().items():
        hints = typing.get_type_hints(cls)
        for field in option_fields(cls):
            kind = _kind(hints[field.name])
            for index, value in enumerate(BAD_VALUES.get(kind, ())):
                option = option_name(field)
                cases.append(Case(f"option/{pass_name}/{option}-{index}",
                                  (INPUT, f"--pass-pipeline=builtin.module({pass_name}{{{option}={value}}})"),
                                  EXAMPLE.read_text(), names=f"option '{option}'"))
    return cases


def _kind(hint) -> str:
    if typing.get_origin(hint) is typing.Literal:
        return "literal"
    if typing.get_origin(hint) is tuple:
        element = typing.get_args(hint)[0]
        if typing.get_origin(element) is tuple:
            return "list of " + ":".join(t.__name__ for t in typing.get_args(element))
        return f"list of {element.__name__}"
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    return (args[0] if args else hint).__name__


# Options whose every value in range is valid but whose meaning rules out these:
# (pass, options, the option the error must name).
BAD_SEMANTICS = (
    ("alpa-auto-sharding", "force-batch-dim-to-mesh-dim=-2 batch-args=0", "force-batch-dim-to-mesh-dim"),
    ("alpa-auto-sharding", "memory-budget=-1", "memory-budget"),
    ("alpa-auto-sharding", "zero-stage=4", "zero-stage"),
    ("alpa-auto-sharding", "solver-time-limit=-1", "solver-time-limit"),
    ("alpa-auto-sharding", "mesh-shape=2,4 mesh-alpha=1", "mesh-alpha"),
    ("alpa-auto-sharding", "mesh-shape=0,4", "mesh-shape"),
    ("alpa-auto-sharding", "mesh-shape=65536,65536", "mesh-shape"),
    ("alpa-import-sharding", "mesh-shape=-2,4", "mesh-shape"),
    ("alpa-import-sharding", "mesh-shape=2,4 mesh-axes=x", "mesh-axes"),
    ("alpa-import-sharding", "mesh-shape=2,4 mesh-axes=x,x", "mesh-axes"),
    ("alpa-layer-construction", "layers=-1", "layers"),
    ("alpa-layer-construction", "delta=-0.5", "delta"),
    ("alpa-stage-construction", "num-micro-batches=0 cluster-shape=1,8", "num-micro-batches"),
    ("alpa-stage-construction", "jobs=-1 cluster-shape=1,8", "jobs"),
    ("alpa-stage-construction", "jobs=100000 cluster-shape=1,8", "jobs"),
    ("alpa-stage-construction", "cluster-shape=0,8", "cluster-shape"),
    ("alpa-stage-construction", "cluster-shape=65536,65536", "cluster-shape"),
    ("alpa-stage-construction", "profile-repeats=0 cluster-shape=1,8", "profile-repeats"),
    ("alpa-pipeline-schedule", "num-micro-batches=0", "num-micro-batches"),
    ("alpa-pipeline-schedule", "num-micro-batches=1073741824", "num-micro-batches"),
    ("alpa-accumulate-gradients", "num-micro-batches=-3", "num-micro-batches"),
    ("alpa-accumulate-gradients", "num-micro-batches=2 batch-args=1,1", "batch-args"),
    ("alpa-accumulate-gradients", "num-micro-batches=2 concat-results=0,0", "concat-results"),
)


# Options that only the module can rule out (a layer count, a placement): located errors
# that name the option, on a two-layer training step.
STAGED = "alpa-import-pipeline, alpa-layer-construction{{layers=2}}, alpa-stage-construction{{cluster-shape=1,4 {}}}"
BAD_PLACEMENTS = (
    "stage-mode=manual stage-layers=1,1 stage-submeshes=2,4,2,4",
    "stage-mode=manual stage-layers=2 stage-submeshes=1,8",
    "stage-mode=manual stage-layers=1,1 stage-submeshes=1,3,1,3",
    "stage-mode=manual stage-layers=1,2 stage-submeshes=1,1,1,3",
)


def option_semantics() -> list[Case]:
    cases = [Case(f"semantics/{name}-{index}", (INPUT, f"--pass-pipeline=builtin.module({name}{{{options}}})"),
                  EXAMPLE.read_text(), names=f"option '{named}'")
             for index, (name, options, named) in enumerate(BAD_SEMANTICS)]
    staged = (LIT / "inter_op" / "stage_construction.mlir").read_text()
    return cases + [Case(f"semantics/placement-{index}", (INPUT, f"--pass-pipeline=builtin.module({STAGED.format(o)})"),
                         staged) for index, o in enumerate(BAD_PLACEMENTS)]


BAD_PIPELINES = (
    ("builtin.module(", "pipeline"), ("builtin.module(alpa-verify-sharding", "pipeline"),
    ("builtin.module(alpa-verify-sharding{)", "pipeline"), ("builtin.module(,)", "pipeline"),
    ("builtin.module(alpa-import-pipeline,,alpa-auto-sharding)", "pipeline"), ("alpa-verify-sharding,", "pipeline"),
    ("builtin.module(alpa-no-such-pass)", "alpa-no-such-pass"), ("builtin.func(cse)", "pipeline"),
    ("func.func(alpa-verify-sharding)", "alpa-verify-sharding"), ("builtin.module(no-such-upstream-pass)", "pass"),
    ("builtin.module(canonicalize{no-such-option=1})", "canonicalize"),
    ("builtin.module(alpa-verify-sharding{mesh-shape=2 mesh-shape=4})", "option 'mesh-shape'"),
    ("builtin.module(alpa-verify-sharding{no-such-option=1})", "option 'no-such-option'"),
    ("builtin.module(alpa-verify-sharding{mesh-shape=\"2,4)", "pipeline"),
    ("builtin.module(alpa-verify-sharding}", "pipeline"), ("builtin.module(alpa-verify-sharding{=2})", "option"),
)

BAD_FLAGS = (
    (("--no-such-flag",), "no-such-flag"), (("-o",), "-o"), (("--split-input-file=3",), "split-input-file"),
    (("--pass-pipeline=builtin.module(alpa-verify-sharding)", "--pass-pipeline=builtin.module(cse)"),
     "--pass-pipeline"),
    (("-o", "a.mlir", "-o", "b.mlir", "--cse"), "-o"),
    (("--pass-pipeline=builtin.module(cse)", "--alpa-verify-sharding"), "pass flags"),
    (("--alpa-verify-sharding=mesh-shape=x",), "option 'mesh-shape'"),
    (("--alpa-verify-sharding", "second_input.mlir"), "second_input.mlir"),
)


def command_lines() -> list[Case]:
    example = EXAMPLE.read_text()
    cases = [Case(f"pipeline/{i}", (INPUT, f"--pass-pipeline={p}"), example, names=n)
             for i, (p, n) in enumerate(BAD_PIPELINES)]
    cases += [Case(f"flags/{i}", (INPUT, *flags), example, names=n) for i, (flags, n) in enumerate(BAD_FLAGS)]
    return cases


def bad_files() -> list[Case]:
    deep_attribute = "module attributes {a = " + "[" * 7000 + "]" * 7000 + "} {}\n"
    deep_module = "module {\n" * 1000 + "}\n" * 1000
    deep_type = "func.func private @f(tensor<" + "complex<" * 5000 + "f32" + ">" * 5001 + ")\n"
    return [
        Case("file/missing", ("/no/such/dir/input.mlir", "--cse"), None, names="/no/such/dir/input.mlir"),
        Case("file/directory", (str(LIT), "--cse"), None, names=str(LIT)),
        Case("file/not-utf8", (INPUT, "--cse"), b"module {\xff\xfe}\n", names="UTF-8"),
        Case("file/nul-bytes", (INPUT, "--cse"), "module {\x00}\n"),
        Case("file/binary", (INPUT, "--cse"), bytes(range(1, 128)).decode()),
        Case("file/unwritable-output", (INPUT, "--cse", "-o", "/no/such/dir/out.mlir"), "module {}\n",
             names="/no/such/dir/out.mlir"),
        Case("file/deep-attribute", (INPUT, "--alpa-verify-sharding"), deep_attribute),
        Case("file/deep-module", (INPUT, "--alpa-verify-sharding"), deep_module),
        Case("file/deep-type", (INPUT, "--alpa-verify-sharding"), deep_type),
        Case("file/split-all-bad", (INPUT, "--split-input-file", "--cse"), "bad one\n// -----\nbad two\n"),
    ]


def corpus() -> list[Case]:
    parts = lit_parts()
    return (ir_mutations(parts) + sharding_mutations(parts) + broadcast_shardings() + mesh_mutations() + option_values()
            + option_semantics() + command_lines() + bad_files() + unplannable_modules())
