"""The command line's remaining unclean mistakes (issue 13, point 4): each is one line on stderr
and exit status 2, never a traceback; a player's code that tries to end the process mid-debate
forfeits (the verifier is the security boundary); ``--debug`` lets a user strategy's own error
through with its traceback, and without it the note names the file and line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from debatekit.cli.main import main
from debatekit.engine.play import debug_players
from debatekit.protocols.registry import PROTOCOLS
from debatekit.protocols.stochastic.params import Constants

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


def cli(capsys: pytest.CaptureFixture[str], *given: str | Path) -> tuple[int, str, str]:
    capsys.readouterr()
    argv = [str(a) for a in given]
    code = main([*argv, "--no-log"] if argv[0] == "run" else argv)
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(("protocol", "problem", "size"), GAMES)
@pytest.mark.parametrize(
    "bob", ["user_strategies:ExitingAtSeat", "user_strategies:InterruptingAtSeat", "builtins:exit"]
)
def test_a_strategy_that_ends_the_process_while_sitting_down_loses_in_its_worker_and_inline_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], protocol: str, problem: str, size: str, bob: str
) -> None:
    argv = ("run", protocol, "--problem", problem, "--size", size, "--bob", bob, "--trials", "2")
    if PROTOCOLS[protocol].isolated:  # in its worker (issue 20): its process ends, not the run
        code, out, err = cli(capsys, *argv, "--json")
        assert code == 0, err
        assert json.loads(out)["forfeits"] == {"alice": 0, "bob": 2}
        assert "note: bob forfeited 2 of 2 debates, e.g. " in err
        assert "SystemExit" in err or "KeyboardInterrupt" in err
    else:  # its protocol's players are not isolated yet: inline, as on the user's word below
        assert cli(capsys, *argv)[0] == 2
    code, _, err = cli(capsys, *argv, "--trust-players")  # inline, it would end the engine's process
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
    code, _, err = cli(capsys, *argv)  # in its worker: the innermost frames of the user's code
    assert code == 0
    assert f"e.g. RuntimeError: user bob crashed (user_strategies.py:{line} in challenge)" in err
    code, _, err = cli(capsys, *argv, "--trust-players")  # inline: the innermost frame
    assert code == 0
    assert f"e.g. RuntimeError: user bob crashed (user_strategies.py:{line})" in err
    try:  # a traceback to debug with: inline, on the user's word
        code, _, err = cli(capsys, "--debug", *argv, "--trust-players", "--no-log")
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


# -- issue 19, item 6: every user mistake one line -------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value"),
    [("--move-timeout", "inf"), ("--move-timeout", "1e300"), ("--move-timeout", "nan"), ("--move-timeout", "86401"),
     ("--concurrency", "3000"), ("--concurrency", "257"), ("--concurrency", "0")],
)  # fmt: skip
def test_a_move_timeout_or_concurrency_past_its_bound_is_one_line(
    capsys: pytest.CaptureFixture[str], option: str, value: str
) -> None:
    """``inf`` or ``1e300`` seconds overflowed the engine's thread waits (an honest user strategy
    forfeited with OverflowError) and 3,000 debates in flight ran out of threads (charged to a
    player): both are refused before any debate is played."""
    code, out, err = cli(capsys, "run", "cross-exam", "--problem", "parity", "--size", "4", "--trials", "2",
                         "--bob", "user_strategies:AcceptingBob", option, value)  # fmt: skip
    assert (code, out) == (2, "")
    said = f"{float(value):g}" if option == "--move-timeout" else value
    assert one_line(err).startswith(f"debatekit: error: {option} must be ") and err.endswith(f", got {said}\n")


@pytest.mark.parametrize("gib", ["0.1", "2000", "nan"])
def test_a_player_memory_out_of_bounds_is_one_line(capsys: pytest.CaptureFixture[str], gib: str) -> None:
    code, _, err = cli(capsys, "run", "cross-exam", "--problem", "parity", "--player-memory", gib)
    assert code == 2
    assert "--player-memory must be from 0.25 to 1024 GiB" in one_line(err)


def test_a_move_timeout_and_concurrency_at_their_bounds_play(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "run", "cross-exam", "--problem", "parity", "--size", "4", "--trials", "3",
                         "--bob", "user_strategies:AcceptingBob", "--move-timeout", "86400", "--concurrency", "256",
                         "--json")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["forfeits"] == {"alice": 0, "bob": 0}


NESTED = 5_000
"""Deeper than any parser's recursion in a default interpreter, and than files.MAX_DEPTH."""


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [("plan.json", '{"title": "x",\n "steps": ' + "[" * NESTED + "]" * NESTED + "}", 2),
     ("plan.toml", 'title = "x"\nsteps = ' + "[" * NESTED + "]" * NESTED + "\n", 2)],
)  # fmt: skip
def test_a_deeply_nested_plan_file_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, text: str, line: int
) -> None:
    (tmp_path / name).write_text(text)
    code, out, err = cli(capsys, "run", "cross-exam", "--problem", str(tmp_path / name), "--trials", "1")
    assert (code, out) == (2, "")
    assert one_line(err) == f"debatekit: error: {tmp_path / name}:{line}: nested deeper than 64\n"


