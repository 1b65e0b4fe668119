"""Stochastic-oracle debate (Theorem 6.2) on the engine: its cost against references that do the same work.

The engine is ``protocols.stochastic.batch.simulate``: it plays debates ``range(i, j)`` of a run as numpy
arrays, one row per live debate, every draw from the debate's own counter-based stream
(``engine.streams``). The instance is ``noisy-majority`` of size T (default 10^4): T - 6 bookkeeping
compute steps, 5 oracle judgements (p = 0.8) and a majority step. Honest Alice plays honest Bob with the
full constants (``--constants``: lean, the default, paper or planned; the form follows them). Measured,
each against a reference written in this script that makes the same draws:

(a)  the engine on a batch of ``--trials`` debates (``range(0, N)``), against
(a') a hand-written numpy batch: per step, the conditional probability per distinct pattern of relevant
     bits (one value for the steps that read only x, as in the engine); honest Alice's claim (on an
     oracle step a binomial count of ``alice_samples``, else p itself); in the paper form the two coin
     shares and the bit; honest Bob's estimate and test; after an abort the verifier's estimate and
     test; in the Lean form nature's bit. No players, views, message checks or ledger objects: the
     protocol's arithmetic alone. Floor: (a) within 1.5x of (a').
(b)  one debate through the engine (``simulate`` on ``range(i, i + 1)``, which plays it on Python numbers
     through ``protocols.stochastic.solo``: the same rules, draws and events), the median over
     ``--match`` debates, against
(c)  a plain scalar Python loop for one debate: the same steps on Python ints and floats, its uniforms
     from SplitMix64 in Python integers and its binomials by ``bisect`` on the engine's cached CDF.
     Floor: (b) within 2x of (c).
(d)  numpy's raw Bernoulli rate, ``rng.random(N) < p``, and the engine's effective rate: the oracle
     queries its ledger counted in (a) (Alice + Bob + verifier, all debates) per second, as a multiple.

Draw for draw. Both references draw what the engine draws, where it draws it: debate i's key is
``debate_seed(seed, i)``; a draw's counter is ``counter(step, purpose, 0)`` with purpose NATURE (0) for the
Lean form's bit, 1 + the role's index in ``Role`` (Alice 1, Bob 2, verifier 3) for an estimate (drawn only
on oracle steps: elsewhere an estimate is p exactly) and PLAYER_COINS + 1 + the index for a coin share
(Alice 9, Bob 10). (a') calls the engine's own ``Streams.uniform`` and ``Streams.binomial``; (c) computes
the uniform in pure Python, ``mix(key ^ mix(counter * GOLDEN + 1)) >> 11`` times 2^-53 with SplitMix64's
finaliser masked to 64 bits (as ``streams.mix``/``words``/``uniform``), and a count of n as
``low + bisect_right(cdf, u)`` capped at n on a list copy of ``binomial_cdf(n, p)`` (as ``searchsorted``
with side "right"). So both must reproduce the engine exactly; the script exits 1 if any check fails and
asserts nothing about time:

* (a') = (a): every debate's verdict and queries per role, and the rounds played (the engine's read off
  its ledger, as in ``rounds_played``);
* (c) = (b): each matched debate's verdict, queries per role and rounds played;
* (b) = (a): debate i played alone is debate i of the batch (the matched debates are 0 .. match - 1).

Run: ``python benchmarks/stochastic_rounds.py [--T T] [--trials N] [--constants lean|paper|planned]
[--seed S] [--repeat R] [--match K] [--bernoulli N] [--clock wall|cpu]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from debatekit.analysis.montecarlo import make_instance
from debatekit.engine.seeds import debate_seed
from debatekit.engine.streams import Streams, binomial_cdf, counter
from debatekit.ledger import Role, Tally
from debatekit.machine.transcript import StepKind, TranscriptMachine
from debatekit.problems import PROBLEMS, Instance
from debatekit.protocols.registry import PROTOCOLS
from debatekit.protocols.stochastic import batch as stochastic_batch
from debatekit.protocols.stochastic import rules as stochastic
from debatekit.protocols.stochastic.params import Constants
from debatekit.protocols.stochastic.rules import NATURE, PLAYER_COINS
from debatekit.protocols.stochastic.spec import StochasticParams
from timing import median_time, print_table

BERNOULLI_P = 0.8
"""The success probability of the raw Bernoulli timing (noisy-majority's judges say yes w.p. 0.8)."""
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
ALICE, BOB, VERIFIER = (1 + i for i in range(len(Role)))
"""The purposes of the parties' estimates: 1 + the role's index in Role (Alice, Bob, verifier)."""
assert list(Role) == [Role.ALICE, Role.BOB, Role.VERIFIER]
ALICE_COINS, BOB_COINS = PLAYER_COINS + ALICE, PLAYER_COINS + BOB
"""The purposes of the coin shares (``stochastic.batch``'s coins: PLAYER_COINS + 1 + the index)."""


@dataclass(frozen=True)
class Debates:
    """Debates as arrays: verdicts, the oracle queries of Alice, Bob and the verifier, rounds played."""

    verdicts: np.ndarray
    queries: tuple[np.ndarray, np.ndarray, np.ndarray]
    rounds: np.ndarray

    def row(self, k: int) -> tuple[int, tuple[int, int, int], int]:
        return int(self.verdicts[k]), tuple(int(q[k]) for q in self.queries), int(self.rounds[k])  # type: ignore[return-value]

    def differing(self, other: Debates) -> np.ndarray:
        """The debates (positions) where the two disagree on anything."""
        same = (self.verdicts == other.verdicts) & (self.rounds == other.rounds)
        for mine, theirs in zip(self.queries, other.queries, strict=True):
            same &= mine == theirs
        return np.flatnonzero(~same)


def rounds_played(tally: Tally, rules: stochastic.Rules, machine: TranscriptMachine) -> np.ndarray:
    """Rounds each debate of an honest-against-honest Tally played, read off its ledger.

    Honest Alice estimates once per oracle step she reaches (``alice_samples`` queries each), so her
    queries say how many oracle steps a debate reached; the verifier queries only after an abort. Honest
    Bob aborts only on oracle steps (elsewhere both estimates are p exactly), so a debate with verifier
    queries ended at the oracle step it reached last, and any other played all T rounds (no one forfeits:
    checked by the caller)."""
    oracle_steps = np.array([t for t in range(machine.length) if machine.kind(t) is StepKind.ORACLE])
    reached = tally.queries[Role.ALICE] // rules.alice_samples
    aborted = tally.queries[Role.VERIFIER] > 0
    last = oracle_steps[np.clip(reached - 1, 0, len(oracle_steps) - 1)]
    return np.where(aborted, last + 1, machine.length)


def engine_debates(tally: Tally, rules: stochastic.Rules, machine: TranscriptMachine) -> Debates:
    if any(tally.forfeits.values()):  # impossible for honest players; rounds_played assumes none
        raise RuntimeError(f"the engine had forfeits {tally.forfeits} (reasons {tally.reasons})")
    queries = (tally.queries[Role.ALICE], tally.queries[Role.BOB], tally.queries[Role.VERIFIER])
    return Debates(tally.verdicts.astype(np.int64), queries, rounds_played(tally, rules, machine))


# (a') the numpy reference


def reference_batch(instance: Instance, rules: stochastic.Rules, seed: int, debates: range) -> Debates:
    """Debates ``debates`` of honest Alice against honest Bob as one numpy batch, drawing from the same
    ``Streams`` at the same counters as the engine: the protocol's arithmetic without its machinery."""
    machine = stochastic.machine_of(instance)
    oracle, steps, offset, n = instance.oracle, machine.length, machine.offset, len(debates)
    streams = Streams(seed, np.arange(debates.start, debates.stop))
    n_alice, n_bob, n_vera = rules.alice_samples, rules.bob_samples, rules.vera_samples
    paper = rules.form == "paper"
    values = np.zeros((n, offset + steps), dtype=np.uint8, order="F")  # one column per step
    values[:, : machine.n_inputs] = instance.x
    if machine.n_witness:  # honest Alice's witness
        values[:, machine.n_inputs : offset] = instance.witness
    queries = (np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64))
    verdicts = np.full(n, -1, dtype=np.int64)
    rounds = np.full(n, steps, dtype=np.int64)
    rows = np.arange(n)
    for t in range(steps):
        if rows.size == 0:
            break
        relevant = machine.relevant(t)
        if all(a < machine.n_inputs for a in relevant):  # reads only x: the same in every debate
            p = np.full(rows.size, machine.conditional(t, tuple(int(instance.x[a]) for a in relevant), oracle))
        else:  # one conditional per distinct pattern of the relevant bits
            codes = values[np.ix_(rows, relevant)].astype(np.int64) @ (1 << np.arange(len(relevant)))
            patterns, index = np.unique(codes, return_inverse=True)
            width = range(len(relevant))
            probs = [machine.conditional(t, tuple((c >> i) & 1 for i in width), oracle) for c in patterns.tolist()]
            p = np.array(probs)[index.reshape(-1)]
        query = machine.kind(t) is StepKind.ORACLE
        if query:  # honest Alice: the mean of alice_samples samples
            claims = streams.binomial(rows, counter(t, ALICE), n_alice, p) / n_alice
            queries[0][rows] += n_alice
        else:
            claims = p
        if paper:  # Figure 2: a_t = 1 iff (z^A + z^B) mod 1 <= claim
            shares = streams.uniform(rows, counter(t, ALICE_COINS)) + streams.uniform(rows, counter(t, BOB_COINS))
            bits = (np.mod(shares, 1.0) <= claims).astype(np.uint8)
        if query:  # honest Bob: the mean of bob_samples samples, and his test
            estimates = streams.binomial(rows, counter(t, BOB), n_bob, p) / n_bob
            queries[1][rows] += n_bob
        else:
            estimates = p
        stop = np.abs(claims - estimates) >= rules.bob_threshold
        if stop.any():  # the verifier estimates and decides on Alice's claim
            judged = rows[stop]
            if query:
                checks = streams.binomial(judged, counter(t, VERIFIER), n_vera, p[stop]) / n_vera
                queries[2][judged] += n_vera
            else:
                checks = p[stop]
            verdicts[judged] = np.abs(claims[stop] - checks) < rules.vera_threshold
            rounds[judged] = t + 1
            go = ~stop
            rows, claims = rows[go], claims[go]
            if paper:
                bits = bits[go]
        if not paper:  # Protocol.lean: nature's bit from Bernoulli(claim)
            bits = (streams.uniform(rows, counter(t, NATURE)) < claims).astype(np.uint8)
        values[rows, offset + t] = bits
    verdicts[rows] = values[rows, -1]
    return Debates(verdicts, queries, rounds)


