"""The study features of the judges' app: answers with a confidence and an explanation, Unsure /
skip, time from the first render (a GET holds nothing), consent and instructions in Markdown, gold
questions with feedback and per-judge accuracy, quotas with completion codes, agreement and export."""

from __future__ import annotations

import csv
import io
import json
import re
import time

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("multipart")
pytest.importorskip("krippendorff")

from fastapi.testclient import TestClient

from debatekit.judge.server import create_app
from debatekit.judge.store import GOLD_EVERY, Store, TaskKey
from debatekit.judge.study import export_csv, markdown_html, read_gold
from judge_helpers import form_fields, krippendorff_nominal

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
    for token, p in zip(tokens, ("0.8", "0.25", "1"), strict=True):
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
    assert client.post(f"/j/{bob_token}/shown", data=bob).status_code == 409  # bob's page moves on, saying why
    assert "took the question you were opening" in client.get(f"/j/{bob_token}?note=held").text
    assert answer(client, ann_token, answer="yes", confidence="0.7").status_code == 303
    (given,) = store.answers(task.id)
    assert given.shown == pytest.approx(first) and given.submitted - given.shown >= 30
    late = client.post(f"/j/{bob_token}/answer", data={**bob, "answer": "no"}, follow_redirects=False)
    assert late.headers["location"] == f"/j/{bob_token}?note=closed"
    assert len(store.answers(task.id)) == 1


def test_consent_comes_before_the_first_question_and_instructions_are_on_every_page(store) -> None:
    store.task_for(TaskKey("r", 0, "verifier", 0), QUESTION, (), 1, 1)
    token = store.invite("ann")[1]
    consent = markdown_html("# Consent\n\nYou may stop at any time. <script>alert(1)</script>")
    guide = markdown_html("Read **only** the question. [home](javascript:alert(1))")
    client = client_for(store, instructions=guide, consent=consent)
    first = client.get(f"/j/{token}").text
    assert "You may stop at any time." in first and 'id="agree"' in first and QUESTION not in first
    assert "<script>alert(1)" not in first and "&lt;script&gt;alert(1)&lt;/script&gt;" in first
    form = form_fields(client_for(store).get(f"/j/{token}").text)  # a form from a server without consent
    refused = client.post(f"/j/{token}/answer", data={**form, "answer": "yes"})
    assert refused.status_code == 403 and "consent" in refused.text and store.answers(int(form["task"])) == []
    csrf = dict([re.search(r'name="(csrf)" value="([^"]*)"', first).groups()])
    assert client.post(f"/j/{token}/consent", data={"csrf": "0" * 64}).status_code == 403
    assert store.judge(token).consented is None
    agreed = client.post(f"/j/{token}/consent", data=csrf, follow_redirects=False)
    assert agreed.status_code == 303 and store.judge(token).consented is not None
    page = client.get(f"/j/{token}").text
    assert QUESTION in page and f'href="/j/{token}/instructions"' in page
    shown = client.get(f"/j/{token}/instructions").text
    assert "<strong>only</strong>" in shown and 'href="javascript' not in shown and f'href="/j/{token}"' in shown


def test_gold_questions_are_hidden_among_real_ones_with_feedback_and_accuracy(store, tmp_path) -> None:
    gold_file = tmp_path / "gold.jsonl"
    gold_file.write_text(
        "\n".join(
            json.dumps(g)
            for g in (
                {"question": "Is 7 a prime?", "answer": True, "feedback": "Yes: 7 has no divisor but 1 and 7."},
                {"question": "Is 9 a prime?", "context": ["9 = 3 x 3"], "answer": False},
            )
        )
    )
    assert store.add_gold(read_gold(gold_file)) == 2 and store.add_gold(read_gold(gold_file)) == 0
    real = [store.task_for(TaskKey("r", d, "verifier", 0), f"real {d}?", (), 2, 1) for d in range(2 * GOLD_EVERY)]
    token = store.invite("ann")[1]
    client = client_for(store)
    seen = []
    while (fields := form_fields(page := client.get(f"/j/{token}").text)) and len(seen) < 20:
        seen.append(re.search(r'class="question">(.*?)</p>', page).group(1))
        p = "0.9" if seen[-1] != "Is 9 a prime?" else "0.8"  # ann gets 9 wrong
        done = client.post(f"/j/{token}/answer", data={**fields, "answer": "submit", "confidence": p})
        if seen[-1] == "Is 7 a prime?":
            assert "7 has no divisor" in done.text  # the feedback, once answered
        else:
            assert 'id="feedback"' not in done.text
    golds = [i for i, q in enumerate(seen) if q.startswith("Is ")]
    assert golds == [0, GOLD_EVERY + 1]  # first, then after GOLD_EVERY real ones: hidden among them
    assert sorted(q for q in seen if not q.startswith("Is ")) == sorted(t.question for t in real)
    (stats,) = store.statistics()
    assert (stats["gold_answered"], stats["gold_accuracy"], stats["answers"]) == (2, 0.5, 2 + len(real))
    assert all(t["run"] != "gold" for t in store.open_tasks())  # gold questions never wait as a debate's
    assert all(d["run"] == "r" for d in store.status()["debates"])
    with pytest.raises(ValueError, match="gold"):
        store.task_for(TaskKey("gold", 0, "gold", 0), "Is 7 a prime?", (), 1, 1)  # no debate reads gold


