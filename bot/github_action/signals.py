"""SIGTERM handled as SIGINT: the run stops where it is with `KeyboardInterrupt`.

In the container prbot is PID 1, and the kernel delivers no signal to PID 1 for which it has no
handler: without one, `docker stop` (and a cancelled job) would wait for the kill while the run went
on to its own timeouts. Signals reach only the main thread; elsewhere nothing is installed.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextmanager
def stop_on_terminate() -> Iterator[None]:
    """SIGTERM and SIGINT raise `KeyboardInterrupt` while the block runs (SIGINT too: a process
    started with SIGINT ignored would otherwise ignore it); the previous handlers come back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.signal(number, _interrupt) for number in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
