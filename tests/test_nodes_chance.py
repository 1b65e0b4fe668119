"""Nature's draws and payoffs in the node vocabulary: a toy payoff game played, solved exactly,
replayed and resumed by the engine's interpreters with no other change."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from debatekit.analysis.exact import ExactError, _Script, _Search, expectation
from debatekit.engine.boundary import commit_bit
from debatekit.engine.events import Drawn, Event, Moved
from debatekit.engine.nodes import Chance, End, Judge, Move, Node, Paid, Payoff, Query
from debatekit.engine.play import Seated, play, verifier_answer
from debatekit.engine.record import Forged, walked
from debatekit.engine.trust import ReplayError
from debatekit.ledger import Ledger, Role
from debatekit.oracle import TableOracle
from debatekit.prob import Dist

P_COIN = 0.3
ORACLE = TableOracle({"q": 0.25})


def toy(guess_key: bool = True) -> Node:
    """A claims c; nature tosses z ~ Bernoulli(0.3) and pays A 1 when z = c; B guesses g; the
    verifier asks the oracle once and pays A its answer when g = c. A's unreadable claim costs her
    (-1, -1)."""

    def claimed(c: int) -> Node:
        return Chance.coin("z", P_COIN, lambda z: Paid((float(z == c), 0.0), guess(c)))

    def guess(c: int) -> Node:
        return Move(
            Role.BOB,
            lambda bob: bob.guess(),
            lambda m: commit_bit(m, Role.BOB, "guess"),
            lambda g: Judge(lambda: check(c, g)),
            key=("guess", c) if guess_key else None,
            lose=lambda loser, reason: Payoff((0.0, 1.0), loser, reason),
        )

    def check(c: int, g: int):
        o = yield Query("q")
        return Payoff((0.0, float(o) * (g == c)))

    return Move(
        Role.ALICE,
        lambda alice: alice.claim(),
        lambda m: commit_bit(m, Role.ALICE, "claim"),
        claimed,
        lose=lambda loser, reason: Payoff((-1.0, -1.0), loser, reason),
    )


class Alice:
    def claim(self) -> int:
        return 1


class Bob:
    def guess(self) -> Dist:
        return Dist([(0, Fraction(1, 2)), (1, Fraction(1, 2))])


class Never:
    def __getattr__(self, name: str):
        raise AssertionError(f"asked for {name} again")


def played(seed: int, events: list[Event], prefix: list[Event] | None = None, alice=None, bob=None) -> End | Payoff:
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3)]
    seats = {Role.ALICE: Seated(alice or Alice(), rngs[0], True), Role.BOB: Seated(bob or Bob(), rngs[1], True)}
    ledger = Ledger(events=events)
    answer = verifier_answer(ORACLE, ledger, rngs[2])
    return asyncio.run(play(toy(), seats, answer, ledger, prefix=prefix, rng=rngs[2]))


def test_play_draws_from_the_verifiers_generator_and_sums_what_was_paid():
    events: list[Event] = []
    end = played(7, events)
    assert isinstance(end, Payoff)
    rng = np.random.default_rng(np.random.SeedSequence(7).spawn(3)[2])
    z = int(rng.random() < P_COIN)  # the coin is the verifier generator's first draw
    (coin,) = [e for e in events if isinstance(e, Drawn)]
    assert coin.to_json() == {"chance": "z", "by": "verifier", "p": P_COIN, "outcome": z}
    assert end.rewards[0] == float(z == 1)
    assert [e.role.value for e in events if isinstance(e, Moved)] == ["alice", "bob"]


def test_exact_sums_over_nature_mixed_moves_and_answers():
    script = _Script(ORACLE)
    value = expectation(toy(), {Role.ALICE: Alice(), Role.BOB: Bob()}, script)
    assert value == pytest.approx([P_COIN, 0.5 * 0.25])
    # a debate that ends in a verdict is read by the verdict search, with the coin summed over
    verdicts = Chance.coin("z", P_COIN, lambda z: End(z))
    assert _Search({}, None, 1, _Script(ORACLE), 100).value(verdicts, {}) == Fraction(P_COIN)
    with pytest.raises(ExactError):
        expectation(Chance("z", lambda z: Payoff((z,)), sample=lambda rng: 1), {}, script)


def test_exact_memoises_keyed_subgames():
    asked = []

    class Counting(Bob):
        def guess(self) -> Dist:
            asked.append(1)
            return super().guess()

    expectation(toy(), {Role.ALICE: Alice(), Role.BOB: Counting()}, _Script(ORACLE))
    assert len(asked) == 1  # B's guess after either coin is one subgame
    asked.clear()
    expectation(toy(guess_key=False), {Role.ALICE: Alice(), Role.BOB: Counting()}, _Script(ORACLE))
    assert len(asked) == 2


def test_replay_hands_back_the_records_draws_and_answers():
    for seed in range(6):
        events: list[Event] = []
        end = played(seed, events)
        again = walked(events, toy(), ORACLE, Ledger(), partial=False)
        assert again == end
    forged = [replace(e, outcome=1, noted=(("p", 0.0),)) if isinstance(e, Drawn) else e for e in events]
    with pytest.raises(ReplayError):  # a draw of another coin
        walked([replace(e, what="w") if isinstance(e, Drawn) else e for e in events], toy(), ORACLE, Ledger(), False)
    certain = Chance.coin("z", 0.0, lambda z: Payoff((float(z),)))
    with pytest.raises(Forged):
        walked([e for e in forged if isinstance(e, Drawn)], certain, ORACLE, Ledger(), partial=False)
    assert isinstance(walked(events[:1], toy(), ORACLE, Ledger(), partial=True), Chance)


def test_resume_continues_from_the_journal():
    for seed in range(6):
        events: list[Event] = []
        end = played(seed, events)
        cut = next(i for i, e in enumerate(events) if isinstance(e, Drawn)) + 1
        journal = events[:cut]  # A's claim and the coin: neither is asked or drawn again
        resumed = played(seed + 100, journal, prefix=list(journal), alice=Never())
        assert resumed.rewards[0] == end.rewards[0]
        assert journal[:cut] == events[:cut] and len(journal) > cut


def test_a_forfeit_pays_what_the_rules_say():
    class Garbled:
        def claim(self) -> str:
            return "yes"

    events: list[Event] = []
    end = played(0, events, alice=Garbled())
    assert end == Payoff((-1.0, -1.0), Role.ALICE, "claim 'yes' is not 0 or 1")
    assert [e.to_json() for e in events] == [{"move": "alice", "forfeit": "claim 'yes' is not 0 or 1"}]
