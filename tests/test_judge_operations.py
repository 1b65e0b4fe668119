"""Running a study: `judge tasks` (open tasks, their age and what they wait for), `judge close`
(a task, or a dead run's tasks) and `judge revoke`; a rerun asks fresh questions unless
--reuse-answers (counted), and another --answers-per-judge is one line, exit 2; the database is the
experimenter's alone (0600); wrong links are rate-limited; unknown and foreign tasks look alike."""

from __future__ import annotations

import asyncio
import contextvars
import json
import stat
import threading
import time

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("multipart")

from fastapi.testclient import TestClient

from debatekit.cli.main import main
from debatekit.judge import People, Store
from debatekit.judge.server import Failures, create_app
from debatekit.judge.store import TaskKey
from debatekit.ledger import Role
from debatekit.mistakes import UserError
from debatekit.oracle import Pending, Question, consulted, here, in_debate
from judge_helpers import form_fields
from test_judge_people import judges_answer

QUESTION = Question("Is the claim supported?", ("the passage",))


def asked(people: People, run: str = "run-o", r: int = 1, timeout: float = 20.0) -> int:
    """The verifier's answer to QUESTION (r answers) as query 0 of debate 0 of ``run``."""

    def within() -> int:
        in_debate(run, 0)
        call = lambda: people.sample_count(QUESTION, r, np.random.default_rng(0))  # noqa: E731
        return asyncio.run(asyncio.wait_for(consulted(here(Role.VERIFIER, 0), call), timeout))

    return contextvars.copy_context().run(within)


def test_the_database_is_created_for_its_owner_only(tmp_path) -> None:
    store = Store(tmp_path / "j.sqlite")
    store.invite("ann")
    files = [tmp_path / name for name in ("j.sqlite", "j.sqlite-wal", "j.sqlite-shm")]
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files), [oct(f.stat().st_mode) for f in files]


