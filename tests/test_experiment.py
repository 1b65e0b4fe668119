"""``debatekit experiment judge-accuracy`` (issue 22, point 5): with built-in debaters and the
items' own oracle as a perfect judge each arm's accuracy is what the theorems and a hand count
give (cross-examination 1: Theorem 5.3; direct 1; consultancy against a one-lie liar the exact
spot-check probability 1/T on a no item); a scripted model judge (no network) that cannot tell a
plan from its variant is right on exactly half the items directly and on all of them in debate,
with built-in or LLM debaters (``llm:`` on the true side, ``llm-liar:`` on the false); the JSON
contract and the plot; user mistakes one line, exit 2."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from debatekit.cli.main import main
from debatekit.ledger import Role
from debatekit.mistakes import UserError
from debatekit.problems.plan_file import load as load_plan
from debatekit.protocols.registry import PROTOCOLS
from debatekit.runs.experiment import Case, evidence, judge_accuracy, plan_cases

SMALL = """
title = "Is the small claim true?"
answer = "both"
truth = "yes"

[[steps]]
id = "first"
kind = "question"
claim = "the first part holds"
text = "Does the first part hold?"
p_yes = 1.0

[[steps]]
id = "second"
kind = "question"
claim = "the second part holds"
text = "Does the second part hold?"
p_yes = 1.0

[[steps]]
id = "both"
kind = "and"
claim = "both parts hold"
reads = ["first", "second"]

