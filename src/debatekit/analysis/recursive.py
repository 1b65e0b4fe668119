"""Many debates of the decomposition protocols (prover-estimator and naive recursive), with
payoffs, the theorem's payoff bound for the instance, a record of each debate, and replay.

The protocol is a value (:data:`PROVER_ESTIMATOR`, :data:`NAIVE_RECURSIVE`) bound into the
catalog's ``simulate`` and ``replay``; what the bound says about a player is read from its
strategy's declared metadata (``Strategy.honest``, ``Strategy.truthful``), never from a name, so
a user's own strategy is judged as it declares itself.

The runs are on one instance, so the input distribution μ of Theorem 6.1 is the point mass at
that instance: P[A(x) = L(x)] is the fraction of debates in which A's claim was right (her claim
may be mixed). How a payoff becomes a verdict, for ``accept_rate`` and ``honest_win_rate``:

* naive recursive debate: A wins or loses; the verdict is her claim A(x) when she wins and its
  negation when she loses. Her payoff is 1 when she wins, else 0.
* prover-estimator debate: A's payoff is a sum of rewards; she *wins* a debate when it is
  positive, and the verdict is then her claim, else its negation. (An honest A facing an honest
  B earns exactly r^(d+1) > 0; a lying A facing the truthful estimator earns 0.) The theorem
  speaks of the mean payoff, reported as ``payoff_mean`` with ``payoff_ci``, against
  ``payoff_bound``, also in units of r^(d+1) (``payoff_bound_units``). ``payoff_bound_promised``
  says whether the theorem promises it here, and ``payoff_bound_note`` why in words: a soundness
  bound at or above the honest prover's floor (1-ε)·r^(d+1) separates nothing
  (``payoff_bound_vacuous``: "no promise (vacuous: bound ≥ honest floor)"), and Lemma A.5's floor
  is promised only where the decomposition is certified (ε, ρ)-stable (:func:`stability_verdict`,
  reported as ``stability``).

Each debate is the protocol's nodes (:func:`~debatekit.protocols.prover_estimator.debate`,
:func:`~debatekit.protocols.naive_recursive.debate`) played by the engine's one interpreter,
:func:`~debatekit.engine.play.play`: trusted coins from the verifier's generator, mixed moves from
the mover's, each message committed once, a stopped debate resumed from its journal through
:class:`~debatekit.engine.record.Given`; :func:`replay` walks a record through the engine's
:func:`~debatekit.engine.record.walked`. Debate i of a run seeded ``seed`` draws only from
``debate_seed(seed, i)``
(:mod:`debatekit.engine.seeds`): its players', the verifier's and the fresh copies' generators
are spawned from it, so the debates of ``range(5, 10)`` are debates 5..9 of a full run. A's proof
bits are committed once per run and instance (Figure 2, step 3b,
:func:`~debatekit.players.estimator.committed_proof`): asked of one context-free copy of her
strategy in batches, kept with the instance, and read by every debate's round 0 and by B, so her
bits are one proof whatever path a debate took and whoever reads them. A record holds the bits
its round 0 read, so replay reads them from the record, not from A.

Verdicts of debates A forfeits before claiming count as the truth (B, the side left standing,
is taken to be right); the reason is reported with the forfeits.

With ``keep`` each debate leaves a record: its events in order (each message as committed, or
its forfeit; each trusted coin with its p; each mixed move's draw; each oracle query with its
role, question, count and answer), the verdict, forfeit and reason, the counts, the payoff and
the reward vector; :func:`replay` replays it.

Length: the two protocols' payoff bounds (Lemmas A.4, A.5), the run of their debates and its
records belong together: the bound reads what the run counted.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from debatekit.analysis.stability import StabilityError, survey
from debatekit.analysis.stats import wilson
from debatekit.engine.events import Drawn, Event, Moved, Queried
from debatekit.engine.nodes import End, Node, Payoff
from debatekit.engine.play import Seated, play, raised, verifier_answer
from debatekit.engine.record import Forged, Replayed, fingerprint, recorded_events, walked
from debatekit.engine.seeds import debate_seed
from debatekit.engine.summary import Summary
from debatekit.engine.trust import ReplayError, charge, trusting
from debatekit.ledger import Ledger, Malformed, Rewarded, Role, Tally
from debatekit.machine.decomposition import Decomposition, Leaves
from debatekit.oracle import NO_ORACLE, Asker, Oracle, SampleOnly, Unanswered
from debatekit.players.base import Seat, Strategy, own_copies
from debatekit.players.count_estimator import CountEstimator
from debatekit.players.estimator import Indistinguishable, committed_proof, proof_key, proof_truth
from debatekit.problems.registry import Instance
from debatekit.protocols import naive_recursive, prover_estimator
from debatekit.protocols.payoffs import Bound, BoundKind, Conclusions
from debatekit.protocols.proof import CommittedProof
from debatekit.protocols.prover_estimator import Rules, decomposition_of, forfeit_values, rules_for, soundness_slack
from debatekit.protocols.recursive_engine import Seen
from debatekit.reader import Reader

BATCH = 256
"""Debates per call in a run (so a run streams, resumes and shows progress by blocks)."""
STABILITY_NODES = 2000
"""The most queries :func:`stability_verdict` checks (``debatekit stability``'s default); beyond,
a uniformly random sample per level, which can refute stability but not certify it."""
VACUOUS = "no promise (vacuous: bound ≥ honest floor)"
SITTING_DOWN = "sitting down"
"""The ``what`` of a forfeit before the debate: a strategy that failed to sit down."""


def pe_bound(instance: Instance, rules: Rules, alice: Strategy, p_right: float, delta: float | None) -> Bound:
    """Lemma A.5 for an A declared ``honest``: E[payoff] ≥ (1-ε)·r^(d+1), against every B (if the
    decomposition is A-provable and (ε, ρ)-stable here). Lemma A.4 for every other A, whatever she
    does: E[payoff] < r^(d+1)·P[A(x) = M_D(ũ)] + (2d+2)·δ against an estimator δ-indistinguishable
    from the truth of her proof ũ: the truthful estimator (δ = 0) or Algorithm 1's (its achieved
    δ). With d = log n/log(8/ε) - 1 and ρ = 1/2, r^(d+1) = 1/n and these are Theorem 6.1's (1-ε)/n
    and P[A(x)=L(x)]/n + η.

    Departure: the lemma states (2d+1)δ; its proof sums to (2d+2)δ
    (:func:`~debatekit.protocols.prover_estimator.soundness_slack` derives it), the safe one used.

    Departure: the lemma writes P[A(x) = L(x)]; its proof bounds P[A(x) = M_D(ũ)], the answer her
    own proof gives (``p_right`` here), because g must be the truth of ũ for eq. 10. The two agree
    when her proof is the implicit one, and whenever L(x) = 0 (no proof makes M_D say 1 then,
    Definition 5.1); a prover who denies a true claim and backs it with a broken proof earns
    r^(d+1) against every estimator, which P[A(x) = L(x)] = 0 would deny."""
    d = decomposition_of(instance).depth
    unit = rules.r ** (d + 1)
    if alice.honest:
        return Bound(
            (1 - rules.epsilon) * unit,
            BoundKind.COMPLETENESS,
            "Lemma A.5: E[payoff] >= (1-eps) r^(d+1) against every B",
            True,
            needs_stability=True,
        )
    slack = soundness_slack(d, delta or 0.0)
    return Bound(
        unit * p_right + slack,
        BoundKind.SOUNDNESS,
        f"Lemma A.4: E[payoff] < r^(d+1) P[A(x)=M_D(her proof)] + (2d+2) delta, delta = {delta or 0.0:g} "
        "(the paper states (2d+1) delta; its proof sums to (2d+2) delta)",
        delta is not None,
        "no promise: Lemma A.4 bounds A against an indistinguishable estimator",
    )


def naive_bound(alice: Strategy, bob: Strategy, p_proof: float) -> Bound:
    """Naive recursive debate has only the unbounded guarantee: an A declared ``honest`` always
    survives a check, and any A wins at most when her claim is what her own proof ũ gives,
    P[A(x) = M_D(ũ)] (``p_proof``), against a B who finds the subclaim false of ũ (declared
    ``truthful``): a claim that differs from M_D(ũ) has an answer that differs, all the way down to
    a leaf the verifier judges on ũ. Against a bounded B facing subclaims it cannot decide it
    promises nothing: that is the obfuscated-arguments problem.

    Not P[A(x) = L(x)] (issue 22): a prover who denies a true claim and backs it with a broken
    proof wins against every B, since her claim is true of her proof (the departure
    :func:`pe_bound` states for Lemma A.4). The two agree when L(x) = 0 (no proof makes M_D say 1)
    and when her proof is the implicit one."""
    if alice.honest:
        return Bound(1.0, BoundKind.COMPLETENESS, "honest A wins every debate (deterministic leaf judgements)", True)
    return Bound(
        p_proof,
        BoundKind.SOUNDNESS,
        "E[payoff] <= P[A(x)=M_D(her proof)] against a B that finds the flaw in her proof: a claim her own "
        "proof refutes never wins (P[A(x)=L(x)] where L(x) = 0)",
        bob.truthful,
        "no promise against a bounded challenger (the point of Section 7)",
    )


class Recursive(ABC):
    """One recursive protocol, as :func:`simulate` and :func:`replay` play it."""

    @abstractmethod
    def rules(self, instance: Instance, rules: Rules | None) -> Rules | None:
        """The rules played (None: the protocol has none)."""

    @abstractmethod
    def debate(
        self,
        decomposition: Decomposition,
        rules: Rules | None,
        reader: Reader,
        prover: CommittedProof | None,
        seen: Seen,
    ) -> Node:
        """One debate's nodes (ending in A's reward vector), A's claim noted in ``seen``."""

    @abstractmethod
    def forfeited(self, sender: Role, decomposition: Decomposition, rules: Rules | None) -> np.ndarray:
        """The reward vector when ``sender`` cannot sit down."""

    @abstractmethod
    def summary(
        self, instance: Instance, alice: Strategy, bob: Strategy, rules: Rules | None, played: Summary
    ) -> Conclusions:
        """The payoff bound and the protocol's own results over the debates ``played`` summarises
        (its reward sums and counts of A's claims, which merge across blocks and shards)."""


