"""What an experimenter brings to a study and takes away: gold questions read from a file,
instructions and consent written in Markdown shown as safe HTML, and the export as CSV."""

from __future__ import annotations

import csv
import io
import os
from typing import Any

from markdown_it import MarkdownIt

from debatekit.files import FileMistake, read_jsonl, read_text

GOLD_FIELDS = {"question", "context", "answer", "feedback"}


def read_gold(path: str | os.PathLike[str]) -> list[tuple[str, tuple[str, ...], int, str | None]]:
    """Gold questions from a JSON Lines file, one a line: ``question`` (text), ``context`` (a list of
    lines, optional), ``answer`` (true or false, the known answer) and ``feedback`` (optional text a
    judge is shown after answering); a line that is not one is a :class:`~debatekit.files.FileMistake`."""
    gold = []
    for line, item in read_jsonl(path):
        if not isinstance(item, dict):
            raise FileMistake(path, line, "a gold question is a JSON object")
        if unknown := set(item) - GOLD_FIELDS:
            raise FileMistake(
                path, line, f"unknown field {sorted(unknown)[0]!r} (known: {', '.join(sorted(GOLD_FIELDS))})"
            )
        question, context, answer = item.get("question"), item.get("context", []), item.get("answer")
        feedback = item.get("feedback")
        if not isinstance(question, str) or not question.strip():
            raise FileMistake(path, line, "question must be non-empty text")
        if not isinstance(context, list) or not all(isinstance(c, str) for c in context):
            raise FileMistake(path, line, "context must be a list of text lines")
        if not isinstance(answer, bool):
            raise FileMistake(path, line, "answer must be true or false")
        if feedback is not None and not isinstance(feedback, str):
            raise FileMistake(path, line, "feedback must be text")
        gold.append((question, tuple(context), int(answer), feedback))
    if not gold:
        raise FileMistake(path, None, "no gold questions in it")
    return gold


_MARKDOWN = MarkdownIt("commonmark", {"html": False})
"""CommonMark with raw HTML escaped, never passed through (links with unsafe schemes are not made)."""


def markdown_html(text: str) -> str:
    """The experimenter's Markdown as HTML safe to put in a page."""
    return _MARKDOWN.render(text)


def read_markdown(path: str | os.PathLike[str]) -> str:
    """A Markdown file (instructions or consent) as safe HTML; an empty one is a mistake."""
    text = read_text(path)
    if not text.strip():
        raise FileMistake(path, None, "it is empty")
    return markdown_html(text)


CSV_COLUMNS = (
    "kind", "task", "run", "debate", "gold", "judge", "judge_name", "completion_code", "slot", "answer",
    "correct", "confidence", "explanation", "shown", "submitted", "seconds",
)  # fmt: skip


def spreadsheet_safe(text: str | None) -> str | None:
    """A judge's text as a CSV cell no spreadsheet runs as a formula (a leading ``'`` where it starts with one)."""
    return "'" + text if text and text[0] in "=+-@\t\r" else text


def export_csv(export: dict[str, Any]) -> str:
    """A :meth:`~debatekit.judge.store.Store.export` as CSV: one row per answer and per skip
    (``kind``), with its task's run, debate and gold answer and its judge's completion code."""
    tasks = {task["id"]: task for task in export["tasks"]}
    judges = {judge["id"]: judge for judge in export["judges"]}
    out = io.StringIO()
    writer = csv.DictWriter(out, CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    rows = [{"kind": "answer", **a} for a in export["judgements"]] + [
        {"kind": "skip", "task": s["task"], "judge": s["judge"], "submitted": s["at"]} for s in export["skips"]
    ]
    for row in rows:
        task, judge = tasks[row["task"]], judges[row["judge"]]
        gold = task["gold"]
        answered = row["kind"] == "answer"
        writer.writerow(
            {key: row.get(key) for key in CSV_COLUMNS}
            | {
                "run": task["run"],
                "debate": task["debate"],
                "gold": gold,
                "judge_name": judge["name"],
                "completion_code": judge["completion_code"],
                "correct": None if gold is None or not answered else int(row["answer"] == gold),
                "seconds": row["submitted"] - row["shown"] if answered else None,
                "explanation": spreadsheet_safe(row.get("explanation")),
            }
        )
    return out.getvalue()
