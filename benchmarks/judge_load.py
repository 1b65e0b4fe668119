"""Load on the judges' server: many simulated judges answering the tasks a People-like producer asks.

On 127.0.0.1 only, bounded in count (``--tasks`` x ``--answers`` judgements) and in time (``--seconds``):
``debatekit judge serve`` runs as its own process on a fresh database; a producer thread creates the
tasks through the store, keyed as the People oracle keys them (one per debate, R answers each from
distinct judges); ``--judges`` simulated judges, each an asyncio task with its own httpx client, load their
page, post its render beacon, answer the question shown and load the next. Prints judgements per second, the p50 and p99
latency of an answer (POST to acknowledgement) and of a whole step (page, then answer), and checks
that none was lost: the answers in the database are exactly the ones acknowledged (exit 1 otherwise).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from debatekit.judge.store import Store, TaskKey

TLS = ssl.create_default_context()
"""Shared by the judges' clients (plain HTTP never uses it; building one per client costs ~20 ms)."""
FIELD = re.compile(r'name="(task|slot|rendered|csrf)" value="([^"]*)"')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def produce(store: Store, tasks: int, answers: int, done: threading.Event) -> None:
    """The producer: each debate's verifier asks one question needing ``answers`` answers."""
    own = Store(store.path)
    for debate in range(tasks):
        own.task_for(TaskKey("load", debate, "verifier", 0), f"Is claim {debate} supported?", ("a fact",), answers, 1)
    done.set()


async def judge(url: str, token: str, deadline: float, produced: threading.Event, log: dict[str, list]) -> None:
    """One judge, with a connection of their own as a browser has: page, answer, page, ... until
    nothing is left for them or time is up."""
    async with httpx.AsyncClient(base_url=url, timeout=30, verify=TLS) as client:
        await judging(client, token, deadline, produced, log)


async def judging(
    client: httpx.AsyncClient, token: str, deadline: float, produced: threading.Event, log: dict[str, list]
) -> None:
    while time.monotonic() < deadline:
        started = time.monotonic()
        page = await client.get(f"/j/{token}")
        fields = dict(FIELD.findall(page.text))
        if not fields:
            if produced.is_set():
                return
            await asyncio.sleep(0.05)
            continue
        shown = await client.post(f"/j/{token}/shown", data=fields)  # the page's render beacon, as a browser's
        if shown.status_code == 409:  # other judges took it meanwhile: the page moves on
            log["refused"].append("taken")
            continue
        posted = time.monotonic()
        done = await client.post(f"/j/{token}/answer", data={**fields, "answer": "yes"})
        now = time.monotonic()
        moved_on = done.headers.get("location", "").partition("?note=")[2]  # a late answer: the next question
        if done.status_code == 303 and not moved_on:
            log["acknowledged"].append((int(fields["task"]), token))
            log["answer"].append(now - posted)
            log["step"].append(now - started)
        else:
            log["refused"].append(moved_on or done.status_code)


async def load(url: str, tokens: list[str], seconds: float, produced: threading.Event) -> tuple[dict, float]:
    log: dict[str, list] = {"acknowledged": [], "answer": [], "step": [], "refused": []}
    started = time.monotonic()
    await asyncio.gather(*(judge(url, token, started + seconds, produced, log) for token in tokens))
    return log, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judges", type=int, default=200, help="concurrent simulated judges (default 200)")
    parser.add_argument("--tasks", type=int, default=1000, help="tasks the producer asks (default 1000)")
    parser.add_argument("--answers", type=int, default=3, help="answers each task needs, R (default 3)")
    parser.add_argument("--seconds", type=float, default=60.0, help="most seconds of load (default 60)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "judges.sqlite"
        store = Store(db)
        tokens = [store.invite(f"judge {i}")[1] for i in range(args.judges)]
        port = free_port()
        command = [sys.executable, "-c", "from debatekit.cli.main import entry; entry()"]
        server = subprocess.Popen([*command, "judge", "serve", "--db", str(db), "--port", str(port)])
        try:
            url = f"http://127.0.0.1:{port}"
            for _ in range(200):
                try:
                    httpx.get(f"{url}/j/-")
                    break
                except httpx.TransportError:
                    time.sleep(0.05)
            produced = threading.Event()
            producer = threading.Thread(target=produce, args=(store, args.tasks, args.answers, produced))
            producer.start()
            log, elapsed = asyncio.run(load(url, tokens, args.seconds, produced))
            producer.join()
        finally:
            server.terminate()
            server.wait(10)
        export = store.export()
        stored = sorted((j["task"], j["judge"]) for j in export["judgements"])
        judge_ids = {token: store.judge(token).id for token in tokens}
        acknowledged = sorted((task, judge_ids[token]) for task, token in log["acknowledged"])
        given = [j["task"] for j in export["judgements"]]
        overfilled = [t for t in export["tasks"] if given.count(t["id"]) > t["needed"]]
    n = len(acknowledged)
    print(f"{args.judges} judges, {args.tasks} tasks x R = {args.answers}, {elapsed:.1f} s on 127.0.0.1")
    print(f"judgements acknowledged: {n} ({n / elapsed:.0f} per second); refused: {len(log['refused'])}")
    print(
        f"answer latency (POST to 303): p50 {percentile(log['answer'], 0.5) * 1000:.0f} ms, "
        f"p99 {percentile(log['answer'], 0.99) * 1000:.0f} ms"
    )
    print(
        f"judge step (page + answer):   p50 {percentile(log['step'], 0.5) * 1000:.0f} ms, "
        f"p99 {percentile(log['step'], 0.99) * 1000:.0f} ms"
    )
    lost = len(set(acknowledged) - set(stored))
    print(
        f"in the database: {len(stored)}; lost: {lost}; unacknowledged extra: {len(set(stored) - set(acknowledged))};"
        f" tasks over budget: {len(overfilled)}"
    )
    if stored != acknowledged or overfilled:
        sys.exit(1)


if __name__ == "__main__":
    main()
