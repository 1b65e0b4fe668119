"""Monte Carlo: many independent debates, every random choice flowing from one seed.

Debate i draws from ``SeedSequence(seed, spawn_key=(1, i))`` (child i of the trials child of
``SeedSequence(seed)``; the instance draws from child 0), and spawns one generator each for Alice,
Bob and the verifier. So debate i depends only on the seed and i: the first k debates of a run of
n are the debates of a run of k, on any machine, in any order, with any number of workers.
Debates stream: each is summarised (:class:`~debatekit.engine.summary.Summary`) and, with
``record``, written as one JSON line as it ends, so memory does not grow with the trials.

A protocol that plays its debates in one numpy batch (``spec.simulate``: stochastic debate and
the recursive protocols, not yet on the node engine) gets a single child for the whole batch:
the same seed and trials give the same results on any machine, but debate i's draws depend on
how many debates share the batch, and the batch is held in memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from debatekit.analysis.stats import wilson, z_value
from debatekit.engine import DEFAULT_MOVE_TIMEOUT
from debatekit.engine.nodes import End, forfeit
from debatekit.engine.play import Seated, limited, play, seat_copies, verifier_answer
from debatekit.engine.record import RecordWriter, fingerprint
from debatekit.engine.summary import Summary
from debatekit.ledger import Ledger, Role
from debatekit.oracle import Asker, Oracle
from debatekit.players.base import Seat, Strategy
from debatekit.problems.registry import Instance, Problem
from debatekit.protocols.spec import Guarantee, ProtocolSpec, guarantee_for
from debatekit.reader import Reader


def debate_seed(seed: int, index: int) -> np.random.SeedSequence:
    """Debate ``index``'s seed sequence, from the run's seed and the index alone."""
    return np.random.SeedSequence(seed, spawn_key=(1, index))


def batch_seed(seed: int) -> np.random.SeedSequence:
    """The one seed sequence of a batch played at once (``spec.simulate``)."""
    return debate_seed(seed, 0)


def make_instance(problem: Problem, size: int, truth: bool, seed: int, params: Any = None) -> Instance:
    """The instance of a run: drawn from child 0 of ``SeedSequence(seed)``, with the problem's
    parameter values (None: its defaults)."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0,)))
    return problem.instance(size, truth, rng, params)


@dataclass(frozen=True)
class Oracles:
    """Which oracle each side consults: the provers may query a model of the judge while the
    verifier asks the judge. Both default to the instance's own."""

    provers: Oracle
    verifier: Oracle

    @classmethod
    def of(cls, instance: Instance) -> Oracles:
        return cls(instance.oracle, instance.oracle)


@dataclass(frozen=True)
class Outcome:
    """One debate: the verdict, who forfeited (if anyone) and why, the ledger, and the events of
    its record when kept."""

    verdict: int
    forfeit: Role | None
    reason: str
    ledger: Ledger


@dataclass(frozen=True)
class Table:
    """What one run's debates share: the protocol, the verifier's instance, each seat's own copy,
    the strategies, the oracles and the move time limit."""

    spec: ProtocolSpec
    instance: Instance
    seats: dict[Role, Instance]
    strategies: dict[Role, Strategy]
    oracles: Oracles
    timeout: float | None = DEFAULT_MOVE_TIMEOUT
    params: dict[str, Any] = field(default_factory=dict)
    """The problem's and protocol's parameters in effect, by name, for the record."""

    @classmethod
    def set(
        cls,
        spec: ProtocolSpec,
        instance: Instance,
        alice: Strategy,
        bob: Strategy,
        oracles: Oracles | None = None,
        timeout: float | None = DEFAULT_MOVE_TIMEOUT,
        params: dict[str, Any] | None = None,
    ) -> Table:
        oracles = oracles or Oracles.of(instance)
        copies = seat_copies(replace(instance, oracle=oracles.provers))
        return cls(spec, instance, copies, {Role.ALICE: alice, Role.BOB: bob}, oracles, timeout, params or {})


