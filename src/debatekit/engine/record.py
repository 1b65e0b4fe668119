"""A record of every debate, and replay: the verifier run again on what was committed.

``run --record FILE.jsonl`` writes a header that fixes the run (:func:`chain_lines` reads it back:
the fields every debate shares, the version, the plan file read, whether the verifier asked the
instance's own oracle), then one JSON object per debate, each line carrying ``chain``, the SHA-256
of the line before's hash and its own text (:func:`chained`: it detects tampering and accidents;
it is not a signature). A debate's object holds the protocol, problem, size,
truth, seed, parameters and debate number, the strategies, then its events in order
(:mod:`debatekit.engine.events`: each committed message with its sender, each oracle query with its
role, question, count and answer, each draw, each read of the verifier; their JSON form made here,
as the line is written, and read back once by the events' parser), the verdict, the forfeit and its
reason, and the ledger's counts. As OpenSpiel
rebuilds a state from its history of actions, :func:`replay` rebuilds the instance from the
registry and walks the protocol's nodes again, feeding each move the message the record says was
committed and each verifier query the answer the record holds, checked against the oracle
(:func:`answer_mistake`); the debate reproduces when every answer is one the oracle can give and
the verdict, the forfeit and every count of the verifier come out the same.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import threading
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from debatekit.engine.boundary import from_json, to_json
from debatekit.engine.events import (
    Drawn,
    Event,
    EventError,
    Moved,
    Queried,
    Read,
    event_from_json,
    events_from_json,
    json_default,
)
from debatekit.engine.nodes import (
    NOTHING,
    REFUSED,
    Chance,
    End,
    Judge,
    Move,
    Node,
    Paid,
    Payoff,
    added,
    advance,
    drawn,
    ended,
    judge,
    lost,
    moved,
    settled,
)
from debatekit.engine.trust import ReplayError
from debatekit.files import MAX_LINE, FileMistake, parse_json
from debatekit.ledger import Ledger, Role
from debatekit.reader import Reader

if TYPE_CHECKING:
    from debatekit.oracle import Oracle
    from debatekit.problems.registry import Instance
    from debatekit.protocols.spec import ProtocolSpec


def fingerprint(instance: Instance) -> str:
    """SHA-256 of what fixes the instance: its problem, size and truth, x, the witness, the
    problem's own content (a plan file's bytes, :attr:`Instance.content`), its transcript machine's
    steps and its oracle's table (:func:`_forms`). Replay checks it rebuilt the same instance, so a
    record relabelled (truth yes to no, say) or replayed where the machine or the oracle's
    probabilities differ does not replay. Rules held as code and a decomposition are not hashed."""

    def compute() -> str:
        digest = hashlib.sha256(json.dumps([instance.problem, instance.size, bool(instance.truth)]).encode())
        for part in (instance.x, instance.witness):
            data = b"" if part is None else np.ascontiguousarray(part, dtype=np.uint8).tobytes()
            digest.update(b"|%d|" % len(data) + data)
        digest.update(b"|%d|" % len(instance.content) + instance.content)
        for data in _forms(instance):
            digest.update(b"|%d|" % len(data) + data)
        return digest.hexdigest()

    return instance.memo("fingerprint", compute)


def _forms(instance: Instance) -> tuple[bytes, bytes]:
    """The machine's steps and the oracle's table as plain, deterministic bytes: a circuit's gate
    arrays; a step table's kinds, relevant coordinates and, for an oracle or coin step that reads
    nothing, its query or probability; a :class:`~debatekit.oracle.TableOracle`'s entries (seen
    through a sample-only view) in sorted order. Empty for what has neither."""
    from debatekit.machine.circuit import Circuit
    from debatekit.machine.transcript import StepKind, TableMachine
    from debatekit.oracle import SampleOnly, TableOracle

    machine, steps = instance.machine, b""
    if isinstance(machine, Circuit):
        steps = b"|".join(np.ascontiguousarray(a).tobytes() for a in (machine.ops, machine.in0, machine.in1))
        steps += b"|%d|%d" % (machine.n_inputs, machine.n_witness)
    elif isinstance(machine, TableMachine):
        rows = []
        for t in range(machine.length):
            kind, relevant = machine.kind(t), machine.relevant(t)
            fixed = kind is not StepKind.COMPUTE and not relevant
            rows.append([kind.value, [int(a) for a in relevant], repr(machine.rule(t, ())) if fixed else None])
        steps = json.dumps([machine.n_inputs, machine.n_witness, rows]).encode()
    oracle = instance.oracle.hidden if isinstance(instance.oracle, SampleOnly) else instance.oracle
    table = b""
    if isinstance(oracle, TableOracle):
        known, default = oracle.entries
        table = json.dumps([sorted((repr(query), float(p)) for query, p in known.items()), float(default)]).encode()
    return steps, table


CHAIN = re.compile(rb'\s*,\s*"chain"\s*:\s*"([0-9a-f]{64})"\s*\}\s*$')
"""How a line of a record or journal ends: the hash of its body chained to the line before."""
START = "debatekit record"
"""What the header's hash is chained to."""


