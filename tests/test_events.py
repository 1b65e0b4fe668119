"""A record's events (issue 21, point 4): four frozen dataclasses, each with one JSON form, and one
parser for what a record file holds: every kind round-trips to the same dataclass and the same
bytes, every protocol's recorded events read back as written, and whatever is not an event (a
wrong type, an unknown kind or field, a missing field, NaN) is refused with one clear message,
which replay, show and resume report as the file's mistake with its line."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from debatekit.analysis.montecarlo import make_instance, run
from debatekit.cli.main import main
from debatekit.engine.events import (
    NO_STEP,
    Drawn,
    EventError,
    Moved,
    Queried,
    Read,
    event_from_json,
    events_from_json,
    json_default,
)
from debatekit.engine.record import journal_path, read_records
from debatekit.ledger import Role
from debatekit.problems import PROBLEMS
from debatekit.protocols.registry import PROTOCOLS
from test_records import rechain

EVENTS = [
    Moved(role=Role.ALICE, message={"bits": "0110"}),
    Moved(role=Role.BOB, message=None),
    Moved(role=Role.BOB, forfeit="challenge [0] is not an index"),
    Moved(role=Role.ALICE, what="claim", message=1),
    Moved(role=Role.BOB, what="initial", forfeit="unreadable message (TypeError)", refused=True),
    Moved(role=Role.ALICE, what="witness", t=None, message=[0, 1, 1]),
    Moved(role=Role.ALICE, what="claim", t=3, message=0.625),
    Moved(role=Role.BOB, what="abort", t=0, forfeit="an abort decision that is not a bit"),
    Queried(role=Role.VERIFIER, question=["Is it?", []], n=1, answer=0),
    Queried(role=Role.ALICE, question=[1, 0], n=40, answer=17, t=2),
    Queried(role=Role.VERIFIER, question="q", n=3, answer=3, judges=({"judge": 1, "judge_name": "Ana", "answer": 1},)),
    Drawn(what="z_hat", by=Role.VERIFIER, noted=(("p", 0.25),), outcome=0),
    Drawn(what="direction", by=Role.ALICE, outcome=1),
    Drawn(what="bit", t=4, outcome=1),
    Read(sender=Role.BOB, bits=5),
    Read(sender=Role.ALICE, at=25),
    Read(sender=None, at=0),
]
"""Each kind, in each shape a protocol records it."""

JSON_FORMS = [
    {"move": "alice", "message": {"bits": "0110"}},
    {"move": "bob", "message": None},
    {"move": "bob", "forfeit": "challenge [0] is not an index"},
    {"move": "alice", "what": "claim", "message": 1},
    {"move": "bob", "what": "initial", "forfeit": "unreadable message (TypeError)", "refused": True},
    {"move": "alice", "what": "witness", "t": None, "message": [0, 1, 1]},
    {"move": "alice", "what": "claim", "t": 3, "message": 0.625},
    {"move": "bob", "what": "abort", "t": 0, "forfeit": "an abort decision that is not a bit"},
    {"query": "verifier", "question": ["Is it?", []], "n": 1, "answer": 0},
    {"query": "alice", "t": 2, "question": [1, 0], "n": 40, "answer": 17},
    {
        "query": "verifier",
        "question": "q",
        "n": 3,
        "answer": 3,
        "judges": [{"judge": 1, "judge_name": "Ana", "answer": 1}],
    },
    {"chance": "z_hat", "by": "verifier", "p": 0.25, "outcome": 0},
    {"chance": "direction", "by": "alice", "outcome": 1},
    {"chance": "bit", "t": 4, "outcome": 1},
    {"read": "bob", "bits": 5},
    {"read": "alice", "at": 25},
    {"read": "x", "at": 0},
]
"""Their JSON forms, key for key and in order, as records have always held them."""
FIELDS = ["move", "query", "chance", "read", "what", "t", "message", "forfeit", "refused", "question", "n", "answer",
          "judges", "by", "outcome", "p", "at", "bits"]  # fmt: skip


@pytest.mark.parametrize(("event", "data"), list(zip(EVENTS, JSON_FORMS, strict=True)))
def test_each_kind_has_one_json_form_and_reads_back_to_the_same_event(event, data) -> None:
    assert json.dumps(event.to_json()) == json.dumps(data)  # the same keys in the same order: the same bytes
    assert event_from_json(json.loads(json.dumps(data))) == event
    assert json.dumps(event, default=json_default) == json.dumps(data)


def test_events_are_frozen_and_slotted() -> None:
    event = Read(sender=Role.ALICE, at=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.at = 2  # type: ignore[misc]
    assert not hasattr(event, "__dict__")
    assert Moved(role=Role.ALICE, message=0).t is NO_STEP and Moved(role=Role.ALICE, t=None, message=0).t is None


def recorded(path: Path, protocol: str, problem: str, alice: str, bob: str, trials: int = 2) -> Path:
    spec = PROTOCOLS[protocol]
    instance = make_instance(PROBLEMS[problem], PROBLEMS[problem].default_size, True, 0)
    run(spec, instance, spec.strategies[Role.ALICE][alice], spec.strategies[Role.BOB][bob], trials, 1, record=path)
    return path


@pytest.mark.parametrize(
    ("protocol", "problem", "alice", "bob"),
    [
        ("cross-exam", "caffeine", "random", "point-random"),
        ("bisection", "palindrome", "random", "malformed"),
        ("kw", "equality", "random", "random"),
        ("circuit-cross-exam", "tqbf", "lie-gate", "point-random"),
        ("stochastic", "ma-witness", "honest", "random-abort"),
        ("prover-estimator", "bike-lanes", "honest", "sampling"),
        ("naive-recursive", "majority", "random-claim", "random"),
    ],
)
def test_every_protocols_recorded_events_read_back_as_written(tmp_path, protocol, problem, alice, bob) -> None:
    for record in read_records(recorded(tmp_path / "r.jsonl", protocol, problem, alice, bob)):
        listed = events_from_json(record["events"])
        assert listed and json.dumps([e.to_json() for e in listed]) == json.dumps(record["events"])


MALFORMED: list[tuple[Any, str]] = [
    (1, "an event is a JSON object, not 1"),
    ({}, "no one known kind"),
    ({"move": "alice", "query": "alice", "message": 1}, "no one known kind"),
    ({"cast": "alice"}, "no one known kind"),
    ({"move": "carol", "message": 1}, "a move event whose move is not alice, bob or verifier"),
    ({"move": ["alice"], "message": 1}, "whose move is not"),
    ({"move": "alice"}, "neither a message and a forfeit"),
    ({"move": "alice", "message": 1, "forfeit": "x"}, "both a message and a forfeit"),
    ({"move": "alice", "forfeit": 3}, "whose forfeit is not a reason"),
    ({"move": "alice", "message": 1, "refused": True}, "whose refused is not true, on a forfeit"),
    ({"move": "alice", "forfeit": "x", "refused": 1}, "whose refused is not true"),
    ({"move": "alice", "what": "", "message": 1}, "whose what is not a name"),
    ({"move": "alice", "t": 1.5, "message": 0}, "whose t is not a step"),
    ({"move": "alice", "t": math.nan, "message": 0}, "whose t is not a step"),
    ({"move": "alice", "t": True, "message": 0}, "whose t is not a step"),
    ({"move": "alice", "t": -1, "message": 0}, "whose t is not a step"),
    ({"move": "alice", "message": 1, "said": 2}, "a move event with unknown fields (said)"),
    ({"query": "verifier", "question": None, "n": "x", "answer": [1]}, "whose n is not a count of queries"),
    ({"query": "verifier", "question": None, "n": 0, "answer": 0}, "whose n is not a count of queries"),
    ({"query": "verifier", "question": None, "n": math.nan, "answer": 0}, "whose n is not a count of queries"),
    ({"query": "verifier", "question": None, "n": 1, "answer": [1]}, "whose answer is not a count of yes"),
    ({"query": "verifier", "question": None, "n": 1, "answer": math.inf}, "whose answer is not a count of yes"),
    ({"query": "verifier", "question": None, "n": 2, "answer": -1}, "whose answer is not a count of yes"),
    ({"query": "verifier", "n": 1, "answer": 0}, "a query event without its question"),
    ({"query": "verifier", "question": 1, "answer": 0}, "a query event without its n"),
    ({"query": "verifier", "question": 1, "n": 1, "answer": 0, "judges": []}, "whose judges is not a non-empty list"),
    ({"query": "verifier", "question": 1, "n": 1, "answer": 0, "judges": [3]}, "whose judges is not a non-empty list"),
    ({"query": "x", "question": 1, "n": 1, "answer": 0}, "whose query is not alice, bob or verifier"),
    ({"chance": "z", "by": "verifier", "p": 0.5}, "a chance event without its outcome"),
    ({"chance": "z", "by": "verifier", "p": math.nan, "outcome": 0}, "whose p is not a finite number"),
    ({"chance": "z", "by": "verifier", "p": math.inf, "outcome": 0}, "whose p is not a finite number"),
    ({"chance": "z", "by": "verifier", "p": [0.5], "outcome": 0}, "whose p is not a finite number"),
    ({"chance": "z", "by": "nature", "outcome": 0}, "whose by is not alice, bob or verifier"),
    ({"chance": 3, "outcome": 0}, "whose chance is not a name"),
    ({"read": "verifier", "at": 1}, "whose read is not alice, bob or x"),
    ({"read": ["alice"], "at": 1}, "whose read is not alice, bob or x"),
    ({"chance": "z", "by": {"role": "verifier"}, "outcome": 0}, "whose by is not alice, bob or verifier"),
    ({"read": "alice", "at": 1, "bits": 2}, "a read event needs one of at"),
    ({"read": "alice"}, "a read event needs one of at"),
    ({"read": "alice", "at": -1}, "whose at is not a position"),
    ({"read": "alice", "at": 1.0}, "whose at is not a position"),
    ({"read": "x", "bits": "5"}, "whose bits is not a width"),
    ({"read": "x", "at": 0, "by": "alice"}, "a read event with unknown fields (by)"),
]


@pytest.mark.parametrize(("data", "why"), MALFORMED)
def test_what_is_not_an_event_is_refused_with_one_clear_message(data, why) -> None:
    with pytest.raises(EventError) as refused:
        event_from_json(data)
    message = str(refused.value)
    assert why in message and "\n" not in message, message


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 5) | st.floats() | st.sampled_from(["alice", "bob", "x", "z", ""]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(FIELDS), inner, max_size=4),
    max_leaves=8,
)
"""JSON data near an event's shape: its kinds' and fields' names, roles, small counts, NaN and infinities."""


