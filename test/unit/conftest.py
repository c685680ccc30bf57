"""Unit-test setup: eight host CPU devices, set before anything imports jax."""

import os

_DEVICE_FLAG = "--xla_force_host_platform_device_count=8"

# LLVM's optimisation level only (as benchmarks/plan_quality.py compiles): the HLO passes (the
# SPMD partitioner, collective combiners, fusion, buffer assignment) are the same, so are the
# collectives, FLOPs, memory and results the tests check; XLA:CPU compiles in about 3/4 the time.
_OPT_FLAG = "--xla_backend_optimization_level=0"

for _flag in (_DEVICE_FLAG, _OPT_FLAG):
    if _flag.split("=")[0] not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {_flag}".strip()
os.environ["JAX_PLATFORMS"] = "cpu"

# The device profile PipeshardParallel measures (once per device count) goes to a directory of
# this test session's, not to the user's cache; subprocesses of the tests inherit it.
if "ALPA_MLIR_CACHE_DIR" not in os.environ:
    import tempfile

    os.environ["ALPA_MLIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="alpa-mlir-test-cache-")