def chained(previous: str, body: str) -> str:
    """The chain hash of a line whose JSON text without its ``chain`` is ``body``: SHA-256 of the
    previous line's hash (:data:`START` for the header) and the body. It detects a line edited,
    dropped, reordered or moved to another file, by accident or by hand; it is not a signature:
    whoever edits a file can compute the hashes again."""
    return hashlib.sha256(f"{previous}\n{body}".encode()).hexdigest()


def _line(previous: str, value: dict[str, Any]) -> tuple[str, str]:
    """``value`` as a chained line (its text, its hash)."""
    body = json.dumps(value, separators=(",", ":"), default=json_default)
    link = chained(previous, body)
    return f'{body[:-1]},"chain":"{link}"}}\n', link


class _Chain:
    """Lines appended to a stream, each carrying its hash chained to the line before (thread-safe:
    a run's debates journal from several threads)."""

    def __init__(self, stream: IO[str], last: str):
        self._stream, self._last, self._lock = stream, last, threading.Lock()

    def write(self, value: dict[str, Any]) -> None:
        with self._lock:
            text, self._last = _line(self._last, value)
            self._stream.write(text)
            self._stream.flush()


class RecordWriter(_Chain):
    """The header, then one JSON line per debate, each chained, flushed as it is written."""

    @classmethod
    @contextlib.contextmanager
    def open(
        cls, path: Path | None, header: dict[str, Any], keep: int = 0, last: str = ""
    ) -> Iterator[RecordWriter | None]:
        """A writer to ``path``, which keeps its first ``keep`` bytes (the header and whole records
        of a run being resumed, the last chained to ``last``) and drops the rest."""
        if path is None:
            yield None
            return
        with open(path, "r+" if keep else "w", encoding="utf-8") as stream:
            stream.seek(keep)
            stream.truncate()
            if not keep:
                text, last = _line(START, {"header": header})
                stream.write(text)
            yield cls(stream, last)


def journal_path(path: Path) -> Path:
    """Where a recorded run journals the events of its debates in flight: ``FILE.jsonl.journal``."""
    return path.with_name(path.name + ".journal")


class Journal(_Chain):
    """Every event of the debates in flight, appended (and flushed) as it happens, one line each
    after the run's header, each chained like a record's lines, so that a run whose process dies
    can resume a debate from its last event: the moves already committed and the verifier's
    answers already given (a person's, say) are not asked again. The file goes when the run ends."""

    @classmethod
    @contextlib.contextmanager
    def open(cls, path: Path | None, header: dict[str, Any]) -> Iterator[Journal | None]:
        if path is None:
            yield None
            return
        with open(journal_path(path), "w", encoding="utf-8") as stream:
            text, last = _line(START, {"debate": None, "header": header})
            stream.write(text)
            yield cls(stream, last)
        journal_path(path).unlink()

    def events(self, index: int, prefix: list[Event] | None = None) -> list[Event]:
        """Debate ``index``'s event list: what is appended to it is journaled (``prefix``, the
        events it resumes from, first)."""
        events = _Journaled(self, index)
        for event in prefix or ():
            events.append(event)
        return events


