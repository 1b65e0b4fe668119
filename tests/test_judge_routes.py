"""Every route of the judges' app on FastAPI's TestClient: a judge sees only the next question and
its context lines (doubly-efficient debate: one local step, never the transcript), answers once,
and every malformed or cross-site request gets a clear 4xx and changes nothing."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("multipart")

from fastapi.testclient import TestClient

from debatekit.judge.server import MAX_BODY, create_app
from debatekit.judge.store import Store, TaskKey
from judge_helpers import form_fields

QUESTION = "Does Study B show that caffeine improved exam scores?"
CONTEXT = ("Step 6: Study B has a placebo group", "Step 7: scores were measured blind")
SECRET_STEP = "Alice claims step 9 is 1"  # the rest of the debate: in the store, never on a page


class Setup:
    def __init__(self, tmp_path):
        self.store = Store(tmp_path / "judges.sqlite")
        self.ann, self.ann_token = self.store.invite("ann")
        self.bob, self.bob_token = self.store.invite("bob")
        self.admin = self.store.new_admin_token()
        self.task = self.store.task_for(TaskKey("run-1", 0, "verifier", 0), QUESTION, CONTEXT, 2, 1)
        self.later = self.store.task_for(TaskKey("run-1", 1, "verifier", 0), SECRET_STEP, (), 1, 1)
        self.client = TestClient(create_app(self.store.path))

    def page(self, token: str) -> str:
        response = self.client.get(f"/j/{token}")
        assert response.status_code == 200
        return response.text

    def render(self, token: str) -> dict:
        """The judge's page as a browser renders it: its script's beacon holds the slot; the form's fields."""
        fields = form_fields(self.page(token))
        assert self.client.post(f"/j/{token}/shown", data=fields).status_code == 204
        return fields

    def post(self, token: str, data: dict, **kwargs):
        return self.client.post(f"/j/{token}/answer", data=data, follow_redirects=False, **kwargs)

    def state(self) -> dict:
        return self.store.export()


@pytest.fixture
def s(tmp_path) -> Setup:
    return Setup(tmp_path)


def rows(page: str, table: str) -> list[list[str]]:
    """The cells of each body row of the table ``table`` on ``page``, as text."""
    body = re.search(rf'<table id="{table}"[^>]*>(.*?)</table>', page, re.S).group(1)
    return [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)[1:]]


def visible_text(page: str) -> list[str]:
    """The lines a person reads: the page without its style sheet, tags and blank lines."""
    body = re.sub(r"<style>.*?</style>|<title>.*?</title>", "", page, flags=re.S)
    return [line.strip() for line in re.sub(r"<[^>]+>", "\n", body).splitlines() if line.strip()]


def test_the_judge_sees_only_the_question_and_its_context(s) -> None:
    page = s.page(s.ann_token)
    assert visible_text(page) == [
        "Judge: ann",
        QUESTION,
        "The debater says these earlier steps of the argument came out as below: claims made in the debate, not "
        "checked facts (the step numbers are the argument's own).",
        *CONTEXT,
        "How likely is it that the answer is yes?",
        "surely no",
        "surely yes",
        "Why? (optional)",
        "Submit",
        "Unsure / skip",
        "The debate is waiting for 2 more answers to this question, from 2 in all, each from a different judge.",
    ]
    assert SECRET_STEP not in page and "bob" not in page
    fields = form_fields(page)
    assert fields["task"] == str(s.task.id) and fields["slot"] == "0" and len(fields["csrf"]) == 64


def test_an_answer_is_recorded_and_the_page_moves_on(s) -> None:
    fields = form_fields(s.page(s.ann_token))
    response = s.post(s.ann_token, {**fields, "answer": "yes"})
    assert response.status_code == 303 and response.headers["location"] == f"/j/{s.ann_token}?answered=true"
    assert [(a.judge, a.answer) for a in s.store.answers(s.task.id)] == [(s.ann.id, 1)]
    after = s.client.get(response.headers["location"]).text
    assert "your answer was recorded" in after
    assert SECRET_STEP in after  # ann's next task: the other debate's question (one answer each here)
    bob_page = s.page(s.bob_token)
    assert QUESTION in bob_page and "waiting for 1 more answer to this question" in bob_page
    assert "Submit</button>" in bob_page and "ann" not in bob_page  # nothing of ann's answer


def test_a_double_submit_counts_once(s) -> None:
    fields = form_fields(s.page(s.ann_token))
    assert s.post(s.ann_token, {**fields, "answer": "no"}).status_code == 303
    assert s.post(s.ann_token, {**fields, "answer": "no"}).status_code == 303
    changed = s.post(s.ann_token, {**fields, "answer": "yes"})  # no error page: the next question, and why
    assert changed.status_code == 303 and changed.headers["location"] == f"/j/{s.ann_token}?note=changed"
    after = s.client.get(changed.headers["location"]).text
    assert "your first answer stands" in after and SECRET_STEP in after
    assert [a.answer for a in s.store.answers(s.task.id)] == [0]


