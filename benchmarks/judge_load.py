"""Load on the judges' server: many simulated judges answering the tasks a People-like producer asks.

On 127.0.0.1 only, bounded in count (``--tasks`` x ``--answers`` judgements) and in time (``--seconds``):
``debatekit judge serve`` runs as its own process on a fresh database; a producer thread creates the
tasks through the store, keyed as the People oracle keys them (one per debate, R answers each from
distinct judges); ``--judges`` simulated judges, each an asyncio task with its own kept-alive connection, load
their page, post its render beacon, read for ``--think`` seconds on average (0: none, the server's
capacity), answer the question shown and load the next. Prints judgements per second, the p50 and p99
latency of the next question (the page's GET), of an answer (POST to acknowledgement) and of a whole
step (page, then answer, less the reading), and the server's CPU time per judgement, side by side with
the raw write rate of the same database (one-row transactions, each committed alone, as durable as an
answer), and checks that none was lost: the answers in the database are exactly the ones acknowledged,
none twice and no task over its R (exit 1 otherwise). ``--db postgresql://...`` runs the store on an
empty PostgreSQL database instead of a fresh SQLite file. ``--profile FILE`` runs the server under
cProfile, every thread of it, and writes the merged statistics to FILE (``python -m pstats FILE``);
profiling slows the server, so its latencies are not the ones to report.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from debatekit.judge.database import PostgreSQL, SQLite, is_url
from debatekit.judge.store import Store, TaskKey

FIELD = re.compile(r'name="(task|slot|rendered|csrf)" value="([^"]*)"')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def write_rate(location: str | Path, seconds: float = 3.0) -> float:
    """Committed one-row transactions per second on the database at ``location`` (a scratch table in
    it, dropped after): the most answers a store committing each alone could acknowledge."""
    db = PostgreSQL(location) if isinstance(location, str) else SQLite(Path(location), 30.0)
    try:
        db.execute("CREATE TABLE IF NOT EXISTS raw_rate (n INTEGER NOT NULL, at DOUBLE PRECISION NOT NULL)")
        count, started = 0, time.monotonic()
        while time.monotonic() - started < seconds:
            db.begin()
            db.execute("INSERT INTO raw_rate (n, at) VALUES (?, ?)", (count, time.time()))
            db.commit()
            count += 1
        rate = count / (time.monotonic() - started)
        db.execute("DROP TABLE raw_rate")
    finally:
        db.close()
    return rate


def produce(store: Store, tasks: int, answers: int, done: threading.Event) -> None:
    """The producer: each debate's verifier asks one question needing ``answers`` answers."""
    own = Store(store.location)
    for debate in range(tasks):
        own.task_for(TaskKey("load", debate, "verifier", 0), f"Is claim {debate} supported?", ("a fact",), answers, 1)
    done.set()


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    text: str


class Browser:
    """One judge's connection, HTTP/1.1 kept alive between requests as a browser keeps it, reopened after
    ``idle`` seconds without one (before Uvicorn's keep-alive of 5 s ends it) or when the server closed it.
    A few lines of asyncio instead of an HTTP library, so that the judges' own CPU is small beside the
    server's on the same cores."""

    def __init__(self, host: str, port: int, idle: float = 4.0):
        self.host, self.port, self.idle = host, port, idle
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self._used = 0.0

    async def request(self, method: str, path: str, form: dict[str, str] | None = None) -> Reply:
        if self._streams is not None and time.monotonic() - self._used > self.idle:
            await self.close()
        if self._streams is None:
            self._streams = await asyncio.open_connection(self.host, self.port)
        reader, writer = self._streams
        body = urlencode(form).encode() if form is not None else b""
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
        if form is not None:
            head += f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(body)}\r\n"
        writer.write(head.encode() + b"\r\n" + body)
        status = int((await reader.readuntil(b"\r\n")).split()[1])
        headers = {}
        while (line := await reader.readuntil(b"\r\n")) != b"\r\n":
            name, _, value = line.decode().partition(":")
            headers[name.lower()] = value.strip()
        text = (await reader.readexactly(int(headers.get("content-length", 0)))).decode()
        self._used = time.monotonic()
        if headers.get("connection") == "close":
            await self.close()
        return Reply(status, headers, text)

    async def close(self) -> None:
        if self._streams is not None:
            self._streams[1].close()
            self._streams = None


