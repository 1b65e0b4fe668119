"""Datasets played by the protocols (issue 22, point 4): rows with a passage and a decomposition
read as untrusted input (every mistake one line naming the row, exit 2), each row a plan whose
ground truth follows exactly from its steps, ``run --problem DATASET`` item by item with per-item
and pooled results (each item reproducible alone from its printed seed), one item ``DATASET#ID``
for run, solve and replay, a sweep's dataset a cell an item, and the report a row an item."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from debatekit.analysis.stats import wilson
from debatekit.cli.main import main
from debatekit.engine.seeds import item_seed
from debatekit.problems.dataset import SHIPPED, DatasetError, load
from debatekit.problems.plan import ClaimTree, Compute, Kind
from debatekit.problems.registry import Feature

ROWS: list[dict[str, Any]] = [
    {"id": "both", "question": "Do both the Nile and the Amazon flow through Africa?", "truth": "no",
     "steps": [{"question": "Does the Nile flow through Africa?", "truth": "yes"},
               {"question": "Does the Amazon flow through Africa?", "truth": "no"}]},
    {"id": "prime", "question": "Is 13 a prime number?", "truth": "yes"},
    {"id": "minutes", "question": "Did most of the council vote for the plan?", "truth": "yes",
     "passage": "Minutes. Nine members were present. Six voted for the plan, three against.",
     "steps": [{"id": "six", "question": "Did six members vote for the plan?", "truth": "yes"},
               {"id": "nine", "question": "Were nine members present?", "truth": "yes"},
               {"id": "ten", "question": "Were ten members present?", "truth": "no"}], "combine": "at-least:2"},
    {"id": "noisy", "question": "Does the evidence favour the drug?", "p_yes": 0.896,
     "steps": [{"question": f"Does study {k} favour the drug?", "p_yes": 0.8} for k in "ABC"],
     "combine": "majority"},
]  # fmt: skip


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    return write(tmp_path / "rows.jsonl", ROWS)


def cli(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_decomposed_row_is_a_plan_whose_truth_follows_exactly_from_its_steps(dataset: Path) -> None:
    both, prime, minutes, noisy = load(dataset)
    plan = both.plan("rows#both", "rows#both")
    assert [s.p_yes for s in plan.steps[:2]] == [1.0, 0.0] and plan.steps[2] == Compute(
        "answer", both.question, (0, 1), Kind.AND, 0
    )
    assert (plan.truth, plan.probability, both.p_yes) == (False, 0.0, 0.0)
    assert ClaimTree.shape(plan) == (1, 2)  # one level of claims: prover-estimator's decomposition
    assert Feature.DETERMINISTIC in plan.features
    assert prime.plan("p", "p").steps[0].text == "Is 13 a prime number?" and len(prime.plan("p", "p").steps) == 1
    judged = minutes.plan("m", "m").steps[0]
    assert judged.id == "six" and judged.text == f"{ROWS[2]['passage']}\nDid six members vote for the plan?"
    noisy_plan = noisy.plan("n", "n")
    assert noisy_plan.probability == pytest.approx(3 * 0.8**2 * 0.2 + 0.8**3) and noisy_plan.truth
    assert Feature.DETERMINISTIC not in noisy_plan.features


@pytest.mark.parametrize(
    ("row", "says"),
    [
        ({"question": "Q?", "truth": "yes", "steps": [{"question": "A?", "truth": "no"}]}, "steps give P[yes] = 0"),
        ({"question": "Q?", "truth": "yes", "steps": "[{]"}, "steps is a JSON list"),
        ({"question": "Q?", "truth": "yes", "steps": []}, "list of 1 to 16"),
        ({"question": "Q?", "truth": "yes", "steps": [{"question": "A?", "truth": "yes", "why": 1}]}, "unknown key"),
        ({"question": "Q?", "truth": "yes", "steps": [{"question": "A?", "truth": "yes"}] * 2}, "repeats"),
        (
            {"question": "Q?", "truth": "yes", "steps": [{"question": "A?", "truth": "yes"}], "combine": "xor"},
            "combine is and, or",
        ),
        (
            {"question": "Q?", "truth": "yes", "steps": [{"question": "A?", "truth": "yes"}], "combine": "at-least:2"},
            "at-least:K needs K",
        ),
        ({"question": "Q?", "truth": "yes", "combine": "or"}, "has no steps"),
        ({"question": "Q?", "truth": "yes", "passage": "P", "context": "C"}, "passage or context"),
        ({"id": "a#b", "question": "Q?", "truth": "yes"}, "cannot hold '#'"),
        ({"question": "Q?", "p_yes": 0.5, "steps": [{"question": "A?", "p_yes": 0.25}]}, "not its p_yes 0.5"),
    ],
)
def test_a_bad_decomposition_is_one_mistake_naming_the_row(tmp_path: Path, row: dict, says: str) -> None:
    with pytest.raises(DatasetError, match=r"rows\.jsonl:2: row 2") as err:
        load(write(tmp_path / "rows.jsonl", [{"question": "Fine?", "truth": "no"}, row]))
    assert says in str(err.value)


def test_a_csv_row_gives_its_steps_as_json_text(tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    steps = json.dumps([{"question": "Is 2 even?", "truth": "yes"}, {"question": "Is 3 even?", "truth": "no"}])
    path.write_text('id,question,truth,steps,combine\nx,"Is 2 or 3 even?",yes,"' + steps.replace('"', '""') + '",or\n')
    (item,) = load(path)
    assert (item.p_yes, [s.p_yes for s in item.steps[:2]], item.steps[2].op) == (1.0, [1.0, 0.0], Kind.OR)


def test_run_over_a_dataset_plays_each_item_at_its_own_truth_and_pools_them(
    capsys: pytest.CaptureFixture[str], dataset: Path
) -> None:
    code, out, err = cli(capsys, "run", "cross-exam", "--problem", dataset, "--trials", 12, "--seed", 5,
                         "--alice", "lie-step", "--no-log", "--json")  # fmt: skip
    assert code == 0, err
    got = json.loads(out)
    items = {item["id"]: item for item in got["items"]}
    assert items["noisy"]["skipped"] == "cross-exam needs deterministic"  # a judgement that is not certain
    played = [items[k] for k in ("both", "prime", "minutes")]
    assert [(i["truth"], i["problem"], i["seed"]) for i in played] == [
        (t, f"{dataset}#{k}", item_seed(5, k)) for t, k in (("no", "both"), ("yes", "prime"), ("yes", "minutes"))
    ]
    assert items["both"]["accept_rate"] == 0.0  # Thm 5.3: soundness 0 against honest Bob, whatever Alice does
    assert items["both"]["promised"] is True and items["prime"]["promised"] is None  # a lying Alice: no promise
    yes = sum(round(i["accept_rate"] * 12) for i in played if i["truth"] == "yes")
    pooled = got["pooled"]
    assert pooled["accept_yes"] == {"k": yes, "n": 24, "rate": yes / 24, "ci": list(wilson(yes, 24))}
    assert pooled["accept_no"]["k"] == 0 and pooled["accept_no"]["n"] == 12
    assert pooled["correct"]["k"] == yes + 12 and pooled["correct"]["n"] == 36
    assert (got["skipped"], got["promised"], got["interrupted"]) == (1, {"held": 1, "of": 1}, False)

    # an item's line is the run of that item alone, from the seed it prints
    code, out, err = cli(capsys, "run", "cross-exam", "--problem", f"{dataset}#minutes", "--trials", 12,
                         "--seed", items["minutes"]["seed"], "--alice", "lie-step", "--no-log", "--json")  # fmt: skip
    assert code == 0, err
    alone = json.loads(out)
    assert (alone["accept_rate"], alone["truth"], alone["size"]) == (items["minutes"]["accept_rate"], "yes", 4)


def test_the_shipped_decomposed_dataset_holds_cross_examinations_promises_item_by_item(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = cli(capsys, "run", "cross-exam", "--problem", "compound", "--trials", 5, "--alice",
                         "lie-step", "--no-log", "--json")  # fmt: skip
    assert code == 0, err
    got = json.loads(out)
    assert len(got["items"]) == len(load(SHIPPED["compound"])) and got["skipped"] == 0
    no_items = [item for item in got["items"] if item["truth"] == "no"]
    assert no_items and all(item["accept_rate"] == 0.0 and item["promised"] for item in no_items)


def test_stochastic_debate_plays_the_item_cross_examination_cannot(
    capsys: pytest.CaptureFixture[str], dataset: Path
) -> None:
    code, out, err = cli(capsys, "run", "stochastic", "--problem", f"{dataset}#noisy", "--trials", 3, "--no-log",
                         "--json")  # fmt: skip
    assert code == 0, err
    got = json.loads(out)
    # K's hybrid bound, step by step: P[maj | A] moves 0.96 - 0.64; B's most (A = 0) 0.8 - 0; C's and the
    # answer's 1 each (A and B apart; y_T itself)
    assert (got["truth"], got["size"], got["K"]) == ("yes", 4, pytest.approx(0.32 + 0.8 + 1 + 1))


def test_one_item_solves_exactly_against_the_best_adversary(dataset: Path) -> None:
    import debatekit

    solved = debatekit.solve("cross-exam", problem=f"{dataset}#both", truth="no")
    assert (solved.solution.value, solved.solution.truth) == (1.0, "no")  # honest Bob always wins: s = 0
    with pytest.raises(debatekit.UsageError, match="the item's truth is no"):
        debatekit.solve("cross-exam", problem=f"{dataset}#both", truth="yes")


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (("--truth", "yes"), "each item of a dataset has its own truth"),
        (("--record", "r.jsonl"), "run keeps no records of it"),
        (("--size", "3"), "drop --size"),
    ],
)
def test_a_run_over_a_dataset_refuses_what_an_item_fixes_itself(
    capsys: pytest.CaptureFixture[str], dataset: Path, extra: tuple[str, ...], says: str
) -> None:
    code, _, err = cli(capsys, "run", "cross-exam", "--problem", dataset, "--trials", 2, "--no-log", *extra)
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    ("problem", "says"),
    [("{d}#nope", "no item with the id 'nope'"), ("{d}#noisy", "does not support cross-exam"),
     ("missing.csv", "cannot read it")],
)  # fmt: skip
def test_a_wrong_item_or_dataset_is_one_line(
    capsys: pytest.CaptureFixture[str], dataset: Path, problem: str, says: str
) -> None:
    code, _, err = cli(capsys, "run", "cross-exam", "--problem", problem.format(d=dataset), "--trials", 2, "--no-log")
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1


def test_an_items_record_replays_and_a_changed_row_is_found(
    capsys: pytest.CaptureFixture[str], dataset: Path, tmp_path: Path
) -> None:
    record = tmp_path / "r.jsonl"
    code, _, err = cli(capsys, "run", "cross-exam", "--problem", f"{dataset}#both", "--trials", 4, "--alice",
                       "lie-step", "--record", record, "--no-log")  # fmt: skip
    assert code == 0, err
    code, out, err = cli(capsys, "replay", record)
    assert code == 0 and "4 of 4 debates reproduce" in out + err
    changed = [dict(ROWS[0], steps=[dict(ROWS[0]["steps"][0], question="Does the Nile reach Egypt?"),
                                     ROWS[0]["steps"][1]]), *ROWS[1:]]  # fmt: skip
    write(dataset, changed)
    code, out, err = cli(capsys, "replay", record)
    assert code == 1 and "not the instance the record was played on" in out + err


def test_a_sweep_over_a_dataset_is_a_cell_an_item_as_run_plays_it(dataset: Path, tmp_path: Path) -> None:
    from debatekit.experiments.grid import GridError, expand

    cells = expand({"protocol": ["cross-exam", "stochastic"], "problem": str(dataset), "seed": [0, 1], "trials": 3})
    got = sorted((c.protocol, str(c.problem).rpartition("#")[2], c.truth.value, c.size, c.seed) for c in cells)
    want = sorted(
        (protocol, k, truth, size, item_seed(seed, k))
        for protocol in ("cross-exam", "stochastic")
        for k, truth, size in (("both", "no", 3), ("prime", "yes", 1), ("minutes", "yes", 4), ("noisy", "yes", 4))
        for seed in (0, 1)
        if not (protocol == "cross-exam" and k == "noisy")
    )
    assert got == want
    with pytest.raises(GridError, match="has its own truth"):
        expand({"protocol": "cross-exam", "problem": str(dataset), "truth": "yes"})


def test_the_report_of_a_dataset_run_has_a_row_an_item(
    capsys: pytest.CaptureFixture[str], dataset: Path, tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    code, _, err = cli(capsys, "run", "cross-exam", "--problem", dataset, "--trials", 3, "--log-dir", logs)
    assert code == 0, err
    code, out, err = cli(capsys, "logs", "--log-dir", logs)
    assert code == 0 and "verdict = truth 1.000 (4 items)" in out
    code, out, err = cli(capsys, "report", logs, "--json")
    assert code == 0, err
    got = json.loads(out)
    (pooled,) = got["datasets"]  # honest players: every verdict the truth (Thm 5.3, c = 1, s = 0)
    assert (pooled["dataset"], pooled["items"], pooled["holds"]) == (str(dataset), 3, [3, 3])
    assert (pooled["accept_yes"]["successes"], pooled["accept_yes"]["trials"]) == (6, 6)
    assert (pooled["accept_no"]["successes"], pooled["accept_no"]["trials"]) == (0, 3)
    assert (pooled["correct"]["successes"], pooled["correct"]["trials"]) == (9, 9)
    rows = got["runs"]
    assert sorted((r["problem"], r["truth"]) for r in rows) == [
        (f"{dataset}#both", "no"), (f"{dataset}#minutes", "yes"), (f"{dataset}#prime", "yes")
    ]  # fmt: skip


def test_prover_estimator_over_a_dataset_checks_each_items_payoff_bound(
    capsys: pytest.CaptureFixture[str], dataset: Path
) -> None:
    code, out, err = cli(capsys, "run", "prover-estimator", "--problem", dataset, "--trials", 6, "--alice",
                         "bad-proof", "--no-log", "--json")  # fmt: skip
    assert code == 0, err
    items = [item for item in json.loads(out)["items"] if "skipped" not in item]
    assert len(items) == 4  # a claim tree each, the noisy row's too (Definition 5.1 needs no certain judge)
    for item in items:  # Thm 6.1: a dishonest A earns at most the bound, where it is below the honest floor
        assert item["payoff_bound_kind"] == "soundness"
        if item["payoff_bound_promised"]:
            assert item["promised"] is True and item["payoff_ci"][0] <= item["payoff_bound"]
        else:  # a one-step plan: the bound is vacuous, and the item says it promises nothing
            assert item["promised"] is None and "vacuous" in item["payoff_bound_note"]
    assert sum(item["payoff_bound_promised"] for item in items) >= 2