class _Journaled(list):
    def __init__(self, journal: Journal, index: int):
        super().__init__()
        self._journal, self._index = journal, index

    def append(self, event: Event) -> None:
        super().append(event)
        self._journal.write({"debate": self._index, "event": event})


class Mismatch(ValueError):
    """A record or journal that is not the run's (another header), or whose chain is broken."""


def chain_lines(
    path: Path, header: dict[str, Any] | None = None, whole: bool = False
) -> Iterator[tuple[int, dict, int, str]]:
    """The lines of a record or journal after its header: (line number, object, bytes up to and
    including it, its hash), each checked to be chained to the one before; the first line must be
    a header (equal to ``header`` when given). With ``whole``, a last line cut off mid-write (its
    process died) ends the file quietly. A broken chain is a :class:`Mismatch` naming the line; a
    line that is not JSON is a :class:`~debatekit.files.FileMistake`."""
    last, offset = START, 0
    try:
        stream = open(path, "rb")  # noqa: SIM115 (closed by the with below)
    except OSError as err:
        raise FileMistake(path, None, f"cannot read it: {err.strerror or err}") from None
    with stream:
        number = 0
        while raw := stream.readline(MAX_LINE + 1):
            number += 1
            if len(raw) > MAX_LINE:
                raise FileMistake(path, number, f"line longer than {MAX_LINE} bytes")
            if whole and not raw.endswith(b"\n"):
                return
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise FileMistake(path, number, "not UTF-8 text") from None
            found = CHAIN.search(raw)
            value = parse_json(text, path, number) if text.strip() else None
            if not isinstance(value, dict):
                raise FileMistake(path, number, "expected a JSON object" if value is not None else "a blank line")
            if found is None and number == 1:
                raise FileMistake(path, number, "not a record or journal (its first line carries no chain hash)")
            if found is None:
                raise Mismatch(f"{path}:{number}: the line carries no chain hash (it was edited or added)")
            body = raw[: found.start()].decode("utf-8") + "}"
            if chained(last, body) != found.group(1).decode():
                raise Mismatch(f"{path}:{number}: the chain is broken here (the line was edited, or one before it)")
            last, offset = found.group(1).decode(), offset + len(raw)
            if number == 1:
                if not isinstance(value.get("header"), dict):
                    raise FileMistake(path, 1, "not a record or journal (its first line is no header)")
                differ = [] if header is None else _differ(value["header"], header)
                if differ:
                    raise Mismatch(f"{path}:1: not this run's (its header differs in {', '.join(differ)})")
            yield number, value, offset, last
        if number == 0 and not whole:
            raise FileMistake(path, None, "empty: not a record (its first line is a header)")


def _differ(stored: dict[str, Any], header: dict[str, Any]) -> list[str]:
    """The fields in which a file's header is not ``header``'s. A run whose verifier asked another
    oracle (a person) may go on with any: its header's ``oracle`` stays the weaker "other"."""
    keys = {*stored, *header} - ({"oracle"} if stored.get("oracle") == "other" else set())
    return sorted(k for k in keys if stored.get(k) != header.get(k))


def read_header(path: Path) -> dict[str, Any]:
    """The header of a record file (its first line)."""
    for _, value, _, _ in chain_lines(path):
        return value["header"]
    raise FileMistake(path, None, "empty: not a record (its first line is a header)")


