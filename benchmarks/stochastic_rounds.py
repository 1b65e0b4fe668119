"""Stochastic-oracle debate (Theorem 6.2) played in batches: debate-rounds per second at T = 10^4.

The engine, ``protocols.stochastic.simulate``, plays many debates at once with numpy. The oracle's
probabilities are known, so an honest estimate from R samples is one binomial count, not R
Bernoulli draws; the ledger still counts R queries. The instance is ``noisy-majority`` of size T:
T - 6 bookkeeping compute steps, 5 oracle judgements and a majority step. Honest Alice plays
honest Bob with the full constants (``--constants``, default Lean's). Measured side by side:

(a) the batched engine over ``--trials`` debates: debate-rounds per second, counting the rounds
    actually played (a debate that ends in an abort plays fewer than T);
(b) one whole debate (trials = 1), the median over ``--match`` seeds: target seconds or less;
(c) a plain reference written here: one debate at a time, one Python iteration per round, doing
    the same work each round (``machine.conditional``; honest Alice's and honest Bob's estimates
    by numpy's scalar ``rng.binomial`` on oracle steps; the bit from Bernoulli(claim), or from the
    two coin shares in the paper form; the abort test; the verifier's estimate after an abort):
    target (a)/(c) >= 50;
(d) numpy's raw Bernoulli rate on this machine, ``rng.random(N) < p``; and the engine's effective
    Bernoulli rate, the oracle queries the ledger counted (Alice + Bob + verifier, all debates) per
    second of (a), as a multiple of the raw rate: what one binomial count instead of R draws buys.

The plain loop seeds itself as the engine does (``seed.spawn(4)``: Alice, Bob, verifier, nature).
Two correctness checks; the script exits 1 if either fails and asserts nothing about time:

* exact: for each of the ``--match`` seeds of (b), the plain loop reproduces the engine's trials = 1
  debate draw for draw (the same verdict, the same queries per role, the same rounds);
* statistical: (a) and (c) play independent debates, so their accept rates must agree: Fisher's
  exact test of equal rates must not reject at the 1% level (equal rates lie in its 99% region).

Run: ``python benchmarks/stochastic_rounds.py [--T T] [--trials N] [--plain-trials M]
[--constants lean|paper|planned] [--seed S] [--repeat R] [--match K]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass

import numpy as np
from scipy import stats

from debatekit.analysis.montecarlo import make_instance
from debatekit.catalog import PROTOCOLS
from debatekit.ledger import Role, Tally
from debatekit.machine.transcript import StepKind, TranscriptMachine
from debatekit.problems import PROBLEMS, Instance
from debatekit.protocols import stochastic
from timing import median_time, print_table

BERNOULLI_P = 0.8
"""The success probability of the raw Bernoulli timing (noisy-majority's judges say yes w.p. 0.8)."""


def fresh(seq: np.random.SeedSequence) -> np.random.SeedSequence:
    """An unspawned copy of ``seq``: ``spawn`` advances a SeedSequence, so each side gets its own."""
    return np.random.SeedSequence(seq.entropy, spawn_key=seq.spawn_key)


@dataclass(frozen=True)
class Debate:
    """One debate of the plain loop."""

    verdict: int
    queries: tuple[int, int, int]
    """Oracle queries of Alice, Bob and the verifier."""
    rounds: int


def plain_debate(instance: Instance, rules: stochastic.Rules, seed: np.random.SeedSequence) -> Debate:
    """One debate of honest Alice against honest Bob, one Python iteration per round.

    The same protocol as ``stochastic.simulate`` with one debate, written plainly: per round the
    step's p from ``machine.conditional``; Alice's claim, a binomial count of ``alice_samples`` on an
    oracle step (p itself otherwise); in the paper form the coin shares; Bob's estimate from
    ``bob_samples``; an abort iff they differ by >= ``bob_threshold``, and then the verifier's
    estimate from ``vera_samples`` decides; otherwise the bit (Lean form: Bernoulli(claim) from
    nature's generator). Each generator is used in the engine's order, so with the same seed the
    engine at trials = 1 draws exactly the same numbers."""
    machine: TranscriptMachine = stochastic.machine_of(instance)
    oracle, steps, offset = instance.oracle, machine.length, machine.offset
    alice, bob, vera, nature = (np.random.default_rng(s) for s in seed.spawn(4))
    n_alice, n_bob, n_vera = rules.alice_samples, rules.bob_samples, rules.vera_samples
    bob_threshold, vera_threshold, paper = rules.bob_threshold, rules.vera_threshold, rules.form == "paper"
    values = [int(v) for v in instance.x] + [0] * steps
    asked_alice = asked_bob = 0
    for t in range(steps):
        bits = tuple(values[a] for a in machine.relevant(t))
        p = machine.conditional(t, bits, oracle)
        query = machine.kind(t) is StepKind.ORACLE
        if query:
            claim = alice.binomial(n_alice, p) / n_alice
            asked_alice += n_alice
        else:
            claim = p
        if not 0.0 <= claim <= 1.0:  # the engine's claims_ok; never true for honest Alice
            return Debate(0, (asked_alice, asked_bob, 0), t + 1)
        if paper:
            bit = int((alice.random() + bob.random()) % 1.0 <= claim)
        if query:
            estimate = bob.binomial(n_bob, p) / n_bob
            asked_bob += n_bob
        else:
            estimate = p
        if abs(claim - estimate) >= bob_threshold:
            check = vera.binomial(n_vera, p) / n_vera if query else p
            verdict = int(abs(claim - check) < vera_threshold)
            return Debate(verdict, (asked_alice, asked_bob, n_vera if query else 0), t + 1)
        if not paper:
            bit = int(nature.random() < claim)
        values[offset + t] = bit
    return Debate(values[-1], (asked_alice, asked_bob, 0), steps)


def rounds_played(tally: Tally, rules: stochastic.Rules, machine: TranscriptMachine) -> np.ndarray:
    """Rounds each debate of an honest-against-honest Tally played, read off its ledger.

    Honest Alice estimates once per oracle step she reaches (``alice_samples`` queries each), so
    her queries say how many oracle steps a debate reached; the verifier queries only after an
    abort. Honest Bob aborts only on oracle steps (elsewhere both estimates are p exactly), so a
    debate with verifier queries ended at the oracle step it reached last, and any other played
    all T rounds (no one forfeits: checked by the caller)."""
    oracle_steps = np.array([t for t in range(machine.length) if machine.kind(t) is StepKind.ORACLE])
    reached = tally.queries[Role.ALICE] // rules.alice_samples
    aborted = tally.queries[Role.VERIFIER] > 0
    last = oracle_steps[np.clip(reached - 1, 0, len(oracle_steps) - 1)]
    return np.where(aborted, last + 1, machine.length)


def total_queries(tally: Tally) -> int:
    return int(sum(int(q.sum()) for q in tally.queries.values()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--T", type=int, default=10_000, help="steps of the noisy-majority instance (default 10^4)")
    parser.add_argument("--trials", type=int, default=10_000, help="debates in the batched run (a) (default 10000)")
    parser.add_argument("--plain-trials", type=int, default=200, help="debates of the plain loop (c) (default 200)")
    parser.add_argument("--constants", choices=("lean", "paper", "planned"), default="lean")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=1, help="timed runs of (a) and (c), median reported")
    parser.add_argument("--match", type=int, default=3, help="seeds timed in (b) and checked exactly (default 3)")
    parser.add_argument("--bernoulli", type=int, default=10**7, help="draws per raw Bernoulli timing (default 10^7)")
    args = parser.parse_args(argv)
    problem = PROBLEMS["noisy-majority"]
    if not problem.min_size <= args.T <= problem.max_size:
        parser.error(f"--T must be in [{problem.min_size}, {problem.max_size}]")
    if min(args.trials, args.plain_trials, args.repeat, args.match, args.bernoulli) < 1:
        parser.error("--trials, --plain-trials, --repeat, --match and --bernoulli must be >= 1")
    if args.match > args.plain_trials:
        parser.error("--match cannot exceed --plain-trials (the matched seeds are the plain loop's first ones)")

    instance = make_instance(problem, args.T, True, args.seed)
    machine = stochastic.machine_of(instance)
    T = machine.length
    spec = PROTOCOLS["stochastic"].variant(args.constants)  # type: ignore[misc]
    rules = stochastic.rules_for(args.constants, float(instance.lipschitz), T)  # type: ignore[arg-type]
    described = spec.describe(instance)["parameters"]  # type: ignore[misc]
    for name in ("alice_samples", "bob_samples", "vera_samples", "bob_threshold", "vera_threshold"):
        assert described[name] == getattr(rules, name), f"catalog and rules_for disagree on {name}"
    alice, bob = spec.strategies[Role.ALICE]["honest"], spec.strategies[Role.BOB]["honest"]
    oracle_steps = sum(machine.kind(t) is StepKind.ORACLE for t in range(T))

    def batched(trials: int, seed: np.random.SeedSequence) -> Tally:
        return stochastic.simulate(instance, rules, alice, bob, trials, seed)

    # (b) one whole debate per matched seed (also the warm-up), and the plain loop's debates
    plain_seeds = np.random.SeedSequence([args.seed, 1]).spawn(args.plain_trials)
    singles: list[tuple[float, Tally]] = []
    for seq in plain_seeds[: args.match]:
        singles.append(median_time(lambda seq=seq: batched(1, fresh(seq)), 1))
    t_single = statistics.median(s for s, _ in singles)

    # (c) the plain loop, and the exact check against (b)
    t_plain, plain = median_time(
        lambda: [plain_debate(instance, rules, fresh(seq)) for seq in plain_seeds], args.repeat
    )
    mismatches = []
    for i, ((_, tally), debate) in enumerate(zip(singles, plain, strict=False)):
        engine = Debate(
            int(tally.verdicts[0]),
            (int(tally.queries[Role.ALICE][0]), int(tally.queries[Role.BOB][0]), int(tally.queries[Role.VERIFIER][0])),
            int(rounds_played(tally, rules, machine)[0]),
        )
        if engine != debate or any(tally.forfeits.values()):
            forfeits = {role.value: k for role, k in tally.forfeits.items() if k}
            mismatches.append(f"seed {i}: engine {engine}{f' forfeits {forfeits}' if forfeits else ''}, plain {debate}")
    plain_rounds = sum(d.rounds for d in plain)
    plain_accepts = sum(d.verdict for d in plain)
    plain_queries = sum(sum(d.queries) for d in plain)

    # (a) the batched engine
    t_batch, tally = median_time(lambda: batched(args.trials, np.random.SeedSequence(args.seed)), args.repeat)
    if any(tally.forfeits.values()):  # impossible for honest players; rounds_played assumes none
        raise RuntimeError(f"the batched run had forfeits {tally.forfeits} (reasons {tally.reasons})")
    rounds = int(rounds_played(tally, rules, machine).sum())
    aborted = int((tally.queries[Role.VERIFIER] > 0).sum())
    accepts = int((tally.verdicts == 1).sum())
    queries = total_queries(tally)

    # the statistical check: independent debates, so the two accept rates must agree
    table = [[accepts, args.trials - accepts], [plain_accepts, args.plain_trials - plain_accepts]]
    fisher = stats.fisher_exact(table).pvalue
    agree = fisher >= 0.01

    # (d) numpy's raw Bernoulli rate
    rng = np.random.default_rng(args.seed)
    reps = max(5, args.repeat)
    t_raw, _ = median_time(lambda: rng.random(args.bernoulli) < BERNOULLI_P, reps)
    t_raw_binomial, _ = median_time(lambda: rng.binomial(1, BERNOULLI_P, args.bernoulli), reps)
    raw_rate, binomial_rate = args.bernoulli / t_raw, args.bernoulli / t_raw_binomial
    effective = queries / t_batch

    def ci(k: int, n: int) -> str:
        low, high = stats.binomtest(k, n).proportion_ci(0.99, method="exact")
        return f"{k / n:.4f} [{low:.4f}, {high:.4f}]"

    batch_rate, plain_rate = rounds / t_batch, plain_rounds / t_plain
    speedup = batch_rate / plain_rate
    us = 1e6
    rows = [
        (
            "instance",
            f"noisy-majority, T = {T:,} ({oracle_steps} oracle steps), K = {instance.lipschitz:.4g}, answer 1",
            "",
        ),
        (
            f"rules ({rules.constants} constants, {rules.form} form)",
            f"samples A/B/V = {rules.alice_samples:,}/{rules.bob_samples:,}/{rules.vera_samples:,}, "
            f"thresholds B/V = {rules.bob_threshold:.4g}/{rules.vera_threshold:.4g}",
            "",
        ),
        (
            f"(a) batched engine, {args.trials:,} debates",
            f"{t_batch:.2f} s, {rounds:,} rounds played ({aborted} aborted) = {batch_rate:,.0f} rounds/s",
            f"{t_batch / rounds * us:.3f} µs per round",
        ),
        (
            f"(b) one debate, {rules.constants} constants",
            f"{t_single:.3f} s (median of {args.match}: {', '.join(f'{s:.3f}' for s, _ in singles)})",
            "target: seconds or less (<= 10 s)",
        ),
        (
            f"(c) plain per-round loop, {args.plain_trials:,} debates",
            f"{t_plain:.2f} s, {plain_rounds:,} rounds = {plain_rate:,.0f} rounds/s",
            f"{t_plain / plain_rounds * us:.3f} µs per round",
        ),
        ("    ratio (a)/(c), rounds per second", f"{speedup:.2f} x", "target >= 50 x"),
        (
            f"(d) numpy raw Bernoulli, N = {args.bernoulli:,}",
            f"rng.random(N) < p: {raw_rate:,.0f} draws/s; rng.binomial(1, p, N): {binomial_rate:,.0f}",
            "",
        ),
        (
            "    effective rate of (a): ledger queries/s",
            f"{queries:,} queries / {t_batch:.2f} s = {effective:,.4g}/s = {effective / raw_rate:,.4g} x raw",
            "one binomial count per estimate",
        ),
        (
            "    effective rate of (c), for context",
            f"{plain_queries / t_plain:,.4g}/s = {plain_queries / t_plain / raw_rate:,.4g} x raw",
            "",
        ),
        ("accept rate [99% CI], (a) batched", ci(accepts, args.trials), ""),
        ("accept rate [99% CI], (c) plain loop", ci(plain_accepts, args.plain_trials), ""),
        ("    agreement (Fisher's exact test)", f"p = {fisher:.3g}", "agree iff p >= 0.01"),
        (
            "    exact match, plain loop = engine",
            f"{args.match - len(mismatches)} of {args.match} seeds",
            "same verdict, queries, rounds",
        ),
    ]
    print(
        f"stochastic-oracle debate, honest Alice vs honest Bob, {rules.constants} constants; seed {args.seed}, "
        f"median of {args.repeat} run(s)"
    )
    print_table(rows)
    print(
        f"targets: one debate <= 10 s: {'met' if t_single <= 10 else 'NOT met'}; "
        f"(a)/(c) >= 50: {'met' if speedup >= 50 else 'NOT met'}"
    )
    correct = agree and not mismatches
    print(
        f"checks: accept rates agree (99%): {'yes' if agree else 'NO'}; "
        f"exact match on {args.match} seeds: {'yes' if not mismatches else 'NO'}"
    )
    for line in mismatches:
        print(f"  mismatch: {line}")
    return 0 if correct else 1


if __name__ == "__main__":
    sys.exit(main())
