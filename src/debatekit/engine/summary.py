"""Many debates as one mergeable summary: counts, sums and maxima, never per-debate arrays.

A summary grows by one debate at a time (memory does not grow with the number of trials) and two
summaries of disjoint sets of debates merge into the summary of their union (shards, workers), in
any order: the first forfeit reason kept for a role is the one of the lowest-numbered debate.
Payoffs keep a count, mean and sum of squared deviations, merged by Chan et al.'s formula; the
recursive protocols' reward vectors a sum, A's claims a count of each (what their run-level
conclusions read, :func:`debatekit.analysis.recursive.conclusions`).

An undecided debate (a player's model could not be consulted: verdict None) is counted apart, in
``undecided``, and in nothing else: ``trials`` and every count and rate are the decided debates'.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from debatekit.ledger import Ledger, Role, Tally

PROVERS = (Role.ALICE, Role.BOB)


@dataclass
class Summary:
    trials: int = 0
    accepts: int = 0
    honest_wins: int = 0
    queries_sum: dict[Role, int] = field(default_factory=lambda: dict.fromkeys(Role, 0))
    verifier_queries_max: int = 0
    bits_read_sum: int = 0
    bits_read_max: int = 0
    input_bits_read_max: int = 0
    forfeits: dict[Role, int] = field(default_factory=lambda: dict.fromkeys(PROVERS, 0))
    reasons: dict[Role, tuple[int, str]] = field(default_factory=dict)
    """Each role's first forfeit reason, with the number of the debate it came from."""
    payoffs: int = 0
    payoff_mean: float = 0.0
    payoff_m2: float = 0.0
    reward_sums: np.ndarray | None = None
    """The sum of A's reward vectors (the recursive protocols)."""
    claims: dict[int, int] = field(default_factory=dict)
    """How many debates A claimed 1, 0 or nothing (-1) in."""
    estimator_delta: float | None = None
    undecided: int = 0
    """Debates left undecided (verdict None), not among ``trials``."""
    undecided_reason: tuple[int, str] | None = None
    """The first undecided debate's reason, with its number."""

    @property
    def played(self) -> int:
        """Debates played, decided or not: where a resumed run goes on."""
        return self.trials + self.undecided

    def add(
        self, index: int, verdict: int | None, answer: int, ledger: Ledger, forfeit: Role | None, reason: str
    ) -> None:
        """Debate ``index``: its verdict (None: undecided, for ``reason``), the true answer, its
        ledger and who forfeited."""
        if verdict is None:
            self.undecided += 1
            self.undecided_reason = _first(self.undecided_reason, (index, reason))
            return
        self.trials += 1
        self.accepts += verdict
        self.honest_wins += verdict == answer
        for role in Role:
            self.queries_sum[role] += ledger.queries[role]
        self.verifier_queries_max = max(self.verifier_queries_max, ledger.queries[Role.VERIFIER])
        self.bits_read_sum += ledger.bits_read
        self.bits_read_max = max(self.bits_read_max, ledger.bits_read)
        self.input_bits_read_max = max(self.input_bits_read_max, ledger.input_bits_read)
        if forfeit is not None:
            self.forfeits[forfeit] += 1
            if forfeit not in self.reasons or index < self.reasons[forfeit][0]:
                self.reasons[forfeit] = (index, reason)

    def add_record(self, record: dict, answer: int) -> None:
        """Debate ``record["debate"]`` from its record (a resumed run's earlier debates)."""
        ledger = Ledger()
        for role in Role:
            ledger.count_queries(role, record["queries"][role.value])
        ledger.count_read(record["bits_read"])
        ledger.input_bits_read = record["input_bits_read"]
        forfeit = None if record["forfeit"] is None else Role(record["forfeit"])
        self.add(record["debate"], record["verdict"], answer, ledger, forfeit, record.get("reason", ""))
        if "payoff" in record:
            self._merge_payoffs(Summary(payoffs=1, payoff_mean=float(record["payoff"])))
        if "rewards" in record:
            rewards = np.asarray(record["rewards"], dtype=float)
            self.reward_sums = rewards if self.reward_sums is None else self.reward_sums + rewards
            claim = -1 if record.get("claim") is None else int(record["claim"])
            self.claims[claim] = self.claims.get(claim, 0) + 1
            self.estimator_delta = record.get("estimator_delta", self.estimator_delta)

    def merge(self, other: Summary) -> Summary:
        """The summary of both sets of debates (which must be disjoint)."""
        merged = Summary(
            trials=self.trials + other.trials,
            accepts=self.accepts + other.accepts,
            honest_wins=self.honest_wins + other.honest_wins,
            queries_sum={role: self.queries_sum[role] + other.queries_sum[role] for role in Role},
            verifier_queries_max=max(self.verifier_queries_max, other.verifier_queries_max),
            bits_read_sum=self.bits_read_sum + other.bits_read_sum,
            bits_read_max=max(self.bits_read_max, other.bits_read_max),
            input_bits_read_max=max(self.input_bits_read_max, other.input_bits_read_max),
            forfeits={role: self.forfeits[role] + other.forfeits[role] for role in PROVERS},
            reasons={
                role: min(r for r in (self.reasons.get(role), other.reasons.get(role)) if r is not None)
                for role in set(self.reasons) | set(other.reasons)
            },
            undecided=self.undecided + other.undecided,
            undecided_reason=_first(self.undecided_reason, other.undecided_reason),
        )
        merged.payoffs, merged.payoff_mean, merged.payoff_m2 = self.payoffs, self.payoff_mean, self.payoff_m2
        merged._merge_payoffs(other)
        sums = [s for s in (self.reward_sums, other.reward_sums) if s is not None]
        merged.reward_sums = sum(sums[1:], sums[0]) if sums else None
        merged.claims = {
            k: self.claims.get(k, 0) + other.claims.get(k, 0) for k in set(self.claims) | set(other.claims)
        }
        merged.estimator_delta = other.estimator_delta if other.estimator_delta is not None else self.estimator_delta
        return merged

    def _merge_payoffs(self, other: Summary) -> None:
        n = self.payoffs + other.payoffs
        if n:
            delta = other.payoff_mean - self.payoff_mean
            self.payoff_mean, self.payoff_m2, self.payoffs = (
                self.payoff_mean + delta * other.payoffs / n,
                self.payoff_m2 + other.payoff_m2 + delta**2 * self.payoffs * other.payoffs / n,
                n,
            )

    @classmethod
    def of_tally(cls, tally: Tally, answer: int, first: int = 0) -> Summary:
        """The summary of a batch played at once (stochastic and recursive debate), whose first
        debate is number ``first``."""
        verdicts = tally.verdicts
        summary = cls(
            trials=int(verdicts.size),
            accepts=int(verdicts.sum()),
            honest_wins=int((verdicts == answer).sum()),
            queries_sum={role: int(tally.queries[role].sum()) for role in Role},
            verifier_queries_max=int(tally.queries[Role.VERIFIER].max()),
            bits_read_sum=int(tally.bits_read.sum()),
            bits_read_max=int(tally.bits_read.max()),
            input_bits_read_max=int(tally.input_bits_read.max()),
            forfeits={role: int(tally.forfeits[role]) for role in PROVERS},
            reasons={role: (first, reason) for role, reason in tally.reasons.items()},
        )
        rewarded = tally.rewarded
        if rewarded is not None:
            payoffs = np.asarray(rewarded.payoffs, dtype=float)
            summary.payoffs = int(payoffs.size)
            summary.payoff_mean = float(payoffs.mean())
            summary.payoff_m2 = float(((payoffs - payoffs.mean()) ** 2).sum())
            summary.reward_sums = np.asarray(rewarded.rewards, dtype=float).sum(axis=0)
            values, counts = np.unique(rewarded.claims, return_counts=True)
            summary.claims = {int(v): int(c) for v, c in zip(values, counts, strict=True)}
            summary.estimator_delta = rewarded.estimator_delta
        return summary

    def payoff_ci(self, z: float) -> tuple[float, float]:
        """mean ± z·s/√n, the normal-approximation interval for the mean payoff."""
        if self.payoffs < 2:
            return self.payoff_mean, self.payoff_mean
        half = z * math.sqrt(self.payoff_m2 / (self.payoffs - 1)) / math.sqrt(self.payoffs)
        return self.payoff_mean - half, self.payoff_mean + half


def _first(one: tuple[int, str] | None, other: tuple[int, str] | None) -> tuple[int, str] | None:
    """The reason of the lower-numbered debate, of those given."""
    given = [r for r in (one, other) if r is not None]
    return min(given) if given else None