@dataclass(frozen=True)
class ProverEstimator(Recursive):
    """Prover-estimator debate (Figure 2, Theorem 6.1): the nodes of
    :func:`~debatekit.protocols.prover_estimator.debate`, ending in A's per-round reward vector."""

    def rules(self, instance: Instance, rules: Rules | None) -> Rules:
        return rules or rules_for(instance)

    def debate(
        self,
        decomposition: Decomposition,
        rules: Rules | None,
        reader: Reader,
        prover: CommittedProof | None,
        seen: Seen,
    ) -> Node:
        assert rules is not None
        return prover_estimator.debate(decomposition, rules, reader, prover, seen)

    def forfeited(self, sender: Role, decomposition: Decomposition, rules: Rules | None) -> np.ndarray:
        assert rules is not None
        return forfeit_values(sender, decomposition.depth, rules, None)

    def summary(
        self, instance: Instance, alice: Strategy, bob: Strategy, rules: Rules | None, played: Summary
    ) -> Conclusions:
        assert rules is not None and played.reward_sums is not None
        depth = decomposition_of(instance).depth
        p_proof = _p_claim_matches_proof(instance, alice, played, rules)
        bound = pe_bound(instance, rules, alice, p_proof, played.estimator_delta)
        means = played.reward_sums / played.trials
        unit = rules.r ** (depth + 1)
        vacuous = bound.kind is BoundKind.SOUNDNESS and bound.value >= (1 - rules.epsilon) * unit
        stability = stability_verdict(instance, rules) if bound.needs_stability else None
        promised = bound.covers_bob and not vacuous and (stability is None or stability.stable)
        delta = rules.delta_at(depth)  # the δ Algorithm 1 is asked for here, not the declared default
        return Conclusions(
            bound,
            bool(promised),
            _note(bound, unit, rules, vacuous, stability) if bound.covers_bob else bound.uncovered,
            unit,
            _p_right(instance, played),
            played={"delta": delta},
            figures={
                "epsilon": rules.epsilon,
                "rho": rules.rho,
                "delta": delta,
                "reward_ratio": rules.r,
                "rewards_mean": {"initial": float(means[0])}
                | {f"round_{depth - i}": float(means[1 + i]) for i in range(depth + 1)},
                "estimator_delta": played.estimator_delta,
                "p_claim_matches_proof": p_proof,
                "payoff_bound_units": bound.value / unit,
                "payoff_bound_vacuous": vacuous,
                "stability": None if stability is None else stability.to_json(),
            },
        )


