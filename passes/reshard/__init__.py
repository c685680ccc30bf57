"""Cross-mesh resharding (Sec. 6): tile plans and the ``alpa-cross-mesh-resharding`` pass."""
