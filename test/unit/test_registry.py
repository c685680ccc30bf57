"""The pass registry: typed options in MLIR syntax, pipeline parsing and printing."""

from __future__ import annotations

import inspect
import pathlib
import re

import pytest

import alpa_mlir.lowering  # noqa: F401  (registers XLA's workaround passes)
from alpa_mlir.dialect.pass_registry import Pass, parse_options, pipeline_text, registered
from alpa_mlir.passes import PipelineError, parse_pipeline
from alpa_mlir.passes.export.strip_sharding import StripShardingPass
from alpa_mlir.passes.imports.capture_while_invariants import CaptureWhileInvariantsPass
from alpa_mlir.passes.imports.fold_broadcasts import FoldBroadcastsPass
from alpa_mlir.passes.imports.import_sharding import ImportShardingPass
from alpa_mlir.passes.imports.lower_pipeline_markers import LowerPipelineMarkersPass
from alpa_mlir.passes.imports.verify_sharding import VerifyShardingPass


def shows(doc: str, label: str) -> bool:
    """Whether ``doc`` has a paragraph that starts with ``label`` and ends in an IR block
    (``::``, a blank line, indented lines)."""
    return re.search(rf"^{label}\b[^\n]*(\n[^\n]+)*::\n\n +\S", doc, re.MULTILINE) is not None


def test_every_pass_has_a_spec_and_prefix():
    # A pass's spec shows the IR it takes and the IR it makes (a pipeline's is the passes
    # it runs, in order).
    for name, cls in registered().items():
        assert name.startswith("alpa-")
        doc = inspect.getdoc(cls)
        assert doc and len(doc.splitlines()[0]) > 10, name
        if issubclass(cls, Pass):
            assert shows(doc, "Input") and shows(doc, "Output"), name


def test_the_spec_check_reads_input_and_output_blocks():
    assert shows("Input::\n\n    %0 = stablehlo.tanh %x\n", "Input")
    assert shows("Input: a step,\nwith layers::\n\n    %0 = stablehlo.tanh %x\n", "Input")
    assert not shows("Input: a step.\n\nOutput::\n\n    %0\n", "Input")
    assert not shows("The Output::\n\n    %0\n", "Output")


def test_options_are_typed():
    (p,) = parse_pipeline("builtin.module(alpa-import-sharding{mesh-shape=2,4 mesh-axes=data,model})")
    assert p == ImportShardingPass(mesh_shape=(2, 4), mesh_axes=("data", "model"))
    (s,) = parse_pipeline("alpa-strip-sharding{keep-mesh}")
    assert s == StripShardingPass(keep_mesh=True)
    (s,) = parse_pipeline("alpa-strip-sharding{keep-mesh=false}")
    assert s == StripShardingPass(keep_mesh=False)


def test_upstream_elements_pass_through_in_order():
    elements = parse_pipeline("builtin.module(inline, func.func(cse,canonicalize), alpa-verify-sharding)")
    assert elements == ["inline", "func.func(cse,canonicalize)", VerifyShardingPass()]


def test_named_pipeline_expands_with_options():
    elements = parse_pipeline("alpa-import-pipeline{mesh-shape=8}")
    assert elements == ["inline", "symbol-dce", LowerPipelineMarkersPass(), ImportShardingPass(mesh_shape=(8,)),
                        FoldBroadcastsPass(), CaptureWhileInvariantsPass(),
                        VerifyShardingPass(mesh_shape=(8,))]


def test_pipeline_text_round_trips():
    text = "builtin.module(inline,alpa-import-sharding{mesh-shape=2,4},alpa-strip-sharding{keep-mesh=true})"
    assert pipeline_text(parse_pipeline(text)) == text
    assert parse_pipeline(pipeline_text(parse_pipeline(text))) == parse_pipeline(text)


def test_parse_options_quotes_and_flags():
    assert parse_options('a=1 b=2,3 c="x y" flag') == [("a", "1"), ("b", "2,3"), ("c", "x y"), ("flag", "")]


@pytest.mark.parametrize("text, message", [
    ("alpa-verify-shardin", "unknown pass 'alpa-verify-shardin' (did you mean 'alpa-verify-sharding'?)"),
    ("alpa-verify-sharding{mesh=2}", "unknown option 'mesh' for alpa-verify-sharding; its options are: "
                                     "mesh-shape, mesh-axes"),
    ("alpa-verify-sharding{mesh-shape=a,b}", "option 'mesh-shape' of alpa-verify-sharding expects list of int"),
    ("alpa-verify-sharding{mesh-shape=0,2}", "non-positive axis size"),
    ("alpa-verify-sharding{mesh-axes=x}", "option 'mesh-axes' needs 'mesh-shape'"),
    ("alpa-strip-sharding{keep-mesh=maybe}", "must be true or false"),
    ("func.func(alpa-verify-sharding)", "list them at the top level"),
    ("builtin.module(alpa-verify-sharding", "expected builtin.module(...)"),
    ("alpa-verify-sharding{mesh-shape=2", "unbalanced brackets"),
    ('alpa-verify-sharding{mesh-shape="2}', "unterminated quote"),
])
def test_pipeline_errors_name_the_problem(text, message):
    with pytest.raises(PipelineError) as info:
        parse_pipeline(text)
    assert message in str(info.value)


def test_lit_run_lines_have_one_shape():
    # `[not] alpa-opt <input> <options> | FileCheck ...`: the input (%s, a path, or - for
    # stdin) first. test/lit/tools/ tests the driver's own argument handling (option
    # order, single dashes) and is left as it is.
    lit = pathlib.Path(__file__).parents[1] / "lit"
    odd = [f"{path.relative_to(lit)}: {line}" for path in sorted(lit.rglob("*.mlir"))
           if path.relative_to(lit).parts[0] not in ("tools", "Output")
           for line in path.read_text().splitlines() if line.startswith("// RUN:")
           for call in re.findall(r"alpa-opt( \S+)?", line) if not re.fullmatch(r" (%s|%S/\S+|-)", call)]
    assert not odd, odd
