"""A payoff game's promise and a run's results against it (the recursive protocols: Theorem 6.1
through Lemmas A.4 and A.5 for prover-estimator debate, Section 7's naive recursion).

A protocol's ``conclude`` (:class:`~debatekit.protocols.spec.Conclude`) turns a run's merged summary
into :class:`Conclusions`; the run's mean payoff and interval join them as :class:`Payoffs`, which
is what ``RunResult.payoffs`` holds and what ``run --json`` flattens (``payoff_*`` keys)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from debatekit.analysis.stats import wilson, z_value


class BoundKind(StrEnum):
    """Which side of A's mean payoff a bound is on."""

    COMPLETENESS = "completeness"
    """A lower bound: what the honest A earns at least (Lemma A.5)."""
    SOUNDNESS = "soundness"
    """An upper bound: what any other A earns at most (Lemma A.4; Section 7 against a B who finds the flaw)."""


@dataclass(frozen=True)
class Bound:
    """The theorem's promise about A's mean payoff on this instance."""

    value: float
    kind: BoundKind
    statement: str
    covers_bob: bool
    """Whether the theorem's promise covers the B that played."""
    uncovered: str = ""
    """Why the promise says nothing about a B it does not cover."""
    needs_stability: bool = False
    """The promise assumes the decomposition (ε, ρ)-stable at the rules played (Lemma A.5)."""

    def kept(self, low: float, high: float) -> bool:
        """Whether an interval [low, high] for A's mean payoff is consistent with the bound."""
        return high >= self.value if self.kind is BoundKind.COMPLETENESS else low <= self.value


@dataclass(frozen=True)
class Conclusions:
    """A run's results against its payoff bound, from its merged summary."""

    bound: Bound
    promised: bool
    """The theorem promises the bound here: it covers the B that played, and (prover-estimator)
    the bound is not vacuous and the decomposition is not known unstable."""
    note: str | None
    """Why the bound is not promised (or a remark on it), in words; None when there is nothing to say."""
    unit: float | None
    """A's reward unit r^(d+1) (prover-estimator); None where payoffs are wins, 0 or 1 (naive recursion)."""
    p_claim_right: float
    """P[A(x) = L(x)] over the debates (a debate without a claim counts as wrong)."""
    ci: tuple[float, float] | None = None
    """The protocol's own 95% interval for the mean payoff (wins: Wilson's); None: the normal one."""
    played: dict[str, float] = field(default_factory=dict)
    """Parameters as played where they differ from the declared ones (δ at the decomposition's depth)."""
    figures: dict[str, Any] = field(default_factory=dict)
    """The protocol's own figures for reports (ε, ρ, rewards by round, stability...), JSON values
    that the run's JSON carries and no code reads."""

    def to_json(self) -> dict[str, Any]:
        """The ``payoff_bound*`` keys of ``run --json`` and the figures."""
        bound = self.bound
        return self.figures | {
            "payoff_bound": bound.value,
            "payoff_bound_kind": bound.kind.value,
            "payoff_bound_statement": bound.statement,
            "payoff_bound_covers_bob": bound.covers_bob,
            "payoff_bound_uncovered": None if bound.covers_bob else bound.uncovered,
            "payoff_bound_needs_stability": bound.needs_stability,
            "payoff_bound_promised": self.promised,
            "payoff_bound_note": self.note,
            "reward_unit": self.unit,
            "p_claim_right": self.p_claim_right,
        }


@dataclass(frozen=True)
class Payoffs:
    """A's mean payoff over a run's debates, its 95% interval, and the run's conclusions."""

    mean: float
    ci: tuple[float, float]
    trials: int
    conclusions: Conclusions

    def why_not_promised(self) -> str | None:
        """None when the theorem promises the bound here, else why not."""
        return None if self.conclusions.promised else self.conclusions.note or "not promised"

    def interval(self, level: float) -> tuple[float, float]:
        """The mean payoff's interval at ``level``: Wilson's for wins, else the normal interval
        (mean ± z·s/√n) with z for ``level``."""
        if self.conclusions.unit is None:
            return wilson(round(self.mean * self.trials), self.trials, level)
        half = (self.ci[1] - self.ci[0]) / 2 * z_value(level) / z_value(0.95)
        return self.mean - half, self.mean + half

    def holds(self, level: float = 0.95) -> bool | None:
        """Whether the interval at ``level`` is consistent with a promised bound; None: no promise."""
        if not self.conclusions.promised or math.isnan(self.mean):
            return None
        return self.conclusions.bound.kept(*self.interval(level))

    def to_json(self) -> dict[str, Any]:
        return {"payoff_mean": self.mean, "payoff_ci": list(self.ci)} | self.conclusions.to_json()
