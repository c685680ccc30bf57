"""A process of the multi-controller PipeshardParallel tests, started by ``python -m alpa_mlir.runtime.launch``.

Usage: ``pipeshard_step.py train|mlp [gpt] [moe]`` (2 processes x 4 devices). Every
process first prints ``started pid=<pid>``.

* ``train``: an MLP (three layers, ``mark_pipeline_boundary`` between them, 4
  micro-batches) for 3 steps, then the GPT and GShard MoE named after it (Adam, 2
  micro-batches) for 2 steps each, all pipelined over two (1, 4) submeshes of the
  default (2, 4) cluster, so that each process drives one stage. Each step's outputs
  are gathered with ``to_host`` and compared, on every process, with ``jax.jit`` of the
  same step on the process's own device, then fed to the next step as they are (global
  arrays). Prints
  ``OK <model> process <i>``.
* ``mlp``: the MLP for 1 step.

When the environment variable ``PIPESHARD_FAULT`` is set, one more MLP step follows in
which process 1, when it runs stage 1's backward part on micro-batch 1, ends at once
(``exit``: ``os._exit(3)``) or freezes (``stop``: SIGSTOP, a peer that stays connected
but never answers). The MLP runs with ``instruction_timeout=8``.
"""

import os
import signal
import sys
import time

import numpy as np

from alpa_mlir.runtime import distributed

TOLERANCE = {"rtol": 2e-5, "atol": 2e-5}


def run_both(name, step, method, args, steps, state_args):
    """``steps`` steps under ``method`` and under jax.jit, compared on this process; the
    pipelined step and the arguments of the next step."""
    import jax

    from alpa_mlir import parallelize
    from alpa_mlir.pipeshard import to_host

    pipelined = parallelize(step, method=method)
    start = time.perf_counter()
    plan = pipelined.get_plan(*args)
    print(f"{name} compiled in {time.perf_counter() - start:.1f} s", flush=True)
    assert plan.cluster == (2, 4), plan.cluster
    assert [s.devices for s in plan.stages] == [(0, 1, 2, 3), (4, 5, 6, 7)], plan.stages
    # Each process's mesh has a clock of its own (the step model overlaps them), and every
    # process prices the step with the coordinator's profile.
    assert pipelined.get_executable(*args).clocks == {0: 0, 1: 1}
    assert plan.step is not None and plan.step > 0, plan
    reference = jax.jit(step)  # markers are identities under plain jax.jit
    mine, theirs = args, args
    rank = jax.process_index()
    for i in range(steps):
        start = time.perf_counter()
        out_mine, out_theirs = pipelined(*mine), reference(*theirs)
        leaves = jax.tree.leaves(out_mine)
        # JAX's convention: global arrays; this process holds shards of those on its mesh only.
        assert all(isinstance(x, jax.Array) for x in leaves)
        held = sum(bool(x.addressable_shards) for x in leaves)
        assert 0 < held < len(leaves), (held, len(leaves))
        gathered = to_host(out_mine)
        assert jax.tree.structure(gathered) == jax.tree.structure(out_theirs)
        for a, e in zip(jax.tree.leaves(gathered), jax.tree.leaves(out_theirs)):
            np.testing.assert_allclose(a, np.asarray(e), **TOLERANCE)
        print(f"{name} step {i} matches jit on process {rank} ({time.perf_counter() - start:.1f} s)", flush=True)
        mine = (*out_mine[:state_args], *args[state_args:])
        theirs = (*out_theirs[:state_args], *args[state_args:])
    print(f"OK {name} process {rank}", flush=True)
    return pipelined, mine


def run_mlp(steps):
    import jax

    from alpa_mlir.models import MLPConfig, build
    from alpa_mlir.pipeshard import ManualLayerOption, ManualStageOption, PipeshardParallel

    # One jitted init compiles once; an eager init compiles every op (seconds on 2 cores).
    model = build(MLPConfig(sizes=(16, 32, 32, 8), boundaries=True))
    args = jax.jit(model.init, static_argnums=1)(jax.random.key(0), 32)
    method = PipeshardParallel(num_micro_batches=4, layer_option=ManualLayerOption(),
                               stage_option=ManualStageOption((1, 2), ((1, 4), (1, 4))), instruction_timeout=8)
    return run_both("mlp", model.train_step, method, args, steps, state_args=1)


def run_transformer(name):
    """2 steps of the GPT (``gpt``) or GShard MoE (``moe``) model with Adam."""
    import jax

    from alpa_mlir.models import GPTConfig, MoEConfig, build
    from alpa_mlir.pipeshard import AutoLayerOption, ManualStageOption, PipeshardParallel

    config = {"gpt": GPTConfig, "moe": MoEConfig}[name](vocab=64, hidden=32, layers=2, heads=2, seq_len=8)
    model = build(config)
    method = PipeshardParallel(num_micro_batches=2, layer_option=AutoLayerOption(layer_num=2),
                               stage_option=ManualStageOption((1, 1), ((1, 4), (1, 4))), batch_argnums=(2,))
    args = jax.jit(model.init, static_argnums=1)(jax.random.key(2), 8)
    run_both(name, model.train_step, method, args, steps=2, state_args=2)


def fail_next_step(pipelined, args, kind):
    """Run one more step in which process 1 ends (``exit``) or freezes (``stop``) mid-step."""
    import jax

    assert kind in ("exit", "stop"), kind
    executables = pipelined.get_executable(*args).executables
    if jax.process_index() == 1:
        program, calls = executables["stage1_backward"], []

        def faulty(*inputs):
            calls.append(None)
            if len(calls) == 2:  # micro-batch 1
                print(f"fault {kind} on purpose in stage1_backward", flush=True)
                if kind == "exit":
                    os._exit(3)
                os.kill(os.getpid(), signal.SIGSTOP)
            return program(*inputs)

        executables["stage1_backward"] = faulty
    pipelined(*args)
    raise AssertionError("the step with a failed process returned")


def main(mode, transformers):
    distributed.initialize()
    pipelined, args = run_mlp(steps=3 if mode == "train" else 1)
    for name in transformers:
        run_transformer(name)
    if os.environ.get("PIPESHARD_FAULT"):
        fail_next_step(pipelined, args, os.environ["PIPESHARD_FAULT"])


if __name__ == "__main__":
    print(f"started pid={os.getpid()}", flush=True)
    assert sys.argv[1] in ("train", "mlp") and set(sys.argv[2:]) <= {"gpt", "moe"}, sys.argv
    main(sys.argv[1], sys.argv[2:])
