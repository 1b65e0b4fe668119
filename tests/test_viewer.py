"""``debatekit view PATH`` (issue 24, point 1): a local web viewer over records, run logs and
sweeps. Real records are made by small ``debatekit run --record`` runs and a sweep; the pages are
checked against the records' own lines (read here with ``json``, apart from the viewer), a hostile
record is shown as text, a bad path is one line and exit 2, and Chromium opens the index, filters
it and opens a debate, keeping desktop-size screenshots in ``test-artifacts/viewer-*.png``."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")
from fastapi.testclient import TestClient

from debatekit.cli.main import main
from debatekit.experiments.viewer.app import create_app
from debatekit.experiments.viewer.data import load

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
CHROMIUM = Path("/usr/bin/chromium")
RUNS = {
    "ce.jsonl": ["cross-exam", "--problem", "caffeine", "--alice", "lie-output", "--trials", "3"],
    "forfeit.jsonl": ["cross-exam", "--problem", "caffeine", "--bob", "malformed", "--trials", "2"],
    "st.jsonl": ["stochastic", "--problem", "code-review", "--alice", "bias", "--constants", "lean", "--trials", "2"],
    "long.jsonl": ["stochastic", "--problem", "noisy-majority", "--constants", "lean", "--trials", "2"],
}
SWEEP = ["--set", "protocol=cross-exam", "--set", "problem=parity", "--set", "size=8", "--set", "trials=2",
         "--set", "bob=honest,point-random"]  # fmt: skip


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project folder as a researcher leaves it: records, their run logs and a sweep of two cells."""
    folder = tmp_path_factory.mktemp("viewed")
    for name, argv in RUNS.items():
        assert main(["run", *argv, "--record", str(folder / name), "--log-dir", str(folder / "logs")]) == 0
    assert main(["sweep", *SWEEP, "--out", str(folder / "sweeps" / "small"), "--workers", "1"]) == 0
    return folder


def lines(path: Path) -> list[dict[str, Any]]:
    """A record file's debates, read with json alone (the header dropped)."""
    return [r for r in map(json.loads, path.read_text().splitlines()) if "header" not in r]


def every_record(folder: Path) -> list[dict[str, Any]]:
    files = [folder / name for name in RUNS] + sorted((folder / "sweeps" / "small" / "cells").glob("*/debates.jsonl"))
    return [r for path in files for r in lines(path)]


def client(path: Path) -> TestClient:
    return TestClient(create_app(load(path)))


