"""Naive recursion's soundness promise (issue 22, the possible soundness hole): on caffeine's
natural decomposition an LLM Alice who judged every question "no" claimed 0 and won 3 of 3 against
``--bob omniscient`` under a printed bound of 0.

The claims of a decomposition are about A's own proof ũ, and the verifier's leaf reads ũ, so what
a challenger who knows the truth of her proof holds A to is P[A(x) = M_D(ũ)] (the proof of
Lemma A.4 bounds the same for prover-estimator debate), not P[A(x) = L(x)]; the two agree when
L(x) = 0, as long as no ũ makes M_D say 1 then. Here: the programmed Alice who plays what the LLM
did, a forger who copies x wrongly into her proof, and the bound each run prints."""

from __future__ import annotations

import numpy as np

from debatekit.analysis.montecarlo import make_instance
from debatekit.engine.summary import Summary
from debatekit.ledger import Role
from debatekit.machine.decomposition import natural
from debatekit.oracle import FunctionOracle
from debatekit.players.base import Seat, Strategy
from debatekit.problems import PROBLEMS
from debatekit.protocols import naive_recursive as nr
from debatekit.protocols import prover_estimator as pe
from debatekit.protocols.registry import PROTOCOLS

NAIVE, PE = PROTOCOLS["naive-recursive"], PROTOCOLS["prover-estimator"]
OMNISCIENT = NAIVE.strategies[Role.BOB]["omniscient"]


def naysayer(seat: Seat) -> nr.HonestAlice:
    """What SmolLM2 did on caffeine: every judged question answered no, her claim, answers and
    proof (her transcript) the honest ones on those judgements."""
    D = pe.decomposition_of(seat.instance)
    return nr.HonestAlice(natural(D.machine, D.x, FunctionOracle(lambda q: 0.0, True), D.width))


def forger(seat: Seat) -> nr.HonestAlice:
    """The honest play on a copy of x with its first bit flipped: every step of her transcript is
    right for the x she wrote into her proof."""
    D = pe.decomposition_of(seat.instance)
    return nr.HonestAlice(natural(D.machine, D.x ^ np.eye(1, len(D.x), 0, dtype=np.uint8)[0], D.oracle, D.width))


def pe_forger(seat: Seat) -> pe.HonestAlice:
    """:func:`forger` in prover-estimator debate (Lemma A.5's play on the forged x)."""
    return pe.HonestAlice(forger(seat).D, pe.rules_of(seat))


def concluded(spec, instance, alice: Strategy, bob: Strategy, trials: int = 3):
    tally = spec.batch.simulate(instance, alice, bob, 0, range(trials), None, False)
    return tally, spec.conclude(instance, alice, bob, Summary.of_tally(tally, instance.answer)).to_json()


def her_proofs_answer(instance, alice: Strategy) -> int:
    """M_D(ũ) at the root, computed here from her proof: every step's leaf judged on her bits."""
    D = pe.decomposition_of(instance)
    player = alice.factory(Seat(instance, Role.ALICE, np.random.default_rng(0), None))
    leaves = [(t, t + 1) for t in range(D.width**D.depth)]
    return int(all(D.judge(y, tuple(int(b) for b in player.proof(D.leaf(y)))) for y in leaves))


def test_the_llm_alices_play_is_held_to_the_bound_on_her_proof() -> None:
    """Before: she won 3 of 3 (the challenger judged the implicit proof, so he walked her to the
    last step, where her own proof does say 0) under a promised bound of 0 = P[A(x) = L(x)]. Now the
    bound is P[A(x) = M_D(ũ)], 1 here (her claim 0 is what her proof gives), and the challenger who
    knows her proof's truth takes the first half, which she claimed right and her proof gets wrong:
    she loses every debate and the verdict is the truth."""
    instance = make_instance(PROBLEMS["caffeine"], 26, True, 0)
    alice = Strategy("tests:naysayer", Role.ALICE, "every judged question no", naysayer)
    assert alice.factory(Seat(instance, Role.ALICE, np.random.default_rng(0), None)).claim() == 0
    assert her_proofs_answer(instance, alice) == 0 and instance.answer == 1
    tally, bound = concluded(NAIVE, instance, alice, OMNISCIENT)
    assert bound["payoff_bound_promised"] and bound["payoff_bound"] == 1.0
    assert bound["p_claim_right"] == 0.0 and bound["p_claim_matches_proof"] == 1.0
    assert np.all(tally.rewarded.payoffs <= bound["payoff_bound"])
    assert np.all(tally.rewarded.payoffs == 0.0) and np.all(tally.verdicts == instance.answer)


def test_a_copy_of_x_is_checked_at_the_leaves() -> None:
    """Parity's x is in the proof; a forger who flips a bit of it claims 1 on a false instance.
    Before: no leaf compared her copy with x, so M_D(ũ) = 1, she won every naive debate against the
    omniscient B under a promised bound of 0, and prover-estimator accepted her claim at the honest
    payoff. Now a step that reads a wrong copy of x is a false leaf: M_D(ũ) = 0, she loses, and the
    verdict is the truth in both protocols."""
    instance = make_instance(PROBLEMS["parity"], 8, False, 0)
    alice = Strategy("tests:forger", Role.ALICE, "flips a bit of x in her proof", forger)
    assert alice.factory(Seat(instance, Role.ALICE, np.random.default_rng(0), None)).claim() == 1
    assert her_proofs_answer(instance, alice) == 0
    tally, bound = concluded(NAIVE, instance, alice, OMNISCIENT)
    assert bound["payoff_bound_promised"] and bound["payoff_bound"] == 0.0
    assert np.all(tally.rewarded.payoffs == 0.0) and np.all(tally.verdicts == 0)
    estimator = PE.strategies[Role.BOB]["omniscient"]
    pe_tally, pe_bound = concluded(PE, instance, Strategy("tests:pe-forger", Role.ALICE, "", pe_forger), estimator)
    assert pe_bound["p_claim_matches_proof"] == 0.0
    assert np.all(pe_tally.rewarded.payoffs <= pe_bound["payoff_bound"]) and np.all(pe_tally.verdicts == 0)


def test_the_honest_alice_and_the_implicit_proof_are_unchanged() -> None:
    """The honest A's proof is the implicit one: every leaf holds on it, the omniscient B reads the
    decomposition's own truth, and she wins every debate."""
    instance = make_instance(PROBLEMS["parity"], 8, True, 0)
    honest = NAIVE.strategies[Role.ALICE]["honest"]
    assert her_proofs_answer(instance, honest) == 1
    tally, bound = concluded(NAIVE, instance, honest, OMNISCIENT)
    assert bound["payoff_bound_kind"] == "completeness" and np.all(tally.rewarded.payoffs == 1.0)
