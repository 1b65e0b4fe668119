"""The transport of the process boundary (issue 20): frames between the engine and one worker
through a memory both map, with a pipe each way to wake a side that sleeps.

The memory (a Linux ``memfd``, elsewhere an unlinked temporary file, passed to the worker when it
starts) holds two boxes, the engine's to the worker and the worker's to the engine, each a header
and :data:`CHUNK` bytes. A side sends a frame by writing its bytes, then its length and kind, then
the box's sequence number; the other side, watching that number, copies the bytes out once and
reads only its copy, so a sender that goes on writing changes nothing that was read. A frame longer
than a box crosses in chunks, each acknowledged before the next is written. A receiver bounds the
frame (:class:`~debatekit.engine.wire.WireError` past its limit) and checks every length it reads.

A waiting side polls the memory for up to ``spin`` seconds, giving its CPU away between polls
(``os.sched_yield``: a batch's calls follow each other within microseconds, and a sleeping side's
wake-up costs tens), then sleeps on its pipe with its flag set in the memory, and the sender, seeing
the flag, writes a byte there. A pipe that ends is a side that is gone (:class:`Closed`): the
worker's death, or the engine's. Each flag and sequence number is stored and read across a
:func:`fence`, so a CPU that reorders memory (ARM) cannot show a number before the bytes it
announces; a sleeper also wakes every :data:`RECHECK` seconds, so a wake-up lost all the same
costs time, never a move.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import select
import tempfile
import threading
import time
from collections.abc import Callable, Iterable

from debatekit.engine.wire import WireError

CHUNK = 1 << 20
"""Bytes of one box: a batch's call of 4,096 debates (its arrays and those answered ahead) is one chunk."""
RECHECK = 0.01
"""Seconds a sleeping side waits on its pipe before it looks at the memory again."""
EAGER = 2e-5
"""Seconds a waiting side polls without giving its CPU away: a reply of a few microseconds is seen
at once (a poll that yields costs a system call, and on a busy core another process's turn)."""
_LINE = 64
"""A header's bytes (a cache line: the two sides' headers never share one)."""
SIZE = _LINE + 2 * (_LINE + CHUNK)
"""The memory's bytes: the sleep flags, then each box's header and data."""
Buffer = bytes | bytearray | memoryview
"""A part of a frame: bytes in order (a memoryview of unsigned bytes)."""
_give_way: Callable[[], None] = getattr(os, "sched_yield", lambda: None)
"""The CPU given to whoever waits for it, between polls (a system without it polls on)."""


class Closed(Exception):
    """The other side is gone: its end of the wake pipe closed."""


class TimedOut(Exception):
    """The deadline passed while waiting for the other side."""


def memory() -> int:
    """A new memory for one worker: a file descriptor of :data:`SIZE` bytes, zeroed."""
    make = getattr(os, "memfd_create", None)
    if make is not None:
        fd = make("debatekit-worker", 0)
    else:  # not Linux: a temporary file, unlinked, which only the engine and its worker hold
        with tempfile.TemporaryFile() as file:
            fd = os.dup(file.fileno())
    os.ftruncate(fd, SIZE)
    return fd


_FENCE = threading.Lock()


def fence() -> None:
    """A full memory barrier: a lock taken and released twice (a release, then an acquire, orders
    every store before it ahead of every load after it, on x86 and ARM alike)."""
    with _FENCE:
        pass
    with _FENCE:
        pass


