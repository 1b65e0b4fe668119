"""End to end in a real browser (Debian's chromium, driven by Playwright; never a downloaded build):
a cross-examination debate on a natural-language problem waits for a person; a scripted person
opens their invite link, reads the one question and its context, answers, and the debate reaches
its verdict. Screenshots of the judge's page and the experimenter's page go to the test's folder
(and to /work/notes when it exists)."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("multipart")
pytest.importorskip("playwright.sync_api")
from playwright.sync_api import sync_playwright

from debatekit.analysis.montecarlo import Oracles, RunResult, make_instance, run
from debatekit.judge import People, Store
from debatekit.ledger import Role
from debatekit.oracle import Question
from debatekit.problems import PROBLEMS
from debatekit.protocols.registry import PROTOCOLS
from judge_helpers import served

CHROMIUM = Path("/usr/bin/chromium")
NOTES = Path("/work/notes")


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (apt-get install -y chromium)")
def test_a_person_in_a_browser_answers_the_one_question_a_debate_waits_for(tmp_path) -> None:
    db = tmp_path / "judges.sqlite"
    store = Store(db)
    token = store.invite("Ada")[1]
    admin = store.new_admin_token()
    spec, instance = PROTOCOLS["cross-exam"], make_instance(PROBLEMS["caffeine"], 26, True, 1)
    alice, bob = spec.strategies[Role.ALICE]["honest"], spec.strategies[Role.BOB]["point-random"]
    results: list[RunResult] = []
    with served(db) as url:
        debate = threading.Thread(
            target=lambda: results.append(
                run(spec, instance, alice, bob, 1, 1, oracles=Oracles(instance.oracle, People(db, poll=0.05)))
            ),
            daemon=True,
        )
        debate.start()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"], headless=True)
            page = browser.new_page(viewport={"width": 900, "height": 900})
            page.goto(f"{url}/j/{token}")
            deadline = time.monotonic() + 30
            while not page.locator("#question").count():  # the person reloads until the debate asks
                assert time.monotonic() < deadline, "the debate never asked"
                time.sleep(0.1)
                page.reload()
            text = page.locator("#question").inner_text()
            lines = tuple(page.locator("#context li").all_inner_texts())
            assert "waiting for 1 more answer" in page.locator("#remaining").inner_text()
            assert "Alice" not in page.content() and "Bob" not in page.content()
            page.screenshot(path=str(tmp_path / "judge-page.png"), full_page=True)
            experimenter = browser.new_page(viewport={"width": 900, "height": 700})
            experimenter.goto(f"{url}/admin/{admin}")
            assert "0 / 1" in experimenter.locator("#waiting").inner_text()  # the debate waits for Ada
            experimenter.screenshot(path=str(tmp_path / "admin-page.png"), full_page=True)
            truthful = instance.oracle.probability(Question(text, lines))  # the person reads and judges
            assert truthful == 1.0
            page.locator("#confidence").fill("0.9")  # the person is fairly sure the answer is yes
            page.get_by_role("button", name="Submit").click()
            page.wait_for_selector("#answered")
            debate.join(30)
            assert results, "the debate did not finish after the answer"
            experimenter.reload()
            assert "Ada\t1" in experimenter.locator("#judges").inner_text()
            assert "1 / 1" in experimenter.locator("#debates").inner_text()
            assert not experimenter.locator("#waiting").count()  # no debate waits any more
            browser.close()
    (task,) = store.export()["tasks"]
    assert (task["question"], tuple(task["context"])) == (text, lines)
    assert [(j["judge_name"], j["answer"], j["confidence"]) for j in store.export()["judgements"]] == [("Ada", 1, 0.9)]
    assert results[0].accept_rate == 1.0 == run(spec, instance, alice, bob, 1, 1).accept_rate
    for shot in ("judge-page.png", "admin-page.png"):
        assert (tmp_path / shot).stat().st_size > 1000
        if NOTES.is_dir():
            shutil.copy(tmp_path / shot, NOTES / shot)