@pytest.mark.parametrize(
    ("case", "status", "says"),
    [
        ("unknown task", 403, "not issued to you"),
        ("another judge's form", 403, "not issued to you"),
        ("forged csrf", 403, "not issued to you"),
        ("missing csrf", 422, "csrf"),
        ("answer maybe", 422, "yes or no"),
        ("answer 2", 422, "yes or no"),
        ("slot not a number", 422, "slot"),
        ("json body", 422, "malformed request"),
        ("cross-site origin", 403, "from this site"),
        ("cross-site referer", 403, "from this site"),
        ("cross-site fetch", 403, "from this site"),
        ("null origin", 403, "from this site"),
        ("unknown judge", 404, "not known"),
    ],
)
def test_a_malformed_answer_gets_a_clear_4xx_and_changes_nothing(s, case, status, says) -> None:
    ann = form_fields(s.page(s.ann_token))
    s.page(s.bob_token)
    before = s.state()
    token, data, headers = s.bob_token, {**ann, "answer": "yes"}, {}
    own = {**form_fields(s.page(s.bob_token)), "answer": "yes"}
    if case == "unknown task":
        data = {**own, "task": "999"}
    elif case == "forged csrf":
        data = {**own, "csrf": "0" * 64}
    elif case == "missing csrf":
        data = {k: v for k, v in own.items() if k != "csrf"}
    elif case.startswith("answer"):
        data = {**own, "answer": case.split()[1]}
    elif case == "slot not a number":
        data = {**own, "slot": "first"}
    elif case.startswith(("cross-site", "null")):
        data = own
        headers = {
            "cross-site origin": {"origin": "https://evil.example"},
            "cross-site referer": {"referer": "https://evil.example/page"},
            "cross-site fetch": {"sec-fetch-site": "cross-site"},
            "null origin": {"origin": "null"},
        }[case]
    elif case == "unknown judge":
        token, data = s.ann_token + "x", {**ann, "answer": "yes"}
    if case == "json body":
        response = s.client.post(f"/j/{token}/answer", json=own, follow_redirects=False)
    else:
        response = s.post(token, data, headers=headers)
    assert response.status_code == status, response.text
    assert says in response.text and "Nothing was changed" in response.text
    assert s.state() == before


@pytest.mark.parametrize("query", ["answered=maybe", "skipped=2", "gold=first", "gold=1.5"])
def test_a_malformed_page_link_gets_a_clear_422(s, query) -> None:
    response = s.client.get(f"/j/{s.ann_token}?{query}")
    name = query.partition("=")[0]
    assert response.status_code == 422 and f"malformed request: check {name}" in response.text


def test_an_empty_field_is_a_missing_one(s) -> None:
    fields = s.render(s.ann_token)
    before = s.state()
    response = s.post(s.ann_token, {**fields, "answer": "yes", "csrf": "", "slot": ""})
    assert response.status_code == 422 and "malformed request: check csrf, slot" in response.text
    assert s.state() == before


@pytest.mark.parametrize("encoding", ["urlencoded", "multipart"])
def test_an_answer_in_either_form_encoding_keeps_its_explanation_exactly(s, encoding) -> None:
    explanation = "Größe & 50% = ✓; a=b\nsecond line"
    data = {**s.render(s.ann_token), "answer": "submit", "confidence": "0.8", "explanation": explanation}
    files = {"attachment": ("note.txt", b"ignored")} if encoding == "multipart" else None
    response = s.client.post(f"/j/{s.ann_token}/answer", data=data, files=files, follow_redirects=False)
    assert response.status_code == 303
    assert [(a.answer, a.confidence, a.explanation) for a in s.store.answers(s.task.id)] == [(1, 0.8, explanation)]


def test_a_form_from_its_own_origin_is_accepted(s) -> None:
    fields = form_fields(s.page(s.ann_token))
    headers = {
        "origin": "http://testserver",
        "referer": f"http://testserver/j/{s.ann_token}",
        "sec-fetch-site": "same-origin",
    }
    assert s.post(s.ann_token, {**fields, "answer": "1"}, headers=headers).status_code == 303
    assert [a.answer for a in s.store.answers(s.task.id)] == [1]


def test_an_answer_to_a_closed_question_is_refused(s) -> None:
    ann, bob = s.render(s.ann_token), s.render(s.bob_token)
    carol_token = s.store.invite("carol")[1]
    carol = s.page(carol_token)
    assert QUESTION not in carol and SECRET_STEP in carol  # both slots are held: the next task instead
    assert s.post(s.ann_token, {**ann, "answer": "yes"}).status_code == 303
    assert s.post(s.bob_token, {**bob, "answer": "no"}).status_code == 303
    assert s.store.task(s.task.id).closed is not None
    assert s.post(s.bob_token, {**bob, "answer": "no"}).status_code == 303  # still idempotent
    assert [a.answer for a in s.store.answers(s.task.id)] == [1, 0]


