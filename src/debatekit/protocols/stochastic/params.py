"""Constants of stochastic-oracle debate: Lean's validated parameter record, and the paper's.

:class:`Params` is ``Params w d k t`` of Debate/Details.lean with every inequality a named check,
plus the sample counts each honest party uses (Lean's Hoeffding ``samples`` unless a certified
plan supplies smaller ones). Lean debates t+1 steps; here ``T`` is that number of steps, so Lean's
``q * (t+1)`` reads ``q * T``. :class:`PaperConstants` are Figure 2's d, r and R. :func:`counts` is
the one map from either to what the debate uses (sample counts, thresholds, promised bounds).
:class:`Constants` names the choices and :class:`Proof` the planner's two certificates; this module
imports nothing heavy, so the command line's options read it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum


class Constants(StrEnum):
    """Stochastic debate's constant choices; each value is its spelling on the command line and in records.

    ``lean``: :meth:`Params.defaults`; ``paper``: :class:`PaperConstants`; ``planned``: the certified
    plan of :mod:`debatekit.protocols.stochastic.planner`."""

    planned = "planned"
    lean = "lean"
    paper = "paper"


class Proof(StrEnum):
    """How a plan's sample counts are certified (docs/planner.md, "Two proofs"); each value is its
    spelling on the command line and in plans."""

    direct = "direct"
    """Proves the conclusions of Lean's ``bob_complete`` and ``bob_sound`` from one-sided tails."""
    lean = "lean"
    """Proves only ``alice_pr_le``'s conclusion (two-sided) for every party's own estimate; Lean does the rest."""


class ParamsError(ValueError):
    """A parameter record that breaks one of the Lean proof's inequalities (named in the message)."""


def samples(e: float, q: float) -> int:
    """Lean ``samples e q = ⌈-ln(q/2) / (2e²)⌉``: enough samples to estimate a probability within
    error < e with failure probability <= q (Hoeffding)."""
    return math.ceil(-math.log(q / 2) / (2 * e**2))


@dataclass(frozen=True)
class Params:
    """Lean ``Params w d k t`` (Details.lean), with separate completeness and soundness targets d.

    v: Vera's failure probability; c: honest Alice's accuracy goal; s: Vera accepts claims off by
    <= c and rejects claims off by >= s; b: honest Bob accepts claims off by <= s and rejects claims
    off by >= b; q: Alice's and Bob's failure probability per step. Honest Alice estimates with
    ``alice_samples`` queries, honest Bob is ``bob'(s, b, q)`` with ``bob_samples``, Vera is
    ``bob'(c, s, v)`` with ``vera_samples``; each defaults to Lean's ``samples``.
    """

    k: float
    T: int
    v: float
    c: float
    s: float
    b: float
    q: float
    w: float = 2 / 3
    completeness: float = 3 / 5
    soundness: float = 3 / 5
    alice_samples: int = field(default=0)
    bob_samples: int = field(default=0)
    vera_samples: int = field(default=0)

    def __post_init__(self) -> None:
        values = (self.k, self.v, self.c, self.s, self.b, self.q, self.w, self.completeness, self.soundness)
        if not all(isinstance(x, int | float) and math.isfinite(x) for x in values):
            raise ParamsError("every parameter must be a finite number")
        if not isinstance(self.T, int) or self.T < 1:
            raise ParamsError(f"T must be a positive integer, got {self.T!r}")
        checks = {
            "k0: 0 < k": self.k > 0,
            "c0: 0 < c": self.c > 0,
            "cs: c < s": self.c < self.s,
            "sb: s < b": self.s < self.b,
            "q0: 0 < q": self.q > 0,
            "q1: q <= 1": self.q <= 1,
            "v0: 0 < v": self.v > 0,
            "v1: v <= 1": self.v <= 1,
            "qv: q <= v": self.q <= self.v,
            "bw: k*b <= w": self.k * self.b <= self.w,
            "complete: d <= (1-v)(w - k*c - q*T)": self.completeness <= self.completeness_bound,
            "sound: d <= (1-v)(1 - q*T)(w - k*b)": self.soundness <= self.soundness_bound,
        }
        for name, holds in checks.items():
            if not holds:
                raise ParamsError(f"invalid parameters: {name} fails ({self._show()})")
        defaults = {
            "alice_samples": samples(self.c, self.q),
            "bob_samples": samples((self.b - self.s) / 2, self.q),
            "vera_samples": samples((self.s - self.c) / 2, self.v),
        }
        for name, default in defaults.items():
            count = getattr(self, name)
            if count == 0:
                object.__setattr__(self, name, default)
            elif not isinstance(count, int) or count < 1:
                raise ParamsError(f"{name} must be a positive integer, got {count!r}")

    @classmethod
    def defaults(cls, k: float, T: int) -> Params:
        """Lean ``Params.defaults k t`` for w = 2/3, d = 3/5 (with t + 1 = T)."""
        return cls(k=k, T=T, v=1 / 100, c=1 / (100 * k), s=2 / (100 * k), b=5 / (100 * k), q=1 / (100 * T))

    @property
    def completeness_bound(self) -> float:
        """(1-v)(w - k·c - q·T): Lean's lower bound on honest Alice's win probability."""
        return (1 - self.v) * (self.w - self.k * self.c - self.q * self.T)

    @property
    def soundness_bound(self) -> float:
        """(1-v)(1 - q·T)(w - k·b): Lean's lower bound on honest Bob's win probability."""
        return (1 - self.v) * (1 - self.q * self.T) * (self.w - self.k * self.b)

    @property
    def bob_threshold(self) -> float:
        """Honest Bob accepts iff |p - estimate| < (s+b)/2 (``bob' s b q``)."""
        return (self.s + self.b) / 2

    @property
    def vera_threshold(self) -> float:
        """Vera accepts iff |p - estimate| < (c+s)/2 (``bob' c s v``)."""
        return (self.c + self.s) / 2

    def _show(self) -> str:
        return (
            f"k={self.k:g}, T={self.T}, v={self.v:g}, c={self.c:g}, s={self.s:g}, b={self.b:g}, q={self.q:g}, "
            f"w={self.w:g}, d=({self.completeness:g}, {self.soundness:g})"
        )


