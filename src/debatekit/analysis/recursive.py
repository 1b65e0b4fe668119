"""Many debates of the decomposition protocols (prover-estimator and naive recursive), with
payoffs and the theorem's payoff bound for the instance.

The runs are on one instance, so the input distribution μ of Theorem 6.1 is the point mass at
that instance: P[A(x) = L(x)] is the fraction of debates in which A's claim was right (her claim
may be mixed). How a payoff becomes a verdict, for ``accept_rate`` and ``honest_win_rate``:

* naive recursive debate: A wins or loses; the verdict is her claim A(x) when she wins and its
  negation when she loses. Her payoff is 1 when she wins, else 0.
* prover-estimator debate: A's payoff is a sum of rewards; she *wins* a debate when it is
  positive, and the verdict is then her claim, else its negation. (An honest A facing an honest
  B earns exactly r^(d+1) > 0; a lying A facing the truthful estimator earns 0.) The theorem
  speaks of the mean payoff, reported as ``payoff_mean`` with ``payoff_ci``, against
  ``payoff_bound``, also in units of r^(d+1) (``payoff_bound_units``). A soundness bound at or
  above the honest prover's guarantee (1-ε)·r^(d+1) separates nothing: ``payoff_bound_vacuous``
  says so, and ``payoff_bound_note`` in words.

Each debate's proof bits are asked of fresh copies of A's strategy (Figure 2, step 3b): seats
built from her factory with a generator from the debate's own seed, the same for every bit, so
that her bits are one proof per debate whatever path the debate took.

Verdicts of debates A forfeits before claiming count as the truth (B, the side left standing,
is taken to be right); the reason is reported with the forfeits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from debatekit.analysis.stats import wilson
from debatekit.ledger import Ledger, Malformed, Role, Tally
from debatekit.machine.decomposition import Decomposition, LeafOracle
from debatekit.oracle import Asker, Oracle, SampleOnly
from debatekit.players.base import Seat, Strategy
from debatekit.players.estimator import Indistinguishable, proof_truth
from debatekit.problems.registry import Instance
from debatekit.protocols import naive_recursive
from debatekit.protocols.prover_estimator import (
    Debate,
    Record,
    Rules,
    Sampled,
    decomposition_of,
    forfeit_values,
    raised,
    rules_for,
)


@dataclass(frozen=True)
class Bound:
    """The theorem's promise about A's mean payoff on this instance."""

    value: float
    kind: str
    """``completeness`` (a lower bound) or ``soundness`` (an upper bound)."""
    statement: str
    covers_bob: bool
    """Whether the theorem's promise covers the B that played."""


def pe_bound(instance: Instance, rules: Rules, alice: str, bob: str, p_right: float, delta: float | None) -> Bound:
    """Lemma A.5 for the honest A: E[payoff] ≥ (1-ε)·r^(d+1), against every B (if the
    decomposition is A-provable and (ε, ρ)-stable here). Lemma A.4 for any other A:
    E[payoff] < r^(d+1)·P[A(x) = M_D(ũ)] + (2d+1)·δ against an estimator δ-indistinguishable from
    the truth of her proof ũ: the truthful estimator (δ = 0) or Algorithm 1's (its achieved δ).
    With d = log n/log(8/ε) - 1 and ρ = 1/2, r^(d+1) = 1/n and these are Theorem 6.1's (1-ε)/n and
    P[A(x)=L(x)]/n + η.

    Departure: the lemma writes P[A(x) = L(x)]; its proof bounds P[A(x) = M_D(ũ)], the answer her
    own proof gives (``p_right`` here), because g must be the truth of ũ for eq. 10. The two agree
    when her proof is the implicit one, and whenever L(x) = 0 (no proof makes M_D say 1 then,
    Definition 5.1); a prover who denies a true claim and backs it with a broken proof earns
    r^(d+1) against every estimator, which P[A(x) = L(x)] = 0 would deny."""
    d = decomposition_of(instance).depth
    unit = rules.r ** (d + 1)
    if alice == "honest":
        return Bound(
            (1 - rules.epsilon) * unit,
            "completeness",
            "Lemma A.5: E[payoff] >= (1-eps) r^(d+1) against every B",
            True,
        )
    slack = (2 * d + 1) * (delta or 0.0)
    return Bound(
        unit * p_right + slack,
        "soundness",
        f"Lemma A.4: E[payoff] < r^(d+1) P[A(x)=M_D(her proof)] + (2d+1) delta, delta = {delta or 0.0:g}",
        delta is not None,
    )


