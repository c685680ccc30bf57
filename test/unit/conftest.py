"""Unit-test setup: eight host CPU devices, set before anything imports jax."""

import os

_DEVICE_FLAG = "--xla_force_host_platform_device_count=8"

if _DEVICE_FLAG not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {_DEVICE_FLAG}".strip()
os.environ["JAX_PLATFORMS"] = "cpu"
