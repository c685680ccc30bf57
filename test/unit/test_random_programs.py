"""Random programs over the rules' op families, planned by ShardParallel and compared with jax.jit.

Every program (``random_programs.generate``) runs on the mesh its seed picks: (2, 4),
(8,) or (2, 2, 2). Exact values (integers, and floats computed without rounding) must
match bit for bit; rounded floats within a tolerance of their dtype. A failure prints
the program; ``generate(seed, FAMILIES).describe()`` prints it again.

Each program is planned, compiled and run alone, so a failing seed reproduces by
itself. (Planning and running the 20 programs of a mesh as one function saved only a
tenth of the time: XLA's compile time grows with the ops, not per call.)
"""

from __future__ import annotations

import jax
import numpy as np
import pytest
from random_program_ops import FAMILIES
from random_programs import BF16, Program, generate

import alpa_mlir

FIRST_SEED = 11_000
PROGRAMS = 6 * len(FAMILIES)  # every (family, mesh) pair twice
TOLERANCE = {np.dtype(np.float32): 1e-5, BF16: 2.0**-4}


def _check(program: Program, expected: tuple[jax.Array, ...], got: tuple[jax.Array, ...]) -> None:
    for number, (output, want, have) in enumerate(zip(program.outputs, expected, got, strict=True)):
        value = program.values[output]
        want, have = np.asarray(want), np.asarray(have)
        message = f"output {number} (v{output}) of\n{program.describe()}"
        assert have.shape == want.shape and have.dtype == want.dtype, message
        if value.dtype == BF16:  # numpy compares NaNs as equal only in its own float types
            want, have = want.astype(np.float32), have.astype(np.float32)
        if value.exact:
            np.testing.assert_array_equal(have, want, err_msg=message)
            continue
        tolerance = TOLERANCE[value.dtype]
        scale = max(1.0, float(np.max(np.abs(want), initial=0.0, where=~np.isnan(want))))
        np.testing.assert_allclose(have, want, rtol=tolerance, atol=tolerance * scale, err_msg=message)


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + PROGRAMS),
                         ids=lambda seed: f"program{seed - FIRST_SEED:03d}-seed{seed}")
def test_random_program_matches_jax_jit(seed: int) -> None:
    program = generate(seed, FAMILIES)
    expected = jax.jit(program.fn(reference=True))(*program.args)
    method = alpa_mlir.ShardParallel(mesh_shape=program.mesh_shape)
    got = alpa_mlir.parallelize(program.fn(), method=method, batch_argnums=())(*program.args)
    _check(program, expected, got)