async def judge(
    url: str, token: str, deadline: float, produced: threading.Event, log: dict[str, list], think: float
) -> None:
    """One judge, with a connection of their own as a browser has, arriving within the first ``2 * think``
    seconds: page, answer, page, ... until nothing is left for them or time is up."""
    await asyncio.sleep(random.uniform(0, 2 * think))  # judges open their links at different moments
    where = urlsplit(url)
    browser = Browser(where.hostname, where.port)
    try:
        await judging(browser, token, deadline, produced, log, think)
    finally:
        await browser.close()


async def judging(
    browser: Browser,
    token: str,
    deadline: float,
    produced: threading.Event,
    log: dict[str, list],
    think: float,
) -> None:
    while time.monotonic() < deadline:
        started = time.monotonic()
        page = await browser.request("GET", f"/j/{token}")
        log["page"].append(time.monotonic() - started)
        fields = dict(FIELD.findall(page.text))
        if not fields:
            if produced.is_set():
                return
            await asyncio.sleep(0.05)
            continue
        shown = await browser.request("POST", f"/j/{token}/shown", fields)  # the page's render beacon, as a browser's
        shown_at = time.monotonic()
        if shown.status == 409:  # other judges took it meanwhile: the page moves on
            log["refused"].append("taken")
            continue
        await asyncio.sleep(random.uniform(0, 2 * think))  # reading the question
        posted = time.monotonic()
        done = await browser.request("POST", f"/j/{token}/answer", {**fields, "answer": "yes"})
        now = time.monotonic()
        moved_on = done.headers.get("location", "").partition("?note=")[2]  # a late answer: the next question
        if done.status == 303 and not moved_on:
            log["acknowledged"].append((int(fields["task"]), token))
            log["answer"].append(now - posted)
            log["step"].append(now - started - (posted - shown_at))
        else:
            log["refused"].append(moved_on or done.status)


async def load(
    url: str, tokens: list[str], seconds: float, produced: threading.Event, think: float
) -> tuple[dict, float]:
    log: dict[str, list] = {"acknowledged": [], "page": [], "answer": [], "step": [], "refused": []}
    started = time.monotonic()
    await asyncio.gather(*(judge(url, token, started + seconds, produced, log, think) for token in tokens))
    return log, time.monotonic() - started


