"""The main job: every protocol on built-in problems, honest against every built-in adversary,
measured against its theorem; bits read as T grows; exact values on small instances."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from debatekit.analysis.exact import Solution, solve
from debatekit.analysis.montecarlo import make_instance, run
from debatekit.catalog import PROTOCOLS
from debatekit.ledger import Role
from debatekit.problems import PROBLEMS


@dataclass(frozen=True)
class Row:
    protocol: str
    problem: str
    size: int
    T: int
    truth: str
    adversary: str
    trials: int
    honest_win_rate: float
    accept_rate: float
    accept_ci: tuple[float, float]
    verifier_queries_max: int
    queries_bound: int
    verifier_bits_read_max: int
    bits_bound: int
    holds: bool


@dataclass(frozen=True)
class ScalePoint:
    protocol: str
    problem: str
    size: int
    T: int
    verifier_bits_read_max: int
    bits_bound: int


@dataclass(frozen=True)
class DemoResult:
    rows: list[Row]
    scaling: list[ScalePoint]
    exact: list[Solution]

    @property
    def holds(self) -> bool:
        return all(r.holds for r in self.rows) and all(s.value >= s.guarantee for s in self.exact)


CASES = {  # protocol, problem: (quick size, full size)
    ("cross-exam", "parity"): (256, 1024),
    ("cross-exam", "majority"): (256, 1024),
    ("cross-exam", "sat-witness"): (12, 24),
    ("cross-exam", "approval-majority"): (64, 256),
    ("bisection", "parity"): (32, 128),
    ("bisection", "palindrome"): (16, 48),
}
SCALING = {
    ("cross-exam", "parity"): ([2**k for k in range(4, 13, 2)], [2**k for k in range(4, 17, 2)]),
    ("bisection", "palindrome"): ([4, 8, 16, 32], [4, 8, 16, 32, 64, 128]),
}
EXACT = [  # protocol, problem, size, truth: small enough to search every adversary move in seconds
    ("cross-exam", "parity", 4, True),
    ("cross-exam", "parity", 4, False),
    ("cross-exam", "majority", 3, True),
    ("cross-exam", "majority", 3, False),
    ("cross-exam", "sat-witness", 3, True),
    ("bisection", "parity", 1, True),
    ("bisection", "parity", 1, False),
    ("bisection", "palindrome", 2, True),
]


def plan(quick: bool) -> int:
    """How many debates the demo will play (for a progress bar)."""
    trials, _ = _trials(quick)
    rows = sum(len(PROTOCOLS[p].strategies[r]) for p, _ in CASES for r in (Role.ALICE, Role.BOB)) * trials
    return rows + sum(len(sizes[0 if quick else 1]) for sizes in SCALING.values()) * 2 * _trials(quick)[1]


def _trials(quick: bool) -> tuple[int, int]:
    return (20, 10) if quick else (100, 20)


def run_demo(quick: bool, seed: int, tick: Callable[[int], None] = lambda k: None) -> DemoResult:
    trials, scale_trials = _trials(quick)
    done = 0

    def count(k: int) -> None:
        nonlocal done
        done += 1
        tick(done)

    rows = []
    for (name, problem), sizes in CASES.items():
        spec, size = PROTOCOLS[name], sizes[0 if quick else 1]
        for truth in (True, False):
            case = make_instance(PROBLEMS[problem], size, truth, seed)
            honest = Role.ALICE if truth else Role.BOB
            for adversary in spec.strategies[honest.opponent].values():
                players = {honest: spec.strategies[honest]["honest"], honest.opponent: adversary}
                r = run(spec, case, players[Role.ALICE], players[Role.BOB], trials, seed, count)
                g = r.guarantee
                consistent = r.accept_ci[1] >= g.completeness if truth else r.accept_ci[0] <= g.soundness
                rows.append(
                    Row(
                        name,
                        problem,
                        size,
                        r.T,
                        r.truth,
                        f"{adversary.role.value}:{adversary.name}",
                        trials,
                        r.honest_win_rate,
                        r.accept_rate,
                        r.accept_ci,
                        r.verifier_queries_max,
                        g.verifier_queries,
                        r.verifier_bits_read_max,
                        g.bits_read,
                        consistent
                        and r.verifier_queries_max <= g.verifier_queries
                        and r.verifier_bits_read_max <= g.bits_read,
                    )
                )
    scaling = []
    for (name, problem), sizes in SCALING.items():
        spec = PROTOCOLS[name]
        for size in sizes[0 if quick else 1]:
            worst, T, bound = 0, 0, 0
            for truth, alice, bob in ((True, "honest", spec_default_bob(name)), (False, "lie-step", "honest")):
                case = make_instance(PROBLEMS[problem], size, truth, seed)
                r = run(
                    spec,
                    case,
                    spec.strategies[Role.ALICE][alice],
                    spec.strategies[Role.BOB][bob],
                    scale_trials,
                    seed,
                    count,
                )
                worst, T, bound = max(worst, r.verifier_bits_read_max), r.T, r.guarantee.bits_read
            scaling.append(ScalePoint(name, problem, size, T, worst, bound))
    exact = [
        solve(PROTOCOLS[name], make_instance(PROBLEMS[problem], size, truth, seed))
        for name, problem, size, truth in EXACT
    ]
    return DemoResult(rows, scaling, exact)


def spec_default_bob(protocol: str) -> str:
    """The Bob that makes the verifier read the most: a random challenge or a random half."""
    return "point-random" if protocol == "cross-exam" else "random"