def journaled(path: Path, header: dict[str, Any]) -> dict[int, list[Event]]:
    """The events each unfinished debate of a stopped run had journaled (none if no journal),
    from a journal bound to ``header`` and chained line by line (else a :class:`Mismatch`), each
    read by the events' parser (what is not an event is a :class:`~debatekit.files.FileMistake`).
    A debate that committed no move or draw before it stopped is not among them: it is played
    afresh (what its players had asked, they ask again as they sit down)."""
    found: dict[int, list[Event]] = {}
    journal = journal_path(path)
    if not journal.exists():
        return found
    for number, entry, _, _ in chain_lines(journal, header, whole=True):
        if number == 1:
            continue
        if type(entry.get("debate")) is not int or entry["debate"] < 0 or "event" not in entry:
            raise FileMistake(journal, number, "not a journal entry (a debate number and its event)")
        try:
            event = event_from_json(entry["event"])
        except EventError as err:
            raise FileMistake(journal, number, f"not a journal entry's event: {err}") from None
        found.setdefault(entry["debate"], []).append(event)
    return {index: events for index, events in found.items() if any(isinstance(e, Moved | Drawn) for e in events)}


@dataclass(frozen=True)
class Replayed:
    """One record replayed: whether everything reproduced, and what differed."""

    debate: int
    reproduced: bool
    differences: tuple[str, ...]
    undecided: bool = False
    """The record is of an undecided debate (verdict None: a player's model could not be consulted)."""


class Forged(ReplayError):
    """A record or journal holding what no debate could have produced: an answer its oracle never gives."""


def answer_mistake(oracle: Oracle, question: Hashable, n: Any, answer: Any) -> str | None:
    """Why ``answer``, recorded as the yes count of ``n`` queries of ``question``, cannot be what
    ``oracle`` gave (a count outside 0..n; for a known P[yes] of 0 or 1, any other count: a
    deterministic oracle's answer is its answer, a known probability's lies in its support), or
    None. An oracle whose probabilities are hidden (a person, a model, ``--oracle sample``'s view)
    only bounds the count."""
    if type(n) is not int or n < 1:
        return f"a count of {n!r} queries"
    if type(answer) is not int or not 0 <= answer <= n:
        return f"an answer of {answer!r} to {n} queries"
    p = oracle.probability(question)
    if p is not None and p in (0.0, 1.0) and answer != int(p) * n:
        return f"an answer of {answer} to {n} queries, which the oracle never gives here (P[yes] = {p:g})"
    return None


def recorded_events(record: dict[str, Any]) -> list[Event]:
    """A record's events, read once by the events' parser
    (:func:`~debatekit.engine.events.events_from_json`): a record that keeps none, or holds what
    is not an event, is a :class:`ReplayError`."""
    listed = record.get("events")
    if listed is None:
        raise ReplayError("the record keeps no events")
    try:
        return events_from_json(listed)
    except EventError as err:
        raise ReplayError(str(err)) from None


def _walk(events: list[Event], spec: ProtocolSpec, instance: Instance, ledger: Ledger, partial: bool) -> Node:
    """``spec``'s nodes on ``instance`` walked with ``events``' moves, nature's draws and verifier
    answers, each draw and answer checked against the rules and the instance's oracle (a
    :class:`Forged` if they never give it): the end reached (what the debate was paid on the way
    added to its payoff); with ``partial`` (a journal's prefix, an undecided debate's events) the
    node where the events end, else a :class:`ReplayError`."""
    return walked(events, spec.debate(instance, Reader(ledger)), instance.oracle, ledger, partial, spec.alice_argues)  # type: ignore[misc]


def walked(
    events: list[Event], node: Node, oracle: Oracle, ledger: Ledger, partial: bool, alice_argues: int = 1
) -> Node:
    """:func:`_walk` from the root ``node``, the verifier's answers checked against ``oracle``;
    a whole record must have no events left over. When ``ledger`` keeps events, the walk notes
    what it computes (:class:`Given`), for a replay to compare with the record's."""
    given = Given(events, ledger, oracle)
    paid: list[float] | None = None
    while isinstance(node, Move | Chance | Paid):
        if isinstance(node, Paid):
            paid, node = added(paid, node.rewards), node.then
            continue
        after = given.step(node, alice_argues)
        if after is NOTHING:
            if partial:
                return node
            what = f"a {node.role.value} move" if isinstance(node, Move) else f"a draw of {node.what}"
            raise ReplayError(f"the record has no {what} here")
        node = after
    if isinstance(node, Judge):
        try:
            node = judge(node, given.asked(partial), alice_argues)
        except _Ended:
            return node
    if not partial and (left := given.left()):
        raise ReplayError(f"the record has more moves, draws or verifier answers than the debate makes ({left} left)")
    return settled(node, paid)


