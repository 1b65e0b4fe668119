"""Stochastic debate played one debate at a time: players shaped for numbers (an LLM's, a
person's) and players written for arrays both play it, and a debate waiting on a slow judge
resumes from its journal after its process dies."""

from __future__ import annotations

import json

import numpy as np
import pytest

from debatekit.analysis.montecarlo import Oracles, make_instance, run
from debatekit.engine.record import journal_path, read_records, replay
from debatekit.ledger import Role
from debatekit.machine.transcript import StepKind
from debatekit.oracle import Oracle
from debatekit.players.base import Shape, Strategy
from debatekit.problems import PROBLEMS
from debatekit.protocols.registry import PROTOCOLS
from debatekit.protocols.stochastic.rules import HonestAlice, HonestBob

SEED = 5


class Died(BaseException):
    """The process dies (raised through the run, as a kill would end it)."""


class Panel(Oracle):
    """People who answer n samples of one question at once, through ``answer(n)``."""

    def __init__(self, answer):
        self.answer = answer

    def sample(self, query, rng) -> int:
        return self.answer(1)

    def sample_count(self, query, r, rng) -> int:
        return self.answer(r)


class AbortAtOracle(HonestBob):
    """Abort at the first oracle step: every debate ends in a verifier query there."""

    def aborts(self, view, claims, bits):
        return np.full(len(view.rows), view.kind is StepKind.ORACLE)


class ScalarBob(HonestBob):
    """The same Bob, on numbers only (as an LLM player is): anything else is an error."""

    def aborts(self, view, claim, bit):
        if type(claim) is not float or type(view.p) is not float:
            raise TypeError("a scalar player was shown arrays")
        return view.kind is StepKind.ORACLE


class ArrayAlice(HonestAlice):
    """Honest Alice that insists on arrays (indexes them), as a researcher's batch player may."""

    def claims(self, view):
        estimate = view.estimate(view.rules.alice_samples)
        out = np.empty(len(view.rows))
        out[:] = estimate[: len(view.rows)]
        return out


def instance_and_spec():
    return make_instance(PROBLEMS["noisy-majority"], 8, True, seed=SEED), PROTOCOLS["stochastic"]


def test_a_scalar_player_plays_on_numbers_alone_and_in_a_batch() -> None:
    """A Bob declared for numbers only gets numbers when played alone, and a batch holding him is
    played one debate after another; debate for debate, his run equals the array Bob's batch."""
    instance, spec = instance_and_spec()
    alice = spec.honest(Role.ALICE)
    scalar = Strategy("scalar-bob", Role.BOB, "", ScalarBob, trusted=True, shape=Shape.NUMBERS)
    arrays = Strategy("abort-at-oracle", Role.BOB, "", AbortAtOracle, trusted=True)
    by_numbers = spec.batch.simulate(instance, alice, scalar, SEED, range(0, 30), None, True)
    by_arrays = spec.batch.simulate(instance, alice, arrays, SEED, range(0, 30), None, True)
    assert by_numbers.forfeits == by_arrays.forfeits == {Role.ALICE: 0, Role.BOB: 0}
    assert by_numbers.records == by_arrays.records
    assert (by_numbers.queries[Role.VERIFIER] > 0).all()  # every debate reached the verifier


def test_a_player_written_for_arrays_plays_alone() -> None:
    """Played alone, a player that is not declared scalar sees arrays of one entry, so it plays
    debate i as it plays it in a batch."""
    instance, spec = instance_and_spec()
    alice = Strategy("array-alice", Role.ALICE, "", ArrayAlice, trusted=True)
    bob = spec.honest(Role.BOB)
    batch = spec.batch.simulate(instance, alice, bob, SEED, range(0, 12), None, True)
    alone = [spec.batch.simulate(instance, alice, bob, SEED, range(i, i + 1), None, True).records[0] for i in range(12)]
    assert batch.forfeits[Role.ALICE] == 0 and alone == batch.records


def test_a_debate_waiting_on_the_judge_resumes_from_its_journal(tmp_path) -> None:
    """People answer the verifier (all yes) until the process dies while a debate waits on them.
    Resumed with other people (all no), that debate's moves come from the journal, not from the
    players, and play goes on from the pending query; the later debates are played live; every
    record replays and the journal is gone."""
    instance, spec = instance_and_spec()
    moves = []

    class Counted(HonestAlice):
        def claims(self, view):
            moves.append(view.t)
            return super().claims(view)

    alice = Strategy("counted", Role.ALICE, "", Counted)  # not trusted: one debate per call, journaled
    bob = Strategy("abort-at-oracle", Role.BOB, "", AbortAtOracle)
    asked = 0

    def yes(n: int) -> int:
        nonlocal asked
        asked += 1
        if asked == 3:
            raise Died
        return n

    path = tmp_path / "s.jsonl"
    with pytest.raises(Died):
        run(spec, instance, alice, bob, 10, SEED, record=path, oracles=Oracles(instance.oracle, Panel(yes)))
    journal = journal_path(path)
    whole, stopped, seated = path.read_bytes(), len(list(read_records(path))), len(moves)
    assert stopped == 2
    entries = [json.loads(line) for line in journal.read_text().splitlines()]
    journaled = [e["event"] for e in entries if e["debate"] == stopped]
    assert any(e.get("what") == "abort" and e["message"] == 1 for e in journaled)
    assert not any(e.get("query") == "verifier" for e in journaled)
    run(spec, instance, alice, bob, 10, SEED, record=path, resume=True,
        oracles=Oracles(instance.oracle, Panel(lambda n: 0)))  # fmt: skip
    assert not journal.exists()
    records = list(read_records(path))
    assert len(records) == 10 and path.read_bytes().startswith(whole)
    resumed = records[stopped]
    assert [e for e in resumed["events"] if "move" in e] == [e for e in journaled if "move" in e]
    assert [e["answer"] for e in resumed["events"] if e.get("query") == "verifier"] == [0]  # asked anew
    before = [e for r in records[:stopped] for e in r["events"] if e.get("query") == "verifier"]
    assert len(before) == stopped and all(e["answer"] == e["n"] for e in before)  # the first people's
    claims_per_debate = len([e for e in journaled if e.get("what") == "claim"])
    assert len(moves) - seated == (10 - stopped - 1) * claims_per_debate  # none asked in the resumed debate
    assert all(replay(r, spec, instance).reproduced for r in records)
