"""Bounded readers for every file debatekit reads from disk: JSON, JSON Lines and TOML.

A file on disk is untrusted input (a record, a journal, a run folder, a plan or grid file): it may
be truncated, corrupt, enormous or nested deeper than any parser's recursion. Each reader here caps
the bytes it reads (:data:`MAX_BYTES`), the length of a line (:data:`MAX_LINE`) and the nesting
depth of what it returns (:data:`MAX_DEPTH`, walked iteratively; a parser's own ``RecursionError``
is caught), and raises one error type, :class:`FileMistake`, whose message is ``FILE:LINE: reason``
(``FILE: reason`` where no line applies), so a command reports it in one line with exit 2.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Iterator
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

MAX_BYTES = 64 * 2**20
"""The most bytes a whole JSON or TOML file may hold."""

MAX_LINE = 64 * 2**20
"""The most bytes one line of a JSON Lines file may hold."""

MAX_DEPTH = 64
"""The deepest nesting of lists and objects (tables) a file may hold."""

Source = str | os.PathLike[str] | Traversable


class FileMistake(ValueError):
    """A file that cannot be read as what it should be: ``FILE:LINE: reason``."""

    def __init__(self, file: object, line: int | None, reason: str):
        self.file, self.line, self.reason = str(file), line, reason
        super().__init__(f"{self.file}:{line}: {reason}" if line is not None else f"{self.file}: {reason}")


def _open(file: Source) -> Traversable:
    return file if isinstance(file, Traversable) else Path(file)


def read_bytes(file: Source, limit: int = MAX_BYTES) -> bytes:
    """The bytes of ``file``, refused past ``limit``."""
    try:
        with _open(file).open("rb") as stream:
            data = stream.read(limit + 1)
    except OSError as err:
        raise FileMistake(file, None, f"cannot read it: {err.strerror or err}") from None
    if len(data) > limit:
        raise FileMistake(file, None, f"larger than {limit} bytes")
    return data


def _text(data: bytes, file: Source, line: int | None = None) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        at = line if line is not None else data.count(b"\n", 0, err.start) + 1
        raise FileMistake(file, at, "not UTF-8 text") from None


def read_text(file: Source, limit: int = MAX_BYTES) -> str:
    """The UTF-8 text of ``file``, refused past ``limit`` bytes."""
    return _text(read_bytes(file, limit), file)


def parse_json(text: str, file: Source, line: int = 1) -> Any:
    """The JSON value in ``text`` (which starts at ``line`` of ``file``), nested at most :data:`MAX_DEPTH` deep."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise FileMistake(file, line + err.lineno - 1, f"not valid JSON: {err.msg}") from None
    except RecursionError:
        raise FileMistake(file, line + _deep_line(text, '"') - 1, f"nested deeper than {MAX_DEPTH}") from None
    except ValueError as err:  # e.g. an integer literal of too many digits
        raise FileMistake(file, line, f"not valid JSON: {err}") from None
    if _depth(value) > MAX_DEPTH:
        raise FileMistake(file, line + _deep_line(text, '"') - 1, f"nested deeper than {MAX_DEPTH}")
    return value


def read_json(file: Source, limit: int = MAX_BYTES) -> Any:
    """The JSON value in ``file`` (at most ``limit`` bytes, :data:`MAX_DEPTH` deep)."""
    return parse_json(read_text(file, limit), file)


def read_jsonl(file: Source, line_limit: int = MAX_LINE) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each non-blank line of ``file`` as (line number, object), one JSON object a line, each line at most
    ``line_limit`` bytes; a line that is not one (a truncated last line included) is a :class:`FileMistake`."""
    try:
        stream = _open(file).open("rb")
    except OSError as err:
        raise FileMistake(file, None, f"cannot read it: {err.strerror or err}") from None
    with stream:
        number = 0
        while True:
            try:
                raw = stream.readline(line_limit + 1)
            except OSError as err:
                raise FileMistake(file, number + 1, f"cannot read it: {err.strerror or err}") from None
            if not raw:
                return
            number += 1
            if len(raw) > line_limit:
                raise FileMistake(file, number, f"line longer than {line_limit} bytes")
            text = _text(raw, file, number)
            if not text.strip():
                continue
            value = parse_json(text.rstrip("\r\n"), file, number)  # an error at the line's end is on it, not the next
            if not isinstance(value, dict):
                raise FileMistake(file, number, f"expected a JSON object, got {type(value).__name__}")
            yield number, value


_TOML_LINE = re.compile(r"line (\d+)")


def parse_toml(text: str, file: Source) -> dict[str, Any]:
    """The TOML table in ``text`` (the content of ``file``), nested at most :data:`MAX_DEPTH` deep."""
    try:
        value = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        found = _TOML_LINE.search(str(err))
        line = int(found.group(1)) if found else text.count("\n") + 1  # "at end of document"
        raise FileMistake(file, line, f"not valid TOML: {str(err).split(' (at ')[0]}") from None
    except RecursionError:
        raise FileMistake(file, _deep_line(text, "\"'"), f"nested deeper than {MAX_DEPTH}") from None
    except ValueError as err:
        raise FileMistake(file, None, f"not valid TOML: {err}") from None
    if _depth(value) > MAX_DEPTH:
        raise FileMistake(file, _deep_line(text, "\"'"), f"nested deeper than {MAX_DEPTH}")
    return value


def read_toml(file: Source, limit: int = MAX_BYTES) -> dict[str, Any]:
    """The TOML table in ``file`` (at most ``limit`` bytes, :data:`MAX_DEPTH` deep)."""
    return parse_toml(read_text(file, limit), file)


def _depth(value: Any) -> int:
    """How deeply lists and dicts nest in ``value`` (a scalar is 0), walked without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list):
            continue
        deepest = max(deepest, level)
        if level > MAX_DEPTH:
            return level
        stack.extend((child, level + 1) for child in item)
    return deepest


def _deep_line(text: str, quotes: str) -> int:
    """The line (from 1) where brackets outside strings first nest past :data:`MAX_DEPTH` (1 if none does);
    only for the message, so a dotted TOML key or a table header counts as nothing."""
    token = re.compile("|".join([*(rf"{q}(?:[^{q}\\\n]|\\.)*{q}" for q in quotes), r"[\[\]{}\n]"]))
    depth, line = 0, 1
    for match in token.finditer(text):
        char = match.group()
        if char == "\n":
            line += 1
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return line
        elif char in "]}":
            depth -= 1
    return 1
