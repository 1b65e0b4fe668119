"""A Ray sweep has no side effects (issue 24): the local cluster it starts keeps token
authentication without writing ``~/.ray/auth_token`` (which would turn it on for every later Ray
program of the user), and leaves no ``dkray-*`` folder in the temporary folder, with HOME and
TMPDIR pointed at folders of the test's own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("ray")
pytest.importorskip("pyarrow")

SWEEP = "import sys; from debatekit.cli.main import main; sys.exit(main(sys.argv[1:]))"


def test_a_ray_sweep_leaves_the_home_and_temporary_folders_as_they_were(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    temp = Path(tempfile.mkdtemp(prefix="dk", dir="/tmp"))  # short: Ray's sockets go below it (backends._short)
    out = tmp_path / "a-sweep-folder-whose-path-is-too-long-for-rays-sockets"
    env = {key: value for key, value in os.environ.items() if not key.startswith("RAY_")}
    env |= {"HOME": str(home), "TMPDIR": str(temp), "PYTHONPATH": os.pathsep.join(sys.path)}
    argv = ["sweep", "--set", "protocol=cross-exam", "--set", "problem=parity", "--set", "size=8", "--set", "seed=0,1",
            "--set", "trials=3", "--backend", "ray", "--workers", "1", "--out", str(out), "--json"]  # fmt: skip
    try:
        done = subprocess.run([sys.executable, "-c", SWEEP, *argv], env=env, capture_output=True, text=True,
                              timeout=300, cwd=tmp_path)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["ran"] == 2
        assert not list(home.iterdir())  # no ~/.ray/auth_token, nor anything else
        assert not list(temp.glob("dkray-*")) and not list(temp.glob("debatekit-sweep-*"))
        assert (out / "ray").is_dir() and not (out / "ray").is_symlink()  # the cluster's files, moved from there
    finally:
        shutil.rmtree(temp, ignore_errors=True)
