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
made once, where a record's or journal's line is written (:data:`json_default`).
:func:`event_from_json` is its one reading, for data from a file: a record is untrusted, and
whatever is not an event's JSON form (a wrong type, an unknown kind or field, a missing field, a
non-finite number) is an :class:`EventError` saying what, which each reader reports as the user's
mistake with the file and line. The payloads (a message, a question, an outcome) are kept as the
JSON data they are written as (:func:`debatekit.engine.boundary.to_json` of what was committed).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from enum import Enum
from typing import Any

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

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"read": "x" if self.sender is None else self.sender.value}
        return data | ({"bits": self.bits} if self.at is None else {"at": self.at})


Event = Moved | Queried | Drawn | Read


class EventError(ValueError):
    """Data that is not an event's JSON form; the message says what is wrong, and shows it."""


def json_default(value: Any) -> Any:
    """``json.dumps``' ``default`` where a record's or journal's line is written: an event as its JSON form."""
    if isinstance(value, Event):
        return value.to_json()
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


KINDS = ("move", "query", "chance", "read")
"""The key that names each kind of event, first in its JSON form."""


def event_from_json(data: Any) -> Event:
    """The event whose JSON form is ``data`` (from a record or journal, untrusted), or an :class:`EventError`."""
    if not isinstance(data, dict):
        raise EventError(f"an event is a JSON object, not {_brief(data)}")
    kinds = [kind for kind in KINDS if kind in data]
    if len(kinds) != 1:
        raise EventError(f"an event of no one known kind (move, query, chance or read): {_brief(data)}")
    fields = _Fields(data)
    if kinds == ["move"]:
        event: Event = _moved(fields)
    elif kinds == ["query"]:
        event = _queried(fields)
    elif kinds == ["chance"]:
        event = _drawn(fields)
    else:
        event = _read(fields)
    if fields.left:
        raise EventError(f"a {kinds[0]} event with unknown fields ({', '.join(sorted(fields.left))}): {_brief(data)}")
    return event


class _Fields:
    """An event's JSON object read field by field; ``left``, the fields no reading took."""

    def __init__(self, data: dict[str, Any]):
        self.data, self.left = data, set(data)

    def take(self, key: str, check: Any, expected: str, required: bool = True) -> Any:
        if key not in self.data:
            if required:
                raise EventError(f"{self._kind()} event without its {key}: {_brief(self.data)}")
            return None
        self.left.discard(key)
        value = self.data[key]
        if check is not None and not check(value):
            raise EventError(f"{self._kind()} event whose {key} is not {expected}: {_brief(self.data)}")
        return value

    def role(self, key: str, choices: tuple[str, ...] = ("alice", "bob", "verifier")) -> Role:
        return Role(self.take(key, lambda v: v in choices, " or ".join(choices)))

    def step(self) -> Step:
        if "t" not in self.data:
            return NO_STEP
        return self.take("t", lambda v: v is None or _count(v), "a step (an integer >= 0, or null)")

    def _kind(self) -> str:
        return "a " + next(kind for kind in KINDS if kind in self.data)


def _count(value: Any) -> bool:
    return type(value) is int and value >= 0


def _name(value: Any) -> bool:
    return type(value) is str and value != ""


def _moved(fields: _Fields) -> Moved:
    role, what = fields.role("move"), fields.take("what", _name, "a name", required=False) or ""
    t = fields.step()
    if ("message" in fields.data) == ("forfeit" in fields.data):
        both = "both" if "message" in fields.data else "neither"
        raise EventError(f"a move event with {both} a message and a forfeit: {_brief(fields.data)}")
    message = fields.take("message", None, "", required=False)
    forfeit = fields.take("forfeit", lambda v: type(v) is str, "a reason (a string)", required=False)
    refused = fields.take("refused", lambda v: v is True and forfeit is not None, "true, on a forfeit", False)
    return Moved(role=role, what=what, t=t, message=message, forfeit=forfeit, refused=bool(refused))


def _queried(fields: _Fields) -> Queried:
    role, t = fields.role("query"), fields.step()
    question = fields.take("question", None, "")
    n = fields.take("n", lambda v: _count(v) and v > 0, "a count of queries (an integer >= 1)")
    answer = fields.take("answer", _count, "a count of yes (an integer >= 0)")
    judges = fields.take("judges", _judges, "a non-empty list of objects (who answered)", required=False)
    return Queried(role=role, t=t, question=question, n=n, answer=answer, judges=tuple(judges or ()))


def _judges(value: Any) -> bool:
    return type(value) is list and value != [] and all(type(j) is dict for j in value)


def _drawn(fields: _Fields) -> Drawn:
    what = fields.take("chance", _name, "a name")
    by = fields.role("by") if "by" in fields.data else None
    t, outcome = fields.step(), fields.take("outcome", None, "")
    scalar = "a finite number, a string, a boolean or null"
    noted = [(key, fields.take(key, _scalar, scalar)) for key in fields.data if key in fields.left]
    return Drawn(what=what, by=by, t=t, noted=tuple(noted), outcome=outcome)


def _scalar(value: Any) -> bool:
    if type(value) is float:
        return math.isfinite(value)
    return value is None or type(value) in (int, str, bool)


def _read(fields: _Fields) -> Read:
    sender = fields.take("read", lambda v: v in ("alice", "bob", "x"), "alice, bob or x")
    if ("at" in fields.data) == ("bits" in fields.data):
        raise EventError(f"a read event needs one of at (a position) and bits (a word's width): {_brief(fields.data)}")
    at = fields.take("at", _count, "a position (an integer >= 0)", required=False)
    bits = fields.take("bits", _count, "a width (an integer >= 0)", required=False)
    return Read(sender=None if sender == "x" else Role(sender), at=at, bits=bits)


BRIEF = 160
"""Characters of a malformed event shown in its error."""


def _brief(data: Any) -> str:
    try:
        text = json.dumps(data, allow_nan=True)
    except (TypeError, ValueError, RecursionError):
        text = f"a {type(data).__name__}"
    return text if len(text) <= BRIEF else text[: BRIEF - 3] + "..."
