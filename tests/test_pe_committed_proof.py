"""One committed proof (issue 25): A's context-free proof ũ is committed once per run, before B is
trained, and B's training and the verifier's round 0 read the same bits (proof of Lemma A.4,
eq. 10). Provers that show B one proof and the verifier another (by their seat, by a module
variable the playing copy writes, by answering differently when asked again, by mutating an array
they sent) are held to the bound and their false claim is rejected."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from debatekit.analysis import recursive
from debatekit.analysis.montecarlo import make_instance
from debatekit.cli.main import main
from debatekit.engine.boundary import NOT_A_BIT
from debatekit.engine.events import Moved, json_default
from debatekit.engine.summary import Summary
from debatekit.ledger import Malformed, Role
from debatekit.players.base import resolve
from debatekit.players.estimator import committed_proof
from debatekit.problems import PROBLEMS
from debatekit.protocols import prover_estimator as pe
from debatekit.protocols.proof import PROOF_BATCH, CommittedProof, ProofTruth
from debatekit.protocols.registry import PROTOCOLS

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import user_strategies  # noqa: E402

SPEC = PROTOCOLS["prover-estimator"]
CHEATERS = ["SeatCheater", "GlobalCheater", "SecondCallCheater", "MutatingCheater"]


@pytest.fixture(autouse=True)
def fresh_cheaters():
    """The cheaters' module state starts empty in every test."""
    for state in (user_strategies.REACHED, user_strategies.ASKED, user_strategies.SENT):
        state.clear()


def composite(size: int = 10):
    return make_instance(PROBLEMS["obfuscated-primality"], size, False, 0)


@pytest.mark.parametrize("bob", ["omniscient", "honest"])
@pytest.mark.parametrize("cheater", CHEATERS)
def test_cheaters_are_held_to_the_bound_and_rejected(cheater, bob):
    """Before the committed proof, the first three earned 1.0 in every debate against the truthful
    estimator (bound 0) and their false claim was accepted; now every debate pays at most the
    bound and the claim is rejected (verdict 0 = the truth, N composite)."""
    alice = resolve(f"user_strategies:{cheater}", Role.ALICE, SPEC.strategies[Role.ALICE])
    instance, estimator = composite(), SPEC.strategies[Role.BOB][bob]
    tally = recursive.simulate(recursive.PROVER_ESTIMATOR, instance, alice, estimator, 3, range(20))
    bound = SPEC.conclude(instance, alice, estimator, Summary.of_tally(tally, instance.answer)).bound.value
    assert tally.forfeits == {Role.ALICE: 0, Role.BOB: 0}
    assert np.all(tally.rewarded.payoffs <= bound + 1e-18)
    assert np.all(tally.verdicts == 0)


@pytest.mark.parametrize("cheater", ["SeatCheater", "GlobalCheater"])
def test_cheaters_through_the_command_line(cheater, capsys, monkeypatch):
    """The issue's two cheaters as ``module:attr`` through ``run``: nothing accepted, the mean
    payoff within the printed bound (the truthful estimator's, 0, and Algorithm 1's)."""
    monkeypatch.syspath_prepend(str(HERE))
    for bob in ("omniscient", "honest"):
        capsys.readouterr()
        argv = ["run", "prover-estimator", "--problem", "obfuscated-primality", "--size", "10", "--truth", "no",
                "--alice", f"user_strategies:{cheater}", "--bob", bob, "--trials", "10", "--json"]  # fmt: skip
        assert main(argv) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["accept_rate"] == 0.0, bob
        assert out["payoff_mean"] <= out["payoff_bound"], bob


class Counting:
    """A proof source that records every request and answers with the positions' parities."""

    def __init__(self):
        self.asked: list[tuple[int, ...]] = []

    def proof(self, leaves: tuple[int, ...]) -> list[int]:
        self.asked.append(leaves)
        return [j % 2 for j in leaves]


def test_each_position_is_asked_once_in_batches():
    source = Counting()
    committed = CommittedProof(source.proof)
    assert committed.bits((5, 3, 5)) == (1, 1, 1)
    assert committed.bits((3, 4, 5, 6)) == (1, 0, 1, 0)
    assert source.asked == [(3, 5), (4, 6)]
    committed.commit(tuple(range(PROOF_BATCH + 10)))
    assert [len(a) for a in source.asked[2:]] == [PROOF_BATCH, 10 - 4]  # 3, 4, 5 and 6 were committed
    assert committed.requests == 4
    far = (1 << 50) + 1  # a sparsely numbered proof: no dense array of that length
    assert committed.bits((far, 7, far)) == (1, 1, 1) and committed.bits((far,)) == (1,)
    assert source.asked[4:] == [(far,)] and committed.requests == 5


