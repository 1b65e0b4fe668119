"""How a model of the judge is asked and its P[yes] estimated (issue 22, point 3): the generation
record and its mistakes, the final-answer parser on nasty outputs, the estimator each judgement
states (renormalised log-probabilities with the dropped mass, or the fraction of n reasoned
samples), requests that carry the record to the backend, and ``--generation`` on the command
line, recorded with the run. Fake backends and a scripted HTTP server; no network."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tenacity")
pytest.importorskip("openai")

from debatekit.cli.main import main
from debatekit.ledger import Role
from debatekit.llm.backend import Completion, ConfigError, Request, Unparseable
from debatekit.llm.generation import Generation, Mode, final_answer
from debatekit.llm.judge import ModelJudge
from debatekit.llm.model import Limits, Model
from debatekit.oracle import Question, in_debate
from llm_server import Reply, Server, chat, serving

LIMITS = Limits(max_connections=4, timeout=10.0, max_retries=0)


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("Yes", True),
        ("no", False),
        ("YES!!!", True),
        ("Answer: **Yes**", True),
        ("The answer is no.", False),
        ("Let me think. Yes, no, maybe... Final answer: NO", False),
        ("Answer: yes\nOn reflection, answer: no", False),
        ("<think>surely no</think>\nAnswer: yes", True),
        ("Paris is in France and is its capital.\n\nYes.", True),
        ("Yes, Paris is the capital of France.", True),
        ("Answer: Yes/No", None),
        ("answer: yes or no", None),
        ("Is it yes? Hard to say.", None),
        ("Yes or no? I cannot tell.", None),
        ("Yesterday it rained.", None),
        ("Nobody knows.", None),
        ("Answer with Yes or No.", None),
        ("", None),
        ("   \n\t ", None),
        ("42", None),
    ],
)
def test_the_final_answer_is_read_from_free_text_and_ambiguity_is_none(text: str, answer: bool | None) -> None:
    assert final_answer(text) is answer


def test_the_record_defaults_and_reason_mode_takes_256_tokens() -> None:
    assert Generation.of({}) == Generation(Mode.LOGPROBS, 0.0, 1, 1, "")
    reason = Generation.of({"mode": "reason", "samples": 5, "temperature": 0.7, "system": "Be careful."})
    assert (reason.mode, reason.samples, reason.max_tokens, reason.temperature) == (Mode.REASON, 5, 256, 0.7)
    assert reason.to_json() == {"mode": "reason", "temperature": 0.7, "samples": 5, "max_tokens": 256,
                                "system": "Be careful."}  # fmt: skip


@pytest.mark.parametrize(
    ("settings", "why"),
    [
        ({"mode": "think"}, "mode is logprobs or reason"),
        ({"temprature": 1.0}, "unknown key 'temprature'"),
        ({"temperature": True}, "temperature is a number"),
        ({"temperature": 3.0}, "temperature is in [0, 2]"),
        ({"mode": "reason", "samples": 3}, "copies of one answer"),
        ({"mode": "reason", "samples": 2.0, "temperature": 1.0}, "samples is a whole number"),
        ({"mode": "reason", "samples": 0, "temperature": 1.0}, "samples is 1 to 64"),
        ({"samples": 2, "temperature": 1.0}, "mode logprobs reads one token"),
        ({"max_tokens": 8}, "mode logprobs reads one token"),
        ({"system": 3}, "system is text"),
    ],
)
def test_a_mistaken_record_is_refused_with_its_reason(settings: dict[str, Any], why: str) -> None:
    with pytest.raises(ConfigError, match=why.replace("[", r"\[").replace("]", r"\]")):
        Generation.of(settings)


class Scripted:
    """A backend answering each request from ``answer(request)``, keeping the requests it was sent."""

    endpoint = "fake://generation"

    def __init__(self, answer: Any):
        self.answer, self.requests = answer, []

    async def complete(self, request: Request) -> Completion:
        self.requests.append(request)
        return self.answer(request)


def judged(judge: ModelJudge, question: Question) -> tuple[float, list[dict[str, Any]]]:
    """P[yes] and the aside the judgement left in a debate."""

    async def go() -> tuple[float, list[dict[str, Any]]]:
        debate = in_debate("run", 0)
        return await judge.judged(question, Role.VERIFIER), debate.aside

    return asyncio.run(go())


def test_logprobs_are_renormalised_over_yes_and_no_and_the_dropped_mass_reported() -> None:
    top = (("Yes", math.log(0.3)), (" yes", math.log(0.1)), ("No", math.log(0.2)), ("Maybe", math.log(0.4)))
    backend = Scripted(lambda request: Completion("Yes", 9, 1, "length", (top,)))
    judge = ModelJudge(Model("m", backend, LIMITS))
    p, aside = judged(judge, Question("Is Paris the capital of France?"))
    assert p == pytest.approx(0.4 / 0.6)
    (entry,) = aside
    assert entry["estimator"]["estimator"] == "logprobs"
    assert entry["estimator"]["dropped"] == pytest.approx(0.4)
    (request,) = backend.requests
    assert (request.max_tokens, request.top_logprobs, request.temperature) == (1, 20, 0.0)


def test_reason_mode_asks_n_seeded_samples_with_the_record_and_counts_the_answered_yes() -> None:
    texts = {0: "Step by step...\nAnswer: yes", 1: "Hmm.\nAnswer: no", 2: "I cannot decide.", 3: "**Answer: Yes**"}
    backend = Scripted(lambda request: Completion(texts[request.seed], 30, 12, "stop"))
    generation = Generation.of({"mode": "reason", "samples": 4, "temperature": 0.8, "max_tokens": 64,
                                "system": "You are careful."})  # fmt: skip
    judge = ModelJudge(Model("m", backend, LIMITS), generation=generation)
    p, aside = judged(judge, Question("Is the sky green?", ("Given a clear day: yes",)))
    assert p == pytest.approx(2 / 3)  # 2 yes of the 3 samples that answered
    (entry,) = aside
    assert entry["estimator"] == {"estimator": "samples", "n": 4, "yes": 2, "unanswered": 1}
    assert (entry["prompt_tokens"], entry["completion_tokens"]) == (120, 48)
    assert sorted(r.seed for r in backend.requests) == [0, 1, 2, 3]
    for request in backend.requests:
        assert (request.temperature, request.max_tokens, request.top_logprobs) == (0.8, 64, None)
        assert request.messages[0] == ("system", "You are careful.")
        assert request.messages[1][0] == "user" and "Answer: yes" in request.messages[1][1]
        assert "Is the sky green?" in request.messages[1][1] and "Given a clear day: yes" in request.messages[1][1]


def test_reason_mode_with_no_final_answer_in_any_sample_is_unparseable() -> None:
    backend = Scripted(lambda request: Completion("It depends.", 5, 3, "stop"))
    judge = ModelJudge(Model("m", backend, LIMITS), generation=Generation.of({"mode": "reason"}))
    with pytest.raises(Unparseable, match="no final yes or no in any of 1"):
        judged(judge, Question("Is it?"))


@pytest.fixture(scope="module")
def http() -> Iterator[Server]:
    yield from serving()


def test_the_command_line_sends_the_generation_to_an_openai_compatible_server_and_records_it(
    http: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    http.play(lambda body: Reply(chat("Thinking it over.\nAnswer: yes")))
    monkeypatch.setenv("DEBATEKIT_GEN_BASE_URL", http.url)
    monkeypatch.setenv("DEBATEKIT_GEN_API_KEY", "sk-test")
    monkeypatch.setenv("DEBATEKIT_LLM_CACHE", str(tmp_path / "llm.sqlite"))
    config = tmp_path / "g.toml"
    config.write_text('mode = "reason"\nsamples = 3\ntemperature = 0.5\nmax_tokens = 40\nsystem = "Judge."\n')
    record, logs = tmp_path / "r.jsonl", tmp_path / "logs"
    argv = ["run", "cross-exam", "--problem", "caffeine", "--bob", "point-random", "--verifier-oracle", "llm:gen/m",
            "--trials", "3", "--json",
            "--generation", str(config), "--record", str(record), "--log-dir", str(logs)]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    assert http.calls and all(
        (b["temperature"], b["max_tokens"], b["messages"][0]) == (0.5, 40, {"role": "system", "content": "Judge."})
        and "logprobs" not in b
        for b in http.bodies
    )
    assert {b["seed"] for b in http.bodies} == {0, 1, 2}
    (run_json,) = logs.glob("*/run.json")
    given = {"mode": "reason", "samples": 3, "temperature": 0.5, "max_tokens": 40, "system": "Judge."}
    assert json.loads(run_json.read_text())["config"]["generation"] == given
    header, *lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert header["header"]["generation"] == given
    estimators = [e["estimator"] for line in lines for e in line.get("aside", []) if e["llm"] == "verifier"]
    assert len(estimators) == sum(line["queries"]["verifier"] for line in lines) > 0
    assert all(e == {"estimator": "samples", "n": 3, "yes": 3, "unanswered": 0} for e in estimators)
    asked = next(line["debate"] for line in lines if line["queries"]["verifier"])
    capsys.readouterr()
    assert main(["show", str(record), "--debate", str(asked)]) == 0
    assert "1.000 (3 yes of 3)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ('mode = "think"\n', "--generation: mode is logprobs or reason"),
        ("mode = \n", "--generation: "),
    ],
)
def test_a_bad_generation_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, why: str
) -> None:
    config = tmp_path / "g.toml"
    config.write_text(content)
    code = main(["run", "cross-exam", "--problem", "caffeine", "--oracle", "llm:local/smollm2", "--generation",
                 str(config)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and why in err


def test_a_generation_without_a_model_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "g.toml"
    config.write_text("temperature = 0.0\n")
    code = main(["run", "cross-exam", "--problem", "caffeine", "--trials", "1", "--generation", str(config)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "name one (llm:PROVIDER/MODEL)" in err


def test_the_api_takes_the_generation_as_a_table_and_refuses_a_bad_one(
    http: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import debatekit

    http.play(lambda body: Reply(chat("No.")))
    monkeypatch.setenv("DEBATEKIT_GEN_BASE_URL", http.url)
    monkeypatch.setenv("DEBATEKIT_GEN_API_KEY", "sk-test")
    monkeypatch.setenv("DEBATEKIT_LLM_CACHE", str(tmp_path / "llm.sqlite"))
    asked = {"protocol": "cross-exam", "problem": "caffeine", "bob": "point-random", "verifier_oracle": "llm:gen/m"}
    result = debatekit.run(**asked, trials=3, generation={"mode": "reason", "max_tokens": 16, "system": "S."})
    assert result.verifier_queries_max >= 1 and http.calls >= 1
    assert all((b["max_tokens"], b["messages"][0]["content"]) == (16, "S.") for b in http.bodies)
    with pytest.raises(debatekit.UsageError, match="--generation: unknown key 'n'"):
        debatekit.run(**asked, trials=1, generation={"n": 3})


def test_show_states_each_estimator_and_ignores_a_malformed_one() -> None:
    from debatekit.cli.show_cmd import estimated

    assert estimated({"p_yes": 0.75, "estimator": {"estimator": "logprobs", "dropped": 0.2}}) == "0.750 (dropped 0.20)"
    assert estimated({"p_yes": 0.5, "estimator": {"estimator": "samples", "n": 4, "yes": 2}}) == "0.500 (2 yes of 4)"
    assert estimated({"p_yes": 0.5, "estimator": "samples"}) == "0.500"
    assert estimated({"p_yes": "high"}) == "" and estimated({}) == ""


def test_llm_players_generate_as_the_generation_says(
    http: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    http.play(lambda body: Reply(chat("Considering it.\nAnswer: no")))
    monkeypatch.setenv("DEBATEKIT_GEN_BASE_URL", http.url)
    monkeypatch.setenv("DEBATEKIT_GEN_API_KEY", "sk-test")
    monkeypatch.setenv("DEBATEKIT_LLM_CACHE", str(tmp_path / "llm.sqlite"))
    config = tmp_path / "g.toml"
    config.write_text('mode = "reason"\nmax_tokens = 24\nsystem = "Play fair."\n')
    argv = ["run", "cross-exam", "--problem", "caffeine", "--alice", "llm:gen/m", "--trials", "1", "--json",
            "--no-log", "--generation", str(config)]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["model_usage"]["llm:gen/m"]["alice"]["calls"] == http.calls > 0
    assert all(
        (b["max_tokens"], b["messages"][0]["content"], b.get("logprobs")) == (24, "Play fair.", None)
        for b in http.bodies
    )
