"""Monte Carlo: many independent debates, every random choice flowing from one seed.

Debate i draws from ``SeedSequence(seed, spawn_key=(1, i))`` (child i of the trials child of
``SeedSequence(seed)``; the instance draws from child 0), and spawns one generator each for Alice,
Bob and the verifier. So debate i depends only on the seed and i: the first k debates of a run of
n are the debates of a run of k, on any machine, in any order, with any number of workers.
Debates stream: each is summarised (:class:`~debatekit.engine.summary.Summary`) and, with
``record``, written as one JSON line as it ends, so memory does not grow with the trials.

A protocol played by a batch interpreter (``spec.batch.simulate``: stochastic and recursive debate)
plays debates in blocks of ``spec.batch.block`` (all at once when None), each call told which debate
indices it plays, so debate i still draws only from (seed, i); blocks merge into the summary as
they end. Players that are not trusted built-ins play there one debate per call, ``concurrency``
calls in flight, in worker threads: the same debates, for players that take their time.

Length: the one run loop for every protocol (streamed nodes, batch blocks, resume) and its result
type; splitting them would split the contract ``run`` keeps.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import math
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from debatekit.analysis.stats import wilson, z_value
from debatekit.engine import DEFAULT_MOVE_TIMEOUT
from debatekit.engine.events import Event, Moved, Queried
from debatekit.engine.interrupts import Interrupted, held, stop_if_asked
from debatekit.engine.nodes import End, forfeit
from debatekit.engine.play import Seated, describe, limited, play, seat_copies, seat_player, verifier_answer
from debatekit.engine.record import (
    Journal,
    Mismatch,
    RecordWriter,
    ReplayError,
    check_prefix,
    completed,
    fingerprint,
    journal_path,
    journaled,
)
from debatekit.engine.seeds import debate_seed, instance_seed
from debatekit.engine.summary import Summary
from debatekit.engine.trust import InternalError, charge, trusting
from debatekit.experiments.logs import version
from debatekit.ledger import Ledger, Role
from debatekit.oracle import Asker, Oracle, Pending, Unanswered, debating, in_debate
from debatekit.players.base import Seat, Strategy
from debatekit.problems.registry import Instance, Problem
from debatekit.protocols.payoffs import Conclusions, Payoffs
from debatekit.protocols.spec import Guarantee, ProtocolSpec, guarantee_for
from debatekit.reader import Reader
from debatekit.runs.spec import RunSpec, Truth


def make_instance(problem: Problem, size: int, truth: bool, seed: int, params: Any = None) -> Instance:
    """The instance of a run: drawn from child 0 of ``SeedSequence(seed)``, with the problem's
    parameter values (None: its defaults)."""
    rng = np.random.default_rng(instance_seed(seed))
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

    verdict: int | None
    """None: undecided (a player's model could not be consulted), ``reason`` saying why."""
    forfeit: Role | None
    reason: str
    ledger: Ledger
    aside: list[dict] = field(default_factory=list)
    """What trusted parts of the system did beyond messages and answers (:func:`~debatekit.oracle.aside`)."""


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


async def debate(
    table: Table, seed: np.random.SeedSequence, keep: bool = False, events: list[Event] | None = None
) -> Outcome:
    """One debate at ``table``, with a fresh ledger (keeping its events when ``keep``, in
    ``events`` when given: a journaled list, holding the events it resumes from if any)."""
    spec = table.spec
    prefix = list(events) if events else None
    ledger = Ledger(events=events if events is not None else ([] if keep else None))
    rngs = dict(zip((Role.ALICE, Role.BOB, Role.VERIFIER), map(np.random.default_rng, seed.spawn(3)), strict=True))
    seats: dict[Role, Seated] = {}
    end: End | None = None
    for role, strategy in table.strategies.items():
        asker = Asker(table.oracles.provers, role, Ledger() if prefix else ledger, rngs[role])
        seat = Seat(table.seats[role], role, rngs[role], asker)
        try:
            seats[role] = Seated(await seat_player(strategy, seat, table.timeout), rngs[role], strategy.trusted)
            asker.counting_in(ledger)
        except TimeoutError:
            end = end or forfeit(role, f"not seated within {table.timeout:g} s", spec.alice_argues)
        except Exception as err:  # untrusted strategy code failed to sit down
            charge(role, err, strategy.trusted)
            end = end or forfeit(role, describe(err), spec.alice_argues)
    if end is None:
        root = spec.debate(table.instance, Reader(ledger))
        answer = verifier_answer(table.oracles.verifier, ledger, rngs[Role.VERIFIER])
        with trusting(*table.strategies.values()):
            end = await play(root, seats, answer, ledger, spec.alice_argues, table.timeout, prefix, rngs[Role.VERIFIER])
    playing = debating()
    return Outcome(end.verdict, end.forfeit, end.reason, ledger, [] if playing is None else playing.aside)


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
    undecided: int = 0
    """Debates a player's model could not be consulted in: not among ``trials`` nor any rate."""
    undecided_reason: str = ""
    """The first undecided debate's reason."""
    payoffs: Payoffs | None = None
    """A's mean payoff against the theorem's bound (the recursive protocols, from ``spec.conclude``)."""
    described: dict[str, Any] = field(default_factory=dict)
    """The protocol's facts about the instance for reports (``spec.describe``: stochastic debate's
    K, constants and sample counts; a circuit's size), JSON values that no code reads."""
    params: dict[str, Any] = field(default_factory=dict)
    """The parameters the problem and protocol were made with, by name (as the record header)."""
    boundary: dict[str, str] = field(default_factory=dict)
    """Where each seat's player ran (:class:`~debatekit.engine.isolation.Seating`), by role."""
    model_usage: dict[str, Any] | None = None
    """The models consulted, their calls and tokens (LLM players or judges), when any was."""
    judge_calibration: dict[str, Any] | None = None
    """Each model of the judge scored against the instance's ground truth on the questions it
    answered (n, Brier, the always-0.5 Brier, whether it is worse than chance), when one judged."""
    prompts: dict[str, dict[str, str]] = field(default_factory=dict)
    """The prompt each model role read, its file and SHA-256 (as the record header), when any did."""
    trials_asked: int | None = None
    """Set when the run was interrupted: the debates asked for (``trials`` of them finished)."""

    def to_json(self) -> dict:
        """``run --json``: the fields, the protocol's facts and the payoffs' ``payoff_*`` keys flat."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _NESTED}
        data["accept_ci"] = list(self.accept_ci)
        data["guarantee"] = asdict(self.guarantee)
        if self.model_usage is None:
            del data["model_usage"]
        if self.judge_calibration is None:
            del data["judge_calibration"]
        if not self.prompts:
            del data["prompts"]
        if self.trials_asked is None:
            del data["trials_asked"]
        else:
            data["interrupted"] = True
        return self.described | data | (self.payoffs.to_json() if self.payoffs else {})


_NESTED = frozenset({"guarantee", "payoffs", "described"})


def record_header(
    spec: ProtocolSpec, instance: Instance, alice: Strategy, bob: Strategy, seed: int, params: dict, index: int
) -> dict[str, Any]:
    """What identifies debate ``index`` of a run, for its record: the run as played, in its one
    JSON form (:meth:`RunSpec.identity`), with the instance's fingerprint; enough for replay to rebuild it.
    A protocol declaring constants (stochastic debate's parameter) names them in the header's own field."""
    constants = getattr(spec.params, "constants", None)
    played = RunSpec(spec.name, instance.problem, instance.size, Truth.yes if instance.truth else Truth.no,
                     alice.name, bob.name, constants, tuple(params.items()), seed)  # fmt: skip
    return played.identity() | {"instance": fingerprint(instance), "debate": index}


def run_header(
    spec: ProtocolSpec,
    instance: Instance,
    alice: Strategy,
    bob: Strategy,
    seed: int,
    params: dict,
    verifier: Oracle,
    boundary: dict[str, str] | None = None,
    generation: dict[str, Any] | None = None,
    prompts: dict[str, dict[str, str]] | None = None,
) -> dict[str, Any]:
    """The header of a run's record and journal: what fixes the run (its records' common fields), the
    version, the plan file read, whether the verifier asked the instance's own oracle, where
    each seat's player ran (``boundary``, :class:`~debatekit.engine.isolation.Seating`), how
    models generate (``generation``, when set) and the prompt each model role read, its file and
    SHA-256 (``prompts``; all given by :func:`debatekit.runs.prepare.play`)."""
    own = verifier is instance.oracle or getattr(verifier, "hidden", None) is instance.oracle
    header = record_header(spec, instance, alice, bob, seed, params, 0)
    del header["debate"]
    seats = {} if boundary is None else {"boundary": boundary}
    generated = {} if generation is None else {"generation": generation}
    read = {"prompts": prompts} if prompts else {}
    return (
        header | {"version": version(), "file": instance.file, "oracle": "instance" if own else "other"} | seats
        | generated | read
    )  # fmt: skip


def run_key(spec: ProtocolSpec, instance: Instance, alice: Strategy, bob: Strategy, seed: int, params: dict) -> str:
    """What identifies a run, as a short digest of its records' header: the key under which a
    person's tasks are kept, so a resumed run finds the tasks its debates already asked."""
    header = record_header(spec, instance, alice, bob, seed, params, 0) | {"debate": None}
    return hashlib.sha256(json.dumps(header, sort_keys=True, default=str).encode()).hexdigest()[:16]


def record_of(table: Table, seed: int, index: int, outcome: Outcome) -> dict[str, Any]:
    """Debate ``index`` of a run as JSON data (:mod:`debatekit.engine.record` describes it)."""
    ledger = outcome.ledger
    alice, bob = table.strategies[Role.ALICE], table.strategies[Role.BOB]
    return (
        record_header(table.spec, table.instance, alice, bob, seed, table.params, index)
        | {
            "events": ledger.events,
            "verdict": outcome.verdict,
            "forfeit": outcome.forfeit.value if outcome.forfeit else None,
            "reason": outcome.reason,
            "queries": {role.value: n for role, n in ledger.queries.items()},
            "bits_read": ledger.bits_read,
            "input_bits_read": ledger.input_bits_read,
        }
        | ({"aside": outcome.aside} if outcome.aside else {})
    )


async def _stream(
    table: Table,
    debates: range,
    seed: int,
    concurrency: int,
    progress: Callable[[int], None] | None,
    writer: RecordWriter | None,
    summary: Summary,
    journal: Journal | None = None,
    prefixes: dict[int, list[Event]] | None = None,
) -> Summary:
    """Debates ``debates``, at most ``concurrency`` at once (one at a time without tasks when
    ``concurrency`` is 1), added to ``summary`` (and recorded, in order) as they end; journaled
    as they go when ``journal``, each resuming from its events in ``prefixes`` if it has any."""
    answer, keep, prefixes = table.instance.answer, writer is not None, prefixes or {}
    alice, bob = table.strategies[Role.ALICE], table.strategies[Role.BOB]
    run = run_key(table.spec, table.instance, alice, bob, seed, table.params)

    async def one(index: int) -> Outcome:
        in_debate(run, index)  # this task's context: what a person's task is keyed by
        events = None if journal is None else journal.events(index, prefixes.get(index))
        try:
            return await debate(table, debate_seed(seed, index), keep, events)
        except BaseException as err:
            loud = failed(err, table.oracles.verifier.waits)
            if loud is None:
                raise
            raise loud.at(table.spec.name, range(index, index + 1)) from loud.error

    def finish(index: int, outcome: Outcome) -> None:
        with held():  # summarised and recorded whole, or not at all
            summary.add(index, outcome.verdict, answer, outcome.ledger, outcome.forfeit, outcome.reason)
            if writer is not None:
                writer.write(record_of(table, seed, index, outcome))
        if progress:
            progress(index + 1)

    if concurrency == 1:
        for index in debates:
            stop_if_asked()
            finish(index, await one(index))
        return summary
    done: dict[int, Outcome] = {}
    running: dict[asyncio.Task, int] = {}
    started = flushed = debates.start
    while flushed < debates.stop:
        stop_if_asked()
        while started < debates.stop and len(running) < concurrency:
            running[asyncio.ensure_future(one(started))] = started
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
    resume: bool = False,
    boundary: dict[str, str] | None = None,
    generation: dict[str, Any] | None = None,
    prompts: dict[str, dict[str, str]] | None = None,
) -> RunResult:
    """``trials`` independent debates on one instance; ``progress(k)`` after k debates. A protocol
    that plays many debates at once (``spec.batch``) does so; the others stream, ``concurrency``
    debates in flight at once (raise it for slow players: LLMs, people), each written to
    ``record`` as one JSON line when it ends, with ``params`` (the parameters the instance and the
    protocol were made with, by name) so that replay can rebuild them. With ``resume``, the whole
    records ``record`` already holds from this run (its process died, say) are kept and counted,
    and the run goes on from the first debate missing: the same file and result as a run never
    stopped, since debate i depends only on (seed, i); a node protocol's debate cut off mid-way
    continues from the events its journal holds (:class:`~debatekit.engine.record.Journal`).
    ``boundary`` (where each seat's player runs), ``generation`` (how models generate, when set) and
    ``prompts`` (what each model role read) go into the record's header."""
    if trials < 1:
        raise ValueError("trials must be at least 1")
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    summary, kept, last, prefixes = Summary(), 0, "", {}
    verifying = instance.oracle if oracles is None else oracles.verifier
    header = run_header(spec, instance, alice, bob, seed, params or {}, verifying, boundary, generation, prompts)
    if resume:
        summary, kept, last = _resumed(spec, instance, alice, bob, trials, seed, params or {}, record, header)
        try:
            prefixes = (
                journaled(record, header)
                if record is not None and (spec.debate or (spec.batch and spec.batch.block))
                else {}
            )
        except Mismatch as err:
            raise ResumeError(str(err)) from None
        _journal_fits(spec, instance, alice, bob, seed, oracles, prefixes, journal_path(record))  # type: ignore[arg-type]
    debates = range(summary.played, trials)
    played = instance if oracles is None else replace(instance, oracle=oracles.verifier)
    guarantee_for(spec, instance, played.oracle)  # a protocol that cannot be set up here fails now, not in a debate
    done = [summary]  # the debates finished so far, whatever stops the run

    def result(summary: Summary) -> RunResult:
        conclusions = spec.conclude(played, alice, bob, summary) if spec.conclude and summary.trials else None
        return result_of(spec, instance, alice, bob, seed, summary, conclusions, played.oracle)

    try:
        if spec.batch is not None:
            provers = None if oracles is None or oracles.provers is oracles.verifier else oracles.provers
            with RecordWriter.open(record, header, kept, last) as writer, Journal.open(record, header) as journal:
                _batches(spec, instance, played, alice, bob, debates, seed, progress, writer, timeout,
                         concurrency, params or {}, provers, done, journal, prefixes)  # fmt: skip
        else:
            table = Table.set(spec, instance, alice, bob, oracles, timeout, params)
            with RecordWriter.open(record, header, kept, last) as writer, Journal.open(record, header) as journal:
                asyncio.run(_stream(table, debates, seed, concurrency, progress, writer, done[0], journal, prefixes))
    except Interrupted as stop:  # the debates in flight are abandoned (their journals kept for --resume)
        if done[0].trials:
            finished = result(done[0])
            stop.result = replace(finished, trials_asked=trials)
        raise
    return result(done[0])


