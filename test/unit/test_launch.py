"""Multi-controller mode: ``runtime.distributed`` settings and the local launcher.

The cluster tests start real processes through ``python -m alpa_mlir.runtime.launch``
running ``multiprocess/worker.py`` (2 processes x 4 virtual CPU devices, gloo
collectives); the rest check settings and arguments in this process without starting
a cluster (pytest's process cannot join one: its JAX backend is already running).
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import jax
import pytest

from alpa_mlir.runtime import distributed, launch

WORKER = Path(__file__).parent / "multiprocess" / "worker.py"
LAUNCHER = [sys.executable, "-m", "alpa_mlir.runtime.launch"]
# Generous: the worst case is two JAX imports on a busy 2-core machine.
SAFETY_S = 90


def run_launcher(*args: str) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    result = subprocess.run([*LAUNCHER, *args], capture_output=True, text=True, timeout=SAFETY_S)
    return result, time.monotonic() - start


def started_pids(stdout: str) -> dict[str, int]:
    return {m[1]: int(m[2]) for m in re.finditer(r"^\[(p\d)\] started pid=(\d+)$", stdout, re.M)}


def assert_gone(pid: int) -> None:
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


# ---------------------------------------------------------------- cluster runs


def test_two_processes_share_devices_collectives_and_a_plan():
    result, _ = run_launcher("--num-processes", "2", "--devices-per-process", "4", "--timeout", "60",
                             str(WORKER), "check")
    assert result.returncode == 0, result.stdout + result.stderr
    for rank in (0, 1):
        assert f"[p{rank}] OK process {rank}: ppermute across 8 devices and a 1200000-char plan" in result.stdout


def test_a_process_exiting_non_zero_stops_the_others():
    result, elapsed = run_launcher("--num-processes", "2", "--devices-per-process", "4", str(WORKER), "exit-early")
    assert result.returncode == 3
    assert "process 1 (p1) exited with code 3; stopping p0" in result.stderr
    pids = started_pids(result.stdout)
    assert set(pids) == {"p0", "p1"}
    assert_gone(pids["p0"])
    assert elapsed < 20  # p0 would otherwise wait for p1 in initialize() for 5 minutes


def test_an_exception_after_joining_ends_the_process_at_once():
    # Without initialize()'s exception hook, p1 would wait at JAX's shutdown barrier.
    result, elapsed = run_launcher("--num-processes", "2", "--devices-per-process", "4", str(WORKER), "fail")
    assert result.returncode == 1
    assert "[p1] RuntimeError: failing on purpose" in result.stdout
    assert "process 1 (p1) exited with code 1; stopping p0" in result.stderr
    assert_gone(started_pids(result.stdout)["p0"])
    assert elapsed < 20


def test_a_hanging_cluster_hits_the_timeout():
    result, elapsed = run_launcher("--num-processes", "2", "--timeout", "6", str(WORKER), "hang")
    assert result.returncode == launch.EXIT_TIMEOUT
    assert "timed out after 6 s (--timeout); stopping p0, p1" in result.stderr
    assert "[p0] hanging" in result.stdout and "[p1] hanging" in result.stdout
    for pid in started_pids(result.stdout).values():
        assert_gone(pid)
    assert elapsed < 6 + 10


def test_ctrl_c_stops_every_process():
    # A test run started in the background (`cmd &`) ignores SIGINT, and so would the
    # launcher it starts (Python keeps an inherited SIG_IGN): give it the default.
    proc = subprocess.Popen([*LAUNCHER, "--num-processes", "2", str(WORKER), "hang"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        lines = read_until(proc, lambda lines: sum("hanging" in line for line in lines) == 2)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=15)
        stderr = proc.stderr.read()
    finally:
        proc.kill()
    assert proc.returncode == launch.EXIT_INTERRUPTED
    assert "interrupted; stopping all processes" in stderr
    for pid in started_pids("\n".join(lines)).values():
        assert_gone(pid)


def read_until(proc: subprocess.Popen, done, timeout_s: float = SAFETY_S) -> list[str]:
    """Lines of ``proc``'s stdout until ``done(lines)`` holds.

    A thread reads: a selector would miss lines already in the pipe's Python buffer.
    """
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    seen: list[str] = []
    deadline = time.monotonic() + timeout_s
    while not done(seen):
        line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        assert line is not None, f"the launcher closed its output early: {seen}"
        seen.append(line)
    return seen


# ---------------------------------------------------------------- launcher arguments


@pytest.mark.parametrize("args, option", [
    (["--num-processes", "0", "x.py"], "--num-processes"),
    (["--num-processes", "two", "x.py"], "--num-processes"),
    (["--num-processes", "2", "--devices-per-process", "0", "x.py"], "--devices-per-process"),
    (["--num-processes", "2", "--coordinator", "localhost", "x.py"], "--coordinator"),
    (["--num-processes", "2", "--timeout", "-1", "x.py"], "--timeout"),
    (["--num-processes", "2", "--cpus-per-process", "0", __file__], "--cpus-per-process"),
    (["--num-processes", "1", "--cpus-per-process", str(len(os.sched_getaffinity(0)) + 1), __file__],
     "--cpus-per-process"),
    (["x.py"], "--num-processes"),
    (["--num-processes", "2", "no/such/script.py"], "script"),
])
def test_argument_errors_name_the_option(args, option, capsys):
    with pytest.raises(SystemExit) as exit_info:
        launch.main(args)
    assert exit_info.value.code == 2
    assert option in capsys.readouterr().err


def test_cpus_per_process_gives_each_process_cpus_of_its_own(tmp_path):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs 2 CPUs")
    script = tmp_path / "affinity.py"
    script.write_text("import os, jax; jax.numpy.ones(2).block_until_ready(); print(sorted(os.sched_getaffinity(0)))\n")
    # A launcher process of its own: it sets the affinity between fork and exec, which
    # wants a single-threaded parent (pytest's has JAX's threads).
    result, _ = run_launcher("--num-processes", "2", "--cpus-per-process", "1", str(script))
    assert result.returncode == 0, result.stdout + result.stderr
    first, second = sorted(os.sched_getaffinity(0))[:2]
    assert f"[p0] [{first}]" in result.stdout and f"[p1] [{second}]" in result.stdout
    assert f"p0 runs on CPU {first}" in result.stderr and f"p1 runs on CPU {second}" in result.stderr


def test_cpu_sets_are_disjoint_and_lowest_first():
    assert launch.cpu_sets(2, 2, {5, 0, 3, 1, 2}) == [{0, 1}, {2, 3}]
    with pytest.raises(ValueError, match=r"--cpus-per-process 2: 3 processes need 6 CPUs, and this launcher may "
                                         r"run on 5 \(CPUs 0, 1, 2, 3, 5\)"):
        launch.cpu_sets(3, 2, {5, 0, 3, 1, 2})


def test_script_arguments_pass_through_untouched(tmp_path, capsys):
    script = tmp_path / "echo_args.py"
    script.write_text("import sys; print(sys.argv[1:])\n")
    assert launch.main(["--num-processes", "1", str(script), "--timeout", "x"]) == 0
    assert "[p0] ['--timeout', 'x']" in capsys.readouterr().out


def test_process_env_sets_the_cluster_and_replaces_the_device_count():
    base = {"XLA_FLAGS": "--xla_dump_to=/tmp/d --xla_force_host_platform_device_count=8", "HOME": "/h"}
    env = launch.process_env(base, "localhost:1234", 3, 2, 4)
    assert env[distributed.ENV_COORDINATOR] == "localhost:1234"
    assert env[distributed.ENV_NUM_PROCESSES] == "3"
    assert env[distributed.ENV_PROCESS_ID] == "2"
    assert env[distributed.ENV_LOCAL_DEVICES] == "4"
    assert env["JAX_PLATFORMS"] == "cpu"
    assert env["XLA_FLAGS"] == "--xla_dump_to=/tmp/d --xla_force_host_platform_device_count=4"
    assert env["HOME"] == "/h" and base["XLA_FLAGS"].endswith("=8")


# ---------------------------------------------------------------- initialize() settings


@pytest.fixture
def no_cluster_env(monkeypatch):
    for name in (distributed.ENV_COORDINATOR, distributed.ENV_NUM_PROCESSES, distributed.ENV_PROCESS_ID,
                 distributed.ENV_LOCAL_DEVICES):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize("kwargs, argument, env", [
    ({}, "coordinator_address", "ALPA_COORDINATOR"),
    ({"coordinator_address": "localhost:1"}, "num_processes", "ALPA_NUM_PROCESSES"),
    ({"coordinator_address": "localhost:1", "num_processes": 2}, "process_id", "ALPA_PROCESS_ID"),
])
def test_a_missing_setting_names_the_argument_and_the_variable(no_cluster_env, kwargs, argument, env):
    with pytest.raises(ValueError, match=f"`{argument}`.*{env}"):
        distributed.initialize(**kwargs)


@pytest.mark.parametrize("env, message", [
    ({"ALPA_NUM_PROCESSES": "two"}, "`num_processes` .*ALPA_NUM_PROCESSES.* must be an integer, got 'two'"),
    ({"ALPA_PROCESS_ID": "2"}, "`process_id` .*is 2 but must be below `num_processes`"),
    ({"ALPA_LOCAL_DEVICES": "0"}, "`local_device_count` .*must be at least 1"),
    ({"ALPA_COORDINATOR": "localhost"}, "must be host:port"),
])
def test_malformed_settings_from_the_environment(no_cluster_env, env, message):
    settings = {"ALPA_COORDINATOR": "localhost:1", "ALPA_NUM_PROCESSES": "2", "ALPA_PROCESS_ID": "0", **env}
    for name, value in settings.items():
        no_cluster_env.setenv(name, value)
    with pytest.raises(ValueError, match=message):
        distributed.initialize()


def test_initialize_after_the_backend_started_says_what_to_do(no_cluster_env):
    have = len(jax.local_devices(backend="cpu"))  # starts the backend, as any JAX call would
    with pytest.raises(RuntimeError, match=f"already initialised with {have} CPU devices, but 3 were asked for"):
        distributed.initialize("localhost:1", 2, 0, local_device_count=3)
    with pytest.raises(RuntimeError, match="before any JAX computation"):
        distributed.initialize("localhost:1", 2, 0)
    assert not distributed.is_multi_controller()


def test_a_single_controller_shares_strings_with_itself():
    assert not distributed.is_multi_controller()
    assert distributed.broadcast_string("plan", "{}") == "{}"
    info = distributed.process_info()
    assert (info.process_id, info.num_processes, info.is_coordinator) == (0, 1, True)
    assert info.local_devices == tuple(jax.local_devices())
    with pytest.raises(RuntimeError, match="call alpa_mlir.runtime.distributed.initialize"):
        distributed.fetch("plan", timeout_s=1)
    with pytest.raises(ValueError, match="passed no value"):
        distributed.broadcast_string("plan", None)
