"""A run whose process died resumes from its record: the whole debates it holds are kept and
counted, a debate cut off mid-write is played again, and the file and the result are those of a
run never stopped (debate i depends only on the seed and i)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from debatekit.analysis.montecarlo import Oracles, ResumeError, make_instance, run
from debatekit.cli.main import main
from debatekit.engine.record import journal_path, read_records, replay
from debatekit.ledger import Role
from debatekit.oracle import SampleOnly, SampleOracle
from debatekit.players.base import Strategy
from debatekit.problems import PROBLEMS
from debatekit.protocols.registry import PROTOCOLS

CASES = [
    ("cross-exam", "approval-majority", 8, "honest", "point-random"),
    ("stochastic", "noisy-majority", 8, "bias", "random-abort"),
]


def cut(path, whole: int) -> None:
    """Keep ``whole`` records and half of the next line, as a process killed mid-write leaves it."""
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:whole]) + lines[whole][: len(lines[whole]) // 2])


@pytest.mark.parametrize(("name", "problem", "size", "alice", "bob"), CASES)
def test_a_resumed_run_is_the_run_never_stopped(tmp_path, name, problem, size, alice, bob) -> None:
    spec = PROTOCOLS[name]
    instance = make_instance(PROBLEMS[problem], size, False, seed=3)
    players = spec.strategies[Role.ALICE][alice], spec.strategies[Role.BOB][bob]
    whole, resumed = tmp_path / "whole.jsonl", tmp_path / "resumed.jsonl"
    expected = run(spec, instance, *players, 20, 5, record=whole)
    resumed.write_bytes(whole.read_bytes())
    cut(resumed, 7)
    again = run(spec, instance, *players, 20, 5, record=resumed, resume=True)
    assert resumed.read_bytes() == whole.read_bytes()
    assert again.to_json() == expected.to_json()
    done = run(spec, instance, *players, 20, 5, record=resumed, resume=True)  # nothing left to play
    assert done.to_json() == expected.to_json() and resumed.read_bytes() == whole.read_bytes()


def test_a_record_of_another_run_is_not_resumed(tmp_path) -> None:
    spec = PROTOCOLS["cross-exam"]
    instance = make_instance(PROBLEMS["approval-majority"], 8, True, seed=3)
    players = spec.strategies[Role.ALICE]["honest"], spec.strategies[Role.BOB]["honest"]
    path = tmp_path / "d.jsonl"
    run(spec, instance, *players, 5, 1, record=path)
    with pytest.raises(ResumeError, match="not this run's"):
        run(spec, instance, *players, 10, 2, record=path, resume=True)
    with pytest.raises(ResumeError, match="more than"):
        run(spec, instance, *players, 3, 1, record=path, resume=True)


def test_resume_on_the_command_line(tmp_path, capsys) -> None:
    path = tmp_path / "d.jsonl"
    base = ["run", "cross-exam", "--problem", "parity", "--size", "16", "--trials", "12", "--bob", "point-random",
            "--record", str(path), "--json"]  # fmt: skip
    assert main(base) == 0
    first = json.loads(capsys.readouterr().out)
    cut(path, 4)
    assert main([*base, "--resume"]) == 0
    assert json.loads(capsys.readouterr().out) == first
    assert main(["replay", str(path)]) == 0
    capsys.readouterr()
    assert main([*base, "--resume", "--seed", "9"]) == 2
    err = capsys.readouterr().err
    assert "--resume" in err and len(err.strip().splitlines()) == 1
    assert main([*base[:-3], "--json", "--resume"]) == 2  # no --record


class Died(BaseException):
    """The process dying under the run (a BaseException: nothing in the engine catches it)."""


def test_a_debate_waiting_on_the_judge_resumes_from_its_journal(tmp_path) -> None:
    """A person answers the verifier's queries (always yes) until the process dies while a debate
    waits on her. Resumed with another judge (always no), that debate's moves come from the
    journal, not from the players, and play goes on from the pending query; the later debates are
    played live; every record replays and the journal is gone."""
    spec = PROTOCOLS["cross-exam"]
    instance = make_instance(PROBLEMS["approval-majority"], 8, True, seed=3)
    honest = spec.honest(Role.ALICE)
    moves = []

    class Counted:
        def __init__(self, seat):
            self.player = honest.factory(seat)

        def transcript(self):
            moves.append(1)
            return self.player.transcript()

    alice = Strategy("counted-honest", Role.ALICE, "", Counted, trusted=True)
    bob = spec.strategies[Role.BOB]["point-random"]
    asked = 0

    def person(question, rng) -> int:
        nonlocal asked
        asked += 1
        if asked == 2:
            raise Died
        return 1

    path = tmp_path / "d.jsonl"
    with pytest.raises(Died):
        run(spec, instance, alice, bob, 40, 4, record=path, oracles=Oracles(instance.oracle, SampleOracle(person)))
    journal = journal_path(path)
    whole, stopped, seated = path.read_bytes(), len(list(read_records(path))), len(moves)
    entries = [json.loads(line) for line in journal.read_text().splitlines()]
    journaled = [e["event"] for e in entries if e["debate"] == stopped]
    assert any("move" in e for e in journaled) and not any(e.get("query") == "verifier" for e in journaled)
    run(spec, instance, alice, bob, 40, 4, record=path, resume=True,
        oracles=Oracles(instance.oracle, SampleOracle(lambda question, rng: 0)))  # fmt: skip
    assert not journal.exists()
    records = list(read_records(path))
    assert len(records) == 40 and path.read_bytes().startswith(whole)
    events = records[stopped]["events"]
    assert [e for e in events if "move" in e] == [e for e in journaled if "move" in e]
    assert [e["answer"] for e in events if e.get("query") == "verifier"] == [0]  # the pending query, asked anew
    assert len(moves) - seated == 40 - stopped - 1  # Alice moved in every later debate, not in the resumed one
    asked = replace(instance, oracle=SampleOnly(instance.oracle))  # a person answered: only bounded, as replay does
    assert all(replay(r, spec, asked).reproduced for r in records)


def rounded(data):
    """JSON data with its floats to 12 significant digits: a resumed run's payoff moments are
    merged from the record and the rest, in another order of summation."""
    if isinstance(data, float):
        return float(f"{data:.12g}")
    if isinstance(data, dict):
        return {k: rounded(v) for k, v in data.items()}
    if isinstance(data, list):
        return [rounded(v) for v in data]
    return data


@pytest.mark.parametrize(
    ("name", "problem", "alice", "bob"),
    [("prover-estimator", "obfuscated-primality", "obfuscate", "honest"),
     ("naive-recursive", "evidence-majority", "wrong-answer", "random")],
)  # fmt: skip
def test_a_resumed_recursive_run_is_the_run_never_stopped(tmp_path, name, problem, alice, bob) -> None:
    """The recursive protocols resume too: their payoff bound and conclusions, read from counts
    that merge (reward sums, A's claims, the estimator's δ), come out as in a run never stopped."""
    spec = PROTOCOLS[name]
    instance = make_instance(PROBLEMS[problem], PROBLEMS[problem].default_size, False, seed=3)
    players = spec.strategies[Role.ALICE][alice], spec.strategies[Role.BOB][bob]
    whole, resumed = tmp_path / "whole.jsonl", tmp_path / "resumed.jsonl"
    expected = run(spec, instance, *players, 12, 5, record=whole)
    resumed.write_bytes(whole.read_bytes())
    cut(resumed, 5)
    again = run(spec, instance, *players, 12, 5, record=resumed, resume=True)
    assert resumed.read_bytes() == whole.read_bytes()
    assert rounded(again.to_json()) == rounded(expected.to_json())
    assert again.payoffs is not None and again.payoffs.conclusions.bound == expected.payoffs.conclusions.bound


def test_a_recursive_debate_waiting_on_the_judge_resumes_from_its_journal(tmp_path) -> None:
    """Prover-estimator debate with people as the verifier's leaf judge: the process dies while
    a debate waits on their answer; resumed, that debate's moves come from the journal (A is not
    asked again), the pending query is asked anew, and every record replays."""
    spec = PROTOCOLS["prover-estimator"]
    instance = make_instance(PROBLEMS["obfuscated-primality"], 8, True, seed=3)
    honest = spec.honest(Role.ALICE)
    moves = []

    class Counted:
        def __init__(self, seat):
            self.player = honest.factory(seat)

        def __getattr__(self, name):
            method = getattr(self.player, name)

            def counted(*args):
                moves.append(name)
                return method(*args)

            return counted

    alice = Strategy("counted-honest", Role.ALICE, "", Counted, honest=True)  # not trusted: journaled
    bob = spec.honest(Role.BOB)
    asked = 0

    def person(question, rng) -> int:
        nonlocal asked
        asked += 1
        if asked == 2:
            raise Died
        return instance.oracle.sample(question, rng)

    path = tmp_path / "pe.jsonl"
    with pytest.raises(Died):
        run(spec, instance, alice, bob, 6, 4, record=path, oracles=Oracles(instance.oracle, SampleOracle(person)))
    stopped, seated = len(list(read_records(path))), len(moves)
    entries = [json.loads(line) for line in journal_path(path).read_text().splitlines()]
    journaled = [e["event"] for e in entries if e["debate"] == stopped]
    assert any("move" in e for e in journaled) and not any(e.get("query") == "verifier" for e in journaled)
    run(spec, instance, alice, bob, 6, 4, record=path, resume=True)
    assert not journal_path(path).exists()
    records = list(read_records(path))
    assert len(records) == 6
    events = records[stopped]["events"]
    assert [e for e in events if "move" in e][: len([e for e in journaled if "move" in e])] == [
        e for e in journaled if "move" in e
    ]
    assert [e for e in events if e.get("query") == "verifier"]  # the pending query, asked anew
    later = len(moves) - seated
    per_debate = seated / (stopped + 1) if stopped else None
    assert per_debate is None or later < per_debate * (6 - stopped)  # the resumed debate's moves were not asked again
    asked = replace(instance, oracle=SampleOnly(instance.oracle))  # a person answered: only bounded, as replay does
    assert all(replay(r, spec, asked).reproduced for r in records)


@pytest.mark.parametrize("stop", ["before the verifier's answer", "after it"])
def test_a_debate_stopped_in_the_verifiers_check_resumes_with_each_read_noted_once(stop) -> None:
    """A debate stopped inside the verifier's check (a run killed while the check waits on people)
    journaled the reads made so far; resumed, its events and counts are those of the debate never
    stopped: the check's reads (issue 23: 30 of 60 records had them twice) and the queries Alice
    asks again as she sits down are not noted a second time."""
    import asyncio

    import numpy as np

    from debatekit.analysis.montecarlo import Table, debate
    from debatekit.engine.events import Queried, Read

    spec = PROTOCOLS["cross-exam"]
    instance = make_instance(PROBLEMS["caffeine"], 26, False, seed=0)
    table = Table.set(spec, instance, spec.strategies[Role.ALICE]["lie-step"], spec.strategies[Role.BOB]["honest"])
    for index in range(20):
        never = asyncio.run(debate(table, np.random.SeedSequence([3, index]), keep=True)).ledger
        whole = never.events
        asked = [i for i, e in enumerate(whole) if isinstance(e, Queried) and e.role is Role.VERIFIER]
        if asked:
            break
    else:
        pytest.fail("no debate whose check asks the oracle")
    cut = asked[0] + (stop == "after it")
    assert any(isinstance(e, Read) for e in whole[:cut])
    resumed = asyncio.run(debate(table, np.random.SeedSequence([3, index]), keep=True, events=list(whole[:cut])))
    assert resumed.ledger.events == whole
    assert (resumed.ledger.queries, resumed.ledger.bits_read) == (never.queries, never.bits_read)