PROFILED = """
import cProfile, sys, threading, time
profiles = [cProfile.Profile(time.thread_time)]

def each_thread(*_):
    sys.setprofile(None)
    profiles.append(cProfile.Profile(time.thread_time))
    profiles[-1].enable()

def dump():
    import pstats
    for profile in profiles:
        profile.create_stats()
    stats = pstats.Stats(profiles[0])
    for profile in profiles[1:]:
        stats.add(profile)
    stats.dump_stats({out!r})

threading.setprofile(each_thread)
profiles[0].enable()
from debatekit.cli.main import main
main()
dump()
"""
"""The server's command under ``--profile``: a profiler per thread (the event loop's and the request threads'),
timed by the thread's own CPU time (waits for locks and the GIL left out), merged when it stops."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judges", type=int, default=200, help="concurrent simulated judges (default 200)")
    parser.add_argument("--tasks", type=int, default=1000, help="tasks the producer asks (default 1000)")
    parser.add_argument("--answers", type=int, default=3, help="answers each task needs, R (default 3)")
    parser.add_argument("--seconds", type=float, default=60.0, help="most seconds of load (default 60)")
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="mean seconds a judge reads a question before answering, uniform on [0, 2x] (default 0: no pause)",
    )
    parser.add_argument("--db", help="an empty PostgreSQL database's postgresql:// URL (default: a fresh SQLite file)")
    parser.add_argument("--profile", metavar="FILE", help="profile the server (cProfile, all threads) into FILE")
    args = parser.parse_args()
    if args.db is not None and not is_url(args.db):
        parser.error(f"--db {args.db}: give a postgresql:// URL (without it, a fresh SQLite file is used)")
    with tempfile.TemporaryDirectory() as folder:
        db = args.db or Path(folder) / "judges.sqlite"
        raw = write_rate(db)
        store = Store(db)
        if store.judge_count() or store.export()["tasks"]:
            parser.error(f"--db {args.db}: the database holds judges or tasks already; give an empty one")
        tokens = [store.invite(f"judge {i}")[1] for i in range(args.judges)]
        port = free_port()
        code = "from debatekit.cli.main import entry; entry()"
        if args.profile:
            code = PROFILED.format(out=str(Path(args.profile).resolve()))
        command = [sys.executable, "-c", code]
        server = subprocess.Popen([*command, "judge", "serve", "--db", str(db), "--port", str(port)])
        try:
            url = f"http://127.0.0.1:{port}"
            for _ in range(200):
                try:
                    socket.create_connection(("127.0.0.1", port)).close()
                    break
                except OSError:
                    time.sleep(0.05)
            produced = threading.Event()
            producer = threading.Thread(target=produce, args=(store, args.tasks, args.answers, produced))
            producer.start()
            generating = time.process_time()
            log, elapsed = asyncio.run(load(url, tokens, args.seconds, produced, args.think))
            producer.join()
        finally:
            server.terminate()
            server.wait(10)
        used = resource.getrusage(resource.RUSAGE_CHILDREN)  # the server is the only child
        export = store.export()
        stored = sorted((j["task"], j["judge"]) for j in export["judgements"])
        judge_ids = {token: store.judge(token).id for token in tokens}
        acknowledged = sorted((task, judge_ids[token]) for task, token in log["acknowledged"])
        given = [j["task"] for j in export["judgements"]]
        overfilled = [t for t in export["tasks"] if given.count(t["id"]) > t["needed"]]
    n = len(acknowledged)
    backend = "PostgreSQL" if args.db else "SQLite (WAL, synchronous=FULL)"
    print(
        f"{args.judges} judges reading {args.think:g} s on average, {args.tasks} tasks x R = {args.answers},"
        f" {elapsed:.1f} s on 127.0.0.1, {backend}"
    )
    print(f"judgements acknowledged: {n / elapsed:.0f} per second ({n}); refused: {len(log['refused'])}")
    print(f"raw write rate, one-row transactions: {raw:.0f} per second")
    cpu = used.ru_utime + used.ru_stime
    print(f"server CPU: {cpu:.1f} s, {1000 * cpu / max(n, 1):.1f} ms per judgement (page, render beacon, answer)")
    print(f"load generator CPU (these judges and the producer): {time.process_time() - generating:.1f} s")
    for name, key in (("next question (GET page)", "page"), ("answer (POST to 303)", "answer"), ("judge step", "step")):
        p50, p99 = (percentile(log[key], q) * 1000 for q in (0.5, 0.99))
        print(f"{name + ':':27} p50 {p50:5.0f} ms, p99 {p99:5.0f} ms")
    lost, doubled = len(set(acknowledged) - set(stored)), len(stored) - len(set(stored))
    print(
        f"in the database: {len(stored)}; lost: {lost}; doubled: {doubled};"
        f" unacknowledged extra: {len(set(stored) - set(acknowledged))}; tasks over budget: {len(overfilled)}"
    )
    if stored != acknowledged or overfilled:
        sys.exit(1)


if __name__ == "__main__":
    main()