@settings(deadline=None, max_examples=400)
@given(st.sampled_from(JSON_FORMS), st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=3), st.data())
def test_any_edit_of_an_event_reads_back_exactly_or_is_refused(data, edits, drawn) -> None:
    """An event's JSON form with fields changed, added or dropped: read as an event whose JSON form
    is the data again (its keys in the one order), or refused as an EventError; never another exception."""
    edited = {k: v for k, v in data.items() if not drawn.draw(st.booleans(), label=f"drop {k}")} | edits
    try:
        event = event_from_json(edited)
    except EventError as err:
        assert "\n" not in str(err)
        return
    assert json.dumps(event.to_json(), sort_keys=True) == json.dumps(edited, sort_keys=True)


def test_a_list_of_events_names_the_first_that_is_not_one() -> None:
    with pytest.raises(EventError, match="a record's events are a list, not"):
        events_from_json({"move": "alice"})
    with pytest.raises(EventError, match=r"^event 2: a read event needs one of at"):
        events_from_json([*JSON_FORMS[:2], {"read": "alice"}])
    with pytest.raises(EventError, match=r"\.\.\.$"):  # a long event is shown cut short
        event_from_json({"move": "alice", "message": "x" * 1000, "said": 1})


# -- the readers of a record: replay, show and resume -----------------------------------------------

