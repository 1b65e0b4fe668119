"""The main job: every protocol on built-in problems, honest against every built-in adversary,
measured against its theorem; bits read as T grows; exact values on small instances; and the
prover-estimator paper's experiments (:mod:`debatekit.analysis.obfuscation`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from debatekit.analysis import obfuscation
from debatekit.analysis.exact import Solution, solve
from debatekit.analysis.montecarlo import make_instance, run
from debatekit.analysis.obfuscation import ChallengerRate, GapPoint, PayoffRow
from debatekit.engine.interrupts import Interrupted
from debatekit.ledger import Role
from debatekit.params import DEFAULTS, Settings
from debatekit.players.base import Strategy
from debatekit.problems import PROBLEMS, Instance
from debatekit.problems.stochastic import JUDGE_YES
from debatekit.protocols.registry import PROTOCOLS
from debatekit.protocols.spec import ProtocolSpec, honest_role
from debatekit.protocols.stochastic.params import Constants
from debatekit.protocols.stochastic.rules import rules_for


@dataclass(frozen=True)
class Row:
    protocol: str
    constants: Constants | None
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
    completeness: float
    soundness: float
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
class LipschitzPoint:
    """What a non-Lipschitz computation costs: xor-of-judgements of n judgements."""

    n: int
    T: int
    K: float
    distance_from_half: float
    lean_verifier_queries: int
    paper_verifier_queries: int


@dataclass(frozen=True)
class DemoResult:
    rows: list[Row]
    scaling: list[ScalePoint]
    exact: list[Solution]
    xor: list[LipschitzPoint]
    payoffs: list[PayoffRow]
    gap: list[GapPoint]
    challengers: list[ChallengerRate]
    exact_runs: list[Row]
    """Every adversary by Monte Carlo on the exact cases' instances, beside their exact values."""
    seed: int
    interrupted: bool = False
    """A signal stopped the demo: these are the parts it finished."""

    @property
    def holds(self) -> bool:
        return (
            all(r.holds for r in self.rows + self.exact_runs)
            and all(s.value >= s.guarantee for s in self.exact)
            and all(p.holds is not False for p in self.payoffs)
        )

    def summary(self, report: str) -> str:
        """One line: the guarantees checked, held and failed (as :attr:`holds` counts them: every
        Monte Carlo row, every exact search, every payoff row with a promise), the exact and
        prover-estimator headlines, and where the ``report`` is."""
        checks = [r.holds for r in self.rows + self.exact_runs] + [s.value >= s.guarantee for s in self.exact]
        checks += [p.holds is True for p in self.payoffs if p.holds is not None]
        exact = "none finished"
        if self.exact:
            low = min(self.exact, key=lambda s: s.value)  # the honest side's worst case
            met = sum(s.value >= s.guarantee for s in self.exact)
            exact = (
                f"{met} of {len(self.exact)} at their guarantee (lowest {low.value:.3f}: {low.protocol}, {low.problem})"
            )
        estimator = [p.holds for p in self.payoffs if p.protocol == "prover-estimator"]
        promised = [held for held in estimator if held is not None]
        stopped = "INTERRUPTED: " if self.interrupted else ""
        return (f"{stopped}{len(checks)} guarantees checked: {sum(checks)} held, {len(checks) - sum(checks)} failed; "
                f"exact: {exact}; prover-estimator: {sum(promised)} of {len(promised)} promised bounds hold "
                f"({len(estimator) - len(promised)} rows no promise); report: {report}")  # fmt: skip


