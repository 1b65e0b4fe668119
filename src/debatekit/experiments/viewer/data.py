"""What ``debatekit view`` shows, read from disk: sources (a record file, a run's log folder, a
sweep folder and its cells) into one :class:`Row` per debate, and one debate's record into what
its page shows (:func:`page_of`).

Every file is untrusted. Records are read by the bounded JSON Lines reader (:mod:`debatekit.files`)
and their events by the events' one parser (:func:`~debatekit.engine.events.events_from_json`);
``run.json`` and ``summary.json`` by the bounded JSON reader; whatever is not what it should be is
a :class:`ViewError` naming the file and line. A record file named on the command line must read
whole; under a folder, a source that does not read is listed with its reason beside the rest.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from debatekit.engine.events import Drawn, Event, EventError, Moved, Queried, Read, events_from_json
from debatekit.experiments.logs import RECORDS_FILE, RUN_FILE, SUMMARY_FILE
from debatekit.files import FileMistake, read_json, read_jsonl
from debatekit.ledger import Role

NEEDED = ("protocol", "problem", "debate", "events", "verdict")
"""The fields every debate record holds (as ``show`` reads them)."""
CELLS = "cells"
"""A sweep folder's cells (:func:`debatekit.experiments.sweep.cell_dir`)."""
FILTERS = ("protocol", "problem", "truth", "alice", "bob", "verdict", "forfeit", "oracle", "judge", "source")
"""The index's filters, each a query parameter matched exactly."""
EVENTS_PER_PAGE = 1000
"""Events shown on one page of a debate (stochastic debate keeps about 3 a step)."""
SHOWN = 20_000
"""Characters of a message, question or model text shown (the record keeps it whole)."""
SHOWN_BITS = 200_000
"""Bits of a bit-string message shown."""


class ViewError(ValueError):
    """A path or file that cannot be viewed: one line saying which and why."""


@dataclass
class Source:
    """Where debates come from: a ``record`` file, a ``run`` log folder, a ``sweep`` folder or one
    of its ``cell`` folders; ``config`` is the run's configuration (``run.json``'s, a cell's
    fields), ``summary`` what ``run --json`` printed, ``error`` why it could not be read."""

    index: int
    kind: str
    path: Path
    label: str
    records: Path | None = None
    head: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] | None = None
    parent: int | None = None
    cells: list[int] = field(default_factory=list)
    debates: int = 0
    error: str | None = None
    shared: int | None = None
    """The source whose rows these records are, when another read the same file first."""

    @property
    def listed(self) -> int:
        """The source the index lists this one's debates under."""
        return self.index if self.shared is None else self.shared


@dataclass(frozen=True)
class Row:
    """One debate as the index lists it, and where its record is (``source``, ``line``)."""

    source: int
    line: int
    debate: int
    protocol: str
    problem: str
    size: str
    truth: str
    seed: str
    constants: str
    alice: str
    bob: str
    verdict: int | None
    payoff: float | None
    forfeit: str
    reason: str
    oracle: str
    judges: tuple[str, ...]
    verifier_queries: int | None
    bits_read: int | None
    events: int

    @property
    def outcome(self) -> str:
        return {1: "accept", 0: "reject"}.get(self.verdict, "undecided")  # type: ignore[arg-type]

    def matches(self, key: str, wanted: str) -> bool:
        """Whether this debate passes the filter ``key=wanted``."""
        if key == "judge":
            return wanted in self.judges
        if key == "verdict":
            return self.outcome == wanted
        if key == "forfeit":
            return (self.forfeit or "none") == wanted
        if key == "source":
            return str(self.source) == wanted
        return str(getattr(self, key)) == wanted


