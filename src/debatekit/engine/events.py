"""A debate's record, event by event: four frozen dataclasses, each with one JSON form.

As OpenSpiel keeps a state as its history of actions, a recorded debate
(:mod:`debatekit.engine.record`) is the list of what happened in it, in order:

* :class:`Moved`: a party's message as committed (the transcript of Definition 4.1; stochastic
  debate's witness, claims, coin shares and aborts at step t, Figure 2 and Lean's ``step``; the
  recursive protocols' named messages, Figure 2 of the prover-estimator paper), or the party's
  forfeit there with its reason.
* :class:`Queried`: n oracle queries of one question by one role, and how many were answered yes
  (every query tagged by its party, as ``AliceId``, ``BobId``, ``VeraId`` in Debate/Cost.lean;
  Theorem 6.2's estimates are n samples of one question).
* :class:`Drawn`: a draw: a trusted coin the verifier tosses (the prover-estimator paper's ẑ and
  z^k_i, an OpenSpiel chance node: :class:`~debatekit.engine.nodes.Chance`), nature's bit a_t of
  stochastic debate in Lean's form, or the outcome of a player's mixed move.
* :class:`Read`: a counted read of the verifier (:class:`~debatekit.reader.Reader`): a position
  of a prover's message or of x, or a whole word (Definition 5.2's cross-examination reads).

Each event's JSON form (``to_json``) is the object a record file holds, key for key and in the
order records have always been written, so records on disk read and replay byte for byte; it is
made once, where a record's or journal's line is written (:func:`json_default`).
:func:`event_from_json` is its one reading, for data from a file: a record is untrusted, and
whatever is not an event's JSON form (a wrong type, an unknown kind or field, a missing field, a
non-finite number) is an :class:`EventError` saying what, which each reader reports as the user's
mistake with the file and line. The payloads (a message, a question, an outcome) are kept as the
JSON data they are written as (:func:`debatekit.engine.boundary.to_json` of what was committed).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, NoReturn

from debatekit.ledger import Role


class NoStep(Enum):
    """The step of a node protocol's event, which has none: no ``"t"`` in its JSON form."""

    NO_STEP = "no step"


NO_STEP = NoStep.NO_STEP
Step = int | None | NoStep
"""Stochastic debate's step t of an event (None: before step 1, Alice's witness); :data:`NO_STEP`
for the node protocols' events."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Moved:
    """``role``'s message ``what`` (empty: a tree protocol's unnamed move) at step ``t``: committed
    as ``message`` (its JSON form), or forfeited for ``forfeit`` (the reason), ``refused`` when a
    message came and did not commit (named moves)."""

    role: Role
    what: str = ""
    t: Step = NO_STEP
    message: Any = None
    forfeit: str | None = None
    refused: bool = False
    _json: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"move": self.role.value}
        if self.what:
            data["what"] = self.what
        if self.t is not NO_STEP:
            data["t"] = self.t
        if self.forfeit is None:
            data["message"] = self.message
        else:
            data["forfeit"] = self.forfeit
            if self.refused:
                data["refused"] = True
        return data


@dataclass(frozen=True, slots=True, kw_only=True)
class Queried:
    """``n`` queries by ``role`` of ``question`` (its JSON form, ``oracle.question_json``) at step
    ``t``, ``answer`` of them yes; ``judges``: who answered, when people did (``Oracle.judgements``)."""

    role: Role
    question: Any
    n: int
    answer: int
    t: Step = NO_STEP
    judges: tuple[dict[str, Any], ...] = ()
    _json: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"query": self.role.value}
        if self.t is not NO_STEP:
            data["t"] = self.t
        data |= {"question": self.question, "n": self.n, "answer": self.answer}
        if self.judges:
            data["judges"] = list(self.judges)
        return data


@dataclass(frozen=True, slots=True, kw_only=True)
class Drawn:
    """The draw ``what`` came out ``outcome`` (its JSON form): drawn ``by`` the verifier (a trusted
    coin) or by a mover (its mixed move's index), or, None, nature's bit of stochastic debate;
    ``noted``, what the rules keep beside it (a coin's p)."""

    what: str
    outcome: Any
    by: Role | None = None
    t: Step = NO_STEP
    noted: tuple[tuple[str, Any], ...] = ()
    _json: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"chance": self.what}
        if self.by is not None:
            data["by"] = self.by.value
        if self.t is not NO_STEP:
            data["t"] = self.t
        return data | dict(self.noted) | {"outcome": self.outcome}


@dataclass(frozen=True, slots=True, kw_only=True)
class Read:
    """The verifier read position ``at`` of ``sender``'s message (``sender`` None: of x), or a
    word of ``bits`` bits of it."""

    sender: Role | None
    at: int | None = None
    bits: int | None = None
    _json: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"read": "x" if self.sender is None else self.sender.value}
        return data | ({"bits": self.bits} if self.at is None else {"at": self.at})


