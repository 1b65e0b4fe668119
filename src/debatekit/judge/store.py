"""The judges' store: what is stored and when, in SQL on SQLite or on a PostgreSQL server (the
connections, the schema and the writer thread are :mod:`debatekit.judge.database`'s).

Doubly-efficient debate promises that a person never reads the whole argument: the verifier asks
the human-judgement oracle about one local step. Each such query is a *task*, keyed by the query
it answers (run, debate, role, number; :class:`debatekit.oracle.Asking`), holding the question,
its relevant coordinates I(t) as context lines and the R answers it needs (stochastic debate asks
one question R times: a panel of distinct judges, at most ``per_judge`` answers each).

Durability: SQLite in WAL mode with ``synchronous=FULL`` (or PostgreSQL, given a ``postgresql://``
URL: the same SQL, the dialects' few differences in :mod:`~debatekit.judge.database`); writes
run one at a time, those waiting committed together (its ``Committer``), and an answer is
acknowledged to a judge only once committed, so it survives kill -9 (and power loss).
Idempotence: a task is created or found by its key, so a debate resumed after a crash finds its
task and the answers already given; an answer is unique on (task, judge, slot), so a double submit
counts once. A slot is held for a judge once their page is rendered
(:meth:`Store.hold`), never by a GET (:meth:`Store.peek`), and a real task closes at R answers;
gold questions (known answers, under :data:`GOLD_RUN`) are answered once by each judge and never
close. Tokens are stored as SHA-256 hashes only. One connection per thread (and per process) for
reading, opened on first use, and one writer thread per process and database; the judges' writes
(:meth:`Store.holding`, :meth:`Store.submitting`, :meth:`Store.skipping`) also come as futures, which the
server's event loop awaits.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from statistics import median
from typing import Any, TypeVar

from debatekit.judge.database import Committer, Database, Record, connect, create_tables, is_url

T = TypeVar("T")

CLAIM_SECONDS = 600.0
"""How long a task shown to a judge keeps its slot for them before another judge may take it."""

GOLD_RUN = "gold"
"""The run key of gold questions: never a run's fingerprint, so no debate's oracle ever reads them."""

GOLD_EVERY = 3
"""A judge is shown a gold question after every this many real ones (and whenever no real one waits)."""

MAX_EXPLANATION = 2000
"""Longest explanation kept with an answer, in characters."""

PEEK_SECONDS = 5.0
"""How long a question a page showed counts against its room when the next page picks one (:meth:`Store.peek`)."""


def token_hash(token: str) -> str:
    """SHA-256 of a token: the only form in which a token is stored."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class TaskKey:
    """The query a task answers: run, debate index, asking role and query number (an
    :class:`~debatekit.oracle.Asking` as plain values)."""

    run: str
    debate: int
    role: str
    number: int


@dataclass(frozen=True)
class Task:
    """One verifier query put to people: its text and context lines I(t), the answers it needs
    (R) and the most one judge may give (``per_judge``); ``closed`` once it has R answers."""

    id: int
    key: TaskKey
    question: str
    context: tuple[str, ...]
    needed: int
    per_judge: int
    created: float
    closed: float | None
    gold: int | None = None
    """A gold question's known answer (0 or 1); None for a debate's."""
    feedback: str | None = None
    """What a judge is shown after answering a gold question."""


@dataclass(frozen=True)
class Judge:
    """A judge: at most ``quota`` answers, after which they are shown their completion ``code``
    (for crowd platforms); ``consented`` when they accepted the study's consent page."""

    id: int
    name: str
    created: float
    quota: int | None = None
    code: str | None = None
    consented: float | None = None


@dataclass(frozen=True)
class Answer:
    """One judgement: judge, slot (the judge's k-th answer to the task), 0/1, when the task was
    first rendered for the judge and when the answer was committed; the judge's ``confidence``
    (their probability that the claim is true; None when they answered yes or no alone) and
    ``explanation``."""

    task: int
    judge: int
    judge_name: str
    slot: int
    answer: int
    shown: float
    submitted: float
    confidence: float | None = None
    explanation: str | None = None


@dataclass(frozen=True)
class Offer:
    """A task shown to a judge: the slot their answer fills and how many answers it still needs."""

    task: Task
    slot: int
    remaining: int


class Outcome(Enum):
    """What became of a submitted answer."""

    RECORDED = "recorded"
    ALREADY = "already"
    """The same answer was recorded before (a double submit counts once)."""