@pytest.mark.parametrize("chunked", [False, True])
def test_an_oversized_body_is_refused_before_it_is_read(s, chunked) -> None:
    fields = form_fields(s.page(s.ann_token))
    body = "&".join(f"{k}={v}" for k, v in fields.items()) + "&answer=yes&pad=" + "x" * MAX_BODY
    before = s.state()
    headers = {"content-type": "application/x-www-form-urlencoded"}
    content = iter([body[:3000].encode(), body[3000:].encode()]) if chunked else body.encode()
    response = s.client.post(f"/j/{s.ann_token}/answer", content=content, headers=headers)
    assert response.status_code == 413 and f"larger than {MAX_BODY} bytes" in response.text
    assert s.state() == before


def test_wrong_tokens_are_refused(s) -> None:
    assert s.client.get("/j/not-a-judge").status_code == 404
    assert s.client.get(f"/j/{s.admin}").status_code == 404  # the experimenter's token is no judge link
    for path in (f"/admin/{s.ann_token}", "/admin/x", f"/admin/{s.ann_token}/export.json", "/admin/x/export.json"):
        response = s.client.get(path)
        assert response.status_code == 403 and "not valid" in response.text
    assert s.client.get("/elsewhere").status_code == 404
    assert s.client.get(f"/j/{s.ann_token}/answer").status_code == 405


def test_pages_carry_the_security_headers(s) -> None:
    headers = s.client.get(f"/j/{s.ann_token}").headers
    assert "form-action 'self'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY" and headers["cache-control"] == "no-store"
    assert "set-cookie" not in headers


def test_the_experimenter_sees_debates_budgets_and_judges(s) -> None:
    fields = form_fields(s.page(s.ann_token))
    s.post(s.ann_token, {**fields, "answer": "yes"})
    page = s.client.get(f"/admin/{s.admin}")
    assert page.status_code == 200
    waiting = rows(page.text, "waiting")
    assert waiting[0][1:4] == ["0", "1", "1 / 2"]  # debate 0: one open question, 1 of 2 answers
    assert waiting[1][1:4] == ["1", "1", "0 / 1"]
    judges = rows(page.text, "judges")
    assert [row[:3] for row in judges] == [["ann", "1", "0"], ["bob", "0", "0"]]  # judge, answers, skips
    export = s.client.get(f"/admin/{s.admin}/export.json")
    assert export.status_code == 200 and export.headers["content-type"] == "application/json"
    data = export.json()
    assert [(j["task"], j["judge_name"], j["answer"]) for j in data["judgements"]] == [(s.task.id, "ann", 1)]
    assert {t["question"] for t in data["tasks"]} == {QUESTION, SECRET_STEP}
    for token in (s.ann_token, s.bob_token):
        assert token not in export.text and token not in page.text
    assert s.admin not in export.text


def test_a_late_answer_to_a_closed_question_moves_on_to_the_next(s) -> None:
    ann = form_fields(s.page(s.ann_token))
    s.store.close_tasks(s.task.id)  # closed while ann was reading it (the experimenter, or its R reached)
    late = s.post(s.ann_token, {**ann, "answer": "yes"})
    assert late.status_code == 303 and late.headers["location"] == f"/j/{s.ann_token}?note=closed"
    after = s.client.get(late.headers["location"]).text
    assert "yours was not counted" in after and SECRET_STEP in after and form_fields(after)
    assert s.store.answers(s.task.id) == []


def test_code_is_monospace_and_scrolls_and_context_is_the_debaters_word(tmp_path) -> None:
    from debatekit.judge.server import blocks

    code = "def f(x):\n    return x + 1  # a very long line " + "x" * 200
    text = "The pull request adds:\n\n" + "\n".join("    " + line for line in code.split("\n")) + "\n\nIs f right?"
    assert blocks(text) == [("text", "The pull request adds:"), ("code", code), ("text", "Is f right?")]
    store = Store(tmp_path / "j.sqlite")
    token = store.invite("ann")[1]
    store.task_for(TaskKey("r", 0, "verifier", 0), text, ("Step 2 (the tests pass): yes",), 1, 1)
    page = TestClient(create_app(store.path)).get(f"/j/{token}").text
    assert '<pre class="code"><code>def f(x):\n    return x + 1' in page
    assert re.search(r"pre\.code \{[^}]*white-space: pre;[^}]*overflow-x: auto", page)
    assert "monospace" in re.search(r"pre\.code \{[^}]*\}", page).group(0)
    assert "The debater says" in page and "facts:" not in page