Event = Moved | Queried | Drawn | Read


class EventError(ValueError):
    """Data that is not an event's JSON form; the message says what is wrong, and shows it."""


def json_default(value: Any) -> Any:
    """``json.dumps``' ``default`` where a record's or journal's line is written: an event as its
    JSON form, made once per event object and kept on it (``_json``; a batch's debates share their
    events), for the encoder to read, never to change."""
    if isinstance(value, Event):
        data = value._json
        if data is None:
            data = value.to_json()
            object.__setattr__(value, "_json", data)
        return data
    raise TypeError(f"{type(value).__name__} is not JSON data")


def events_from_json(data: Any) -> list[Event]:
    """A record's list of events, each read by :func:`event_from_json` (the first that is not one
    an :class:`EventError` beginning ``event K:``)."""
    if not isinstance(data, list):
        raise EventError(f"a record's events are a list, not {_brief(data)}")
    events = []
    for k, item in enumerate(data):
        try:
            events.append(event_from_json(item))
        except EventError as err:
            raise EventError(f"event {k}: {err}") from None
    return events


_ROLES = {role.value: role for role in Role}
_SENDERS = {"alice": Role.ALICE, "bob": Role.BOB, "x": None}
_MOVED = frozenset({"move", "what", "t", "message", "forfeit", "refused"})
_QUERIED = frozenset({"query", "t", "question", "n", "answer", "judges"})
_READ = frozenset({"read", "at", "bits"})
_DRAWN = frozenset({"chance", "by", "t", "outcome"})


def event_from_json(data: Any) -> Event:
    """The event whose JSON form is ``data`` (from a record or journal, untrusted), or an
    :class:`EventError`: the key that names its kind (``move``, ``query``, ``chance`` or ``read``)
    must be its only one, each field of the type its dataclass holds, none missing and none unknown
    (a draw keeps what else it holds, scalars, as ``noted``)."""
    if type(data) is not dict:
        raise EventError(f"an event is a JSON object, not {_brief(data)}")
    if ("move" in data) + ("query" in data) + ("chance" in data) + ("read" in data) != 1:
        raise EventError(f"an event of no one known kind (move, query, chance or read): {_brief(data)}")
    if "move" in data:
        return _moved(data)
    if "query" in data:
        return _queried(data)
    if "chance" in data:
        return _drawn(data)
    return _read(data)


def _moved(data: dict[str, Any]) -> Moved:
    _known(data, _MOVED, "move")
    role, what, t = _role(data, "move"), data.get("what", ""), _step(data, "move")
    if "what" in data and not (type(what) is str and what):
        _refuse(data, "move", "what", "a name")
    if ("message" in data) == ("forfeit" in data):
        both = "both" if "message" in data else "neither"
        raise EventError(f"a move event with {both} a message and a forfeit: {_brief(data)}")
    forfeit = data.get("forfeit")
    if "forfeit" in data and type(forfeit) is not str:
        _refuse(data, "move", "forfeit", "a reason (a string)")
    if "refused" in data and not (data["refused"] is True and forfeit is not None):
        _refuse(data, "move", "refused", "true, on a forfeit")
    return Moved(role=role, what=what, t=t, message=data.get("message"), forfeit=forfeit, refused="refused" in data)


