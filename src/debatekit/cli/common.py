"""What the commands share when they run: output (a table on stdout, one JSON object). Name lookups
are :mod:`debatekit.runs.names`, progress bars :mod:`debatekit.progress`. Commands import it when
called, not when the app is built (see ``options``)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING, Any

from rich.console import Console

if TYPE_CHECKING:
    from debatekit.experiments.logs import RunLog

stdout = Console(width=None if sys.stdout.isatty() else 160)
stderr = Console(stderr=True)


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, default=_jsonable) + "\n")


def conclude(
    summary: dict[str, Any],
    log: RunLog | None,
    started: float,
    json_out: bool,
    show: Callable[[], None],
    stopped: BaseException | None,
) -> None:
    """How a logged command that a signal may stop ends: its log finished with ``summary`` (where it
    keeps one; ``started``, its ``time.perf_counter()``), the summary printed as one JSON object or
    by ``show``, and then the signal that stopped it, if one did, raised again (exit 128 + its number)."""
    if log is not None:
        log.finish(summary, time.perf_counter() - started)
    if json_out:
        emit_json(summary)
    else:
        show()
    if stopped is not None:
        raise stopped


def _jsonable(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
