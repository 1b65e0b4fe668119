"""Models as oracles and players when something fails (issue 19, item 5), against a scripted
OpenAI-compatible server on 127.0.0.1, one per test (no request of an earlier test is counted):
each seat's copy of the instance shares the model of the judge rather than copying its client; a
verifier's model that fails leaves the debate pending in the journal, stops the run with one line
and resumes; a player's model that cannot be reached leaves the debate undecided, counted apart;
an unusable completion is never cached; the verifier's model calls are in the record's aside;
the prompts directory serves every model role; records made with a model verifier replay."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")
pytest.importorskip("tenacity")

from debatekit.analysis.montecarlo import make_instance, result_of
from debatekit.cli.main import main
from debatekit.cli.run_cmd import table
from debatekit.engine.summary import Summary
from debatekit.ledger import Ledger, Role
from debatekit.llm import ModelJudge
from debatekit.llm import config as llm_config
from debatekit.llm.model import Limits
from debatekit.llm.players import shared_model
from debatekit.problems import PROBLEMS
from debatekit.protocols.registry import PROTOCOLS
from llm_server import Reply, Server, chat, serving


def after_header(path: Path) -> list[dict[str, Any]]:
    """The lines of a record or journal after its run's header, as JSON."""
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


FAST = Limits(max_connections=4, timeout=5.0, max_retries=2, backoff=0.01, max_wait=0.05)
"""Retries that end in a fraction of a second."""


@pytest.fixture
def http(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Server]:
    """A server of this test's own, named ``llm:scripted/...``, with a cache file of this test's own
    and fast retries for every model the command line makes."""
    for server in serving():
        monkeypatch.setenv("DEBATEKIT_SCRIPTED_BASE_URL", server.url)
        monkeypatch.setenv("DEBATEKIT_SCRIPTED_API_KEY", "sk-test")
        monkeypatch.setenv("DEBATEKIT_LLM_CACHE", str(tmp_path / "llm.sqlite"))
        monkeypatch.delenv("DEBATEKIT_LLM_PROMPTS", raising=False)
        monkeypatch.setattr(llm_config, "Limits", lambda: FAST)
        yield server


def said(p: float) -> Reply:
    """A one-token answer whose first token's log-probabilities give P[yes] = p (0 < p < 1)."""
    return Reply(chat("Yes" if p >= 0.5 else "No", (("Yes", math.log(p)), ("No", math.log(1 - p)))))


YES = said(0.9)
SERVER_ERROR = Reply({"error": {"message": "overloaded"}}, status=500)


