"""Verifiable records (issue 19, item 4): a header that fixes the run, every line chained to it by
SHA-256, replay checking the chain and every verifier answer against the oracle, journals bound to
their run, plan files that replay, ``--record`` that refuses to overwrite, and every reader of an
untrusted file one line naming the file and line (exit 2)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from debatekit.cli.main import main
from debatekit.engine.record import START, chained, journal_path
from debatekit.problems.plan_file import PLANS

RUN = ["run", "cross-exam", "--problem", "approval-majority", "--size", "6", "--bob", "point-random", "--no-log"]
"""Seed 0: debate 4 (line 6) is the first whose verifier asks the deterministic built-in oracle."""


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def rechain(path: Path, values: list[dict]) -> None:
    """Write ``values`` (their old hashes dropped) as a record whose chain holds: what a forger
    who knows the format writes (the chain is not a signature)."""
    last, out = START, []
    for value in values:
        body = json.dumps({k: v for k, v in value.items() if k != "chain"}, separators=(",", ":"))
        last = chained(last, body)
        out.append(f'{body[:-1]},"chain":"{last}"}}\n')
    path.write_text("".join(out))


def replay(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["replay", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def recorded(tmp_path: Path, capsys, *extra: str, trials: int = 10) -> Path:
    path = tmp_path / "r.jsonl"
    assert main([*RUN, "--trials", str(trials), "--record", str(path), "--json", *extra]) == 0
    capsys.readouterr()
    return path


def test_a_record_starts_with_its_run_header_and_replays(tmp_path, capsys):
    path = recorded(tmp_path, capsys)
    header = lines_of(path)[0]["header"]
    assert {k: header[k] for k in ("protocol", "problem", "size", "truth", "seed", "alice", "bob", "oracle")} == {
        "protocol": "cross-exam", "problem": "approval-majority", "size": 6, "truth": "yes", "seed": 0,
        "alice": "honest", "bob": "point-random", "oracle": "instance",
    }  # fmt: skip
    assert header["version"] and len(header["instance"]) == 64
    code, out, _ = replay(capsys, str(path))
    assert code == 0 and "10 of 10 debates reproduce" in out


def test_a_forged_verifier_answer_is_caught_with_its_line(tmp_path, capsys):
    """The answer the deterministic built-in oracle gives, edited to the other one, the verdict
    adjusted to match and the chain computed again: the verifier alone reproduces it; the oracle does not."""
    path = recorded(tmp_path, capsys)
    values = lines_of(path)
    record = values[5]
    (asked,) = [e for e in record["events"] if e.get("query") == "verifier"]
    assert record["debate"] == 4 and asked["answer"] == 1 and record["verdict"] == 1
    asked["answer"], record["verdict"], record["bits_read"] = 0, 0, record["bits_read"] - 1  # as replayed
    rechain(path, values)
    code, out, _ = replay(capsys, str(path))
    assert code == 1 and "9 of 10 debates reproduce" in out
    assert "line 6 (debate 4): verifier query 1: an answer of 0 to 1 queries, which the oracle never gives" in out


def test_a_count_outside_0_to_n_is_caught(tmp_path, capsys):
    path = recorded(tmp_path, capsys)
    values = lines_of(path)
    (asked,) = [e for e in values[5]["events"] if e.get("query") == "verifier"]
    asked["answer"] = 7
    rechain(path, values)
    code, out, _ = replay(capsys, str(path))
    assert code == 1 and "line 6 (debate 4): verifier query 1: an answer of 7 to 1 queries" in out


def test_an_edited_line_breaks_the_chain_at_its_line(tmp_path, capsys):
    path = recorded(tmp_path, capsys)
    text = path.read_text().splitlines(keepends=True)
    text[2] = text[2].replace('"verdict":1', '"verdict":0', 1)
    path.write_text("".join(text))
    code, out, _ = replay(capsys, str(path))
    assert code == 1 and f"{path}:3: the chain is broken here" in out.replace("\n", "")
    text = path.read_text().splitlines(keepends=True)
    path.write_text("".join([text[0], *text[3:]]))  # two debates dropped
    code, out, _ = replay(capsys, str(path))
    assert code == 1 and f"{path}:2: the chain is broken" in out.replace("\n", "")


def test_a_relabelled_truth_does_not_replay(tmp_path, capsys):
    """A plan's instance has no x: its fingerprint hashes the truth and the file's bytes, so a
    record relabelled from yes to no (header and every line, the chain computed again) does not replay."""
    path = tmp_path / "r.jsonl"
    assert main(["run", "cross-exam", "--problem", "caffeine", "--trials", "3", "--record", str(path), "--no-log",
                 "--json"]) == 0  # fmt: skip
    values = lines_of(path)
    for value in values:
        (value.get("header") or value)["truth"] = "no"
    rechain(path, values)
    code, out, _ = replay(capsys, str(path))
    assert code == 1 and "0 of 3 debates reproduce" in out and "instance: not the instance" in out


def test_a_line_that_is_not_the_headers_run_is_caught(tmp_path, capsys):
    path = recorded(tmp_path, capsys, trials=3)
    values = lines_of(path)
    values[2]["seed"] = 9
    rechain(path, values)
    code, out, _ = replay(capsys, str(path))
    assert code == 1 and "line 3 (debate 1): seed: not the header's" in out


def plan_file(folder: Path, name: str = "my-plan") -> Path:
    path = folder / f"{name}.toml"
    path.write_text(f'name = "{name}"\n' + (PLANS / "caffeine.toml").read_text())
    return path


def test_a_plan_files_record_replays_given_the_same_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    plan = plan_file(tmp_path)
    path = tmp_path / "r.jsonl"
    assert main(["run", "cross-exam", "--problem", "my-plan.toml", "--trials", "3", "--record", str(path),
                 "--no-log", "--json"]) == 0  # fmt: skip
    assert lines_of(path)[0]["header"]["file"] == "my-plan.toml"
    code, out, _ = replay(capsys, str(path))
    assert code == 0 and "3 of 3 debates reproduce" in out
    moved = tmp_path / "elsewhere.toml"
    plan.rename(moved)
    code, _, err = replay(capsys, str(path))
    assert code == 2 and "give --problem FILE" in err and err.count("\n") == 1
    code, out, _ = replay(capsys, str(path), "--problem", str(moved))
    assert code == 0 and "3 of 3 debates reproduce" in out
    moved.write_text(moved.read_text().replace("120 undergraduates", "121 undergraduates"))
    code, out, _ = replay(capsys, str(path), "--problem", str(moved))
    assert code == 1 and "instance: not the instance" in out


def test_record_refuses_an_existing_file_unless_told(tmp_path, capsys):
    path = tmp_path / "r.jsonl"
    path.write_text("keep me\n")
    assert main([*RUN, "--trials", "2", "--record", str(path)]) == 2
    err = capsys.readouterr().err
    assert "exists" in err and "--overwrite" in err and err.count("\n") == 1
    assert path.read_text() == "keep me\n"
    assert main([*RUN, "--trials", "2", "--record", str(path), "--overwrite", "--json"]) == 0
    code, out, _ = replay(capsys, str(path))
    assert code == 0 and "2 of 2 debates reproduce" in out


def stopped(tmp_path: Path, capsys, kept: int = 4) -> tuple[Path, list[dict]]:
    """A record of debates 0..kept-1 of a 10-debate run (as if it stopped there) and debate
    ``kept``'s record, whose events a journal may hold."""
    path = recorded(tmp_path, capsys)
    values = lines_of(path)
    rechain(path, values[: kept + 1])
    return path, values