class _Ended(Exception):
    """A partial record ends within the verifier's check."""


class Given:
    """A debate's recorded events handed back in order: its moves, nature's draws and the
    verifier's answers (counted in ``ledger``: the answers' queries, and the bits of each message
    that came), to replay it (each answer checked against ``oracle``) or to resume it from its
    journal (``oracle`` None: the journal was checked before it is continued, :func:`check_prefix`).
    One reading of events for both. With ``again``, what the walk computes from them is noted in
    ``ledger`` as play notes it (a move as committed again, a draw with what the rules note beside
    it, a query with the question the verifier asks), for a replay to compare with the record; a
    resumed debate's ledger already holds them."""

    def __init__(self, events: Sequence[Event], ledger: Ledger, oracle: Oracle | None = None, again: bool = True):
        self.moves = iter([e for e in events if isinstance(e, Moved)])
        self.draws = iter([e for e in events if isinstance(e, Drawn) and e.by is Role.VERIFIER])
        self.answers = iter([e for e in events if isinstance(e, Queried) and e.role is Role.VERIFIER])
        self.ledger, self.oracle, self.again = ledger, oracle, again

    def step(self, node: Move | Chance, alice_argues: int = 1) -> Node:
        """The node after ``node``'s recorded move or draw, or NOTHING when the events hold no more."""
        if isinstance(node, Chance):
            draw = next(self.draws, None)
            if draw is None:
                return NOTHING
            if draw.what != node.what:
                raise ReplayError(f"the record has a draw of {draw.what} where the verifier draws {node.what}")
            outcome = from_json(draw.outcome)
            if not node.possible(outcome):
                raise Forged(f"the draw {node.what}: {outcome!r}, which the rules never draw here")
            if self.again:
                self.ledger.note(node.event(draw.outcome))
            return drawn(node, outcome, alice_argues)
        event = next(self.moves, None)
        if event is None:
            return NOTHING
        if event.role is not node.role or (node.what and event.what != node.what):
            mover = f"{node.role.value}'s {node.what}" if node.what else node.role.value
            raise ReplayError(f"the record has {_named(event)} where {mover} moves")
        if event.forfeit is not None:
            if event.refused:
                self.ledger.count_read(node.bits)
            if self.again:
                self.ledger.note(moved(node, forfeit=event.forfeit, refused=event.refused))
            return lost(node, node.role, event.forfeit, alice_argues)
        self.ledger.count_read(node.bits)
        committed, after = advance(node, from_json(event.message), alice_argues)
        if self.again:
            refused = committed is REFUSED
            self.ledger.note(
                moved(node, forfeit=ended(after).reason, refused=True) if refused else moved(node, to_json(committed))
            )
        return after

    def answer(self, question: Hashable) -> int | None:
        """The recorded answer to the verifier's next query (None when the events hold no more)."""
        event = next(self.answers, None)
        if event is None:
            return None
        if self.oracle is not None:
            why = answer_mistake(self.oracle, question, event.n, event.answer)
            if why is not None:
                raise Forged(f"verifier query {self.ledger.queries[Role.VERIFIER] + 1}: {why}")
        self.ledger.count_queries(Role.VERIFIER, event.n)
        if self.again:
            from debatekit.oracle import question_json  # here: the record is read where the oracles are not

            asked = question_json(question)
            self.ledger.note(
                Queried(role=Role.VERIFIER, question=asked, n=event.n, answer=event.answer, judges=event.judges)
            )
        return event.answer

    def left(self) -> int:
        """How many of the events' moves, draws and verifier answers no step has taken."""
        return sum(1 for events in (self.moves, self.draws, self.answers) for _ in events)

    def asked(self, partial: bool) -> Callable[[Hashable], int]:
        """The verifier's answers from the record alone: a record that runs out is a
        :class:`ReplayError`, or with ``partial`` the end of a prefix."""

        def answer(question: Hashable) -> int:
            given = self.answer(question)
            if given is None:
                if partial:
                    raise _Ended
                raise ReplayError("the record has fewer verifier queries than the verifier makes")
            return given

        return answer