@dataclass(frozen=True)
class PaperConstants:
    """Figure 2's constants for a K-Lipschitz machine of T steps: d = ⌈150K⌉; the verifier draws
    r = ⌈192 d² ln 100⌉ samples and rejects when its estimate is >= 1/(4d) from Alice's claim;
    honest Alice and Bob draw R = ⌈192 d² ln(100 T)⌉ samples per round and Bob aborts when his
    estimate is >= 1/(2d) from the claim. Guarantee: completeness 3/5, soundness 2/5."""

    K: float
    T: int

    def __post_init__(self) -> None:
        if not (math.isfinite(self.K) and self.K > 0) or not isinstance(self.T, int) or self.T < 1:
            raise ParamsError(f"paper constants need K > 0 and T >= 1, got K={self.K!r}, T={self.T!r}")

    @property
    def d(self) -> int:
        return math.ceil(150 * self.K)

    @property
    def verifier_samples(self) -> int:
        return math.ceil(192 * self.d**2 * math.log(100))

    @property
    def prover_samples(self) -> int:
        return math.ceil(192 * self.d**2 * math.log(100 * self.T))

    @property
    def abort_threshold(self) -> float:
        return 1 / (2 * self.d)

    @property
    def verifier_threshold(self) -> float:
        return 1 / (4 * self.d)


@dataclass(frozen=True)
class Counts:
    """What a constant choice fixes for the debate: each honest party's samples per step, the two
    tests' thresholds, how far off a claim honest Bob still accepts with high probability, and the
    promised completeness and soundness."""

    alice_samples: int
    bob_samples: int
    vera_samples: int
    bob_threshold: float
    vera_threshold: float
    bob_margin: float
    completeness: float
    soundness: float


def counts(constants: Params | PaperConstants) -> Counts:
    """The one map from constants to sample counts and thresholds (read by the rules and the planner).

    Lean's :class:`Params`: its ``samples`` (or a plan's), ``bob' s b`` and ``bob' c s``, margin s, its
    two bounds. Figure 2's :class:`PaperConstants`: R samples for each prover, r for the verifier,
    thresholds 1/(2d) and 1/(4d); honest Bob's R samples estimate within 1/(4d) except with probability
    1/(50T) (Hoeffding), so claims within 1/(4d) pass him with high probability; Theorem 6.2 promises
    3/5 both ways."""
    if isinstance(constants, Params):
        return Counts(
            constants.alice_samples, constants.bob_samples, constants.vera_samples, constants.bob_threshold,
            constants.vera_threshold, constants.s, constants.completeness_bound, constants.soundness_bound,
        )  # fmt: skip
    return Counts(
        constants.prover_samples, constants.prover_samples, constants.verifier_samples, constants.abort_threshold,
        constants.verifier_threshold, constants.verifier_threshold, 3 / 5, 3 / 5,
    )  # fmt: skip
