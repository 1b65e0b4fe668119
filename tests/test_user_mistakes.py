"""The command line's remaining unclean mistakes (issue 13, point 4): each is one line on stderr
and exit status 2, never a traceback; a player's code that tries to end the process mid-debate
forfeits (the verifier is the security boundary); ``--debug`` lets a user strategy's own error
through with its traceback, and without it the note names the file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from debatekit.cli.main import main
from debatekit.engine.play import debug_players

HERE = Path(__file__).parent

GAMES = [  # (protocol, problem and size): one of every engine family that takes a user's strategy
    ("cross-exam", "majority", "16"),
    ("bisection", "palindrome", "8"),
    ("kw", "parity", "4"),
    ("circuit-cross-exam", "parity", "4"),
    ("stochastic", "noisy-majority", "8"),
    ("prover-estimator", "obfuscated-primality", "10"),
    ("naive-recursive", "obfuscated-primality", "10"),
]


@pytest.fixture(autouse=True)
def _user_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    monkeypatch.delenv("DEBATEKIT_DEBUG", raising=False)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([*argv, "--no-log"] if argv[0] == "run" else list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(("protocol", "problem", "size"), GAMES)
@pytest.mark.parametrize(
    "bob", ["user_strategies:ExitingAtSeat", "user_strategies:InterruptingAtSeat", "builtins:exit"]
)
def test_a_strategy_that_ends_the_process_while_sitting_down_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], protocol: str, problem: str, size: str, bob: str
) -> None:
    code, _, err = cli(capsys, "run", protocol, "--problem", problem, "--size", size, "--bob", bob, "--trials", "2")
    assert code == 2
    assert f"bob strategy {bob!r} tried to end the process while sitting down" in one_line(err)


@pytest.mark.parametrize(("protocol", "problem", "size"), GAMES)
@pytest.mark.parametrize(
    ("bob", "raised"), [("ExitingMover", "SystemExit"), ("InterruptingMover", "KeyboardInterrupt")]
)
def test_a_move_that_ends_the_process_forfeits_and_the_run_goes_on(
    capsys: pytest.CaptureFixture[str], protocol: str, problem: str, size: str, bob: str, raised: str
) -> None:
    code, out, err = cli(capsys, "run", protocol, "--problem", problem, "--size", size,
                         "--bob", f"user_strategies:{bob}", "--trials", "3", "--json")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["forfeits"] == {"alice": 0, "bob": 3}
    assert "note: bob forfeited 3 of 3 debates" in err and raised in err
    assert "(user_strategies.py:" in err  # the place in the user's code


def test_the_note_names_the_file_and_line_and_debug_lets_the_traceback_through(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ("run", "cross-exam", "--problem", "parity", "--size", "8", "--bob", "user_strategies:CrashingBob",
            "--trials", "3")  # fmt: skip
    line = next(n for n, text in enumerate((HERE / "user_strategies.py").read_text().splitlines(), 1)
                if 'raise RuntimeError("user bob crashed")' in text)  # fmt: skip
    code, _, err = cli(capsys, *argv)
    assert code == 0
    assert f"e.g. RuntimeError: user bob crashed (user_strategies.py:{line})" in err
    try:
        code, _, err = cli(capsys, "--debug", *argv, "--no-log")
    finally:
        debug_players(False)
    assert code == 1
    assert "Traceback (most recent call last)" in err and f'user_strategies.py", line {line}, in challenge' in err
    last = err.rstrip().splitlines()[-1]
    crashed = f"RuntimeError: user bob crashed (user_strategies.py:{line})"
    assert last == f"debatekit: a player's code failed (--debug): {crashed}"
    code, _, err = cli(capsys, *argv)  # --debug held for that invocation only
    assert code == 0 and "Traceback" not in err


def test_too_many_trials_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "run", "cross-exam", "--problem", "majority", "--trials", str(10**12))
    assert code == 2 and "--trials is at most 1e+10" in one_line(err)


def test_a_size_the_planner_cannot_plan_names_an_option_run_has(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "run", "stochastic", "--problem", "meta-analysis", "--size", "2000", "--trials", "1")
    assert code == 2 and "cannot be planned" in one_line(err) and "choose a smaller --size" in err
    code, help_text, _ = cli(capsys, "run", "--help")
    assert code == 0 and "--size" in help_text


def test_a_message_that_ends_the_process_when_read_loses_for_its_sender(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "run", "cross-exam", "--problem", "parity", "--size", "8",
                         "--bob", "user_strategies:ExitingMessageBob", "--trials", "3", "--json")  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert data["forfeits"] == {"alice": 0, "bob": 3} and data["accept_rate"] == 1.0