def failed(error: BaseException, waiting: bool) -> InternalError | None:
    """The :class:`InternalError` to raise for ``error``, escaping a debate's interpreter (every
    failure of a player's was charged to it inside, so trusted code failed), or None to let it
    through as it is: a signal, a journal's fault (``ReplayError``), or the failure of an oracle
    that ``waits`` (a model's or a person's)."""
    if isinstance(error, InternalError):
        return error
    if not isinstance(error, Exception) or isinstance(error, ReplayError) or waiting:
        return None
    return InternalError.of(error)


class ResumeError(ValueError):
    """A record file that is not the start of this run, or a protocol that cannot resume."""


def _resumed(
    spec: ProtocolSpec,
    instance: Instance,
    alice: Strategy,
    bob: Strategy,
    trials: int,
    seed: int,
    params: dict,
    record: Path | None,
    header: dict[str, Any],
) -> tuple[Summary, int, str]:
    """The summary of the whole records ``record`` holds, checked to be debates 0, 1, ... of this
    run (``header``), the bytes they take and the last one's chain hash."""
    if record is None:
        raise ResumeError("resuming needs the record file of the run")
    if spec.batch is not None and spec.batch.block is None:
        raise ResumeError(f"{spec.name} draws its conclusions over the whole run at once and cannot resume")
    if not record.exists():
        return Summary(), 0, ""
    try:
        records, kept, last = completed(record, header)
    except Mismatch as err:
        raise ResumeError(str(err)) from None
    summary = Summary()
    if len(records) > trials:
        raise ResumeError(f"{record} holds {len(records)} debates, more than the {trials} asked for")
    for index, found in enumerate(records):
        expected = record_header(spec, instance, alice, bob, seed, params, index)
        if any(found.get(key) != value for key, value in expected.items()):
            raise ResumeError(f"{record}: record {index + 1} is not debate {index} of this run")
        try:
            summary.add_record(found, instance.answer)
        except (KeyError, TypeError, ValueError, AttributeError) as err:  # a line edited by hand
            raise ResumeError(f"{record}: record {index + 1} is not a debate's ({type(err).__name__}: {err})") from None
    return summary, kept, last


