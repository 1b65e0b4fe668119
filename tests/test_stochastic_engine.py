"""Stochastic debate on the engine's terms: debate i depends only on (seed, i), in any batch and
for any player; every debate has a record that replays; blocks stream and merge; the counter-based
binomial draws have the binomial law."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import ClassVar

import numpy as np
import pytest
from scipy.stats import binom, chisquare

from debatekit.analysis.montecarlo import make_instance, run
from debatekit.engine.events import json_default
from debatekit.engine.record import read_records
from debatekit.engine.streams import Streams
from debatekit.ledger import Role
from debatekit.machine.transcript import StepKind
from debatekit.players.base import Strategy
from debatekit.problems import PROBLEMS
from debatekit.protocols.registry import PROTOCOLS
from debatekit.protocols.stochastic.params import Constants
from debatekit.protocols.stochastic.rules import HonestAlice, HonestBob
from debatekit.protocols.stochastic.spec import StochasticParams

SEED = 7


def spec(constants: Constants):
    return PROTOCOLS["stochastic"].with_params(StochasticParams(constants))


def players(s, alice: str, bob: str) -> tuple[Strategy, Strategy]:
    return s.strategies[Role.ALICE][alice], s.strategies[Role.BOB][bob]


def tally_rows(tally) -> list[tuple]:
    """Each debate of a tally as comparable plain data."""
    return [
        (int(tally.verdicts[k]), *(int(tally.queries[role][k]) for role in Role), int(tally.bits_read[k]),
         json.dumps(tally.records[k], sort_keys=True, default=json_default) if tally.records else None)
        for k in range(len(tally.verdicts))
    ]  # fmt: skip


PAIRS = [("honest", "random-abort"), ("malformed", "honest"), ("honest", "malformed"), ("bias", "honest")]


@pytest.mark.parametrize("constants", [Constants.lean, Constants.paper])
@pytest.mark.parametrize(("alice", "bob"), PAIRS)
def test_debate_i_is_the_same_in_any_batch(constants: Constants, alice: str, bob: str) -> None:
    """Debates 5..11 played alone, in a batch of 7, or inside a batch of 12 are the same debates,
    records included (randomised adversaries draw from each debate's own stream)."""
    s = spec(constants)
    instance = make_instance(PROBLEMS["noisy-majority"], 8, True, seed=1)
    a, b = players(s, alice, bob)
    whole = tally_rows(s.batch.simulate(instance, a, b, SEED, range(0, 12), None, True))
    middle = tally_rows(s.batch.simulate(instance, a, b, SEED, range(5, 12), None, True))
    one = [tally_rows(s.batch.simulate(instance, a, b, SEED, range(i, i + 1), None, True)) for i in range(5, 12)]
    alone = [row for rows in one for row in rows]
    assert whole[5:] == middle == alone
    if bob == "random-abort":  # the seed matters (bias against honest Bob is caught at step 0 whatever it is)
        assert tally_rows(s.batch.simulate(instance, a, b, SEED + 1, range(0, 12), None, True)) != whole


def test_the_first_k_debates_of_a_run_are_a_run_of_k(tmp_path) -> None:
    """``--trials 40`` and ``--trials 15`` with one seed: the first 15 records agree, and so do
    the summaries of blocks of 4 and of one block."""
    s = spec(Constants.lean)
    instance = make_instance(PROBLEMS["noisy-majority"], 8, False, seed=2)
    a, b = players(s, "bias", "random-abort")
    long, short = tmp_path / "long.jsonl", tmp_path / "short.jsonl"
    run(s, instance, a, b, 40, SEED, record=long)
    run(s, instance, a, b, 15, SEED, record=short)
    assert list(read_records(long))[:15] == list(read_records(short))
    blocks = run(replace(s, batch=replace(s.batch, block=4)), instance, a, b, 40, SEED)
    whole = run(replace(s, batch=replace(s.batch, block=None)), instance, a, b, 40, SEED)
    assert blocks.to_json() == whole.to_json()


def test_a_run_plays_in_blocks_of_the_declared_batch() -> None:
    """Memory is bounded by the block, not the trials: simulate never sees more than ``batch``
    debates at once."""
    s = spec(Constants.lean)
    seen: list[range] = []

    def spy(instance, alice, bob, seed, debates, progress=None, keep=False, *, provers=None, events=None):
        seen.append(debates)
        return s.batch.simulate(instance, alice, bob, seed, debates, progress, keep, provers=provers, events=events)

    instance = make_instance(PROBLEMS["noisy-majority"], 6, True, seed=2)
    run(
        replace(s, batch=replace(s.batch, simulate=spy, block=64)),
        instance,
        *players(s, "honest", "honest"),
        1000,
        SEED,
    )
    assert max(len(r) for r in seen) == 64
    assert [i for r in seen for i in r] == list(range(1000))


def test_a_user_player_plays_the_same_debates_one_at_a_time_in_threads() -> None:
    """A player that is not a trusted built-in plays one debate per call, several in flight: the
    results are those of the same code played as a trusted batch."""
    s = spec(Constants.lean)
    instance = make_instance(PROBLEMS["noisy-majority"], 6, True, seed=4)
    honest, bob = players(s, "honest", "random-abort")
    user = Strategy("user-honest", Role.ALICE, "honest, as a user's code", honest.factory, trusted=False)
    as_user = run(s, instance, user, bob, 24, SEED, concurrency=4)
    built_in = run(s, instance, honest, bob, 24, SEED)
    assert {**as_user.to_json(), "alice": "honest"} == built_in.to_json()


class AbortAtJudgement(HonestBob):
    """Abort at the first oracle step, so that the verifier queries the oracle."""

    def aborts(self, view, claims, bits):
        return np.full(len(view.rows), view.kind is StepKind.ORACLE)


@pytest.mark.parametrize("constants", [Constants.lean, Constants.paper])
def test_every_record_replays_and_a_tampered_one_does_not(tmp_path, constants: Constants) -> None:
    s = spec(constants)
    instance = make_instance(PROBLEMS["noisy-majority"], 8, True, seed=5)
    judging = Strategy("abort-at-judgement", Role.BOB, "", AbortAtJudgement)
    for alice, bob in [*PAIRS, ("honest", "always-abort"), ("under-threshold", judging)]:
        path = tmp_path / f"{alice}-{getattr(bob, 'name', bob)}.jsonl"
        a = s.strategies[Role.ALICE][alice]
        run(s, instance, a, bob if isinstance(bob, Strategy) else s.strategies[Role.BOB][bob], 12, SEED, record=path)
        records = list(read_records(path))
        assert all(s.batch.replay(r, instance).reproduced for r in records), (alice, bob)
    judged = next(r for r in records if any(e.get("query") == "verifier" for e in r["events"]))
    for tamper in ("claim", "answer", "bit"):
        record = json.loads(json.dumps(judged))
        events = record["events"]
        if tamper == "claim":  # the judged claim, moved to where the verifier's verdict flips
            claim = next(e for e in reversed(events) if e.get("what") == "claim")
            query = next(e for e in events if e.get("query") == "verifier")
            estimate = query["answer"] / query["n"]
            claim["message"] = (0.0 if estimate > 0.5 else 1.0) if record["verdict"] else estimate
        elif tamper == "answer":  # the verifier's count, moved to where her verdict flips
            query = next(e for e in events if e.get("query") == "verifier")
            claim = next(e for e in reversed(events) if e.get("what") == "claim")["message"]
            far = 0 if claim > 0.5 else query["n"]
            query["answer"] = far if record["verdict"] else round(claim * query["n"])
        else:
            bit = next((e for e in events if e.get("chance") == "bit"), None)
            if bit is None:
                continue
            bit["outcome"] = 1 - bit["outcome"]
        assert not s.batch.replay(record, instance).reproduced, tamper


def test_the_command_line_records_and_replays_stochastic_debates(tmp_path) -> None:
    from typer.testing import CliRunner

    from debatekit.cli.main import app

    path = tmp_path / "debates.jsonl"
    runner = CliRunner()
    played = runner.invoke(app, ["run", "stochastic", "--problem", "noisy-majority", "--size", "6", "--trials", "20",
                                 "--constants", "paper", "--bob", "random-abort", "--record", str(path)])  # fmt: skip
    assert played.exit_code == 0, played.output
    replayed = runner.invoke(app, ["replay", str(path), "--json"])
    assert replayed.exit_code == 0, replayed.output
    assert json.loads(replayed.stdout)["reproduced"] == 20
    lines = path.read_text().splitlines()
    record = json.loads(lines[3])
    record["verdict"] = 1 - record["verdict"]
    lines[3] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")
    assert runner.invoke(app, ["replay", str(path)]).exit_code == 1


@pytest.mark.parametrize(("n", "p"), [(10, 0.3), (40, 0.5), (1000, 0.02), (7, 0.999)])
def test_counter_based_binomial_draws_have_the_binomial_law(n: int, p: float) -> None:
    """Chi-square goodness of fit of 20,000 draws (one per debate) against Bin(n, p), pooling
    counts whose expected number is below 5; fixed seed, rejected at level 1e-3 only if wrong."""
    draws = Streams(SEED, np.arange(20_000)).binomial(np.arange(20_000), 3, n, np.full(20_000, p))
    observed = np.bincount(draws, minlength=n + 1).astype(float)
    expected = binom.pmf(np.arange(n + 1), n, p) * draws.size
    keep = expected >= 5
    observed = np.append(observed[keep], observed[~keep].sum())
    expected = np.append(expected[keep], expected[~keep].sum())
    if expected[-1] < 5:
        observed, expected = observed[:-1], expected[:-1]
    expected *= observed.sum() / expected.sum()
    assert chisquare(observed, expected).pvalue > 1e-3


def test_uniforms_of_different_debates_and_counters_are_uncorrelated() -> None:
    streams = Streams(SEED, np.arange(50_000))
    rows = np.arange(50_000)
    u, v = streams.uniform(rows, 1), streams.uniform(rows, 2)
    assert abs(u.mean() - 0.5) < 4 * (1 / 12 / 50_000) ** 0.5
    assert abs(np.corrcoef(u, v)[0, 1]) < 4 / 50_000**0.5
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 4 / 50_000**0.5


def test_the_provers_consult_their_oracle_and_the_verifier_hers(tmp_path) -> None:
    """Route by role: provers who consult a model of the judge that always says yes claim 1 at
    every judgement, while the verifier, asking the judge (P[yes] = 0.8 in noisy-majority),
    counts about 0.8 n yes among her n samples and rejects the claim."""
    from debatekit.analysis.montecarlo import Oracles
    from debatekit.oracle import FunctionOracle

    s = spec(Constants.lean)
    instance = make_instance(PROBLEMS["noisy-majority"], 6, True, seed=0)
    model = FunctionOracle(lambda question: 1.0)
    path = tmp_path / "routed.jsonl"
    judging = Strategy("abort-at-judgement", Role.BOB, "", AbortAtJudgement)
    result = run(s, instance, s.strategies[Role.ALICE]["honest"], judging, 30, SEED,
                 oracles=Oracles(model, instance.oracle), record=path)  # fmt: skip
    assert result.accept_rate == 0.0
    for record in read_records(path):
        claims = {e["t"]: e["message"] for e in record["events"] if e.get("what") == "claim"}
        (asked,) = [e for e in record["events"] if e.get("query") == "verifier"]
        assert claims[asked["t"]] == 1.0
        assert abs(asked["answer"] / asked["n"] - 0.8) < 0.01
        assert all(e["answer"] == e["n"] for e in record["events"] if e.get("query") == "alice")


class Enough(BaseException):
    """The caller stops the run (raised through it, as an interrupt is, never a trusted part's failure)."""


@pytest.mark.parametrize(
    ("name", "problem", "size"), [("stochastic", "noisy-majority", 8), ("cross-exam", "parity", 16)]
)
def test_trials_stream_memory_does_not_grow_with_the_trials(name: str, problem: str, size: int) -> None:
    """``--trials 10^12`` starts at once and holds only a block: stopped after a few hundred
    debates, the run has allocated under 20 MB at its peak."""
    import tracemalloc

    s = (
        replace(PROTOCOLS[name], batch=replace(PROTOCOLS[name].batch, block=64))
        if PROTOCOLS[name].batch
        else PROTOCOLS[name]
    )
    instance = make_instance(PROBLEMS[problem], size, True, seed=0)

    def progress(done: int) -> None:
        if done >= 300:
            raise Enough

    tracemalloc.start()
    try:
        with pytest.raises(Enough):
            run(s, instance, *players(s, "honest", "honest"), 10**12, SEED, progress)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20


class Vandal(HonestAlice):
    """Honest claims, after rewriting everything her seat reaches: the machine's steps and the
    oracle's table (every judge now says yes for sure)."""

    def __init__(self, seat):
        super().__init__(seat)
        machine, oracle = seat.instance.machine, seat.instance.oracle
        machine._kinds[:] = [StepKind.COMPUTE] * len(machine._kinds)
        machine._rules[:] = [lambda *bits: 1] * len(machine._rules)
        for question in list(oracle._table):
            oracle._table[question] = 1.0
        oracle._default = 1.0


def test_a_player_who_rewrites_her_seat_changes_nothing_the_verifier_reads() -> None:
    """A user's player gets her own deep copy of the instance: whatever she writes into it, the
    verifier, the other side and the debates are those of the honest Alice she then plays as.
    (A trusted built-in shares the verifier's instance: it is our code.)"""
    s = spec(Constants.lean)
    instance = make_instance(PROBLEMS["noisy-majority"], 8, False, seed=1)
    honest, bob = players(s, "honest", "random-abort")
    vandal = Strategy("vandal", Role.ALICE, "", Vandal, trusted=False)
    played = run(s, instance, vandal, bob, 40, SEED)
    assert {**played.to_json(), "alice": "honest"} == run(s, instance, honest, bob, 40, SEED).to_json()
    assert instance.oracle.probability(("is the claim supported by the evidence?",)) != 1.0


@pytest.mark.parametrize(
    ("name", "problem", "size"),
    [("stochastic", "noisy-majority", 8), ("prover-estimator", "evidence-majority", 1),
     ("naive-recursive", "evidence-majority", 1)],
)  # fmt: skip
def test_a_users_seat_holds_its_own_copy_of_the_instance_on_the_batch_interpreters(name, problem, size) -> None:
    """Nothing a user's player reaches through its seat is the verifier's: not the instance, not
    its oracle, not its machine or decomposition."""
    s = PROTOCOLS[name]
    instance = make_instance(PROBLEMS[problem], size, True, seed=0)
    seen = []

    def factory(seat):
        seen.append(seat.instance)
        return s.honest(Role.ALICE).factory(seat)

    user = Strategy("user", Role.ALICE, "", factory, trusted=False)
    run(s, instance, user, s.honest(Role.BOB), 3, SEED)
    assert seen
    for copy in seen:
        assert copy is not instance and copy.oracle is not instance.oracle
        for part in ("machine", "decomposition"):
            if getattr(instance, part) is not None:
                assert getattr(copy, part) is not getattr(instance, part)


class Overwriter(HonestBob):
    """Decides as honest Bob, then tries to make writable and overwrite everything he was shown:
    the transcript, the claims, the live rows and the probabilities."""

    attempts: ClassVar[list[str]] = []

    def aborts(self, view, claims, bits):
        decision = super().aborts(view, claims, bits)
        for target in (view.table, claims, view.rows, view.probabilities):
            try:
                target.flags.writeable = True
                target[...] = 1 - target
                Overwriter.attempts.append("written")
            except ValueError:
                Overwriter.attempts.append("refused")
        return decision


def test_a_player_cannot_write_into_the_transcript_or_what_the_verifier_uses() -> None:
    """The transcript a player is shown is backed by a read-only buffer (it cannot be made
    writable again); the rest is his own copy, which he may spoil for himself only. The debates
    are those of honest Bob."""
    s = spec(Constants.lean)
    instance = make_instance(PROBLEMS["noisy-majority"], 8, False, seed=2)
    honest_alice, honest_bob = players(s, "honest", "honest")
    Overwriter.attempts.clear()
    vandal = Strategy("overwriter", Role.BOB, "", Overwriter, trusted=True)
    played = run(s, instance, honest_alice, vandal, 30, SEED)
    assert "refused" in Overwriter.attempts
    assert {**played.to_json(), "bob": "honest"} == run(s, instance, honest_alice, honest_bob, 30, SEED).to_json()