def test_a_quota_ends_with_the_completion_code(store) -> None:
    for d in range(3):
        store.task_for(TaskKey("r", d, "verifier", 0), f"q{d}", (), 1, 1)
    judge, token = store.invite("ann", quota=2)
    client = client_for(store)
    for _ in range(2):
        assert answer(client, token, answer="no").status_code == 303
    page = client.get(f"/j/{token}").text
    assert judge.code and f'<strong id="code">{judge.code}</strong>' in page and not form_fields(page)
    assert store.peek(judge) is None and store.finished(judge)
    assert not store.hold(judge, store.open_tasks()[0]["id"], 0)  # a page made before the quota: nothing held
    assert store.open_tasks()[0]["debate"] == 2  # left for the others
    (row, *_) = csv.DictReader(io.StringIO(export_csv(store.export())))
    assert row["completion_code"] == judge.code


def test_agreement_and_the_export(store, tmp_path, capsys) -> None:
    from debatekit.cli.main import main

    answers = [[1, 1, 0], [0, 0, 0], [1, 1, 1], [1, 0], [0]]
    judges = [store.invite(name)[0] for name in ("ann", "bob", "cy")]
    for d, unit in enumerate(answers):
        task = store.task_for(TaskKey("r", d, "verifier", 0), f"q{d}", (), 3, 1)
        for judge, bit in zip(judges, unit, strict=False):
            assert store.hold(judge, task.id, 0)
            store.submit(judge, task.id, 0, bit, 0.9 if bit else 0.2, "=SUM(A1)" if d == 0 else None)
    store.add_gold([("Is 7 a prime?", (), 1, None)])
    gold_task = store.peek(judges[0]).task
    store.hold(judges[0], gold_task.id, 0)
    store.submit(judges[0], gold_task.id, 0, 0)  # gold: left out of the agreement
    agreement = store.agreement()
    assert agreement["tasks"] == 4 and agreement["answers"] == 11
    assert agreement["krippendorff_alpha"] == pytest.approx(krippendorff_nominal(answers))
    db = str(store.path)
    assert main(["judge", "export", "--db", db, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["agreement"] == agreement and [j["answers"] for j in data["judges"]] == [6, 4, 3]
    assert data["judges"][0]["gold_accuracy"] == 0.0
    out = tmp_path / "answers.csv"
    assert main(["judge", "export", "--db", db, "--format", "csv", "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 13 and sum(r["gold"] == "1" for r in rows) == 1
    assert {r["explanation"] for r in rows if r["debate"] == "0" and r["gold"] == ""} == {"'=SUM(A1)"}
    assert all(float(r["seconds"]) >= 0 for r in rows)


def test_a_database_made_before_the_study_features_opens_with_its_answers(tmp_path) -> None:
    import sqlite3

    path = tmp_path / "old.sqlite"
    old = sqlite3.connect(path)
    old.executescript(
        """
        CREATE TABLE judges (id INTEGER PRIMARY KEY, name TEXT NOT NULL, token_hash TEXT NOT NULL UNIQUE,
            created REAL NOT NULL);
        CREATE TABLE tasks (id INTEGER PRIMARY KEY, run TEXT NOT NULL, debate INTEGER NOT NULL, role TEXT NOT NULL,
            number INTEGER NOT NULL, question TEXT NOT NULL, context TEXT NOT NULL, needed INTEGER NOT NULL,
            per_judge INTEGER NOT NULL, created REAL NOT NULL, closed REAL, UNIQUE (run, debate, role, number));
        CREATE TABLE answers (id INTEGER PRIMARY KEY, task INTEGER NOT NULL, judge INTEGER NOT NULL,
            slot INTEGER NOT NULL, answer INTEGER NOT NULL, shown REAL NOT NULL, submitted REAL NOT NULL,
            UNIQUE (task, judge, slot));
        INSERT INTO judges VALUES (1, 'ann', 'h', 1.0);
        INSERT INTO tasks VALUES (1, 'r', 0, 'verifier', 0, 'q', '[]', 2, 1, 1.0, NULL);
        INSERT INTO answers VALUES (1, 1, 1, 0, 1, 1.0, 3.0);
        """
    )
    old.commit()
    old.close()
    store = Store(path)
    (given,) = store.answers(1)
    assert (given.judge_name, given.answer, given.confidence, given.explanation) == ("ann", 1, None, None)
    assert store.add_gold([("Is 7 a prime?", (), 1, None)]) == 1
    (ann,) = store.statistics()
    assert (ann["answers"], ann["median_seconds"], ann["skips"], ann["completion_code"]) == (1, 2.0, 0, None)
