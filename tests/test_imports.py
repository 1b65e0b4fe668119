"""The import structure: every module a user's strategy or problem may import first imports alone,
in a fresh interpreter; nothing outside ``debatekit.cli`` imports it (the API and experiments sit
below the command line); no module-level import cycle (issue 21)."""

from __future__ import annotations

import ast
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


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


SOURCES = {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _imported(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules of ours an import statement names (``from PACKAGE import MODULE`` names MODULE)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level or node.module is None:
        return []
    return [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in SOURCES else node.module
            for alias in node.names]  # fmt: skip


def _module_level(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """The import statements run or read as the module loads: its top level, within ``if`` (the
    ``TYPE_CHECKING`` blocks included: a type checker follows them) and ``try``; not in functions."""
    found: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If):
            found += _module_level(node.body) + _module_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                found += _module_level(block)
    return found


def test_nothing_outside_the_command_line_imports_it() -> None:
    """The API, experiments and every engine module sit below ``debatekit.cli`` (issue 21): none
    imports it, at any depth (function-local imports included)."""
    offenders = [
        f"{name} imports {target}"
        for name, path in SOURCES.items()
        if not name.startswith("debatekit.cli")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for target in _imported(node)
        if target == "debatekit.cli" or target.startswith("debatekit.cli.")
    ]
    assert offenders == []


def test_no_import_cycle_among_module_level_imports() -> None:
    """No two modules import each other, directly or round a loop, as they load (``TYPE_CHECKING``
    imports included; imports inside functions are how a module reaches up, and are not counted)."""
    graph = {
        name: {target for node in _module_level(ast.parse(path.read_text(encoding="utf-8")).body)
               for target in _imported(node) if target in SOURCES and target != name}
        for name, path in SOURCES.items()
    }  # fmt: skip
    cycles, index, low, stack, on_stack = [], {}, {}, [], set()
    for root in graph:  # Tarjan's strongly connected components, iteratively
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        cycles.append(sorted(component))
    assert cycles == []
