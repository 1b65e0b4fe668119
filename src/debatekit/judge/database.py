"""The judges' database: its schema, the two dialects the store speaks (:class:`SQLite`, a file in
WAL mode with ``synchronous=FULL``; :class:`PostgreSQL`, given a ``postgresql://`` URL), and the
process's one writer thread per database (:class:`Committer`), which commits the writes waiting
together, each acknowledged only once committed. What is stored, and when, is
:mod:`debatekit.judge.store`'s; this module and that one are the only ones that speak SQL.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

SCHEMA = """
CREATE TABLE IF NOT EXISTS judges (
    id {key},
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    created DOUBLE PRECISION NOT NULL,
    revoked DOUBLE PRECISION,
    quota INTEGER,
    code TEXT,
    consented DOUBLE PRECISION
);
CREATE TABLE IF NOT EXISTS tasks (
    id {key},
    run TEXT NOT NULL,
    debate INTEGER NOT NULL,
    role TEXT NOT NULL,
    number INTEGER NOT NULL,
    question TEXT NOT NULL,
    context TEXT NOT NULL,
    needed INTEGER NOT NULL CHECK (needed >= 1),
    per_judge INTEGER NOT NULL CHECK (per_judge >= 1),
    created DOUBLE PRECISION NOT NULL,
    closed DOUBLE PRECISION,
    gold INTEGER CHECK (gold IN (0, 1)),
    feedback TEXT,
    UNIQUE (run, debate, role, number)
);
CREATE INDEX IF NOT EXISTS open_tasks ON tasks (closed, id);
CREATE TABLE IF NOT EXISTS claims (
    task INTEGER NOT NULL REFERENCES tasks (id),
    judge INTEGER NOT NULL REFERENCES judges (id),
    slot INTEGER NOT NULL,
    shown DOUBLE PRECISION NOT NULL,
    expires DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (task, judge, slot)
);
CREATE INDEX IF NOT EXISTS claims_of_judge ON claims (judge);
CREATE TABLE IF NOT EXISTS answers (
    id {key},
    task INTEGER NOT NULL REFERENCES tasks (id),
    judge INTEGER NOT NULL REFERENCES judges (id),
    slot INTEGER NOT NULL,
    answer INTEGER NOT NULL CHECK (answer IN (0, 1)),
    shown DOUBLE PRECISION NOT NULL,
    submitted DOUBLE PRECISION NOT NULL,
    confidence DOUBLE PRECISION CHECK (confidence BETWEEN 0 AND 1),
    explanation TEXT,
    UNIQUE (task, judge, slot)
);
CREATE INDEX IF NOT EXISTS answers_of_judge ON answers (judge, submitted);
CREATE TABLE IF NOT EXISTS skips (
    task INTEGER NOT NULL REFERENCES tasks (id),
    judge INTEGER NOT NULL REFERENCES judges (id),
    at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (task, judge)
);
CREATE TABLE IF NOT EXISTS settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""

ADDED_COLUMNS = {
    "judges": ("revoked DOUBLE PRECISION", "quota INTEGER", "code TEXT", "consented DOUBLE PRECISION"),
    "tasks": ("gold INTEGER", "feedback TEXT"),
    "answers": ("confidence DOUBLE PRECISION", "explanation TEXT"),
}
"""Columns a database made by an earlier version lacks, added when it is opened."""

BATCH = 256
"""Most write transactions of one process committed together (:class:`Committer`)."""

IDLE_SECONDS = 5.0
"""How long a :class:`Committer` waits for work before its thread ends (the next write starts another)."""


class Committer:
    """Group commit: the process's one writer thread for a database. Request threads queue their write
    transactions; the writer runs all that wait back to back in one transaction of the database,
    each in a savepoint of its own (one refused or failing rolls back alone), and acknowledges each
    only once that transaction committed: many answers per fsync, each as durable as if alone.
    Writers of other processes queue on the database's own lock (``BEGIN IMMEDIATE``)."""

    _running: ClassVar[dict[tuple[int, str], Committer]] = {}
    _guard: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, key: tuple[int, str], connect: Callable[[], Any]):
        self._key, self._connect = key, connect
        self._queue: queue.SimpleQueue[tuple[Callable[[Any], Any], Future[Any]]] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name=f"judge store writer {key[1]}", daemon=True).start()

    @classmethod
    def start(cls, location: str, connect: Callable[[], Any], work: Callable[[Any], Any]) -> Future[Any]:
        """``work(db)`` queued for a write transaction on the database at ``location``: its result, once
        committed, in the future returned (an event loop awaits it without a thread of its own waiting)."""
        done: Future[Any] = Future()
        key = (os.getpid(), location)
        with cls._guard:
            committer = cls._running.get(key) or cls._running.setdefault(key, cls(key, connect))
            committer._queue.put((work, done))
        return done

    def _serve(self) -> None:
        db = None
        try:
            db = self._connect()
            while True:
                try:
                    batch = [self._queue.get(timeout=IDLE_SECONDS)]
                except queue.Empty:
                    with self._guard:
                        if self._queue.empty():
                            del self._running[self._key]
                            return
                    continue
                while len(batch) < BATCH and not self._queue.empty():
                    batch.append(self._queue.get())
                self._commit(db, batch)
        except BaseException as err:  # the connection failed: the waiting writers learn why
            with self._guard:
                self._running.pop(self._key, None)
            while not self._queue.empty():
                self._queue.get()[1].set_exception(err)
        finally:
            if db is not None:
                db.close()

    @staticmethod
    def _commit(db: Any, batch: list[tuple[Callable[[Any], Any], Future[Any]]]) -> None:
        results: list[tuple[Future[Any], Any, BaseException | None]] = []
        alone = len(batch) == 1  # no savepoint: its failure rolls back the whole transaction
        try:
            db.begin()
            for work, done in batch:
                if not alone:
                    db.execute("SAVEPOINT work")
                try:
                    result = work(db)
                except Exception as err:
                    if alone:
                        db.rollback()
                        done.set_exception(err)
                        return
                    db.execute("ROLLBACK TO SAVEPOINT work")
                    results.append((done, None, err))
                else:
                    results.append((done, result, None))
                if not alone:
                    db.execute("RELEASE SAVEPOINT work")
            db.commit()
        except Exception as err:
            with contextlib.suppress(Exception):
                db.rollback()
            for _, done in batch:
                done.set_exception(err)
            return
        for done, result, error in results:
            if error is None:
                done.set_result(result)
            else:
                done.set_exception(error)


