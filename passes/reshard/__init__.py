"""Cross-mesh resharding (Sec. 6): the ``alpa-cross-mesh-resharding`` pass (the tile
plans are ``plans.reshard_plan``)."""
