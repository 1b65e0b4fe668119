"""``debatekit show``: one recorded debate, readably (issue 11, item 5).

A record (:mod:`debatekit.engine.record`) lists a debate's events in order: each committed
message with its sender (or the sender's forfeit and its reason), each oracle query with the
role asking, the question, the count and the answer (and the judges who gave it, people), each
read of the verifier (which positions of which message it looked at: the step it checked), each
trusted coin; then the verdict or payoff and the counts. Its ``aside`` keeps what LLM players did
beyond their messages: each model call's prompt, completion, P[yes], tokens and whether it was
in the cache. This prints all of that with Rich, shortening long texts (the record keeps them
whole)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from debatekit.cli.options import JsonOption
from debatekit.mistakes import UserError

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.table import Table

    from debatekit.engine.events import Event

WIDE = 100
"""Characters of a question, prompt or message shown (the middle elided)."""
ASIDE_ROWS = 40
"""Entries of the aside listed one a row; the rest are counted."""
NEEDED = ("protocol", "problem", "debate", "events", "verdict")


def show(
    path: Annotated[Path, typer.Argument(metavar="RECORD.jsonl", help="A file written by `run --record`.")],
    debate: Annotated[
        int | None, typer.Option("--debate", metavar="I", help="The debate to show (default: the file's first).")
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Print one recorded debate: its moves in order, who claimed what, the oracle's answers and who
    gave them, what the verifier read, the verdict or payoff, forfeits, and the LLM calls in brief
    (--json: the record whole, its events checked, with the file and line)."""
    from rich.errors import MarkupError

    from debatekit.cli.common import emit_json, stdout
    from debatekit.engine.events import EventError, events_from_json

    number, record = chosen(path, debate)
    try:
        listed = events_from_json(record["events"] or [])
    except EventError as err:
        raise UserError(f"{path}:{number}: {err}") from None
    if json_out:
        whole = {key: value for key, value in record.items() if key != "chain"}
        emit_json({"path": str(path), "line": number} | whole | {"events": [event.to_json() for event in listed]})
        return
    try:
        shown = render(record, listed)
        with stdout.capture() as captured:
            stdout.print(*shown)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, MarkupError) as err:  # a hand-edited record
        raise UserError(f"{path}:{number}: a debate record cannot hold this ({type(err).__name__}: {err})") from None
    print(captured.get(), end="")


def chosen(path: Path, debate: int | None) -> tuple[int, dict[str, Any]]:
    """Debate ``debate`` of the record file (its first when None) and its line, or the user's mistake."""
    held = []
    for number, record in records(path):
        if debate is None or record["debate"] == debate:
            return number, record
        held.append(record["debate"])
    if not held:
        raise UserError(f"{path} holds no debate records")
    listed = ", ".join(map(str, held[:10])) + (", ..." if len(held) > 10 else "")
    raise UserError(f"{path} holds no debate {debate}; it holds debates {listed}")


