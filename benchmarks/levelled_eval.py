"""Evaluation of a levelled alternating AND/OR circuit (the form of Theorem 5, debate query
complexity) at about 10^7 gates: gates per second, measured side by side, each the median of
``--repeat`` runs with ``time.perf_counter``:

(a) vectorised evaluation of every node on one input, ``circuit.node_values(x)``;
(b) vectorised evaluation on a batch of ``--batch`` inputs (bit-packed, 64 inputs a word), in
    gate-evaluations (gates × inputs) per second;
(c) a plain per-node Python loop on one input. It runs on the literal level and the lowest gate
    levels only, about ``--python-gates`` gates (default 10^6, because the loop over 10^7 gates
    takes tens of seconds).

Like for like: both (a) and (c) evaluate the literal level and gate levels, and both rates count
nodes (literals and gates) per second; each side gets its natural input form, made outside the
timing (a uint8 array for (a); for (c) Python lists of x and of the circuit's wiring).

The circuit is ``random_levelled``: ``--levels`` gate levels of ``--gates / --levels`` gates (and a top AND)
each over ``--width`` literals. Run: ``python benchmarks/levelled_eval.py [--gates G] [--levels L]
[--width W] [--batch B] [--python-gates P] [--repeat R] [--seed S]``. This is a measurement
script, not a test: it checks only that the three evaluations agree.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

from debatekit.machine.levelled import LevelledCircuit, random_levelled


def timed(work: Callable[[], object], repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def wiring(circuit: LevelledCircuit, levels: int) -> tuple[list[int], list[int], list[tuple[bool, list, list]]]:
    """The circuit's literals and lowest ``levels`` gate levels as Python lists (made once)."""
    gates = [(circuit.is_and(j), circuit.left[j].tolist(), circuit.right[j].tolist()) for j in range(levels)]
    return circuit.literal_var.tolist(), circuit.literal_neg.tolist(), gates


def python_loop(xs: list[int], wired: tuple[list[int], list[int], list]) -> list[list[int]]:
    """Node values of the literal level and the wired gate levels, node by node."""
    var, neg, gates = wired
    values = [[xs[v] ^ s for v, s in zip(var, neg, strict=True)]]
    for is_and, left, right in gates:
        below = values[-1]
        if is_and:
            values.append([below[a] & below[b] for a, b in zip(left, right, strict=True)])
        else:
            values.append([below[a] | below[b] for a, b in zip(left, right, strict=True)])
    return values


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gates", type=int, default=10**7)
    parser.add_argument("--levels", type=int, default=10)
    parser.add_argument("--width", type=int, default=2**20, help="literals (and the inputs' count n)")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--python-gates", type=int, default=10**6)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    per_level = args.gates // args.levels
    start = time.perf_counter()
    circuit = random_levelled(args.width, [args.width] + [per_level] * args.levels, rng)
    print(f"circuit: {circuit.size:,} gates, depth {circuit.depth}, n = {circuit.n:,} "
          f"(built in {time.perf_counter() - start:.2f} s)")  # fmt: skip
    x = rng.integers(0, 2, circuit.n).astype(np.uint8)
    xs = rng.integers(0, 2, (args.batch, circuit.n)).astype(np.uint8)

    single, values = timed(lambda: circuit.node_values(x), args.repeat)
    nodes = circuit.literal_var.size + circuit.size
    print(f"(a) vectorised, one input:   {single:8.3f} s  {nodes / single:14,.0f} nodes/s")
    batched, outputs = timed(lambda: circuit.evaluate(xs), args.repeat)
    rate = circuit.size * args.batch / batched
    print(f"(b) vectorised, {args.batch} inputs:  {batched:8.3f} s  {rate:14,.0f} gate-evaluations/s")

    levels = max(1, min(circuit.depth, args.python_gates // per_level))
    loop_nodes = circuit.literal_var.size + sum(int(a.size) for a in circuit.left[:levels])
    xs_list, wired = x.tolist(), wiring(circuit, levels)
    plain, loop_values = timed(lambda: python_loop(xs_list, wired), 1)
    print(f"(c) Python loop, one input:  {plain:8.3f} s  {loop_nodes / plain:14,.0f} nodes/s "
          f"(the literals and the lowest {levels} levels: {loop_nodes:,} nodes)")  # fmt: skip
    print(f"speedup (a)/(c): {(nodes / single) / (loop_nodes / plain):,.0f}x like for like; "
          f"(b)/(c): {rate / (loop_nodes / plain):,.0f}x (gate-evaluations against nodes)")  # fmt: skip

    assert isinstance(values, list) and isinstance(loop_values, list)
    agree = all(np.array_equal(values[k], loop_values[k]) for k in range(levels + 1))
    agree &= bool(np.all(np.asarray(outputs)[:3] == [circuit.evaluate(row) for row in xs[:3]]))
    print("answers agree" if agree else "ANSWERS DISAGREE")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