@dataclass(frozen=True)
class NaiveRecursive(Recursive):
    """Naive recursive debate (Section 7's baseline), :func:`~debatekit.protocols.naive_recursive.debate`:
    the reward vector is [1 if A wins else 0]."""

    def rules(self, instance: Instance, rules: Rules | None) -> None:
        return None

    def debate(
        self,
        decomposition: Decomposition,
        rules: Rules | None,
        reader: Reader,
        prover: CommittedProof | None,
        seen: Seen,
    ) -> Node:
        return naive_recursive.debate(decomposition, reader, prover, seen)

    def forfeited(self, sender: Role, decomposition: Decomposition, rules: Rules | None) -> np.ndarray:
        return np.array([float(sender is Role.BOB)])

    def summary(
        self, instance: Instance, alice: Strategy, bob: Strategy, rules: Rules | None, played: Summary
    ) -> Conclusions:
        assert played.reward_sums is not None
        wins = round(float(played.reward_sums[0]))  # payoffs are 0 or 1
        p_proof = _p_claim_matches_proof(instance, alice, played, rules)
        bound = naive_bound(alice, bob, p_proof)
        note = None if bound.covers_bob else bound.uncovered
        return Conclusions(
            bound,
            bound.covers_bob,
            note,
            None,
            _p_right(instance, played),
            ci=wilson(wins, played.trials),
            figures={"p_claim_matches_proof": p_proof},
        )