def resuming(ledger: Ledger, prefix: Sequence[Event]) -> None:
    """Count in ``ledger``, whose events hold a stopped debate's journaled ``prefix``, what the
    debate resumed from it does not make again: its provers' queries up to its last committed move
    or draw (its players sit down again against a scratch ledger). After that event it makes again
    the queries of a move not yet committed and the verifier's check so far (its reads; its
    answers are given again by :class:`Given`): those are counted as they are made again and not
    noted a second time (:attr:`~debatekit.ledger.Ledger.journaled`)."""
    last = max((i for i, event in enumerate(prefix) if isinstance(event, Moved | Drawn)), default=len(prefix))
    for i, event in enumerate(prefix):
        if isinstance(event, Queried) and event.role is not Role.VERIFIER:
            if i < last:
                ledger.count_queries(event.role, event.n)
            else:
                ledger.journaled[event.role] = ledger.journaled.get(event.role, 0) + 1
        elif isinstance(event, Read) and i > last:
            ledger.journaled[Role.VERIFIER] = ledger.journaled.get(Role.VERIFIER, 0) + 1


def _named(event: Moved) -> str:
    """A recorded move in words: its sender and, when it has one, its name."""
    what = f"'s {event.what}" if event.what else ""
    return f"a {event.role.value}{what} move"


def check_prefix(events: list[Event], spec: ProtocolSpec, instance: Instance) -> None:
    """A journaled prefix of a node protocol's debate, checked before it is continued: its moves
    fit the protocol and each verifier answer it holds is one ``instance``'s oracle can give
    (a :class:`ReplayError` or :class:`Forged` otherwise)."""
    if spec.debate is not None:
        _walk(events, spec, instance, Ledger(), partial=True)


def replay(record: dict[str, Any], spec: ProtocolSpec, instance: Instance) -> Replayed:
    """Walk ``spec``'s nodes on ``instance`` again with the record's committed messages, nature's
    recorded draws and the verifier's recorded oracle answers, each checked against the rules and
    the instance's oracle; compare the verdict (a payoff game's reward vector), the forfeit and the
    verifier's counts. The record's events are read here, on the paths that walk them (a batch
    protocol's ``replay`` reads its own), by :func:`recorded_events`."""
    if record["events"] is None:
        raise ReplayError("the record keeps no events")
    if record["instance"] != fingerprint(instance):
        return Replayed(record["debate"], False, ("instance: not the instance the record was played on",))
    if record["verdict"] is None:
        return _undecided(record, spec, instance)
    if spec.debate is None:
        if spec.batch is None:
            raise ReplayError(f"{spec.name} cannot replay its records")
        return spec.batch.replay(record, instance)
    ledger, events = Ledger(), recorded_events(record)
    try:
        end = _walk(events, spec, instance, ledger, partial=False)
    except Forged as err:
        return Replayed(record["debate"], False, (str(err),))
    assert isinstance(end, End | Payoff)
    outcome = ("verdict", end.verdict) if isinstance(end, End) else ("rewards", list(end.rewards))
    found = {
        outcome[0]: outcome[1],
        "forfeit": end.forfeit.value if end.forfeit else None,
        "verifier queries": ledger.queries[Role.VERIFIER],
        "bits read": ledger.bits_read,
        "input bits read": ledger.input_bits_read,
    }
    recorded = {
        outcome[0]: record.get(outcome[0]),
        "forfeit": record["forfeit"],
        "verifier queries": record["queries"][Role.VERIFIER.value],
        "bits read": record["bits_read"],
        "input bits read": record["input_bits_read"],
    }
    differences = tuple(f"{k}: recorded {recorded[k]}, replayed {found[k]}" for k in found if found[k] != recorded[k])
    return Replayed(record["debate"], not differences, differences)


