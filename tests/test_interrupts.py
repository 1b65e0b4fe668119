"""Signals are the user's (issue 19, item 3): a real SIGINT or SIGTERM to a ``debatekit`` process
stops it within seconds with 130 or 143, the debates finished so far summarised and written
(``summary.json`` marked interrupted), no pool worker or temporary folder left behind; a
``KeyboardInterrupt`` raised by a player's own code stays that player's forfeit.

Each subprocess is awaited with a bound; no test asserts a duration, only that the process ended
within a generous limit."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from debatekit.analysis.montecarlo import make_instance, run
from debatekit.engine.interrupts import Interrupted, interruptible
from debatekit.experiments import demo
from debatekit.experiments.demo_report import to_json
from debatekit.ledger import Role
from debatekit.players.base import Strategy
from debatekit.problems import PROBLEMS
from debatekit.protocols.registry import PROTOCOLS

EXECUTABLE = str(Path(sys.executable).with_name("debatekit"))
TESTS = Path(__file__).parent
STOPPED = 60.0
"""Seconds a stopped process may take to exit before the test fails (a bound, not a timing claim:
the shared test machines are slow)."""


def until(found: Callable[[], object], what: str, limit: float = 240.0) -> None:
    """Wait (at most ``limit`` seconds) until ``found()`` is true."""
    deadline = time.monotonic() + limit
    while not found():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.2)


def start(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.Popen:
    environment = os.environ | {"PYTHONPATH": os.pathsep.join([*sys.path, str(TESTS)])} | (env or {})
    return subprocess.Popen(
        [EXECUTABLE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment, cwd=cwd
    )


def stopped(process: subprocess.Popen, signum: int) -> tuple[int, str, str]:
    """Send ``signum``; the exit status and output once it ends (within :data:`STOPPED` seconds)."""
    process.send_signal(signum)
    try:
        out, err = process.communicate(timeout=STOPPED)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail(f"still running {STOPPED:g} s after {signal.Signals(signum).name}")
    return process.returncode, out, err


def lines(path: Path) -> int:
    """The debates a record file holds whole: its lines after the run's header."""
    return max(path.read_text(encoding="utf-8").count("\n") - 1, 0) if path.exists() else 0


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_a_run_and_keeps_what_finished(tmp_path, signum, code):
    """Mid-run (debates recorded already), the signal ends the run with 128 + its number; the run
    folder's summary.json and the JSON printed say interrupted and count the debates finished,
    which the record holds whole; ``--resume`` then completes the run from there."""
    logs, record = tmp_path / "logs", tmp_path / "r.jsonl"
    args = ["run", "cross-exam", "--problem", "parity", "--size", "16", "--record", str(record)]
    process = start(*args, "--trials", "100000", "--log-dir", str(logs), "--json")
    until(lambda: lines(record) >= 20, "debates to be recorded")
    status, out, err = stopped(process, signum)
    assert status == code, err
    assert err.strip().splitlines()[-1] == f"debatekit: interrupted ({signal.Signals(signum).name})"
    printed = json.loads(out)
    (folder,) = logs.iterdir()
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert summary["interrupted"] is True and printed["interrupted"] is True
    assert summary["trials_asked"] == 100000
    finished = summary["trials"]
    assert finished == printed["trials"] and 20 <= finished < 100000
    assert lines(record) == finished  # every finished debate recorded, whole; the one in flight is not
    assert summary["accept_rate"] == 1.0 and summary["forfeits"] == {"alice": 0, "bob": 0}
    resumed = subprocess.run(
        [EXECUTABLE, *args, "--trials", str(finished + 3), "--resume", "--no-log", "--json"],
        capture_output=True, text=True, timeout=240, env=os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["trials"] == finished + 3 and lines(record) == finished + 3


class SleepingBob:
    """A user's Bob of cross-examination who thinks for minutes (``--bob test_interrupts:SleepingBob``)."""

    def __init__(self, seat: object):
        pass

    def challenge(self, message: object) -> int:
        time.sleep(500)
        return 0


def test_a_signal_before_any_debate_finished_still_writes_a_summary(tmp_path):
    """A user's slow strategy: SIGINT while debate 0 is in flight writes an interrupted summary of
    no debates (and no forfeit: the signal was not the player's move)."""
    logs = tmp_path / "logs"
    process = start("run", "cross-exam", "--problem", "parity", "--size", "16", "--bob", "test_interrupts:SleepingBob",
                    "--trials", "5", "--log-dir", str(logs))  # fmt: skip
    until(lambda: any(logs.glob("*/run.json")), "the run to start")
    time.sleep(1.0)  # well into debate 0: the user's Bob sleeps for minutes
    status, _, err = stopped(process, signal.SIGINT)
    assert status == 130, err
    (folder,) = logs.iterdir()
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert summary == summary | {"interrupted": True, "trials": 0, "trials_asked": 5}
    assert "forfeit" not in err


def children(pid: int) -> set[int]:
    """The live descendants of ``pid`` (from /proc; zombies are not alive)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parents[int(entry.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pids: set[int]) -> set[int]:
    living = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            living.add(pid)
    return living


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")
def test_sigterm_stops_a_sweep_its_pool_workers_and_removes_their_temporary_folders(tmp_path):
    """A sweep on a local pool of 2 workers, mid-cell: SIGTERM ends it with 143, every worker is
    gone and no ``debatekit-cell-*`` folder is left in the temporary folder it was given."""
    grid, temp = tmp_path / "grid.toml", tmp_path / "tmp"
    temp.mkdir()
    grid.write_text('trials = 100000\nseed = [0, 1, 2, 3]\n[[grid]]\nprotocol = "cross-exam"\nproblem = "parity"\n'
                    "size = 16\n")  # fmt: skip
    process = start("sweep", str(grid), "--out", str(tmp_path / "out"), "--workers", "2", env={"TMPDIR": str(temp)})
    until(lambda: len(list(temp.glob("**/debatekit-cell-*"))) >= 2, "both workers to be playing a cell")
    workers = children(process.pid)
    assert len(workers) >= 2
    status, _, err = stopped(process, signal.SIGTERM)
    assert status == 143, err
    until(lambda: not alive(workers), "the pool's workers to end", limit=STOPPED)
    assert not list(temp.glob("**/debatekit-cell-*")) and not list(temp.iterdir())


class _Interrupting:
    """A user's Bob of cross-examination whose move raises KeyboardInterrupt itself."""

    def __init__(self, seat: object):
        pass

    def challenge(self, message: object) -> int:
        raise KeyboardInterrupt


def test_a_players_own_keyboard_interrupt_is_its_forfeit():
    spec = PROTOCOLS["cross-exam"]
    instance = make_instance(PROBLEMS["parity"], 16, True, 0)
    bob = Strategy("tests:interrupting", Role.BOB, "raises KeyboardInterrupt", _Interrupting)
    result = run(spec, instance, spec.strategies[Role.ALICE]["honest"], bob, trials=3, seed=0)
    assert result.forfeits == {"alice": 0, "bob": 3} and "KeyboardInterrupt" in result.forfeit_reasons["bob"]


def test_a_signal_mid_demo_keeps_the_rows_finished():
    """SIGINT while the demo's third row is being played: the rows finished are the ones carried,
    each whole (all its debates), and the result is marked interrupted."""
    played: list[int] = []

    def tick(done: int) -> None:
        played.append(done)
        if done == 2 * demo._trials(True, PROTOCOLS["cross-exam"]) + 1:  # one debate into the third row
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(Interrupted) as stop, interruptible():
        demo.run_demo(True, 0, tick)
    result = stop.value.result
    assert result.interrupted and stop.value.signum == signal.SIGINT
    assert [(r.protocol, r.problem, r.truth) for r in result.rows] == [("cross-exam", "parity", "yes")] * 2
    assert [r.trials for r in result.rows] == [demo._trials(True, PROTOCOLS["cross-exam"])] * 2
    assert len({r.adversary for r in result.rows}) == 2 and all(r.holds for r in result.rows)
    assert not (result.scaling or result.exact or result.payoffs or result.gap)
    assert to_json(result)["interrupted"] is True


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")
def test_sigint_stops_the_demo_and_writes_what_finished(tmp_path):
    """A real SIGINT mid-demo: exit 130, summary.json, the JSON printed and the report folder's
    results.json all say interrupted and hold the same rows; no child process or temporary folder
    is left."""
    logs, temp = tmp_path / "logs", tmp_path / "tmp"
    temp.mkdir()
    process = start("demo", "--quick", "--log-dir", str(logs), "--json", env={"TMPDIR": str(temp)})
    until(lambda: any(logs.glob("*/run.json")), "the demo to start")
    time.sleep(2.0)  # into the demo's debates (any point will do: what finished is what is written)
    spawned = children(process.pid)
    status, out, err = stopped(process, signal.SIGINT)
    assert status == 130, err
    assert err.strip().splitlines()[-1] == "debatekit: interrupted (SIGINT)"
    (folder,) = logs.iterdir()
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    results = json.loads((folder / "report" / "results.json").read_text(encoding="utf-8"))
    printed = json.loads(out)
    assert summary["interrupted"] is True and summary == printed | {"elapsed_s": summary["elapsed_s"]}
    assert results == {key: value for key, value in printed.items() if key != "report"}
    assert not (folder / "report" / "report.html").exists()  # no report is drawn of a part
    assert not alive(spawned) and not list(temp.iterdir())


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_a_ray_sweep_and_its_cluster(tmp_path, signum, code):
    """A sweep on a local Ray cluster, mid-cell: the signal ends it with 128 + its number (Ray's
    own SIGTERM handler does not take over), the cluster it started is shut down (none of its
    processes is left) and no temporary folder is left behind."""
    pytest.importorskip("ray")
    grid = tmp_path / "grid.toml"
    temp = Path(tempfile.mkdtemp(prefix="dk", dir="/tmp"))  # short: Ray's sockets go below it (see backends._short)
    grid.write_text('trials = 100000\nseed = [0, 1]\n[[grid]]\nprotocol = "cross-exam"\nproblem = "parity"\n'
                    "size = 16\n")  # fmt: skip
    try:
        process = start("sweep", str(grid), "--out", str(tmp_path / "out"), "--backend", "ray", "--workers", "2",
                        env={"TMPDIR": str(temp), "RAY_USAGE_STATS_ENABLED": "0"})  # fmt: skip

        def playing() -> bool:
            if process.poll() is not None:
                pytest.fail(f"the sweep ended first: {process.communicate()[1]}")
            return any(temp.glob("**/debatekit-cell-*"))

        until(playing, "a cell to start")
        cluster = children(process.pid)
        status, _, err = stopped(process, signum)
        assert status == code, err
        assert err.strip().splitlines()[-1] == f"debatekit: interrupted ({signal.Signals(signum).name})"
        until(lambda: not alive(cluster), "the Ray cluster's processes to end", limit=STOPPED)
        ray_files = (tmp_path / "out" / "ray").resolve()  # the cluster's session files, kept with the sweep
        assert [entry for entry in temp.iterdir() if entry != ray_files] == []
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def test_a_signal_stops_a_run_over_a_dataset_and_keeps_the_items_finished(tmp_path):
    """A run over a dataset stopped in its first item: 130, and the summary (printed and in the
    run folder) says interrupted, with that item's debates finished and none of the others."""
    logs = tmp_path / "logs"
    process = start("run", "cross-exam", "--problem", "compound", "--trials", "100000000", "--log-dir", str(logs),
                    "--json")  # fmt: skip
    until(lambda: logs.exists() and any(logs.iterdir()), "the run's folder")
    time.sleep(3)
    code, out, err = stopped(process, signal.SIGINT)
    assert code == 130, err
    printed = json.loads(out)
    (folder,) = logs.iterdir()
    written = json.loads((folder / "summary.json").read_text())
    assert written.pop("elapsed_s") > 0 and written == printed
    assert printed["interrupted"] is True
    (first,) = printed["items"]
    assert 0 < first["trials"] < first["trials_asked"] == 100000000
    assert "Traceback" not in err
