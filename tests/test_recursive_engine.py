"""The recursive protocols' batch contract: debate i draws only from (seed, i), a record of every
debate that replays through the same rules, tampered records that do not, bounds read from
declared metadata, and players called by typed calls, never by method-name strings."""

from __future__ import annotations

import ast
import copy
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from debatekit.analysis.montecarlo import make_instance
from debatekit.engine.events import json_default
from debatekit.engine.record import fingerprint
from debatekit.engine.summary import Summary
from debatekit.engine.trust import ReplayError
from debatekit.ledger import Role
from debatekit.players.base import Seat, Strategy
from debatekit.problems import PROBLEMS
from debatekit.protocols import prover_estimator as pe
from debatekit.protocols.registry import PROTOCOLS

PE, NAIVE = PROTOCOLS["prover-estimator"], PROTOCOLS["naive-recursive"]
SEED = 11
SRC = Path(__file__).resolve().parents[1] / "src" / "debatekit"


def primality(truth: bool, size: int = 6):
    return make_instance(PROBLEMS["obfuscated-primality"], size, truth, 0)


def majority(truth: bool):
    return make_instance(PROBLEMS["evidence-majority"], 1, truth, 0)


def play(spec, instance, alice: str | Strategy, bob: str | Strategy, debates: range, keep: bool = True):
    a = spec.strategies[Role.ALICE][alice] if isinstance(alice, str) else alice
    b = spec.strategies[Role.BOB][bob] if isinstance(bob, str) else bob
    return spec.batch.simulate(instance, a, b, SEED, debates, None, keep)


def concluded(spec, instance, alice: str | Strategy, bob: str | Strategy, debates: range):
    """The debates' tally and the run's conclusions over them (``spec.conclude``: the payoff bound)."""
    a = spec.strategies[Role.ALICE][alice] if isinstance(alice, str) else alice
    b = spec.strategies[Role.BOB][bob] if isinstance(bob, str) else bob
    tally = play(spec, instance, a, b, debates, keep=False)
    return tally, spec.conclude(instance, a, b, Summary.of_tally(tally, instance.answer)).to_json()


def as_written(record: dict) -> dict:
    """The record as the run writes it and replay reads it: through JSON."""
    return json.loads(json.dumps(record, default=json_default))


# -- per-debate seeding ----------------------------------------------------------------------------

PREFIX_CASES = [
    (PE, lambda: primality(False, 10), "honest", "sampling"),
    (PE, lambda: primality(False, 10), "random-direction", "sampling"),
    (NAIVE, lambda: majority(False), "honest", "random"),
    (NAIVE, lambda: majority(False), "random-claim", "random"),
]


@pytest.mark.parametrize(("spec", "instance", "alice", "bob"), PREFIX_CASES)
def test_debate_i_depends_only_on_the_seed_and_i(spec, instance, alice, bob) -> None:
    """range(0, 12) restricted to its first 5 debates is range(0, 5), and its last 7 are
    range(5, 12): verdicts, payoffs, every party's queries, bits and whole records."""
    whole = play(spec, instance(), alice, bob, range(12))
    head, tail = play(spec, instance(), alice, bob, range(5)), play(spec, instance(), alice, bob, range(5, 12))
    assert len(whole.verdicts) == 12 and len(head.verdicts) == 5 and len(tail.verdicts) == 7
    for part, cut in ((head, slice(0, 5)), (tail, slice(5, 12))):
        np.testing.assert_array_equal(part.verdicts, whole.verdicts[cut])
        np.testing.assert_array_equal(part.rewarded.payoffs, whole.rewarded.payoffs[cut])
        np.testing.assert_array_equal(part.bits_read, whole.bits_read[cut])
        for role in Role:
            np.testing.assert_array_equal(part.queries[role], whole.queries[role][cut])
        assert part.records == whole.records[cut]
    assert [r["debate"] for r in tail.records] == list(range(5, 12))
    if alice != "honest":  # the randomised adversary: the debates do differ, by their own seeds
        assert len({json.dumps(r["events"], default=json_default) for r in whole.records}) > 1


