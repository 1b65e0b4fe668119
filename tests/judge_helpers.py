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


def serve_process(db: Path, port: int, log: Path) -> subprocess.Popen:
    """``debatekit judge serve --db db --port port`` as a process of its own, up and answering."""
    command = ["-c", "from debatekit.cli.main import entry; entry()", "judge", "serve", "--db", str(db)]
    with open(log, "ab") as out:
        process = subprocess.Popen([sys.executable, *command, "--port", str(port)], stdout=out, stderr=out)
    try:
        wait_until_up(f"http://127.0.0.1:{port}")
    except Exception:
        process.kill()
        raise AssertionError(log.read_text()) from None
    return process