# (c) the plain scalar loop

MASK = (1 << 64) - 1
M1, M2, GOLDEN = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 0x9E3779B97F4A7C15
UNIT = 2.0**-53


def mix(z: int) -> int:
    """SplitMix64's finaliser on a Python int below 2^64 (``streams.mix``)."""
    z = ((z ^ (z >> 30)) * M1) & MASK
    z = ((z ^ (z >> 27)) * M2) & MASK
    return z ^ (z >> 31)


@lru_cache(maxsize=64)
def cdf_list(n: int, p: float) -> tuple[int, list[float]]:
    """The engine's cached Bin(n, p) CDF as (low, a Python list)."""
    low, cdf = binomial_cdf(n, p)
    return low, cdf.tolist()


def plain_debate(instance: Instance, rules: stochastic.Rules, seed: int, index: int) -> tuple[int, tuple, int]:
    """Debate ``index`` of honest Alice against honest Bob, one Python iteration per round, on Python
    ints and floats: (verdict, (Alice's, Bob's, the verifier's queries), rounds played)."""
    machine = stochastic.machine_of(instance)
    oracle, steps, offset = instance.oracle, machine.length, machine.offset
    key = int(debate_seed(seed, index).generate_state(1, np.uint64)[0])
    n_alice, n_bob, n_vera = rules.alice_samples, rules.bob_samples, rules.vera_samples
    bob_threshold, vera_threshold, paper = rules.bob_threshold, rules.vera_threshold, rules.form == "paper"

    def uniform(count: int) -> float:
        return (mix(key ^ mix((count * GOLDEN + 1) & MASK)) >> 11) * UNIT

    def binomial(count: int, n: int, p: float) -> int:
        low, cdf = cdf_list(n, p)
        return min(low + bisect_right(cdf, uniform(count)), n)

    values = [int(v) for v in instance.x] + [0] * steps
    if machine.n_witness:
        values[machine.n_inputs : offset] = [int(v) for v in instance.witness]
    asked_alice = asked_bob = 0
    for t in range(steps):
        bits = tuple(values[a] for a in machine.relevant(t))
        p = machine.conditional(t, bits, oracle)
        query = machine.kind(t) is StepKind.ORACLE
        if query:
            claim = binomial(counter(t, ALICE), n_alice, p) / n_alice
            asked_alice += n_alice
        else:
            claim = p
        if paper:
            bit = int((uniform(counter(t, ALICE_COINS)) + uniform(counter(t, BOB_COINS))) % 1.0 <= claim)
        if query:
            estimate = binomial(counter(t, BOB), n_bob, p) / n_bob
            asked_bob += n_bob
        else:
            estimate = p
        if abs(claim - estimate) >= bob_threshold:
            check = binomial(counter(t, VERIFIER), n_vera, p) / n_vera if query else p
            return int(abs(claim - check) < vera_threshold), (asked_alice, asked_bob, n_vera if query else 0), t + 1
        if not paper:
            bit = int(uniform(counter(t, NATURE)) < claim)
        values[offset + t] = bit
    return values[-1], (asked_alice, asked_bob, 0), steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--T", type=int, default=10_000, help="steps of the noisy-majority instance (default 10^4)")
    parser.add_argument("--trials", type=int, default=10_000, help="debates in the batch (a), (a') (default 10^4)")
    parser.add_argument("--constants", choices=[c.value for c in Constants], default="lean")
    parser.add_argument("--seed", type=int, default=0, help="the run's seed (instance and debates)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of (a) and (a'), interleaved (default 3)")
    parser.add_argument("--match", type=int, default=5, help="single debates timed in (b), (c) (default 5)")
    parser.add_argument("--bernoulli", type=int, default=10**7, help="draws per raw Bernoulli timing (default 10^7)")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall", help="cpu: this process's CPU time")
    args = parser.parse_args(argv)
    clock = CLOCKS[args.clock]
    problem = PROBLEMS["noisy-majority"]
    if not problem.min_size <= args.T <= problem.max_size:
        parser.error(f"--T must be in [{problem.min_size}, {problem.max_size}]")
    if min(args.trials, args.repeat, args.match, args.bernoulli) < 1:
        parser.error("--trials, --repeat, --match and --bernoulli must be >= 1")
    if args.match > args.trials:
        parser.error("--match cannot exceed --trials (the matched debates are the batch's first ones)")

    instance = make_instance(problem, args.T, True, args.seed)
    machine = stochastic.machine_of(instance)
    T = machine.length
    constants = Constants(args.constants)
    spec = PROTOCOLS["stochastic"].with_params(StochasticParams(constants))
    rules = stochastic.rules_for(constants, float(instance.lipschitz), T)
    described = spec.describe(instance)["parameters"]
    for name in ("alice_samples", "bob_samples", "vera_samples", "bob_threshold", "vera_threshold"):
        assert described[name] == getattr(rules, name), f"the spec and rules_for disagree on {name}"
    alice, bob = spec.strategies[Role.ALICE]["honest"], spec.strategies[Role.BOB]["honest"]
    oracle_steps = sum(machine.kind(t) is StepKind.ORACLE for t in range(T))

    def engine(debates: range) -> Tally:
        return stochastic_batch.simulate(instance, rules, alice, bob, args.seed, debates)

    # warm-up: the binomial CDFs (cached by the engine) and the plain loop's list copies
    engine(range(0, 1))
    plain_debate(instance, rules, args.seed, 0)

    # (b) one debate through the engine, (c) the plain loop, on debates 0 .. match - 1
    singles: list[tuple[float, Tally]] = []
    plains: list[tuple[float, tuple]] = []
    for i in range(args.match):  # interleaved, so a slow spell of the machine falls on both sides alike
        singles.append(median_time(lambda i=i: engine(range(i, i + 1)), 1, clock))
        plains.append(median_time(lambda i=i: plain_debate(instance, rules, args.seed, i), 1, clock))
    single = [engine_debates(tally, rules, machine).row(0) for _, tally in singles]
    plain = [debate for _, debate in plains]
    t_single, t_plain = statistics.median(s for s, _ in singles), statistics.median(s for s, _ in plains)
    us_single = statistics.median(s / d[2] for (s, _), d in zip(singles, single, strict=True)) * 1e6
    us_plain = statistics.median(s / d[2] for (s, _), d in zip(plains, plain, strict=True)) * 1e6

    # (a) the engine's batch and (a') the numpy reference, interleaved
    trials = range(0, args.trials)
    t_batches, t_references = [], []
    for _ in range(args.repeat):
        start = clock()
        tally = engine(trials)
        t_batches.append(clock() - start)
        start = clock()
        reference = reference_batch(instance, rules, args.seed, trials)
        t_references.append(clock() - start)
    t_batch, t_reference = statistics.median(t_batches), statistics.median(t_references)
    batch = engine_debates(tally, rules, machine)
    rounds = int(batch.rounds.sum())
    aborted = int((batch.queries[2] > 0).sum())
    accepts = int((batch.verdicts == 1).sum())
    queries = int(sum(int(q.sum()) for q in batch.queries))

    # the checks: (a') = (a) debate for debate, (c) = (b), (b) = (a) on the matched debates
    differ = batch.differing(reference)
    mismatches = [f"(a') debate {k}: engine {batch.row(k)}, reference {reference.row(k)}" for k in differ[:5]]
    mismatches += [
        f"(c) debate {i}: engine {e}, plain {p}" for i, (e, p) in enumerate(zip(single, plain, strict=True)) if e != p
    ]
    mismatches += [
        f"(b) debate {i}: alone {e}, in the batch {batch.row(i)}" for i, e in enumerate(single) if e != batch.row(i)
    ]
    matched = sum(e == p for e, p in zip(single, plain, strict=True))

    # (d) numpy's raw Bernoulli rate
    rng = np.random.default_rng(args.seed)
    reps = max(5, args.repeat)
    t_raw, _ = median_time(lambda: rng.random(args.bernoulli) < BERNOULLI_P, reps, clock)
    raw_rate = args.bernoulli / t_raw
    effective = queries / t_batch

    ratio_batch, ratio_single = t_batch / t_reference, t_single / t_plain
    us = 1e6
    rows = [
        ("measure", "time", "per round", "floor"),
        (
            "instance",
            f"noisy-majority, T = {T:,} ({oracle_steps} oracle steps), K = {instance.lipschitz:.4g}, answer 1",
            "",
            "",
        ),
        (
            f"rules ({constants} constants, {rules.form} form)",
            f"samples A/B/V = {rules.alice_samples:,}/{rules.bob_samples:,}/{rules.vera_samples:,}, "
            f"thresholds B/V = {rules.bob_threshold:.4g}/{rules.vera_threshold:.4g}",
            "",
            "",
        ),
        (
            f"(a)  engine, {args.trials:,} debates",
            f"{t_batch:.3f} s: {rounds:,} rounds played ({aborted} aborted), {rounds / t_batch:,.0f} rounds/s",
            f"{t_batch / rounds * us:.3f} µs",
            "",
        ),
        (
            "(a') numpy reference, same draws",
            f"{t_reference:.3f} s: {rounds / t_reference:,.0f} rounds/s",
            f"{t_reference / rounds * us:.3f} µs",
            "",
        ),
        ("     ratio (a)/(a')", f"{ratio_batch:.2f} x", "", f"<= 1.5 x: {'met' if ratio_batch <= 1.5 else 'NOT met'}"),
        (
            "(b)  engine, one debate",
            f"{t_single:.4f} s (median of {args.match}: {', '.join(f'{s:.4f}' for s, _ in singles)})",
            f"{us_single:.2f} µs",
            "",
        ),
        (
            "(c)  plain Python loop, one debate",
            f"{t_plain:.4f} s (median of {args.match}: {', '.join(f'{s:.4f}' for s, _ in plains)})",
            f"{us_plain:.2f} µs",
            "",
        ),
        ("     ratio (b)/(c)", f"{ratio_single:.2f} x", "", f"<= 2 x: {'met' if ratio_single <= 2 else 'NOT met'}"),
        (f"(d)  numpy raw Bernoulli, N = {args.bernoulli:,}", f"rng.random(N) < p: {raw_rate:,.0f} draws/s", "", ""),
        (
            "     effective rate of (a)",
            f"{queries:,} ledger queries / {t_batch:.3f} s = {effective:,.4g}/s = {effective / raw_rate:,.4g} x raw",
            "",
            "",
        ),
        ("accept rate of (a)", f"{accepts / args.trials:.4f} ({accepts:,} of {args.trials:,})", "", ""),
    ]
    print(
        f"stochastic-oracle debate, honest Alice vs honest Bob, {constants} constants; seed {args.seed}, "
        f"{args.clock} time, median of {args.repeat} run(s) of (a) and (a')"
    )
    print_table(rows)
    print(
        f"checks: (a') = (a) debate for debate: {args.trials - len(differ):,} of {args.trials:,}; "
        f"(c) = (b): {matched} of {args.match}; (b) = (a): "
        f"{sum(e == batch.row(i) for i, e in enumerate(single))} of {args.match}"
    )
    for line in mismatches:
        print(f"  mismatch: {line}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
