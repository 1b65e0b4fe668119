"""What the judge tests share: a free local port, the hidden fields of a judge's form, a judges'
server in a thread of this process, and one in a process of its own (to kill -9)."""

from __future__ import annotations

import html
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def form_fields(page: str) -> dict[str, str]:
    """The hidden fields (task, slot, rendered, csrf) of the answer form on a judge's page; {} when none."""
    return {
        name: html.unescape(value)
        for name, value in re.findall(r'name="(\w+)" value="([^"]*)"', page)
        if name in ("task", "slot", "rendered", "csrf")
    }


def wait_until_up(url: str, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            httpx.get(f"{url}/j/-", timeout=1.0)  # 404: an unknown link, but the server answers
            return
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@contextmanager
def served(db: Path) -> Iterator[str]:
    """The judges' app on ``db`` under Uvicorn in a thread, on 127.0.0.1; yields its base URL."""
    import uvicorn

    from debatekit.judge.server import create_app

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(db), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url)
        yield url
    finally:
        server.should_exit = True
        thread.join(10)


def serve_process(db: Path, port: int, log: Path, *extra: str) -> subprocess.Popen:
    """``debatekit judge serve --db db --port port [extra]`` as a process of its own, up and answering."""
    command = ["-c", "from debatekit.cli.main import entry; entry()", "judge", "serve", "--db", str(db)]
    with open(log, "ab") as out:
        process = subprocess.Popen([sys.executable, *command, "--port", str(port), *extra], stdout=out, stderr=out)
    try:
        wait_until_up(f"http://127.0.0.1:{port}")
    except Exception:
        process.kill()
        raise AssertionError(log.read_text()) from None
    return process


def krippendorff_nominal(units: list[list[int]]) -> float:
    """Krippendorff's alpha for nominal data from its definition, 1 - D_o / D_e over the pairable
    values (the units with two values or more): what the store's agreement is checked against."""
    units = [u for u in units if len(u) >= 2]
    n = sum(map(len, units))
    values = sorted({v for u in units for v in u})
    observed = sum(sum(u.count(a) * u.count(b) for a in values for b in values if a != b) / (len(u) - 1) for u in units)
    totals = [sum(u.count(v) for u in units) for v in values]
    expected = sum(totals[i] * totals[j] for i in range(len(values)) for j in range(len(values)) if i != j) / (n - 1)
    return 1 - observed / expected
