"""A real PostgreSQL server for the tests, never a mock: a throwaway cluster made with initdb in a
temporary folder, started with pg_ctl on 127.0.0.1 and a free port, stopped at the end of the session;
each test gets a database of its own. The tests that use it skip when PostgreSQL's binaries (or
psycopg) are absent. As root (CI's container) the server runs as the ``postgres`` user (else ``nobody``):
PostgreSQL refuses to run as root."""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def binaries() -> Path | None:
    """The folder of PostgreSQL's server binaries (initdb, pg_ctl) on PATH or Debian's, or None."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl", path=str(Path(found).parent)):
        return Path(found).parent
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(debian[-1]).parent if debian else None


def as_user(folder: Path) -> list[str]:
    """The command prefix that runs PostgreSQL's binaries as a user they accept, owning ``folder``."""
    if os.geteuid() != 0:
        return []
    user = "postgres" if "postgres" in {entry.pw_name for entry in pwd.getpwall()} else "nobody"
    shutil.chown(folder, user)
    return ["runuser", "-u", user, "--"]


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A running PostgreSQL server's base URL (``postgresql://debatekit@127.0.0.1:PORT``), trust auth."""
    pytest.importorskip("psycopg")
    bin_dir = binaries()
    if bin_dir is None:
        pytest.skip("PostgreSQL's server binaries (initdb, pg_ctl) are not installed")
    with tempfile.TemporaryDirectory(prefix="debatekit-postgres-", ignore_cleanup_errors=True) as made:
        yield from serve(bin_dir, Path(made))


def serve(bin_dir: Path, folder: Path) -> Iterator[str]:
    """Make a cluster in ``folder`` (outside pytest's private temporary folders, which another user
    cannot enter) and run it while the caller iterates."""
    prefix = as_user(folder)
    data, port = folder / "data", free_port()
    run = {"check": True, "capture_output": True, "timeout": 120}
    subprocess.run([*prefix, bin_dir / "initdb", "-D", data, "-U", "debatekit", "--auth=trust", "--no-sync"], **run)
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
    subprocess.run([*prefix, bin_dir / "pg_ctl", "-D", data, "-l", folder / "log", "-o", options, "-w", "start"], **run)
    try:
        yield f"postgresql://debatekit@127.0.0.1:{port}"
    finally:
        subprocess.run([*prefix, bin_dir / "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"], **run)


_databases = itertools.count()


@pytest.fixture
def postgres_url(postgres_server) -> str:
    """A fresh, empty database on the session's server: its URL."""
    import psycopg

    name = f"test_{os.getpid()}_{next(_databases)}"
    with psycopg.connect(f"{postgres_server}/postgres", autocommit=True) as db:
        db.execute(f"CREATE DATABASE {name}")
    return f"{postgres_server}/{name}"


@pytest.fixture(params=["sqlite", "postgresql"])
def store_location(request, tmp_path) -> str:
    """Where a fresh judges' store is: a SQLite file, or a database on the session's PostgreSQL server."""
    return str(tmp_path / "judges.sqlite") if request.param == "sqlite" else request.getfixturevalue("postgres_url")
