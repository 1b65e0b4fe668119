"""The oracle "people" (debatekit.judge.People): each verifier query becomes one task keyed by the
query it answers, the debate awaits R answers from distinct judges, a task asked again after a
crash is found with its answers (never duplicated), and a cross-examination debate on a
natural-language problem reaches the verdict its judge's answer decides."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("multipart")
pytest.importorskip("httpx")

import httpx
from markupsafe import escape

from debatekit.analysis.montecarlo import Oracles, make_instance, run
from debatekit.judge import People, Store
from debatekit.judge.store import TaskKey
from debatekit.ledger import Role
from debatekit.oracle import Asking, Question, consulted, here, in_debate
from debatekit.problems import PROBLEMS
from debatekit.protocols.registry import PROTOCOLS
from judge_helpers import form_fields, served

RNG = np.random.default_rng(0)
QUESTION = Question("Does step 4 follow from 2 and 3?", ("step 2: the lanes opened in 2022", "step 3: rides rose"))


def asked(people: People, query: Any, r: int | None, debate: int = 0, number: int = 0, timeout: float = 20.0) -> int:
    """The answer the verifier gets when it asks ``query`` (``r`` times, or once when None) as query
    ``number`` of debate ``debate``, as the engine asks it (:func:`debatekit.oracle.consulted`)."""

    def within_debate() -> int:
        in_debate("run-p", debate)
        call = (lambda: people.sample(query, RNG)) if r is None else (lambda: people.sample_count(query, r, RNG))
        return asyncio.run(asyncio.wait_for(consulted(here(Role.VERIFIER, number), call), timeout))

    return contextvars.copy_context().run(within_debate)


def judges_answer(store: Store, answers: list[int], deadline: float = 20.0) -> threading.Thread:
    """A thread in which one new judge per answer waits for a task and submits it through the store."""

    def answer_all() -> None:
        own = Store(store.path)
        for answer in answers:
            judge = own.invite("judge")[0]
            end = time.monotonic() + deadline
            while (offer := own.offer(judge)) is None and time.monotonic() < end:
                time.sleep(0.01)
            assert offer is not None
            own.submit(judge, offer.task.id, offer.slot, answer)

    thread = threading.Thread(target=answer_all, daemon=True)
    thread.start()
    return thread


@pytest.fixture
def db(tmp_path):
    return tmp_path / "judges.sqlite"


def test_people_answer_only_within_a_debate(db) -> None:
    people = People(db, poll=0.01)
    assert people.waits and people.probability(QUESTION) is None and people.deterministic is None
    with pytest.raises(ValueError, match="only a run's debates"):
        people.sample(QUESTION, RNG)
    assert Store(db).export()["tasks"] == []


def test_one_answer_to_a_question_shown_with_its_context(db) -> None:
    people = People(db, poll=0.01)
    helper = judges_answer(people.store, [1])
    assert asked(people, QUESTION, None) == 1
    helper.join(5)
    (task,) = people.store.export()["tasks"]
    assert (task["question"], tuple(task["context"])) == (QUESTION.text, QUESTION.context)
    assert (task["run"], task["debate"], task["role"], task["number"], task["needed"]) == ("run-p", 0, "verifier", 0, 1)


def test_any_other_query_is_shown_as_json(db) -> None:
    people = People(db, poll=0.01)
    helper = judges_answer(people.store, [0])
    assert asked(people, (3, (1, 0)), None, number=5) == 0
    helper.join(5)
    (task,) = people.store.export()["tasks"]
    assert task["question"] == "[3, [1, 0]]" and task["context"] == [] and task["number"] == 5


def test_r_answers_come_from_distinct_judges_and_are_recorded(db) -> None:
    people = People(db, poll=0.01)
    helper = judges_answer(people.store, [1, 0, 1])
    assert asked(people, QUESTION, 3) == 2
    helper.join(5)
    judgements = people.judgements(Asking("run-p", 0, Role.VERIFIER, 0))
    assert [j["answer"] for j in judgements] == [1, 0, 1]
    assert len({j["judge"] for j in judgements}) == 3
    assert all(j["shown"] <= j["submitted"] for j in judgements)
    assert not any("token" in key for j in judgements for key in j)
    assert people.judgements(Asking("run-p", 0, Role.VERIFIER, 1)) == []


def test_a_query_asked_again_after_a_crash_keeps_its_task_and_answers(db) -> None:
    first = People(db, poll=0.01)
    helper = judges_answer(first.store, [1])
    with pytest.raises(TimeoutError):  # the debate died waiting: one of its two answers is in
        asked(first, QUESTION, 2, timeout=0.5)
    helper.join(5)
    (before,) = first.store.export()["tasks"]
    resumed = People(db, poll=0.01)
    helper = judges_answer(resumed.store, [1])
    assert asked(resumed, QUESTION, 2) == 2
    helper.join(5)
    export = resumed.store.export()
    assert [t["id"] for t in export["tasks"]] == [before["id"]]
    assert len(export["judgements"]) == 2 and len({j["judge"] for j in export["judgements"]}) == 2
    started = time.monotonic()
    assert asked(People(db, poll=5.0), QUESTION, 2) == 2  # answered already: no wait, no new task
    assert time.monotonic() - started < 1.0 and len(resumed.store.export()["tasks"]) == 1


def test_a_different_budget_under_the_same_key_is_the_users_mistake(db) -> None:
    from debatekit.mistakes import UserError

    Store(db).task_for(TaskKey("run-p", 0, "verifier", 0), QUESTION.text, QUESTION.context, 2, 1)
    with pytest.raises(UserError, match="--answers-per-judge 2: this run's questions were asked with"):
        asked(People(db, answers_per_judge=2, poll=0.01), QUESTION, 2)
    with pytest.raises(UserError, match="different question or budget; rerun without --resume"):
        asked(People(db, poll=0.01), QUESTION, 3)


def answer_over_http(url: str, token: str, answer: str, deadline: float = 20.0) -> list[str]:
    """A judge who reloads their page until a question comes, then answers it; the pages seen."""
    pages, end = [], time.monotonic() + deadline
    with httpx.Client(base_url=url) as client:
        while not (fields := form_fields(page := client.get(f"/j/{token}").text)):
            assert time.monotonic() < end, "no question came"
            time.sleep(0.02)
        pages.append(page)
        done = client.post(f"/j/{token}/answer", data={**fields, "answer": answer}, follow_redirects=False)
        assert done.status_code == 303
    return pages


def test_people_answered_over_http(db) -> None:
    people = People(db, poll=0.01)
    tokens = [people.store.invite(name)[1] for name in ("ann", "bob")]
    with served(db) as url:
        answers = zip(tokens, ("yes", "no"), strict=True)
        threads = [threading.Thread(target=answer_over_http, args=(url, t, a)) for t, a in answers]
        for t in threads:
            t.start()
        assert asked(people, QUESTION, 2) == 1
        for t in threads:
            t.join(10)
    assert sorted(j["judge_name"] for j in people.store.export()["judgements"]) == ["ann", "bob"]


@pytest.mark.parametrize(("answer", "verdict"), [("yes", 1), ("no", 0)])
def test_a_debate_waits_for_a_person_and_their_answer_decides_it(db, answer, verdict) -> None:
    """Cross-examination on the caffeine problem (seed 1): dishonest Bob points at an oracle step,
    so the verifier asks its one question; honest Alice's claim there is yes, so a judge's no makes
    her lose. The person sees that question and its context, and the verdict follows their answer."""
    spec, instance = PROTOCOLS["cross-exam"], make_instance(PROBLEMS["caffeine"], 26, True, 1)
    alice, bob = spec.strategies[Role.ALICE]["honest"], spec.strategies[Role.BOB]["point-random"]
    token = Store(db).invite("ann")[1]
    people = People(db, poll=0.02)
    with served(db) as url:
        pages: list[str] = []
        person = threading.Thread(target=lambda: pages.extend(answer_over_http(url, token, answer)))
        person.start()
        result = run(spec, instance, alice, bob, 1, 1, oracles=Oracles(instance.oracle, people))
        person.join(10)
    assert result.accept_rate == verdict
    (task,) = people.store.export()["tasks"]
    asked_question = Question(task["question"], tuple(task["context"]))
    assert instance.oracle.probability(asked_question) == 1.0  # the very question the verifier asks
    assert task["context"] and all(str(escape(line)) in pages[0] for line in task["context"])
    assert task["role"] == "verifier" and task["debate"] == 0


def test_run_asks_people_from_the_command_line_and_records_who_answered(db, tmp_path) -> None:
    """``run --verifier-oracle people --judge-db``: the provers consult the problem's own oracle, the
    verifier's query becomes a task, and the debate's record names the judge and when they answered
    (never their token)."""
    from debatekit.cli.main import main
    from debatekit.engine.record import read_records

    store = Store(db)
    store.invite("away")  # the panel a run checks before it asks: one judge now, the helper's soon
    helper = judges_answer(store, [0])
    record = tmp_path / "people.jsonl"
    argv = ["run", "cross-exam", "--problem", "caffeine", "--bob", "point-random", "--trials", "1", "--seed", "1",
            "--verifier-oracle", "people", "--judge-db", str(db), "--record", str(record), "--json"]  # fmt: skip
    assert main(argv) == 0
    helper.join(10)
    (event,) = [e for r in read_records(record) for e in r["events"] if e.get("query") == "verifier"]
    (judged,) = event["judges"]
    assert event["answer"] == judged["answer"] == 0 and judged["judge_name"] == "judge"
    assert not any("token" in key for key in judged)
    assert main(["replay", str(record)]) == 0
