"""The cost of the process boundary for stochastic debate's batched players (issue 20): a user's
batched players in their workers against the same players inline.

Both sides play honest Alice and honest Bob (``debatekit.protocols.stochastic.rules:HonestAlice``,
``:HonestBob``) on ``noisy-majority`` of size T, ``--trials`` debates in blocks of the protocol's
batch, through ``montecarlo.run``: inline as the trusted built-ins (the batch engine's reference
path), and in workers, where each call carries the step's live rows when they changed and the
estimate its player made at its last call, answered ahead and taken when the player makes it again
(an estimate it asks otherwise is a round trip). Both do the same debates: the script checks that
their acceptance and query counts are equal.
Each side is the median of ``--repeat`` runs (``time.perf_counter``).

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
from timing import median_time, print_table

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

        def isolated() -> object:
            return run(spec, instance, alice.strategy, bob.strategy, args.trials, 0)

        t_inline, ref = median_time(inline, args.repeat)
        t_worker, got = median_time(isolated, args.repeat)
    same = (ref.accept_rate, ref.alice_queries_mean, ref.bob_queries_mean) == (  # type: ignore[attr-defined]
        got.accept_rate, got.alice_queries_mean, got.bob_queries_mean)  # type: ignore[attr-defined]  # fmt: skip
    ratio = t_worker / t_inline
    print(f"stochastic debate, noisy-majority, T = {ref.T:,}, {args.trials} debates, honest against honest")  # type: ignore[attr-defined]
    print_table([
        ("measure", "seconds", "target"),
        ("(a) inline (trusted built-ins)", f"{t_inline:.3f}", ""),
        ("(b) in workers (the same players by module:attr)", f"{t_worker:.3f}", ""),
        ("     ratio (b)/(a)", f"{ratio:.2f} x", f"<= 1.5 x: {'met' if ratio <= 1.5 else 'NOT met'}"),
        ("     same debates", "yes" if same else "NO", ""),
    ])  # fmt: skip


if __name__ == "__main__":
    main()
