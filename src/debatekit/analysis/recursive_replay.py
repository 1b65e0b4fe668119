"""Replay of the decomposition protocols' records (:mod:`debatekit.analysis.recursive`).

:func:`replay` walks the same :class:`~debatekit.protocols.prover_estimator.Debate`
or :class:`~debatekit.protocols.naive_recursive.NaiveDebate` again with players that hand back
the recorded messages (a recorded forfeit conceded with its reason) and a :class:`Chance` that
hands back the recorded coins and verifier answers, then compares. Beside the events and the
outcome it flags what no debate could have produced: a coin against a certain p, an answer the
oracle never gives.
"""

from __future__ import annotations

from typing import Any

from debatekit.analysis.recursive import Recursive, decided, leaf_oracle, play_debate, record_body
from debatekit.analysis.recursive_script import Recorded, Script
from debatekit.engine.record import Replayed, ReplayError, fingerprint
from debatekit.ledger import Ledger, Role
from debatekit.problems.registry import Instance
from debatekit.protocols.prover_estimator import Rules, decomposition_of
from debatekit.protocols.recursive_engine import Record

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
    script = Script(events)
    chance = Recorded(
        [e for e in events if "chance" in e and e.get("by") == Role.VERIFIER.value],
        [e for e in events if e.get("query") == Role.VERIFIER.value],
    )
    ledger, again = Ledger(events=[]), Record()
    oracle = leaf_oracle(instance, decomposition)
    rewards = play_debate(protocol, decomposition, rules, script.seated(), chance, ledger, again, None, oracle)
    script.finish()
    chance.finish()
    payoff, verdict = decided(instance, rewards, again)
    body = record_body(index, ledger, again, verdict, payoff, rewards, record.get("estimator_delta"))
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
