"""The sharding passes agree with JAX: importing what its Shardy path emits gives what its
GSPMD path emits, and exporting gives the Shardy text back, for every sharding of a
rank-2 argument on a 2x4 mesh."""

from __future__ import annotations

import itertools
import re

import jax
import jax.numpy as jnp
import pytest
from jax._src.lib import xla_client
from jax._src.lib.mlir import ir
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from alpa_mlir.dialect import make_context
from alpa_mlir.passes import PipelineError, run_pipeline


def _partition_specs():
    """Every PartitionSpec of a rank-2 value on mesh axes (x, y)."""
    entries = [None, "x", "y", ("x", "y"), ("y", "x")]
    for a, b in itertools.product(entries, repeat=2):
        used = [n for e in (a, b) if e for n in ((e,) if isinstance(e, str) else e)]
        if len(used) == len(set(used)):
            yield P(a, b)


SPECS = list(_partition_specs())


def _lower(spec: P, shardy: bool) -> str:
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    sharding = NamedSharding(mesh, spec)
    previous = jax.config.jax_use_shardy_partitioner
    jax.config.update("jax_use_shardy_partitioner", shardy)
    try:
        return jax.jit(lambda a: jnp.sin(a) * 2, in_shardings=sharding,
                       out_shardings=sharding).lower(jnp.ones((8, 8))).as_text()
    finally:
        jax.config.update("jax_use_shardy_partitioner", previous)


def _arg_attr(text: str, name: str) -> str:
    match = re.search(rf'%arg0: tensor<8x8xf32> \{{{re.escape(name)} = ("[^"]*"|#sdy\.sharding<[^>]*>)', text)
    assert match, text
    return match.group(1).strip('"')


def _run(text: str, pipeline: str) -> str:
    with make_context():
        module = ir.Module.parse(text)
        run_pipeline(module, pipeline)
        return str(module)


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_import_of_shardy_matches_gspmd(spec):
    imported = _run(_lower(spec, shardy=True), "builtin.module(alpa-import-sharding)")
    expected = _arg_attr(_lower(spec, shardy=False), "mhlo.sharding")
    got = _arg_attr(imported, "mhlo.sharding")
    assert xla_client.HloSharding.from_string(got) == xla_client.HloSharding.from_string(expected)
    assert got == expected  # the same canonical text, not only the same sharding


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_export_restores_shardy(spec):
    original = _lower(spec, shardy=True)
    roundtrip = _run(original, "builtin.module(alpa-import-sharding, alpa-export-sdy)")
    assert _arg_attr(roundtrip, "sdy.sharding") == _arg_attr(original, "sdy.sharding")


def test_gspmd_import_with_mesh_option_is_a_fixed_point():
    """Importing GSPMD output with the mesh named, then importing again, changes nothing."""
    text = _lower(P("y", "x"), shardy=False)
    once = _run(text, "builtin.module(alpa-import-sharding{mesh-shape=2,4})")
    assert _run(once, "builtin.module(alpa-import-sharding)") == once


def test_run_pipeline_reports_bad_pipeline():
    with make_context():
        module = ir.Module.parse("module {}")
        with pytest.raises(PipelineError, match="unknown option 'mesh' for alpa-verify-sharding"):
            run_pipeline(module, "builtin.module(alpa-verify-sharding{mesh=2})")


def test_import_pipeline_inlines_calls_through_the_api():
    """make_context() registers the func inliner, so `inline` works outside alpa-opt too."""
    text = """
    func.func private @callee(%a: tensor<4xf32>) -> tensor<4xf32> {
      %0 = stablehlo.negate %a : tensor<4xf32>
      return %0 : tensor<4xf32>
    }
    func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      %0 = call @callee(%a) : (tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }"""
    result = _run(text, "builtin.module(alpa-import-pipeline)")
    assert "call @callee" not in result and "@callee" not in result
    assert "stablehlo.negate %arg0" in result
