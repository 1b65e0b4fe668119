"""A report's rows: every source (a log folder, a run folder, a sweep folder, a demo's results) read
into the same kinds: :class:`Run` (a ``run`` log, a sweep cell, a demo row), :class:`Exact` (a
``solve`` log, the demo's exact rows), :class:`Frontier` (a ``plan --frontier`` log),
:class:`BitsPoint` (the most bits read at one size) and :class:`Accuracy` (an ``experiment
judge-accuracy`` log), gathered in a :class:`Report`."""

from __future__ import annotations

from dataclasses import dataclass, field

from debatekit.protocols.stochastic.params import Proof


@dataclass(frozen=True)
class Run:
    """One Monte Carlo run (a ``run`` log, a sweep cell or a demo row); None where its source does not say."""

    source: str
    protocol: str
    constants: str | None
    problem: str
    size: int | None
    T: int | None
    truth: str
    alice: str
    bob: str
    seed: int | None
    trials: int
    accept_rate: float | None
    honest_win_rate: float
    verifier_queries_max: int | None = None
    alice_queries_mean: float | None = None
    bob_queries_mean: float | None = None
    verifier_bits_read_max: int | None = None
    completeness: float | None = None
    soundness: float | None = None
    queries_bound: int | None = None
    bits_bound: int | None = None
    alice_queries_bound: int | None = None
    bob_queries_bound: int | None = None
    K: float | None = None
    payoff_mean: float | None = None
    payoff_ci: tuple[float, float] | None = None
    payoff_bound: float | None = None
    payoff_bound_kind: str | None = None
    payoff_bound_promised: bool | None = None
    """False where the theorem promises nothing (vacuous, or its hypotheses fail): no bound drawn."""
    reward_unit: float | None = None
    rewards: tuple[tuple[str, float], ...] = ()
    """Mean reward per round in the order the rounds are played (``initial``, then round d down to 0)."""
    payoffs: tuple[float, ...] = ()
    """Per-debate payoffs, when the run kept its records."""
    payoff_holds: bool | None = None
    """Whether the payoff met its bound as the run's source judged it (the demo's family-wise test); None
    where it did not judge (then the 95% interval is checked)."""
    payoff_note: str | None = None
    """The promise in words, or why there is none."""
    params: tuple[tuple[str, str], ...] = ()
    """The ``-P`` parameters in effect (constants aside), sorted by name."""
    oracle: str | None = None
    """The oracles by side (``builtin``; ``prover X, verifier Y`` where they differ); None where unknown."""

    @property
    def label(self) -> str:
        return self.protocol if self.constants is None else f"{self.protocol} ({self.constants})"

    @property
    def adversary(self) -> str:
        return adversary(self.alice, self.bob)


def adversary(alice: str, bob: str) -> str:
    """The players that are not honest (``bob:point-random``), or ``both honest``."""
    others = [f"{role}:{name}" for role, name in (("alice", alice), ("bob", bob)) if name != "honest"]
    return ", ".join(others) or "both honest"


@dataclass(frozen=True)
class Exact:
    """The honest side's exact win probability against the best adversary (``solve``)."""

    source: str
    protocol: str
    problem: str
    size: int
    truth: str
    seed: int | None
    honest: str
    value: float
    guarantee: float


@dataclass(frozen=True)
class FrontierPoint:
    proof: Proof
    prover_budget: int
    """Alice's queries per step."""
    verifier_queries: int


@dataclass(frozen=True)
class Frontier:
    """``plan --frontier``: verifier queries against the prover budget under each proof, and the
    fixed constants (Lean's, the paper's) as (Alice's queries per step, verifier queries)."""

    source: str
    K: float
    T: int
    points: tuple[FrontierPoint, ...]
    constants: tuple[tuple[str, int, int], ...]


@dataclass(frozen=True)
class BitsPoint:
    protocol: str
    problem: str
    n: int
    bits_read_max: int
    bound: int


@dataclass(frozen=True)
class AccuracyArm:
    """One arm of a judge-accuracy experiment as its ``--json`` states it: correct of n decided, the
    accuracy (None when n is 0) with its Wilson 95% interval, the debates left undecided, and per
    debating seat the decided debates it argued the true and the false side."""

    name: str
    accuracy: float | None
    ci: tuple[float, float]
    n: int
    correct: int
    undecided: int
    sides: dict[str, dict[str, int]]


@dataclass(frozen=True)
class Accuracy:
    """``experiment judge-accuracy``: the judge's accuracy per arm, and what fixed it."""

    source: str
    judge: str
    debaters: str
    dataset: str
    trials: int
    seed: int | None
    arms: tuple[AccuracyArm, ...]


@dataclass
class Report:
    """Everything a report draws; ``bits`` adds points to those the runs give (the demo's scaling runs)."""

    title: str
    runs: list[Run] = field(default_factory=list)
    exact: list[Exact] = field(default_factory=list)
    frontiers: list[Frontier] = field(default_factory=list)
    bits: list[BitsPoint] = field(default_factory=list)
    accuracies: list[Accuracy] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Run folders that could not be read (unfinished, unreadable or of another command)."""
    captions: dict[str, str] = field(default_factory=dict)
    """More caption per plot file (what the runs do not say, such as the demo's scaling runs)."""

    def extend(self, other: Report) -> None:
        self.runs += other.runs
        self.exact += other.exact
        self.frontiers += other.frontiers
        self.bits += other.bits
        self.accuracies += other.accuracies
        self.skipped += other.skipped
        self.captions |= other.captions

    @property
    def empty(self) -> bool:
        return not (self.runs or self.exact or self.frontiers or self.bits or self.accuracies)
