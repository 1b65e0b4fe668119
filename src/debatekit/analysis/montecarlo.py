"""Monte Carlo: many independent debates, every random choice flowing from one seed.

``SeedSequence(seed)`` spawns one child for the instance and one per trial; each trial spawns one
generator each for Alice, Bob and the verifier, so results do not depend on the machine or on the
order in which trials run. A protocol that plays its debates in one batch (``spec.simulate``)
gets a single child for the whole batch: the same seed and number of trials give the same
results on any machine, but debate i's draws depend on how many debates share the batch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from debatekit.analysis.stats import normal_ci, wilson
from debatekit.game import End, forfeit, play
from debatekit.ledger import Ledger, Role, Tally
from debatekit.oracle import Asker
from debatekit.players.base import Seat, Strategy
from debatekit.problems.registry import Instance, Problem
from debatekit.protocols.spec import Guarantee, ProtocolSpec
from debatekit.reader import Reader


def seeds(seed: int, trials: int) -> tuple[np.random.Generator, list[np.random.SeedSequence]]:
    """The instance's generator and one seed sequence per trial."""
    instance_seq, trials_seq = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(instance_seq), trials_seq.spawn(trials)


def make_instance(problem: Problem, size: int, truth: bool, seed: int, params: Any = None) -> Instance:
    """The instance of ``seed``, with the problem's parameter values (None: its defaults)."""
    return problem.instance(size, truth, seeds(seed, 0)[0], params)


@dataclass(frozen=True)
class Outcome:
    """One debate: the verdict, who forfeited (if anyone) and why, and the ledger."""

    verdict: int
    forfeit: Role | None
    reason: str
    ledger: Ledger


def play_one(
    spec: ProtocolSpec, instance: Instance, alice: Strategy, bob: Strategy, seed: np.random.SeedSequence
) -> Outcome:
    """One debate of ``alice`` against ``bob``, with a fresh ledger."""
    ledger = Ledger()
    rngs = dict(zip((Role.ALICE, Role.BOB, Role.VERIFIER), map(np.random.default_rng, seed.spawn(3)), strict=True))
    reader = Reader(ledger, Asker(instance.oracle, Role.VERIFIER, ledger, rngs[Role.VERIFIER]))
    players: dict[Role, object] = {}
    end: End | None = None
    for role, strategy in ((Role.ALICE, alice), (Role.BOB, bob)):
        seat = Seat(instance, role, rngs[role], Asker(instance.oracle, role, ledger, rngs[role]))
        try:
            players[role] = strategy.factory(seat)
        except Exception as err:  # untrusted strategy code failed to sit down
            end = end or forfeit(role, f"{type(err).__name__}: {err}", spec.alice_argues)
    if end is None:
        end = play(spec.debate(instance, reader), players, rngs, spec.alice_argues)
    return Outcome(end.verdict, end.forfeit, end.reason, ledger)


@dataclass(frozen=True)
class RunResult:
    """Statistics over ``trials`` debates; field names follow the command line's JSON contract."""

    protocol: str
    problem: str
    size: int
    truth: str
    alice: str
    bob: str
    trials: int
    seed: int
    T: int
    accept_rate: float
    accept_ci: tuple[float, float]
    honest_win_rate: float
    verifier_queries_max: int
    verifier_queries_mean: float
    verifier_bits_read_max: int
    verifier_bits_read_mean: float
    input_bits_read_max: int
    alice_queries_mean: float
    bob_queries_mean: float
    forfeits: dict[str, int]
    forfeit_reasons: dict[str, str]
    guarantee: Guarantee = field(repr=False)
    extra: dict = field(default_factory=dict)
    """Protocol-specific facts (stochastic debate: K, constants, parameters), merged into the JSON."""

    def to_json(self) -> dict:
        data = asdict(self)
        data["accept_ci"] = list(self.accept_ci)
        data["guarantee"] = asdict(self.guarantee)
        return data | data.pop("extra")


def tally_of(outcomes: list[Outcome]) -> Tally:
    """The arrays of many single debates."""
    reasons: dict[Role, str] = {}
    for o in outcomes:
        if o.forfeit is not None:
            reasons.setdefault(o.forfeit, o.reason)
    return Tally(
        verdicts=np.array([o.verdict for o in outcomes]),
        queries={role: np.array([o.ledger.queries[role] for o in outcomes]) for role in Role},
        bits_read=np.array([o.ledger.bits_read for o in outcomes]),
        input_bits_read=np.array([o.ledger.input_bits_read for o in outcomes]),
        forfeits={role: sum(o.forfeit is role for o in outcomes) for role in (Role.ALICE, Role.BOB)},
        reasons=reasons,
    )


def _counted(items: list, progress: Callable[[int], None] | None) -> Iterator:
    for k, item in enumerate(items, start=1):
        yield item
        if progress:
            progress(k)


def run(
    spec: ProtocolSpec,
    instance: Instance,
    alice: Strategy,
    bob: Strategy,
    trials: int,
    seed: int,
    progress: Callable[[int], None] | None = None,
) -> RunResult:
    """``trials`` independent debates on one instance; ``progress(k)`` after k debates. A protocol
    that can play many debates at once (``spec.simulate``) does so."""
    if trials < 1:
        raise ValueError("trials must be at least 1")
    if spec.simulate is not None:
        tally = spec.simulate(instance, alice, bob, trials, seeds(seed, 1)[1][0], progress)
    else:
        tally = tally_of([play_one(spec, instance, alice, bob, s) for s in _counted(seeds(seed, trials)[1], progress)])
    verdicts, queries, bits = tally.verdicts, tally.queries, tally.bits_read
    accepts = int(verdicts.sum())
    return RunResult(
        protocol=spec.name,
        problem=instance.problem,
        size=instance.size,
        truth="yes" if instance.truth else "no",
        alice=alice.name,
        bob=bob.name,
        trials=trials,
        seed=seed,
        T=spec.length(instance),
        accept_rate=accepts / trials,
        accept_ci=wilson(accepts, trials),
        honest_win_rate=float(np.mean(verdicts == instance.answer)),
        verifier_queries_max=int(queries[Role.VERIFIER].max()),
        verifier_queries_mean=float(queries[Role.VERIFIER].mean()),
        verifier_bits_read_max=int(bits.max()),
        verifier_bits_read_mean=float(bits.mean()),
        input_bits_read_max=int(tally.input_bits_read.max()),
        alice_queries_mean=float(queries[Role.ALICE].mean()),
        bob_queries_mean=float(queries[Role.BOB].mean()),
        forfeits={role.value: tally.forfeits[role] for role in (Role.ALICE, Role.BOB)},
        forfeit_reasons={role.value: reason for role, reason in tally.reasons.items()},
        guarantee=spec.guarantee(instance),
        extra=(spec.describe(instance) if spec.describe else {}) | _payoffs(tally),
    )


def _payoffs(tally: Tally) -> dict:
    """payoff_mean and its 95% interval (normal approximation), with the protocol's own results."""
    if tally.payoffs is None:
        return tally.extra
    lo, hi = normal_ci(tally.payoffs)
    return {"payoff_mean": float(tally.payoffs.mean()), "payoff_ci": [lo, hi]} | tally.extra
