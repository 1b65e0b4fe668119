"""Calibration of a model of the judge (issue 22, point 6) and datasets of claims (point 4): the
metrics by exact values on hand-computed examples, datasets read as untrusted input (a bad row is
one line naming it, exit 2), ``debatekit calibrate`` through a scripted OpenAI-compatible server
(no network) with its JSON, table and reliability diagram, and a run whose model judge is worse
than chance saying so in its summary."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from debatekit.analysis.calibration import baseline, calibration
from debatekit.problems.dataset import SHIPPED, DatasetError, load, plan_items
from debatekit.problems.plan_file import BUILTIN, PLANS
from debatekit.problems.plan_file import load as load_plan


def test_the_metrics_match_a_hand_computed_example() -> None:
    scores = calibration([0.9, 0.2, 0.6, 0.4], [1, 0, 0, 1])
    assert scores.n == 4
    assert scores.brier == pytest.approx((0.01 + 0.04 + 0.36 + 0.36) / 4)
    assert scores.log_loss == pytest.approx(-(math.log(0.9) + math.log(0.8) + 2 * math.log(0.4)) / 4)
    assert scores.ece == pytest.approx((0.1 + 0.2 + 0.6 + 0.6) / 4)  # one prediction in each of 4 bins
    chance = baseline([1, 0, 0, 1])
    assert (chance.brier, chance.log_loss, chance.ece) == (0.25, pytest.approx(math.log(2)), 0.0)
    assert not scores.worse_than(chance)


def test_bins_pool_their_predictions_and_a_prediction_of_1_is_in_the_last() -> None:
    scores = calibration([0.12, 0.18, 0.95, 1.0], [0, 1, 1, 1])
    assert [(b.low, b.n) for b in scores.bins] == [(0.1, 2), (0.9, 2)]
    assert scores.bins[0].predicted == pytest.approx(0.15) and scores.bins[0].observed == 0.5
    assert scores.ece == pytest.approx(2 / 4 * 0.35 + 2 / 4 * 0.025)
    assert scores.brier == pytest.approx((0.12**2 + 0.82**2 + 0.05**2) / 4)


def test_a_confidently_wrong_judge_is_worse_than_chance_and_certainty_is_clipped() -> None:
    wrong = calibration([0.9, 0.1], [0, 1])
    assert wrong.brier == pytest.approx(0.81) and wrong.log_loss == pytest.approx(-math.log(0.1))
    assert wrong.ece == pytest.approx(0.9) and wrong.worse_than(baseline([0, 1]))
    assert calibration([0.0], [1]).log_loss == pytest.approx(-math.log(1e-12))


def test_a_probability_as_the_truth_scores_against_it() -> None:
    assert calibration([0.5], [0.9]).brier == pytest.approx(0.16)
    assert calibration([0.5], [0.9]).log_loss == pytest.approx(math.log(2))
    assert baseline([0.9, 0.1]).ece == pytest.approx(0.0)  # the mean truth is 0.5, all in one bin


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_each_shipped_dataset_has_unique_claims_half_of_them_true(name: str) -> None:
    items = load(SHIPPED[name])
    assert 30 <= len(items) <= 60
    assert len({i.id for i in items}) == len({i.question for i in items}) == len(items)
    assert {i.p_yes for i in items} == {0.0, 1.0} and sum(i.p_yes for i in items) == len(items) / 2
    assert any(i.context for i in items)


def test_the_default_dataset_is_every_built_in_plans_question_with_its_ground_truth() -> None:
    items = plan_items()
    truth = {}
    for file in PLANS.iterdir():
        for plan in load_plan(file) if file.suffix in (".toml", ".json") else ():
            oracle = plan.judge()
            truth |= {s.text: oracle.probability(plan.question(s, *[0] * len(s.reads))) for s in plan.steps
                      if hasattr(s, "p_yes")}  # fmt: skip
    assert {i.question: i.p_yes for i in items} == truth
    assert len({i.id for i in items}) == len(items) and {i.id.split(":")[0].split("/")[0] for i in items} == set(
        BUILTIN
    )


@pytest.mark.parametrize(
    ("name", "content", "why"),
    [
        ("d.csv", "question,truth\nIs it?,maybe\n", "d.csv:2: row 1: truth is yes or no"),
        ("d.csv", "question,truth\nIs it?,yes\n,no\n", "d.csv:3: row 2: a question is needed"),
        ("d.csv", "question,truth,p_yes\nIs it?,yes,1\n", "row 1: give the ground truth as truth"),
        ("d.csv", "question\nIs it?\n", "row 1: give the ground truth as truth"),
        ("d.csv", "question,p_yes\nIs it?,1.5\n", "row 1: p_yes is a probability in [0, 1]"),
        ("d.csv", "question,p_yes\nIs it?,nan\n", "row 1: p_yes is a probability in [0, 1]"),
        ("d.csv", "question,answer\nIs it?,yes\n", "row 1: unknown column 'answer'"),
        ("d.csv", "id,question,truth\na,Is it?,yes\na,Is it not?,no\n", "row 2: the id 'a' is taken"),
        ("d.csv", "question,truth\nIs it?,yes,extra\n", "d.csv:2: 3 cells where the header has 2"),
        ("d.csv", "question,truth\n", "no rows"),
        ("d.jsonl", '{"question": "Is it?", "truth": true}\n[1, 2]\n', "d.jsonl:2: expected a JSON object"),
        ("d.jsonl", '{"question": "Is it?", "truth": "yes"}\n{"question": 3, "truth": 1}\n', "row 2: question is text"),
        ("d.jsonl", '{"question": "Is it?", "p_yes": true}\n', "row 1: p_yes is a probability"),
        ("d.jsonl", '{"question": "Is it?", "truth": "yes"}\n{"question": "x", "tru\n', "d.jsonl:2:"),
        ("d.txt", "question,truth\n", "a dataset is .csv or .jsonl"),
    ],
)
def test_a_bad_dataset_is_one_mistake_naming_the_file_and_row(tmp_path: Path, name: str, content: str, why: str):
    file = tmp_path / name
    file.write_text(content)
    with pytest.raises(DatasetError) as caught:
        load(file)
    assert why in str(caught.value) and "\n" not in str(caught.value)


def test_a_spreadsheets_csv_with_a_bom_crlf_and_quoted_commas_reads(tmp_path: Path) -> None:
    file = tmp_path / "d.csv"
    file.write_bytes(
        '\ufeffid,question,context,truth\r\nc,"Is it red, or blue?","A ""quoted"" passage",No\r\n'.encode()
    )
    (item,) = load(file)
    assert (item.id, item.question, item.context, item.p_yes) == (
        "c",
        "Is it red, or blue?",
        ('A "quoted" passage',),
        0.0,
    )


def test_a_jsonl_dataset_reads_truths_probabilities_context_and_ids(tmp_path: Path) -> None:
    file = tmp_path / "d.jsonl"
    rows = [{"id": "a", "question": "Is it?", "truth": 1}, {"question": "Is it so?", "p_yes": 0.25, "context": "P."}]
    file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    a, b = load(file)
    assert (a.id, a.p_yes, a.context) == ("a", 1.0, ())
    assert (b.id, b.p_yes, b.context, b.query().context) == ("row 2", 0.25, ("P.",), ("P.",))


# -- the command line, through a scripted OpenAI-compatible server -------------------------------

pytest.importorskip("openai")
pytest.importorskip("tenacity")

from debatekit.cli.main import main  # noqa: E402
from llm_server import Reply, Server, chat, serving  # noqa: E402


@pytest.fixture(scope="module")
def http() -> Iterator[Server]:
    yield from serving()


def judging(p_of: dict[str, float], other: float = 0.0) -> Any:
    """Replies whose first token puts mass ``other`` on a token neither yes nor no, and of the
    rest P[yes] = ``p_of[question]`` on Yes and the remainder on No."""

    def reply(body: dict[str, Any]) -> Reply:
        prompt = body["messages"][-1]["content"]
        (p,) = [p for text, p in p_of.items() if f"Question: {text}\n" in prompt]
        masses = (("Yes", (1 - other) * p), ("No", (1 - other) * (1 - p)), ("Maybe", other))
        top = tuple((t, math.log(q)) for t, q in masses if q > 0)
        return Reply(chat(top[0][0], top))

    return reply


@pytest.fixture
def env(http: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Server:
    monkeypatch.setenv("DEBATEKIT_CAL_BASE_URL", http.url)
    monkeypatch.setenv("DEBATEKIT_CAL_API_KEY", "sk-test")
    monkeypatch.setenv("DEBATEKIT_LLM_CACHE", str(tmp_path / "llm.sqlite"))
    return http


def test_calibrate_scores_a_dataset_exactly_beside_the_baseline_and_draws_the_diagram(
    env: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claims = {"Is A?": (0.9, "yes"), "Is B?": (0.2, "no"), "Is C?": (0.6, "no"), "Is D?": (0.4, "yes")}
    dataset = tmp_path / "d.csv"
    dataset.write_text("question,truth\n" + "".join(f"{q},{t}\n" for q, (_, t) in claims.items()))
    env.play(judging({q: p for q, (p, _) in claims.items()}, other=0.25))
    plot = tmp_path / "r.png"
    code = main(["calibrate", "--judge", "llm:cal/m", "--dataset", str(dataset), "--json", "--plot", str(plot)])
    out = capsys.readouterr()
    assert code == 0, out.err
    data = json.loads(out.out)
    assert data["n"] == 4 and env.calls == 4
    assert data["brier"] == pytest.approx(0.1925) and data["ece"] == pytest.approx(0.375)
    assert data["log_loss"] == pytest.approx(-(math.log(0.9) + math.log(0.8) + 2 * math.log(0.4)) / 4)
    assert data["baseline"]["brier"] == 0.25 and data["baseline"]["log_loss"] == pytest.approx(math.log(2))
    assert data["worse_than_chance"] is False and data["generation"]["mode"] == "logprobs"
    assert data["dropped_mean"] == pytest.approx(0.25) and {i["estimator"] for i in data["items"]} == {"logprobs"}
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["calibrate", "--judge", "llm:cal/m", "--dataset", str(dataset)]) == 0  # all from the cache now
    table = capsys.readouterr().out
    assert f"{data['brier']:.3f}" in table and "0.250" in table and "worse than chance" not in table
    assert "neither yes nor no, renormalised away: 0.250 on average" in " ".join(table.split()) and env.calls == 4


def test_calibrate_by_default_asks_every_built_in_plan_question_and_says_when_worse_than_chance(
    env: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    items = plan_items()
    env.play(judging({i.question: 0.9 if i.p_yes < 0.5 else 0.1 for i in items}))  # confidently wrong
    assert main(["calibrate", "--judge", "llm:cal/m"]) == 0
    table = capsys.readouterr().out
    assert f"({len(items)} claims)" in table and "worse than chance" in table


@pytest.mark.parametrize(
    ("argv", "why"),
    [
        (["--judge", "builtin"], "--judge is a model of the judge"),
        (["--judge", "llm:cal/m", "--dataset", "missing.csv"], "missing.csv"),
        (["--judge", "llm:cal/m", "--plot", "r.svg"], "--plot writes a PNG"),
        (["--judge", "llm:nowhere/m"], "unknown model provider"),
        (["--judge", "llm:cal/m", "--dataset", "bad.csv"], "bad.csv:3: row 2: truth is yes or no"),
    ],
)
def test_calibrate_mistakes_are_one_line_and_exit_2(
    env: Server,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    why: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.csv").write_text("question,truth\nIs it?,yes\nIs it not?,perhaps\n")
    code = main(["calibrate", *argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and why in err


@pytest.mark.parametrize("wrong", [True, False])
def test_a_run_says_when_its_model_judge_is_worse_than_chance(
    env: Server, capsys: pytest.CaptureFixture[str], wrong: bool
) -> None:
    truth = {i.question: i.p_yes for i in plan_items()}
    env.play(judging({q: (0.95 if p < 0.5 else 0.05) if wrong else (0.95 if p >= 0.5 else 0.05)
                      for q, p in truth.items()}))  # fmt: skip
    argv = ["run", "cross-exam", "--problem", "caffeine", "--bob", "point-random", "--verifier-oracle", "llm:cal/m",
            "--trials", "4", "--no-log"]  # fmt: skip
    assert main([*argv, "--json"]) == 0
    scored = json.loads(capsys.readouterr().out)["judge_calibration"]["llm:cal/m"]
    assert scored["n"] >= 1 and scored["baseline_brier"] == 0.25
    assert scored["brier"] == pytest.approx(0.95**2 if wrong else 0.05**2)
    assert scored["worse_than_chance"] is wrong
    assert main(argv) == 0
    shown = capsys.readouterr().out
    assert ("llm:cal/m judged worse than chance: Brier 0.902" in shown) is wrong