class Link:
    """One side's end of a worker's memory: its box out and its box in, its wake pipes.

    ``engine`` says which side this is; ``wake_in`` is the pipe this side sleeps on and ``wake_out``
    the other side's, both non-blocking."""

    _SEQ, _LENGTH, _MORE, _KIND, _ACK = range(5)
    """Slots of a box's header (8 bytes each)."""

    def __init__(self, fd: int, wake_in: int, wake_out: int, engine: bool):
        self._map = mmap.mmap(fd, SIZE)
        self.wake_in, self.wake_out = wake_in, wake_out
        os.set_blocking(wake_in, False)
        os.set_blocking(wake_out, False)
        words = memoryview(self._map).cast("q")
        data = memoryview(self._map)
        boxes = [_LINE, 2 * _LINE + CHUNK]  # the engine's box, then the worker's
        out, into = boxes if engine else boxes[::-1]
        self._words = words
        self._out, self._in = out // 8, into // 8
        self._out_data, self._in_data = (
            data[out + _LINE : out + _LINE + CHUNK],
            data[into + _LINE : into + _LINE + CHUNK],
        )
        self._mine, self._theirs = (0, 1) if engine else (1, 0)
        self._sent = self._seen = 0

    def send(self, parts: Iterable[Buffer], kind: int, deadline: float | None, spin: float) -> None:
        """Write a frame made of ``parts`` (its bytes in order, each of unsigned bytes) of ``kind``
        into the box out, in chunks when it is longer than one, each acknowledged before the next
        (:class:`TimedOut` past ``deadline``, :class:`Closed` when the other side is gone)."""
        data, at = self._out_data, 0
        for part in parts:
            size = len(part)
            if at + size <= CHUNK:  # the whole part fits: one copy
                data[at : at + size] = part
                at += size
                continue
            view = memoryview(part)
            while view:
                if at == CHUNK:  # the box is full and more follows: it crosses, and is read, first
                    self._post(CHUNK, kind, 1)
                    sent, ack = self._sent, self._out + self._ACK
                    self._until(lambda: self._words[ack] == sent, deadline, spin)  # noqa: B023
                    at = 0
                n = min(len(view), CHUNK - at)
                data[at : at + n] = view[:n]
                at += n
                view = view[n:]
        self._post(at, kind, 0)

    def _post(self, length: int, kind: int, more: int) -> None:
        words, out = self._words, self._out
        words[out + self._LENGTH], words[out + self._MORE], words[out + self._KIND] = length, more, kind
        fence()
        self._sent += 1
        words[out + self._SEQ] = self._sent
        self._wake()

    def _wake(self) -> None:
        """A byte down the other side's pipe, where it sleeps (a full pipe wakes it as well)."""
        fence()
        if self._words[self._theirs]:
            try:
                os.write(self.wake_out, b"\0")
            except BlockingIOError:
                pass
            except OSError:  # the pipe's reader is gone
                raise Closed from None

    def receive(self, limit: int, deadline: float | None, spin: float) -> tuple[int, bytes]:
        """The next frame in the box in, as its kind and a copy of its bytes; :class:`WireError`
        when a length breaks the box or the frame passes ``limit`` bytes."""
        words, into, chunks, total = self._words, self._in, [], 0
        seq = into + self._SEQ
        while True:
            seen = self._seen
            if words[seq] == seen:  # not yet there (a reply already posted is read at once)
                self._until(lambda: words[seq] != seen, deadline, spin)  # noqa: B023
            self._seen = words[seq]
            fence()
            length, more, kind = words[into + self._LENGTH], words[into + self._MORE], words[into + self._KIND]
            if not 0 <= length <= CHUNK:
                raise WireError(f"a chunk of {length} bytes (a box holds {CHUNK})")
            total += length
            if total > limit:
                raise WireError(f"a frame of more than {limit} bytes (at most {limit})")
            chunks.append(bytes(self._in_data[:length]))
            if not more:
                return kind, chunks[0] if len(chunks) == 1 else b"".join(chunks)
            if deadline is not None and time.monotonic() > deadline:  # chunk after chunk, and past the limit
                raise TimedOut
            words[into + self._ACK] = self._seen
            self._wake()

    def _until(self, ready: Callable[[], bool], deadline: float | None, spin: float) -> None:
        """Return once ``ready()``: polled without pause for :data:`EAGER` seconds, then, giving
        the CPU away between polls, until the time ``spin`` (``time.perf_counter``), then asleep
        on the pipe, woken by the other side or every :data:`RECHECK` seconds."""
        if ready():
            return
        now = time.perf_counter()
        eager = min(now + EAGER, spin)
        while now < eager:
            if ready():
                return
            now = time.perf_counter()
        words, mine = self._words, self._mine
        while not ready():
            if time.perf_counter() < spin and (deadline is None or time.monotonic() < deadline):
                _give_way()
                continue
            left = RECHECK if deadline is None else min(RECHECK, deadline - time.monotonic())
            if left <= 0:
                raise TimedOut
            words[mine] = 1
            fence()
            try:
                if ready():
                    return
                if select.select([self.wake_in], [], [], left)[0]:
                    with contextlib.suppress(BlockingIOError):
                        if not os.read(self.wake_in, 1 << 16):
                            raise Closed
            finally:
                words[mine] = 0