def debatekit(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    """``debatekit ARGV --no-log`` in this process: its exit status, its JSON output (when it
    printed one) and its stderr."""
    code = main([*argv, "--no-log"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.startswith("{") else out, err


# -- each seat's copy of the instance -----------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ("cross-exam", "--problem", "caffeine", "--prover-oracle", "llm:scripted/m"),
        ("cross-exam", "--problem", "caffeine", "--oracle", "llm:scripted/m"),
        ("stochastic", "--problem", "code-review", "--alice", "llm:scripted/m", "--oracle", "llm:scripted/m"),
    ],
)
def test_a_model_of_the_judge_serves_every_seat_without_copying_its_client(http, capsys, argv) -> None:
    http.play(YES)
    code, data, err = debatekit(capsys, "run", *argv, "--trials", "2", "--json")
    assert code == 0, err
    assert data["trials"] == 2 and "internal error" not in err and "Exception ignored" not in err


def test_a_seats_copy_of_a_model_judge_shares_the_model(http) -> None:
    judge = ModelJudge(shared_model("scripted/m"))
    copied = copy.deepcopy({"oracle": judge, "again": judge})
    assert copied["oracle"] is not judge and copied["oracle"] is copied["again"]
    assert copied["oracle"].model is judge.model


# -- what a model is asked and what is kept -----------------------------------------------------------


@pytest.mark.parametrize("option", ["--oracle", "--verifier-oracle", "--prover-oracle"])
def test_the_prompts_directory_serves_every_model_role(http, capsys, tmp_path, monkeypatch, option) -> None:
    (tmp_path / "judge.txt").write_text("Q: $question$context\nYes or no?")
    monkeypatch.setenv("DEBATEKIT_LLM_PROMPTS", str(tmp_path))
    http.play(YES)
    code, _, err = debatekit(capsys, "run", "cross-exam", "--problem", "caffeine", "--bob", "point-random",
                             option, "llm:scripted/m", "--trials", "2", "--json")  # fmt: skip
    assert code == 0, err
    prompts = [body["messages"][-1]["content"] for body in http.bodies]
    assert prompts and all(p.startswith("Q: ") and p.endswith("\nYes or no?") for p in prompts)


TOO_LONG = Reply(chat("Yes, because " + "the study " * 30, (("Yes", -0.1), ("No", -3.0))))


def test_an_unusable_completion_is_not_cached_so_a_rerun_asks_again(http, capsys) -> None:
    http.play(TOO_LONG)
    argv = ("run", "cross-exam", "--problem", "caffeine", "--alice", "llm:scripted/m", "--trials", "1", "--json")
    code, data, _ = debatekit(capsys, *argv)
    assert code == 0 and data["forfeits"] == {"alice": 1, "bob": 0}
    http.play(YES)  # the server recovers
    code, data, _ = debatekit(capsys, *argv)
    assert code == 0 and data["forfeits"] == {"alice": 0, "bob": 0} and http.calls > 0


def test_the_verifiers_model_calls_are_in_the_records_aside(http, capsys, tmp_path) -> None:
    http.play(said(0.8))
    record = tmp_path / "r.jsonl"
    code, _, err = debatekit(
        capsys,
        "run",
        "cross-exam",
        "--problem",
        "caffeine",
        "--bob",
        "point-random",
        "--verifier-oracle",
        "llm:scripted/m",
        "--trials",
        "3",
        "--record",
        str(record),
    )
    assert code == 0, err
    records = after_header(record)
    asked = [r for r in records if r["queries"]["verifier"]]
    assert asked, "point-random never made the verifier ask its oracle"
    for r in asked:
        calls = [entry for entry in r["aside"] if entry["llm"] == "verifier"]
        assert len(calls) == r["queries"]["verifier"]
        for call in calls:
            assert call["model"] == "scripted/m" and call["p_yes"] == pytest.approx(0.8)
            assert "Question: " in call["prompt"] and call["completion_tokens"] == 1 and call["prompt_tokens"] == 7


# -- the verifier's model fails: the debate is pending ----------------------------------------------

INFINITE = Reply(chat("Yes", (("Yes", math.inf), ("No", -1.0))))
"""A log-probability of +inf: P[yes] would be inf/inf = NaN."""
NEITHER = Reply(chat("Maybe", (("Maybe", -0.1), ("Perhaps", -2.0))))


@pytest.mark.parametrize(("reply", "why"), [(SERVER_ERROR, "HTTP 500"), (NEITHER, "neither yes nor no"),
                                            (INFINITE, "out of range")])  # fmt: skip
def test_a_failing_verifier_model_stops_the_run_pending_and_resume_continues(http, capsys, tmp_path, reply, why):
    record = tmp_path / "r.jsonl"
    argv = ("run", "cross-exam", "--problem", "caffeine", "--bob", "point-random", "--verifier-oracle",
            "llm:scripted/m", "--trials", "4", "--record", str(record), "--json")  # fmt: skip
    http.play(reply)
    code, _, err = debatekit(capsys, *argv)
    assert code == 75 and err.count("\n") == 1, err
    assert "llm:scripted/m" in err and why in err and "pending" in err and "Traceback" not in err
    journal = after_header(Path(f"{record}.journal"))
    pending = max(entry["debate"] for entry in journal)  # the journal also holds the debates before it
    kept = record.read_text().splitlines()
    assert [json.loads(line)["debate"] for line in kept[1:]] == list(range(pending))  # recorded; it is not
    journal = [entry for entry in journal if entry["debate"] == pending]
    assert journal and not any("forfeit" in entry["event"] for entry in journal)
    http.play(said(0.9))  # the server recovers
    code, data, err = debatekit(capsys, *argv, "--resume")
    assert code == 0, err
    assert data["trials"] == 4 and data["undecided"] == 0 and data["forfeits"] == {"alice": 0, "bob": 0}
    records = after_header(record)
    assert [r["debate"] for r in records] == [0, 1, 2, 3] and record.read_text().startswith("\n".join(kept))
    resumed = records[pending]
    assert [e for e in resumed["events"] if "move" in e] == [e["event"] for e in journal if "move" in e["event"]]
    assert resumed["queries"]["verifier"] == 1 and resumed["verdict"] in (0, 1)
    assert not Path(f"{record}.journal").exists()


# -- a player's model fails: the debate is undecided ---------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ("cross-exam", "--problem", "caffeine", "--alice", "llm:scripted/m"),
        ("cross-exam", "--problem", "caffeine", "--bob", "llm:scripted/m", "--concurrency", "2"),
        ("cross-exam", "--problem", "caffeine", "--prover-oracle", "llm:scripted/m"),
        ("stochastic", "--problem", "code-review", "--alice", "llm:scripted/m"),
        ("prover-estimator", "--problem", "bike-lanes", "--bob", "llm:scripted/m"),
    ],
)
def test_a_players_unreachable_model_leaves_the_debate_undecided_not_lost(http, capsys, tmp_path, argv) -> None:
    http.play(SERVER_ERROR)
    record = tmp_path / "r.jsonl"
    code, data, err = debatekit(capsys, "run", *argv, "--trials", "3", "--record", str(record), "--json")
    assert code == 0, err
    assert data["forfeits"] == {"alice": 0, "bob": 0}
    assert data["undecided"] == 3 and data["trials"] == 0
    assert "HTTP 500" in data["undecided_reason"] and "llm:scripted/m" in data["undecided_reason"]
    assert math.isnan(data["accept_rate"])
    assert "note: 3 of 3 debates undecided" in err and "forfeited" not in err
    records = after_header(record)
    assert [(r["debate"], r["verdict"], r["forfeit"]) for r in records] == [(i, None, None) for i in range(3)]
    assert all("HTTP 500" in r["reason"] for r in records)


