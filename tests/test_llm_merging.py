"""Identical model requests in flight at once are one call with many waiters (issue 22, point 3,
"Waste"), with a fake backend in process that counts its calls: before, ``--concurrency 4``
made 4x the calls of ``--concurrency 1`` (each debate asked every question while the others
were asking it too, none of them cached yet)."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest

pytest.importorskip("tenacity")

from debatekit.analysis.montecarlo import make_instance, run
from debatekit.engine.record import read_records
from debatekit.ledger import Role
from debatekit.llm.backend import Completion, Rejected, Request
from debatekit.llm.model import Cache, Limits, Model
from debatekit.llm.players import cross_exam, recursive
from debatekit.llm.players.base import LLM
from debatekit.problems import PROBLEMS
from debatekit.protocols.registry import PROTOCOLS

CROSS_EXAM = PROTOCOLS["cross-exam"]


class Slow:
    """A backend that answers yes (P = 0.7) after ``delay`` seconds, or fails with ``failure``;
    it counts its calls and the most in flight at once."""

    endpoint = "fake://slow"

    def __init__(self, delay: float = 0.05, failure: Exception | None = None):
        self.delay, self.failure = delay, failure
        self.calls = self.flying = self.most = 0

    async def complete(self, request: Request) -> Completion:
        self.calls += 1
        self.flying += 1
        self.most = max(self.most, self.flying)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.flying -= 1
        if self.failure is not None:
            raise self.failure
        return Completion("Yes", 10, 1, "length", ((("Yes", math.log(0.7)), ("No", math.log(0.3))),))


def model(backend: Slow, cache: Cache | None = None) -> Model:
    return Model("slow", backend, Limits(max_connections=8, timeout=10.0, max_retries=0), cache)


def ask(text: str) -> Request:
    return Request("slow", (("user", text),), max_tokens=1, top_logprobs=5)


async def many(m: Model, *requests: Request) -> list[Completion | BaseException]:
    return await asyncio.gather(*(m.complete(r, Role.ALICE) for r in requests), return_exceptions=True)


def test_identical_requests_in_flight_are_one_call() -> None:
    backend = Slow()
    m = model(backend)
    answers = asyncio.run(many(m, *[ask("same")] * 5, ask("other")))
    assert backend.calls == 2 and all(isinstance(a, Completion) and a.text == "Yes" for a in answers)
    assert m.usage[Role.ALICE].calls == 2 and m.usage[Role.ALICE].cache_hits == 4
    asyncio.run(many(m, ask("same")))  # no cache and nothing in flight: a new call
    assert backend.calls == 3


def test_a_failed_call_fails_every_waiter_and_is_not_kept(tmp_path: Path) -> None:
    backend = Slow(failure=Rejected("refused"))
    m = model(backend, Cache(tmp_path / "c.sqlite"))
    answers = asyncio.run(many(m, *[ask("same")] * 3))
    assert backend.calls == 1 and all(isinstance(a, Rejected) for a in answers)
    backend.failure = None
    (again,) = asyncio.run(many(m, ask("same")))
    assert isinstance(again, Completion) and backend.calls == 2


def test_a_waiter_that_gives_up_stops_no_one_else(tmp_path: Path) -> None:
    """The first asker's move ran out of time: the call goes on for the second, and is cached."""
    backend = Slow(delay=0.2)
    m = model(backend, Cache(tmp_path / "c.sqlite"))

    async def both() -> tuple[bool, Completion]:
        first = asyncio.create_task(asyncio.wait_for(m.complete(ask("same"), Role.ALICE), 0.05))
        await asyncio.sleep(0.01)
        second = await m.complete(ask("same"), Role.BOB)
        try:
            await first
        except TimeoutError:
            return True, second
        return False, second

    gave_up, second = asyncio.run(both())
    assert gave_up and second.text == "Yes" and backend.calls == 1
    asyncio.run(many(m, ask("same")))
    assert backend.calls == 1  # from the cache


@pytest.mark.parametrize("concurrency", [1, 4])
def test_concurrent_debates_make_the_calls_of_one(tmp_path: Path, concurrency: int) -> None:
    """Four debates of cross-examination with an LLM Alice on caffeine, sharing a cache: each of
    the 10 judged questions is one model call, whether the debates run one at a time or four at
    once (before: 40 calls at concurrency 4)."""
    backend = Slow()
    llm = LLM("fake/slow", model(backend, Cache(tmp_path / "c.sqlite")))
    instance = make_instance(PROBLEMS["caffeine"], PROBLEMS["caffeine"].default_size, True, 0)
    result = run(CROSS_EXAM, instance, cross_exam.alice(llm), CROSS_EXAM.honest(Role.BOB), 4, 0,
                 concurrency=concurrency)  # fmt: skip
    assert result.forfeits == {"alice": 0, "bob": 0}
    assert backend.calls == 10
    usage = llm.model.usage[Role.ALICE]
    assert usage.calls == 10 and usage.calls + usage.cache_hits == 40


def test_a_fresh_copy_reuses_its_debates_answers(tmp_path: Path) -> None:
    """Naive recursion: A's committed proof is asked of a fresh copy of her in debate 0, which
    asked her model every question again (20 aside entries for 10 prompts there, 40 requests in
    all); now a copy reuses what the debate already has: each prompt once per debate, 10 requests
    a debate."""
    backend = Slow(delay=0.0)
    llm = LLM("fake/slow", model(backend, Cache(tmp_path / "c.sqlite")))
    spec = PROTOCOLS["naive-recursive"]
    instance = make_instance(PROBLEMS["caffeine"], PROBLEMS["caffeine"].default_size, True, 0)
    run(spec, instance, recursive.naive_alice(llm), spec.strategies[Role.BOB]["honest"], 3, 0,
        record=tmp_path / "r.jsonl")  # fmt: skip
    for record in read_records(tmp_path / "r.jsonl"):
        prompts = [entry["prompt"] for entry in record["aside"]]
        assert len(prompts) == len(set(prompts)) == 10
    usage = llm.model.usage[Role.ALICE]
    assert backend.calls == usage.calls == 10 and usage.cache_hits == 20
