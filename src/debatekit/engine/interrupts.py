"""Signals are the user's: Ctrl-C (SIGINT) and SIGTERM stop a run, never a player's move.

Within :func:`interruptible` (the command line's main thread), the first SIGINT or SIGTERM sets a
process-wide stop flag and raises :class:`Interrupted` in the main thread. ``Interrupted`` is a
``BaseException`` that is neither ``KeyboardInterrupt`` nor ``SystemExit``, so no forfeit handler
takes it for a player's failure (a player's own ``raise KeyboardInterrupt`` stays its forfeit,
:class:`~debatekit.engine.play.Exited`). Worker threads, which signals do not reach, check the
flag (:func:`stop_if_asked`) between moves. A run that stops hands what it finished back on the
exception (``result``), for the command to summarise before it exits 128 + the signal's number.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)
_stop = threading.Event()
_signal = [int(signal.SIGINT)]  # the signal that set the flag


class Interrupted(BaseException):
    """The process was asked to stop by ``signum``; ``result`` is what the run finished (a
    :class:`~debatekit.analysis.montecarlo.RunResult`, or None when no debate finished)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.result: Any = None

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def stopping() -> bool:
    """Whether a signal asked the run to stop."""
    return _stop.is_set()


def stop_if_asked() -> None:
    """Raise :class:`Interrupted` when a signal asked the run to stop (for worker threads and loops)."""
    if _stop.is_set():
        raise Interrupted(_signal[0])


_held = [0]  # how many held() blocks the main thread is in


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Within: a signal only sets the stop flag, and :class:`Interrupted` is raised on leaving, so
    what is being written (a finished debate's summary and record) is written whole."""
    _held[0] += 1
    try:
        yield
    finally:
        _held[0] -= 1
    stop_if_asked()


def _handle(signum: int, frame: Any) -> None:
    if _stop.is_set():  # already stopping: let the clean-up finish
        return
    _signal[0] = signum
    _stop.set()
    if not _held[0]:
        raise Interrupted(signum)


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """Within: SIGINT and SIGTERM stop the work (module docstring); outside the main thread, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in SIGNALS}
    for signum in SIGNALS:
        signal.signal(signum, _handle)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _stop.clear()
