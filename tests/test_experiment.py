"""``debatekit experiment judge-accuracy`` (issue 22, point 5): with built-in debaters and the
items' own oracle as a perfect judge each arm's accuracy is what the theorems and a hand count
give (cross-examination 1: Theorem 5.3; direct 1; consultancy, its consultant on the true side in
half the debates of every item, against a one-lie liar the exact spot-check probability 1/T, T
the steps of the plan or of its negation); a scripted model judge (no network) that cannot tell a
plan from its variant is right on exactly half the items directly and on all of them in debate,
with built-in or LLM debaters (``llm:`` on the true side, ``llm-liar:`` on the false); ``--liar``
and ``--liar-bob`` seat the liars they name; the JSON contract, the plot, the log folder and the
report read from it; user mistakes one line, exit 2."""

from __future__ import annotations

import base64
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
from debatekit.runs.experiment import Case, evidence, judge_accuracy, negation, plan_cases

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
    assert sum(t for _, t, *_ in result["cross-exam"].items) * 2 == len(result["cross-exam"].items)
    assert result["cross-exam"].sides == {"alice": {"true": 4 * 2, "false": 4 * 2}, "bob": {"true": 8, "false": 8}}
    consultancy = result["consultancy"]  # trials 4: 2 debates on each side of every item
    assert sorted((name, yes == truth, n) for name, truth, yes, _, n in consultancy.items) == sorted(
        (c.name, side, 2) for c in playable for side in (True, False)
    )
    assert consultancy.sides == {"alice": {"true": 2 * len(playable), "false": 2 * len(playable)}}
    assert result["direct"].sides == {}


def test_consultancy_against_a_one_lie_liar_is_the_spot_check_probability(small: tuple[Case, ...]) -> None:
    """Each item of the T = 3 plan: the honest consultant on the true side always survives; the liar
    on the false side flips the answer she argues (lie-output), one wrong step, caught when the
    uniform check lands on it: arguing yes on the no plan 1 of its 3 steps, arguing no on the yes
    plan 1 of its negation's 4 (whose rejection is a yes: the truth)."""
    from debatekit.analysis.exact import accept_probability
    from debatekit.analysis.stats import wilson

    trials = 600
    result = arms(judge_accuracy("honest", "builtin", protocols=["cross-exam"], trials=trials, cases=small))
    consultancy = result["consultancy"]
    assert consultancy.seats == {"true side": {"alice": "honest", "bob": "point-random"},
                                 "false side": {"alice": "lie-output", "bob": "point-random"}}  # fmt: skip
    assert consultancy.sides == {"alice": {"true": trials, "false": trials}}
    spec = PROTOCOLS["cross-exam"]
    liar, check = spec.strategies[Role.ALICE]["lie-output"], spec.strategies[Role.BOB]["point-random"]
    caught = {}
    for case in small:
        played = negation(case.plan) if case.truth else case.plan  # the false answer, argued as yes on a no plan
        accepted = Fraction(accept_probability(spec, played.instance(), liar, check)).limit_denominator(100)
        assert accepted == Fraction(len(played.steps) - 1, len(played.steps))  # the one lie of T survives (T-1)/T
        caught[case.name] = 1 - accepted
    assert sorted(caught.values()) == [Fraction(1, 4), Fraction(1, 3)]
    for name, truth, yes, correct, n in consultancy.items:
        assert n == trials // 2
        if yes == truth:  # the true side, honest
            assert correct == n
            continue
        low, high = wilson(correct, n, 0.999)
        assert low <= caught[name] <= high, (name, yes, correct)
    assert consultancy.accuracy < 1
    assert result["cross-exam"].accuracy == 1.0 and result["direct"].accuracy == 1.0


def test_the_negation_argues_the_other_answer(small: tuple[Case, ...]) -> None:
    for case in small:
        negated = negation(case.plan)
        assert negated.truth is not case.plan.truth and len(negated.steps) == len(case.plan.steps) + 1
        assert negated.probability == pytest.approx(1 - case.plan.probability)
        assert negated.features == case.plan.features
        assert negated.instance().machine.length == len(negated.steps)


