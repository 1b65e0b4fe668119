"""Prover-estimator debate: the cost of a user's A beside the built-in A, through ``debatekit.run``.

A user's A (``module:attr``) plays one debate per call with every move in a worker thread under the
move time limit; the built-in A plays blocks of trusted debates inline. Her proof is committed once per
run (``CommittedProof``: batched requests, so a handful of calls, not one per bit). Measured side by
side in one run, on one instance (``obfuscated-primality``, ``--truth``), for each B in ``--bob``:

(a) the built-in honest A, ``--trials`` debates;
(b) :class:`UserHonest` below, the same strategy as a user's ``module:attr``, the same debates;
and the ratio (b)/(a), with the number of batched proof requests the run made of A. The two must
agree debate for debate (same payoff mean); the script exits 1 if not, and asserts nothing about time.

    python benchmarks/pe_speed.py                      # size 12, 50 debates, B omniscient and honest
    python benchmarks/pe_speed.py --size 24 --bob omniscient   # the default size
    python benchmarks/pe_speed.py --q 8 --trials 5 --bob honest
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import debatekit
from debatekit.analysis.montecarlo import make_instance
from debatekit.players.base import Seat
from debatekit.problems import PROBLEMS
from debatekit.protocols.prover_estimator import HonestAlice, decomposition_of, rules_of

REQUESTS: list[int] = []
"""Batched proof requests made of :class:`UserHonest` copies in this process."""


class UserHonest(HonestAlice):
    """Lemma A.5's honest A written as a user would: a ``module:attr`` factory (untrusted path)."""

    def __init__(self, seat: Seat):
        super().__init__(decomposition_of(seat.instance), rules_of(seat))

    def proof(self, leaves: tuple[int, ...]):  # type: ignore[no-untyped-def]
        REQUESTS.append(len(leaves))
        return super().proof(leaves)


def timed(alice: str, bob: str, args: argparse.Namespace) -> tuple[float, float]:
    start = time.perf_counter()
    result = debatekit.run(
        "prover-estimator", problem="obfuscated-primality", size=args.size, truth=args.truth,
        params={"q": args.q}, alice=alice, bob=bob, trials=args.trials, seed=args.seed,
    )  # fmt: skip
    return time.perf_counter() - start, result.to_json()["payoff_mean"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=12)
    parser.add_argument("--q", type=int, default=4)
    parser.add_argument("--truth", default="yes", choices=["yes", "no"])
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bob", nargs="+", default=["omniscient", "honest"])
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    import pe_speed  # the module the run imports the user's A from (this script runs as __main__)

    problem = PROBLEMS["obfuscated-primality"]
    D = decomposition_of(make_instance(problem, args.size, args.truth == "yes", args.seed, problem.params(q=args.q)))
    print(f"obfuscated-primality size {args.size}, q = {D.width}, d = {D.depth}, m = {D.proof_length} proof bits, "
          f"{args.trials} debates, truth {args.truth}")  # fmt: skip
    print(f"{'B':<12} {'built-in A (s)':>15} {'user A (s)':>11} {'ratio':>7} {'proof requests':>15}")
    ok = True
    for bob in args.bob:
        builtin, mean = timed("honest", bob, args)
        pe_speed.REQUESTS.clear()
        user, user_mean = timed("pe_speed:UserHonest", bob, args)
        ok &= abs(user_mean - mean) <= 1e-12 * max(1.0, abs(mean))
        print(f"{bob:<12} {builtin:>15.2f} {user:>11.2f} {user / builtin:>7.2f} {len(pe_speed.REQUESTS):>15}")
    if not ok:
        print("the user's A and the built-in A disagree on the mean payoff", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