class SQLite:
    """A connection to the store in a SQLite file: WAL, ``synchronous=FULL``, write transactions
    ``BEGIN IMMEDIATE`` (the database's one writer lock, waited on up to ``busy`` seconds)."""

    key = "INTEGER PRIMARY KEY"

    def __init__(self, path: Path, busy: float):
        self._db = sqlite3.connect(path, timeout=busy, isolation_level=None, check_same_thread=False)
        self._db.row_factory = sqlite3.Row
        self._db.execute(f"PRAGMA busy_timeout = {int(busy * 1000)}")
        if self._db.execute("PRAGMA journal_mode = WAL").fetchone()[0] != "wal":
            raise sqlite3.OperationalError(f"{path}: WAL mode is not available")
        self._db.execute("PRAGMA synchronous = FULL")
        self._db.execute("PRAGMA foreign_keys = ON")

    def execute(self, sql: str, parameters: Any = ()) -> Any:
        return self._db.execute(sql, parameters)

    def executemany(self, sql: str, rows: Iterable[Any]) -> None:
        self._db.executemany(sql, rows)

    def begin(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self._db.execute("COMMIT")

    def rollback(self) -> None:
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")

    def upgrade(self) -> None:
        """Add the columns a database made by an earlier version lacks."""
        for table, columns in ADDED_COLUMNS.items():
            if self._db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone():
                have = {row["name"] for row in self._db.execute(f"PRAGMA table_info({table})")}
                for column in columns:
                    if column.split()[0] not in have:
                        self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column}")

    def close(self) -> None:
        self._db.close()


class Row(tuple):
    """A result row read by position or by column name, as :class:`sqlite3.Row`."""

    names: dict[str, int]

    def __getitem__(self, key: Any) -> Any:
        return super().__getitem__(self.names[key] if isinstance(key, str) else key)

    def keys(self) -> list[str]:
        return list(self.names)


def _rows(cursor: Any) -> Callable[[Sequence[Any]], Row]:
    names = {column.name: i for i, column in enumerate(cursor.description or ())}

    def row(values: Sequence[Any]) -> Row:
        made = Row(values)
        made.names = names
        return made

    return row


@lru_cache(maxsize=256)
def postgres_sql(sql: str) -> str:
    """The store's SQL (``?`` and ``:name`` parameters) as psycopg takes it (``%s``, ``%(name)s``)."""
    return re.sub(r"(?<![:\w]):([a-z_]+)", r"%(\1)s", sql.replace("%", "%%").replace("?", "%s"))


class PostgreSQL:
    """A connection to the store in a PostgreSQL database (psycopg, the ``postgres`` extra): write
    transactions take one advisory lock first, so writers run one at a time, as on SQLite."""

    key = "INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"
    LOCK = 0x6A75646765
    """The advisory lock of the store's writers ("judge")."""

    def __init__(self, url: str):
        import psycopg  # the postgres extra's

        self._db = psycopg.connect(url, autocommit=True, row_factory=_rows)

    def execute(self, sql: str, parameters: Any = ()) -> Any:
        return self._db.execute(postgres_sql(sql), parameters or None)

    def executemany(self, sql: str, rows: Iterable[Any]) -> None:
        rows = list(rows)
        if rows:
            self._db.cursor().executemany(postgres_sql(sql), rows)

    def begin(self) -> None:
        self._db.execute(f"BEGIN; SELECT pg_advisory_xact_lock({self.LOCK})")  # one round trip

    def commit(self) -> None:
        self._db.execute("COMMIT")

    def rollback(self) -> None:
        self._db.rollback()

    def upgrade(self) -> None:
        """Nothing: no earlier version stored judges in PostgreSQL."""

    def close(self) -> None:
        self._db.close()


def is_url(location: str | os.PathLike[str]) -> bool:
    """Whether ``location`` names a PostgreSQL database (``postgresql://...``) rather than a SQLite file."""
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


def redacted(location: str | os.PathLike[str]) -> str:
    """``location`` to show a person: a PostgreSQL URL without its password."""
    return re.sub(r"^(postgres(?:ql)?://[^:/@]*):[^@/]*@", r"\1:***@", str(location))


Database = SQLite | PostgreSQL
"""A connection to the store's database, in either dialect."""

Record = Row | sqlite3.Row
"""A row read from it, by position or by column name."""


def connect(location: str | Path, busy: float) -> Database:
    """A new connection to the database at ``location`` (a SQLite file, or a PostgreSQL URL)."""
    return SQLite(location, busy) if isinstance(location, Path) else PostgreSQL(location)


def create_tables(db: Database) -> None:
    """The store's tables, made where missing, and an earlier version's columns added."""
    db.upgrade()
    for statement in SCHEMA.replace("{key}", db.key).split(";"):
        if statement.strip():
            db.execute(statement)
