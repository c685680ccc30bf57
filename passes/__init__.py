"""Pass registry and passes."""
