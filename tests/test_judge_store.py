"""The judges' store (debatekit.judge.store): tasks keyed by the query they answer are created
once, R answers come from a panel of distinct judges, a double submit counts once, a refused
submission changes nothing, tokens are kept only as hashes, and the file is in WAL mode. The contract
runs on both backends: a SQLite file and a real PostgreSQL server (postgres_helpers)."""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from concurrent.futures import Future

import pytest

from debatekit.judge.database import Committer, postgres_sql, redacted
from debatekit.judge.store import CLAIM_SECONDS, Outcome, Refused, Store, TaskKey

KEY = TaskKey("run-a", 0, "verifier", 0)


def snapshot(store: Store) -> tuple:
    """Everything a refused submission must leave as it was."""
    claims = store._db().execute("SELECT task, judge, slot, expires FROM claims ORDER BY task, judge").fetchall()
    return store.export(), [tuple(row) for row in claims]


@pytest.fixture
def store(store_location) -> Store:
    return Store(store_location)


@pytest.fixture
def sqlite_store(tmp_path) -> Store:
    return Store(tmp_path / "judges.sqlite")


def test_the_file_is_in_wal_mode_with_full_sync(sqlite_store) -> None:
    db = sqlite_store._db()
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] > 0


def test_tokens_are_stored_as_hashes_only(sqlite_store, tmp_path) -> None:
    store = sqlite_store
    judge, token = store.invite("ann")
    admin = store.new_admin_token()
    assert store.judge(token) == judge and store.judge(token + "x") is None
    assert store.is_admin(admin) and not store.is_admin(token)
    store.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("judges.sqlite"))
    assert token.encode() not in stored and admin.encode() not in stored
    assert hashlib.sha256(token.encode()).hexdigest().encode() in stored
    assert store.new_admin_token() != admin and not store.is_admin(admin)  # a new experimenter link revokes the old


def test_a_task_is_created_once_per_key(store) -> None:
    first = store.task_for(KEY, "Is step 3 right?", ("x1 = 1",), 3, 1)
    again = store.task_for(KEY, "Is step 3 right?", ("x1 = 1",), 3, 1)
    other = store.task_for(TaskKey("run-a", 0, "verifier", 3), "Is step 3 right?", ("x1 = 1",), 3, 1)
    assert again == first and other.id != first.id
    assert len(store.export()["tasks"]) == 2
    with pytest.raises(ValueError, match="different question"):
        store.task_for(KEY, "Is step 4 right?", ("x1 = 1",), 3, 1)
    with pytest.raises(ValueError, match="different question"):
        store.task_for(KEY, "Is step 3 right?", ("x1 = 1",), 5, 1)
    with pytest.raises(ValueError, match="at least one answer"):
        store.task_for(TaskKey("run-a", 1, "verifier", 0), "q", (), 0, 1)


def test_r_answers_come_from_distinct_judges(store) -> None:
    task = store.task_for(KEY, "q", (), 3, 1)
    judges = [store.invite(name)[0] for name in ("a", "b", "c", "d")]
    offers = [store.offer(j) for j in judges]
    assert [o is not None for o in offers] == [True, True, True, False]  # three slots held, none left for d
    assert {o.slot for o in offers[:3]} == {0} and {o.remaining for o in offers[:3]} == {3}
    assert store.offer(judges[0]) == offers[0]  # the same task again on reload
    for judge, answer in zip(judges[:2], (1, 0), strict=True):
        assert store.submit(judge, task.id, 0, answer) is Outcome.RECORDED
        assert store.offer(judge) is None  # one answer each: nothing more for this judge
    assert store.offer(judges[2]).remaining == 1
    store.submit(judges[2], task.id, 0, 1)
    answers = store.answers(task.id)
    assert [a.answer for a in answers] == [1, 0, 1]
    assert len({a.judge for a in answers}) == 3
    assert store.task(task.id).closed is not None
    assert store.offer(judges[3]) is None


def test_answers_per_judge_lets_one_judge_fill_several_slots(store) -> None:
    task = store.task_for(KEY, "q", (), 4, 2)
    a, b = store.invite("a")[0], store.invite("b")[0]
    for judge in (a, a, b, b):
        offer = store.offer(judge)
        store.submit(judge, task.id, offer.slot, 1)
    assert sorted((x.judge, x.slot) for x in store.answers(task.id)) == [(a.id, 0), (a.id, 1), (b.id, 0), (b.id, 1)]
    assert store.task(task.id).closed is not None


