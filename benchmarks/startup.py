"""Start-up time of the command line: median wall time of ``debatekit --help`` beside ``python -c pass``.

Each run is a fresh process: the ``debatekit`` script installed beside this interpreter, and this interpreter
itself, so the difference between the two is what debatekit and Typer add. On a loaded machine, raise
``--repeat``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from timing import median_time, print_table

SCRIPT = Path(sys.executable).with_name("debatekit")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10, help="runs of each command (default 10)")
    args = parser.parse_args()
    if not SCRIPT.is_file():
        raise SystemExit(f"no {SCRIPT}: run with the interpreter of the environment debatekit is installed in")
    commands = {"python -c pass": [sys.executable, "-c", "pass"], "debatekit --help": [str(SCRIPT), "--help"]}
    rows = [("command", "median wall time")]
    for label, command in commands.items():
        seconds, _ = median_time(lambda c=command: subprocess.run(c, check=True, capture_output=True), args.repeat)
        rows.append((label, f"{seconds * 1000:.0f} ms"))
    print_table(rows)


if __name__ == "__main__":
    main()
