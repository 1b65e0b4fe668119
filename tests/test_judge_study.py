"""The study features of the judges' app: answers with a confidence and an explanation, Unsure /
skip, time from the first render (a GET holds nothing), consent and instructions in Markdown, gold
questions with feedback and per-judge accuracy, quotas with completion codes, agreement and export."""

from __future__ import annotations

import csv
import io
import json
import time

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("multipart")
pytest.importorskip("krippendorff")

from fastapi.testclient import TestClient

from debatekit.judge.server import create_app
from debatekit.judge.store import GOLD_EVERY, Store, TaskKey
from debatekit.judge.study import export_csv, markdown_html, read_gold
from judge_helpers import form_fields

QUESTION = "Does Study B measure weekly quiz scores?"


@pytest.fixture
def store(tmp_path) -> Store:
    return Store(tmp_path / "judges.sqlite")


def client_for(store: Store, **pages) -> TestClient:
    return TestClient(create_app(store.path, **pages))


def answer(client: TestClient, token: str, **data) -> object:
    fields = form_fields(client.get(f"/j/{token}").text)
    return client.post(f"/j/{token}/answer", data={**fields, **data}, follow_redirects=False)


def test_a_confidence_gives_the_oracle_its_bit_and_is_kept_with_the_explanation(store) -> None:
    task = store.task_for(TaskKey("r", 0, "verifier", 0), QUESTION, (), 3, 1)
    tokens = [store.invite(name)[1] for name in ("ann", "bob", "cy")]
    client = client_for(store)
    why = '<script>alert("x")</script> =1+1'
    for token, p in zip(tokens, ("0.8", "0.25", "1")):
        assert answer(client, token, answer="submit", confidence=p, explanation=why).status_code == 303
    answers = store.answers(task.id)
    assert [(a.answer, a.confidence) for a in answers] == [(1, 0.8), (0, 0.25), (1, 1.0)]
    assert {a.explanation for a in answers} == {why}  # kept as written; every page escapes it
    (row, *_) = csv.DictReader(io.StringIO(export_csv(store.export())))
    assert row["explanation"] == why and row["confidence"] == "0.8" and row["answer"] == "1"


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ({"answer": "submit", "confidence": "0.5"}, "neither yes nor no"),
        ({"answer": "submit"}, "neither yes nor no"),
        ({"answer": "yes", "confidence": "0.3"}, "disagree"),
        ({"answer": "submit", "confidence": "1.5"}, "from 0 to 1"),
        ({"answer": "submit", "confidence": "nan"}, "from 0 to 1"),
        ({"answer": "submit", "confidence": "0.9", "explanation": "x" * 2001}, "explanation"),
    ],
)
def test_an_answer_that_says_nothing_clear_is_refused_and_changes_nothing(store, data, says) -> None:
    task = store.task_for(TaskKey("r", 0, "verifier", 0), QUESTION, (), 1, 1)
    token = store.invite("ann")[1]
    response = answer(client_for(store), token, **data)
    assert response.status_code == 422 and says in response.text
    assert store.answers(task.id) == [] and store.export()["skips"] == []


def test_unsure_returns_the_question_to_the_other_judges_and_is_recorded(store) -> None:
    task = store.task_for(TaskKey("r", 0, "verifier", 0), QUESTION, (), 1, 1)
    ann, ann_token = store.invite("ann")
    bob_token = store.invite("bob")[1]
    client = client_for(store)
    fields = form_fields(client.get(f"/j/{ann_token}").text)
    assert client.post(f"/j/{ann_token}/shown", data=fields).status_code == 204  # ann holds the one slot
    assert "idle" in client.get(f"/j/{bob_token}").text
    skipped = client.post(f"/j/{ann_token}/answer", data={**fields, "answer": "skip"}, follow_redirects=False)
    assert skipped.headers["location"] == f"/j/{ann_token}?skipped=true"
    assert "other judges will answer" in client.get(skipped.headers["location"]).text
    assert store.peek(ann) is None  # never asked of ann again
    assert answer(client, bob_token, answer="submit", confidence="0.1").status_code == 303
    assert [(a.judge_name, a.answer) for a in store.answers(task.id)] == [("bob", 0)]
    assert [(s["task"], s["judge"]) for s in store.export()["skips"]] == [(task.id, ann.id)]
    assert [(j["name"], j["answers"], j["skips"]) for j in store.statistics()] == [("ann", 0, 1), ("bob", 1, 0)]


def test_a_get_holds_nothing_and_the_time_runs_from_the_first_render(store) -> None:
    task = store.task_for(TaskKey("r", 0, "verifier", 0), QUESTION, (), 1, 1)
    ann, ann_token = store.invite("ann")
    bob_token = store.invite("bob")[1]
    client = client_for(store)
    for _ in range(3):  # a link preview, a bot: nothing held
        client.get(f"/j/{ann_token}")
    assert store.open_tasks()[0]["held"] == 0
    bob = form_fields(client.get(f"/j/{bob_token}").text)
    assert bob["task"] == str(task.id)  # still shown to the others
    first = time.time() - 30
    assert store.hold(ann, task.id, 0, now=first)  # ann's page rendered 30 s ago
    assert store.hold(ann, task.id, 0, now=first + 20)  # rendered again: still shown at the first render
    assert client.post(f"/j/{bob_token}/shown", data=bob).status_code == 409  # bob's page moves on
    assert answer(client, ann_token, answer="yes", confidence="0.7").status_code == 303
    (given,) = store.answers(task.id)
    assert given.shown == pytest.approx(first) and given.submitted - given.shown >= 30
    late = client.post(f"/j/{bob_token}/answer", data={**bob, "answer": "no"}, follow_redirects=False)
    assert late.headers["location"] == f"/j/{bob_token}?note=closed"
    assert len(store.answers(task.id)) == 1