class Refused(Exception):
    """A submission the store turns down, changing nothing; ``kind`` names why."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class Store:
    """The judges, tasks and answers in one SQLite file (created on first open) or, given a
    ``postgresql://`` URL, in a PostgreSQL database (its tables created on first open)."""

    def __init__(self, location: str | os.PathLike[str], busy_seconds: float = 30.0):
        self.location = str(location) if is_url(location) else Path(location)
        """Where the store is: a SQLite file's path or a PostgreSQL URL; ``Store(store.location)`` opens it again."""
        self._busy = busy_seconds
        self._writer = str(self.location.resolve() if isinstance(self.location, Path) else self.location)
        """The :class:`Committer` this store writes through: one per process and database (a file by its real path)."""
        self._local = threading.local()
        self._peeks: dict[int, dict[int, float]] = {}
        self._peeks_lock = threading.Lock()
        if isinstance(self.location, Path):
            with contextlib.suppress(FileExistsError):  # a new database is the experimenter's alone (0600)
                os.close(os.open(self.location, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))

        self._write(create_tables)

    @property
    def path(self) -> Path:
        """The SQLite file (a PostgreSQL store has none)."""
        if not isinstance(self.location, Path):
            raise AttributeError(f"the store at {self.location} is a PostgreSQL database, not a file")
        return self.location

    # -- connections ---------------------------------------------------------------------------

    def _connect(self) -> Database:
        return connect(self.location, self._busy)

    def _db(self) -> Database:
        """This thread's (and process's) connection, for reading."""
        db = getattr(self._local, "db", None)
        if db is None or self._local.pid != os.getpid():
            db = self._connect()
            self._local.db, self._local.pid = db, os.getpid()
        return db

    def _write(self, work: Callable[[Any], T]) -> T:
        """``work(db)`` as one write transaction, returned once committed (:class:`Committer`)."""
        return self._writing(work).result()

    def _writing(self, work: Callable[[Any], T], after: Callable[[T], None] | None = None) -> Future[T]:
        """``work(db)`` queued as one write transaction: a future of its result once committed, and
        ``after(result)`` run (before the future is done)."""
        committed = Committer.start(self._writer, self._connect, work)
        if after is None:
            return committed
        done: Future[T] = Future()

        def finish(committed: Future[T]) -> None:
            try:
                result = committed.result()
                after(result)
            except BaseException as err:
                done.set_exception(err)
            else:
                done.set_result(result)

        committed.add_done_callback(finish)
        return done

    def close(self) -> None:
        """Close this thread's connection."""
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None

    # -- judges and the experimenter -------------------------------------------------------------

    def invite(self, name: str, quota: int | None = None) -> tuple[Judge, str]:
        """A new judge and their personal token (returned once; only its hash is kept), with at most
        ``quota`` answers and a completion code shown when they reach it."""
        if not name.strip():
            raise ValueError("a judge needs a name")
        if quota is not None and quota < 1:
            raise ValueError(f"a quota is at least one answer, got {quota}")
        name, token, now = name.strip(), secrets.token_urlsafe(24), time.time()
        code = None if quota is None else secrets.token_hex(4).upper()
        judge_id = self._write(
            lambda db: db.execute(
                "INSERT INTO judges (name, token_hash, created, quota, code) VALUES (?, ?, ?, ?, ?) RETURNING id",
                (name, token_hash(token), now, quota, code),
            ).fetchone()[0]
        )
        return Judge(judge_id, name, now, quota, code), token

    def judge(self, token: str) -> Judge | None:
        """The judge holding ``token``, or None (also once revoked)."""
        row = (
            self._db()
            .execute("SELECT * FROM judges WHERE token_hash = ? AND revoked IS NULL", (token_hash(token),))
            .fetchone()
        )
        return None if row is None else _judge(row)

    def consent(self, judge: Judge) -> None:
        """Note that ``judge`` accepted the study's consent page (the first time only)."""
        now = time.time()
        self._write(
            lambda db: db.execute("UPDATE judges SET consented = ? WHERE id = ? AND consented IS NULL", (now, judge.id))
        )

    def finished(self, judge: Judge) -> bool:
        """Whether ``judge`` has given their quota of answers."""
        if judge.quota is None:
            return False
        given = self._db().execute("SELECT COUNT(*) FROM answers WHERE judge = ?", (judge.id,)).fetchone()[0]
        return given >= judge.quota

    def revoke(self, name: str) -> int:
        """Revoke every judge named ``name``: their links stop working and the questions held for
        them are released; their answers stay. How many were revoked."""

        def revoke(db: Database) -> int:
            ids = [row["id"] for row in db.execute("SELECT id FROM judges WHERE name = ? AND revoked IS NULL", (name,))]
            db.executemany("UPDATE judges SET revoked = ? WHERE id = ?", [(time.time(), i) for i in ids])
            db.executemany("DELETE FROM claims WHERE judge = ?", [(i,) for i in ids])
            return len(ids)

        return self._write(revoke)

    def judge_count(self) -> int:
        """How many judges can answer (invited, not revoked)."""
        return self._db().execute("SELECT COUNT(*) FROM judges WHERE revoked IS NULL").fetchone()[0]

    def new_admin_token(self) -> str:
        """A fresh experimenter token; the previous one stops working."""
        token = secrets.token_urlsafe(24)
        self._write(
            lambda db: db.execute(
                "INSERT INTO settings (key, value) VALUES ('admin', ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (token_hash(token),),
            )
        )
        return token

    def is_admin(self, token: str) -> bool:
        row = self._db().execute("SELECT value FROM settings WHERE key = 'admin'").fetchone()
        return row is not None and hmac.compare_digest(row["value"], token_hash(token))

    def form_secret(self) -> bytes:
        """The key that binds form tokens to a judge and a task; made once, shared by every server
        process on this database."""

        def secret(db: Database) -> bytes:
            db.execute(
                "INSERT INTO settings (key, value) VALUES ('form', ?) ON CONFLICT DO NOTHING", (secrets.token_hex(32),)
            )
            return bytes.fromhex(db.execute("SELECT value FROM settings WHERE key = 'form'").fetchone()["value"])

        return self._write(secret)

    # -- tasks -----------------------------------------------------------------------------------

    def task_for(self, key: TaskKey, question: str, context: tuple[str, ...], needed: int, per_judge: int) -> Task:
        """The task answering ``key``, created if new. Asking the same key again (a debate resumed
        after a crash) returns the same task with the answers it has; a different question or
        budget under a key already asked is refused."""
        if needed < 1 or per_judge < 1:
            raise ValueError(f"a task needs at least one answer and one per judge (got {needed}, {per_judge})")
        if key.run == GOLD_RUN:
            raise ValueError(f"the run key {GOLD_RUN!r} is the gold questions'")

        def ask(db: Database) -> Task:
            db.execute(
                "INSERT INTO tasks (run, debate, role, number, question, context, needed, per_judge, created)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run, debate, role, number) DO NOTHING",
                (
                    key.run,
                    key.debate,
                    key.role,
                    key.number,
                    question,
                    json.dumps(list(context)),
                    needed,
                    per_judge,
                    time.time(),
                ),
            )
            return _task(
                db.execute(
                    "SELECT * FROM tasks WHERE run = ? AND debate = ? AND role = ? AND number = ?",
                    (key.run, key.debate, key.role, key.number),
                ).fetchone()
            )

        task = self._write(ask)
        if (task.question, task.context, task.needed, task.per_judge) != (question, tuple(context), needed, per_judge):
            raise ValueError(f"task {key} was asked before with a different question or budget")
        return task

    def task(self, task_id: int) -> Task | None:
        row = self._db().execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone()
        return None if row is None else _task(row)

    def find(self, key: TaskKey) -> Task | None:
        """The task answering ``key``, if it was ever asked."""
        row = (
            self._db()
            .execute(
                "SELECT * FROM tasks WHERE run = ? AND debate = ? AND role = ? AND number = ?",
                (key.run, key.debate, key.role, key.number),
            )
            .fetchone()
        )
        return None if row is None else _task(row)

    def close_tasks(self, task_id: int | None = None, run: str | None = None) -> int:
        """Close one open task, or every open task of ``run`` (each of its reruns too): no judge is
        shown it again, and a debate still waiting on it stops (:class:`~debatekit.judge.people.People`).
        How many were closed."""
        if (task_id is None) == (run is None):
            raise ValueError("close one task or one run's tasks")
        if run is None:
            chosen, keys = "id = ?", [task_id]
        else:
            keys = self.runs_asked(run) or [run]
            chosen = f"run IN ({', '.join('?' * len(keys))})"

        def close(db: Database) -> int:
            ids = [row["id"] for row in db.execute(f"SELECT id FROM tasks WHERE closed IS NULL AND {chosen}", keys)]
            db.executemany("UPDATE tasks SET closed = ? WHERE id = ?", [(time.time(), i) for i in ids])
            db.executemany("DELETE FROM claims WHERE task = ?", [(i,) for i in ids])
            return len(ids)

        return self._write(close)

    def open_tasks(self, now: float | None = None) -> list[dict[str, Any]]:
        """Each open task, oldest first, with its answers, the slots held for judges now, and how many
        more answers the judges who can still answer it could give (``possible``: the rest of the
        judges not revoked, each up to ``per_judge`` less what they gave)."""
        now = time.time() if now is None else now
        mine = "(SELECT COUNT(*) FROM answers AS a WHERE a.task = tasks.id AND a.judge = judges.id)"
        rows = self._db().execute(
            "SELECT tasks.*,"
            " (SELECT COUNT(*) FROM answers WHERE answers.task = tasks.id) AS given,"
            " (SELECT COUNT(*) FROM claims WHERE claims.task = tasks.id AND claims.expires > :now) AS held,"
            f" (SELECT CAST(COALESCE(SUM(CASE WHEN {mine} < tasks.per_judge THEN tasks.per_judge - {mine} ELSE 0 END),"
            "   0) AS INTEGER) FROM judges WHERE judges.revoked IS NULL) AS possible"
            " FROM tasks WHERE closed IS NULL AND gold IS NULL ORDER BY id",
            {"now": now},
        )
        keys = ("id", "run", "debate", "role", "number", "needed", "given", "held", "possible", "per_judge", "created")
        return [{key: row[key] for key in keys} | {"age": now - row["created"]} for row in rows]

    def per_judge_of(self, run: str) -> set[int]:
        """The answers per judge the tasks asked under the key ``run`` allow."""
        return {row[0] for row in self._db().execute("SELECT DISTINCT per_judge FROM tasks WHERE run = ?", (run,))}

    def runs_asked(self, run: str) -> list[str]:
        """The keys ``run``'s tasks were asked under: ``run`` itself, then its reruns ``run.2``, ``run.3``, ...
        (:meth:`~debatekit.judge.people.People` asks a rerun fresh questions), in order."""
        rows = self._db().execute("SELECT DISTINCT run FROM tasks WHERE substr(run, 1, ?) = ?", (len(run), run))
        keys = {key for (key,) in rows if key == run or (key[len(run)] == "." and key[len(run) + 1 :].isdigit())}
        return sorted(keys, key=lambda key: 1 if key == run else int(key.rsplit(".", 1)[1]))

    def answers(self, task_id: int) -> list[Answer]:
        """A task's answers in the order they were committed."""
        rows = (
            self._db()
            .execute(
                "SELECT answers.*, judges.name AS judge_name FROM answers JOIN judges ON judges.id = answers.judge"
                " WHERE task = ? ORDER BY answers.id",
                (task_id,),
            )
            .fetchall()
        )
        return [_answer(row) for row in rows]

    def add_gold(self, questions: Iterable[tuple[str, tuple[str, ...], int, str | None]]) -> int:
        """Add gold questions (text, context lines, known answer 0 or 1, feedback or None), shown
        among the real ones (:meth:`offer`); a question already gold is kept once. How many were new."""
        questions = list(questions)

        def add(db: Database) -> int:
            added = 0
            known = {
                (row[0], row[1]) for row in db.execute("SELECT question, context FROM tasks WHERE run = ?", (GOLD_RUN,))
            }
            number = len(known)
            for question, context, answer, feedback in questions:
                if answer not in (0, 1):
                    raise ValueError(f"a gold answer is 0 or 1, got {answer!r}")
                lines = json.dumps(list(context))
                if (question, lines) in known:
                    continue
                db.execute(
                    "INSERT INTO tasks (run, debate, role, number, question, context, needed, per_judge, created, gold,"
                    " feedback) VALUES (?, ?, 'gold', 0, ?, ?, 1, 1, ?, ?, ?)",
                    (GOLD_RUN, number, question, lines, time.time(), answer, feedback),
                )
                known.add((question, lines))
                number, added = number + 1, added + 1
            return added

        return self._write(add)

    def _next(
        self, db: Database, judge: Judge, now: float, peeked: dict[int, int] | None = None
    ) -> tuple[Offer, bool] | None:
        """``judge``'s next question and whether it is held for them: the one held for them, else (below
        their quota) the oldest real task with room for them that they did not skip, or a gold one when
        due (after every :data:`GOLD_EVERY` real ones, or when no real one waits); each found with its
        task in one query. ``peeked``: pages other judges were shown lately, by task; the oldest task
        with room for those too is preferred."""
        given = "(SELECT COUNT(*) FROM answers WHERE answers.task = tasks.id) AS given"
        row = db.execute(
            f"SELECT tasks.*, claims.slot, {given} FROM claims JOIN tasks ON tasks.id = claims.task"
            " WHERE claims.judge = ? AND tasks.closed IS NULL ORDER BY claims.task LIMIT 1",
            (judge.id,),
        ).fetchone()
        if row is not None:
            return _offer(row, row["slot"]), True
        if judge.quota is not None and self._given(db, judge) >= judge.quota:
            return None
        unskipped = "NOT EXISTS (SELECT 1 FROM skips WHERE skips.task = tasks.id AND skips.judge = :judge)"
        mine = "(SELECT COUNT(*) FROM answers WHERE answers.task = tasks.id AND answers.judge = :judge)"
        taken = (
            "(SELECT COUNT(*) FROM answers WHERE answers.task = tasks.id)"
            " + (SELECT COUNT(*) FROM claims WHERE claims.task = tasks.id AND claims.expires > :now)"
        )
        peeked = peeked or {}
        rows = db.execute(
            f"SELECT tasks.*, {mine} AS mine, {taken} AS taken, {given}"
            f" FROM tasks WHERE closed IS NULL AND gold IS NULL AND {unskipped}"
            f" AND {mine} < per_judge AND {taken} < needed ORDER BY tasks.id LIMIT :window",
            {"judge": judge.id, "now": now, "window": 1 + len(peeked)},  # one at least is not a page shown
        ).fetchall()
        free = [row for row in rows if row["taken"] + peeked.get(row["id"], 0) < row["needed"]]
        real = (free or rows or [None])[0]
        gold = db.execute(
            f"SELECT tasks.*, {given} FROM tasks WHERE closed IS NULL AND gold IS NOT NULL AND {unskipped}"
            " AND NOT EXISTS (SELECT 1 FROM answers WHERE answers.task = tasks.id AND answers.judge = :judge)"
            " ORDER BY id LIMIT 1",
            {"judge": judge.id},
        ).fetchone()
        if gold is not None:
            real_done, gold_done = db.execute(
                "SELECT COALESCE(SUM(CASE WHEN tasks.gold IS NULL THEN 1 ELSE 0 END), 0),"
                " COALESCE(SUM(CASE WHEN tasks.gold IS NULL THEN 0 ELSE 1 END), 0) FROM"
                " (SELECT task FROM answers WHERE judge = :judge UNION ALL SELECT task FROM skips WHERE judge = :judge)"
                " AS done JOIN tasks ON tasks.id = done.task",
                {"judge": judge.id},
            ).fetchone()
            if real is None or gold_done * GOLD_EVERY <= real_done:
                return _offer(gold, 0), False
        return None if real is None else (_offer(real, real["mine"]), False)

    def _room(self, db: Database, judge: Judge, task: Record, slot: int, now: float) -> bool:
        """Whether ``judge`` may fill ``slot`` of the open ``task`` now: their next slot, below its
        ``per_judge`` and their quota, not skipped, and (a real task) its answers plus other judges'
        held slots short of R."""
        seen = db.execute(
            "SELECT (SELECT COUNT(*) FROM answers WHERE task = :task AND judge = :judge) AS mine,"
            " (SELECT COUNT(*) FROM skips WHERE task = :task AND judge = :judge) AS skipped,"
            " (SELECT COUNT(*) FROM answers WHERE task = :task)"
            " + (SELECT COUNT(*) FROM claims WHERE task = :task AND judge != :judge AND expires > :now) AS taken",
            {"task": task["id"], "judge": judge.id, "now": now},
        ).fetchone()
        mine = seen["mine"]
        if task["closed"] is not None or seen["skipped"] or slot != mine or mine >= task["per_judge"]:
            return False
        if judge.quota is not None and self._given(db, judge) >= judge.quota:
            return False
        return task["gold"] is not None or seen["taken"] < task["needed"]

    @staticmethod
    def _given(db: Database, judge: Judge) -> int:
        """How many answers ``judge`` gave (read only for a judge with a quota)."""
        return db.execute("SELECT COUNT(*) FROM answers WHERE judge = ?", (judge.id,)).fetchone()[0]

    def peek(self, judge: Judge, now: float | None = None) -> Offer | None:
        """The task :meth:`offer` would show ``judge`` next, holding nothing (a page's GET: a link
        preview or a bot reserves no slot; :meth:`hold` does, once the page is rendered). The pages
        this store showed other judges in the last :data:`PEEK_SECONDS` count against a task's room,
        so that judges opening their pages at once are shown different questions."""
        now = time.time() if now is None else now
        db = self._db()
        with self._peeks_lock:  # one page chosen at a time, so two judges opening theirs at once differ
            for task_id in list(self._peeks):
                judges = self._peeks[task_id]
                for other in [other for other, until in judges.items() if until <= now]:
                    del judges[other]
                if not judges:
                    del self._peeks[task_id]
            peeked = {task_id: len(judges.keys() - {judge.id}) for task_id, judges in self._peeks.items()}
            found = self._next(db, judge, now, {task_id: n for task_id, n in peeked.items() if n})
            if found is None:
                return None
            self._peeks.setdefault(found[0].task.id, {})[judge.id] = now + PEEK_SECONDS
        return found[0]

    def _unpeek(self, judge: Judge, task_id: int) -> None:
        """The page :meth:`peek` showed ``judge`` no longer counts against the task's room."""
        with self._peeks_lock:
            self._peeks.get(task_id, {}).pop(judge.id, None)

    def offer(self, judge: Judge, now: float | None = None) -> Offer | None:
        """The next task for ``judge`` (:meth:`peek`), its slot held for them for :data:`CLAIM_SECONDS`
        from now. None when nothing waits for this judge."""
        now = time.time() if now is None else now

        def offer(db: Database) -> Offer | None:
            found = self._next(db, judge, now)
            if found is None:
                return None
            offered, held = found
            if held:
                db.execute(
                    "UPDATE claims SET expires = ? WHERE task = ? AND judge = ? AND slot = ?",
                    (now + CLAIM_SECONDS, offered.task.id, judge.id, offered.slot),
                )
            else:
                db.execute(
                    "INSERT INTO claims (task, judge, slot, shown, expires) VALUES (?, ?, ?, ?, ?)",
                    (offered.task.id, judge.id, offered.slot, now, now + CLAIM_SECONDS),
                )
            return offered

        return self._write(offer)

    def hold(self, judge: Judge, task_id: int, slot: int, now: float | None = None) -> bool:
        """:meth:`holding`, once committed."""
        return self.holding(judge, task_id, slot, now).result()

    def holding(self, judge: Judge, task_id: int, slot: int, now: float | None = None) -> Future[bool]:
        """Hold ``slot`` of a task for ``judge`` for :data:`CLAIM_SECONDS` from now, its page having been
        rendered (the first render is when it was shown: a render again keeps that time): a future of
        whether it was, False when the slot is no longer theirs to take (other judges filled or hold the
        task, or it closed)."""
        now = time.time() if now is None else now

        def hold(db: Database) -> bool:
            held = db.execute(
                "UPDATE claims SET expires = ? WHERE task = ? AND judge = ? AND slot = ?",
                (now + CLAIM_SECONDS, task_id, judge.id, slot),
            ).rowcount
            if held:
                return True
            task = db.execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone()
            if task is None or not self._room(db, judge, task, slot, now):
                return False
            db.execute(
                "INSERT INTO claims (task, judge, slot, shown, expires) VALUES (?, ?, ?, ?, ?)",
                (task_id, judge.id, slot, now, now + CLAIM_SECONDS),
            )
            return True

        def claimed(held: bool) -> None:
            if held:
                self._unpeek(judge, task_id)  # counted as a claim now

        return self._writing(hold, claimed)

    def submit(
        self,
        judge: Judge,
        task_id: int,
        slot: int,
        answer: int,
        confidence: float | None = None,
        explanation: str | None = None,
        rendered: float | None = None,
    ) -> Outcome:
        """:meth:`submitting`, once committed."""
        return self.submitting(judge, task_id, slot, answer, confidence, explanation, rendered).result()

    def submitting(
        self,
        judge: Judge,
        task_id: int,
        slot: int,
        answer: int,
        confidence: float | None = None,
        explanation: str | None = None,
        rendered: float | None = None,
    ) -> Future[Outcome]:
        """Record ``judge``'s ``answer`` (0 or 1, with their ``confidence`` and ``explanation``) in
        ``slot`` of a task held for them, or, given when its page was ``rendered`` (a form the
        server signed), of one with room for them. The same answer submitted twice counts once
        (:attr:`Outcome.ALREADY`); anything else that is not a fresh answer to the judge's own open
        slot is :class:`Refused` (raised here, or by the future) and changes nothing."""
        if answer not in (0, 1):
            raise Refused("answer", "an answer is yes (1) or no (0)")
        if confidence is not None and not 0 <= confidence <= 1:
            raise Refused("answer", "a confidence is a probability, from 0 to 1")
        if explanation is not None and len(explanation) > MAX_EXPLANATION:
            raise Refused("answer", f"an explanation is at most {MAX_EXPLANATION} characters")

        def submit(db: Database) -> Outcome:
            mine = "task = :task AND judge = :judge AND slot = :slot"
            key = {"task": task_id, "judge": judge.id, "slot": slot}
            task = db.execute(  # the task, the judge's answer in this slot and their claim on it, in one read
                f"SELECT tasks.*, (SELECT answer FROM answers WHERE {mine}) AS given,"
                f" (SELECT shown FROM claims WHERE {mine}) AS claimed FROM tasks WHERE id = :task",
                key,
            ).fetchone()
            if task is None:
                raise Refused("unknown", f"there is no task {task_id}")
            if task["given"] is not None:
                if task["given"] != answer:
                    raise Refused("changed", "you already answered this question; your first answer stands")
                return Outcome.ALREADY
            if task["closed"] is not None:
                raise Refused("closed", "this question already has all the answers it needs")
            now, shown = time.time(), task["claimed"]
            if shown is None and rendered is None:
                raise Refused("not yours", f"task {task_id} was not shown to you")
            if shown is None and not self._room(db, judge, task, slot, now):
                raise Refused("taken", "other judges gave or are giving the answers this question needs")
            db.execute(
                "INSERT INTO answers (task, judge, slot, answer, shown, submitted, confidence, explanation)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (task_id, judge.id, slot, answer, rendered if shown is None else shown, now, confidence,
                 explanation or None),
            )  # fmt: skip
            db.execute(f"DELETE FROM claims WHERE {mine}", key)
            closed = db.execute(  # at R answers a real task closes
                "UPDATE tasks SET closed = :now WHERE id = :task AND gold IS NULL"
                " AND (SELECT COUNT(*) FROM answers WHERE task = :task) >= needed",
                {"now": now, "task": task_id},
            ).rowcount
            if closed:
                db.execute("DELETE FROM claims WHERE task = ?", (task_id,))
            return Outcome.RECORDED

        return self._writing(submit, lambda _: self._unpeek(judge, task_id))  # counted as an answer now

    def skip(self, judge: Judge, task_id: int) -> None:
        """:meth:`skipping`, once committed."""
        self.skipping(judge, task_id).result()

    def skipping(self, judge: Judge, task_id: int) -> Future[None]:
        """``judge`` is unsure of a task shown to them: it goes back to the other judges (their held
        slot released) and is never shown to this judge again; the skip is recorded once."""

        def skip(db: Database) -> None:
            if db.execute("SELECT 1 FROM tasks WHERE id = ?", (task_id,)).fetchone() is None:
                raise Refused("unknown", f"there is no task {task_id}")
            db.execute(
                "INSERT INTO skips (task, judge, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                (task_id, judge.id, time.time()),
            )
            db.execute("DELETE FROM claims WHERE task = ? AND judge = ?", (task_id, judge.id))

        return self._writing(skip, lambda _: self._unpeek(judge, task_id))

    # -- the experimenter's view -------------------------------------------------------------------

    def status(self, now: float | None = None) -> dict[str, Any]:
        """Debates waiting (with open tasks), judgements given per debate against the planned
        budget (the sum of R over its tasks), per-judge statistics and the agreement between judges."""
        now = time.time() if now is None else now
        db = self._db()
        debates = [
            dict(row)
            for row in db.execute(
                "SELECT run, debate, COUNT(*) AS tasks, SUM(CASE WHEN closed IS NULL THEN 1 ELSE 0 END) AS open,"
                " SUM(needed) AS planned,"
                " (SELECT COUNT(*) FROM answers JOIN tasks AS t ON t.id = answers.task"
                "  WHERE t.run = tasks.run AND t.debate = tasks.debate) AS given,"
                " MIN(CASE WHEN closed IS NULL THEN created END) AS waiting_since"
                " FROM tasks WHERE gold IS NULL GROUP BY run, debate ORDER BY MIN(created)"
            )
        ]
        judges = self.statistics(now)
        return {
            "waiting": [d for d in debates if d["open"]],
            "debates": debates,
            "judges": judges,
            "judgements": db.execute("SELECT COUNT(*) FROM answers").fetchone()[0],
            "agreement": self.agreement(),
        }

    def statistics(self, now: float | None = None) -> list[dict[str, Any]]:
        """Per judge: answers (gold ones too), skips, answers in the last hour, the median seconds from
        a question's first render to its answer, gold questions answered and the share right
        (``gold_accuracy``, None before any), quota, completion code and whether it was reached."""
        now = time.time() if now is None else now
        db = self._db()
        judges = []
        for row in db.execute("SELECT * FROM judges ORDER BY id").fetchall():
            answers = db.execute(
                "SELECT answers.submitted - answers.shown AS seconds, answers.submitted, answers.answer, tasks.gold"
                " FROM answers JOIN tasks ON tasks.id = answers.task WHERE answers.judge = ?",
                (row["id"],),
            ).fetchall()
            gold = [a["answer"] == a["gold"] for a in answers if a["gold"] is not None]
            judges.append(
                {
                    "id": row["id"],
                    "name": row["name"],
                    "revoked": row["revoked"],
                    "answers": len(answers),
                    "skips": db.execute("SELECT COUNT(*) FROM skips WHERE judge = ?", (row["id"],)).fetchone()[0],
                    "last_hour": sum(a["submitted"] > now - 3600 for a in answers),
                    "last": max((a["submitted"] for a in answers), default=None),
                    "median_seconds": median(a["seconds"] for a in answers) if answers else None,
                    "gold_answered": len(gold),
                    "gold_accuracy": sum(gold) / len(gold) if gold else None,
                    "quota": row["quota"],
                    "completion_code": row["code"],
                    "finished": row["quota"] is not None and len(answers) >= row["quota"],
                }
            )
        return judges

    def agreement(self) -> dict[str, Any]:
        """Inter-rater agreement on the real questions (gold ones left out): Krippendorff's alpha for
        nominal yes/no data over the tasks with at least two answers (None while fewer than two
        such tasks, or when every answer is the same: alpha is undefined)."""
        counts = [
            (row["no"], row["yes"])
            for row in self._db().execute(
                "SELECT SUM(CASE WHEN answer = 0 THEN 1 ELSE 0 END) AS no, SUM(answer) AS yes"
                " FROM answers JOIN tasks ON tasks.id = answers.task WHERE tasks.gold IS NULL"
                " GROUP BY answers.task HAVING COUNT(*) >= 2"
            )
        ]
        alpha = None
        if len(counts) >= 2 and len({value for pair in counts for value, n in enumerate(pair) if n}) == 2:
            import krippendorff  # the judge extra's
            import numpy as np

            alpha = float(krippendorff.alpha(value_counts=np.array(counts), level_of_measurement="nominal"))
        return {"krippendorff_alpha": alpha, "tasks": len(counts), "answers": sum(map(sum, counts))}

    def export(self) -> dict[str, Any]:
        """Every task and every judgement, as JSON data (judges by id and name, never tokens)."""
        db = self._db()
        tasks = [_task(row) for row in db.execute("SELECT * FROM tasks ORDER BY id")]
        rows = db.execute(
            "SELECT answers.*, judges.name AS judge_name FROM answers JOIN judges ON judges.id = answers.judge"
            " ORDER BY answers.id"
        )
        return {
            "tasks": [
                {
                    "id": t.id,
                    "run": t.key.run,
                    "debate": t.key.debate,
                    "role": t.key.role,
                    "number": t.key.number,
                    "question": t.question,
                    "context": list(t.context),
                    "needed": t.needed,
                    "per_judge": t.per_judge,
                    "created": t.created,
                    "closed": t.closed,
                    "gold": t.gold,
                    "feedback": t.feedback,
                }
                for t in tasks
            ],
            "judgements": [answer_json(_answer(row)) for row in rows],
            "skips": [dict(row) for row in db.execute("SELECT task, judge, at FROM skips ORDER BY at")],
            "judges": self.statistics(),
            "agreement": self.agreement(),
        }