def _journal_fits(
    spec: ProtocolSpec,
    instance: Instance,
    alice: Strategy,
    bob: Strategy,
    seed: int,
    oracles: Oracles | None,
    prefixes: dict[int, list[Event]],
    journal: Path,
) -> None:
    """A node protocol's journaled debates, checked before they are continued: each fits the
    protocol and holds only answers the verifier's oracle can give; where every seat is a trusted
    built-in and every oracle the instance's own (no person or model is asked again), the journaled
    moves are those the players make (debate i is a function of (seed, i)), so a journal holding a
    lying transcript is refused (a ResumeError)."""
    table = Table.set(spec, instance, alice, bob, oracles)
    verifying = replace(instance, oracle=table.oracles.verifier)
    own = table.oracles.verifier is instance.oracle and table.oracles.provers is instance.oracle  # nobody asked
    live = alice.trusted and bob.trusted and own
    for index, events in sorted(prefixes.items()):
        try:
            check_prefix(events, spec, verifying)
        except ReplayError as err:
            raise ResumeError(f"{journal}: debate {index}: {err}") from None
        if live and spec.debate is not None:
            played = asyncio.run(debate(table, debate_seed(seed, index), keep=True)).ledger.events or []
            moves = [e for e in events if isinstance(e, Moved)]
            if moves != [e for e in played if isinstance(e, Moved)][: len(moves)]:
                raise ResumeError(f"{journal}: debate {index}: its moves are not those its built-in players make")