def test_a_double_submit_counts_once(store) -> None:
    task = store.task_for(KEY, "q", (), 2, 1)
    judge = store.invite("a")[0]
    store.offer(judge)
    assert store.submit(judge, task.id, 0, 1) is Outcome.RECORDED
    assert store.submit(judge, task.id, 0, 1) is Outcome.ALREADY
    with pytest.raises(Refused) as refused:
        store.submit(judge, task.id, 0, 0)
    assert refused.value.kind == "changed"
    assert [x.answer for x in store.answers(task.id)] == [1]


@pytest.mark.parametrize(
    ("case", "kind"),
    [("unknown task", "unknown"), ("never shown", "not yours"), ("not 0/1", "answer"), ("closed", "closed")],
)
def test_a_refused_submission_changes_nothing(store, case, kind) -> None:
    task = store.task_for(KEY, "q", (), 1, 1)
    a, b = store.invite("a")[0], store.invite("b")[0]
    store.offer(a)
    if case == "closed":
        store.submit(a, task.id, 0, 1)
    before = snapshot(store)
    judge, task_id, answer = {
        "unknown task": (a, task.id + 7, 1),
        "never shown": (b, task.id, 1),
        "not 0/1": (a, task.id, 2),
        "closed": (b, task.id, 0),
    }[case]
    with pytest.raises(Refused) as refused:
        store.submit(judge, task_id, 0, answer)
    assert refused.value.kind == kind
    assert snapshot(store) == before


def test_a_slot_not_answered_in_time_goes_to_another_judge(store) -> None:
    task = store.task_for(KEY, "q", (), 1, 1)
    a, b = store.invite("a")[0], store.invite("b")[0]
    assert store.offer(a, now=1000.0) is not None
    assert store.offer(b, now=1000.0 + CLAIM_SECONDS - 1) is None
    assert store.offer(b, now=1000.0 + CLAIM_SECONDS + 1).task.id == task.id


def test_concurrent_judges_never_overfill_a_task(store_location) -> None:
    """Twelve judges in threads, each with its own connection, answer 8 tasks of R = 3: every task
    gets exactly 3 answers from 3 distinct judges, and every recorded answer was acknowledged."""
    store = Store(store_location)
    tasks = [store.task_for(TaskKey("run", d, "verifier", 0), f"q{d}", (), 3, 1) for d in range(8)]
    judges = [store.invite(f"j{i}")[0] for i in range(12)]
    acknowledged: list[tuple[int, int]] = []
    lock = threading.Lock()

    def answer(judge) -> None:
        own = Store(store.location)
        while (offer := own.offer(judge)) is not None:
            try:
                own.submit(judge, offer.task.id, offer.slot, offer.task.id % 2)
            except Refused as refused:
                assert refused.kind == "closed"
                continue
            with lock:
                acknowledged.append((offer.task.id, judge.id))

    threads = [threading.Thread(target=answer, args=(j,)) for j in judges]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(acknowledged) == sorted((a.task, a.judge) for t in tasks for a in store.answers(t.id))
    for task in tasks:
        assert len({a.judge for a in store.answers(task.id)}) == 3 == len(store.answers(task.id))


def test_status_and_export(store) -> None:
    one = store.task_for(TaskKey("run", 0, "verifier", 0), "q0", ("c",), 3, 1)
    store.task_for(TaskKey("run", 1, "verifier", 0), "q1", (), 1, 1)
    judge, token = store.invite("ann")
    store.offer(judge)
    store.submit(judge, one.id, 0, 1)
    status = store.status()
    budgets = [(d["debate"], d["given"], d["planned"], d["open"]) for d in status["debates"]]
    assert budgets == [(0, 1, 3, 1), (1, 0, 1, 1)]
    assert [d["debate"] for d in status["waiting"]] == [0, 1]
    assert status["judges"][0]["name"] == "ann" and status["judges"][0]["answers"] == 1
    assert status["judges"][0]["last_hour"] == 1 and status["judgements"] == 1
    export = store.export()
    assert [(j["task"], j["judge_name"], j["answer"]) for j in export["judgements"]] == [(one.id, "ann", 1)]
    assert export["tasks"][0]["context"] == ["c"] and export["tasks"][0]["needed"] == 3
    assert token not in repr(export)


