"""The judges' store: the only module that speaks SQL, so a server database can replace SQLite.

Doubly-efficient debate promises that a person never reads the whole argument: the verifier asks
the human-judgement oracle about one local step. Each such query is a *task*, keyed by the query
it answers (run, debate, role, number; :class:`debatekit.oracle.Asking`), holding the question,
its relevant coordinates I(t) as context lines and the R answers it needs (stochastic debate asks
one question R times: a panel of distinct judges, at most ``per_judge`` answers each).

Durability: SQLite in WAL mode with ``synchronous=FULL``, every write one ``BEGIN IMMEDIATE``
transaction, so an answer acknowledged to a judge has been committed and survives kill -9 (and
power loss). Idempotence: a task is created or found by its key, so a debate resumed after a crash
finds its task and the answers already given; an answer is unique on (task, judge, slot), so a
double submit counts once. Tokens are stored as SHA-256 hashes only. One connection per thread
(and per process), opened on first use.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS judges (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    created REAL NOT NULL,
    revoked REAL
);
CREATE TABLE IF NOT EXISTS tasks (
    id INTEGER PRIMARY KEY,
    run TEXT NOT NULL,
    debate INTEGER NOT NULL,
    role TEXT NOT NULL,
    number INTEGER NOT NULL,
    question TEXT NOT NULL,
    context TEXT NOT NULL,
    needed INTEGER NOT NULL CHECK (needed >= 1),
    per_judge INTEGER NOT NULL CHECK (per_judge >= 1),
    created REAL NOT NULL,
    closed REAL,
    UNIQUE (run, debate, role, number)
);
CREATE INDEX IF NOT EXISTS open_tasks ON tasks (closed, id);
CREATE TABLE IF NOT EXISTS claims (
    task INTEGER NOT NULL REFERENCES tasks (id),
    judge INTEGER NOT NULL REFERENCES judges (id),
    slot INTEGER NOT NULL,
    shown REAL NOT NULL,
    expires REAL NOT NULL,
    PRIMARY KEY (task, judge, slot)
);
CREATE INDEX IF NOT EXISTS claims_of_judge ON claims (judge);
CREATE TABLE IF NOT EXISTS answers (
    id INTEGER PRIMARY KEY,
    task INTEGER NOT NULL REFERENCES tasks (id),
    judge INTEGER NOT NULL REFERENCES judges (id),
    slot INTEGER NOT NULL,
    answer INTEGER NOT NULL CHECK (answer IN (0, 1)),
    shown REAL NOT NULL,
    submitted REAL NOT NULL,
    UNIQUE (task, judge, slot)
);
CREATE INDEX IF NOT EXISTS answers_of_judge ON answers (judge, submitted);
CREATE TABLE IF NOT EXISTS settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""

CLAIM_SECONDS = 600.0
"""How long a task shown to a judge keeps its slot for them before another judge may take it."""


_WRITE_LOCKS: dict[Path, threading.Lock] = {}
_WRITE_LOCKS_GUARD = threading.Lock()


def _write_lock(path: Path) -> threading.Lock:
    """This process's lock for writing to the database at ``path``."""
    with _WRITE_LOCKS_GUARD:
        return _WRITE_LOCKS.setdefault(path.resolve(), threading.Lock())


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


@dataclass(frozen=True)
class Judge:
    id: int
    name: str
    created: float


