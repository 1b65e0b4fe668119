"""``debatekit show RECORD.jsonl [--debate I]`` (issue 11, item 5): one recorded debate, readably,
for every protocol's record; a file that is missing, not JSON, not a record, or without the debate
asked for is a usage error (one line, exit status 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from debatekit.analysis.montecarlo import make_instance, run
from debatekit.cli.main import main
from debatekit.ledger import Role
from debatekit.problems import PROBLEMS
from debatekit.protocols.registry import PROTOCOLS

BOXES = str.maketrans(dict.fromkeys("│┃┏┓┗┛━─┡┩╇┬┴┼┌┐└┘├┤╋┳┻", " "))
"""Rich's table borders, dropped from what is compared."""


def recorded(path: Path, protocol: str, problem: str, truth: bool, alice: str, bob: str, trials: int = 2) -> Path:
    spec = PROTOCOLS[protocol]
    instance = make_instance(PROBLEMS[problem], PROBLEMS[problem].default_size, truth, 0)
    players = spec.strategies[Role.ALICE][alice], spec.strategies[Role.BOB][bob]
    run(spec, instance, *players, trials, 1, record=path)
    return path


def show(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["show", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, " ".join(out.translate(BOXES).split()), err  # words only, as a row reads


def test_a_cross_examination_shows_the_transcript_the_challenge_the_reads_and_the_judges_answer(tmp_path, capsys):
    path = recorded(tmp_path / "r.jsonl", "cross-exam", "caffeine", False, "lie-output", "honest")
    code, out, _ = show(capsys, path)
    assert code == 0
    assert "cross-exam on caffeine (size 26, truth no, seed 1), debate 0: alice lie-output vs bob honest" in out
    assert "alice asks the judge question Study A." in out and "clear methodological flaw? → no" in out
    assert "alice message 26 bits:" in out and "bob message 25" in out  # Bob names the output step
    assert "verifier reads bob's message: 5 bits of its word" in out and "reads alice's message: position 25" in out
    read = "bob's message: its word (5 bits); alice's message: 3, 8, 13, 18, 23, 4, 9, 14, 19, 24, 25"
    assert f"verifier read {read}" in out  # Bob disputed the output: V checked it on the bits it reads
    assert "verdict 0 (reject)" in out and "oracle queries alice 10, bob 10, verifier 0" in out


def test_show_json_is_the_record_whole_with_its_place(tmp_path, capsys):
    path = recorded(tmp_path / "r.jsonl", "cross-exam", "caffeine", True, "honest", "malformed", trials=3)
    lines = path.read_text().splitlines()
    for number in (None, 2):
        capsys.readouterr()
        assert main(["show", str(path), "--json", *(["--debate", str(number)] if number is not None else [])]) == 0
        shown = json.loads(capsys.readouterr().out)
        line = (
            2 if number is None else next(i for i, text in enumerate(lines, 1) if json.loads(text).get("debate") == 2)
        )
        stored = json.loads(lines[line - 1])
        del stored["chain"]
        assert shown == {"path": str(path), "line": line} | stored
        assert shown["debate"] == (0 if number is None else 2) and shown["forfeit"] == "bob"


def test_a_forfeit_shows_its_sender_and_reason(tmp_path, capsys):
    path = recorded(tmp_path / "r.jsonl", "cross-exam", "caffeine", True, "honest", "malformed")
    code, out, _ = show(capsys, path)
    assert code == 0 and "bob message unreadable: challenge [0] is not None or an index in [0, 26)" in out
    assert "forfeit bob: challenge [0] is not" in out


def test_stochastic_debate_shows_claims_aborts_and_the_verifiers_samples(tmp_path, capsys):
    path = recorded(tmp_path / "r.jsonl", "stochastic", "code-review", True, "bias", "honest", trials=1)
    code, out, _ = show(capsys, path)
    assert code == 0 and "constants planned" in out
    assert "alice claim t=0 0 " in out and "bob abort t=0 1" in out and "verifier asks the judge question t=0" in out
    assert "verdict 0 (reject)" in out and "judge's answers to the verifier" in out


def test_the_recursive_protocols_show_coins_payoff_and_rewards(tmp_path, capsys):
    path = recorded(tmp_path / "r.jsonl", "prover-estimator", "bike-lanes", True, "honest", "honest")
    code, out, _ = show(capsys, path, "--debate", 1)
    assert code == 0 and "debate 1:" in out
    assert "alice queries" in out and "verifier coin z_hat p = " in out and "bob conditional" in out
    assert "A's payoff 1.95313e-06 (claim A(x) = 1)" in out and "rewards by round 1.953e-06, 0, 0, 0" in out
    assert "verifier asks the judge question" in out and "judge's answers to the verifier" in out


def llm_record(path: Path, calls: int) -> dict[str, Any]:
    """A naive recursive record whose aside holds ``calls`` model calls (one of them failed), and
    whose verifier query names the people who answered it."""
    recorded(path, "naive-recursive", "bike-lanes", True, "honest", "honest", trials=1)
    record = json.loads(path.read_text().splitlines()[1])  # the debate after the header
    template = "You are the judge.\nQuestion: {}\nAnswer with Yes or No.\n"
    record["aside"] = [
        {"llm": "alice", "model": "local/smollm2", "prompt": template.format(f"is claim {i} true?"), "cached": i > 0,
         "completion": "Yes", "prompt_tokens": 30, "completion_tokens": 1, "p_yes": 0.75}
        for i in range(calls)
    ]  # fmt: skip
    record["aside"][1] |= {"completion": "Maybe", "error": "Unparseable: neither yes nor no"}
    del record["aside"][1]["p_yes"]
    (query,) = [e for e in record["events"] if e.get("query") == "verifier"]
    query["judges"] = [{"judge": 3, "judge_name": "Ana", "answer": 1}]
    path.write_text(json.dumps(record) + "\n")
    return record


def test_the_aside_shows_each_model_call_in_brief(tmp_path, capsys):
    llm_record(tmp_path / "r.jsonl", 3)
    code, out, _ = show(capsys, tmp_path / "r.jsonl")
    assert code == 0
    assert "aside: 3 model calls (2 from the cache; 90 prompt and 3 completion tokens)" in out
    assert "alice (local/smollm2) 0 'Yes' 0.750 30+1 no" in out  # the prompt shown is what differs: "0"
    assert "'Maybe' Unparseable: neither yes nor no" in out
    assert "→ yes (by Ana)" in out


def test_a_long_aside_is_cut_short_with_a_count(tmp_path, capsys):
    llm_record(tmp_path / "r.jsonl", 50)
    code, out, _ = show(capsys, tmp_path / "r.jsonl")
    assert code == 0 and "... and 10 more entries (all in the record)" in out and "is claim 39" not in out


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (None, "cannot read"),
        ("{not json\n", "r.jsonl:1: not valid JSON"),
        ('{"protocol": "cross-exam"}\n', "r.jsonl:1: not a debate record"),
        ("\n", "holds no debate records"),
        (b"\xff\xfe\x00garbage", "r.jsonl:1: not UTF-8 text"),
    ],
)
def test_a_bad_file_is_a_usage_error_on_one_line(tmp_path, capsys, content, why):
    path = tmp_path / "r.jsonl"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    code, _, err = show(capsys, path)
    assert code == 2 and err.count("\n") == 1 and why in err


def test_a_debate_the_file_does_not_hold_is_a_usage_error_naming_those_it_does(tmp_path, capsys):
    path = recorded(tmp_path / "r.jsonl", "naive-recursive", "bike-lanes", True, "honest", "honest", trials=3)
    code, _, err = show(capsys, path, "--debate", 7)
    assert code == 2 and err.count("\n") == 1 and "holds no debate 7; it holds debates 0, 1, 2" in err
