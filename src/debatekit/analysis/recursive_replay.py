"""Replay of the decomposition protocols' records (:mod:`debatekit.analysis.recursive`).

:func:`replay` walks the same :class:`~debatekit.protocols.prover_estimator.Debate`
or :class:`~debatekit.protocols.naive_recursive.NaiveDebate` again with players that hand back
the recorded messages (a recorded forfeit conceded with its reason) and a :class:`Chance` that
hands back the recorded coins and verifier answers, then compares. Beside the events and the
outcome it flags what no debate could have produced: a coin against a certain p, an answer the
oracle never gives.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from debatekit.analysis.recursive import SITTING_DOWN, Recursive, decided, leaf_oracle, play_debate, record_body
from debatekit.engine.record import Replayed, ReplayError, fingerprint
from debatekit.ledger import Ledger, Malformed, Role
from debatekit.machine.decomposition import Query
from debatekit.oracle import Oracle, question_json
from debatekit.problems.registry import Instance
from debatekit.protocols.prover_estimator import (
    Branches,
    Record,
    Rules,
    Situation,
    coin_event,
    decomposition_of,
)


def _tuples(value: Any) -> Any:
    """A committed message from its JSON form: lists back to the tuples they were."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


class _Script:
    """A record's moves, handed back in order to whichever side the debate asks. A move that does
    not fit (another side's, another message, none left) is kept as the replay's error: the
    boundary turns what a player raises into its forfeit, so the error is raised at the end."""

    def __init__(self, events: list[dict]):
        self.moves = [e for e in events if "move" in e]
        self.at = 0
        self.error: ReplayError | None = None

    def seated(self) -> dict[Role, Any] | Malformed:
        """The recorded players, or the forfeit of a side that could not sit down."""
        first = self.moves[0] if self.moves else {}
        if first.get("what") != SITTING_DOWN:
            return {Role.ALICE: _RecordedAlice(self), Role.BOB: _RecordedBob(self)}
        self.at = 1
        if first.get("move") not in (Role.ALICE.value, Role.BOB.value) or type(first.get("forfeit")) is not str:
            raise ReplayError(f"a forfeit before the debate that names no side or reason: {first}")
        return Malformed(Role(first["move"]), first["forfeit"])

    def take(self, role: Role, what: str) -> Any:
        """The message ``role`` committed as ``what``; a recorded forfeit is conceded with its
        reason (sent, where the record says the message came and was refused; else raised)."""
        if self.error is None:
            event = self.moves[self.at] if self.at < len(self.moves) else None
            if event is None:
                self.error = ReplayError(f"the record ends before {role.value}'s {what}")
            elif event.get("move") != role.value or event.get("what") != what:
                self.error = ReplayError(
                    f"move {self.at} of the record is {event.get('move')}'s {event.get('what')}, "
                    f"where the debate asks for {role.value}'s {what}"
                )
            elif "message" not in event and type(event.get("forfeit")) is not str:
                self.error = ReplayError(f"move {self.at} of the record has neither a message nor a forfeit")
        if self.error is not None:
            raise self.error
        self.at += 1
        if "message" in event:
            return _tuples(event["message"])
        conceded = Malformed(role, event["forfeit"])
        if event.get("refused"):
            return conceded
        raise conceded

    def finish(self) -> None:
        if self.error is not None:
            raise self.error
        if self.at < len(self.moves):
            raise ReplayError(f"the record has more moves than the debate makes ({len(self.moves) - self.at} left)")


class _RecordedAlice:
    """A of either protocol (:class:`~debatekit.protocols.prover_estimator.Alice`,
    :class:`~debatekit.protocols.naive_recursive.Alice`), as her record has her; she also gives
    her proof bits (no fresh copies: the record holds the bits the copies gave)."""

    def __init__(self, script: _Script):
        self.script = script

    def claim(self) -> Any:
        return self.script.take(Role.ALICE, "claim")

    def direction(self, s: Situation) -> Any:
        return self.script.take(Role.ALICE, "direction")

    def queries(self, s: Situation) -> Any:
        return self.script.take(Role.ALICE, "queries")

    def recurse(self, s: Situation, subqueries: Any, estimates: Any, z: Any) -> Any:
        return self.script.take(Role.ALICE, "recurse")

    def decompose(self, level: int, query: Query, claimed: int) -> Any:
        return self.script.take(Role.ALICE, "decompose")

    def proof(self, j: int) -> Any:
        return self.script.take(Role.ALICE, "proof")


class _RecordedBob:
    """B of either protocol, as his record has him."""

    def __init__(self, script: _Script):
        self.script = script

    def initial(self) -> Any:
        return self.script.take(Role.BOB, "initial")

    def conditional(self, s: Situation, subqueries: Any, i: int, prefix: Any) -> Any:
        return self.script.take(Role.BOB, "conditional")

    def challenge(self, level: int, query: Query, claimed: int, subqueries: Any, answers: Any) -> Any:
        return self.script.take(Role.BOB, "challenge")


