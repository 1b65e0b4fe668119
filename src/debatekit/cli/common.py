"""What the commands share when they run: output (a table on stdout, one JSON object). Name lookups
are :mod:`debatekit.runs.names`, progress bars :mod:`debatekit.progress`. Commands import it when
called, not when the app is built (see ``options``)."""

from __future__ import annotations

import json
import sys
from enum import Enum
from typing import Any

from rich.console import Console

stdout = Console(width=None if sys.stdout.isatty() else 160)
stderr = Console(stderr=True)


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, default=_jsonable) + "\n")


def _jsonable(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