def text(response: Any) -> str:
    """A page's text as a reader sees it (tags dropped, entities read, spaces collapsed)."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", response.text)).split())


def matched(response: Any) -> int:
    return int(re.search(r'id="matched">(\d+) debates match', response.text).group(1))


def links(response: Any) -> list[str]:
    return re.findall(r'<a class="debate" href="([^"]+)"', response.text)


def test_the_index_lists_every_debate_once_and_its_filters_narrow_it_as_the_records_say(made: Path) -> None:
    records, web = every_record(made), client(made)
    assert matched(web.get("/")) == len(records) == 3 + 2 + 2 + 2 + 4  # the logs' runs name the same files: listed once
    expected = {
        "protocol=stochastic": sum(r["protocol"] == "stochastic" for r in records),
        "verdict=reject": sum(r["verdict"] == 0 for r in records),
        "verdict=accept": sum(r["verdict"] == 1 for r in records),
        "forfeit=bob": sum(r["forfeit"] == "bob" for r in records),
        "alice=lie-output&problem=caffeine": sum(r["alice"] == "lie-output" for r in records),
        "bob=point-random&protocol=cross-exam": sum(r["bob"] == "point-random" for r in records),
        "truth=yes": sum(r["truth"] == "yes" for r in records),
        "oracle=builtin&judge=builtin": len(records),
        "judge=nobody": 0,
    }
    assert expected["forfeit=bob"] == 2 and 0 < expected["verdict=reject"] < len(records)
    for query, count in expected.items():
        page = web.get(f"/?{query}")
        assert page.status_code == 200 and matched(page) == count == len(links(page)), query
    forfeits = web.get("/?forfeit=bob")
    assert forfeits.text.count('<tr class="forfeit">') == 2 and "malformed" in text(forfeits)


def test_the_index_pages_through_every_debate_keeping_its_filters(made: Path) -> None:
    web = client(made)
    everything = set(links(web.get("/?per=1000")))
    seen, url = [], "/?per=3&protocol=cross-exam"
    while url:
        page = web.get(url.replace("&amp;", "&"))
        assert len(links(page)) <= 3 and "protocol=cross-exam" in (page.text if "next page" in page.text else url)
        seen += links(page)
        found = re.search(r'id="next" href="([^"]+)"', page.text)
        url = found.group(1) if found else ""
    cross = [r for r in every_record(made) if r["protocol"] == "cross-exam"]
    assert len(seen) == len(set(seen)) == len(cross) and set(seen) <= everything
    assert web.get("/?page=0").status_code == 422 and "malformed request: check page" in text(web.get("/?page=0"))


def debate_url(web: TestClient, query: str) -> str:
    (first, *_) = links(web.get(f"/?{query}"))
    return first


def test_a_debate_page_shows_each_event_of_its_record_with_the_verifiers_reads_marked(made: Path) -> None:
    web = client(made)
    record = lines(made / "ce.jsonl")[0]
    url = debate_url(web, "alice=lie-output")
    assert url.endswith(f"/debate/{record['debate']}")
    page = web.get(url)
    shown, table = text(page), page.text.split('id="events"')[1]
    events = record["events"]
    assert page.status_code == 200 and f"debate {record['debate']}, alice lie-output vs bob honest" in shown
    assert table.count('<tr class="move">') == sum("move" in e for e in events)
    assert table.count('<tr class="query">') == sum("query" in e for e in events)
    assert table.count('<tr class="read">') == sum("read" in e for e in events)
    for event in events:
        if "query" in event:
            assert event["question"][0].split("\n")[-1] in html.unescape(page.text)
    read = {(e["read"], e["at"]) for e in events if "at" in e and e["read"] != "x"}
    assert read and table.count('<mark class="read">') == len(read)  # one bit string a side: each position once
    marked = re.findall(r'<mark class="read">([01])</mark>', table)
    (alice,) = [e["message"]["bits"] for e in events if e.get("move") == "alice"]
    assert sorted(marked) == sorted(alice[at] for side, at in read if side == "alice")  # the bits V read
    assert f"verdict {record['verdict']} (" in shown and "oracle queries alice" in shown


def test_stochastic_debate_shows_claims_aborts_draws_and_the_verifiers_estimates(made: Path) -> None:
    web = client(made)
    for name, problem in (("st.jsonl", "code-review"), ("long.jsonl", "noisy-majority")):
        record = lines(made / name)[1]
        page = web.get(debate_url(web, f"problem={problem}").replace("/debate/0", "/debate/1"))
        table, events = page.text.split('id="events"')[1], record["events"]
        assert f"Events ({len(events)})" in page.text
        assert table.count('<tr class="draw">') == sum("chance" in e for e in events)
        assert table.count('<tr class="query">') == sum("query" in e for e in events)
        moves = [e for e in events if "move" in e]
        assert moves and all(f"<td>{e['t']}</td><td>{e['move']}</td><td>{e['what']}</td>" in table for e in moves)
        for e in events:
            if e.get("query") == "verifier":  # the estimate: n samples of one question, how many said yes
                assert f"→ {e['answer']} yes of {e['n']}" in text(page)
    assert any(e.get("query") == "verifier" for e in lines(made / "st.jsonl")[1]["events"])  # estimates were shown


def test_a_forfeit_shows_its_sender_and_reason(made: Path) -> None:
    web = client(made)
    record = lines(made / "forfeit.jsonl")[0]
    shown = text(web.get(debate_url(web, "forfeit=bob")))
    assert f"forfeit bob: {record['reason']}" in shown and "unreadable:" in shown


def test_a_sweep_links_its_cells_their_runs_and_their_debates(made: Path) -> None:
    web = client(made)
    index = web.get("/")
    sweep = re.search(r'<a href="/source/(\d+)">small/', index.text)
    cells = sorted((made / "sweeps" / "small" / "cells").iterdir())
    page = web.get(f"/source/{sweep.group(1)}")
    parent = re.search(r'id="sweep" href="/source/(\d+)"', page.text).group(1)
    listing = web.get(f"/source/{parent}")
    cell_links = re.findall(r'<a class="cell" href="/source/(\d+)">(\w+)</a>', listing.text)
    assert sorted(name for _, name in cell_links) == [c.name for c in cells]
    for index_of, name in cell_links:
        cell = web.get(f"/source/{index_of}")
        summary = json.loads((made / "sweeps" / "small" / "cells" / name / "summary.json").read_text())
        assert f'id="sweep" href="/source/{parent}"' in cell.text
        assert f"accept_rate {summary['accept_rate']}" in text(cell)
        debates = web.get(re.search(r'id="debates" href="([^"]+)"', cell.text).group(1))
        assert matched(debates) == summary["trials"] == len(lines(made / "sweeps/small/cells" / name / "debates.jsonl"))
        assert {row.split("/debate/")[0] for row in links(debates)} == {f"/source/{index_of}"}


def test_a_run_log_page_shows_its_command_configuration_and_results_and_links_its_debates(made: Path) -> None:
    web = client(made)
    (folder,) = [f for f in sorted((made / "logs").iterdir()) if "forfeit.jsonl" in (f / "run.json").read_text()]
    head, summary = (json.loads((folder / name).read_text()) for name in ("run.json", "summary.json"))
    index = re.search(rf'<a href="/source/(\d+)">{folder.name}</a>', web.get("/?per=1000").text)
    page = web.get(f"/source/{index.group(1)}")
    shown = text(page)
    assert " ".join(head["argv"]) in shown and f"git commit {head['git_commit']}" in shown
    assert "bob malformed" in shown and f"accept_rate {summary['accept_rate']}" in shown
    debates = web.get(re.search(r'id="debates" href="([^"]+)"', page.text).group(1))
    assert matched(debates) == head["config"]["trials"] == 2


HOSTILE = "<script>alert('x')</script>"


def test_a_hostile_record_is_shown_as_text_never_as_markup(made: Path, tmp_path: Path) -> None:
    record = lines(made / "ce.jsonl")[0]
    record["problem"], record["alice"] = HOSTILE, f"<img src=x onerror=alert(1)>{HOSTILE}"
    moves = [e for e in record["events"] if "move" in e]
    moves[0]["message"] = {"bits": "01", "note": HOSTILE}
    queries = [e for e in record["events"] if "query" in e]
    queries[0]["question"] = [HOSTILE, [HOSTILE]]
    queries[0]["judges"] = [{"judge": 1, "judge_name": HOSTILE, "shown": 10.0, "submitted": 12.5}]
    record["aside"] = [{"llm": "alice", "model": HOSTILE, "prompt": HOSTILE, "completion": HOSTILE, "cached": False}]
    run = tmp_path / "logs" / "20260101-000000-abcdef"
    run.mkdir(parents=True)
    head = {"argv": ["debatekit", HOSTILE], "version": HOSTILE, "config": {"command": "run", "protocol": HOSTILE},
            "record_path": str(tmp_path / "hostile.jsonl")}  # fmt: skip
    (run / "run.json").write_text(json.dumps(head))
    (tmp_path / "hostile.jsonl").write_text(json.dumps(record) + "\n")
    web = client(tmp_path)
    pages = [web.get("/"), web.get(f"/source/0/debate/{record['debate']}"), web.get("/source/0")]
    assert HOSTILE in text(pages[2]) and f"protocol {HOSTILE}" in text(pages[2])  # the run's page
    for page in pages:
        assert page.status_code == 200 and "<script>" not in page.text and "<img" not in page.text
        assert "default-src 'none'" in page.headers["content-security-policy"]  # and no script would run
    debate = text(pages[1])
    assert debate.count(HOSTILE) >= 4 and f"answered by {HOSTILE} in 2.5 s" in debate
    assert pages[0].text.count("&lt;script&gt;") >= 2
    assert matched(web.get("/", params={"judge": HOSTILE})) == 1 and matched(web.get("/?judge=builtin")) == 0


def test_a_run_folder_or_a_sweep_folder_alone_is_viewed_with_its_own_debates(made: Path) -> None:
    sweep = load(made / "sweeps" / "small")
    assert [s.kind for s in sweep.sources] == ["sweep", "cell", "cell"] and len(sweep.rows) == 4
    (folder,) = [f for f in (made / "logs").iterdir() if "st.jsonl" in (f / "run.json").read_text()]
    run = load(folder)
    assert [s.kind for s in run.sources] == ["run"] and [r.debate for r in run.rows] == [0, 1]
    assert {r.protocol for r in run.rows} == {"stochastic"} and {r.constants for r in run.rows} == {"lean"}


def test_a_broken_source_in_a_folder_is_listed_with_its_reason_beside_the_rest(made: Path, tmp_path: Path) -> None:
    good = lines(made / "ce.jsonl")
    (tmp_path / "good.jsonl").write_text("".join(json.dumps(r) + "\n" for r in good))
    broken = dict(good[0], events=[{"move": "carol", "message": 1}])
    (tmp_path / "broken.jsonl").write_text(json.dumps(broken) + "\n")
    web = client(tmp_path)
    index = web.get("/")
    assert index.status_code == 200 and matched(index) == len(good)
    assert "broken.jsonl:1: event 0: a move event whose move is not alice, bob or verifier" in text(index)
    (tmp_path / "good.jsonl").write_text("{not json\n")  # changed after the viewer read it
    page = web.get("/source/1/debate/0")
    assert page.status_code == 422 and "good.jsonl:1: not valid JSON" in text(page) and "Traceback" not in page.text
    assert web.get("/source/9").status_code == 404 and web.get("/source/1/debate/99").status_code == 404


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (None, "no such file or folder"),
        ("{not json\n", "r.jsonl:1: not valid JSON"),
        ('{"protocol": "cross-exam"}\n', "r.jsonl:1: not a debate record"),
        (
            '{"protocol": 1, "problem": 2, "debate": 0, "verdict": 1, "events": [{"read": "y", "at": 1}]}\n',
            "r.jsonl:1: event 0: a read event whose read is not alice, bob or x",
        ),
        (b"\xff\xfe\x00garbage", "r.jsonl:1: not UTF-8 text"),
    ],
)
def test_a_bad_path_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], content, why) -> None:
    path = tmp_path / "r.jsonl"
    if isinstance(content, str):
        path.write_text(content)
    elif content is not None:
        path.write_bytes(content)
    capsys.readouterr()
    assert main(["view", str(path), "--no-open"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("debatekit: error: ") and why in err


def test_an_empty_folder_or_a_broken_run_folder_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["view", str(tmp_path), "--no-open"]) == 2
    assert "holds no debate records, run logs or sweep folders" in capsys.readouterr().err
    (tmp_path / "run.json").write_text('{"config": [')
    assert main(["view", str(tmp_path), "--no-open"]) == 2
    assert "run.json:1: not valid JSON" in capsys.readouterr().err


def test_the_command_serves_on_127_0_0_1_and_prints_its_address(made: Path, tmp_path: Path) -> None:
    import httpx

    log = tmp_path / "view.log"
    command = [sys.executable, "-c", "from debatekit.cli.main import entry; entry()", "view", str(made), "--no-open"]
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=out)
    try:
        deadline = time.monotonic() + 60
        while not (found := re.search(r"http://127\.0\.0\.1:(\d+)/", log.read_text())):
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        page = httpx.get(found.group(0), timeout=10)
        assert page.status_code == 200 and matched(page) == len(every_record(made))
    finally:
        process.terminate()
        process.wait(10)


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (apt-get install -y chromium)")
def test_in_chromium_the_index_filters_and_a_debate_opens(made: Path) -> None:
    pytest.importorskip("playwright.sync_api")
    import uvicorn
    from playwright.sync_api import sync_playwright

    from judge_helpers import free_port

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(load(made)), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}/"
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        while not server.started:
            time.sleep(0.05)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"], headless=True)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(url)
            assert page.locator("#debates tbody tr").count() == len(every_record(made))
            page.screenshot(path=str(ARTIFACTS / "viewer-index.png"), full_page=True)
            page.select_option("select[name=protocol]", "cross-exam")
            page.select_option("select[name=problem]", "caffeine")
            page.select_option("select[name=alice]", "lie-output")
            page.click("#apply")
            page.wait_for_url("**alice=lie-output**")
            assert page.locator("#matched").inner_text() == "3 debates match."
            page.screenshot(path=str(ARTIFACTS / "viewer-filtered.png"), full_page=True)
            page.locator("a.debate").first.click()
            page.wait_for_selector("#events")
            assert "alice lie-output vs bob honest" in page.locator("#heading").inner_text()
            assert page.locator("#events mark.read").count() > 0
            page.screenshot(path=str(ARTIFACTS / "viewer-debate.png"), full_page=True)
            page.click("#source")
            page.wait_for_selector("#heading")
            page.goto(url + "?forfeit=bob")
            page.locator("a.debate").first.click()
            assert "forfeit" in page.locator("#outcome").inner_text()
            page.goto(url)
            page.locator("a", has_text="small/").first.click()
            page.click("#sweep")
            assert page.locator("#cells tbody tr").count() == 2
            page.screenshot(path=str(ARTIFACTS / "viewer-sweep.png"), full_page=True)
            browser.close()
    finally:
        server.should_exit = True
        thread.join(10)
    for name in ("index", "filtered", "debate", "sweep"):
        assert (ARTIFACTS / f"viewer-{name}.png").stat().st_size > 10_000


def test_a_long_debate_is_shown_a_page_of_events_at_a_time(made: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from debatekit.experiments.viewer import app, data

    for module in (app, data):
        monkeypatch.setattr(module, "EVENTS_PER_PAGE", 100)
    web = client(made)
    record = lines(made / "long.jsonl")[0]
    assert len(record["events"]) > 200
    numbers, url = [], debate_url(web, "problem=noisy-majority")
    while url:
        page = web.get(url)
        numbers += [int(n) for n in re.findall(r'<tr class="\w+">\s*<td>(\d+)</td>', page.text)]
        found = re.search(r'id="later" href="([^"]+)"', page.text)
        url = found.group(1) if found else ""
    assert numbers == list(range(1, len(record["events"]) + 1))