PROVER_ESTIMATOR = ProverEstimator()
NAIVE_RECURSIVE = NaiveRecursive()


def _seats(
    instances: dict[Role, Instance],
    alice: Strategy,
    bob: Strategy,
    seed: np.random.SeedSequence,
    ledger: Ledger,
    rules: Rules | None,
    oracle: Oracle,
):
    """Each party's seat on its own instance. (Debate i's seed spawns four children, as when the
    fourth seeded fresh copies of A for her proof bits; it is unused now that her proof is
    committed per run, and kept so that every other draw of debate i is unchanged.)"""
    *children, _ = seed.spawn(4)
    rngs = dict(zip((Role.ALICE, Role.BOB, Role.VERIFIER), map(np.random.default_rng, children), strict=True))
    seats = {
        role: Seat(instances[role], role, rngs[role], Asker(oracle, role, ledger, rngs[role]), rules, opponent)
        for role, opponent in ((Role.ALICE, bob), (Role.BOB, alice))
    }
    return rngs, seats


def _players(seats: dict[Role, Seat], alice: Strategy, bob: Strategy) -> dict[Role, Any] | Malformed:
    players: dict[Role, Any] = {}
    for role, strategy in ((Role.ALICE, alice), (Role.BOB, bob)):
        try:
            players[role] = strategy.factory(seats[role])
        except Exception as err:  # untrusted strategy code failed to sit down
            charge(role, err, strategy.trusted)
            return Malformed(role, raised(SITTING_DOWN, err))
    return players


def leaf_oracle(instance: Instance, decomposition: Decomposition) -> Oracle:
    """The oracle asked about the leaves through ``instance`` (the verifier once, in round 0):
    its own oracle where that is the leaves' judge (the recursive problems', or one a run put in
    its place: people, a model); else the decomposition's leaves (a problem whose oracle is its
    transcript machine's, or a plan's claim tree), whose human judgements are asked of the
    instance's oracle (:class:`~debatekit.machine.decomposition.Leaves`), seen only through
    samples when the run hides probabilities (``--oracle sample``)."""
    given = instance.oracle.hidden if isinstance(instance.oracle, SampleOnly) else instance.oracle
    if instance.machine is None and given is not NO_ORACLE:
        return instance.oracle
    leaves = Leaves(decomposition, instance.oracle)
    return SampleOnly(leaves) if isinstance(instance.oracle, SampleOnly) else leaves


def decided(instance: Instance, rewards: np.ndarray, claim: int | None) -> tuple[float, int]:
    """A's payoff and the verdict it gives (module docstring)."""
    payoff = float(rewards.sum())
    if claim is None:
        return payoff, instance.answer
    return payoff, claim if payoff > 0 else 1 - claim