@dataclass
class _Recorded:
    """The :class:`~debatekit.protocols.prover_estimator.Chance` of a replay: the record's trusted
    coins and verifier answers, in order, noted again with what the replayed debate computes (a
    coin's p, a query's question). ``differences`` lists outcomes no debate could have drawn."""

    coins: list[dict]
    answers: list[dict]
    differences: list[str] = field(default_factory=list)
    memoise = False

    def coin(self, p: float, what: str, ledger: Ledger) -> Branches:
        event = _next(self.coins, f"the coin {what}")
        z = event.get("outcome")
        if event.get("chance") != what or type(z) is not int or z not in (0, 1):
            raise ReplayError(f"the record has {event} where the debate tosses the coin {what}")
        certain = 1 if p >= 1 else 0 if p <= 0 else None
        if certain is not None and z != certain:
            self.differences.append(f"coin {what}: recorded {z}, which p = {p:g} never draws")
        ledger.note(coin_event(what, p, z))
        return [(1.0, z)]

    def judge(self, oracle: Oracle, question: Hashable, ledger: Ledger) -> Branches:
        event = _next(self.answers, "the verifier's query")
        answer, n = event.get("answer"), event.get("n")
        if type(answer) is not int or answer not in (0, 1) or type(n) is not int:
            raise ReplayError(f"the record has {event} where the verifier queries the oracle")
        p = _known(oracle, question)
        if p in (0.0, 1.0) and answer != p:
            self.differences.append(f"verifier's answer: recorded {answer}, which the oracle never gives here")
        ledger.count_queries(Role.VERIFIER, n)
        ledger.note({"query": Role.VERIFIER.value, "question": question_json(question), "n": n, "answer": answer})
        return [(1.0, answer)]

    def mixed(self, role: Role, what: str, branches: Branches, ledger: Ledger) -> Branches:
        return branches  # recorded players send the committed message itself: one branch

    def finish(self) -> None:
        left = len(self.coins) + len(self.answers)
        if left:
            raise ReplayError(f"the record has more coins or verifier answers than the debate draws ({left} left)")


def _next(events: list[dict], what: str) -> dict:
    if not events:
        raise ReplayError(f"the record ends before {what}")
    return events.pop(0)


def _known(oracle: Oracle, question: Hashable) -> float | None:
    """P[O(question) = 1] when the oracle knows it and can say."""
    try:
        return oracle.probability(question)
    except Exception:  # a question the judge cannot read: no answer is known
        return None


_OUTCOME = ("verdict", "forfeit", "reason", "payoff", "rewards", "bits_read", "input_bits_read")
"""What a replay recomputes and compares, beside the events and the verifier's queries."""


def _replayable(event: dict) -> bool:
    """The events a replay makes again: moves, the verifier's coins and queries (not the
    provers' own queries, nor mixed moves' draws: the committed messages settle those)."""
    return "move" in event or event.get("by") == Role.VERIFIER.value or event.get("query") == Role.VERIFIER.value


def replay(protocol: Recursive, record: dict[str, Any], instance: Instance, *, rules: Rules | None = None) -> Replayed:
    """Debate ``record`` of ``protocol`` again on ``instance`` (:func:`simulate`'s rules): the
    same debate class walked with the recorded messages, coins and verifier answers; the events,
    verdict, forfeit and reason, payoff, reward vector and the verifier's counts must come out as
    recorded. A record that runs out or does not fit raises
    :class:`~debatekit.engine.record.ReplayError`."""
    events = record.get("events")
    if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
        raise ReplayError("the record keeps no events")
    try:
        index, verifier = int(record["debate"]), record["queries"][Role.VERIFIER.value]
        recorded = {key: record[key] for key in _OUTCOME}
    except (KeyError, TypeError, ValueError) as err:
        raise ReplayError(f"the record lacks {err}") from None
    if "instance" in record and record["instance"] != fingerprint(instance):
        return Replayed(index, False, ("instance: not the instance the record was played on",))
    decomposition = decomposition_of(instance)
    rules = protocol.rules(instance, rules)
    script = _Script(events)
    chance = _Recorded(
        [e for e in events if "chance" in e and e.get("by") == Role.VERIFIER.value],
        [e for e in events if e.get("query") == Role.VERIFIER.value],
    )
    ledger, again = Ledger(events=[]), Record()
    oracle = leaf_oracle(instance, decomposition)
    rewards = play_debate(protocol, decomposition, rules, script.seated(), chance, ledger, again, None, oracle)
    script.finish()
    chance.finish()
    payoff, verdict = decided(instance, rewards, again)
    body = record_body(index, ledger, again, verdict, payoff, rewards)
    differences = list(chance.differences)
    mine, theirs = [e for e in body["events"] if _replayable(e)], [e for e in events if _replayable(e)]
    if mine != theirs:
        k = next((i for i, (a, b) in enumerate(zip(mine, theirs, strict=False)) if a != b), min(len(mine), len(theirs)))
        differences.append(f"event {k}: recorded {theirs[k : k + 1]}, replayed {mine[k : k + 1]}")
    differences += [
        f"{key}: recorded {value}, replayed {body[key]}" for key, value in recorded.items() if body[key] != value
    ]
    if body["queries"][Role.VERIFIER.value] != verifier:
        differences.append(f"verifier queries: recorded {verifier}, replayed {body['queries'][Role.VERIFIER.value]}")
    return Replayed(index, not differences, tuple(differences))