def test_revoke_stops_a_link_releases_its_question_and_keeps_its_answers(tmp_path, capsys) -> None:
    db = tmp_path / "j.sqlite"
    store = Store(db)
    (ann, ann_token), (bob, _) = store.invite("ann"), store.invite("bob")
    answered = store.task_for(TaskKey("r", 0, "verifier", 0), "q0", (), 1, 1)
    held = store.task_for(TaskKey("r", 1, "verifier", 0), "q1", (), 1, 1)
    store.submit(ann, answered.id, store.offer(ann).slot, 1)
    assert store.offer(ann).task.id == held.id  # ann holds the last open slot
    assert store.offer(bob) is None
    assert main(["judge", "revoke", "ann", "--db", str(db)]) == 0
    assert "revoked 1 judge" in capsys.readouterr().out
    assert store.judge(ann_token) is None and store.judge_count() == 1
    assert store.offer(bob).task.id == held.id  # released to the others
    assert [a.judge_name for a in store.answers(answered.id)] == ["ann"]
    client = TestClient(create_app(db))
    revoked, unknown = client.get(f"/j/{ann_token}"), client.get("/j/never-issued")
    assert revoked.status_code == unknown.status_code == 404 and revoked.text == unknown.text
    judges = client.get(f"/admin/{store.new_admin_token()}").text.split('id="judges"')[1]
    assert "ann (revoked)" in judges and "bob (revoked)" not in judges
    assert main(["judge", "revoke", "ann", "--db", str(db)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_tasks_lists_open_tasks_with_age_and_what_they_wait_for(tmp_path, capsys) -> None:
    db = tmp_path / "j.sqlite"
    store = Store(db)
    ann = store.invite("ann")[0]
    enough = store.task_for(TaskKey("r", 0, "verifier", 0), "q0", (), 1, 1)
    short = store.task_for(TaskKey("r", 1, "verifier", 0), "q1", (), 3, 1)
    store.offer(ann)
    assert main(["judge", "tasks", "--db", str(db), "--json"]) == 0
    rows = {row["id"]: row for row in json.loads(capsys.readouterr().out)["tasks"]}
    assert list(rows) == [enough.id, short.id]  # oldest first, as judges are shown them
    assert rows[enough.id]["held"] == 1 and rows[enough.id]["waits_for"] == "1 more answers, 1 being answered now"
    assert rows[short.id]["possible"] == 1 and rows[short.id]["waits_for"].startswith("more judges: 3 answers")
    assert all(0 <= row["age"] < 60 for row in rows.values())
    assert main(["judge", "tasks", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "more judges" in out and "0/3" in out


def test_close_a_task_or_a_dead_runs_tasks(tmp_path, capsys) -> None:
    db = tmp_path / "j.sqlite"
    store = Store(db)
    ann = store.invite("ann")[0]
    tasks = [store.task_for(TaskKey(run, i, "verifier", 0), f"q{i}", (), 1, 1) for run, i in
             (("dead", 0), ("dead.2", 1), ("live", 2), ("deadbeef", 3))]  # fmt: skip
    assert main(["judge", "close", str(tasks[2].id), "--db", str(db)]) == 0
    assert main(["judge", "close", "--run", "dead", "--db", str(db)]) == 0
    assert "closed 2 open tasks" in capsys.readouterr().out  # the run and its rerun, not another run
    assert [t.id for t in tasks if store.task(t.id).closed is None] == [tasks[3].id]
    assert store.offer(ann).task.id == tasks[3].id
    for argv in (["close"], ["close", "999"], ["close", "--run", "x"], ["close", "1", "--run", "dead"]):
        assert main(["judge", *argv, "--db", str(db)]) == 2
        assert capsys.readouterr().err.count("\n") == 1


def test_a_debate_waiting_on_a_closed_task_is_pending(tmp_path) -> None:
    people = People(tmp_path / "j.sqlite", poll=0.01)
    people.store.invite("ann")
    closer = Store(people.store.path)

    def close_soon() -> None:
        while not (open_ := closer.open_tasks()):
            time.sleep(0.01)
        closer.close_tasks(open_[0]["id"])

    threading.Thread(target=close_soon, daemon=True).start()
    with pytest.raises(Pending, match="closed by the experimenter"):
        asked(people, r=2)


def test_a_rerun_asks_fresh_questions_unless_it_reuses_answers(tmp_path) -> None:
    db = tmp_path / "j.sqlite"
    first = People(db, poll=0.01)
    helper = judges_answer(first.store, [1])
    assert asked(first) == 1
    helper.join(5)
    reused = People(db, poll=5.0)  # --reuse-answers (and --resume): found at once
    assert asked(reused) == 1 and reused.reused == 1
    fresh = People(db, poll=0.01, fresh=True)
    helper = judges_answer(fresh.store, [0])
    assert asked(fresh) == 0 and fresh.reused == 0
    helper.join(5)
    assert [t["run"] for t in fresh.store.export()["tasks"]] == ["run-o", "run-o.2"]
    again = People(db, poll=5.0)  # reuses the latest rerun's
    assert asked(again) == 0 and again.reused == 1
    with pytest.raises(UserError, match="--answers-per-judge 2: this run's questions were asked with"):
        asked(People(db, answers_per_judge=2, poll=0.01))


def test_rerun_from_the_command_line(tmp_path, capsys) -> None:
    db = tmp_path / "j.sqlite"
    store = Store(db)
    store.invite("ann")
    argv = ["run", "cross-exam", "--problem", "caffeine", "--bob", "point-random", "--trials", "1", "--seed", "1",
            "--verifier-oracle", "people", "--judge-db", str(db), "--no-log", "--json"]  # fmt: skip
    helper = judges_answer(store, [0])
    assert main(argv) == 0
    helper.join(10)
    capsys.readouterr()
    assert main([*argv, "--reuse-answers"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["accept_rate"] == 0 and "people: 1 answers from an earlier run" in err
    assert main([*argv, "--reuse-answers", "--answers-per-judge", "2"]) == 2
    (error,) = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("people: ")]
    assert error.startswith("debatekit: error: --answers-per-judge 2: this run's questions were asked with")
    assert len(store.export()["tasks"]) == 1
    assert main(["run", "cross-exam", "--problem", "caffeine", "--reuse-answers", "--trials", "1", "--no-log"]) == 2


def test_wrong_links_are_rate_limited_by_address(tmp_path) -> None:
    store = Store(tmp_path / "j.sqlite")
    token = store.invite("ann")[1]
    admin = store.new_admin_token()
    client = TestClient(create_app(store.path, failures=Failures(limit=3, window=0.5)))
    assert client.get(f"/j/{token}").status_code == 200
    for path in ("/j/guess1", "/admin/guess2", "/j/guess3"):
        assert client.get(path).status_code in (403, 404)
    for path in (f"/j/{token}", f"/admin/{admin}", "/j/guess4"):
        assert client.get(path).status_code == 429  # the address is refused, whatever it sends
    time.sleep(0.6)
    assert client.get(f"/j/{token}").status_code == 200 and client.get(f"/admin/{admin}").status_code == 200


def test_unknown_and_foreign_tasks_get_the_same_answer(tmp_path) -> None:
    store = Store(tmp_path / "j.sqlite")
    (_, ann_token), (bob, _) = store.invite("ann"), store.invite("bob")
    mine = store.task_for(TaskKey("r", 0, "verifier", 0), "q0", (), 1, 1)
    theirs = store.task_for(TaskKey("r", 1, "verifier", 0), "q1", (), 1, 1)
    store.offer(bob)  # bob holds one task: ann is shown the other
    client = TestClient(create_app(store.path))
    fields = form_fields(client.get(f"/j/{ann_token}").text)
    assert int(fields["task"]) in (mine.id, theirs.id)
    other = theirs.id if int(fields["task"]) == mine.id else mine.id
    url = f"/j/{ann_token}/answer"
    replies = [client.post(url, data={**fields, "task": str(task), "answer": "yes"}) for task in (other, 999)]
    assert replies[0].status_code == replies[1].status_code == 403 and replies[0].text == replies[1].text


def test_a_run_whose_question_is_closed_stops_pending(tmp_path, capsys) -> None:
    db = tmp_path / "j.sqlite"
    store = Store(db)
    store.invite("ann")

    def close_soon() -> None:
        while not (open_ := store.open_tasks()):
            time.sleep(0.02)
        store.close_tasks(run=open_[0]["run"])

    threading.Thread(target=close_soon, daemon=True).start()
    argv = ["run", "cross-exam", "--problem", "caffeine", "--bob", "point-random", "--trials", "1", "--seed", "1",
            "--verifier-oracle", "people", "--judge-db", str(db), "--no-log"]  # fmt: skip
    assert main(argv) == 75
    (line,) = [x for x in capsys.readouterr().err.splitlines() if not x.startswith("people: ")]
    assert line.startswith("debatekit: question ") and "(`judge close`) with 0 of 1 answers" in line