def test_a_datasets_rows_are_one_step_plans_and_need_a_yes_or_no_truth(tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    data.write_text("id,question,context,truth\na,Is A?,,yes\nb,Is B?,A passage.,no\n")
    result = arms(judge_accuracy("honest", "builtin", dataset=str(data), trials=5))
    assert {name: (arm.correct, arm.n) for name, arm in result.items() if name != "consultancy"} == {
        "direct": (2, 2),
        "cross-exam": (10, 10),
        "prover-estimator": (10, 10),
    }
    assert [i[:2] for i in result["direct"].items] == [("a", True), ("b", False)]
    # consultancy: trials 5, so 3 on each side; the one-step plan's spot-check always checks its one step,
    # so only the liar arguing no on 'a' (yes on its two-step negation) may survive it
    consulted = {(name, yes): (correct, n) for name, _, yes, correct, n in result["consultancy"].items}
    assert consulted[("a", True)] == consulted[("b", False)] == consulted[("b", True)] == (3, 3)
    assert consulted[("a", False)][1] == 3
    bad = tmp_path / "p.csv"
    bad.write_text("id,question,p_yes\nx,Is X?,0.7\n")
    with pytest.raises(UserError, match=re.escape("row 'x': p_yes 0.7 is no known truth")):
        judge_accuracy("honest", "builtin", dataset=str(bad))


def test_the_json_contract_the_plot_and_the_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plot, logs = tmp_path / "a.png", tmp_path / "logs"
    argv = ["experiment", "judge-accuracy", "--debaters", "honest", "--trials", "2", "--protocols", "cross-exam"]
    assert main([*argv, "--json", "--plot", str(plot), "--log-dir", str(logs)]) == 0
    out = capsys.readouterr()
    data = json.loads(out.out)
    assert [a["name"] for a in data["arms"]] == ["direct", "consultancy", "cross-exam"]
    for arm in data["arms"]:
        assert {"name", "accuracy", "ci", "n", "sides"} <= set(arm) and arm["ci"][0] <= arm["accuracy"] <= arm["ci"][1]
        assert arm["correct"] == sum(i["correct"] for i in arm["items"]) and arm["n"] == sum(
            i["n"] for i in arm["items"]
        )
        for seat, sides in arm["sides"].items():
            assert sides["true"] + sides["false"] == arm["n"], seat
    assert "consultancy left out 2 items, e.g. code-review" in out.err
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (folder,) = logs.iterdir()  # logged when done, summary.json what --json printed
    summary = json.loads((folder / "summary.json").read_text())
    assert summary.pop("elapsed_s") >= 0 and summary == data
    config = json.loads((folder / "run.json").read_text())["config"]
    assert config["command"] == "judge-accuracy" and config["protocols"] == ["cross-exam"] and config["trials"] == 2
    assert main(["logs", "--log-dir", str(logs), "--command", "judge-accuracy", "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert listed["finished"] and listed["outcome"].startswith("direct 1.00, consultancy ")
    assert main([*argv, "--no-log", "--log-dir", str(logs)]) == 0
    table = capsys.readouterr().out
    assert "consultancy" in table and "[0.610, 1.000]" in table  # direct: 6 of 6
    assert "P[yes] > 1/2" in " ".join(table.split()) and len(list(logs.iterdir())) == 1


def test_the_report_reads_its_logs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``report`` over a log folder of two experiments (and over one's own folder): a table of every
    arm, accuracy.png drawn and embedded, and ``--json``'s series the experiments' arms as printed."""
    logs, printed = tmp_path / "logs", {}
    for seed, trials in ((0, 2), (1, 3)):
        argv = ["experiment", "judge-accuracy", "--debaters", "honest", "--trials", str(trials), "--seed", str(seed)]
        assert main([*argv, "--log-dir", str(logs), "--json"]) == 0
        printed[seed] = json.loads(capsys.readouterr().out)
    assert main(["report", str(logs), "--out", str(tmp_path / "out"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    html = Path(data["report"]).read_text(encoding="utf-8")
    png = (tmp_path / "out" / "accuracy.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and base64.b64encode(png).decode() in html
    table = re.search(r'<table id="accuracy">.*?</table>', html, re.S).group(0)
    for experiment in printed.values():
        for arm in experiment["arms"]:
            assert f'<td class="text">{arm["name"]}</td>' in table and f"{arm['correct']} / {arm['n']}" in table
    (plot,) = [plot for plot in data["plots"] if plot["file"] == "accuracy.png"]
    keys = ("name", "accuracy", "ci", "n", "correct", "undecided", "sides")
    drawn = {e["seed"]: e for e in plot["series"]}
    assert sorted(drawn) == sorted(printed)
    for seed, experiment in printed.items():
        assert [{k: arm[k] for k in keys} for arm in drawn[seed]["arms"]] == [
            {k: arm[k] for k in keys} for arm in experiment["arms"]
        ]
        assert [drawn[seed][k] for k in ("judge", "debaters", "dataset", "trials")] == [
            experiment[k] for k in ("judge", "debaters", "dataset", "trials")
        ]
    one = sorted(logs.iterdir())[0]
    assert main(["report", str(one), "--out", str(tmp_path / "one")]) == 0
    capsys.readouterr()
    assert (tmp_path / "one" / "accuracy.png").exists()


def test_liars_for_both_seats(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--liar`` seats Alice's liar in every arm (consultancy's false side too), ``--liar-bob``
    Bob's in each protocol's (consultancy's Bob stays the spot-check): the runs played say so."""
    import debatekit.runs.prepare as prepare

    played = []

    def spy(run: Any) -> Any:
        played.append(run)
        return real(run)

    real = prepare.prepare
    monkeypatch.setattr(prepare, "prepare", spy)
    result = arms(judge_accuracy("honest", protocols=["cross-exam"], trials=2, liar="lie-step", liar_bob="accept"))
    assert result["cross-exam"].seats == {"yes items": {"alice": "honest", "bob": "accept"},
                                          "no items": {"alice": "lie-step", "bob": "honest"}}  # fmt: skip
    assert result["consultancy"].seats["false side"] == {"alice": "lie-step", "bob": "point-random"}
    seated = {(run.protocol, run.alice, run.bob) for run in played}
    assert seated == {("cross-exam", "honest", "point-random"), ("cross-exam", "lie-step", "point-random"),
                      ("cross-exam", "honest", "accept"), ("cross-exam", "lie-step", "honest")}  # fmt: skip
    # each item's debates (and its negation's) from a seed of their own: the interval counts them independent
    by_arm: dict[tuple, set[int]] = {}
    for run in played:
        by_arm.setdefault((run.protocol, run.bob), set()).add(run.seed)
    assert all(len(seeds) == len([r for r in played if (r.protocol, r.bob) == key]) for key, seeds in by_arm.items())
    assert len(by_arm[("cross-exam", "accept")] | by_arm[("cross-exam", "honest")]) > 1


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
        (["--debaters", "honest", "--liar-bob", "lie-output"], "--liar-bob: cross-exam has no Bob liar 'lie-output'"),
        (["--debaters", "honest", "--liar-bob", "honest"], "--liar-bob: cross-exam has no Bob liar 'honest'"),
        (["--debaters", "honest", "--liar-bob", "accept"], "--liar-bob: prover-estimator has no Bob liar 'accept'"),
        (["--debaters", "llm:cal/m", "--liar-bob", "accept"], "--liar-bob names a built-in liar"),
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
    consultancy = result["consultancy"]  # trials 2: one debate on each side of each item
    assert consultancy["seats"]["false side"] == {"alice": "llm-liar:exp/m", "bob": "point-random"}
    assert consultancy["sides"] == {"alice": {"true": 4, "false": 4}}
    honest = [i for i in consultancy["items"] if i["truth"] == i["alice_argues"]]
    assert [(i["correct"], i["n"]) for i in honest] == [(1, 1)] * 4  # the honest consultant survives every check
    lied = [i for i in consultancy["items"] if i["truth"] != i["alice_argues"]]
    assert sum(i["correct"] for i in lied) < sum(i["n"] for i in lied) == 4  # her lie survives some spot-checks