def naive_bound(alice: str, bob: str) -> Bound:
    """Naive recursive debate has only the unbounded guarantee: an honest A always survives a
    check, and a lying A is caught by a B who can find the false subclaim (``omniscient``, or
    ``honest`` when every subclaim is within its budget). Against a bounded B facing subclaims it
    cannot decide it promises nothing: that is the obfuscated-arguments problem."""
    if alice == "honest":
        return Bound(1.0, "completeness", "honest A wins every debate (deterministic leaf judgements)", True)
    return Bound(0.0, "soundness", "a lying A never wins against a B that finds the flaw", bob == "omniscient")


def _seats(instance: Instance, alice: Strategy, bob: Strategy, seed: np.random.SeedSequence, ledger: Ledger, rules):
    """Each party's seat, and a maker of fresh copies of A for her proof bits (module docstring)."""
    *children, proof_seed = seed.spawn(4)
    rngs = dict(zip((Role.ALICE, Role.BOB, Role.VERIFIER), map(np.random.default_rng, children), strict=True))
    oracle = leaf_oracle(instance, decomposition_of(instance))
    seats = {
        role: Seat(instance, role, rngs[role], Asker(oracle, role, ledger, rngs[role]), rules, opponent)
        for role, opponent in ((Role.ALICE, bob), (Role.BOB, alice))
    }

    def prover() -> Any:
        rng = np.random.default_rng(proof_seed)
        return alice.factory(Seat(instance, Role.ALICE, rng, Asker(oracle, Role.ALICE, ledger, rng), rules, bob))

    return rngs, seats, prover


def _players(seats: dict[Role, Seat], alice: Strategy, bob: Strategy) -> dict[Role, Any] | Malformed:
    players: dict[Role, Any] = {}
    for role, strategy in ((Role.ALICE, alice), (Role.BOB, bob)):
        try:
            players[role] = strategy.factory(seats[role])
        except Exception as err:  # untrusted strategy code failed to sit down
            return Malformed(role, raised("sitting down", err))
    return players


def leaf_oracle(instance: Instance, decomposition: Decomposition) -> Oracle:
    """The oracle every party asks about a leaf (the verifier once, in round 0): the
    decomposition's judge, seen only through samples when the run hides probabilities
    (``--oracle sample`` gives the instance a :class:`~debatekit.oracle.SampleOnly` oracle)."""
    leaf = LeafOracle(decomposition)
    return SampleOnly(leaf) if isinstance(instance.oracle, SampleOnly) else leaf


