"""Recorded moves and draws of the decomposition protocols, handed back in order: what
:mod:`debatekit.analysis.recursive_replay` replays a record with, and what
:func:`debatekit.analysis.recursive.simulate` resumes a stopped debate with (the journal's moves,
coins and verifier answers first, then the live players and chance).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from debatekit.engine import nodes
from debatekit.engine.record import Forged, ReplayError
from debatekit.ledger import Ledger, Malformed, Role
from debatekit.machine.decomposition import Query
from debatekit.oracle import Oracle, question_json
from debatekit.protocols.prover_estimator import Situation
from debatekit.protocols.recursive_engine import Branches, Chance

SITTING_DOWN = "sitting down"
"""The ``what`` of a forfeit before the debate: a strategy that failed to sit down."""
PROVERS = (Role.ALICE.value, Role.BOB.value)


def _tuples(value: Any) -> Any:
    """A committed message from its JSON form: lists back to the tuples they were."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


class Script:
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
            return {Role.ALICE: RecordedAlice(self), Role.BOB: RecordedBob(self)}
        self.at = 1
        if first.get("move") not in (Role.ALICE.value, Role.BOB.value) or type(first.get("forfeit")) is not str:
            raise ReplayError(f"a forfeit before the debate that names no side or reason: {first}")
        return Malformed(Role(first["move"]), first["forfeit"])

    def holds(self, role: Role, what: str) -> bool:
        """Whether the next move of the script is ``role``'s ``what``."""
        event = self.moves[self.at] if self.at < len(self.moves) else None
        return event is not None and event.get("move") == role.value and event.get("what") == what

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


class RecordedAlice:
    """A of either protocol (:class:`~debatekit.protocols.prover_estimator.Alice`,
    :class:`~debatekit.protocols.naive_recursive.Alice`), as her record has her; she also gives
    her proof bits (the record holds the bits her committed proof gave each leaf)."""

    def __init__(self, script: Script):
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

    def proof(self, leaves: tuple[int, ...]) -> Any:
        return self.script.take(Role.ALICE, "proof")


class RecordedBob:
    """B of either protocol, as his record has him."""

    def __init__(self, script: Script):
        self.script = script

    def initial(self) -> Any:
        return self.script.take(Role.BOB, "initial")

    def conditional(self, s: Situation, subqueries: Any, i: int, prefix: Any) -> Any:
        return self.script.take(Role.BOB, "conditional")

    def challenge(self, level: int, query: Query, claimed: int, subqueries: Any, answers: Any) -> Any:
        return self.script.take(Role.BOB, "challenge")


@dataclass
class Recorded:
    """The :class:`~debatekit.protocols.recursive_engine.Chance` of a replay: the record's trusted
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
        coin = nodes.Chance.coin(what, p, int)
        if not coin.possible(z):
            self.differences.append(f"coin {what}: recorded {z}, which p = {p:g} never draws")
        ledger.note(coin.event(z))
        return [(1.0, z)]

    def judge(self, oracle: Oracle, question: Hashable, ledger: Ledger) -> Branches:
        event = _next(self.answers, "the verifier's query")
        answer, n = event.get("answer"), event.get("n")
        if type(answer) is not int or answer not in (0, 1) or type(n) is not int:
            raise ReplayError(f"the record has {event} where the verifier queries the oracle")
        p = _known(oracle, question)
        if p in (0.0, 1.0) and answer != p and not event.get("judges"):  # people or a model answered
            self.differences.append(f"verifier's answer: recorded {answer}, which the oracle never gives here")
        ledger.count_queries(Role.VERIFIER, n)
        asked = {"query": Role.VERIFIER.value, "question": question_json(question), "n": n, "answer": answer}
        ledger.note(asked | ({"judges": event["judges"]} if event.get("judges") else {}))
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


class Resumed:
    """A live player behind a stopped debate's script: each move the script holds next for this
    side is handed back; the rest are the player's own (it is not asked again for what the journal
    holds, and sees the debate from the arguments of its later moves, as any move does)."""

    def __init__(self, role: Role, script: Script, live: Any):
        self._role, self._script, self._live = role, script, live

    def __getattr__(self, name: str) -> Any:
        live = getattr(self._live, name)

        def move(*args: Any) -> Any:
            if self._script.holds(self._role, name):
                return self._script.take(self._role, name)
            return live(*args)

        return move


@dataclass
class Continued:
    """A stopped debate's chance: its journaled coins and verifier answers first, then ``live``
    (whose generators start afresh at the resumption: the resumed debate is one the seed
    determines, though not draw for draw the debate that was cut off)."""

    recorded: Recorded
    live: Chance
    memoise = False

    def coin(self, p: float, what: str, ledger: Ledger) -> Branches:
        if self.recorded.coins:
            return self._checked(self.recorded.coin(p, what, ledger))
        return self.live.coin(p, what, ledger)

    def judge(self, oracle: Oracle, question: Hashable, ledger: Ledger) -> Branches:
        if self.recorded.answers:
            return self._checked(self.recorded.judge(oracle, question, ledger))
        return self.live.judge(oracle, question, ledger)

    def _checked(self, branches: Branches) -> Branches:
        """A journaled draw no debate could have made (an answer the oracle never gives) is not continued."""
        if self.recorded.differences:
            raise Forged(f"the journal holds {self.recorded.differences[0]}")
        return branches

    def mixed(self, role: Role, what: str, branches: Branches, ledger: Ledger) -> Branches:
        return self.live.mixed(role, what, branches, ledger)  # a scripted move is its one branch


class ContinuedLedger(Ledger):
    """The ledger of a resumed debate, writing to its journaled ``events``: an event the debate
    makes again while it walks its script is already there and is not written twice, and the
    provers' queries made before the stop are counted again."""

    def __init__(self, events: list[dict]):
        super().__init__(events=events)
        prefix = list(events)
        self._again = deque(e for e in prefix if not _provers(e))
        for event in prefix:
            if event.get("query") in PROVERS:
                self.count_queries(Role(event["query"]), int(event["n"]))

    def note(self, event: dict) -> None:
        if self._again and self._again[0] == event:
            self._again.popleft()
        else:
            super().note(event)


def resumed(events: list[dict], players: dict[Role, Any] | Malformed, live: Chance) -> tuple[Any, Chance]:
    """The players and chance that resume a debate from its journaled ``events`` (its ledger a
    :class:`ContinuedLedger` of them)."""
    events = list(events)
    script = Script(events)
    if script.moves and script.moves[0].get("what") == SITTING_DOWN:
        return script.seated(), live
    chance = Continued(Recorded(
        [e for e in events if "chance" in e and e.get("by") == Role.VERIFIER.value],
        [e for e in events if e.get("query") == Role.VERIFIER.value],
    ), live)  # fmt: skip
    if not isinstance(players, Malformed):
        players = {role: Resumed(role, script, player) for role, player in players.items()}
    return players, chance


def _provers(event: dict) -> bool:
    """An event of the provers' own (a query, a mixed move's draw): a script does not make it again."""
    return event.get("query") in PROVERS or ("chance" in event and event.get("by") in PROVERS)
