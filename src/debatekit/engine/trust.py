"""Trusted code that fails is a bug, never a player's forfeit.

The verifier, a protocol's rules, built-in strategies and built-in oracles are trusted: they are
the reference the numbers are measured against. An exception raised by them becomes an
:class:`InternalError`, a ``BaseException`` that no forfeit handler (``except Exception``)
catches, so it ends the run: the command line prints ``internal error in PLACE (PROTOCOL, debate
i): Type: message`` and exits 1. A user's strategy, an LLM or a person is untrusted: what goes
wrong on its side stays its forfeit.

Where a forfeit would be charged for an exception, the engines call :func:`charge` first; it
raises instead when the sender's seat is trusted, as told by the caller or by :func:`trusting`
(the debate's trusted seats, for code that charges deep inside a protocol's rules).
"""

from __future__ import annotations

import contextlib
import os
import sysconfig
from collections.abc import Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from debatekit.ledger import Role


class Seated(Protocol):
    """What :func:`trusting` reads of a strategy (:class:`~debatekit.players.base.Strategy`): its
    role and whether it is a trusted built-in. Stated here, below the players, so this module
    imports none."""

    @property
    def role(self) -> Role: ...

    @property
    def trusted(self) -> bool: ...


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the debatekit package
_LIBRARIES = tuple(
    {os.path.abspath(path) + os.sep for key, path in sysconfig.get_paths().items() if key.endswith(("stdlib", "lib"))}
)
"""The standard library and installed packages: frames there are never the place named."""
_TRUSTED: ContextVar[frozenset[Role]] = ContextVar("trusted seats", default=frozenset())


class InternalError(BaseException):
    """Trusted code raised ``error``: where (``place``, the innermost frame of the code that
    raised it outside the standard library and installed packages), in which protocol and debate
    (filled in by the run that played it, :meth:`at`)."""

    def __init__(self, error: BaseException, place: str, protocol: str = "", debates: str = ""):
        super().__init__(error, place)
        self.error, self.place, self.protocol, self.debates = error, place, protocol, debates

    @classmethod
    def of(cls, error: BaseException) -> InternalError:
        return error if isinstance(error, InternalError) else cls(error, place_of(error))

    def at(self, protocol: str, debates: range) -> InternalError:
        """This error, naming the protocol and the debates being played when it was raised."""
        if not self.protocol:
            self.protocol = protocol
        if not self.debates:
            first, last = debates.start, debates.stop - 1
            self.debates = f"debate {first}" if first >= last else f"debates {first}-{last}"
        return self

    def __str__(self) -> str:
        where = ", ".join(part for part in (self.protocol, self.debates) if part)
        return f"internal error in {self.place}{f' ({where})' if where else ''}: {error_text(self.error)}"


class Unaffordable(BaseException):
    """A trusted part asked for more than its declared limit allows (Algorithm 1's B trained on
    more situations than it keeps, say): neither a bug nor a player's forfeit, as B conceding would
    hand A a debate it cannot judge. The run stops; the command line says why in one line, exit 2."""


def error_text(error: BaseException) -> str:
    """``Type: message``, without trusting the exception's ``__str__`` (it may raise or exit)."""
    try:
        text = str(error)
    except BaseException:  # a hostile __str__ may even raise SystemExit
        text = "<unprintable>"
    text = " ".join(text.split())
    return f"{type(error).__name__}: {text[:300]}" if text else type(error).__name__


def place_of(error: BaseException) -> str:
    """``file:line`` of the innermost frame of ``error``'s traceback outside the standard library
    and installed packages (relative to the package inside debatekit); ``?`` without one."""
    place, tb = "?", error.__traceback__
    while tb is not None:
        name = os.path.abspath(tb.tb_frame.f_code.co_filename)
        inside = name.startswith(_PACKAGE + os.sep)  # debatekit, wherever it is installed
        if inside or not (name.startswith(_LIBRARIES) or tb.tb_frame.f_code.co_filename.startswith("<")):
            place = f"{os.path.relpath(name, _PACKAGE) if inside else os.path.basename(name)}:{tb.tb_lineno}"
        tb = tb.tb_next
    return place


@contextlib.contextmanager
def trusting(*strategies: Seated) -> Iterator[None]:
    """Within: the seats of ``strategies`` that are trusted built-ins are the debate's trusted seats."""
    token = _TRUSTED.set(frozenset(s.role for s in strategies if s.trusted))
    try:
        yield
    finally:
        _TRUSTED.reset(token)


class ReplayError(ValueError):
    """A record that does not fit its protocol (a move or an answer missing or out of place): the
    record's or the journal's fault, never a player's forfeit nor the engine's failure
    (:func:`charge`); :mod:`debatekit.engine.record` raises it."""


def charge(role: Role, error: BaseException, trusted: bool | None = None) -> None:
    """Before ``role`` forfeits for ``error``, an exception its side raised: :class:`InternalError`
    instead when its seat is trusted (``trusted``, or by default one of the debate's trusted seats),
    unless ``error`` is a concession (:class:`~debatekit.ledger.Malformed`,
    :class:`~debatekit.ledger.Concession`) or a replayed record's
    or resumed journal's fault (:class:`ReplayError`)."""
    from debatekit.ledger import Concession, Malformed  # here: --help imports no numpy

    if isinstance(error, Malformed | Concession | ReplayError):  # a concession, or a record's or journal's fault
        return
    if role in _TRUSTED.get() if trusted is None else trusted:
        raise InternalError.of(error) from error