def simulate(
    protocol: str,
    instance: Instance,
    alice: Strategy,
    bob: Strategy,
    trials: int,
    seed: np.random.SeedSequence,
    progress: Callable[[int], None] | None = None,
    *,
    rules: Rules | None = None,
) -> Tally:
    """``trials`` debates of ``protocol`` ("prover-estimator" or "naive-recursive"), each with its
    own generators spawned from ``seed``; prover-estimator debate plays ``rules`` (default
    :func:`~debatekit.protocols.prover_estimator.rules_for` the instance)."""
    decomposition = decomposition_of(instance)
    if protocol == "prover-estimator":
        rules = rules or rules_for(instance)
    verdicts, payoffs, claims = np.zeros(trials, dtype=int), np.zeros(trials), np.full(trials, -1)
    rewards = np.zeros((trials, decomposition.depth + 2))
    queries = {role: np.zeros(trials, dtype=np.int64) for role in Role}
    bits = np.zeros(trials, dtype=np.int64)
    forfeits = dict.fromkeys((Role.ALICE, Role.BOB), 0)
    reasons: dict[Role, str] = {}
    delta: float | None = 0.0 if bob.name == "omniscient" else None
    oracle = leaf_oracle(instance, decomposition)
    for t, child in enumerate(seed.spawn(trials)):
        ledger, record = Ledger(), Record()
        rngs, seats, prover = _seats(instance, alice, bob, child, ledger, rules)
        players = _players(seats, alice, bob)
        if isinstance(players, Malformed):
            record.forfeit, record.reason = players.sender, players.reason
            if protocol == "prover-estimator":
                rewards[t] = forfeit_values(players.sender, decomposition.depth, rules, None)  # type: ignore[arg-type]
            else:
                rewards[t, 0] = float(players.sender is Role.BOB)
        elif protocol == "prover-estimator":
            alice_b, bob_b = players[Role.ALICE], players[Role.BOB]
            rewards[t] = Debate(
                decomposition, alice_b, bob_b, rules, Sampled(rngs), ledger, record, prover, oracle  # type: ignore[arg-type]
            ).value()
            if type(players[Role.BOB]) is Indistinguishable:  # a δ we computed, not one a player claims
                delta = players[Role.BOB].delta
        else:
            rewards[t, 0] = naive_recursive.NaiveDebate(
                decomposition, players[Role.ALICE], players[Role.BOB], Sampled(rngs), ledger, record, prover, oracle
            ).value()
        payoffs[t] = rewards[t].sum()
        claims[t] = -1 if record.claim is None else record.claim
        won = payoffs[t] > 0
        verdicts[t] = instance.answer if record.claim is None else (record.claim if won else 1 - record.claim)
        for role in Role:
            queries[role][t] = ledger.queries[role]
        bits[t] = ledger.bits_read
        if record.forfeit is not None:
            forfeits[record.forfeit] += 1
            reasons.setdefault(record.forfeit, record.reason)
        if progress:
            progress(t + 1)
    p_right = float(np.mean(claims == instance.answer))
    extra: dict[str, Any]
    if protocol == "prover-estimator":
        assert rules is not None
        p_proof = _p_claim_matches_proof(instance, alice, claims, rules)
        bound = pe_bound(instance, rules, alice.name, bob.name, p_proof, delta)
        unit = rules.r ** (decomposition.depth + 1)
        vacuous = bound.kind == "soundness" and bound.value >= (1 - rules.epsilon) * unit
        extra = {
            "epsilon": rules.epsilon,
            "rho": rules.rho,
            "delta": rules.delta,
            "reward_ratio": rules.r,
            "reward_unit": unit,
            "rewards_mean": {"initial": float(rewards[:, 0].mean())}
            | {
                f"round_{decomposition.depth - i}": float(rewards[:, 1 + i].mean())
                for i in range(decomposition.depth + 1)
            },
            "estimator_delta": delta,
            "p_claim_matches_proof": p_proof,
            "payoff_bound_units": bound.value / unit,
            "payoff_bound_vacuous": vacuous,
            "payoff_bound_note": _note(bound, unit, rules, vacuous),
        }
    else:
        bound = naive_bound(alice.name, bob.name)
        extra = {"payoff_ci": list(wilson(int(payoffs.sum()), trials))}  # payoffs are 0 or 1
    extra |= {
        "payoff_bound": bound.value,
        "payoff_bound_kind": bound.kind,
        "payoff_bound_statement": bound.statement,
        "payoff_bound_covers_bob": bound.covers_bob,
        "p_claim_right": p_right,
        "input_distribution": "the point mass at this instance (its seed)",
        "depth": decomposition.depth,
        "width": decomposition.width,
    }
    return Tally(verdicts, queries, bits, np.zeros(trials, dtype=np.int64), forfeits, reasons, payoffs, extra)


def _p_claim_matches_proof(instance: Instance, alice: Strategy, claims: np.ndarray, rules: Rules) -> float:
    """P[A(x) = M_D(ũ)] over the debates, ũ her proof as fresh copies of her strategy give it
    (:func:`~debatekit.players.estimator.proof_truth`); a debate without a claim counts as wrong."""
    D = decomposition_of(instance)
    seat = Seat(instance, Role.BOB, np.random.default_rng(0), None, rules, alice)
    t = proof_truth(seat).truth(D.root(), D.depth)
    return float(np.mean(np.where(claims == 1, t, np.where(claims == 0, 1 - t, 0.0))))


def _note(bound: Bound, unit: float, rules: Rules, vacuous: bool) -> str:
    """The bound in words, saying plainly when it separates nothing."""
    if bound.kind == "completeness":
        return f"the honest prover is promised at least {bound.value:.3g} = {bound.value / unit:.3g} r^(d+1)"
    if vacuous:
        return (
            f"the soundness bound {bound.value:.3g} = {bound.value / unit:.3g} r^(d+1) is vacuous: it is not below "
            f"the honest prover's guarantee (1-eps) r^(d+1) = {(1 - rules.epsilon) * unit:.3g}; lower delta"
        )
    return f"a dishonest prover earns at most {bound.value:.3g} = {bound.value / unit:.3g} r^(d+1)"