def answer_json(answer: Answer) -> dict[str, Any]:
    """One judgement as JSON data: what the per-debate records and the export hold."""
    return {
        "task": answer.task,
        "judge": answer.judge,
        "judge_name": answer.judge_name,
        "slot": answer.slot,
        "answer": answer.answer,
        "shown": answer.shown,
        "submitted": answer.submitted,
        "confidence": answer.confidence,
        "explanation": answer.explanation,
    }


def _task(row: Record) -> Task:
    return Task(
        row["id"],
        TaskKey(row["run"], row["debate"], row["role"], row["number"]),
        row["question"],
        tuple(json.loads(row["context"])),
        row["needed"],
        row["per_judge"],
        row["created"],
        row["closed"],
        row["gold"],
        row["feedback"],
    )


def _offer(row: Record, slot: int) -> Offer:
    """A task's row with its answers ``given``, shown in ``slot`` (gold looks like any question: one answer needed)."""
    task = _task(row)
    return Offer(task, slot, 1 if task.gold is not None else task.needed - row["given"])


def _judge(row: Record) -> Judge:
    return Judge(row["id"], row["name"], row["created"], row["quota"], row["code"], row["consented"])


def _answer(row: Record) -> Answer:
    return Answer(
        row["task"],
        row["judge"],
        row["judge_name"],
        row["slot"],
        row["answer"],
        row["shown"],
        row["submitted"],
        row["confidence"],
        row["explanation"],
    )