def test_progress_counts_the_debates_of_the_call() -> None:
    seen: list[int] = []
    alice, bob = PE.strategies[Role.ALICE]["honest"], PE.strategies[Role.BOB]["omniscient"]
    tally = PE.batch.simulate(primality(True), alice, bob, SEED, range(3, 7), seen.append)
    assert seen == [1, 2, 3, 4] and tally.records is None and len(tally.rewarded.payoffs) == 4


# -- records and replay ----------------------------------------------------------------------------


def pairs(spec, instance) -> list[tuple[str, str]]:
    return [
        (a, b)
        for a in spec.strategies[Role.ALICE]
        for b, strategy in spec.strategies[Role.BOB].items()
        if strategy.refuses is None or strategy.refuses(instance) is None
    ]


@pytest.mark.parametrize("truth", [True, False])
@pytest.mark.parametrize(("spec", "instance"), [(PE, primality), (NAIVE, primality), (NAIVE, majority)])
def test_every_built_in_pair_replays(spec, instance, truth) -> None:
    """Each debate's record, written as JSON, replays through the same rules and reproduces."""
    inst = instance(truth)
    for alice, bob in pairs(spec, inst):
        tally = play(spec, inst, alice, bob, range(3))
        assert len(tally.records) == 3
        for k, record in enumerate(tally.records):
            assert record["payoff"] == tally.rewarded.payoffs[k] and record["verdict"] == tally.verdicts[k]
            assert record["queries"]["verifier"] == tally.queries[Role.VERIFIER][k]
            assert record["payoff"] == pytest.approx(sum(record["rewards"]))
            replayed = spec.batch.replay(as_written(record), inst)
            assert replayed.reproduced, (alice, bob, replayed.differences)
            assert replayed.debate == k


def test_a_record_lists_moves_coins_and_queries_in_order() -> None:
    """Honest A against the truthful estimator: claim, p_d, the coin ẑ, then per round A^k, the
    split, B's q estimates with their coins and A's index, then A^0, proof bits and one query."""
    inst = primality(False)
    (record,) = play(PE, inst, "honest", "omniscient", range(1)).records
    events = as_written(record)["events"]
    D = pe.decomposition_of(inst)
    assert events[:3] == [
        {"move": "alice", "what": "claim", "message": 0},
        {"move": "bob", "what": "initial", "message": 0.0},
        {"chance": "z_hat", "by": "verifier", "p": 0.0, "outcome": 0},
    ]
    kinds = [e.get("what", e.get("chance", e.get("query"))) for e in events]
    assert kinds.count("direction") == D.depth + 1 and kinds.count("queries") == D.depth
    assert kinds.count("conditional") == D.depth * D.width and kinds.count("recurse") == D.depth
    (query,) = [e for e in events if "query" in e]
    assert query["query"] == "verifier" and query["n"] == 1 and query["answer"] in (0, 1)
    assert events.index(query) == len(events) - 1
    assert record["rewards"][1:] == [0.0] * (D.depth + 1) and record["forfeit"] is None
    assert record["rewards"][0] == record["payoff"] > 0  # ẑ = 0 = her claim: the initial reward r^(d+1)


class RaisesInRoundOne(pe.HonestAlice):
    """A user's A whose direction raises below the root."""

    def __init__(self, seat: Seat):
        super().__init__(pe.decomposition_of(seat.instance), pe.rules_of(seat))

    def direction(self, s: pe.Situation) -> int:
        if s.level < self.D.depth:
            raise RuntimeError("lost the thread")
        return super().direction(s)


def cannot_sit(seat: Seat):
    raise ValueError("no chair")


