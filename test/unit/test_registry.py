"""The pass registry: typed options in MLIR syntax, pipeline parsing and printing."""

from __future__ import annotations

import pytest

import alpa_mlir.lowering  # noqa: F401  (registers XLA's workaround passes)
from alpa_mlir.dialect.pass_registry import parse_options, pipeline_text, registered
from alpa_mlir.passes import PipelineError, parse_pipeline
from alpa_mlir.passes.export.strip_sharding import StripShardingPass
from alpa_mlir.passes.imports.capture_while_invariants import CaptureWhileInvariantsPass
from alpa_mlir.passes.imports.fold_broadcasts import FoldBroadcastsPass
from alpa_mlir.passes.imports.import_sharding import ImportShardingPass
from alpa_mlir.passes.imports.lower_pipeline_markers import LowerPipelineMarkersPass
from alpa_mlir.passes.imports.verify_sharding import VerifyShardingPass


def test_every_pass_has_a_spec_and_prefix():
    for name, cls in registered().items():
        assert name.startswith("alpa-")
        assert cls.__doc__ and len(cls.__doc__.strip().splitlines()[0]) > 10


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