@dataclass(frozen=True)
class Ended:
    """How one debate ended: A's reward vector, who forfeited and why, and A's claim."""

    rewards: np.ndarray
    forfeit: Role | None
    reason: str
    claim: int | None


def record_body(index: int, ledger: Ledger, ended: Ended, verdict: int, payoff: float, delta: float | None) -> dict:
    """Debate ``index``'s record (the run adds its header): with A's claim and the estimator's δ,
    which the run's conclusions read."""
    return {
        "debate": index,
        "events": ledger.events,
        "verdict": int(verdict),
        "forfeit": None if ended.forfeit is None else ended.forfeit.value,
        "reason": ended.reason,
        "queries": {role.value: int(n) for role, n in ledger.queries.items()},
        "bits_read": ledger.bits_read,
        "input_bits_read": ledger.input_bits_read,
        "payoff": payoff,
        "rewards": [float(r) for r in ended.rewards],
        "claim": ended.claim,
        "estimator_delta": delta,
    }


def sat_down(events: list[Event]) -> Malformed | None:
    """The forfeit of a side that could not sit down, when ``events`` (a record's or a journal's)
    begin with it (the debate's only move), else None."""
    first = next((e for e in events if isinstance(e, Moved)), None)
    if first is None or first.what != SITTING_DOWN:
        return None
    if first.role is Role.VERIFIER or first.forfeit is None:
        raise ReplayError(f"a forfeit before the debate that names no side or reason: {first.to_json()}")
    return Malformed(first.role, first.forfeit)