def records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The debate records of a JSONL file (its header line skipped), each checked to be a debate's;
    a file that is not JSON Lines is one line naming the file and line (:mod:`debatekit.files`).
    Show displays; ``replay`` checks the chain."""
    from debatekit.files import FileMistake, read_jsonl

    try:
        for number, record in read_jsonl(path):
            if number == 1 and isinstance(record.get("header"), dict):
                continue
            if any(key not in record for key in NEEDED) or not isinstance(record["events"], list | None):
                raise UserError(f"{path}:{number}: not a debate record (it needs {', '.join(NEEDED)})")
            yield number, record
    except FileMistake as err:
        raise UserError(str(err)) from None


def render(record: dict[str, Any], listed: list[Event]) -> list[RenderableType]:
    """The debate as Rich renderables: a heading, its events (``listed``, read from the record's),
    its outcome and its LLM calls."""
    from rich.text import Text

    constants = f", constants {record['constants']}" if record.get("constants") else ""
    heading = Text.assemble(
        (f"{record['protocol']} on {record['problem']}", "bold"),
        f" (size {record.get('size')}, truth {record.get('truth')}, seed {record.get('seed')}{constants}), "
        f"debate {record['debate']}: alice {record.get('alice')} vs bob {record.get('bob')}",
    )
    shown: list[RenderableType] = [heading, events(listed), outcome(record, listed)]
    if record.get("aside"):
        shown.append(asides(record["aside"]))
    return shown


def events(listed: list[Event]) -> Table:
    """One row per event, in order: who, what, and the message, answer, read or draw."""
    from rich.table import Table

    table = Table(title="events", title_justify="left")
    for column in ("#", "who", "what", "detail"):
        table.add_column(column, overflow="fold")
    for number, event in enumerate(listed, start=1):
        table.add_row(str(number), *row(event))
    return table


def row(event: Event) -> tuple[str, str, str]:
    """(who, what, detail) of one event, the detail in Rich markup."""
    from debatekit.engine.events import Moved, Queried, Read

    at = f" t={event.t}" if not isinstance(event, Read) and type(event.t) is int else ""
    if isinstance(event, Moved):
        what = (event.what or "message") + at
        if event.forfeit is not None:
            refused = " (sent, and refused)" if event.refused else ""
            return event.role.value, what, f"[red]forfeits{refused}: {escape(event.forfeit)}[/red]"
        return event.role.value, what, escape(message(event.message))
    if isinstance(event, Queried):
        answer = ("yes" if event.answer else "no") if event.n == 1 else f"{event.answer} yes of {event.n}"
        names = ", ".join(str(j.get("judge_name") or j.get("judge")) for j in event.judges)
        by = f" (by {escape(names)})" if event.judges else ""
        detail = f"{escape(question(event.question))} → [bold]{answer}[/bold]{by}"
        return f"{event.role.value} asks the judge", f"question{at}", detail
    if isinstance(event, Read):
        where = f"{event.bits} bits of its word" if event.bits is not None else f"position {event.at}"
        return (
            "verifier",
            "reads",
            where + " of x" if event.sender is None else f"{event.sender.value}'s message: {where}",
        )
    p = dict(event.noted).get("p")
    shown = f"p = {p:.4g}, " if isinstance(p, int | float) else ""
    by = "nature" if event.by is None else event.by.value
    return by, f"coin {escape(event.what)}{at}", f"{shown}outcome {escape(brief(json.dumps(event.outcome)))}"


def outcome(record: dict[str, Any], listed: list[Event]) -> Table:
    """The verdict (or payoff), any forfeit with its reason, what the verifier read (``listed``, its
    events) and was told, and the counts."""
    from rich.table import Table

    from debatekit.engine.events import Queried, Read
    from debatekit.ledger import Role

    table = Table(title="outcome", title_justify="left", show_header=False)
    table.add_column("measure", style="bold")
    table.add_column("value", overflow="fold")
    verdict = record["verdict"]
    table.add_row("verdict", {1: "1 (accept)", 0: "0 (reject)"}.get(verdict, str(verdict)))
    if "payoff" in record:
        table.add_row("A's payoff", f"{record['payoff']:.6g} (claim A(x) = {record.get('claim')})")
        table.add_row("rewards by round", ", ".join(f"{r:.4g}" for r in record.get("rewards") or []))
    if record.get("forfeit"):
        table.add_row("forfeit", f"[red]{record['forfeit']}: {escape(record.get('reason') or '')}[/red]")
    if any(isinstance(e, Read) for e in listed):
        table.add_row("verifier read", reads(listed))
    answers = [row(e)[2] for e in listed if isinstance(e, Queried) and e.role is Role.VERIFIER]
    if answers:
        table.add_row("judge's answers to the verifier", "; ".join(answers))
    queries = record.get("queries") or {}
    table.add_row("oracle queries", ", ".join(f"{role} {n}" for role, n in queries.items()))
    table.add_row("bits read", f"{record.get('bits_read')} (and {record.get('input_bits_read')} of x)")
    return table


def reads(listed: list[Event]) -> str:
    """What the verifier read, by message: each word's bits and each position (the step it checked)."""
    from debatekit.engine.events import Read

    read: dict[str, list[str]] = {}
    for event in listed:
        if isinstance(event, Read):
            where = f"its word ({event.bits} bits)" if event.bits is not None else str(event.at)
            read.setdefault("x" if event.sender is None else f"{event.sender.value}'s message", []).append(where)
    return "; ".join(f"{what}: {', '.join(at)}" for what, at in read.items())


def asides(entries: list[dict[str, Any]]) -> Table:
    """The LLM calls (and anything else kept aside), one a row up to :data:`ASIDE_ROWS`, with totals."""
    from rich.table import Table

    calls = [e for e in entries if "prompt" in e]
    cached = sum(bool(e.get("cached")) for e in calls)
    tokens = sum(e.get("prompt_tokens", 0) for e in calls), sum(e.get("completion_tokens", 0) for e in calls)
    table = Table(
        title=f"aside: {len(calls)} model calls ({cached} from the cache; {tokens[0]} prompt and {tokens[1]} "
        "completion tokens)",
        title_justify="left",
    )
    for column in ("who", "prompt (what differs)", "completion", "P\\[yes]", "tokens", "cached"):
        table.add_column(column, overflow="fold")
    prompts = [e["prompt"] for e in calls]
    for entry in entries[:ASIDE_ROWS]:
        if "prompt" not in entry:
            table.add_row("", escape(brief(json.dumps(entry))), "", "", "", "")
            continue
        said = escape(repr(entry["completion"])) if "completion" in entry else ""
        if "error" in entry:
            said += f" [red]{escape(entry['error'])}[/red]"
        p = estimated(entry)
        used = f"{entry.get('prompt_tokens', 0)}+{entry.get('completion_tokens', 0)}"
        who = f"{entry.get('llm')} ({entry.get('model')})"
        shown = escape(brief(differing(entry["prompt"], prompts)))
        table.add_row(who, shown, said, p, used, "yes" if entry.get("cached") else "no")
    if len(entries) > ASIDE_ROWS:
        table.caption = f"... and {len(entries) - ASIDE_ROWS} more entries (all in the record)"
    return table


def estimated(entry: dict[str, Any]) -> str:
    """A model call's P[yes] with how it was estimated (:class:`debatekit.llm.generation.Estimate`):
    the mass renormalising over yes and no dropped, or the samples' count of yes; "" without one."""
    p, how = entry.get("p_yes"), entry.get("estimator")
    if not isinstance(p, int | float):
        return ""
    said = f"{p:.3f}"
    if isinstance(how, dict) and isinstance(how.get("dropped"), int | float):
        said += f" (dropped {how['dropped']:.2f})"
    elif isinstance(how, dict) and isinstance(how.get("yes"), int) and isinstance(how.get("n"), int):
        said += f" ({how['yes']} yes of {how['n']})"
    return said


def differing(prompt: str, prompts: list[str]) -> str:
    """``prompt`` without the head and tail every prompt of the debate shares (the template's
    words), so that what was asked shows; the whole prompt when nothing else is left."""
    head, tail = shared(prompts), shared([p[::-1] for p in prompts])
    rest = prompt[head : len(prompt) - tail] if head + tail < len(prompt) else ""
    return rest if rest.strip() else prompt


def shared(texts: list[str]) -> int:
    """The length of the head all ``texts`` share (that of the first and last in sorted order)."""
    first, last = min(texts), max(texts)
    return next((i for i, (a, b) in enumerate(zip(first, last, strict=False)) if a != b), min(len(first), len(last)))


def message(sent: Any) -> str:
    """A committed message in brief: bits as their string, an unreadable word with why, a number to
    6 digits, anything else as compact JSON."""
    if isinstance(sent, dict) and isinstance(sent.get("bits"), str):
        return f"{len(sent['bits'])} bits: {brief(sent['bits'])}"
    if isinstance(sent, dict) and isinstance(sent.get("invalid"), str):
        return f"unreadable: {brief(sent['invalid'])}"
    if sent is None:
        return "none"
    if isinstance(sent, float):
        return f"{sent:.6g}"
    return brief(json.dumps(sent, separators=(",", " ")))


def question(asked: Any) -> str:
    """A question as the judge saw it: its text (a Question is recorded as [text, context lines]),
    else its JSON."""
    if isinstance(asked, list) and len(asked) == 2 and isinstance(asked[0], str) and isinstance(asked[1], list):
        context = f" (given {len(asked[1])} earlier steps)" if asked[1] else ""
        return brief(asked[0]) + context
    return brief(json.dumps(asked))


def brief(text: str) -> str:
    """``text`` on one line, its middle elided past :data:`WIDE` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= WIDE else flat[: WIDE // 2 - 1] + " … " + flat[-(WIDE // 2 - 2) :]


def escape(text: str) -> str:
    """``text`` with Rich's markup brackets escaped (a model's or a question's text is not markup)."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)
