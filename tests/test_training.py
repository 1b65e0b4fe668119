"""Recorded debates as training data (issue 22, point 7): each committed move of Alice and Bob is
a row with the mover's outcome in the protocol's game, checked against the records it came from."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import debatekit
from debatekit.engine.record import read_records
from debatekit.experiments.training import export, rows
from debatekit.mistakes import UserError


def recorded(tmp_path: Path, protocol: str, name: str, **options) -> Path:
    path = tmp_path / f"{name}.jsonl"
    debatekit.run(protocol, record=path, **options)
    return path


def test_each_committed_move_is_a_row_with_its_movers_outcome(tmp_path) -> None:
    path = recorded(tmp_path, "cross-exam", "ce", problem="majority", size=9, truth=True, alice="lie-step",
                    bob="point-random", trials=40, seed=2)  # fmt: skip
    records = list(read_records(path))
    out = tmp_path / "rows.jsonl"
    assert export([path], out) == (80, 40)
    found = [json.loads(line) for line in out.read_text().splitlines()]
    for record in records:
        mine = [r for r in found if r["debate"] == record["debate"]]
        moves = [e for e in record["events"] if "move" in e and "forfeit" not in e]
        assert [(r["role"], json.loads(r["completion"])) for r in mine] == [(e["move"], e["message"]) for e in moves]
        alice_won = record["verdict"] == 1  # cross-examination: Alice argues 1
        assert {r["role"]: (r["reward"], r["label"], r["side"]) for r in mine} == {
            "alice": (float(alice_won), alice_won, "true"),
            "bob": (float(not alice_won), not alice_won, "false"),
        }
        for r in mine:
            assert "verdict" not in r["prompt"] and "truth" not in r["prompt"]
    assert 0 < sum(r["reward"] for r in found if r["role"] == "alice") < 40  # her lie was caught, not always


def test_the_recursive_protocols_pay_zero_sum_by_round(tmp_path) -> None:
    path = recorded(tmp_path, "prover-estimator", "pe", problem="bike-lanes", truth=False, trials=6, seed=1)
    for record in read_records(path):
        found = rows(record)
        alice = [r for r in found if r.role == "alice"]
        bob = [r for r in found if r.role == "bob"]
        assert alice and bob
        assert all(r.reward == record["payoff"] for r in alice) and all(r.reward == -record["payoff"] for r in bob)
        assert alice[0].round_rewards == record["rewards"] and bob[0].round_rewards == [-x for x in record["rewards"]]
        assert sum(alice[0].round_rewards) == pytest.approx(record["payoff"])
        assert alice[0].side == ("true" if record["claim"] == 0 else "false")


def test_a_prompt_shows_the_last_events_and_counts_the_rest(tmp_path) -> None:
    path = recorded(tmp_path, "stochastic", "st", problem="noisy-majority", size=8, trials=2, seed=0)
    record = next(read_records(path))
    late = [r for r in rows(record, context=2) if r.role == "alice"][-1]
    shown = late.prompt.splitlines()
    assert shown[0].startswith("Debate: stochastic on noisy-majority (size 8). You are Alice.")
    earlier = [e for e in record["events"] if "move" in e or "chance" in e]
    index = [i for i, e in enumerate(earlier) if e.get("move") == "alice"][-1]
    assert shown[2] == f"({index - 2} earlier events)" and len(shown) == 6
    assert re.fullmatch(r"Your move: claim at step \d+\.", shown[-1])


def test_model_calls_are_rows_and_an_undecided_debate_is_none() -> None:
    record = {"protocol": "cross-exam", "problem": "caffeine", "truth": "no", "debate": 3, "verdict": 0,
              "events": [{"move": "alice", "message": {"bits": "01"}}, {"move": "bob", "message": 1}],
              "aside": [{"llm": "bob", "prompt": "Is step 1 right?", "completion": "No", "p_yes": 0.1},
                        {"llm": "verifier", "prompt": "judge", "completion": "Yes"}]}  # fmt: skip
    found = rows(record)
    assert [(r.source, r.role, r.reward, r.side) for r in found] == [
        ("move", "alice", 0.0, "false"), ("move", "bob", 1.0, "true"), ("model", "bob", 1.0, "true")
    ]  # fmt: skip
    assert found[-1].prompt == "Is step 1 right?" and found[-1].move == 2
    assert rows(record | {"verdict": None}) == []


def test_parquet_holds_the_same_rows(tmp_path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    path = recorded(tmp_path, "cross-exam", "ce", problem="parity", size=6, trials=5)
    assert export([path], tmp_path / "a.jsonl") == export([path], tmp_path / "a.parquet")
    listed = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert pq.read_table(tmp_path / "a.parquet").to_pylist() == listed


@pytest.mark.parametrize(
    ("content", "out", "message"),
    [
        (None, "x.csv", "write .jsonl or .parquet"),
        ('{"x": 1}\n', "x.jsonl", "carries no chain hash"),
        (None, "missing/x.jsonl", "cannot write"),
    ],
)
def test_mistakes_are_one_line_and_exit_2(tmp_path, content, out, message) -> None:
    path = recorded(tmp_path, "cross-exam", "ce", problem="parity", size=6, trials=2)
    if content is not None:
        path.write_text(content)
    with pytest.raises(UserError, match=message):
        export([path], tmp_path / out)
    code = "import sys; from debatekit.cli.main import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-c", code, "training", str(path), "--out", str(tmp_path / out)],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and message in done.stderr
