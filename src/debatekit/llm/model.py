"""The model every caller uses: a :class:`~debatekit.llm.backend.Backend` behind bounded
concurrency, a per-call time limit, retries and an on-disk cache, with usage counted by role
(issue 11, item 1; the shape of Inspect's ``Model.generate`` and its ``GenerateConfig``).

- Concurrency: at most ``Limits.max_connections`` calls of one model in flight (a semaphore held
  for each attempt, not while backing off).
- Time: each attempt ends within ``Limits.timeout`` seconds (:class:`ModelTimeout`).
- Retries (tenacity): up to ``Limits.max_retries`` more attempts after a :class:`Transient`
  failure (429, 5xx, timeouts, lost connections), never after a :class:`Rejected` or
  :class:`Unparseable` one; the wait doubles from ``Limits.backoff`` and is at least the
  server's Retry-After, both capped at ``Limits.max_wait``. So a call ends, answered or raising,
  within about (max_retries + 1) * timeout + max_retries * max_wait seconds.
- Cache: a completion is stored under the hash of the whole request and the backend's endpoint
  (:func:`cache_key`), in SQLite (WAL mode, so processes share one file); a request met before is
  answered from it with no model call, so a rerun of the same debates makes none. The caller's
  ``check`` runs before a completion is stored (and on a stored one before it is returned): an
  unusable completion (too long, say) is never kept, so a rerun asks again once the server has
  recovered. A request that
  differs in anything (a seed, a temperature, one character of a message) is a new call; a cached
  completion is returned even for a request sampled at temperature > 0, as Inspect's cache does.
- Merging: identical requests in flight at once are one call with many waiters (issue 22): the
  first starts it, the others await its completion (or its error) and count a cache hit; each
  caller's ``check`` runs on it. The call is a task of its own, so a waiter that gives up (a move
  past its time limit) stops no one else's.
- Usage: tokens, cost (when a :class:`Price` is set), model calls (attempts, failed ones too) and
  cache hits (requests answered with no call: from the cache or by a call in flight), per
  :class:`~debatekit.ledger.Role`.

The engine plays debates on event loops of its own (one ``asyncio.run`` per call, worker
threads); every call of every model runs on one event loop in a daemon thread of its own, so one
semaphore, one connection pool and one set of counts serve them all, whichever loop awaits.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt, wait_exponential

from debatekit.ledger import Role
from debatekit.llm.backend import Backend, Completion, ModelError, ModelTimeout, Request, Transient

_CACHE_VERSION = 1
"""Part of every cache key: raised when a stored completion's meaning changes."""

Check = Callable[[Completion], object]
"""What a caller can use: raises a :class:`~debatekit.llm.backend.ModelError` for a completion it cannot."""


@dataclass(frozen=True)
class Limits:
    """How calls of one model are bounded: calls in flight, seconds per attempt, retries after a
    transient failure, the first backoff in seconds and the longest wait between attempts."""

    max_connections: int = 4
    timeout: float = 120.0
    max_retries: int = 5
    backoff: float = 1.0
    max_wait: float = 60.0


@dataclass(frozen=True)
class Price:
    """US dollars per million prompt (``input``) and completion (``output``) tokens."""

    input: float
    output: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1e6


