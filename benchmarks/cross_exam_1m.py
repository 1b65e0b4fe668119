"""Cross-examination debate (Theorem 5.3, Figure 1) over a computation of about 10^6 steps.

The computation M is the balanced XOR tree of ``parity_circuit(n)``: T = n - 1 gates, one
transcript bit per gate (n = 2^20 gives T = 1,048,575). Measured side by side, each the median
of ``--repeat`` runs with ``time.perf_counter``:

(a) plain evaluation of M, ``circuit.evaluate(x)`` (vectorised level by level);
(b) honest Alice writing her message, ``HonestAlice(seat).transcript()``; the paper's
    efficiency requirement is that the honest prover costs about one run of M: target (b)/(a) <= 2;
(c) for context, a plain per-gate Python loop evaluating M (the vectorisation speedup);
(d) the verifier's check alone, ``verify(instance, message, challenge, reader)``, per debate,
    over many random challenges and ACCEPT: target <= 1 ms;
(e) honest Bob finding the step to challenge in a transcript with one lie;
(f) prover bits the verifier read per debate (from the Ledger) against ``bits_bound(circuit)``;
(g) for context, one whole debate (honest Alice against honest Bob) through the game engine.

Run: ``python benchmarks/cross_exam_1m.py [--n N] [--repeat R] [--debates D] [--seed S]``.
This is a measurement script, not a test: it asserts only that the answers are right.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from debatekit.analysis.montecarlo import play_one
from debatekit.engine.boundary import commit_bits, frozen
from debatekit.engine.nodes import Judge, judge
from debatekit.ledger import Ledger, Role
from debatekit.machine.circuit import Circuit, parity_circuit
from debatekit.oracle import Asker
from debatekit.players.base import Seat
from debatekit.problems import Instance
from debatekit.protocols import cross_exam
from debatekit.protocols.registry import PROTOCOLS
from debatekit.reader import Reader
from timing import median_time, print_table


def python_loop(circuit: Circuit, x: np.ndarray) -> list[int]:
    """Reference evaluation: one Python step per gate, no numpy in the loop."""
    values = [int(v) for v in x] + [0] * circuit.length
    ops, in0, in1, offset = circuit.ops.tolist(), circuit.in0.tolist(), circuit.in1.tolist(), circuit.offset
    for t in range(circuit.length):
        a, b, op = values[in0[t]], values[in1[t]], ops[t]
        values[offset + t] = (a & b) if op == 0 else (a | b) if op == 1 else (a ^ b) if op == 2 else 1 - a
    return values[offset:]


def no_queries(question: object) -> int:
    raise AssertionError("parity's verifier makes no oracle query")


def seat(instance: Instance, role: Role, rng: np.random.Generator) -> Seat:
    return Seat(instance, role, rng, Asker(instance.oracle, role, Ledger(), rng))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2**20, help="input bits; T = n - 1 gates (default 2^20)")
    parser.add_argument("--repeat", type=int, default=7, help="repetitions per timing (median reported)")
    parser.add_argument("--debates", type=int, default=2000, help="verifier checks timed in (d) and (f)")
    parser.add_argument("--loop-n", type=int, default=None, help="n for the Python-loop reference (default --n)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.n < 2 or args.repeat < 1 or args.debates < 1:
        parser.error("need --n >= 2, --repeat >= 1 and --debates >= 1")
    rng = np.random.default_rng(args.seed)

    start = time.perf_counter()
    circuit = parity_circuit(args.n)
    built = time.perf_counter() - start
    x = rng.integers(0, 2, args.n).astype(np.uint8)
    truth = bool(x.sum() % 2)
    instance = Instance("parity", args.n, truth, x, machine=circuit)
    T = circuit.length
    start = time.perf_counter()
    circuit.evaluate(x)  # the first call also builds the level schedule (cached afterwards)
    first = time.perf_counter() - start

    # (a) plain evaluation and (b) honest Alice's message
    t_eval, values = median_time(lambda: circuit.evaluate(x), args.repeat)
    alice = cross_exam.HonestAlice(seat(instance, Role.ALICE, rng))
    t_alice, message = median_time(alice.transcript, args.repeat)
    committed = commit_bits(message, T, Role.ALICE)
    assert np.array_equal(message, values) and int(message[-1]) == truth

    # (c) the per-gate Python loop, for context
    loop_n = args.loop_n or args.n
    loop_circuit = circuit if loop_n == args.n else parity_circuit(loop_n)
    loop_x = x if loop_n == args.n else rng.integers(0, 2, loop_n).astype(np.uint8)
    loop_circuit.evaluate(loop_x)
    t_loop_eval, loop_values = median_time(lambda: loop_circuit.evaluate(loop_x), args.repeat)
    t_loop, reference = median_time(lambda: python_loop(loop_circuit, loop_x), max(1, min(args.repeat, 3)))
    assert reference == loop_values.tolist()

    # (d) the verifier's check per debate, and (f) the bits it read
    challenges: list[int | None] = [int(t) for t in rng.integers(0, T, args.debates - 1)] + [cross_exam.ACCEPT]
    check_times, bits = [], []
    for challenge in challenges:
        ledger = Ledger()
        reader = Reader(ledger)
        judge_node = Judge(lambda c=challenge, r=reader: cross_exam.verify(instance, committed, c, r))
        start = time.perf_counter()
        verdict = judge(judge_node, no_queries).verdict
        check_times.append(time.perf_counter() - start)
        assert verdict == truth
        bits.append(ledger.bits_read)
    bound = cross_exam.bits_bound(circuit)
    assert max(bits) <= bound

    # (e) honest Bob on a transcript with one lie (one gate's bit flipped)
    lie_at = int(rng.integers(T))
    lying = message.copy()
    lying[lie_at] ^= 1
    lying = frozen(lying)
    bob = cross_exam.HonestBob(seat(instance, Role.BOB, rng))
    t_bob, found = median_time(lambda: bob.challenge(lying), args.repeat)
    assert found == lie_at, (found, lie_at)
    assert judge(Judge(lambda: cross_exam.verify(instance, lying, found, Reader(Ledger()))), no_queries).verdict == 0

    # (g) one whole debate through the game engine, for context
    spec = PROTOCOLS["cross-exam"]
    honest = spec.strategies[Role.ALICE]["honest"], spec.strategies[Role.BOB]["honest"]
    seeds = iter(np.random.SeedSequence(args.seed).spawn(args.repeat))
    t_debate, outcome = median_time(lambda: play_one(spec, instance, *honest, next(seeds)), args.repeat)
    assert outcome.verdict == truth

    ms = 1e3
    check_ms = np.array(check_times) * ms
    rows = [
        ("computation", f"parity_circuit({args.n}): T = {T:,} gates, depth {circuit.depth}", ""),
        ("(one-off) build circuit / first evaluate", f"{built:.2f} s / {first:.2f} s", "not in (a)"),
        ("(a) evaluate M (numpy, by level)", f"{t_eval * ms:.2f} ms", ""),
        ("(b) honest Alice's message", f"{t_alice * ms:.2f} ms", ""),
        ("    ratio (b)/(a)", f"{t_alice / t_eval:.2f}", "target <= 2"),
        (
            f"(c) per-gate Python loop (n = {loop_n})",
            f"{t_loop * ms:.1f} ms = {t_loop / t_loop_eval:.0f} x numpy evaluate",
            "context (vectorisation speedup)",
        ),
        (
            f"(d) verifier's check, {args.debates} debates",
            f"mean {check_ms.mean():.4f} ms, median {np.median(check_ms):.4f}, "
            f"p99 {np.percentile(check_ms, 99):.4f}, max {check_ms.max():.4f}",
            "target <= 1 ms (max may include a GC pause)",
        ),
        ("(e) honest Bob finds the one lie", f"{t_bob * ms:.2f} ms (= {t_bob / t_eval:.2f} x (a))", ""),
        ("(f) bits read per debate", f"max {max(bits)}, mean {np.mean(bits):.2f}", f"bits_bound = {bound}"),
        ("(g) one whole honest debate (play_one)", f"{t_debate * ms:.2f} ms (= {t_debate / t_eval:.2f} x (a))", ""),
    ]
    print(f"cross-examination over a {T:,}-step computation; median of {args.repeat} runs, seed {args.seed}")
    print_table(rows)
    print(
        f"checks: (b)/(a) <= 2: {'met' if t_alice <= 2 * t_eval else 'NOT met'}; "
        f"verifier mean <= 1 ms: {'met' if check_ms.mean() <= 1 else 'NOT met'}; "
        f"bits read <= bound: {'met' if max(bits) <= bound else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