class Library:
    """Every source under the viewed path and a row per debate they hold."""

    def __init__(self, path: Path):
        self.path = path
        self.sources: list[Source] = []
        self.rows: list[Row] = []
        self._at: dict[tuple[int, int], Row] = {}
        self._files: dict[Path, Source] = {}

    def select(self, filters: dict[str, str]) -> list[Row]:
        """The debates that pass every filter (``FILTERS``' keys; empty values ignored)."""
        wanted = [(key, value) for key, value in filters.items() if value]
        return [row for row in self.rows if all(row.matches(key, value) for key, value in wanted)]

    def choices(self) -> dict[str, list[str]]:
        """Each filter's values present, sorted (the index's menus)."""
        found: dict[str, set[str]] = {key: set() for key in FILTERS if key != "source"}
        for row in self.rows:
            for key in found:
                if key == "judge":
                    found[key].update(row.judges)
                elif key == "verdict":
                    found[key].add(row.outcome)
                elif key == "forfeit":
                    found[key].add(row.forfeit or "none")
                else:
                    found[key].add(str(getattr(row, key)))
        return {key: sorted(values) for key, values in found.items()}

    def row(self, source: int, debate: int) -> Row | None:
        return self._at.get((source, debate))

    def record(self, row: Row) -> tuple[dict[str, Any], list[Event]]:
        """Debate ``row``'s record and its events, read again from its file (which may have changed
        since: then a :class:`ViewError`)."""
        path = self.sources[row.source].records
        assert path is not None
        for number, record, _ in records(path):
            if number == row.line:
                if record["debate"] != row.debate:
                    break
                return record, parsed(path, number, record)
            if number > row.line:
                break
        raise ViewError(f"{path}: changed since the viewer read it (no debate {row.debate} on line {row.line})")

    def _add(self, kind: str, path: Path, label: str, **known: Any) -> Source:
        source = Source(len(self.sources), kind, path, label, **known)
        self.sources.append(source)
        return source

    def add_records(self, source: Source, strict: bool) -> None:
        """The debates of ``source``'s record file, as rows; a file that does not read is ``source.error``
        (with ``strict``, a :class:`ViewError`)."""
        if source.records is None:
            return
        first = self._files.setdefault(source.records.resolve(), source)
        if first is not source:
            source.shared, source.debates, source.error = first.index, first.debates, first.error
            return
        try:
            rows = [row_of(source, number, record, header) for number, record, header in records(source.records)]
        except ViewError as err:
            if strict:
                raise
            source.error = str(err)
            return
        for row in rows:
            if (source.index, row.debate) in self._at:
                source.error = f"{source.records}:{row.line}: debate {row.debate} twice in one file"
                if strict:
                    raise ViewError(source.error)
                continue
            self._at[source.index, row.debate] = row
            self.rows.append(row)
            source.debates += 1

    def add_run(self, folder: Path, label: str, parent: int | None = None, strict: bool = False) -> Source:
        """A run's log folder (``run.json``, ``summary.json`` and the records it names), or, with a
        ``parent`` sweep, one of its cells (``summary.json`` and ``debates.jsonl``); with ``strict``,
        one that does not read is a :class:`ViewError`."""
        kind = "run" if parent is None else "cell"
        source = self._add(kind, folder, label, parent=parent)
        try:
            if parent is None:
                source.head = _object(folder / RUN_FILE)
                source.config = source.head.get("config") if isinstance(source.head.get("config"), dict) else {}
            if (folder / SUMMARY_FILE).is_file():
                source.summary = _object(folder / SUMMARY_FILE)
                source.config = source.config or source.summary
        except ViewError as err:
            source.error = str(err)
        named = source.head.get("record_path")
        if isinstance(named, str) and Path(named).is_file():
            source.records = Path(named)
        elif (folder / RECORDS_FILE).is_file():
            source.records = folder / RECORDS_FILE
        if source.error is None:
            self.add_records(source, strict)
        if strict and source.error is not None:
            raise ViewError(source.error)
        return source

    def add_sweep(self, folder: Path) -> Source:
        """A sweep folder and each of its cells."""
        sweep = self._add("sweep", folder, folder.name)
        for cell in sorted(p for p in (folder / CELLS).iterdir() if p.is_dir()):
            sweep.cells.append(self.add_run(cell, f"{folder.name}/{cell.name}", sweep.index).index)
        return sweep


