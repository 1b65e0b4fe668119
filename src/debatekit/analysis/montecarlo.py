"""Monte Carlo: many independent debates, every random choice flowing from one seed.

``SeedSequence(seed)`` spawns one child for the instance and one per trial; each trial spawns one
generator each for Alice, Bob and the verifier, so results do not depend on the machine or on the
order in which trials run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from debatekit.analysis.stats import wilson
from debatekit.game import End, forfeit, play
from debatekit.ledger import Ledger, Role
from debatekit.oracle import Asker
from debatekit.players.base import Seat, Strategy
from debatekit.problems.registry import Instance, Problem
from debatekit.protocols.spec import Guarantee, ProtocolSpec
from debatekit.reader import Reader


def seeds(seed: int, trials: int) -> tuple[np.random.Generator, list[np.random.SeedSequence]]:
    """The instance's generator and one seed sequence per trial."""
    instance_seq, trials_seq = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(instance_seq), trials_seq.spawn(trials)


def make_instance(problem: Problem, size: int, truth: bool, seed: int) -> Instance:
    return problem.instance(size, truth, seeds(seed, 0)[0])


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
            end = end or forfeit(role, f"{type(err).__name__}: {err}")
    if end is None:
        end = play(spec.debate(instance, reader), players, rngs)
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

    def to_json(self) -> dict:
        data = asdict(self)
        data["accept_ci"] = list(self.accept_ci)
        data["guarantee"] = asdict(self.guarantee)
        return data


def run(
    spec: ProtocolSpec,
    instance: Instance,
    alice: Strategy,
    bob: Strategy,
    trials: int,
    seed: int,
    progress: Callable[[int], None] | None = None,
) -> RunResult:
    """``trials`` independent debates on one instance; ``progress(k)`` after each debate."""
    if trials < 1:
        raise ValueError("trials must be at least 1")
    outcomes = []
    for k, trial_seed in enumerate(seeds(seed, trials)[1], start=1):
        outcomes.append(play_one(spec, instance, alice, bob, trial_seed))
        if progress:
            progress(k)
    verdicts = np.array([o.verdict for o in outcomes])
    queries = {role: np.array([o.ledger.queries[role] for o in outcomes]) for role in Role}
    bits = np.array([o.ledger.bits_read for o in outcomes])
    accepts = int(verdicts.sum())
    forfeits = {role.value: sum(o.forfeit is role for o in outcomes) for role in (Role.ALICE, Role.BOB)}
    reasons: dict[str, str] = {}
    for o in outcomes:
        if o.forfeit is not None:
            reasons.setdefault(o.forfeit.value, o.reason)
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
        input_bits_read_max=max(o.ledger.input_bits_read for o in outcomes),
        alice_queries_mean=float(queries[Role.ALICE].mean()),
        bob_queries_mean=float(queries[Role.BOB].mean()),
        forfeits=forfeits,
        forfeit_reasons=reasons,
        guarantee=spec.guarantee(instance),
    )