def test_a_write_refused_in_a_group_commit_rolls_back_alone(store_location) -> None:
    """Three writes committed together: the middle one raises after writing, and only its row is gone."""
    store = Store(store_location)
    db = store._connect()

    def add(name: str, refuse: bool = False):
        def work(db):
            db.execute("INSERT INTO settings (key, value) VALUES (?, 'x')", (name,))
            if refuse:
                raise Refused("answer", "refused after writing")
            return name

        return work, Future()

    batch = [add("first"), add("refused", refuse=True), add("third")]
    Committer._commit(db, batch)
    db.close()
    assert [done.result() for _, done in (batch[0], batch[2])] == ["first", "third"]
    assert isinstance(batch[1][1].exception(), Refused)
    keys = {row[0] for row in store._db().execute("SELECT key FROM settings")}
    assert {"first", "third"} <= keys and "refused" not in keys


def test_writes_queued_together_share_one_commit(store_location, monkeypatch) -> None:
    """Twenty judges invited from threads while a write holds the writer: all twenty are committed, with
    distinct ids, in one more transaction, not twenty."""
    store = Store(store_location)
    commits = []
    kind = type(store._connect())
    original = kind.commit
    monkeypatch.setattr(kind, "commit", lambda db: (commits.append(1), original(db)))
    slow = threading.Thread(target=store._write, args=(lambda db: time.sleep(0.5),))
    slow.start()
    time.sleep(0.1)
    invited: list = []
    threads = [threading.Thread(target=lambda i=i: invited.append(store.invite(f"j{i}")[0])) for i in range(20)]
    for t in threads:
        t.start()
    for t in [*threads, slow]:
        t.join(30)
    assert len({j.id for j in invited}) == 20 == store.judge_count()
    assert len(commits) == 2


def test_an_event_loop_awaits_writes_without_a_thread_of_its_own(store) -> None:
    """``holding``, ``submitting`` and ``skipping`` hand back futures an event loop awaits: their result
    once committed, a refusal raised by the future and changing nothing."""
    task = store.task_for(KEY, "q", (), 2, 1)
    later = store.task_for(TaskKey("run-a", 1, "verifier", 0), "later", (), 1, 1)
    a, b = store.invite("a")[0], store.invite("b")[0]

    async def judging() -> list:
        waits = [store.holding(a, task.id, 0), store.submitting(a, task.id, 0, 1, 0.9, "why")]
        outcomes = [await asyncio.wrap_future(done) for done in waits]
        outcomes.append(await asyncio.wrap_future(store.submitting(a, task.id, 0, 1)))
        before = snapshot(store)
        with pytest.raises(Refused) as refused:
            await asyncio.wrap_future(store.submitting(a, task.id, 0, 0))
        assert refused.value.kind == "changed" and snapshot(store) == before
        outcomes.append(await asyncio.wrap_future(store.skipping(b, task.id)))
        return outcomes

    assert asyncio.run(judging()) == [True, Outcome.RECORDED, Outcome.ALREADY, None]
    assert [(x.judge, x.answer, x.confidence, x.explanation) for x in store.answers(task.id)] == [(a.id, 1, 0.9, "why")]
    assert store.peek(b).task.id == later.id  # b skipped the first


def test_a_page_shown_stops_counting_once_its_hold_is_committed(store) -> None:
    """A judge's page counts against its task's room until the render beacon's hold is committed, then its
    claim does, never both: a hold's future is done only after the page stopped counting."""
    task = store.task_for(KEY, "q", (), 2, 1)
    store.task_for(TaskKey("run-a", 1, "verifier", 0), "later", (), 2, 1)
    a, b, c = (store.invite(name)[0] for name in "abc")
    assert store.peek(a).task.id == task.id
    assert store.holding(a, task.id, 0).result()
    assert store.peek(b).task.id == task.id  # a's claim counts once: room for b
    assert store.peek(c).task.id != task.id  # a's claim and b's page fill it


def test_a_postgresql_url_is_shown_without_its_password() -> None:
    assert redacted("postgresql://ann:s3cret@db.example:5432/judges") == "postgresql://ann:***@db.example:5432/judges"
    assert redacted("postgresql://ann@db.example/judges") == "postgresql://ann@db.example/judges"
    assert postgres_sql("SELECT 1 FROM t WHERE a = ? AND b = :judge AND c LIKE '5%'") == (
        "SELECT 1 FROM t WHERE a = %s AND b = %(judge)s AND c LIKE '5%%'"
    )