def _batches(
    spec: ProtocolSpec,
    instance: Instance,
    played: Instance,
    alice: Strategy,
    bob: Strategy,
    debates: range,
    seed: int,
    progress: Callable[[int], None] | None,
    writer: RecordWriter | None,
    timeout: float | None,
    concurrency: int,
    params: dict[str, Any],
    provers: Oracle | None,
    done: list[Summary],
    journal: Journal | None = None,
    prefixes: dict[int, list[Event]] | None = None,
) -> None:
    """Debates ``debates`` through ``spec.batch.simulate``, added to ``summary``: trusted built-ins and
    players in workers (whose limits the workers keep) in blocks of ``spec.batch.block``, anyone else
    one debate per call with ``concurrency`` calls in flight
    (each move under the time limit, each debate's events journaled as they happen and resumed
    from ``prefixes``), except where the protocol plays a run in one call (``batch`` None);
    summarised and recorded in order as blocks end, into ``done[0]`` (so what finished is there
    when a signal stops the run). ``played`` is the instance with the verifier's oracle, which the
    debates are played on; records and the run's key name ``instance``, the run's own. ``provers``
    holds the provers' own oracle when it is not the verifier's. With one block in flight, blocks
    play in this thread, which a signal reaches."""
    assert spec.batch is not None
    waiting = played.oracle.waits or (provers is not None and provers.waits)
    trusted = all(s.trusted or s.isolated for s in (alice, bob)) and not waiting  # whose limits are kept for us
    size = spec.batch.block or len(debates) or 1
    if not trusted and spec.batch.block:  # slow players: one debate per call, several calls in flight
        size = 1
    players = tuple(s if s.trusted or s.isolated else limited(s, timeout) for s in (alice, bob))
    run = run_key(spec, instance, alice, bob, seed, params)
    stop = debates.stop
    blocks = (range(start, min(stop, start + size)) for start in range(debates.start, stop, size))  # lazy

    def play(block: range) -> Any:
        def moved(k: int) -> None:
            if progress and trusted:
                progress(block.start + k)

        events = None
        if size == 1:
            playing = in_debate(run, block.start)
        if journal is not None and size == 1:
            events = journal.events(block.start, (prefixes or {}).get(block.start))
        try:
            with trusting(alice, bob):
                tally = spec.batch.simulate(played, *players, seed, block, moved, writer is not None, provers=provers,
                                      events=events)  # fmt: skip
        except Pending:
            raise
        except Unanswered as err:  # a player's model could not be consulted (one debate a call)
            return Undecided(str(err), list(events or []), playing.aside)
        except BaseException as err:
            loud = failed(err, waiting)
            if loud is None:
                raise
            raise loud.at(spec.name, block) from loud.error
        if size == 1 and playing.aside and tally.records:
            tally.records[0]["aside"] = playing.aside
        return tally

    def finish(block: range, tally: Any) -> None:
        with held():  # summarised and recorded whole, or not at all
            if isinstance(tally, Undecided):
                done[0].add(block.start, None, instance.answer, Ledger(), None, tally.reason)
                if writer is not None:
                    writer.write(record_header(spec, instance, alice, bob, seed, params, block.start) | tally.record())
            else:
                done[0] = done[0].merge(Summary.of_tally(tally, instance.answer, block.start))
                if writer is not None:
                    for index, body in zip(block, tally.records, strict=True):
                        writer.write(record_header(spec, instance, alice, bob, seed, params, index) | body)
        if progress:
            progress(block.stop)

    in_flight = 1 if trusted else concurrency
    if in_flight == 1:
        for block in blocks:
            stop_if_asked()
            finish(block, contextvars.copy_context().run(play, block))
        return
    pool = ThreadPoolExecutor(max_workers=in_flight)
    try:
        pending: list[tuple[range, Future]] = []
        for block in blocks:
            pending.append((block, pool.submit(play, block)))
            while pending and (len(pending) >= in_flight or pending[0][1].done()):
                block, future = pending.pop(0)
                finish(block, future.result())
        for block, future in pending:
            finish(block, future.result())
    finally:  # stopped: debates in flight stop at their next move (call_within), never waited for
        pool.shutdown(wait=False, cancel_futures=True)


