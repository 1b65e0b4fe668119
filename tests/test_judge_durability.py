"""Durability with real processes: kill -9 the judges' server just after answers were acknowledged
while tasks are pending, and (separately) the debate process while it waits for a person; after a
restart every acknowledged answer is there (on SQLite and on PostgreSQL), no task was created twice, and
the debate completes."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
pytest.importorskip("multipart")
pytest.importorskip("uvicorn")

import httpx

from debatekit.engine.record import read_records
from debatekit.judge.store import Store, TaskKey
from judge_helpers import form_fields, free_port, serve_process

KEYS = [TaskKey("run-k", d, "verifier", 0) for d in range(4)]


def ask_all(store: Store) -> list[int]:
    """The producer: one task of R = 2 per debate, as a resumed run asks them again."""
    return [store.task_for(key, f"Is claim {key.debate} supported?", (f"fact {key.debate}",), 2, 1).id for key in KEYS]


def answer(url: str, token: str, yes: bool) -> tuple[int, int] | None:
    """One judge's next answer over HTTP; (task, slot) once the server acknowledged it (303)."""
    with httpx.Client(base_url=url, timeout=10) as client:
        fields = form_fields(client.get(f"/j/{token}").text)
        if not fields:
            return None
        done = client.post(f"/j/{token}/answer", data={**fields, "answer": "yes" if yes else "no"})
        assert done.status_code == 303, done.text
    return int(fields["task"]), int(fields["slot"])