GRID_HEAD = 'trials = 1\nprotocol = "cross-exam"\nproblem = "parity"\n'


def test_a_deeply_nested_grid_file_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID_HEAD + "seed = " + "[" * NESTED + "]" * NESTED + "\n")
    code, out, err = cli(capsys, "sweep", grid, "--out", tmp_path / "out", "--workers", "1")
    assert (code, out) == (2, "")
    assert one_line(err) == f"debatekit: error: {grid}:4: nested deeper than 64\n"
    assert not (tmp_path / "out").exists()


def test_a_grid_past_the_cell_limit_is_refused_with_its_count_before_expansion(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """10^7 cells (10^3 seeds x 10^2 sizes x 10^2 parameter values, in two grids) hung in expansion
    with no message; they are counted first, and none is made or checked."""
    from debatekit.experiments import grid as grids

    def never(*args: object) -> None:
        raise AssertionError("a cell was expanded")

    monkeypatch.setattr(grids, "_product", never)
    seeds, sizes = list(range(1000)), list(range(1, 101))
    text = GRID_HEAD + f"seed = {seeds}\nsize = {sizes}\n[params]\nk = {[1.0 + i for i in range(50)]}\n"
    (tmp_path / "grid.toml").write_text(text + '[[grid]]\nbob = "honest"\n[[grid]]\nbob = "point-random"\n')
    code, out, err = cli(capsys, "sweep", tmp_path / "grid.toml", "--out", tmp_path / "out", "--workers", "1")
    assert (code, out) == (2, "")
    assert f"{10**7} cells, more than the {grids.MAX_CELLS} a grid may hold" in one_line(err)


def test_a_grid_at_the_cell_limit_expands(monkeypatch: pytest.MonkeyPatch) -> None:
    from debatekit.experiments import grid as grids

    monkeypatch.setattr(grids, "MAX_CELLS", 12)
    table = {"protocol": "cross-exam", "problem": "parity", "seed": list(range(6)), "truth": ["yes", "no"]}
    assert len(grids.expand(table)) == 12
    with pytest.raises(grids.GridError, match="13 cells, more than the 12"):
        grids.expand(table | {"grid": [{}, {"bob": "point-random", "seed": 0, "truth": "yes"}]})


@pytest.mark.parametrize(("protocol", "problem", "size"), GAMES)
def test_an_exception_whose_str_and_repr_exit_is_described_and_the_run_goes_on(
    capsys: pytest.CaptureFixture[str], protocol: str, problem: str, size: str
) -> None:
    """Describing the player's exception called its ``__str__``, whose ``SystemExit(0)`` ended
    ``run`` with status 0 and nothing on stdout."""
    code, out, err = cli(capsys, "run", protocol, "--problem", problem, "--size", size,
                         "--bob", "user_strategies:UnprintableMover", "--trials", "2", "--json")  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert data["forfeits"] == {"alice": 0, "bob": 2}
    assert "Unprintable: <unprintable> (user_strategies.py:" in data["forfeit_reasons"]["bob"]


def test_a_sweep_whose_player_raises_an_unprintable_exception_saves_every_cell(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID_HEAD + 'size = 4\nseed = [0, 1]\nbob = ["honest", "user_strategies:UnprintableMover"]\n')
    code, out, err = cli(capsys, "sweep", grid, "--out", tmp_path / "out", "--workers", "1", "--json")
    assert code == 0, err
    swept = json.loads(out)
    assert (swept["cells"], swept["ran"], len(swept["results"])) == (4, 4, 4)
    assert sorted(row["forfeits"]["bob"] for row in swept["results"]) == [0, 0, 1, 1]


class Hostile:
    """An object whose ``__repr__`` and ``__str__`` try to end the process."""

    def __repr__(self) -> str:
        raise KeyboardInterrupt

    def __str__(self) -> str:
        raise SystemExit(0)


class Sly(str):
    """A ``str`` whose own methods try to end the process."""

    def __len__(self) -> int:
        raise SystemExit(1)

    def __format__(self, spec: str) -> str:
        raise SystemExit(1)

    def __getitem__(self, key: object) -> str:
        raise SystemExit(1)


class Named(type):
    @property
    def __name__(cls) -> str:  # type: ignore[override]
        raise SystemExit(2)


class SlyError(Exception, metaclass=Named):
    def __str__(self) -> str:
        return Sly("sly")


def test_safe_repr_and_describe_never_let_an_objects_methods_end_the_process() -> None:
    from debatekit.engine.boundary import safe_repr, safe_str
    from debatekit.engine.play import describe

    assert safe_repr(Hostile()) == "<Hostile object>" and safe_str(Hostile()) == "<unprintable>"
    sly = Sly("x" * 300)
    assert type(safe_str(sly)) is str and safe_str(sly) == "x" * 300
    assert type(safe_repr(sly)) is str and len(safe_repr(sly)) <= 80
    assert describe(SlyError()) == "SlyError: sly"  # its metaclass's __name__ never ran
    assert safe_repr(SlyError()) == "<SlyError object>"  # reprlib read the name through the metaclass


@pytest.mark.parametrize(
    ("alice", "constants", "reason"),
    [("HugeClaimAlice", "lean", "a claim that is not a probability in [0, 1]"),
     ("HugeShareAlice", "paper", "a coin share outside [0, 1)")],
)  # fmt: skip
def test_a_bare_huge_int_claim_or_share_is_its_senders_forfeit(
    capsys: pytest.CaptureFixture[str], alice: str, constants: str, reason: str
) -> None:
    """A user's strategy trusted inline plays one debate per call (stochastic/solo): ``10**400``
    ended the run with OverflowError (exit 1); the verifier's commit refuses it. In its worker (the
    default), the number cannot even cross to the engine."""
    argv = ("run", "stochastic", "--problem", "noisy-majority", "--size", "8", "--constants", constants,
            "--alice", f"user_strategies:{alice}", "--trials", "2", "--json")  # fmt: skip
    unsendable = "WireError: an integer of 1329 bits (at most 256 cross)"
    for trust, expected in ((("--trust-players",), reason), ((), unsendable)):
        code, out, err = cli(capsys, *argv, *trust)
        assert code == 0, err
        data = json.loads(out)
        assert data["forfeits"] == {"alice": 2, "bob": 0} and data["forfeit_reasons"] == {"alice": expected}


@pytest.mark.parametrize("bad", [10**400, float("inf"), float("nan")], ids=["10**400", "inf", "nan"])
@pytest.mark.parametrize("what", ["claim", "share"])
def test_in_a_batch_a_huge_or_non_finite_number_forfeits_its_own_debate_only(what: str, bad: object) -> None:
    """The batch interpreter (stochastic/batch) reads a message for many debates at once; one
    unreadable entry made every debate of the batch unreadable (all four forfeited)."""
    from debatekit.analysis.montecarlo import make_instance
    from debatekit.ledger import Role
    from debatekit.players.base import Strategy
    from debatekit.problems import PROBLEMS
    from debatekit.protocols.registry import PROTOCOLS
    from debatekit.protocols.stochastic.spec import StochasticParams

    class Sender:  # the truth, except debate 0's first claim or share
        def __init__(self, seat: object):
            pass

        def claims(self, view: Any) -> list:
            sent = view.p.tolist()
            if what == "claim" and view.t == 0:
                sent[0] = bad
            return sent

        def shares(self, view: Any) -> list:
            sent = [0.5] * len(view.rows)
            if what == "share" and view.t == 0:
                sent[0] = bad
            return sent

    spec = PROTOCOLS["stochastic"]
    spec = spec.with_params(StochasticParams(Constants.paper)) if what == "share" else spec
    instance = make_instance(PROBLEMS["noisy-majority"], 8, True, 0)
    sender = Strategy("sender", Role.ALICE, "", Sender)
    tally = spec.batch.simulate(instance, sender, spec.honest(Role.BOB), 0, range(4), None, True)
    assert tally.forfeits == {Role.ALICE: 1, Role.BOB: 0}
    assert [record["forfeit"] for record in tally.records] == ["alice", None, None, None]
    assert tally.records[0]["reason"].startswith(f"a {'claim' if what == 'claim' else 'coin share'} ")