@dataclass(frozen=True)
class Undecided:
    """A batch protocol's debate left undecided: why, and the events and aside it had."""

    reason: str
    events: list[Event]
    aside: list[dict]

    def record(self) -> dict[str, Any]:
        """Its record's body (:func:`record_of`'s fields; the queries counted from its events)."""
        queries = dict.fromkeys((role.value for role in Role), 0)
        for event in self.events:
            if isinstance(event, Queried):
                queries[event.role.value] += event.n
        body = {"events": self.events, "verdict": None, "forfeit": None, "reason": self.reason,
                "queries": queries, "bits_read": 0, "input_bits_read": 0}  # fmt: skip
        return body | ({"aside": self.aside} if self.aside else {})


def result_of(
    spec: ProtocolSpec,
    instance: Instance,
    alice: Strategy,
    bob: Strategy,
    seed: int,
    summary: Summary,
    conclusions: Conclusions | None,
    verifier: Oracle,
) -> RunResult:
    """The run's statistics from its summary (which may merge shards); the guarantee is the one
    that holds with the verifier's oracle."""
    n, queries = summary.trials, summary.queries_sum  # the decided debates

    def mean(total: float) -> float:
        return total / n if n else math.nan  # every debate undecided: nothing is measured

    payoffs = None
    if summary.payoffs and conclusions is not None:
        ci = conclusions.ci or summary.payoff_ci(z_value(0.95))
        payoffs = Payoffs(summary.payoff_mean, ci, summary.payoffs, conclusions)
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
        accept_rate=mean(summary.accepts),
        accept_ci=wilson(summary.accepts, n),
        honest_win_rate=mean(summary.honest_wins),
        verifier_queries_max=summary.verifier_queries_max,
        verifier_queries_mean=mean(queries[Role.VERIFIER]),
        verifier_bits_read_max=summary.bits_read_max,
        verifier_bits_read_mean=mean(summary.bits_read_sum),
        input_bits_read_max=summary.input_bits_read_max,
        alice_queries_mean=mean(queries[Role.ALICE]),
        bob_queries_mean=mean(queries[Role.BOB]),
        forfeits={role.value: summary.forfeits[role] for role in (Role.ALICE, Role.BOB)},
        forfeit_reasons={role.value: reason for role, (_, reason) in summary.reasons.items()},
        guarantee=guarantee_for(spec, instance, verifier),
        undecided=summary.undecided,
        undecided_reason="" if summary.undecided_reason is None else summary.undecided_reason[1],
        payoffs=payoffs,
        described=spec.describe(instance) if spec.describe else {},
    )