@dataclass(frozen=True)
class Answer:
    """One judgement: judge, slot (the judge's k-th answer to the task), 0/1, when the task was
    shown and when the answer was committed."""

    task: int
    judge: int
    judge_name: str
    slot: int
    answer: int
    shown: float
    submitted: float


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
    """The judges, tasks and answers in one SQLite file (created on first open)."""

    def __init__(self, path: str | os.PathLike[str], busy_seconds: float = 30.0):
        self.path = Path(path)
        self._busy = busy_seconds
        self._local = threading.local()
        with contextlib.suppress(FileExistsError):  # a new database is the experimenter's alone (0600)
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        with self._write() as db:
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            if "revoked" not in {row["name"] for row in db.execute("PRAGMA table_info(judges)")}:
                db.execute("ALTER TABLE judges ADD COLUMN revoked REAL")  # a database made before revoke

    # -- connections ---------------------------------------------------------------------------

    def _db(self) -> sqlite3.Connection:
        """This thread's (and process's) connection."""
        db = getattr(self._local, "db", None)
        if db is None or self._local.pid != os.getpid():
            db = sqlite3.connect(self.path, timeout=self._busy, isolation_level=None)
            db.row_factory = sqlite3.Row
            db.execute(f"PRAGMA busy_timeout = {int(self._busy * 1000)}")
            if db.execute("PRAGMA journal_mode = WAL").fetchone()[0] != "wal":
                raise sqlite3.OperationalError(f"{self.path}: WAL mode is not available")
            db.execute("PRAGMA synchronous = FULL")
            db.execute("PRAGMA foreign_keys = ON")
            self._local.db, self._local.pid = db, os.getpid()
        return db

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, holding the write lock from its start (BEGIN IMMEDIATE). Threads
        of one process queue on a lock first: SQLite's own busy wait sleeps in steps of up to
        100 ms, which under many concurrent judges costs more than the writes themselves."""
        db = self._db()
        with _write_lock(self.path):
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            if db.in_transaction:
                db.execute("COMMIT")

    def close(self) -> None:
        """Close this thread's connection."""
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None

    # -- judges and the experimenter -------------------------------------------------------------

    def invite(self, name: str) -> tuple[Judge, str]:
        """A new judge and their personal token (returned once; only its hash is kept)."""
        if not name.strip():
            raise ValueError("a judge needs a name")
        name, token, now = name.strip(), secrets.token_urlsafe(24), time.time()
        with self._write() as db:
            cursor = db.execute(
                "INSERT INTO judges (name, token_hash, created) VALUES (?, ?, ?)", (name, token_hash(token), now)
            )
        return Judge(int(cursor.lastrowid or 0), name, now), token

    def judge(self, token: str) -> Judge | None:
        """The judge holding ``token``, or None (also once revoked)."""
        row = (
            self._db()
            .execute("SELECT * FROM judges WHERE token_hash = ? AND revoked IS NULL", (token_hash(token),))
            .fetchone()
        )
        return None if row is None else Judge(row["id"], row["name"], row["created"])

    def revoke(self, name: str) -> int:
        """Revoke every judge named ``name``: their links stop working and the questions held for
        them are released; their answers stay. How many were revoked."""
        with self._write() as db:
            ids = [row["id"] for row in db.execute("SELECT id FROM judges WHERE name = ? AND revoked IS NULL", (name,))]
            db.executemany("UPDATE judges SET revoked = ? WHERE id = ?", [(time.time(), i) for i in ids])
            db.executemany("DELETE FROM claims WHERE judge = ?", [(i,) for i in ids])
        return len(ids)

    def judge_count(self) -> int:
        """How many judges can answer (invited, not revoked)."""
        return self._db().execute("SELECT COUNT(*) FROM judges WHERE revoked IS NULL").fetchone()[0]

    def new_admin_token(self) -> str:
        """A fresh experimenter token; the previous one stops working."""
        token = secrets.token_urlsafe(24)
        with self._write() as db:
            db.execute("INSERT OR REPLACE INTO settings (key, value) VALUES ('admin', ?)", (token_hash(token),))
        return token

    def is_admin(self, token: str) -> bool:
        row = self._db().execute("SELECT value FROM settings WHERE key = 'admin'").fetchone()
        return row is not None and hmac.compare_digest(row["value"], token_hash(token))

    def form_secret(self) -> bytes:
        """The key that binds form tokens to a judge and a task; made once, shared by every server
        process on this database."""
        with self._write() as db:
            db.execute("INSERT OR IGNORE INTO settings (key, value) VALUES ('form', ?)", (secrets.token_hex(32),))
            return bytes.fromhex(db.execute("SELECT value FROM settings WHERE key = 'form'").fetchone()["value"])

    # -- tasks -----------------------------------------------------------------------------------

    def task_for(self, key: TaskKey, question: str, context: tuple[str, ...], needed: int, per_judge: int) -> Task:
        """The task answering ``key``, created if new. Asking the same key again (a debate resumed
        after a crash) returns the same task with the answers it has; a different question or
        budget under a key already asked is refused."""
        if needed < 1 or per_judge < 1:
            raise ValueError(f"a task needs at least one answer and one per judge (got {needed}, {per_judge})")
        with self._write() as db:
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
            task = _task(
                db.execute(
                    "SELECT * FROM tasks WHERE run = ? AND debate = ? AND role = ? AND number = ?",
                    (key.run, key.debate, key.role, key.number),
                ).fetchone()
            )
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
        with self._write() as db:
            if run is None:
                rows = db.execute("SELECT id FROM tasks WHERE closed IS NULL AND id = ?", (task_id,))
                ids = [row["id"] for row in rows]
            else:
                keys = self.runs_asked(run)
                ids = [
                    row["id"]
                    for row in db.execute(
                        f"SELECT id FROM tasks WHERE closed IS NULL AND run IN ({', '.join('?' * len(keys))})", keys
                    )
                ]
            db.executemany("UPDATE tasks SET closed = ? WHERE id = ?", [(time.time(), i) for i in ids])
            db.executemany("DELETE FROM claims WHERE task = ?", [(i,) for i in ids])
        return len(ids)

    def open_tasks(self, now: float | None = None) -> list[dict[str, Any]]:
        """Each open task, oldest first, with its answers, the slots held for judges now, and how many
        more answers the judges who can still answer it could give (``possible``: the rest of the
        judges not revoked, each up to ``per_judge`` less what they gave)."""
        now = time.time() if now is None else now
        rows = self._db().execute(
            "SELECT tasks.*,"
            " (SELECT COUNT(*) FROM answers WHERE answers.task = tasks.id) AS given,"
            " (SELECT COUNT(*) FROM claims WHERE claims.task = tasks.id AND claims.expires > :now) AS held,"
            " (SELECT COALESCE(SUM(MAX(tasks.per_judge - (SELECT COUNT(*) FROM answers AS a"
            "     WHERE a.task = tasks.id AND a.judge = judges.id), 0)), 0)"
            "   FROM judges WHERE judges.revoked IS NULL) AS possible"
            " FROM tasks WHERE closed IS NULL ORDER BY id",
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

    def offer(self, judge: Judge, now: float | None = None) -> Offer | None:
        """The next task for ``judge``: the one already shown to them and not yet answered, else
        the oldest open task they may still answer (fewer than ``per_judge`` answers from them)
        whose answers plus slots held by other judges fall short of R; its slot is held for them
        for :data:`CLAIM_SECONDS`. None when nothing waits for this judge."""
        now = time.time() if now is None else now
        with self._write() as db:
            row = db.execute(
                "SELECT claims.task, claims.slot FROM claims JOIN tasks ON tasks.id = claims.task"
                " WHERE claims.judge = ? AND tasks.closed IS NULL ORDER BY claims.task LIMIT 1",
                (judge.id,),
            ).fetchone()
            if row is not None:
                db.execute(
                    "UPDATE claims SET expires = ? WHERE task = ? AND judge = ? AND slot = ?",
                    (now + CLAIM_SECONDS, row["task"], judge.id, row["slot"]),
                )
                task_id, slot = row["task"], row["slot"]
            else:
                row = db.execute(
                    "SELECT tasks.id,"
                    " (SELECT COUNT(*) FROM answers WHERE answers.task = tasks.id AND answers.judge = :judge) AS mine"
                    " FROM tasks WHERE closed IS NULL"
                    " AND (SELECT COUNT(*) FROM answers WHERE answers.task = tasks.id AND answers.judge = :judge)"
                    "     < per_judge"
                    " AND (SELECT COUNT(*) FROM answers WHERE answers.task = tasks.id)"
                    "   + (SELECT COUNT(*) FROM claims WHERE claims.task = tasks.id AND claims.expires > :now)"
                    "     < needed"
                    " ORDER BY tasks.id LIMIT 1",
                    {"judge": judge.id, "now": now},
                ).fetchone()
                if row is None:
                    return None
                task_id, slot = row["id"], row["mine"]
                db.execute(
                    "INSERT INTO claims (task, judge, slot, shown, expires) VALUES (?, ?, ?, ?, ?)",
                    (task_id, judge.id, slot, now, now + CLAIM_SECONDS),
                )
            task = _task(db.execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone())
            given = db.execute("SELECT COUNT(*) FROM answers WHERE task = ?", (task_id,)).fetchone()[0]
        return Offer(task, slot, task.needed - given)

    def submit(self, judge: Judge, task_id: int, slot: int, answer: int) -> Outcome:
        """Record ``judge``'s ``answer`` (0 or 1) in ``slot`` of a task shown to them. The same
        answer submitted twice counts once (:attr:`Outcome.ALREADY`); anything else that is not a
        fresh answer to the judge's own open slot raises :class:`Refused` and changes nothing."""
        if answer not in (0, 1):
            raise Refused("answer", "an answer is yes (1) or no (0)")
        with self._write() as db:
            task = db.execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone()
            if task is None:
                raise Refused("unknown", f"there is no task {task_id}")
            given = db.execute(
                "SELECT answer FROM answers WHERE task = ? AND judge = ? AND slot = ?", (task_id, judge.id, slot)
            ).fetchone()
            if given is not None:
                if given["answer"] != answer:
                    raise Refused("changed", "you already answered this question; your first answer stands")
                return Outcome.ALREADY
            if task["closed"] is not None:
                raise Refused("closed", "this question already has all the answers it needs")
            claim = db.execute(
                "SELECT shown FROM claims WHERE task = ? AND judge = ? AND slot = ?", (task_id, judge.id, slot)
            ).fetchone()
            if claim is None:
                raise Refused("not yours", f"task {task_id} was not shown to you")
            now = time.time()
            db.execute(
                "INSERT INTO answers (task, judge, slot, answer, shown, submitted) VALUES (?, ?, ?, ?, ?, ?)",
                (task_id, judge.id, slot, answer, claim["shown"], now),
            )
            db.execute("DELETE FROM claims WHERE task = ? AND judge = ? AND slot = ?", (task_id, judge.id, slot))
            count = db.execute("SELECT COUNT(*) FROM answers WHERE task = ?", (task_id,)).fetchone()[0]
            if count >= task["needed"]:
                db.execute("UPDATE tasks SET closed = ? WHERE id = ?", (now, task_id))
                db.execute("DELETE FROM claims WHERE task = ?", (task_id,))
        return Outcome.RECORDED

    # -- the experimenter's view -------------------------------------------------------------------

    def status(self, now: float | None = None) -> dict[str, Any]:
        """Debates waiting (with open tasks), judgements given per debate against the planned
        budget (the sum of R over its tasks), and each judge's throughput."""
        now = time.time() if now is None else now
        db = self._db()
        debates = [
            dict(row)
            for row in db.execute(
                "SELECT run, debate, COUNT(*) AS tasks, SUM(closed IS NULL) AS open, SUM(needed) AS planned,"
                " (SELECT COUNT(*) FROM answers JOIN tasks AS t ON t.id = answers.task"
                "  WHERE t.run = tasks.run AND t.debate = tasks.debate) AS given,"
                " MIN(CASE WHEN closed IS NULL THEN created END) AS waiting_since"
                " FROM tasks GROUP BY run, debate ORDER BY MIN(created)"
            )
        ]
        judges = [
            dict(row)
            for row in db.execute(
                "SELECT judges.id, judges.name, judges.revoked, COUNT(answers.id) AS answers,"
                " MIN(answers.submitted) AS first, MAX(answers.submitted) AS last,"
                " SUM(answers.submitted > :hour) AS last_hour,"
                " AVG(answers.submitted - answers.shown) AS mean_seconds"
                " FROM judges LEFT JOIN answers ON answers.judge = judges.id GROUP BY judges.id ORDER BY judges.id",
                {"hour": now - 3600},
            )
        ]
        for judge in judges:
            judge["last_hour"] = judge["last_hour"] or 0
        return {
            "waiting": [d for d in debates if d["open"]],
            "debates": debates,
            "judges": judges,
            "judgements": db.execute("SELECT COUNT(*) FROM answers").fetchone()[0],
        }

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
                }
                for t in tasks
            ],
            "judgements": [answer_json(_answer(row)) for row in rows],
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
    }


def _task(row: sqlite3.Row) -> Task:
    return Task(
        row["id"],
        TaskKey(row["run"], row["debate"], row["role"], row["number"]),
        row["question"],
        tuple(json.loads(row["context"])),
        row["needed"],
        row["per_judge"],
        row["created"],
        row["closed"],
    )


def _answer(row: sqlite3.Row) -> Answer:
    return Answer(
        row["task"], row["judge"], row["judge_name"], row["slot"], row["answer"], row["shown"], row["submitted"]
    )