def resume(capsys) -> tuple[int, str]:
    code = main([*RUN, "--trials", "10", "--record", str(Path.cwd() / "r.jsonl"), "--resume", "--json"])
    return code, capsys.readouterr().err


def test_a_hand_made_journal_is_not_continued(tmp_path, capsys, monkeypatch):
    """A journal holding a lying transcript for debate 4 (Alice's messages, a favourable answer)
    without its run's header and chain: --resume refuses it in one line."""
    monkeypatch.chdir(tmp_path)
    _, values = stopped(tmp_path, capsys)
    events = values[5]["events"]
    lies = [{"debate": 4, "event": e | ({"answer": 0} if e.get("query") == "verifier" else {})} for e in events]
    journal_path(tmp_path / "r.jsonl").write_text("".join(json.dumps(entry) + "\n" for entry in lies))
    code, err = resume(capsys)
    assert code == 2 and err.count("\n") == 1 and "r.jsonl.journal:1" in err


def test_a_chained_journal_with_an_answer_the_oracle_never_gives_is_not_continued(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _, values = stopped(tmp_path, capsys)
    events = [e | ({"answer": 0} if e.get("query") == "verifier" else {}) for e in values[5]["events"]]
    journal = journal_path(tmp_path / "r.jsonl")
    rechain(journal, [{"debate": None, "header": values[0]["header"]}, *({"debate": 4, "event": e} for e in events)])
    code, err = resume(capsys)
    assert code == 2 and err.count("\n") == 1 and "debate 4" in err and "never gives" in err
    header = values[0]["header"] | {"seed": 1}
    rechain(journal, [{"debate": None, "header": header}, *({"debate": 4, "event": e} for e in values[5]["events"])])
    code, err = resume(capsys)
    assert code == 2 and err.count("\n") == 1 and "not this run's (its header differs in seed)" in err


def test_a_chained_journal_with_a_lying_transcript_is_not_continued(tmp_path, capsys, monkeypatch):
    """Honest Alice's committed bits, one flipped, in a journal whose header and chain hold: her
    built-in strategy never sends it (debate i is a function of (seed, i)), so --resume refuses."""
    monkeypatch.chdir(tmp_path)
    _, values = stopped(tmp_path, capsys)
    events = [e for e in values[5]["events"] if "move" in e or e.get("query") == "alice"]
    (sent,) = [e for e in events if e.get("move") == "alice"]
    bits = sent["message"]["bits"]
    sent["message"]["bits"] = ("0" if bits[0] == "1" else "1") + bits[1:]
    journal = [{"debate": None, "header": values[0]["header"]}, *({"debate": 4, "event": e} for e in events)]
    rechain(journal_path(tmp_path / "r.jsonl"), journal)
    code, err = resume(capsys)
    assert code == 2 and err.count("\n") == 1 and "debate 4: its moves are not those its built-in players make" in err


def test_a_true_journal_is_continued_and_the_run_replays(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    """Debate 4 journaled up to its verifier's pending query (the moves and Alice's queries): resumed,
    the run is the run never stopped, byte for byte."""
    path, values = stopped(tmp_path, capsys)
    journal = journal_path(path)
    events = [e for e in values[5]["events"] if "move" in e or e.get("query") == "alice"]
    rechain(journal, [{"debate": None, "header": values[0]["header"]}, *({"debate": 4, "event": e} for e in events)])
    code, err = resume(capsys)
    assert code == 0, err
    assert lines_of(path) == values and not journal.exists()


def test_a_record_edited_before_resume_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path, _ = stopped(tmp_path, capsys)
    text = path.read_text().splitlines(keepends=True)
    text[2] = text[2].replace('"verdict":1', '"verdict":0', 1)
    path.write_text("".join(text))
    code, err = resume(capsys)
    assert code == 2 and err.count("\n") == 1 and "r.jsonl:3: the chain is broken" in err


BAD: dict[str, Callable[[], bytes]] = {
    "corrupt": lambda: b'{"header": {"protocol": \n',
    "truncated": lambda: b'{"a": 1}\n{"b": [1, 2',
    "nested": lambda: b"[" * 100000 + b"]" * 100000 + b"\n",
    "binary": lambda: b"\xff\xfe\x00garbage\n",
    "huge": lambda: b'{"a": "' + b"x" * (64 * 2**20 + 10) + b'"}\n',
}


def one_line_exit_2(capsys, argv: list[str], file: Path) -> None:
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and str(file) in err and "internal error" not in err


@pytest.mark.parametrize("kind", list(BAD))
def test_a_bad_record_is_one_line_in_replay_show_and_resume(tmp_path, capsys, monkeypatch, kind):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "r.jsonl"
    path.write_bytes(BAD[kind]())
    one_line_exit_2(capsys, ["replay", str(path)], path)
    one_line_exit_2(capsys, ["show", str(path)], path)
    one_line_exit_2(capsys, [*RUN, "--trials", "10", "--record", str(path), "--resume"], path)


@pytest.mark.parametrize("kind", list(BAD))
def test_a_bad_journal_is_one_line_in_resume(tmp_path, capsys, monkeypatch, kind):
    monkeypatch.chdir(tmp_path)
    stopped(tmp_path, capsys)
    journal = journal_path(tmp_path / "r.jsonl")
    journal.write_bytes(BAD[kind]() if kind != "truncated" else b'{"debate": 4, "ev\n')
    one_line_exit_2(capsys, [*RUN, "--trials", "10", "--record", str(tmp_path / "r.jsonl"), "--resume"], journal)


@pytest.mark.parametrize("kind", [k for k in BAD if k != "truncated"])
@pytest.mark.parametrize("name", ["run.json", "summary.json"])
def test_a_bad_run_folder_is_one_line_in_report_and_logs(tmp_path, capsys, kind, name):
    logs = tmp_path / "logs"
    assert main([*RUN[:-1], "--trials", "2", "--log-dir", str(logs), "--json"]) == 0
    (folder,) = logs.iterdir()
    (folder / name).write_bytes(BAD[kind]())
    one_line_exit_2(capsys, ["report", str(logs), "--out", str(tmp_path / "out")], folder / name)
    one_line_exit_2(capsys, ["logs", "--log-dir", str(logs)], folder / name)


def test_show_is_one_line_on_hand_edited_records(tmp_path, capsys):
    path = recorded(tmp_path, capsys, trials=2)
    edits: list[Callable[[dict], None]] = [
        lambda r: r.update(events=[1, 2]),
        lambda r: r.update(events=[{"move": "alice", "message": {"x": [1]}}]),
        lambda r: r.update(queries=None),
        lambda r: r.update(events=[{"query": "verifier", "question": None, "n": "x", "answer": [1]}]),
        lambda r: r.update(aside=[1, None]),
        lambda r: r.update(events=[{"move": "[bold]x[/nope]", "message": "[/]"}]),
    ]
    for edit in edits:
        values = lines_of(path)
        edit(values[1])
        edited = tmp_path / "edited.jsonl"
        rechain(edited, values)
        capsys.readouterr()
        code = main(["show", str(edited)])
        err = capsys.readouterr().err
        assert code in (0, 2) and "internal error" not in err and err.count("\n") <= 1, err
    assert os.path.exists(path)


@pytest.mark.parametrize(
    ("protocol", "bob", "line"),
    [("stochastic", "random-abort", 2), ("prover-estimator", "honest", 2), ("naive-recursive", "honest", 2)],
)
def test_a_forged_answer_is_caught_in_the_batch_and_recursive_replays(tmp_path, capsys, protocol, bob, line):
    """Caffeine's judge is certain (P[yes] in {0, 1}): an answer edited to the other count, the
    chain computed again, is one the oracle never gives, in stochastic debate's replay and in the
    recursive protocols'."""
    path = tmp_path / "r.jsonl"
    assert main(["run", protocol, "--problem", "caffeine", "--bob", bob, "--trials", "6", "--record", str(path),
                 "--no-log", "--json"]) == 0  # fmt: skip
    values = lines_of(path)
    asked = [e for e in values[line - 1]["events"] if e.get("query") == "verifier"]
    assert asked and asked[0]["answer"] in (0, asked[0]["n"])
    asked[0]["answer"] = asked[0]["n"] - asked[0]["answer"]
    rechain(path, values)
    code, out, _ = replay(capsys, str(path))
    assert code == 1 and f"line {line} (debate {line - 2})" in out and "never gives" in out


class _Unreachable:
    """A player whose model cannot be consulted: every move meets ``Unanswered``, so each debate
    ends undecided (``End.verdict`` None) where it first moves."""

    def __init__(self, seat: object):
        pass

    def __getattr__(self, name: str) -> Callable[..., object]:
        from debatekit.oracle import Unanswered

        def move(*args: object, **kwargs: object) -> object:
            raise Unanswered("llm:x/m", "HTTP 500")

        return move


@pytest.mark.parametrize(
    ("protocol", "problem", "size"),
    [("cross-exam", "parity", 8), ("bisection", "parity", 8), ("stochastic", "noisy-majority", 8),
     ("prover-estimator", "evidence-majority", 1), ("naive-recursive", "evidence-majority", 1)],
)  # fmt: skip
def test_a_record_of_undecided_debates_replays_as_undecided(tmp_path, capsys, protocol, problem, size):
    """Bob's model unreachable: every debate is undecided and recorded so (verdict None, no
    forfeit); replay reproduces each as undecided (exit 0). The same debate's record relabelled
    undecided where it was decided does not reproduce."""
    from debatekit.analysis.montecarlo import make_instance, run
    from debatekit.engine.record import read_records
    from debatekit.engine.record import replay as replayed
    from debatekit.ledger import Role
    from debatekit.players.base import Strategy
    from debatekit.problems import PROBLEMS
    from debatekit.protocols.registry import PROTOCOLS

    spec, record = PROTOCOLS[protocol], tmp_path / "r.jsonl"
    instance = make_instance(PROBLEMS[problem], size, True, 0)
    alice, down = spec.honest(Role.ALICE), Strategy("tests:unreachable", Role.BOB, "", _Unreachable)
    assert run(spec, instance, alice, down, trials=2, seed=0, record=record).undecided == 2
    assert [(r["verdict"], r["forfeit"]) for r in read_records(record)] == [(None, None)] * 2
    code, out, err = replay(capsys, str(record), "--json")
    assert code == 0, out + err
    assert json.loads(out) == {"records": 2, "reproduced": 2, "undecided": 2, "failed": []}
    decided = tmp_path / "d.jsonl"
    run(spec, instance, alice, spec.honest(Role.BOB), trials=1, seed=0, record=decided)
    (relabelled,) = read_records(decided)
    relabelled["verdict"] = None
    again = replayed(relabelled, spec, instance)
    assert again.undecided and not again.reproduced and "recorded None (undecided)" in again.differences[0]


def test_a_record_does_not_replay_where_the_oracle_table_or_the_machine_differs(tmp_path):
    """The fingerprint covers the built-in instance's oracle table and transcript machine: the same
    problem, size and x with another P[yes] (or another machine) is not the record's instance."""
    from dataclasses import replace

    from debatekit.analysis.montecarlo import make_instance, run
    from debatekit.engine.record import read_records
    from debatekit.engine.record import replay as replayed
    from debatekit.ledger import Role
    from debatekit.oracle import SampleOnly, TableOracle
    from debatekit.problems import PROBLEMS
    from debatekit.problems.stochastic import SUPPORTED
    from debatekit.protocols.registry import PROTOCOLS

    spec, record = PROTOCOLS["stochastic"], tmp_path / "r.jsonl"
    instance = make_instance(PROBLEMS["noisy-majority"], 8, True, 0)
    run(spec, instance, spec.honest(Role.ALICE), spec.honest(Role.BOB), trials=2, seed=0, record=record)
    first = next(read_records(record))
    assert replayed(first, spec, instance).reproduced
    assert replayed(first, spec, replace(instance, oracle=SampleOnly(instance.oracle))).reproduced  # the same table
    other = replace(instance, oracle=TableOracle({SUPPORTED: instance.oracle.probability(SUPPORTED) / 2}))
    again = replayed(first, spec, other)
    assert not again.reproduced and again.differences[0].startswith("instance:")
    parity = make_instance(PROBLEMS["parity"], 8, True, 0)
    majority = make_instance(PROBLEMS["majority"], 8, True, 0)
    cross, record = PROTOCOLS["cross-exam"], tmp_path / "c.jsonl"
    run(cross, parity, cross.honest(Role.ALICE), cross.honest(Role.BOB), trials=1, seed=0, record=record)
    (line,) = read_records(record)
    again = replayed(line, cross, replace(parity, machine=majority.machine))
    assert not again.reproduced and again.differences[0].startswith("instance:")