def load(path: Path) -> Library:
    """The sources at ``path``: a record file or a run's log folder (which must read whole), a sweep
    folder, or a folder of these (a log folder, a folder of sweeps, record files ``*.jsonl``) or of
    folders of them (a project's ``debatekit-logs/`` and ``debatekit-sweeps/``); runs and sweeps
    first, so that a record file a run names is listed under the run."""
    library = Library(path)
    if path.is_file():
        library.add_records(library._add("record", path, path.name, records=path), strict=True)
    elif _is_sweep(path):
        library.add_sweep(path)
    elif (path / RUN_FILE).is_file():
        library.add_run(path, path.name, strict=True)
    elif path.is_dir():
        children = sorted(path.iterdir())
        for child in [c for c in children if c.is_dir()]:
            for folder in [child] if _is_sweep(child) or (child / RUN_FILE).is_file() else sorted(child.iterdir()):
                if _is_sweep(folder):
                    library.add_sweep(folder)
                elif (folder / RUN_FILE).is_file():
                    library.add_run(folder, folder.name)
        for child in [c for c in children if c.is_file() and c.name.endswith(".jsonl")]:
            library.add_records(library._add("record", child, child.name, records=child), strict=False)
    else:
        raise ViewError(f"no such file or folder: {str(path)!r}")
    if not library.sources:
        raise ViewError(f"{str(path)!r} holds no debate records, run logs or sweep folders")
    return library


def _is_sweep(folder: Path) -> bool:
    return (folder / CELLS).is_dir()


def _object(path: Path) -> dict[str, Any]:
    try:
        value = read_json(path)
    except FileMistake as err:
        raise ViewError(str(err)) from None
    if not isinstance(value, dict):
        raise ViewError(f"{path}:1: expected a JSON object")
    return value


def records(path: Path) -> Iterator[tuple[int, dict[str, Any], dict[str, Any]]]:
    """(line, record, the file's header) for each debate record of ``path`` (a header line first is
    skipped; the chain is not checked: ``replay`` checks it)."""
    header: dict[str, Any] = {}
    try:
        for number, value in read_jsonl(path):
            if number == 1 and isinstance(value.get("header"), dict):
                header = value["header"]
                continue
            if any(key not in value for key in NEEDED) or not isinstance(value["events"], list | None):
                raise ViewError(f"{path}:{number}: not a debate record (it needs {', '.join(NEEDED)})")
            if type(value["debate"]) is not int or value["verdict"] not in (0, 1, None):
                raise ViewError(f"{path}:{number}: not a debate record (a debate number, a verdict 0, 1 or null)")
            yield number, value, header
    except FileMistake as err:
        raise ViewError(str(err)) from None


def parsed(path: Path, number: int, record: dict[str, Any]) -> list[Event]:
    """A record's events, read by the events' parser; what is not one is a :class:`ViewError`."""
    try:
        return events_from_json(record["events"] or [])
    except EventError as err:
        raise ViewError(f"{path}:{number}: {err}") from None


def oracle_of(config: dict[str, Any], header: dict[str, Any]) -> str:
    """The verifier's oracle as the run names it (``builtin``, ``sample``, ``people``,
    ``llm:PROVIDER/MODEL``), else as the record's header says (the instance's, or another)."""
    oracles = config.get("oracles")
    if isinstance(oracles, dict):
        named = oracles.get("verifier_oracle") or oracles.get("oracle")
        if isinstance(named, str) and named:
            return named
    return {"instance": "builtin", "other": "other"}.get(str(header.get("oracle")), "unknown")


def row_of(source: Source, number: int, record: dict[str, Any], header: dict[str, Any]) -> Row:
    """The index's row of one record (its events read, so a broken one is found now)."""
    assert source.records is not None
    events = parsed(source.records, number, record)
    oracle = oracle_of(source.config, header)
    people = {_judge_name(j) for e in events if isinstance(e, Queried) for j in e.judges}
    queries = record.get("queries") if isinstance(record.get("queries"), dict) else {}
    payoff = record.get("payoff")
    named = ("protocol", "problem", "size", "truth", "seed", "constants", "alice", "bob")
    return Row(
        source.index, number, record["debate"], *(_text(record.get(key)) for key in named),
        verdict=record["verdict"],
        payoff=float(payoff) if type(payoff) in (int, float) else None,
        forfeit=_text(record.get("forfeit")) if record.get("forfeit") else "",
        reason=_text(record.get("reason")),
        oracle=oracle,
        judges=tuple(sorted(people)) or (oracle,),
        verifier_queries=_count(queries.get(Role.VERIFIER.value)),
        bits_read=_count(record.get("bits_read")),
        events=len(events),
    )  # fmt: skip


def _text(value: Any) -> str:
    return "" if value is None else value if isinstance(value, str) else json.dumps(value)


def _count(value: Any) -> int | None:
    return value if type(value) is int else None


def _judge_name(judgement: dict[str, Any]) -> str:
    return _text(judgement.get("judge_name") or judgement.get("judge"))


