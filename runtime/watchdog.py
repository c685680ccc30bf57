"""A watchdog for a step's instructions: ends the process when one makes no progress.

With several processes, a peer that stops without dying leaves a collective waiting
forever, and the waiting thread cannot be interrupted; see ``runtime/pipeshard.py``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable

EXIT_STEP_TIMEOUT = 124


class Watchdog:
    """Ends the process when the instruction it watches runs past ``timeout_s``.

    The main thread may be blocked inside a collective whose peer is gone, where no
    Python exception can reach it; so a daemon thread prints where the step was
    (``where(*position)``) and exits with :data:`EXIT_STEP_TIMEOUT`, skipping exit
    handlers (they would wait for the peers at JAX's shutdown barrier).
    """

    def __init__(self, timeout_s: float, where: Callable[..., str]) -> None:
        self.timeout_s, self.where = timeout_s, where
        self._lock = threading.Condition()
        self._position: tuple | None = None
        self._deadline = 0.0
        threading.Thread(target=self._run, name="alpa-pipeshard-watchdog", daemon=True).start()

    def watch(self, position: tuple | None) -> None:
        """Start the clock for ``position`` (``None``: the step is over)."""
        with self._lock:
            self._position, self._deadline = position, time.monotonic() + self.timeout_s
            self._lock.notify()

    def _run(self) -> None:
        with self._lock:
            while True:
                left = self._deadline - time.monotonic()
                if self._position is None or left > 0:
                    self._lock.wait(None if self._position is None else left)
                    continue
                sys.stdout.flush()
                sys.stderr.write(f"alpa_mlir: pipeshard step made no progress for {self.timeout_s:g} s at "
                                 f"{self.where(*self._position)}; a peer process has probably stopped or died, or a "
                                 f"transfer never completed. Ending this process (exit code {EXIT_STEP_TIMEOUT}); "
                                 "raise instruction_timeout if the instruction is merely slow.\n")
                sys.stderr.flush()
                os._exit(EXIT_STEP_TIMEOUT)