class _RecordEnds:
    """A player of an undecided debate's replay: the record ends where its model could not be
    consulted, so being asked for a move is that failure again (:class:`~debatekit.oracle.Unanswered`)."""

    def __init__(self, seat: Any):
        pass

    def __getattr__(self, name: str) -> Any:
        from debatekit.oracle import Unanswered

        def ends(*args: Any, **kwargs: Any) -> Any:
            raise Unanswered("the record", f"ends before this {name}")

        return ends


def _undecided(record: dict[str, Any], spec: ProtocolSpec, instance: Instance) -> Replayed:
    """An undecided debate's record (verdict None, as ``engine.play.undecided`` and
    ``analysis.montecarlo.Undecided`` write it) again: its events must be a prefix the debate can
    make that ends at a player's move, and no one forfeits. Node protocols walk the events
    (:func:`_walk`); batch protocols resume the debate from them, as ``--resume`` continues a
    journal, with players that cannot be consulted: the debate must stop undecided with no event
    beyond the record's."""
    from debatekit.oracle import Unanswered
    from debatekit.players.base import Strategy

    index, events, differences = record["debate"], recorded_events(record), []
    if record["forfeit"] is not None:
        differences.append(f"forfeit: recorded {record['forfeit']} in an undecided debate")
    ledger = Ledger()
    try:
        if spec.debate is not None:
            stop = _walk(events, spec, instance, ledger, partial=True)
            if not isinstance(stop, Move):
                verdict = stop.verdict if isinstance(stop, End) else "the verifier's check"
                differences.append(f"verdict: recorded None (undecided), replayed {verdict}")
        else:
            if spec.batch is None:
                raise ReplayError(f"{spec.name} cannot replay its records")
            seats = [Strategy("recorded", role, "the record's moves", _RecordEnds) for role in (Role.ALICE, Role.BOB)]
            again = list(events)
            try:
                spec.batch.simulate(instance, *seats, int(record["seed"]), range(index, index + 1), events=again)
            except Unanswered:
                pass
            else:
                differences.append("verdict: recorded None (undecided), replayed a decided debate")
            if again != events:
                differences.append("events: the resumed debate's events differ from the record's")
            for event in events:
                if isinstance(event, Queried) and event.role is Role.VERIFIER:
                    ledger.count_queries(Role.VERIFIER, event.n)
    except Forged as err:
        return Replayed(index, False, (str(err),), undecided=True)
    if ledger.queries[Role.VERIFIER] != record["queries"][Role.VERIFIER.value]:
        differences.append(f"verifier queries: recorded {record['queries'][Role.VERIFIER.value]}, "
                           f"replayed {ledger.queries[Role.VERIFIER]}")  # fmt: skip
    return Replayed(index, not differences, tuple(differences), undecided=True)


def completed(path: Path, header: dict[str, Any]) -> tuple[list[dict[str, Any]], int, str]:
    """The whole records at the head of a file whose run stopped (its process died, say), the
    bytes they take (its header's included) and the last one's hash: a last line cut off
    mid-write is not kept. The file must be this run's (``header``) with its chain unbroken."""
    records: list[dict[str, Any]] = []
    kept, last = 0, START
    for number, value, offset, link in chain_lines(path, header, whole=True):
        records += [value] if number > 1 else []
        kept, last = offset, link
    return records, kept, last


def rechained(lines: Sequence[str]) -> str:
    """Lines of a record (its header first), each chained again to the one before it here: a
    selection of a record's debates as a record of its own, which replay reads like any other."""
    out, last = [], START
    for line in lines:
        found = CHAIN.search(line.encode())
        if found is None:
            raise ValueError("not a record's line (it carries no chain hash)")
        body = line.encode()[: found.start()].decode() + "}"
        last = chained(last, body)
        out.append(f'{body[:-1]},"chain":"{last}"}}\n')
    return "".join(out)


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """The records of a file written by ``run --record``, after its header, the chain checked (and
    dropped from each)."""
    for number, value, _, _ in chain_lines(path):
        if number > 1:
            value.pop("chain")
            yield value