async def debate(table: Table, seed: np.random.SeedSequence, keep: bool = False) -> Outcome:
    """One debate at ``table``, with a fresh ledger (keeping its events when ``keep``)."""
    spec = table.spec
    ledger = Ledger(events=[] if keep else None)
    rngs = dict(zip((Role.ALICE, Role.BOB, Role.VERIFIER), map(np.random.default_rng, seed.spawn(3)), strict=True))
    seats: dict[Role, Seated] = {}
    end: End | None = None
    for role, strategy in table.strategies.items():
        seat = Seat(table.seats[role], role, rngs[role], Asker(table.oracles.provers, role, ledger, rngs[role]))
        try:
            seats[role] = Seated(strategy.factory(seat), rngs[role], strategy.trusted)
        except Exception as err:  # untrusted strategy code failed to sit down
            end = end or forfeit(role, f"{type(err).__name__}: {err}", spec.alice_argues)
    if end is None:
        root = spec.debate(table.instance, Reader(ledger))
        answer = verifier_answer(table.oracles.verifier, ledger, rngs[Role.VERIFIER])
        end = await play(root, seats, answer, ledger, spec.alice_argues, table.timeout)
    return Outcome(end.verdict, end.forfeit, end.reason, ledger)


def play_one(
    spec: ProtocolSpec,
    instance: Instance,
    alice: Strategy,
    bob: Strategy,
    seed: np.random.SeedSequence,
    oracles: Oracles | None = None,
    timeout: float | None = DEFAULT_MOVE_TIMEOUT,
    keep: bool = False,
) -> Outcome:
    """One debate of ``alice`` against ``bob`` (each seat with its own copy of the instance)."""
    return asyncio.run(debate(Table.set(spec, instance, alice, bob, oracles, timeout), seed, keep))


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


def record_of(table: Table, seed: int, index: int, outcome: Outcome) -> dict[str, Any]:
    """Debate ``index`` of a run as JSON data (:mod:`debatekit.engine.record` describes it)."""
    instance, ledger = table.instance, outcome.ledger
    return {
        "protocol": table.spec.name,
        "problem": instance.problem,
        "size": instance.size,
        "truth": "yes" if instance.truth else "no",
        "seed": seed,
        "params": table.params,
        "instance": fingerprint(instance),
        "debate": index,
        "alice": table.strategies[Role.ALICE].name,
        "bob": table.strategies[Role.BOB].name,
        "events": ledger.events,
        "verdict": outcome.verdict,
        "forfeit": outcome.forfeit.value if outcome.forfeit else None,
        "reason": outcome.reason,
        "queries": {role.value: n for role, n in ledger.queries.items()},
        "bits_read": ledger.bits_read,
        "input_bits_read": ledger.input_bits_read,
    }


async def _stream(
    table: Table,
    trials: int,
    seed: int,
    concurrency: int,
    progress: Callable[[int], None] | None,
    writer: RecordWriter | None,
) -> Summary:
    """Debates 0..trials-1, at most ``concurrency`` at once (one at a time without tasks when
    ``concurrency`` is 1), summarised (and recorded, in order) as they end."""
    summary, answer, keep = Summary(), table.instance.answer, writer is not None

    def finish(index: int, outcome: Outcome) -> None:
        summary.add(index, outcome.verdict, answer, outcome.ledger, outcome.forfeit, outcome.reason)
        if writer is not None:
            writer.write(record_of(table, seed, index, outcome))
        if progress:
            progress(index + 1)

    if concurrency == 1:
        for index in range(trials):
            finish(index, await debate(table, debate_seed(seed, index), keep))
        return summary
    done: dict[int, Outcome] = {}
    running: dict[asyncio.Task, int] = {}
    started = flushed = 0
    while flushed < trials:
        while started < trials and len(running) < concurrency:
            running[asyncio.ensure_future(debate(table, debate_seed(seed, started), keep))] = started
            started += 1
        finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
        for task in finished:
            done[running.pop(task)] = task.result()
        while flushed in done:
            finish(flushed, done.pop(flushed))
            flushed += 1
    return summary


