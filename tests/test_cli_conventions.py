"""Command-line conventions (issue 13, point 4): every command's ``--help`` lists the choices of
its options and shows examples that parse; shell completion offers commands, protocols and
problems; tables fit an 80-column terminal without cutting a number."""

from __future__ import annotations

import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from rich.console import Console

import debatekit.cli.common as common
from debatekit.cli.main import app, main
from debatekit.cli.options import PROBLEM_NAMES
from debatekit.problems import PROBLEMS
from debatekit.protocols.registry import PROTOCOLS
from debatekit.protocols.stochastic.params import Constants

EXECUTABLE = str(Path(sys.executable).with_name("debatekit"))


def commands() -> list[tuple[str, Any]]:
    """Every command (Typer's click objects), by its full name (``judge serve`` too)."""
    root: Any = typer.main.get_command(app)
    found = []
    for name, command in root.commands.items():
        if hasattr(command, "commands"):  # a group
            found += [(f"{name} {sub}", c) for sub, c in command.commands.items()]
        else:
            found.append((name, command))
    return found


def test_the_help_names_are_the_registries() -> None:
    assert tuple(PROBLEMS)[: len(PROBLEM_NAMES)] == PROBLEM_NAMES  # a user's plan file registers after them


@pytest.mark.parametrize(("name", "command"), commands(), ids=[n for n, _ in commands()])
def test_every_command_shows_examples_that_parse(name: str, command: Any) -> None:
    epilog = command.epilog or ""
    assert epilog.startswith("\b\nExamples:\n"), f"{name} has no examples"
    examples = " ".join(epilog.split("\n")[2:]).replace("\\ ", " ")
    for line in re.split(r"\s{2,}(?=debatekit )", examples.strip()):
        argv = shlex.split(line)
        assert argv[: 1 + name.count(" ") + 1] == ["debatekit", *name.split()], line
        argv = argv[2 + name.count(" ") :]
        with command.make_context(name, list(argv), resilient_parsing=False) as ctx:  # parses, runs nothing
            assert ctx.command is command


@pytest.mark.parametrize(("name", "command"), commands(), ids=[n for n, _ in commands()])
def test_every_option_with_choices_lists_them(name: str, command: Any) -> None:
    """Choices from an enum are listed by Typer (``<yes|no>``); protocol and problem names are
    listed from :mod:`debatekit.cli.options`, and strategies point to ``debatekit players``."""
    text = " ".join(command.get_help(command.make_context(name, [], resilient_parsing=True)).split())
    flat = text.replace("- ", "-")
    for param in command.params:
        if param.name == "protocol_name":
            assert all(n in flat for n in PROTOCOLS), name
        if param.name == "problem" and name != "lipschitz":  # lipschitz lists the stochastic ones
            assert all(n in flat for n in PROBLEM_NAMES), name
        if param.name in ("alice", "bob"):
            assert "debatekit players PROTOCOL" in text and "module:attr" in text and "llm:PROVIDER/MODEL" in text
    enums = {"run": ("<yes|no>", "<planned|lean|paper>"), "sweep": ("<local|ray>",), "plan": ("<direct|lean>",)}
    assert all(listed in text for listed in enums.get(name, ())), name


def complete(words: str) -> list[str]:
    env = os.environ | {"_DEBATEKIT_COMPLETE": "complete_bash", "COMP_WORDS": words,
                        "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1))}  # fmt: skip
    done = subprocess.run([EXECUTABLE], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_shell_completion_offers_commands_protocols_and_problems() -> None:
    assert "sweep" in complete("debatekit sw")
    assert complete("debatekit run cr") == ["cross-exam"]
    assert set(complete("debatekit run cross-exam --problem ma")) == {"majority", "ma-witness"}
    # the script ``--show-completion`` prints, asked for bash by name: ``--show-completion`` itself
    # detects the shell from the process's ancestors, which under pytest-xdist may have none
    env = os.environ | {"_DEBATEKIT_COMPLETE": "source_bash"}
    script = subprocess.run([EXECUTABLE], capture_output=True, text=True, env=env, timeout=60)
    assert script.returncode == 0 and "_DEBATEKIT_COMPLETE=complete_bash" in script.stdout, script.stderr


NUMBER_CUT = re.compile(r"\d…|…\d")

WIDE = [  # commands that print tables
    ["run", "cross-exam", "--problem", "majority", "--bob", "point-random", "--trials", "20", "--no-log"],
    ["run", "prover-estimator", "--problem", "obfuscated-primality", "--trials", "3", "--no-log"],
    ["run", "stochastic", "--problem", "noisy-majority", "--trials", "20", "--no-log"],
    ["plan", "--K", "2", "--T", "100", "--frontier"],
    ["stability", "--problem", "evidence-majority"],
    ["experiment", "judge-accuracy", "--debaters", "honest", "--trials", "2"],
]


@pytest.mark.parametrize("argv", WIDE, ids=[" ".join(a[:2]) for a in WIDE])
def test_tables_fit_80_columns_without_cutting_a_number(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    screen = io.StringIO()
    monkeypatch.setattr(common, "stdout", Console(file=screen, width=80))
    assert main(argv) == 0
    capsys.readouterr()
    lines = screen.getvalue().splitlines()
    assert lines and max(map(len, lines)) <= 80
    assert not [line for line in lines if "…" in line], "\n".join(lines)
    assert not NUMBER_CUT.search(screen.getvalue())


def test_the_demo_table_fits_80_columns_without_cutting_a_number() -> None:
    """The demo's rows at their widest (long names, the stochastic paper constants' large counts)."""
    from debatekit.cli.demo_cmd import table
    from debatekit.experiments.demo import DemoResult, Row

    rows = [Row("stochastic", Constants.paper, "xor-of-judgements", 26, 1_000_000, "yes", "bob:random-abort-everywhere",
                2000, 0.875, 0.875, (0.99, 1.0), 123_456_789, 987_654_321, 3_000_000_000, 9_999_999_999,
                0.6, 0.6, True)]  # fmt: skip
    screen = io.StringIO()
    Console(file=screen, width=80).print(table(DemoResult(rows, [], [], [], [], [], [], [], 0)))
    lines = screen.getvalue().splitlines()
    assert max(map(len, lines)) <= 80 and "…" not in screen.getvalue()
    text = screen.getvalue()
    for number in ("0.875", "123456789", "<= 987654321", "3000000000", "<= 9999999999"):
        assert number in text
