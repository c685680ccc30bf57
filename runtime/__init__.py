"""Mesh executables and the multi-controller runtime."""
