"""A whole small study in a real browser (Debian's chromium, driven by Playwright): the experimenter
writes consent and instructions in Markdown, adds gold questions and invites four judges (one with
a quota); the study-sized stochastic problem (`one-claim`, Bob always aborting so people are asked,
R = 6 per debate) runs in a process of its own. The judges accept consent, read the instructions,
answer gold questions (feedback shown) and the debates' questions with the confidence slider, one
of them unsure; the server is killed with -9 in the middle and restarted on the same database.
Both debates end; nothing acknowledged is lost or doubled; the export and the agreement statistics
agree with what the judges did. Screenshots at desktop and phone sizes go to test-artifacts/judge-study-*.png."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("multipart")
pytest.importorskip("uvicorn")
pytest.importorskip("krippendorff")
pytest.importorskip("playwright.sync_api")
from playwright.sync_api import sync_playwright

from debatekit.cli.main import main
from debatekit.engine.record import read_records
from debatekit.judge.store import Store
from judge_helpers import free_port, krippendorff_nominal, serve_process

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
DESKTOP = {"viewport": {"width": 1280, "height": 900}}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}
GOLD = {  # question: (known answer, feedback)
    "Is 7 a prime number?": (True, "Right answer: yes. 7 has no divisor but 1 and itself."),
    "Is 91 a prime number?": (False, None),
}
GOLD_GIVEN = {  # judge: the confidence each gives each gold question
    "ann": {"Is 7 a prime number?": "0.95", "Is 91 a prime number?": "0.1"},
    "bob": {"Is 7 a prime number?": "0.9", "Is 91 a prime number?": "0.7"},  # bob gets 91 wrong
    "cy": {"Is 7 a prime number?": "0.8", "Is 91 a prime number?": "0.2"},
    "dee": {"Is 7 a prime number?": "0.3", "Is 91 a prime number?": "0.3"},  # dee gets 7 wrong
}
REAL_GIVEN = {"ann": ["skip", "0.8", "0.9", "0.75"], "bob": ["0.9", "0.3", "0.7"], "cy": ["0.6", "0.85", "0.2"]}
"""Each judge's answers to the debates' questions in turn (cycling): ann is unsure of her first."""


def shoot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"judge-study-{name}.png"), full_page=True)
    assert (ARTIFACTS / f"judge-study-{name}.png").stat().st_size > 1000


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (apt-get install -y chromium)")
def test_a_whole_study_in_a_browser_survives_kill_9_and_exports_its_statistics(tmp_path) -> None:
    db, port, log = tmp_path / "judges.sqlite", free_port(), tmp_path / "server.log"
    (tmp_path / "consent.md").write_text("# Consent\n\nYou judge short claims for **research**. Stop at any time.\n")
    (tmp_path / "instructions.md").write_text("# Instructions\n\nMove the slider to how likely *yes* is.\n")
    (tmp_path / "gold.jsonl").write_text(
        "\n".join(json.dumps({"question": q, "answer": a, "feedback": f}) for q, (a, f) in GOLD.items())
    )
    store = Store(db)
    links = {name: store.invite(name, quota=1 if name == "dee" else None)[1] for name in GOLD_GIVEN}
    admin = store.new_admin_token()
    assert main(["judge", "gold", str(tmp_path / "gold.jsonl"), "--db", str(db)]) == 0
    pages = ("--instructions", str(tmp_path / "instructions.md"), "--consent", str(tmp_path / "consent.md"))
    server = serve_process(db, port, log, *pages)
    url = f"http://127.0.0.1:{port}"
    record = tmp_path / "people.jsonl"
    run = [sys.executable, "-c", "from debatekit.cli.main import entry; entry()", "run", "stochastic", "--problem",
           "one-claim", "-P", "verifier_budget=6", "--bob", "always-abort", "--verifier-oracle", "people",
           "--judge-db", str(db), "--answers-per-judge", "3", "--trials", "2", "--record", str(record),
           "--no-log", "--json"]  # fmt: skip
    debate = subprocess.Popen(run, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    acknowledged: list[tuple[str, str, int, float]] = []  # judge, question, bit, confidence
    real_turn = Counter()
    killed = False
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"], headless=True)
            tabs = {
                name: browser.new_context(**(PHONE if name in ("bob", "dee") else DESKTOP)).new_page()
                for name in GOLD_GIVEN
            }
            for name, page in tabs.items():  # consent first, then the first question: a gold one
                page.goto(f"{url}/j/{links[name]}")
                assert "research" in page.locator("#consent").inner_html() and not page.locator("#question").count()
                if name == "bob":
                    shoot(page, "consent-phone")
                with page.expect_response(lambda r: r.url.endswith("/shown")) as beacon:
                    page.click("#agree")
                assert beacon.value.status == 204  # rendered: the script held the question's slot
                assert page.locator("#question").inner_text() == "Is 7 a prime number?"
            tabs["ann"].click("#instructions-link")
            assert "how likely <em>yes</em> is" in tabs["ann"].locator("#instructions").inner_html()
            shoot(tabs["ann"], "instructions-desktop")
            tabs["ann"].go_back()

            def step(name: str) -> bool:
                """The judge looks at their page and acts on the question, if any; whether they did."""
                page = tabs[name]
                page.goto(f"{url}/j/{links[name]}")
                if not page.locator("#question").count():
                    return False
                question = page.locator("#question").inner_text()
                if question in GOLD:
                    given = GOLD_GIVEN[name][question]
                else:
                    given = REAL_GIVEN[name][real_turn[name] % len(REAL_GIVEN[name])]
                    real_turn[name] += 1
                if given == "skip":
                    page.get_by_role("button", name="Unsure / skip").click()
                    page.wait_for_selector("#skipped")
                    return True
                page.locator("#confidence").fill(given)
                assert page.locator("#confidence-value").inner_text() == f"{round(float(given) * 100)}%"
                page.fill("#explanation", f"{name} read it <b>carefully</b>")
                if question not in GOLD and real_turn[name] == 2:
                    shoot(page, f"question-{'phone' if name == 'bob' else 'desktop'}")
                page.get_by_role("button", name="Submit").click()
                page.wait_for_selector("#answered")
                acknowledged.append((name, question, int(float(given) > 0.5), float(given)))
                if question == "Is 7 a prime number?":
                    assert page.locator("#feedback").inner_text() == GOLD[question][1]
                    if name == "ann":
                        shoot(page, "feedback-desktop")
                return True

            deadline = time.monotonic() + 240
            while debate.poll() is None:
                moved = [step(name) for name in GOLD_GIVEN]
                if not killed and sum(q not in GOLD for _, q, _, _ in acknowledged) >= 4:
                    server.send_signal(signal.SIGKILL)  # mid-study: answers acknowledged, a debate waiting
                    server.wait(10)
                    killed = True
                    server = serve_process(db, port, log, *pages)  # the same database, the same links
                if not any(moved):
                    time.sleep(0.2)
                assert time.monotonic() < deadline, "the study did not finish"
            out, err = debate.communicate(timeout=60)
            assert debate.returncode == 0, err
            assert killed

            finished = tabs["dee"]  # dee's quota was one answer: her completion code
            finished.goto(f"{url}/j/{links['dee']}")
            code = finished.locator("#code").inner_text()
            shoot(finished, "finished-phone")

            for size, options in (("desktop", DESKTOP), ("phone", PHONE)):
                page = browser.new_context(**options).new_page()
                page.goto(f"{url}/admin/{admin}")
                assert "Krippendorff's alpha" in page.locator("#agreement").inner_text()
                if size == "phone":  # the judges' table fits the screen: rows as cards, nothing to scroll
                    assert page.evaluate("document.documentElement.scrollWidth") <= 390
                    assert page.locator("#judges td").first.evaluate("td => getComputedStyle(td).display") == "flex"
                shoot(page, f"admin-{size}")
            browser.close()
    finally:
        for process in (debate, server):
            if process.poll() is None:
                process.kill()
                process.wait(10)

    result = json.loads(out)
    export = Store(db).export()
    tasks = {t["id"]: t for t in export["tasks"]}
    names = {j["id"]: j["name"] for j in export["judges"]}
    stored = [
        (a["judge_name"], tasks[a["task"]]["question"], a["answer"], a["confidence"]) for a in export["judgements"]
    ]
    assert Counter(stored) == Counter(acknowledged)  # across kill -9: nothing lost, nothing doubled
    assert len({(a["task"], a["judge"], a["slot"]) for a in export["judgements"]}) == len(stored)
    real = [t for t in tasks.values() if t["gold"] is None]
    assert len(real) == 2 and all(t["closed"] is not None for t in real)
    per_task = {t["id"]: [a for a in export["judgements"] if a["task"] == t["id"]] for t in real}
    assert all(len(answers) == 6 for answers in per_task.values())  # R = 6 each, never more
    assert all(max(Counter(a["judge"] for a in answers).values()) <= 3 for answers in per_task.values())
    (skip,) = export["skips"]
    assert names[skip["judge"]] == "ann" and all(a["judge"] != skip["judge"] for a in per_task[skip["task"]])
    assert all(a["explanation"].endswith("read it <b>carefully</b>") for a in export["judgements"])

    events = [e for r in read_records(record) for e in r["events"] if e.get("query") == "verifier"]
    assert len(events) == 2 and result["trials"] == 2
    for event in events:  # the verifier's oracle read each task's yes count, and nothing of the gold ones
        (task,) = [t for t in real if {j["task"] for j in event["judges"]} == {t["id"]}]
        assert event["n"] == 6 and event["answer"] == sum(a["answer"] for a in per_task[task["id"]])

    stats = {j["name"]: j for j in export["judges"]}
    for name, given in GOLD_GIVEN.items():
        right = [
            (float(p) > 0.5) == GOLD[q][0]
            for q, p in given.items()
            if (name, q, int(float(p) > 0.5), float(p)) in acknowledged
        ]
        assert stats[name]["gold_answered"] == len(right) and stats[name]["gold_accuracy"] == sum(right) / len(right)
    assert stats["ann"]["skips"] == 1 and stats["dee"]["answers"] == 1 and stats["dee"]["completion_code"] == code
    units = [[a["answer"] for a in answers] for answers in per_task.values()]
    expected_alpha = krippendorff_nominal(units) if len({v for u in units for v in u}) == 2 else None
    assert export["agreement"]["krippendorff_alpha"] == pytest.approx(expected_alpha)
    table = tmp_path / "study.csv"
    assert main(["judge", "export", "--db", str(db), "--format", "csv", "--out", str(table)]) == 0
    rows = list(csv.DictReader(table.open()))
    assert Counter(r["kind"] for r in rows) == {"answer": len(stored), "skip": 1}
    assert {r["completion_code"] for r in rows if r["judge_name"] == "dee"} == {code}
