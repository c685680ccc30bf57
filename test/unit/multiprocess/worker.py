"""A process of the launcher tests, started by ``python -m alpa_mlir.runtime.launch``.

Usage: ``worker.py check|exit-early|fail|hang``. Every process first prints
``started pid=<pid>`` so that tests can check it is gone afterwards.

* ``check``: joins the cluster, checks the global device view, runs a ring ``ppermute``
  across all devices (so values cross between processes over gloo) and shares a string
  from process 0; prints ``OK`` at the end.
* ``exit-early``: the last process exits with code 3 before joining the cluster, so the
  others wait in ``initialize()`` (the launcher must stop them).
* ``fail``: joins the cluster; the last process raises while the others wait for a value
  that never comes. ``initialize()`` makes the failed process exit with code 1 at once
  rather than wait at JAX's shutdown barrier.
* ``hang``: joins the cluster, then every process waits forever.
"""

import os
import sys
import time

if __name__ == "__main__":  # before importing jax: a process the launcher stops early has printed it
    print(f"started pid={os.getpid()}", flush=True)

import numpy as np  # noqa: E402

from alpa_mlir.runtime import distributed  # noqa: E402


def check() -> None:
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    distributed.initialize()
    distributed.initialize()  # the same settings again: a no-op
    info = distributed.process_info()
    assert distributed.is_multi_controller()
    assert jax.process_count() == 2 == info.num_processes, jax.process_count()
    assert len(jax.devices()) == 8, jax.devices()
    assert len(info.local_devices) == 4, info.local_devices
    assert all(d.process_index == info.process_id for d in info.local_devices)

    try:
        distributed.initialize(process_id=1 - info.process_id)
    except RuntimeError as error:
        assert "already joined" in str(error), error
    else:
        raise AssertionError("rejoining with another process id must fail")
    try:
        distributed.initialize(local_device_count=2)
    except RuntimeError as error:
        assert "already runs with 4 CPU devices" in str(error), error
    else:
        raise AssertionError("rejoining with another device count must fail")

    n = len(jax.devices())
    mesh = Mesh(np.array(jax.devices()), ("x",))
    sharding = NamedSharding(mesh, PartitionSpec("x"))
    values = np.arange(n, dtype=np.float32) * 10
    x = jax.make_array_from_callback((n,), sharding, lambda index: values[index])
    ring = [(i, (i + 1) % n) for i in range(n)]  # 3 -> 4 and 7 -> 0 cross processes

    @jax.jit
    def shift(a):
        return jax.shard_map(lambda b: jax.lax.ppermute(b, "x", ring), mesh=mesh,
                             in_specs=PartitionSpec("x"), out_specs=PartitionSpec("x"))(a)

    out = shift(x)
    expected = np.roll(values, 1)
    for shard in out.addressable_shards:
        np.testing.assert_array_equal(np.asarray(shard.data), expected[shard.index])

    plan = "plan" * 300_000 if info.is_coordinator else None  # 1.2 MB, a plan-sized string
    shared = distributed.broadcast_string("test/plan", plan, timeout_s=60)
    assert shared == "plan" * 300_000, len(shared)
    if info.is_coordinator:
        try:
            distributed.publish("test/plan", "another plan")
        except RuntimeError as error:
            assert "already published" in str(error), error
        else:
            raise AssertionError("publishing a key twice must fail")
    try:
        distributed.fetch("test/never-published", timeout_s=0.5)
    except TimeoutError as error:
        assert "test/never-published" in str(error), error
    else:
        raise AssertionError("fetching an unpublished key must time out")
    print(f"OK process {info.process_id}: ppermute across {n} devices and a {len(shared)}-char plan")


def exit_early() -> None:
    if int(os.environ[distributed.ENV_PROCESS_ID]) == int(os.environ[distributed.ENV_NUM_PROCESSES]) - 1:
        print("exiting on purpose", flush=True)
        sys.exit(3)
    distributed.initialize()


def fail() -> None:
    distributed.initialize()
    info = distributed.process_info()
    if info.process_id == info.num_processes - 1:
        raise RuntimeError("failing on purpose")
    distributed.fetch("test/never-published", timeout_s=600)


def hang() -> None:
    distributed.initialize()
    print("hanging", flush=True)
    time.sleep(600)


if __name__ == "__main__":
    {"check": check, "exit-early": exit_early, "fail": fail, "hang": hang}[sys.argv[1]]()