def simulate(
    protocol: Recursive,
    instance: Instance,
    alice: Strategy,
    bob: Strategy,
    seed: int,
    debates: range,
    progress: Callable[[int], None] | None = None,
    keep: bool = False,
    *,
    rules: Rules | None = None,
    provers: Oracle | None = None,
    events: list[Event] | None = None,
) -> Tally:
    """Debates ``debates`` of a run of ``protocol`` seeded ``seed``, debate i drawing only from
    ``debate_seed(seed, i)``, each played by the engine (:func:`~debatekit.engine.play.play` on
    ``protocol.debate``'s nodes: trusted coins from the verifier's generator, mixed moves from the
    mover's); ``progress(k)`` after k of them; the verifier asks the instance's leaf oracle, Alice
    and Bob ask ``provers`` (a model of the judge, say; default the same); with ``keep``, each
    one's record in ``Tally.records``. Prover-estimator debate plays ``rules`` (default
    :func:`~debatekit.protocols.prover_estimator.rules_for` the instance). The payoff bound is not
    drawn here but by :func:`conclusions`, over the merged run. ``events``, for one debate: its
    journaled list, written as the debate goes; when it already holds a stopped debate's events,
    the debate resumes from them (their verifier answers checked against the oracle first, then
    handed back by the engine's :class:`~debatekit.engine.record.Given`, as a node protocol resumes).
    A player's move that meets :class:`~debatekit.oracle.Unanswered` leaves the debate undecided:
    it is raised again, for the run to record so."""
    n = len(debates)
    if n == 0:
        raise ValueError("debates must hold at least one debate")
    decomposition = decomposition_of(instance)
    rules = protocol.rules(instance, rules)
    oracle = leaf_oracle(instance, decomposition)
    consulted = oracle if provers is None else leaf_oracle(replace(instance, oracle=provers), decomposition)
    verdicts, payoffs, claims = np.zeros(n, dtype=int), np.zeros(n), np.full(n, -1)
    rows: list[np.ndarray] = []
    queries = {role: np.zeros(n, dtype=np.int64) for role in Role}
    bits, inputs = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    forfeits = dict.fromkeys((Role.ALICE, Role.BOB), 0)
    reasons: dict[Role, str] = {}
    delta: float | None = 0.0 if bob.truthful else None
    records: list[dict] | None = [] if keep else None
    instances = own_copies(_shared(instance, consulted, provers), {Role.ALICE: alice, Role.BOB: bob})
    committed = committed_proof(instance, alice, rules)
    instances[Role.BOB].memo(proof_key(alice, rules), lambda: committed)  # B reads the proof the verifier reads
    strategies = {Role.ALICE: alice, Role.BOB: bob}

    async def one(index: int, ledger: Ledger, prefix: list[Event] | None) -> tuple[Ended, Any]:
        rngs, seats = _seats(instances, alice, bob, debate_seed(seed, index), ledger, rules, consulted)
        players = sat_down(prefix) if prefix else None
        if players is None:
            players = _players(seats, alice, bob)
            if isinstance(players, Malformed):
                ledger.note(Moved(role=players.sender, what=SITTING_DOWN, forfeit=players.reason))
        if isinstance(players, Malformed):
            forfeited = protocol.forfeited(players.sender, decomposition, rules)
            return Ended(forfeited, players.sender, players.reason, None), players
        if prefix:  # the journal checked as a replay checks a record: its answers are ones the oracle gives
            again = protocol.debate(decomposition, rules, Reader(Ledger()), None, Seen())
            walked(prefix, again, oracle, Ledger(), partial=True)
        seen = Seen()
        root = protocol.debate(decomposition, rules, Reader(ledger), committed, seen)
        seated = {role: Seated(players[role], rngs[role], strategies[role].trusted) for role in strategies}
        answer = verifier_answer(oracle, ledger, rngs[Role.VERIFIER])
        end = await play(root, seated, answer, ledger, 1, None, prefix, rngs[Role.VERIFIER])
        if isinstance(end, End):  # a move that met Unanswered: undecided (the only verdict end here)
            source, _, why = end.reason.partition(": ")
            raise Unanswered(source, why)
        return Ended(np.array(end.rewards), end.forfeit, end.reason, seen.claim), players

    async def every() -> None:
        nonlocal delta
        for k, index in enumerate(debates):
            prefix = list(events) if events else None
            ledger = Ledger(events=events if events is not None else [] if keep else None)
            with trusting(alice, bob):  # what their seats raise deep in the rules is an internal error
                ended, players = await one(index, ledger, prefix)
            if not isinstance(players, Malformed) and type(players[Role.BOB]) in (Indistinguishable, CountEstimator):
                delta = players[Role.BOB].delta  # a δ we computed, not one a player claims
            payoff, verdict = decided(instance, ended.rewards, ended.claim)
            rows.append(ended.rewards)
            payoffs[k], verdicts[k] = payoff, verdict
            claims[k] = -1 if ended.claim is None else ended.claim
            for role in Role:
                queries[role][k] = ledger.queries[role]
            bits[k], inputs[k] = ledger.bits_read, ledger.input_bits_read
            if ended.forfeit is not None:
                forfeits[ended.forfeit] += 1
                reasons.setdefault(ended.forfeit, ended.reason)
            if records is not None:
                records.append(record_body(index, ledger, ended, verdict, payoff, delta))
            if progress:
                progress(k + 1)

    asyncio.run(every())
    rewarded = Rewarded(payoffs, np.array(rows), claims, delta)
    return Tally(verdicts, queries, bits, inputs, forfeits, reasons, rewarded, records)


_OUTCOME = ("verdict", "forfeit", "reason", "payoff", "rewards", "bits_read", "input_bits_read")
"""What a replay recomputes and compares, beside the events and the verifier's queries."""


def _replayable(event: Event) -> bool:
    """The events a replay makes again: moves, the verifier's draws and queries (not the provers'
    own queries, nor mixed moves' draws: the committed messages settle those)."""
    if isinstance(event, Drawn):
        return event.by is Role.VERIFIER
    return isinstance(event, Moved) or (isinstance(event, Queried) and event.role is Role.VERIFIER)


