"""Plans as plain data: what the passes decide and the lowering and runtime carry out
(resharding plans, pipeline schedules), tested with pytest alone. Imports only
``dialect`` (see ``test/unit/test_layers.py``)."""
