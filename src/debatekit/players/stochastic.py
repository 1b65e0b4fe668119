"""Strategies for stochastic-oracle debate. Each acts on a batch of debates at once (a
:class:`~debatekit.protocols.stochastic.rules.StepView`), returning one message per live debate.

Adversaries are computationally unbounded: they see the true conditional probabilities
``view.p`` for free. Which way a step pushes the output (its *direction*) is estimated once per
instance from sampled runs of M: the difference of P[M = 1] given y_t = 1 and given y_t = 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from debatekit.ledger import Role
from debatekit.players.base import Seat, Shape, Strategy, by_name
from debatekit.problems.registry import Instance
from debatekit.protocols.stochastic.rules import (
    HonestAlice,
    HonestBob,
    SampleOnlyError,
    StepView,
    conditionals,
    machine_of,
)

BIAS = 0.1
"""The constant lie of the ``bias`` adversary."""
SAMPLED_RUNS = 2048
INFLUENCE_SEED = 20231122


def influence(instance: Instance, runs: int = SAMPLED_RUNS) -> np.ndarray:
    """E[M | y_t = 1] - E[M | y_t = 0] for each step, from ``runs`` sampled runs of M (0 where y_t
    never varies). For steps whose randomness is independent of the rest this is the causal
    influence; it only steers adversaries, so an estimate is enough. It is a property of the
    instance, drawn from its own fixed seed, so the adversaries it steers are deterministic."""
    rng = np.random.default_rng(INFLUENCE_SEED)
    machine = machine_of(instance)
    values = np.zeros((runs, machine.offset + machine.length), dtype=np.uint8)
    values[:, : machine.n_inputs] = instance.x
    if machine.n_witness and instance.witness is not None:
        values[:, machine.n_inputs : machine.offset] = instance.witness
    for t in range(machine.length):
        p = conditionals(machine, t, values[:, list(machine.relevant(t))], instance)
        if np.isnan(p).any():
            raise SampleOnlyError("steering by influence needs the oracle's probabilities; this oracle only samples")
        values[:, machine.offset + t] = rng.random(runs) < p
    out = values[:, -1].astype(float)
    ys = values[:, machine.offset :].astype(bool)
    ones, zeros = ys.sum(axis=0), (~ys).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = (out @ ys) / ones - (out @ ~ys) / zeros
    return np.where((ones > 0) & (zeros > 0), gap, 0.0)


class _Steered(HonestAlice):
    """An Alice that knows which way each step pushes the output."""

    def __init__(self, seat: Seat):
        super().__init__(seat)
        self.push = influence(seat.instance)
        self.up = np.where(self.push >= 0, 1.0, -1.0)


class Bias(_Steered):
    """Claim p ± 0.1 at every step, towards the output 1."""

    def claims(self, view: StepView) -> np.ndarray:
        return np.clip(view.p + BIAS * self.up[view.t], 0, 1)


class Influential(_Steered):
    """Honest except at the most influential step, where it claims certainty towards 1."""

    def claims(self, view: StepView) -> np.ndarray:
        if view.t != int(np.argmax(np.abs(self.push))):
            return super().claims(view)
        return np.full(len(view.rows), 1.0 if self.up[view.t] > 0 else 0.0)


class UnderThreshold(_Steered):
    """Lie at every step by as much as honest Bob still accepts with high probability (Lean's s,
    the paper's 1/(4d)), towards the output 1."""

    def claims(self, view: StepView) -> np.ndarray:
        return np.clip(view.p + view.rules.bob_margin * self.up[view.t], 0, 1)


class LieOutput(HonestAlice):
    """Honest until the output step, where it claims P[y_T = 1] = 1."""

    def claims(self, view: StepView) -> np.ndarray:
        return np.ones(len(view.rows)) if view.t == view.steps - 1 else super().claims(view)


def _spoil(honest: np.ndarray, view: StepView, garbage: tuple) -> list[Any]:
    """The honest messages, each replaced by garbage with hazard 1/(steps left): every debate is
    spoiled once, at a uniformly random step (each debate's own coins, ``view.random()``)."""
    strike = view.random() < 1 / (view.steps - view.t)
    picks = (view.random() * len(garbage)).astype(int)
    return [garbage[k] if s else h for h, s, k in zip(honest.tolist(), strike, picks, strict=True)]


class MalformedClaims(HonestAlice):
    """Honest, except that at one uniformly random step it sends NaN, ±inf, -0.5, 1.5 or text."""

    GARBAGE = (float("nan"), float("inf"), float("-inf"), -0.5, 1.5, "0.5", None)

    def claims(self, view: StepView) -> list[Any]:
        return _spoil(super().claims(view), view, self.GARBAGE)


class _ZeroShare:
    """Always the coin share 0 (paper form): harmless, as the other side's share is uniform."""

    def shares(self, view: StepView) -> np.ndarray:
        return np.zeros(len(view.rows))


class FixedShareAlice(_ZeroShare, HonestAlice):
    """Honest claims, but always the coin share 0."""


class AlwaysAbort(HonestBob):
    """Abort at the first step."""

    def aborts(self, view: StepView, claims: np.ndarray, bits: np.ndarray | None) -> np.ndarray:
        return np.ones(len(view.rows), dtype=bool)


class NeverAbort(HonestBob):
    """Never abort."""

    def aborts(self, view: StepView, claims: np.ndarray, bits: np.ndarray | None) -> np.ndarray:
        return np.zeros(len(view.rows), dtype=bool)


class RandomAbort(HonestBob):
    """Abort at one uniformly random step."""

    def aborts(self, view: StepView, claims: np.ndarray, bits: np.ndarray | None) -> np.ndarray:
        return view.random() < 1 / (view.steps - view.t)


class BitAbort(HonestBob):
    """Abort when the drawn bit goes Alice's way (paper form, where Bob sees it); in the Lean form,
    where he does not, when the claim leans Alice's way."""

    def __init__(self, seat: Seat):
        super().__init__(seat)
        self.up = influence(seat.instance) >= 0

    def aborts(self, view: StepView, claims: np.ndarray, bits: np.ndarray | None) -> np.ndarray:
        favours_alice = (claims > 0.5) if bits is None else bits.astype(bool)
        return favours_alice == self.up[view.t]


class MalformedAborts(HonestBob):
    """Honest, except that at one uniformly random step it answers "yes", NaN, 2 or None."""

    GARBAGE = ("yes", float("nan"), 2, None)

    def aborts(self, view: StepView, claims: np.ndarray, bits: np.ndarray | None) -> list[Any]:
        return _spoil(super().aborts(view, claims, bits), view, self.GARBAGE)


class FixedShareBob(_ZeroShare, HonestBob):
    """Honest decisions, but always the coin share 0."""


STRATEGIES: dict[Role, dict[str, Strategy]] = {
    Role.ALICE: by_name(
        Strategy(
            "honest",
            Role.ALICE,
            "Lean's alice: the mean of her samples; a uniform coin share",
            HonestAlice,
            honest=True,
            shape=Shape.EITHER,
        ),
        Strategy("bias", Role.ALICE, f"claim p ± {BIAS} at every step, towards output 1", Bias),
        Strategy("influential", Role.ALICE, "lie only at the most influential step, claiming certainty", Influential),
        Strategy(
            "under-threshold", Role.ALICE, "lie at every step just inside honest Bob's acceptance", UnderThreshold
        ),
        Strategy("lie-output", Role.ALICE, "honest until the output step, then claim P = 1", LieOutput),
        Strategy("malformed", Role.ALICE, "NaN, ±inf, -0.5, 1.5, text or None at a random step", MalformedClaims),
        Strategy("fixed-share", Role.ALICE, "paper form: always the coin share 0 (honest claims)", FixedShareAlice),
    ),
    Role.BOB: by_name(
        Strategy(
            "honest",
            Role.BOB,
            "Lean's bob: abort iff his estimate is far from the claim",
            HonestBob,
            honest=True,
            shape=Shape.EITHER,
        ),
        Strategy("always-abort", Role.BOB, "abort at the first step", AlwaysAbort),
        Strategy("never-abort", Role.BOB, "never abort", NeverAbort),
        Strategy("random-abort", Role.BOB, "abort at a uniformly random step", RandomAbort),
        Strategy("bit-abort", Role.BOB, "abort when the drawn bit (Lean form: the claim) goes Alice's way", BitAbort),
        Strategy("malformed", Role.BOB, "answer 'yes', NaN, 2 or None at a random step", MalformedAborts),
        Strategy("fixed-share", Role.BOB, "paper form: always the coin share 0 (honest decisions)", FixedShareBob),
    ),
}