def test_forfeits_replay_with_their_reasons() -> None:
    """A player that raises, one whose mixed move is sampled, and one that cannot sit down: each
    forfeit is recorded with its reason and replays to the same reason and payoff."""
    inst = primality(False, 10)
    here = Path(__file__).name  # a user's failure is named with its file and line
    raised = f"({here}:{RaisesInRoundOne.direction.__code__.co_firstlineno + 2})"
    no_chair = f"({here}:{cannot_sit.__code__.co_firstlineno + 1})"
    raising = Strategy("user:raises", Role.ALICE, "raises in round d-1", RaisesInRoundOne)
    sitting = Strategy("user:cannot-sit", Role.BOB, "fails to sit down", cannot_sit)
    for spec, alice, bob, who, reason in (
        (PE, raising, "omniscient", "alice", f"direction raised RuntimeError: lost the thread {raised}"),
        (PE, "honest", sitting, "bob", f"sitting down raised ValueError: no chair {no_chair}"),
        (NAIVE, "honest", sitting, "bob", f"sitting down raised ValueError: no chair {no_chair}"),
        (PE, "malformed", "omniscient", "alice", None),
    ):
        record = as_written(play(spec, inst, alice, bob, range(1)).records[0])
        assert record["forfeit"] == who
        if reason is not None:
            assert record["reason"] == reason
            assert {"move": who, "what": record["events"][-1]["what"], "forfeit": reason} == record["events"][-1]
        else:
            assert record["events"][-1].get("refused") is True
        assert spec.batch.replay(as_written(record), inst).reproduced


def honest_pair_record(spec, inst, bob: str = "omniscient") -> dict:
    (record,) = play(spec, inst, "honest", bob, range(1)).records
    assert spec.batch.replay(as_written(record), inst).reproduced
    return as_written(record)


def edited(record: dict, match, change) -> dict:
    """A copy of ``record`` whose first event satisfying ``match`` is changed by ``change``."""
    out = copy.deepcopy(record)
    event = next(e for e in out["events"] if match(e))
    change(event)
    return out


def set_key(key, value):
    return lambda event: event.__setitem__(key, value)


def test_edited_records_do_not_reproduce() -> None:
    """An edited message or answer is caught: by the outcome it changes, by the coin or question
    the replayed debate computes from it, or by an answer the deterministic oracle never gives."""
    inst = primality(False)
    record = honest_pair_record(PE, inst)
    tampered = [
        edited(record, lambda e: e.get("what") == "claim", set_key("message", 1)),  # the initial reward
        edited(record, lambda e: e.get("what") == "initial", set_key("message", 0.5)),  # the coin's p
        edited(record, lambda e: e.get("query") == "verifier", lambda e: e.update(answer=1 - e["answer"])),
        edited(record, lambda e: e.get("chance") == "z_hat", set_key("outcome", 1)),  # p = 0 never draws 1
        edited(record, lambda e: e.get("what") == "recurse", lambda e: e.update(message=(e["message"] + 1) % 4)),
        {**record, "bits_read": record["bits_read"] + 1},
        {**record, "payoff": 1.0},
    ]
    for bad in tampered:
        replayed = PE.batch.replay(bad, inst)
        assert not replayed.reproduced and replayed.differences
    naive_inst = majority(True)
    naive = honest_pair_record(NAIVE, naive_inst)
    for bad in (
        edited(naive, lambda e: e.get("what") == "challenge", lambda e: e.update(message=e["message"] + 1)),
        edited(naive, lambda e: e.get("query") == "verifier", lambda e: e.update(answer=1 - e["answer"])),
    ):
        assert not NAIVE.batch.replay(bad, naive_inst).reproduced
    stranger = primality(False, 8)
    assert PE.batch.replay({**record, "instance": fingerprint(stranger)}, inst).differences == (
        "instance: not the instance the record was played on",
    )


def test_records_that_do_not_fit_raise() -> None:
    inst = primality(False)
    record = honest_pair_record(PE, inst)
    moves = [i for i, e in enumerate(record["events"]) if "move" in e]
    short = {**record, "events": [e for i, e in enumerate(record["events"]) if i != moves[-1]]}
    long = {**record, "events": [*record["events"], {"move": "bob", "what": "initial", "message": 0.5}]}
    swapped = edited(record, lambda e: e.get("what") == "initial", set_key("move", "alice"))
    no_answer = {**record, "events": [e for e in record["events"] if "query" not in e]}
    for bad in (short, long, swapped, no_answer, {**record, "events": None}):
        with pytest.raises(ReplayError):
            PE.batch.replay(bad, inst)


# -- bounds from declared metadata -----------------------------------------------------------------


def honest_like(spec) -> Strategy:
    """A user's strategy (not built in, declares nothing) that plays exactly as the honest A."""
    return Strategy(
        "user_strategies:HonestLike", Role.ALICE, "plays as the honest A", spec.strategies[Role.ALICE]["honest"].factory
    )


