"""Command-line tools: ``alpa-opt``."""
