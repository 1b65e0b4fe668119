"""Every module a user's strategy or problem may import first imports alone, in a fresh
interpreter (the protocols and the problems package import each other's types)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import debatekit

PACKAGE = Path(debatekit.__file__).parent
MODULES = sorted(
    "debatekit." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
    for folder in ("protocols", "players", "problems", "machine", "engine")
    for path in (PACKAGE / folder).rglob("*.py")
    if path.name != "__init__.py"
)


@pytest.mark.parametrize("chunk", [MODULES[i::4] for i in range(4)], ids=[f"part{i}" for i in range(4)])
def test_each_module_imports_alone(chunk: list[str]) -> None:
    script = (
        "import subprocess, sys\n"
        f"for name in {chunk!r}:\n"
        "    done = subprocess.run([sys.executable, '-c', f'import {name}'], capture_output=True, text=True)\n"
        "    if done.returncode:\n"
        "        print(name, done.stderr.strip().splitlines()[-1])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout == "", done.stdout + done.stderr
