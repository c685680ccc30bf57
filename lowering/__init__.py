"""From annotated modules to XLA executables (filled by the intra-op and pipeline issues)."""