@dataclass(frozen=True)
class Shown:
    """One event as a debate's page shows it: ``kind`` (move, forfeit, query, draw, read), who,
    what, the step, a detail in words, and for a bit string its runs (text, read by the verifier)."""

    number: int
    kind: str
    who: str
    what: str
    t: str
    detail: str
    bits: tuple[tuple[str, bool], ...] = ()
    context: tuple[str, ...] = ()
    read: str = ""


@dataclass(frozen=True)
class Page:
    """A debate's page: its events from ``start`` (:data:`EVENTS_PER_PAGE` of ``total``), what the
    verifier read of x, the outcome's lines and the aside's entries."""

    events: list[Shown]
    start: int
    total: int
    x_read: list[int]
    outcome: list[tuple[str, str]]
    aside: list[dict[str, str]]


def page_of(record: dict[str, Any], events: list[Event], start: int = 0) -> Page:
    """What debate ``record``'s page shows, its events from ``start``. The verifier's reads are
    marked on the message they read: a position on its sender's latest bit string before the read,
    a word on its sender's latest message."""
    positions: dict[int, set[int]] = {}
    words: dict[int, list[int]] = {}
    latest_bits: dict[Role, int] = {}
    latest: dict[Role, int] = {}
    x_read: list[int] = []
    for k, event in enumerate(events):
        if isinstance(event, Moved) and event.forfeit is None:
            latest[event.role] = k
            if _bits(event.message) is not None:
                latest_bits[event.role] = k
        elif isinstance(event, Read) and event.sender is None:
            x_read += [] if event.at is None else [event.at]
        elif isinstance(event, Read) and event.at is not None and event.sender in latest_bits:
            positions.setdefault(latest_bits[event.sender], set()).add(event.at)
        elif isinstance(event, Read) and event.bits is not None and event.sender in latest:
            words.setdefault(latest[event.sender], []).append(event.bits)
    shown = [
        _shown(k, events[k], positions.get(k, set()), words.get(k, []))
        for k in range(max(0, start), min(len(events), start + EVENTS_PER_PAGE))
    ]
    return Page(shown, start, len(events), x_read, _outcome(record), _aside(record.get("aside")))


def _bits(message: Any) -> str | None:
    if isinstance(message, dict) and isinstance(message.get("bits"), str):
        return message["bits"]
    return None


def _step(event: Event) -> str:
    t = getattr(event, "t", None)
    return str(t) if type(t) is int else ""


def _shown(k: int, event: Event, marked: set[int], words: list[int]) -> Shown:
    """Event ``k``; on a message, the positions of it the verifier read (``marked``) and the
    widths of the words it read of it."""
    if isinstance(event, Moved):
        what, at = event.what or "message", _step(event)
        if event.forfeit is not None:
            sent = "sent, and refused: " if event.refused else ""
            return Shown(k + 1, "forfeit", event.role.value, what, at, f"forfeits ({sent}{_cut(event.forfeit)})")
        bits = _bits(event.message)
        read = [f"{len(marked)} positions"] * bool(marked) + [f"a word of {w} bits" for w in words]
        if bits is None:
            return Shown(k + 1, "move", event.role.value, what, at, _message(event.message), read="; ".join(read))
        runs = _runs(bits, marked)
        return Shown(k + 1, "move", event.role.value, what, at, f"{len(bits)} bits", runs, read="; ".join(read))
    if isinstance(event, Queried):
        answer = ("yes" if event.answer else "no") if event.n == 1 else f"{event.answer} yes of {event.n}"
        text, context = _question(event.question)
        by = ", ".join(_judged(j) for j in event.judges)
        detail = f"{text} → {answer}" + (f" (answered by {by})" if by else "")
        who = f"{event.role.value} asks the judge"
        return Shown(k + 1, "query", who, "question", _step(event), detail, context=context)
    if isinstance(event, Drawn):
        noted = ", ".join(f"{key} = {_text(value)}" for key, value in event.noted)
        by = "nature" if event.by is None else event.by.value
        detail = (f"{noted}, " if noted else "") + f"outcome {_cut(json.dumps(event.outcome))}"
        return Shown(k + 1, "draw", by, f"draws {event.what}", _step(event), detail)
    where = f"a word of {event.bits} bits" if event.at is None else f"position {event.at}"
    whose = "x" if event.sender is None else f"{event.sender.value}'s message"
    return Shown(k + 1, "read", "verifier", "reads", "", f"{where} of {whose}")