def kill9(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(10)


def test_acknowledged_answers_survive_kill_9_of_the_server(tmp_path, store_location) -> None:
    db = store_location  # a SQLite file or a PostgreSQL database
    store = Store(db)
    tasks = ask_all(store)
    tokens = {name: store.invite(name)[1] for name in ("ann", "bob", "cy")}
    port = free_port()
    server = serve_process(db, port, tmp_path / "server.log")
    url = f"http://127.0.0.1:{port}"
    acknowledged = {}
    try:
        for name in ("ann", "bob", "ann", "cy"):  # two tasks get their two answers each
            acknowledged[(name, answer(url, tokens[name], name != "bob"))] = name != "bob"
        assert form_fields(httpx.get(f"{url}/j/{tokens['ann']}").text)  # ann now holds a slot of a pending task
        assert server.poll() is None
    finally:
        kill9(server)  # just after the last acknowledgement, with tasks pending
    given = {(a.judge_name, (a.task, a.slot)): bool(a.answer) for t in tasks for a in store.answers(t)}
    assert given == acknowledged and len(given) == 4
    assert [store.task(t).closed is not None for t in tasks] == [True, True, False, False]
    assert ask_all(store) == tasks and len(store.export()["tasks"]) == len(KEYS)  # asked again: not duplicated

    port = free_port()
    server = serve_process(db, port, tmp_path / "server.log")
    url = f"http://127.0.0.1:{port}"
    try:
        while any(store.task(t).closed is None for t in tasks):
            assert any([answer(url, tokens[name], True) for name in tokens]), "a pending task no judge is offered"
    finally:
        kill9(server)
    for t in tasks:
        answers = store.answers(t)
        assert len(answers) == 2 and len({a.judge for a in answers}) == 2
    kept = {(a.judge_name, (a.task, a.slot)): bool(a.answer) for t in tasks for a in store.answers(t)}
    assert acknowledged.items() <= kept.items()


WAITING_DEBATE = """
import asyncio, sys
from debatekit.judge import People
from debatekit.ledger import Role
from debatekit.oracle import Question, consulted, here, in_debate

people = People(sys.argv[1], poll=0.02)
in_debate("run-d", 0)
query = Question("Is the claim supported?", ("fact 1",))
print(asyncio.run(consulted(here(Role.VERIFIER, 0), lambda: people.sample_count(query, 2, None))), flush=True)
"""


def test_a_debate_killed_while_waiting_resumes_at_its_task(tmp_path) -> None:
    db = tmp_path / "judges.sqlite"
    store = Store(db)
    ann, bob = store.invite("ann")[0], store.invite("bob")[0]
    command = [sys.executable, "-c", WAITING_DEBATE, str(db)]
    debate = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while (offer := store.offer(ann)) is None:
            assert time.monotonic() < deadline and debate.poll() is None, debate.stderr and debate.stderr.read()
            time.sleep(0.02)
        store.submit(ann, offer.task.id, offer.slot, 1)
    finally:
        kill9(debate)  # just after an answer, while the debate waits for the second one
    resumed = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    offer = None
    while offer is None and resumed.poll() is None:
        offer = store.offer(bob)
        time.sleep(0.02)
    assert offer is not None
    store.submit(bob, offer.task.id, offer.slot, 0)
    out, err = resumed.communicate(timeout=20)
    assert resumed.returncode == 0, err
    assert out.strip() == "1"  # ann's yes from before the kill, bob's no after
    (task,) = store.export()["tasks"]
    assert task["closed"] is not None
    assert [(j["judge_name"], j["answer"]) for j in store.export()["judgements"]] == [("ann", 1), ("bob", 0)]


def test_a_run_killed_while_debates_wait_on_people_resumes_and_asks_no_task_twice(tmp_path) -> None:
    """``debatekit run --verifier-oracle people`` with several debates waiting at once: kill -9 the
    run just after some answers, rerun it with ``--resume``: every debate completes, every answer
    given before the kill is the one its debate's record holds, and no question became two tasks."""
    db, record = tmp_path / "judges.sqlite", tmp_path / "run.jsonl"
    store = Store(db)
    judges = [store.invite(f"judge{i}")[0] for i in range(8)]
    argv = ["run", "cross-exam", "--problem", "caffeine", "--alice", "lie-step", "--bob", "honest", "--trials", "8",
            "--seed", "3", "--concurrency", "8", "--verifier-oracle", "people", "--judge-db", str(db),
            "--record", str(record), "--no-log", "--json"]  # fmt: skip
    code = "import sys; from debatekit.cli.main import main; sys.exit(main(sys.argv[1:]))"
    given: dict[int, int] = {}  # task id -> the answer given

    def answer(count: int, run: subprocess.Popen) -> None:
        deadline = time.monotonic() + 30
        while len(given) < count:
            assert time.monotonic() < deadline and run.poll() is None, run.stderr and run.stderr.read()
            for judge in judges:
                offer = store.offer(judge)
                if offer is not None and offer.task.id not in given:
                    given[offer.task.id] = offer.task.id % 2
                    store.submit(judge, offer.task.id, offer.slot, given[offer.task.id])
                    break
            time.sleep(0.02)

    first = subprocess.Popen([sys.executable, "-c", code, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, cwd=tmp_path)  # fmt: skip
    try:
        answer(2, first)
        deadline = time.monotonic() + 20  # the other asking debates wait on their tasks when it dies
        while len(store.export()["tasks"]) < 4 and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        kill9(first)
    asked_before = len(store.export()["tasks"])
    assert asked_before == 4 > len(given)  # seed 3: four debates ask (as with the built-in oracle)
    again = subprocess.Popen([sys.executable, "-c", code, *argv, "--resume"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, cwd=tmp_path)  # fmt: skip
    answer(asked_before, again)
    _, err = again.communicate(timeout=60)
    assert again.returncode == 0, err
    records = list(read_records(record))
    assert sorted(r["debate"] for r in records) == list(range(8))
    events = [e for r in records for e in r["events"] if e.get("query") == "verifier"]
    tasks = store.export()["tasks"]
    assert len(tasks) == len(events) == asked_before  # each question one task, none asked twice
    assert sorted(e["answer"] for e in events) == sorted(given.values())
    assert all(len(e["judges"]) == 1 and e["judges"][0]["answer"] == e["answer"] for e in events)