@pytest.mark.parametrize("bob", ["omniscient", "honest"])
def test_an_undeclared_honest_player_gets_the_soundness_bound_and_it_holds(bob) -> None:
    """Lemma A.4 bounds every A: the honest-like user A is held to it (and is within it); declared
    honest, she is promised Lemma A.5's completeness bound instead, which she meets."""
    inst = primality(True, 10)
    user = honest_like(PE)
    x, bound = concluded(PE, inst, user, bob, range(20))
    assert bound["payoff_bound_kind"] == "soundness" and bound["payoff_bound_covers_bob"]
    unit = bound["reward_unit"]
    assert bound["payoff_bound"] >= unit  # her claim matches her proof: P = 1
    assert np.all(x.rewarded.payoffs <= bound["payoff_bound"] * (1 + 1e-12))
    declared, floor = concluded(PE, inst, replace(user, honest=True), bob, range(20))
    assert floor["payoff_bound_kind"] == "completeness"
    assert floor["payoff_bound"] == pytest.approx((1 - floor["epsilon"]) * unit)
    assert declared.rewarded.payoffs.mean() >= floor["payoff_bound"]
    np.testing.assert_array_equal(declared.rewarded.payoffs, x.rewarded.payoffs)


def test_naive_bounds_read_metadata_too() -> None:
    """Naive recursion: the honest-like user A wins every debate against the challenger declared
    truthful; her soundness bound is P[A(x) = L(x)] = 1, which holds; undeclared challengers are not
    covered; declared honest she gets the completeness bound."""
    inst = majority(True)
    user = honest_like(NAIVE)
    x, bound = concluded(NAIVE, inst, user, "omniscient", range(10))
    assert (bound["payoff_bound_kind"], bound["payoff_bound"], bound["payoff_bound_covers_bob"]) == (
        "soundness", 1.0, True,
    )  # fmt: skip
    assert np.all(x.rewarded.payoffs <= bound["payoff_bound"])
    liar, zero = concluded(NAIVE, inst, "obfuscate", "omniscient", range(10))
    assert zero["payoff_bound"] == 0.0 and np.all(liar.rewarded.payoffs == 0.0)
    anonymous = replace(NAIVE.strategies[Role.BOB]["omniscient"], name="user:knows-all", truthful=False)
    _, uncovered = concluded(NAIVE, inst, user, anonymous, range(2))
    assert not uncovered["payoff_bound_covers_bob"] and uncovered["payoff_bound_uncovered"]
    _, declared = concluded(NAIVE, inst, replace(user, honest=True), "omniscient", range(2))
    assert declared["payoff_bound_kind"] == "completeness"


def test_built_in_tables_declare_their_metadata() -> None:
    for spec in (PE, NAIVE):
        assert spec.strategies[Role.ALICE]["honest"].honest
        assert spec.strategies[Role.BOB]["omniscient"].truthful
        assert not any(s.honest for name, s in spec.strategies[Role.ALICE].items() if name != "honest")
    assert PE.strategies[Role.BOB]["honest"].honest and not NAIVE.strategies[Role.BOB]["honest"].honest


# -- typed calls -------------------------------------------------------------------------------

RECURSIVE_FILES = [
    "protocols/prover_estimator.py",
    "protocols/naive_recursive.py",
    "players/estimator.py",
    "players/prover_estimator.py",
    "players/naive_recursive.py",
    "analysis/recursive.py",
]
METHODS = {"claim", "answer", "direction", "queries", "recurse", "proof", "initial", "conditional"}
METHODS |= {"decompose", "challenge"}


@pytest.mark.parametrize("path", RECURSIVE_FILES)
def test_players_are_called_by_typed_calls(path: str) -> None:
    """No ``getattr`` with a computed name or a player method's name; analysis compares no
    strategy or protocol name."""
    source = (SRC / path).read_text()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
            name = node.args[1]
            assert isinstance(name, ast.Constant) and name.value not in METHODS, ast.unparse(node)
    if path == "analysis/recursive.py":
        for literal in ('"honest"', '"omniscient"', '"prover-estimator"', '"naive-recursive"'):
            assert literal not in source