def _queried(data: dict[str, Any]) -> Queried:
    _known(data, _QUERIED, "query")
    role, t = _role(data, "query"), _step(data, "query")
    if "question" not in data:
        _refuse(data, "query", "question", "")
    n, answer = data.get("n"), data.get("answer")
    if not (type(n) is int and n > 0):
        _refuse(data, "query", "n", "a count of queries (an integer >= 1)")
    if not (type(answer) is int and answer >= 0):
        _refuse(data, "query", "answer", "a count of yes (an integer >= 0)")
    judges = data.get("judges", ())
    if "judges" in data and not (type(judges) is list and judges and all(type(j) is dict for j in judges)):
        _refuse(data, "query", "judges", "a non-empty list of objects (who answered)")
    return Queried(role=role, t=t, question=data["question"], n=n, answer=answer, judges=tuple(judges))


def _drawn(data: dict[str, Any]) -> Drawn:
    what = data["chance"]
    if not (type(what) is str and what):
        _refuse(data, "chance", "chance", "a name")
    by = _role(data, "chance", "by") if "by" in data else None
    if "outcome" not in data:
        _refuse(data, "chance", "outcome", "")
    noted = tuple((key, value) for key, value in data.items() if key not in _DRAWN)
    for key, value in noted:
        if not (value is None or type(value) in (int, str, bool) or (type(value) is float and math.isfinite(value))):
            _refuse(data, "chance", key, "a finite number, a string, a boolean or null")
    return Drawn(what=what, by=by, t=_step(data, "chance"), noted=noted, outcome=data["outcome"])


def _read(data: dict[str, Any]) -> Read:
    _known(data, _READ, "read")
    if type(data["read"]) is not str or data["read"] not in _SENDERS:
        _refuse(data, "read", "read", "alice, bob or x")
    if ("at" in data) == ("bits" in data):
        raise EventError(f"a read event needs one of at (a position) and bits (a word's width): {_brief(data)}")
    at, bits = data.get("at"), data.get("bits")
    if "at" in data and not (type(at) is int and at >= 0):
        _refuse(data, "read", "at", "a position (an integer >= 0)")
    if "bits" in data and not (type(bits) is int and bits >= 0):
        _refuse(data, "read", "bits", "a width (an integer >= 0)")
    return Read(sender=_SENDERS[data["read"]], at=at, bits=bits)


def _known(data: dict[str, Any], known: frozenset[str], kind: str) -> None:
    if not data.keys() <= known:
        unknown = ", ".join(sorted(data.keys() - known))
        raise EventError(f"a {kind} event with unknown fields ({unknown}): {_brief(data)}")


def _role(data: dict[str, Any], kind: str, key: str | None = None) -> Role:
    value = data[key or kind]
    role = _ROLES.get(value) if type(value) is str else None
    if role is None:
        _refuse(data, kind, key or kind, "alice, bob or verifier")
    return role


def _step(data: dict[str, Any], kind: str) -> Step:
    if "t" not in data:
        return NO_STEP
    t = data["t"]
    if t is not None and not (type(t) is int and t >= 0):
        _refuse(data, kind, "t", "a step (an integer >= 0, or null)")
    return t


def _refuse(data: dict[str, Any], kind: str, key: str, expected: str) -> NoReturn:
    if key not in data:
        raise EventError(f"a {kind} event without its {key}: {_brief(data)}")
    raise EventError(f"a {kind} event whose {key} is not {expected}: {_brief(data)}")


BRIEF = 160
"""Characters of a malformed event shown in its error."""


def _brief(data: Any) -> str:
    try:
        text = json.dumps(data, allow_nan=True)
    except (TypeError, ValueError, RecursionError):
        text = f"a {type(data).__name__}"
    return text if len(text) <= BRIEF else text[: BRIEF - 3] + "..."
