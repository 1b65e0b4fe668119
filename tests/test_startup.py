"""Start-up (issue 10): building the app and printing help import Typer and the command signatures only,
and a plain run imports no scipy.stats. Each check runs in a fresh interpreter, as sys.modules is shared
in-process; timings are for benchmarks/startup.py, not tests."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("numpy", "scipy", "matplotlib", "rich", "debatekit.catalog", "debatekit.protocols.spec", "debatekit.analysis",
         "debatekit.problems")  # fmt: skip


def modules_after(argv: list[str]) -> tuple[int, list[str]]:
    """``main(argv)``'s exit status in a fresh interpreter, and the modules it left imported (by prefix)."""
    script = (
        "import json, sys\n"
        "from debatekit.cli.main import main\n"
        f"code = main({argv!r})\n"
        f"print(json.dumps([code, sorted(m for m in sys.modules if m.startswith({HEAVY!r}))]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    code, modules = json.loads(done.stdout.splitlines()[-1])
    return code, modules


def test_building_the_app_imports_nothing_heavy() -> None:
    script = (
        "import sys, debatekit.cli.main\n"
        "print(sorted(m for m in sys.modules if m.startswith(('scipy', 'matplotlib', 'debatekit.catalog', "
        "'debatekit.protocols.spec', 'debatekit.analysis'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]"


def test_help_imports_only_typer_and_the_signatures() -> None:
    code, modules = modules_after(["--help"])
    assert code == 0
    assert modules == []


def test_plain_run_imports_no_scipy_stats() -> None:
    code, modules = modules_after(["run", "cross-exam", "--problem", "parity", "--trials", "5", "--json"])
    assert code == 0
    assert "debatekit.protocols.spec" in modules  # the run did happen
    assert not [m for m in modules if m.startswith(("scipy.stats", "matplotlib"))]
