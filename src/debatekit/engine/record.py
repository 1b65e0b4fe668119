"""A record of every debate, and replay: the verifier run again on what was committed.

``run --record FILE.jsonl`` writes one JSON object per debate: the protocol, problem, size,
truth, seed, parameters and debate number, the strategies, then its events in order (each committed message
with its sender, each oracle query with its role, question, count and answer, each read of the
verifier), the verdict, the forfeit and its reason, and the ledger's counts. As OpenSpiel
rebuilds a state from its history of actions, :func:`replay` rebuilds the instance from the
registry and walks the protocol's nodes again, feeding each move the message the record says was
committed and each verifier query the answer the record holds; the debate reproduces when the
verdict, the forfeit and every count of the verifier come out the same.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from debatekit.engine.boundary import from_json
from debatekit.engine.nodes import End, Move, advance, forfeit, judge
from debatekit.ledger import Ledger, Role
from debatekit.reader import Reader

if TYPE_CHECKING:
    from debatekit.problems.registry import Instance
    from debatekit.protocols.spec import ProtocolSpec


def fingerprint(instance: Instance) -> str:
    """SHA-256 of the instance's input x and witness: replay checks it rebuilt the same instance."""
    digest = hashlib.sha256(np.ascontiguousarray(instance.x, dtype=np.uint8).tobytes())
    if instance.witness is not None:
        digest.update(b"|" + np.ascontiguousarray(instance.witness, dtype=np.uint8).tobytes())
    return digest.hexdigest()


class RecordWriter:
    """One JSON line per debate, flushed as each is written."""

    def __init__(self, stream: IO[str]):
        self._stream = stream

    @classmethod
    @contextlib.contextmanager
    def open(cls, path: Path | None, keep: int = 0) -> Iterator[RecordWriter | None]:
        """A writer to ``path``, which keeps its first ``keep`` bytes (the whole records of a
        run being resumed) and drops the rest."""
        if path is None:
            yield None
            return
        with open(path, "r+" if keep else "w", encoding="utf-8") as stream:
            stream.seek(keep)
            stream.truncate()
            yield cls(stream)

    def write(self, record: dict[str, Any]) -> None:
        self._stream.write(json.dumps(record, separators=(",", ":")) + "\n")
        self._stream.flush()


def journal_path(path: Path) -> Path:
    """Where a recorded run journals the events of its debates in flight: ``FILE.jsonl.journal``."""
    return path.with_name(path.name + ".journal")


class Journal:
    """Every event of the debates in flight, appended (and flushed) as it happens, one line each,
    so that a run whose process dies can resume a debate from its last event: the moves already
    committed and the verifier's answers already given (a person's, say) are not asked again. The
    file goes when the run ends."""

    def __init__(self, stream: IO[str]):
        self._stream = stream

    @classmethod
    @contextlib.contextmanager
    def open(cls, path: Path | None) -> Iterator[Journal | None]:
        if path is None:
            yield None
            return
        with open(journal_path(path), "w", encoding="utf-8") as stream:
            yield cls(stream)
        journal_path(path).unlink()

    def events(self, index: int, prefix: list[dict] | None = None) -> list[dict]:
        """Debate ``index``'s event list: what is appended to it is journaled (``prefix``, the
        events it resumes from, first)."""
        events = _Journaled(self._stream, index)
        for event in prefix or ():
            events.append(event)
        return events


class _Journaled(list):
    def __init__(self, stream: IO[str], index: int):
        super().__init__()
        self._stream, self._index = stream, index

    def append(self, event: dict) -> None:
        super().append(event)
        self._stream.write(json.dumps({"debate": self._index, "event": event}, separators=(",", ":")) + "\n")
        self._stream.flush()


def journaled(path: Path) -> dict[int, list[dict]]:
    """The events each unfinished debate of a stopped run had journaled (none if no journal)."""
    found: dict[int, list[dict]] = {}
    if not journal_path(path).exists():
        return found
    with open(journal_path(path), "rb") as stream:
        for line in stream:
            if not line.endswith(b"\n"):
                break
            entry = json.loads(line)
            found.setdefault(int(entry["debate"]), []).append(entry["event"])
    return found


class ReplayError(ValueError):
    """A record that does not fit its protocol (a move or an answer missing or out of place)."""


@dataclass(frozen=True)
class Replayed:
    """One record replayed: whether everything reproduced, and what differed."""

    debate: int
    reproduced: bool
    differences: tuple[str, ...]


def replay(record: dict[str, Any], spec: ProtocolSpec, instance: Instance) -> Replayed:
    """Walk ``spec``'s nodes on ``instance`` again with the record's committed messages and the
    verifier's recorded oracle answers; compare the verdict, the forfeit and the verifier's counts."""
    events = record["events"]
    if events is None:
        raise ReplayError("the record keeps no events")
    if record["instance"] != fingerprint(instance):
        return Replayed(record["debate"], False, ("instance: not the instance the record was played on",))
    if spec.debate is None:
        if spec.replay is None:
            raise ReplayError(f"{spec.name} cannot replay its records")
        return spec.replay(record, instance)
    moves = iter([e for e in events if "move" in e])
    answers = iter([e for e in events if e.get("query") == Role.VERIFIER.value])
    ledger = Ledger()
    node = spec.debate(instance, Reader(ledger))
    while isinstance(node, Move):
        event = next(moves, None)
        if event is None or event["move"] != node.role.value:
            raise ReplayError(f"the record has no {node.role.value} move here")
        if "forfeit" in event:
            node = forfeit(node.role, event["forfeit"], spec.alice_argues)
        else:
            _, node = advance(node, from_json(event["message"]), spec.alice_argues)

    def answer(question: Hashable) -> int:
        event = next(answers, None)
        if event is None:
            raise ReplayError("the record has fewer verifier queries than the verifier makes")
        ledger.count_queries(Role.VERIFIER, event["n"])
        return int(event["answer"])

    end = node if isinstance(node, End) else judge(node, answer, spec.alice_argues)
    found = {
        "verdict": end.verdict,
        "forfeit": end.forfeit.value if end.forfeit else None,
        "verifier queries": ledger.queries[Role.VERIFIER],
        "bits read": ledger.bits_read,
        "input bits read": ledger.input_bits_read,
    }
    recorded = {
        "verdict": record["verdict"],
        "forfeit": record["forfeit"],
        "verifier queries": record["queries"][Role.VERIFIER.value],
        "bits read": record["bits_read"],
        "input bits read": record["input_bits_read"],
    }
    differences = tuple(f"{k}: recorded {recorded[k]}, replayed {found[k]}" for k in found if found[k] != recorded[k])
    return Replayed(record["debate"], not differences, differences)


def completed(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The whole records at the head of a file whose run stopped (its process died, say), and the
    bytes they take: a last line cut off mid-write, and anything after it, is not kept."""
    records: list[dict[str, Any]] = []
    kept = 0
    with open(path, "rb") as stream:
        for line in stream:
            if not line.endswith(b"\n"):
                break
            try:
                records.append(json.loads(line))
            except (json.JSONDecodeError, UnicodeDecodeError):
                break
            kept += len(line)
    return records, kept


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """The records of a JSONL file, one per line."""
    with open(path, encoding="utf-8") as stream:
        for number, line in enumerate(stream, start=1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as err:
                    raise ReplayError(f"line {number} is not JSON: {err.msg}") from err