def run(
    spec: ProtocolSpec,
    instance: Instance,
    alice: Strategy,
    bob: Strategy,
    trials: int,
    seed: int,
    progress: Callable[[int], None] | None = None,
    *,
    oracles: Oracles | None = None,
    record: Path | None = None,
    timeout: float | None = DEFAULT_MOVE_TIMEOUT,
    concurrency: int = 1,
    params: dict[str, Any] | None = None,
) -> RunResult:
    """``trials`` independent debates on one instance; ``progress(k)`` after k debates. A protocol
    that plays many debates at once (``spec.simulate``) does so; the others stream, ``concurrency``
    debates in flight at once (raise it for slow players: LLMs, people), each written to
    ``record`` as one JSON line when it ends, with ``params`` (the parameters the instance and the
    protocol were made with, by name) so that replay can rebuild them."""
    if trials < 1:
        raise ValueError("trials must be at least 1")
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    if spec.simulate is not None:
        if record is not None:
            raise ValueError(f"{spec.name} plays its debates as one batch and keeps no per-debate record yet")
        if oracles is not None and oracles.provers is not oracles.verifier:
            raise ValueError(f"{spec.name} plays on one oracle for every party until it moves onto the node engine")
        played = instance if oracles is None else replace(instance, oracle=oracles.verifier)
        alice, bob = limited(alice, timeout), limited(bob, timeout)
        tally = spec.simulate(played, alice, bob, trials, batch_seed(seed), progress)
        summary, extra, verifier = Summary.of_tally(tally, instance.answer), tally.extra, played.oracle
    else:
        table = Table.set(spec, instance, alice, bob, oracles, timeout, params)
        with RecordWriter.open(record) as writer:
            summary = asyncio.run(_stream(table, trials, seed, concurrency, progress, writer))
        extra, verifier = {}, table.oracles.verifier
    return result_of(spec, instance, alice, bob, seed, summary, extra, verifier)


def result_of(
    spec: ProtocolSpec,
    instance: Instance,
    alice: Strategy,
    bob: Strategy,
    seed: int,
    summary: Summary,
    extra: dict,
    verifier: Oracle,
) -> RunResult:
    """The run's statistics from its summary (which may merge shards); the guarantee is the one
    that holds with the verifier's oracle."""
    n, queries = summary.trials, summary.queries_sum
    payoffs = {}
    if summary.payoffs:
        payoffs = {"payoff_mean": summary.payoff_mean, "payoff_ci": list(summary.payoff_ci(z_value(0.95)))}
    return RunResult(
        protocol=spec.name,
        problem=instance.problem,
        size=instance.size,
        truth="yes" if instance.truth else "no",
        alice=alice.name,
        bob=bob.name,
        trials=n,
        seed=seed,
        T=spec.length(instance),
        accept_rate=summary.accepts / n,
        accept_ci=wilson(summary.accepts, n),
        honest_win_rate=summary.honest_wins / n,
        verifier_queries_max=summary.verifier_queries_max,
        verifier_queries_mean=queries[Role.VERIFIER] / n,
        verifier_bits_read_max=summary.bits_read_max,
        verifier_bits_read_mean=summary.bits_read_sum / n,
        input_bits_read_max=summary.input_bits_read_max,
        alice_queries_mean=queries[Role.ALICE] / n,
        bob_queries_mean=queries[Role.BOB] / n,
        forfeits={role.value: summary.forfeits[role] for role in (Role.ALICE, Role.BOB)},
        forfeit_reasons={role.value: reason for role, (_, reason) in summary.reasons.items()},
        guarantee=guarantee_for(spec, instance, verifier),
        extra=(spec.describe(instance) if spec.describe else {}) | payoffs | extra,
    )