def _runs(bits: str, marked: set[int]) -> tuple[tuple[str, bool], ...]:
    """``bits`` (the first :data:`SHOWN_BITS`) as runs of unread and read positions."""
    shown = bits[:SHOWN_BITS]
    runs: list[tuple[str, bool]] = []
    at = 0
    for p in sorted(p for p in marked if 0 <= p < len(shown)):
        if p > at:
            runs.append((shown[at:p], False))
        runs.append((shown[p], True))
        at = p + 1
    if at < len(shown):
        runs.append((shown[at:], False))
    if len(bits) > len(shown):
        runs.append((f" … and {len(bits) - len(shown)} more bits", False))
    return tuple(runs)


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN else text[:SHOWN] + f" … ({len(text) - SHOWN} more characters)"


def _message(message: Any) -> str:
    if isinstance(message, dict) and isinstance(message.get("invalid"), str):
        return f"unreadable: {_cut(message['invalid'])}"
    return _cut(json.dumps(message))


def _question(asked: Any) -> tuple[str, tuple[str, ...]]:
    """A question's text and context lines (a Question is recorded as [text, lines]), else its JSON."""
    if isinstance(asked, list) and len(asked) == 2 and isinstance(asked[0], str) and isinstance(asked[1], list):
        return _cut(asked[0]), tuple(_cut(_text(line)) for line in asked[1])
    return _cut(json.dumps(asked)), ()


def _judged(judgement: dict[str, Any]) -> str:
    """Who answered, and in how long when the times are kept."""
    shown, submitted = judgement.get("shown"), judgement.get("submitted")
    took = ""
    if type(shown) in (int, float) and type(submitted) in (int, float):
        took = f" in {submitted - shown:.1f} s"
    return _judge_name(judgement) + took


def _outcome(record: dict[str, Any]) -> list[tuple[str, str]]:
    lines = [("verdict", {1: "1 (accept)", 0: "0 (reject)"}.get(record["verdict"], "undecided"))]
    if record.get("forfeit"):
        lines.append(("forfeit", f"{_text(record['forfeit'])}: {_cut(_text(record.get('reason')))}"))
    for key, label in (("payoff", "A's payoff"), ("claim", "A's claim"), ("rewards", "rewards by round")):
        if key in record:
            lines.append((label, _cut(_text(record[key]))))
    if isinstance(record.get("queries"), dict):
        lines.append(("oracle queries", ", ".join(f"{_text(r)} {_text(n)}" for r, n in record["queries"].items())))
    if "bits_read" in record:
        lines.append(("bits read", f"{_text(record['bits_read'])} (and {_text(record.get('input_bits_read'))} of x)"))
    return lines


ASIDE = ("llm", "model", "prompt", "completion", "p_yes", "prompt_tokens", "completion_tokens", "cached", "error")
"""The fields of a model call noted in a debate's aside (:mod:`debatekit.llm.judge`)."""


def _aside(entries: Any) -> list[dict[str, str]]:
    """The aside's entries as text fields: a model call's who, prompt, completion, P[yes], tokens,
    cache and error, and whatever else an entry holds (``other``)."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        return [{"other": _cut(json.dumps(entries))}]
    shown = []
    for entry in entries:
        if not isinstance(entry, dict):
            shown.append({"other": _cut(json.dumps(entry))})
            continue
        p = entry.get("p_yes")
        rest = {key: value for key, value in entry.items() if key not in ASIDE}
        shown.append({
            "who": " ".join(_text(entry.get(key)) for key in ("llm", "model") if entry.get(key) is not None),
            "prompt": _cut(_text(entry.get("prompt"))),
            "completion": _cut(_text(entry.get("completion"))),
            "p_yes": f"{p:.3f}" if type(p) in (int, float) else "",
            "tokens": f"{_text(entry.get('prompt_tokens'))}+{_text(entry.get('completion_tokens'))}"
            if "prompt_tokens" in entry else "",
            "cached": "yes" if entry.get("cached") is True else "no" if "cached" in entry else "",
            "error": _cut(_text(entry.get("error"))),
            "other": _cut(json.dumps(rest)) if rest else "",
        })  # fmt: skip
    return shown