[variant]
truth = "no"
[variant.steps.second]
p_yes = 0.0
"""


@pytest.fixture
def small(tmp_path: Path) -> tuple[Case, ...]:
    """A plan of T = 3 steps (two questions and their and) and its variant, whose second part fails."""
    file = tmp_path / "small.toml"
    file.write_text(SMALL)
    return tuple(
        Case(f"small/{plan.truth}", plan.truth, plan.instance(), plan, evidence(plan)) for plan in load_plan(file)
    )


def arms(result: Any) -> dict[str, Any]:
    return {arm.name: arm for arm in result.arms}


def test_a_perfect_judge_is_right_directly_and_in_cross_examination_on_every_plan_it_plays() -> None:
    result = arms(judge_accuracy("honest", "builtin", trials=4))
    cases = plan_cases()
    assert sorted(c.truth for c in cases) == [False] * 3 + [True] * 3  # each plan in both truths
    assert (result["direct"].correct, result["direct"].n) == (6, 6)
    playable = [c for c in cases if PROTOCOLS["cross-exam"].needs <= c.plan.features]
    for name in ("cross-exam", "prover-estimator"):  # Theorem 5.3; prover-estimator's honest B on these plans
        arm = result[name]
        assert arm.accuracy == 1.0 and arm.n == 4 * len(playable) and arm.ci[0] > 0.8
    assert {name for name, _ in result["cross-exam"].skipped} == {c.name for c in cases if c not in playable}
    assert all("deterministic" in why for _, why in result["cross-exam"].skipped)
    assert sum(t for _, t, _, _ in result["cross-exam"].items) * 2 == len(result["cross-exam"].items)


def test_consultancy_against_a_one_lie_liar_is_the_spot_check_probability(small: tuple[Case, ...]) -> None:
    trials = 600
    result = arms(judge_accuracy("honest", "builtin", protocols=["cross-exam"], trials=trials, cases=small))
    consultancy = result["consultancy"]
    (yes,) = [i for i in consultancy.items if i[1]]
    (no,) = [i for i in consultancy.items if not i[1]]
    assert yes[2:] == (trials, trials)  # the honest consultant survives every check
    # on the no plan lie-output flips a_T only: one wrong step of T = 3, caught when the check lands on it
    spec, instance = PROTOCOLS["cross-exam"], small[1].plan.instance()
    from debatekit.analysis.exact import accept_probability

    alice, bob = (
        spec.strategies[role][name] for role, name in ((Role.ALICE, "lie-output"), (Role.BOB, "point-random"))
    )
    assert Fraction(accept_probability(spec, instance, alice, bob)).limit_denominator(100) == Fraction(2, 3)
    from debatekit.analysis.stats import wilson

    low, high = wilson(no[2], no[3], 0.999)
    assert low <= 1 / 3 <= high and consultancy.accuracy < 1
    assert result["cross-exam"].accuracy == 1.0 and result["direct"].accuracy == 1.0


def test_a_datasets_rows_are_one_step_plans_and_need_a_yes_or_no_truth(tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    data.write_text("id,question,context,truth\na,Is A?,,yes\nb,Is B?,A passage.,no\n")
    result = arms(judge_accuracy("honest", "builtin", dataset=str(data), trials=5))
    assert {name: (arm.correct, arm.n) for name, arm in result.items()} == {
        "direct": (2, 2),
        "consultancy": (10, 10),  # T = 1: the spot-check always checks the one step
        "cross-exam": (10, 10),
        "prover-estimator": (10, 10),
    }
    assert [i[:2] for i in result["direct"].items] == [("a", True), ("b", False)]
    bad = tmp_path / "p.csv"
    bad.write_text("id,question,p_yes\nx,Is X?,0.7\n")
    with pytest.raises(UserError, match=re.escape("row 'x': p_yes 0.7 is no known truth")):
        judge_accuracy("honest", "builtin", dataset=str(bad))


def test_the_json_contract_and_the_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plot = tmp_path / "a.png"
    argv = ["experiment", "judge-accuracy", "--debaters", "honest", "--trials", "2", "--protocols", "cross-exam"]
    assert main([*argv, "--json", "--plot", str(plot)]) == 0
    out = capsys.readouterr()
    data = json.loads(out.out)
    assert [a["name"] for a in data["arms"]] == ["direct", "consultancy", "cross-exam"]
    for arm in data["arms"]:
        assert {"name", "accuracy", "ci", "n"} <= set(arm) and arm["ci"][0] <= arm["accuracy"] <= arm["ci"][1]
        assert arm["correct"] == sum(i["correct"] for i in arm["items"]) and arm["n"] == sum(
            i["n"] for i in arm["items"]
        )
    assert "consultancy left out 2 items, e.g. code-review" in out.err
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(argv) == 0
    table = capsys.readouterr().out
    assert "consultancy" in table and "[0.610, 1.000]" in table  # direct: 6 of 6


def test_the_api_is_what_json_prints(capsys: pytest.CaptureFixture[str]) -> None:
    import debatekit

    result = debatekit.experiment_judge_accuracy(debaters="honest", protocols=["cross-exam"], trials=2, seed=3)
    assert main(["experiment", "judge-accuracy", "--debaters", "honest", "--protocols", "cross-exam", "--trials", "2",
                 "--seed", "3", "--json"]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(result.to_json()))
    with pytest.raises(debatekit.UsageError, match="--debaters is honest"):
        debatekit.experiment_judge_accuracy(debaters="nobody")


@pytest.mark.parametrize(
    ("argv", "why"),
    [
        (["--debaters", "liar"], "--debaters is honest (the built-in players) or llm:PROVIDER/MODEL"),
        (["--debaters", "honest", "--judge", "people"], "--judge is builtin (the ground truth) or llm:"),
        (["--debaters", "honest", "--protocols", "kw"], "--protocols: judge-accuracy plays cross-exam"),
        (["--debaters", "honest", "--liar", "lie-everything"], "has no Alice liar 'lie-everything'"),
        (["--debaters", "llm:cal/m", "--liar", "lie-step"], "with llm debaters the liar is llm-liar"),
        (["--debaters", "honest", "--plot", "a.svg"], "--plot writes a PNG"),
        (["--debaters", "honest", "--dataset", "missing.csv"], "missing.csv"),
        (["--debaters", "honest", "--trials", "0"], "--trials"),
    ],
)
def test_mistakes_are_one_line_and_exit_2(
    argv: list[str], why: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["experiment", "judge-accuracy", *argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and why in err, err


# -- a model of the judge, through a scripted OpenAI-compatible server ----------------------------

pytest.importorskip("openai")
pytest.importorskip("tenacity")

from llm_server import Reply, Server, chat, serving  # noqa: E402


@pytest.fixture(scope="module")
def http() -> Iterator[Server]:
    yield from serving()


@pytest.fixture
def env(http: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Server:
    monkeypatch.setenv("DEBATEKIT_EXP_BASE_URL", http.url)
    monkeypatch.setenv("DEBATEKIT_EXP_API_KEY", "sk-test")
    monkeypatch.setenv("DEBATEKIT_LLM_CACHE", str(tmp_path / "llm.sqlite"))
    return http


def truthful_on_steps(body: dict[str, Any]) -> Reply:
    """A judge right on every plan step's question (their ground truth is 0 or 1, by text alone),
    and yes to every top question: it cannot tell a plan from its variant when asked directly."""
    prompt = body["messages"][-1]["content"]
    truths = {step.text: step.p_yes for case in plan_cases() for step in case.plan.steps if hasattr(step, "p_yes")}
    asked = [p for text, p in truths.items() if f"Question: {text}\n" in prompt]
    p = asked[0] if asked else 1.0
    return Reply(chat("Yes" if p else "No", (("Yes" if p else "No", math.log(1.0)),)))


@pytest.mark.parametrize("mode", ["logprobs", "reason"])
def test_a_model_judge_fooled_directly_is_right_with_debate(
    env: Server, capsys: pytest.CaptureFixture[str], tmp_path: Path, mode: str
) -> None:
    env.play(truthful_on_steps)
    generation = tmp_path / "g.toml"
    generation.write_text(f'mode = "{mode}"\n')
    argv = ["experiment", "judge-accuracy", "--debaters", "honest", "--judge", "llm:exp/m", "--trials", "3", "--json",
            "--generation", str(generation)]  # fmt: skip
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    result = {arm["name"]: arm for arm in data["arms"]}
    assert data["generation"] == {"mode": mode}
    assert env.calls and all((body.get("max_tokens", 1) > 1) is (mode == "reason") for body in env.bodies)
    assert (result["direct"]["correct"], result["direct"]["n"]) == (3, 6)  # yes to both of each pair
    assert result["cross-exam"]["accuracy"] == 1.0 and result["cross-exam"]["n"] == 12
    assert result["consultancy"]["accuracy"] < 1.0


def test_llm_debaters_argue_both_sides_before_a_model_judge(env: Server, capsys: pytest.CaptureFixture[str]) -> None:
    env.play(truthful_on_steps)
    argv = ["experiment", "judge-accuracy", "--debaters", "llm:exp/m", "--judge", "llm:exp/m", "--trials", "2",
            "--protocols", "cross-exam", "--json"]  # fmt: skip
    assert main(argv) == 0
    result = {arm["name"]: arm for arm in json.loads(capsys.readouterr().out)["arms"]}
    assert result["cross-exam"]["seats"] == {
        "yes items": {"alice": "llm:exp/m", "bob": "llm-liar:exp/m"},
        "no items": {"alice": "llm-liar:exp/m", "bob": "llm:exp/m"},
    }
    # a judge right on every step: the lying Alice is caught by honest Bob, the lying Bob's challenge fails
    assert result["cross-exam"]["accuracy"] == 1.0 and result["cross-exam"]["n"] == 8
    assert result["consultancy"]["seats"]["no items"] == {"alice": "llm-liar:exp/m", "bob": "point-random"}
    assert [i["correct"] for i in result["consultancy"]["items"] if i["truth"] == "yes"] == [2, 2]
    lied = [i for i in result["consultancy"]["items"] if i["truth"] == "no"]
    assert sum(i["correct"] for i in lied) < sum(i["n"] for i in lied)  # her lie survives some spot-checks