def test_undecided_debates_are_counted_apart_and_out_of_every_rate() -> None:
    """Five debates, two undecided (numbers 3 and 1), over two merged shards: the rates are the
    three decided debates', the first undecided reason is debate 1's, and a resume goes on at 5."""
    ledger = Ledger()
    ledger.count_queries(Role.VERIFIER, 2)
    first, second = Summary(), Summary()
    first.add(0, 1, 1, ledger, None, "")
    first.add(3, None, 1, ledger, None, "alice: llm:x: Transient: HTTP 503")
    second.add(1, None, 1, ledger, None, "bob: llm:x: ModelTimeout")
    second.add(2, 0, 1, ledger, Role.ALICE, "malformed")
    second.add(4, 1, 1, ledger, None, "")
    merged = first.merge(second)
    assert (merged.trials, merged.undecided, merged.played) == (3, 2, 5)
    assert merged.undecided_reason == (1, "bob: llm:x: ModelTimeout")
    assert (merged.accepts, merged.honest_wins, merged.queries_sum[Role.VERIFIER]) == (2, 2, 6)
    instance = make_instance(PROBLEMS["caffeine"], 26, True, 0)
    honest = PROTOCOLS["cross-exam"].honest
    result = result_of(PROTOCOLS["cross-exam"], instance, honest(Role.ALICE), honest(Role.BOB), 0, merged, {},
                       instance.oracle)  # fmt: skip
    assert (result.trials, result.undecided, result.accept_rate, result.verifier_queries_mean) == (3, 2, 2 / 3, 2.0)
    assert result.to_json()["undecided_reason"] == "bob: llm:x: ModelTimeout"
    assert "undecided (not in the rates)" in str([c._cells for c in table(result, {}).columns])


# -- records made with a model verifier replay --------------------------------------------------------


@pytest.mark.parametrize("protocol", ["prover-estimator", "naive-recursive"])
def test_a_recursive_record_made_with_a_model_verifier_replays(http, capsys, tmp_path, protocol) -> None:
    """The model says no (P[yes] = 0.001) where the plan's judge is certain of yes: an answer the
    built-in oracle never gives, which is the model's to give."""
    http.play(said(0.001))
    record = tmp_path / "r.jsonl"
    code, _, err = debatekit(capsys, "run", protocol, "--problem", "bike-lanes", "--verifier-oracle",
                             "llm:scripted/m", "--trials", "3", "--record", str(record))  # fmt: skip
    assert code == 0, err
    code, out = main(["replay", str(record)]), capsys.readouterr().out
    assert code == 0 and "3 of 3 debates reproduce" in out, out
    records = after_header(record)
    answers = [e for r in records for e in r["events"] if e.get("query") == "verifier"]
    assert answers and all(e["judges"] == [{"model": "llm:scripted/m"}] for e in answers)
    assert any(e["answer"] == 0 for e in answers)