RUN = ["run", "cross-exam", "--problem", "approval-majority", "--size", "6", "--bob", "point-random", "--no-log"]


def test_a_malformed_event_is_the_records_mistake_in_replay_and_show(tmp_path, capsys) -> None:
    path = tmp_path / "r.jsonl"
    assert main([*RUN, "--trials", "3", "--record", str(path), "--json"]) == 0
    values = [json.loads(line) for line in path.read_text().splitlines()]
    values[2]["events"][1] = {"move": "bob", "message": 1, "t": math.nan}
    rechain(path, values)
    capsys.readouterr()
    assert main(["replay", str(path)]) == 1
    out = capsys.readouterr().out
    assert (
        "2 of 3 debates reproduce" in out
        and "line 3 (debate 1): ReplayError: event 1: a move event whose t is not a" in out
    )
    assert main(["show", str(path), "--debate", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}:3: event 1: a move event whose t is not a step" in err


def test_a_malformed_journaled_event_is_one_line_naming_the_journal_and_its_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "r.jsonl"
    assert main([*RUN, "--trials", "10", "--record", str(path), "--json"]) == 0
    values = [json.loads(line) for line in path.read_text().splitlines()]
    rechain(path, values[:5])  # debates 0..3 whole; debate 4 in flight, its journal below
    event = {"query": "alice", "question": None, "n": 1, "answer": 0, "seen": True}
    rechain(journal_path(path), [{"debate": None, "header": values[0]["header"]}, {"debate": 4, "event": event}])
    capsys.readouterr()
    assert main([*RUN, "--trials", "10", "--record", str(path), "--resume"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "r.jsonl.journal:2: not a journal entry's event: a query event with unknown" in err
