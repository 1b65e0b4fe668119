"""``sweep --backend ray --address`` (issue 13, point 2): a sweep joins a Ray cluster it did not
start and gives the local backend's table. The test starts a real head (``ray start --head
--block``, 2 CPUs, its files under the test's own folder, every port its own, token authentication
with a token of its own) and stops exactly the processes it started."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, closing, suppress
from pathlib import Path

import pytest

from debatekit.experiments.backends import _short

pytest.importorskip("ray")
pq = pytest.importorskip("pyarrow.parquet")

ROOT = Path(__file__).resolve().parents[1]
GRID = ROOT / "examples" / "sweep.toml"
BIN = Path(sys.executable).parent
STARTED = "This command will now block forever"
PORT_OPTIONS = ("--port", "--node-manager-port", "--object-manager-port", "--dashboard-port",
                "--dashboard-agent-listen-port", "--dashboard-agent-grpc-port", "--metrics-export-port",
                "--runtime-env-agent-port")  # fmt: skip


def free_ports(count: int) -> list[int]:
    """``count`` distinct ports free on this machine now (held together while chosen)."""
    with ExitStack() as held:
        sockets = [held.enter_context(closing(socket.socket())) for _ in range(count)]
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]


def processes_under(folder: Path) -> list[int]:
    """Processes whose command line names ``folder`` (the head's own: raylet, GCS, agents, workers)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if str(folder).encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return [pid for pid in found if pid != os.getpid()]


@pytest.fixture
def ray_head(tmp_path: Path) -> Iterator[tuple[str, dict[str, str], subprocess.Popen]]:
    """A Ray head of 2 CPUs: (its address, the environment that joins it, its process)."""
    ray = BIN / "ray"
    if not ray.exists():
        pytest.skip("the ray command is not installed beside this Python")
    temp = _short(tmp_path / "ray")  # a short folder (Ray's socket paths), linked from the test's own
    env = os.environ | {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16),
                        "RAY_USAGE_STATS_ENABLED": "0"}  # fmt: skip
    env.pop("RAY_AUTH_TOKEN_PATH", None)
    env.pop("RAY_ADDRESS", None)
    ports = dict(zip(PORT_OPTIONS, free_ports(len(PORT_OPTIONS)), strict=True))
    command = [str(ray), "start", "--head", "--block", "--num-cpus", "2", "--temp-dir", str(temp),
               "--node-ip-address", "127.0.0.1", "--include-dashboard", "false", "--disable-usage-stats",
               *(str(part) for option, port in ports.items() for part in (option, port))]  # fmt: skip
    log = tmp_path / "head.log"
    with log.open("wb") as out:
        head = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 120
        while STARTED not in log.read_text(errors="replace"):
            if head.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the Ray head did not start:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.5)
        yield f"127.0.0.1:{ports['--port']}", env, head
    finally:
        head.send_signal(signal.SIGTERM)  # --block: the head stops every process it started
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            head.kill()
            head.wait()
        for pid in processes_under(temp):  # anything left behind, found by the head's own folder
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(temp, ignore_errors=True)


def comparable(path: Path) -> object:
    """The results table without its timings and paths."""
    table = pq.read_table(path)
    return table.drop_columns([c for c in table.column_names if c.endswith(("_s", "_path"))])


def sweep(env: dict[str, str], *argv: object) -> dict:
    done = subprocess.run([str(BIN / "debatekit"), "sweep", str(GRID), *map(str, argv), "--json"], env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_sweep_joins_a_running_cluster_and_gives_the_local_table(
    ray_head: tuple[str, dict[str, str], subprocess.Popen], tmp_path: Path
) -> None:
    address, env, head = ray_head
    joined = sweep(env, "--backend", "ray", "--address", address, "--out", tmp_path / "ray-out")
    local = sweep(env, "--backend", "local", "--workers", 2, "--out", tmp_path / "local-out")
    assert joined["cells"] == joined["ran"] == local["ran"] == 48
    reference = comparable(tmp_path / "local-out" / "results.parquet")
    assert reference.num_rows == 48
    assert comparable(tmp_path / "ray-out" / "results.parquet").equals(reference)
    assert not (tmp_path / "ray-out" / "ray").exists()  # it joined; it started no cluster of its own
    assert head.poll() is None  # and leaving it only disconnected
    workers = list((tmp_path / "ray").glob("session_*/logs/worker-*"))
    assert workers, "the cells ran on the head's workers"