@dataclass(frozen=True)
class Usage:
    """What one role's calls of a model used: tokens of the completions made (not of cache hits),
    their cost when a price is set (None otherwise), attempts made at the model, cache hits."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    calls: int = 0
    cache_hits: int = 0

    def __add__(self, other: Usage) -> Usage:
        costs = [c for c in (self.cost, other.cost) if c is not None]
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            sum(costs) if costs else None,
            self.calls + other.calls,
            self.cache_hits + other.cache_hits,
        )


def cache_key(endpoint: str, request: Request) -> str:
    """The SHA-256 of everything that decides a completion: the endpoint and the whole request."""
    whole = {"version": _CACHE_VERSION, "endpoint": endpoint, "request": dataclasses.asdict(request)}
    return hashlib.sha256(json.dumps(whole, sort_keys=True).encode()).hexdigest()


class Cache:
    """Completions by :func:`cache_key` in a SQLite file, safe for threads and processes to share
    (one connection per operation, write-ahead log, waits for a writer's lock)."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._execute("PRAGMA journal_mode=WAL")
        self._execute("CREATE TABLE IF NOT EXISTS completions (key TEXT PRIMARY KEY, completion TEXT NOT NULL)")

    def _execute(self, sql: str, parameters: tuple[str, ...] = ()) -> list[Any]:
        db = sqlite3.connect(self.path, timeout=60)
        try:
            with db:
                return db.execute(sql, parameters).fetchall()
        finally:
            db.close()

    def get(self, key: str) -> Completion | None:
        rows = self._execute("SELECT completion FROM completions WHERE key = ?", (key,))
        if not rows:
            return None
        data = json.loads(rows[0][0])
        logprobs = tuple(tuple((token, logprob) for token, logprob in position) for position in data.pop("logprobs"))
        return Completion(**data, logprobs=logprobs)

    def put(self, key: str, completion: Completion) -> None:
        stored = json.dumps(dataclasses.asdict(completion))
        self._execute("INSERT OR REPLACE INTO completions (key, completion) VALUES (?, ?)", (key, stored))


class Model:
    """``backend`` under ``limits``, answering from ``cache`` when it can, counting usage by role
    (priced by ``price`` when given). ``name`` is the model a :class:`Request` names."""

    def __init__(
        self, name: str, backend: Backend, limits: Limits, cache: Cache | None = None, price: Price | None = None
    ):
        self.name, self.backend, self.limits, self.cache, self.price = name, backend, limits, cache, price
        self._slots = asyncio.Semaphore(limits.max_connections)
        self._usage: dict[Role, Usage] = {}
        self._flights: dict[str, asyncio.Task[Completion]] = {}

    @property
    def usage(self) -> dict[Role, Usage]:
        """Usage so far, by the role each call was made for."""
        return dict(self._usage)

    def total(self) -> Usage:
        """Usage so far, all roles together."""
        return sum(self.usage.values(), Usage())

    async def complete(self, request: Request, role: Role, check: Check | None = None) -> Completion:
        """The completion of ``request``, made for ``role``: from the cache, else from the backend
        under the limits; raises the last :class:`~debatekit.llm.backend.ModelError` otherwise.
        ``check(completion)`` raises for a completion the caller cannot use: it is then neither
        cached nor taken from the cache."""
        future: Future[Completion] = asyncio.run_coroutine_threadsafe(
            self._complete(request, role, check), _models_loop()
        )
        return await asyncio.wrap_future(future)

    async def _complete(self, request: Request, role: Role, check: Check | None) -> Completion:
        key = cache_key(self.backend.endpoint, request)
        if self.cache is not None:
            cached = await asyncio.to_thread(self.cache.get, key)
            if cached is not None and _usable(cached, check):
                self._count(role, Usage(cache_hits=1))
                return cached
        flight = self._flights.get(key)
        if flight is not None:  # the same request in flight: wait for its completion
            completion = await asyncio.shield(flight)
            self._count(role, Usage(cache_hits=1))
            if check is not None:
                check(completion)
            return completion
        flight = self._flights[key] = asyncio.ensure_future(self._called(request, role, key, check))
        flight.add_done_callback(lambda done: self._landed(key, done))
        return await asyncio.shield(flight)

    async def _called(self, request: Request, role: Role, key: str, check: Check | None) -> Completion:
        """The backend's completion of ``request`` under the limits and retries, its usage counted
        for ``role``, checked by ``check`` and then cached under ``key``."""
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.limits.max_retries + 1),
            wait=self._wait,
            retry=retry_if_exception_type(Transient),
            reraise=True,
        )
        completion = await retrying(self._attempt, request, role)
        cost = None if self.price is None else self.price.cost(completion.prompt_tokens, completion.completion_tokens)
        self._count(role, Usage(completion.prompt_tokens, completion.completion_tokens, cost))
        if check is not None:
            check(completion)
        if self.cache is not None:
            await asyncio.to_thread(self.cache.put, key, completion)
        return completion

    def _landed(self, key: str, flight: asyncio.Task[Completion]) -> None:
        """A call in flight ended: later requests go to the cache (or call again after an error);
        its error is retrieved here, so one whose waiters all gave up is not reported unretrieved."""
        if self._flights.get(key) is flight:
            del self._flights[key]
        if not flight.cancelled():
            flight.exception()

    async def _attempt(self, request: Request, role: Role) -> Completion:
        async with self._slots:
            self._count(role, Usage(calls=1))
            try:
                async with asyncio.timeout(self.limits.timeout):
                    return await self.backend.complete(request)
            except TimeoutError as err:
                raise ModelTimeout(f"{self.name}: no completion within {self.limits.timeout:g} s") from err

    def _wait(self, state: RetryCallState) -> float:
        """Seconds before the next attempt: the exponential backoff, or the server's Retry-After
        when longer, at most ``max_wait``."""
        backoff = wait_exponential(multiplier=self.limits.backoff, max=self.limits.max_wait)(state)
        failure = state.outcome.exception() if state.outcome is not None else None
        asked = failure.retry_after if isinstance(failure, Transient) and failure.retry_after is not None else 0.0
        return min(max(backoff, asked), self.limits.max_wait)

    def _count(self, role: Role, usage: Usage) -> None:
        self._usage[role] = self._usage.get(role, Usage()) + usage


def _usable(completion: Completion, check: Check | None) -> bool:
    """Whether ``check`` accepts ``completion`` (a stored one an earlier version kept unchecked)."""
    if check is None:
        return True
    try:
        check(completion)
    except ModelError:
        return False
    return True


_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def _models_loop() -> asyncio.AbstractEventLoop:
    """The event loop all model calls run on, started in a daemon thread on first use."""
    global _loop
    with _loop_lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="debatekit-models", daemon=True).start()
        return _loop
