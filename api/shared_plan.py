"""One plan for every process of a pipelined step: process 0 compiles it, the others take what it publishes.

With several processes (one per host, after ``alpa_mlir.runtime.distributed.initialize()``)
every process calls the step with the same arguments. Process 0 alone runs the passes and
publishes the compiled module and plan in the coordination service's key-value store
(``runtime.distributed.publish``), keyed by a hash of the traced module, the options and
the devices; the others parse what it published (a step compiled again finds its key
taken and uses the first plan). Re-running the search on every process would work only as
long as the whole compiler (ILP solver, DPs, their tie-breaking) is deterministic across
processes, and a single difference would leave processes waiting in different
collectives; one published plan removes the question. A compile error on process 0 is
published too, so every process raises it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

import jax

from .pipeline import AutoShardingError
from .plans.pipeline_plan import PipelinePlan
from .runtime import distributed

# How long processes wait for process 0's plan (the search can take a while at scale).
PLAN_TIMEOUT_S = 3600.0


def shared_plan(identity: str, compile_step: Callable[[], tuple[str, PipelinePlan]],
                name: str) -> tuple[str, PipelinePlan]:
    """The compiled module's text and the plan ``compile_step`` gives on process 0, on every
    process; ``identity``: what tells this compilation from others (the traced module, the
    options, the devices); ``name``: the step's, for errors."""
    key = "pipeshard/" + hashlib.sha256(identity.encode()).hexdigest()[:32]
    if jax.process_index() == 0:
        try:
            text, plan = compile_step()
        except Exception as error:
            _publish_or_fetch(key, json.dumps({"error": f"{type(error).__name__}: {error}"}))
            raise
        payload = _publish_or_fetch(key, json.dumps({"module": text, "plan": plan.to_json()}))
    else:
        try:
            payload = distributed.fetch(key, PLAN_TIMEOUT_S)
        except TimeoutError:
            raise TimeoutError(f"pipelining {name}: process 0 published no plan within {PLAN_TIMEOUT_S:g} s; check "
                               "that it is alive and runs the same step with the same arguments and options") from None
    shared = json.loads(payload)
    if "error" in shared:
        raise AutoShardingError(f"pipelining {name}: process 0 could not compile the step: {shared['error']}")
    return shared["module"], PipelinePlan.from_json(shared["plan"])


def _publish_or_fetch(key: str, payload: str) -> str:
    """Publish ``payload`` under ``key``, or, if the same step was compiled before, what was
    published then (every process must use the same)."""
    try:
        distributed.publish(key, payload)
        return payload
    except RuntimeError as error:
        if "already published" not in str(error):
            raise
        return distributed.fetch(key, PLAN_TIMEOUT_S)