CASES = {  # protocol, problem, constants: (quick size, full size)
    ("cross-exam", "parity", None): (256, 1024),
    ("cross-exam", "majority", None): (256, 1024),
    ("cross-exam", "sat-witness", None): (12, 24),
    ("cross-exam", "approval-majority", None): (64, 256),
    ("bisection", "parity", None): (32, 128),
    ("bisection", "palindrome", None): (16, 48),
    ("stochastic", "noisy-majority", Constants.lean): (100, 1000),
    ("stochastic", "noisy-majority", Constants.paper): (100, 1000),
    ("stochastic", "noisy-majority", Constants.planned): (100, 1000),
    ("kw", "parity", None): (256, 1024),
    ("kw", "addition-overflow", None): (64, 256),
    ("circuit-cross-exam", "parity", None): (256, 1024),
}
SCALING = {
    ("cross-exam", "parity"): ([2**k for k in range(4, 13, 2)], [2**k for k in range(4, 17, 2)]),
    ("bisection", "palindrome"): ([4, 8, 16, 32], [4, 8, 16, 32, 64, 128]),
    ("kw", "parity"): ([2**k for k in range(4, 13, 2)], [2**k for k in range(4, 17, 4)]),
    ("circuit-cross-exam", "parity"): ([2**k for k in range(4, 13, 2)], [2**k for k in range(4, 17, 4)]),
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
    rows = sum(
        len(PROTOCOLS[p].strategies[r]) * _trials(quick, PROTOCOLS[p])
        for p, _, _ in CASES
        for r in (Role.ALICE, Role.BOB)
    ) + sum(
        len(PROTOCOLS[p].strategies[honest_role(PROTOCOLS[p], truth).opponent]) * _trials(quick, PROTOCOLS[p])
        for p, _, _, truth in EXACT
    )
    scale = sum(
        len(sizes[0 if quick else 1]) * sum(len(PROTOCOLS[p].strategies[r]) for r in (Role.ALICE, Role.BOB))
        for (p, _), sizes in SCALING.items()
    )
    return rows + scale * _scale_trials(quick) + obfuscation.planned(quick) + _challenger_debates(quick)


def _challenger_debates(quick: bool) -> int:
    sizes = obfuscation.CHALLENGER_SIZES[0 if quick else 1]
    return len(sizes) * len(obfuscation.BOUNDED_CHALLENGERS) * obfuscation.debates_for(quick)


def _trials(quick: bool, spec: ProtocolSpec) -> int:
    """Debates per row: more where the protocol plays them all at once, and its promise is statistical."""
    if spec.batch is not None:
        return 200 if quick else 1000
    return 20 if quick else 100


def _scale_trials(quick: bool) -> int:
    return 10 if quick else 20


def nothing(seed: int) -> DemoResult:
    """A demo with no part finished yet."""
    return DemoResult([], [], [], [], [], [], [], [], seed)


def run_demo(
    quick: bool, seed: int, tick: Callable[[int], None] = lambda k: None, settings: Settings = DEFAULTS
) -> DemoResult:
    """Every part of the demo; ``settings`` (``-P``) reach the prover-estimator paper's Monte Carlo
    experiments (:func:`~debatekit.analysis.obfuscation.payoff_rows`), the only ones whose problems
    and protocols declare parameters; the exact reward-gap sweep keeps its own (q, ε) families. A
    signal's :class:`~debatekit.engine.interrupts.Interrupted` carries the rows and parts finished
    (``result``, marked ``interrupted``)."""
    result = nothing(seed)
    try:
        _play(result, quick, tick, settings)
    except Interrupted as stop:
        stop.result = replace(result, interrupted=True)
        raise
    return result


def _play(result: DemoResult, quick: bool, tick: Callable[[int], None], settings: Settings) -> None:
    """Play the demo into ``result``'s lists, each row or part as it finishes."""
    seed, scale_trials = result.seed, _scale_trials(quick)
    done = 0

    def count(k: int) -> None:
        tick(done + k)

    for (name, problem, constants), sizes in CASES.items():
        spec, size = PROTOCOLS[name], sizes[0 if quick else 1]
        if constants is not None:
            spec = spec.with_params(replace(spec.params, constants=constants))
        for truth in (True, False):
            case = make_instance(PROBLEMS[problem], size, truth, seed)
            for adversary in spec.strategies[honest_role(spec, truth).opponent].values():
                result.rows.append(_row(spec, constants, problem, case, adversary, _trials(quick, spec), seed, count))
                done += _trials(quick, spec)
    for name, problem, size, truth in EXACT:
        spec, case = PROTOCOLS[name], make_instance(PROBLEMS[problem], size, truth, seed)
        for adversary in spec.strategies[honest_role(spec, truth).opponent].values():
            result.exact_runs.append(_row(spec, None, problem, case, adversary, _trials(quick, spec), seed, count))
            done += _trials(quick, spec)
    for (name, problem), sizes in SCALING.items():
        spec = PROTOCOLS[name]
        for size in sizes[0 if quick else 1]:
            worst, T, bound = 0, 0, 0
            for truth in (True, False):
                case = make_instance(PROBLEMS[problem], size, truth, seed)
                honest = honest_role(spec, truth)
                for adversary in spec.strategies[honest.opponent].values():
                    players = {honest: spec.honest(honest), honest.opponent: adversary}
                    r = run(spec, case, players[Role.ALICE], players[Role.BOB], scale_trials, seed, count)
                    done += scale_trials
                    worst, T, bound = max(worst, r.verifier_bits_read_max), r.T, r.guarantee.bits_read
            result.scaling.append(ScalePoint(name, problem, size, T, worst, bound))
    for name, problem, size, truth in EXACT:
        result.exact.append(solve(PROTOCOLS[name], make_instance(PROBLEMS[problem], size, truth, seed)))
    for payoff in obfuscation.payoff_rows(quick, seed, count, settings):
        result.payoffs.append(payoff)
    done += obfuscation.planned(quick)
    sizes = obfuscation.CHALLENGER_SIZES[0 if quick else 1]
    for rate in obfuscation.challenger_rates(sizes, obfuscation.debates_for(quick), seed, count, settings):
        result.challengers.append(rate)
    result.xor.extend(_xor_point(n) for n in XOR_SIZES)
    result.gap.extend(obfuscation.gap_points(seed))


def _row(
    spec: ProtocolSpec,
    constants: Constants | None,
    problem: str,
    case: Instance,
    adversary: Strategy,
    trials: int,
    seed: int,
    count: Callable[[int], None],
) -> Row:
    """The honest side against ``adversary`` on ``case``, checked against the theorem."""
    honest = honest_role(spec, case.truth)
    players = {honest: spec.honest(honest), honest.opponent: adversary}
    r = run(spec, case, players[Role.ALICE], players[Role.BOB], trials, seed, count)
    g = r.guarantee
    consistent = r.accept_ci[1] >= g.completeness if case.truth else r.accept_ci[0] <= g.soundness
    holds = consistent and r.verifier_queries_max <= g.verifier_queries and r.verifier_bits_read_max <= g.bits_read
    return Row(spec.name, constants, problem, case.size, r.T, r.truth, f"{adversary.role.value}:{adversary.name}",
               trials, r.honest_win_rate, r.accept_rate, r.accept_ci, r.verifier_queries_max, g.verifier_queries,
               r.verifier_bits_read_max, g.bits_read, g.completeness, g.soundness, holds)  # fmt: skip


XOR_SIZES = (1, 5, 9, 13, 17, 21, 25)


def _xor_point(n: int) -> LipschitzPoint:
    """K, how far P[M = 1] is from 1/2, and the two constant choices' verifier budgets."""
    case = make_instance(PROBLEMS["xor-of-judgements"], n, True, 0)
    steps, k = case.machine.length, float(case.lipschitz)  # type: ignore[union-attr]
    distance = abs(1 - 2 * JUDGE_YES) ** n / 2  # |P[XOR = 1] - 1/2|
    return LipschitzPoint(
        n,
        steps,
        k,
        distance,
        rules_for(Constants.lean, k, steps).vera_samples,
        rules_for(Constants.paper, k, steps).vera_samples,
    )