def replay(protocol: Recursive, record: dict[str, Any], instance: Instance, *, rules: Rules | None = None) -> Replayed:
    """Debate ``record`` of ``protocol`` again on ``instance`` (:func:`simulate`'s rules): the
    protocol's nodes walked by the engine's replay (:func:`~debatekit.engine.record.walked`) with
    the recorded messages (a recorded forfeit conceded with its reason), draws and verifier
    answers, each draw checked against the rules and each answer against the oracle; the events
    the walk computes, the verdict, forfeit and reason, payoff, reward vector and the verifier's
    counts must come out as recorded. A record that runs out or does not fit raises
    :class:`~debatekit.engine.trust.ReplayError`."""
    events = recorded_events(record)
    try:
        index, verifier = int(record["debate"]), record["queries"][Role.VERIFIER.value]
        recorded = {key: record[key] for key in _OUTCOME}
    except (KeyError, TypeError, ValueError) as err:
        raise ReplayError(f"the record lacks {err}") from None
    if "instance" in record and record["instance"] != fingerprint(instance):
        return Replayed(index, False, ("instance: not the instance the record was played on",))
    decomposition = decomposition_of(instance)
    rules = protocol.rules(instance, rules)
    ledger = Ledger(events=[])
    refused = sat_down(events)
    if refused is not None:
        if len([e for e in events if _replayable(e)]) > 1:
            raise ReplayError("the record has moves after a forfeit before the debate")
        ledger.note(Moved(role=refused.sender, what=SITTING_DOWN, forfeit=refused.reason))
        rewards = protocol.forfeited(refused.sender, decomposition, rules)
        ended = Ended(rewards, refused.sender, refused.reason, None)
    else:
        seen = Seen()
        root = protocol.debate(decomposition, rules, Reader(ledger), None, seen)
        try:
            end = walked(events, root, leaf_oracle(instance, decomposition), ledger, partial=False)
        except Forged as err:
            return Replayed(index, False, (str(err),))
        assert isinstance(end, Payoff)
        ended = Ended(np.array(end.rewards), end.forfeit, end.reason, seen.claim)
    payoff, verdict = decided(instance, ended.rewards, ended.claim)
    body = record_body(index, ledger, ended, verdict, payoff, record.get("estimator_delta"))
    differences = []
    mine, theirs = [e for e in body["events"] if _replayable(e)], [e for e in events if _replayable(e)]
    if mine != theirs:
        k = next((i for i, (a, b) in enumerate(zip(mine, theirs, strict=False)) if a != b), min(len(mine), len(theirs)))
        recorded_k, replayed_k = [e.to_json() for e in theirs[k : k + 1]], [e.to_json() for e in mine[k : k + 1]]
        differences.append(f"event {k}: recorded {recorded_k}, replayed {replayed_k}")
    differences += [
        f"{key}: recorded {value}, replayed {body[key]}" for key, value in recorded.items() if body[key] != value
    ]
    if body["queries"][Role.VERIFIER.value] != verifier:
        differences.append(f"verifier queries: recorded {verifier}, replayed {body['queries'][Role.VERIFIER.value]}")
    return Replayed(index, not differences, tuple(differences))


def _shared(instance: Instance, consulted: Oracle, provers: Oracle | None) -> Instance:
    """The instance the seats are given (copied for those who are not trusted): the run's own when
    the provers ask its oracle, else one with theirs, kept with the instance per ``provers`` where
    it can be, so that what trusted seats derive from it (B's training) is kept across blocks."""
    if consulted is instance.oracle:
        return instance
    try:
        return instance.memo(("seats' instance", provers), lambda: replace(instance, oracle=consulted))
    except TypeError:  # an oracle that cannot be a key
        return replace(instance, oracle=consulted)


def conclusions(
    protocol: Recursive, instance: Instance, alice: Strategy, bob: Strategy, played: Summary, rules: Rules | None = None
) -> Conclusions:
    """The run's results beside its counts: the payoff bound for the instance and the protocol's
    own, over the debates ``played`` summarises (one block, or a whole run merged from blocks,
    shards and a resumed run's records)."""
    found = protocol.summary(instance, alice, bob, protocol.rules(instance, rules), played)
    decomposition = decomposition_of(instance)
    return replace(found, figures=found.figures | {
        "input_distribution": "the point mass at this instance (its seed)",
        "depth": decomposition.depth,
        "width": decomposition.width,
    })  # fmt: skip


def _p_right(instance: Instance, played: Summary) -> float:
    """P[A(x) = L(x)] over the debates; a debate without a claim counts as wrong."""
    return played.claims.get(instance.answer, 0) / played.trials


