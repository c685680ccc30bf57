"""What the passes ask of the layers they may not import, given to them.

A pass declares such a need as a :func:`alpa_mlir.dialect.pass_registry.provided`
field: ``alpa-auto-sharding`` a ``resharding_probe`` (``resharding-costs=xla``: what
XLA's SPMD partitioner emits for a resharding), ``alpa-stage-construction`` a
``stage_timer`` (``cost-model=profile``: how long a planned stage runs), a
``device_profiler`` (``device-profile=local``: this machine's device profile) and a
``dot_timer`` (the same: the dots a search prices, timed once on this machine). The lowering
and the runtime implement them; ``alpa-opt`` and the API give them to every pass they
build with :func:`provide`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from .dialect.pass_registry import Pass, Pipeline, flatten, provided_fields
from .lowering.reshard_probe import resharding_probe
from .runtime.device_profile import local_dot_seconds, local_profile
from .runtime.profiling import time_module

IMPLEMENTATIONS = {"resharding_probe": resharding_probe, "stage_timer": time_module, "device_profiler": local_profile,
                   "dot_timer": local_dot_seconds}


def provide(elements: Iterable[Pass | Pipeline | str]) -> list[Pass | str]:
    """``elements`` as passes (see ``pass_registry.flatten``), each provided field that is
    still unset given its implementation."""
    return [element if isinstance(element, str) else dataclasses.replace(element, **{
        f.name: IMPLEMENTATIONS[f.name] for f in provided_fields(type(element))
        if f.name in IMPLEMENTATIONS and getattr(element, f.name) is None}) for element in flatten(elements)]
