"""Unit-test setup: eight host CPU devices, set before anything imports jax."""

import os

_DEVICE_FLAG = "--xla_force_host_platform_device_count=8"

if _DEVICE_FLAG not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {_DEVICE_FLAG}".strip()
os.environ["JAX_PLATFORMS"] = "cpu"

# The device profile PipeshardParallel measures (once per device count) goes to a directory of
# this test session's, not to the user's cache; subprocesses of the tests inherit it.
if "ALPA_MLIR_CACHE_DIR" not in os.environ:
    import tempfile

    os.environ["ALPA_MLIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="alpa-mlir-test-cache-")
