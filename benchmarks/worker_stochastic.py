"""The cost of the process boundary for stochastic debate's batched players (issue 20): a user's
batched players in their workers against the same players inline.

Every side plays honest Alice and honest Bob (``debatekit.protocols.stochastic.rules:HonestAlice``,
``:HonestBob``) on ``noisy-majority`` of size T, ``--trials`` debates in blocks of the protocol's
batch, through ``montecarlo.run``: (a) inline, as the trusted built-ins (the batch engine's
reference path); (b) Alice's in a worker against the built-in Bob (a user's strategy against the
protocol's own, the usual experiment); (c) both in workers. A call carries the step's live rows
when they changed and the estimate its player made at its last call, answered ahead and taken when
the player makes it again, packed and through the memory the engine shares with the worker; while
Alice's worker thinks, the engine draws the step's nature uniforms, as inline it does after. All
three do the same debates: the script checks that their acceptance and query counts are equal.
Each is the median of ``--repeat`` rounds, the three timed in turn in each round
(``benchmarks/timing.paired_times``, wall time: the workers' time is part of the cost).

Each call waits on the last (Alice's claim at t + 1 follows nature's bit at t), so a worker's
overhead is paid 2T times in series: a machine with a core free for each worker and the engine
shows it alone; on fewer cores the workers and the engine, each polling while it waits, share them.

Run: ``python benchmarks/worker_stochastic.py [--T T] [--trials N] [--repeat R]``.
Target (issue 20): the workers within 1.5x of inline at T = 10^4, 4,096 debates.
"""

from __future__ import annotations

import argparse

from debatekit.analysis.montecarlo import make_instance, run
from debatekit.engine.isolation import Limits, Pool
from debatekit.ledger import Role
from debatekit.problems import PROBLEMS
from debatekit.protocols.registry import PROTOCOLS
from timing import paired_times, print_table

HONEST = {
    Role.ALICE: "debatekit.protocols.stochastic.rules:HonestAlice",
    Role.BOB: "debatekit.protocols.stochastic.rules:HonestBob",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--T", type=int, default=10_000, help="steps of the noisy-majority instance (default 10^4)")
    parser.add_argument("--trials", type=int, default=4096)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    spec = PROTOCOLS["stochastic"]
    instance = make_instance(PROBLEMS["noisy-majority"], args.T, True, 0)
    builtin = {role: spec.strategies[role]["honest"] for role in HONEST}

    def inline() -> object:
        return run(spec, instance, builtin[Role.ALICE], builtin[Role.BOB], args.trials, 0)

    limits = Limits(timeout=600)
    with Pool(HONEST[Role.ALICE], Role.ALICE, limits) as alice, Pool(HONEST[Role.BOB], Role.BOB, limits) as bob:

        def alice_isolated() -> object:
            return run(spec, instance, alice.strategy, builtin[Role.BOB], args.trials, 0)

        def both_isolated() -> object:
            return run(spec, instance, alice.strategy, bob.strategy, args.trials, 0)

        times, results = paired_times([inline, alice_isolated, both_isolated], args.repeat, least=0)
    ref = results[0]
    same = all(
        (got.accept_rate, got.alice_queries_mean, got.bob_queries_mean)
        == (ref.accept_rate, ref.alice_queries_mean, ref.bob_queries_mean)
        for got in results
    )
    calls = [0, ref.T, 2 * ref.T]  # type: ignore[attr-defined]  # each row's calls in a worker
    print(f"stochastic debate, noisy-majority, T = {ref.T:,}, {args.trials} debates, honest against honest")  # type: ignore[attr-defined]
    rows = [("measure", "seconds", "µs more per worker call", "ratio to (a)", "target")]
    labels = ["(a) inline (trusted built-ins)", "(b) Alice in a worker, Bob built-in", "(c) both in workers"]
    for k, (label, seconds) in enumerate(zip(labels, times, strict=True)):
        ratio = seconds / times[0]
        over = f"{(seconds - times[0]) / calls[k] * 1e6:.1f}" if k else ""
        met = f"<= 1.5 x: {'met' if ratio <= 1.5 else 'NOT met'}" if k else ""
        rows.append((label, f"{seconds:.3f}", over, f"{ratio:.2f} x", met))
    rows.append(("same debates", "yes" if same else "NO", "", "", ""))
    print_table(rows)


if __name__ == "__main__":
    main()