def test_a_sent_array_is_copied_and_garbage_is_her_forfeit():
    sent = np.array([1, 0, 1], dtype=np.uint8)
    committed = CommittedProof(lambda leaves: sent if leaves == (0, 1, 2) else [1, 7])
    assert committed.bits((0, 1, 2)) == (1, 0, 1)
    sent[:] = 0  # she mutates what she sent: the committed bits are a copy
    assert committed.bits((0, 1, 2)) == (1, 0, 1)
    assert committed.bits((8, 9)) == (1, NOT_A_BIT)
    assert committed.reason(9) == "proof bit 9 is not 0 or 1"
    wrong = CommittedProof(lambda leaves: [1])
    assert wrong.bits((0, 1)) == (NOT_A_BIT, NOT_A_BIT)
    assert "length" in wrong.reason(0)

    def raising(leaves):
        raise RuntimeError("no proof today")

    failing = CommittedProof(raising)
    assert failing.bits((4,)) == (NOT_A_BIT,)
    assert "no proof today" in failing.reason(4)


def test_b_and_the_verifier_read_one_object_and_replay_reads_the_record():
    """The run's committed proof is the one B's seat holds; each record carries the bits its round
    0 read, and replay reproduces the debate from them without asking A."""
    instance = composite()
    alice = resolve("user_strategies:SecondCallCheater", Role.ALICE, SPEC.strategies[Role.ALICE])
    tally = SPEC.batch.simulate(instance, alice, SPEC.strategies[Role.BOB]["omniscient"], 1, range(4), None, True)
    committed = committed_proof(instance, alice, pe.rules_for(instance))
    for record in tally.records:
        (proof,) = [e for e in record["events"] if isinstance(e, Moved) and e.what == "proof"]
        assert all(b in (0, 1) for b in proof.message)
        user_strategies.ASKED.clear()
        assert SPEC.batch.replay(json.loads(json.dumps(record, default=json_default)), instance).reproduced
        assert not user_strategies.ASKED  # replay asked A nothing
    assert committed.requests == 1  # the whole proof, once, for B's training; the debates read it


def test_malformed_request_in_exact_analysis_loses_for_alice():
    """Without a committed proof the debate commits one from the player itself; garbage there is
    her forfeit at the leaf."""

    class Garbage(pe.HonestAlice):
        def proof(self, leaves):
            raise Malformed(Role.BOB, "blames B")  # not a concession of hers: still her forfeit

    instance = composite(8)
    D, rules = pe.decomposition_of(instance), pe.rules_for(instance)
    bob = pe.TruthfulBob(ProofTruth(D, None))
    value = pe.expected_rewards(D, Garbage(D, rules), bob, rules)
    assert value.sum() < pe.expected_rewards(D, pe.HonestAlice(D, rules), bob, rules).sum()


@pytest.mark.parametrize("size", [8, 12, 16])
@pytest.mark.parametrize("truth", [True, False])
def test_vectorised_leaves_and_proof_agree_with_the_plain_loop(size, truth):
    """FactorIntervals' numpy judge_leaves and proof_array against Decomposition's loops over judge
    and proof, on random proofs (garbage included), every leaf (padding included)."""
    D = pe.decomposition_of(make_instance(PROBLEMS["obfuscated-primality"], size, truth, 0))
    positions = np.arange(D.proof_length, dtype=np.int64)
    assert np.array_equal(D.proof_array(positions), type(D).__mro__[1].proof_array(D, positions))
    leaves = [D.root()]
    for k in range(D.depth, 0, -1):
        leaves = [c for y in leaves for c in D.split(y, k)]
    rng, seen = np.random.default_rng(size), set()
    for proof in (D.proof_array(positions), rng.integers(0, 2, D.proof_length), np.full(D.proof_length, NOT_A_BIT)):
        proof = np.where(rng.random(D.proof_length) < 0.001, 0, proof).astype(np.uint8)
        read = lambda at, proof=proof: proof[at]  # noqa: E731
        fast = D.judge_leaves(leaves, read)
        plain = pe.Decomposition.judge_leaves(D, leaves, read)
        assert fast.dtype == plain.dtype == float and np.array_equal(fast, plain)
        seen |= set(plain.tolist())
    assert seen == {0.0, 1.0}  # leaves judged both ways


@pytest.mark.parametrize("truth", [True, False])
def test_the_truth_of_a_committed_proof_is_its_value_node_by_node(truth):
    """ProofTruth (level by level, leaves judged at once) against a recursion over the tree by
    judge and combine, at every node, on the honest proof and on one with bits turned off."""
    D = pe.decomposition_of(make_instance(PROBLEMS["obfuscated-primality"], 12, truth, 0))
    honest = pe.HonestAlice(D, pe.Rules())
    for flip in (None, 7, 101):

        def proof(leaves, flip=flip):
            bits = honest.proof(leaves).copy()
            if flip is not None:
                bits[np.array(leaves) % flip == 3] = 0
            return bits

        values = ProofTruth(D, CommittedProof(proof))
        root = values.truth(D.root(), D.depth)

        def value(y, k):
            if k == 0:
                leaf = D.leaf(y)
                return D.judge(y, tuple(proof(leaf).tolist()) if leaf else ())
            return D.combine(y, k, tuple(int(value(c, k - 1)) for c in D.split(y, k)))

        assert root == value(D.root(), D.depth)
        assert all(v == value(y, k) for (y, k), v in values.values.items())
        assert len(values.values) == sum(D.width**k for k in range(D.depth + 1))