def _p_claim_matches_proof(instance: Instance, alice: Strategy, played: Summary, rules: Rules | None) -> float:
    """P[A(x) = M_D(ũ)] over the debates, ũ her committed proof (the one the debates read,
    :func:`~debatekit.players.estimator.proof_truth`); a debate without a claim counts as wrong."""
    D = decomposition_of(instance)
    seat = Seat(instance, Role.BOB, np.random.default_rng(0), None, rules, alice)
    t = proof_truth(seat).truth(D.root(), D.depth)
    return (played.claims.get(1, 0) * t + played.claims.get(0, 0) * (1 - t)) / played.trials


@dataclass(frozen=True)
class Stability:
    """Definition 5.3 for this instance at the rules played, as Lemma A.5 needs it: ``stable`` is
    True only when every query of the decomposition was checked and found stable, False when some
    checked query is unstable, None (unknown) when a sample found none unstable or stability
    cannot be computed; ``reason`` says which in words."""

    stable: bool | None
    reason: str
    largest_change: float | None
    allowance: float
    checked: int
    queries: int

    def to_json(self) -> dict[str, Any]:
        verdict = {True: "stable", False: "unstable", None: "unknown"}[self.stable]
        return {"verdict": verdict} | {k: v for k, v in self.__dict__.items() if k != "stable"}


def stability_verdict(instance: Instance, rules: Rules) -> Stability:
    """Whether Lemma A.5's hypothesis holds here: (ε, ρ)-stability (Definition 5.3, at the correct
    answers) at every query the honest splits reach, by :func:`~debatekit.analysis.stability.survey`
    (exact where the tree has at most :data:`STABILITY_NODES` queries; else a seeded sample, whose
    Wilson interval is reported). Kept with the instance per (ε, ρ): a run's blocks and the demo's
    rows on one instance share it. Measured: 0.05 s for parity (63 queries), 4.6 s for
    obfuscated-primality b = 16 (1365 queries), 6-7 s for its b = 24 (a sample of 2000), 3.9 s for
    evidence-majority size 2 and 100 s for its size 3 (1191 queries of width 34)."""

    def compute() -> Stability:
        D = decomposition_of(instance)
        allowance = rules.rho * rules.epsilon
        try:
            found = survey(D, rules.epsilon, rules.rho, STABILITY_NODES, np.random.default_rng(0))
        except StabilityError as err:
            return Stability(None, f"stability unknown: it cannot be computed here ({err})", None, allowance, 0, 0)
        largest = max((level.max_sup_change for level in found.levels if level.checked), default=0.0)
        counts = f"{found.nodes_checked} of {found.nodes_total} queries checked"
        if found.stable is None:
            low = min(level.stable_ci[0] for level in found.levels if level.checked)
            reason = (f"stability unknown: no unstable query in a sample ({counts}); the stable fraction "
                      f"is at least {low:.3f} per level (95% Wilson), and Lemma A.5 needs every query")  # fmt: skip
        else:
            relation = "<" if found.stable else ">="
            reason = f"largest change {largest:.3g} {relation} the allowance rho*eps = {allowance:.3g}; {counts}"
        return Stability(found.stable, reason, largest, allowance, found.nodes_checked, found.nodes_total)

    return instance.memo(("stability verdict", rules.epsilon, rules.rho), compute)


def _note(bound: Bound, unit: float, rules: Rules, vacuous: bool, stability: Stability | None) -> str:
    """The bound in words, saying plainly when it promises nothing."""
    if bound.kind is BoundKind.COMPLETENESS:
        if stability is not None and not stability.stable:
            floor = f"Lemma A.5's floor (1-eps) r^(d+1) = {bound.value:.3g} needs a certified (eps, rho)-stable one"
            if stability.stable is False:
                return f"no promise: the decomposition is not (eps, rho)-stable here ({stability.reason}); {floor}"
            return f"no promise: {stability.reason}; {floor}"
        certified = "" if stability is None else f" (certified (eps, rho)-stable: {stability.reason})"
        return f"the honest prover is promised at least {bound.value:.3g} = {bound.value / unit:.3g} r^(d+1){certified}"
    if vacuous:
        return (
            f"{VACUOUS}: the soundness bound {bound.value:.3g} = {bound.value / unit:.3g} r^(d+1) is not below "
            f"the honest prover's floor (1-eps) r^(d+1) = {(1 - rules.epsilon) * unit:.3g}; lower delta"
        )
    return f"a dishonest prover earns at most {bound.value:.3g} = {bound.value / unit:.3g} r^(d+1)"
