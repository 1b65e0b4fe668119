"""Theorem 6.2 executable on small instances (issue 25, item 7): :mod:`debatekit.analysis.stackelberg`
and ``debatekit stackelberg``.

The instance is the smallest stable decomposition: one round whose query is the majority of three
judged pieces of evidence (q = 3, d = 1, no proof bits), with evidence 111 or 000 stable at
ε = 0.05 (sup|Δ| = 3ε² - 2ε³ < ε/2) and 110 not (sup|Δ| ≈ 2ε)."""

from __future__ import annotations

import io
import itertools
import json
import math

import numpy as np
import pytest
from rich.console import Console

from debatekit.analysis import stackelberg as st
from debatekit.analysis.stability import survey
from debatekit.cli.main import main
from debatekit.cli.stackelberg_cmd import table
from debatekit.ledger import Role
from debatekit.machine.decomposition import Decomposition, Query
from debatekit.players.base import Seat
from debatekit.players.prover_estimator import STRATEGIES
from debatekit.protocols.prover_estimator import HonestAlice, expected_rewards

EPS = 0.05
BOBS = STRATEGIES[Role.BOB]
HONEST, WRONG = st.Plan(1, st.Belief.TRUTH, st.Push.RULE_13), st.Plan(0, st.Belief.TRUTH, st.Push.RULE_13)
UP, DOWN = st.Plan(1, st.Belief.TRUTH, st.Push.UP), st.Plan(0, st.Belief.TRUTH, st.Push.DOWN)


class Majority3(Decomposition):
    """M_D = the majority of three judged evidence bits; level-0 queries (0, i) name no proof bits."""

    depth, width = 1, 3

    def __init__(self, evidence: tuple[int, int, int]):
        self.evidence = evidence

    def root(self) -> Query:
        return (1, 0)

    def split(self, query: Query, level: int) -> tuple[Query, ...]:
        return ((0, 0), (0, 1), (0, 2))

    def combine(self, query: Query, level: int, answers: tuple[int, ...]) -> int:
        return int(sum(answers) >= 2)

    def leaf(self, query: Query) -> tuple[int, ...]:
        return ()

    def judge(self, query: Query, bits: tuple[int, ...]) -> float:
        return float(self.evidence[query[1]])  # type: ignore[index]

    def proof(self, j: int) -> int:
        raise IndexError(j)

    def truth(self, query: Query, level: int) -> float:
        return float(self.evidence[query[1]]) if level == 0 else float(sum(self.evidence) >= 2)  # type: ignore[index]


def game(*evidence: tuple[int, int, int]) -> st.Game:
    cases = tuple(st.case(1 / len(evidence), Majority3(e), "".join(map(str, e))) for e in evidence)
    return st.Game(cases, st.theorem_rules(EPS, 1))


def test_exact_values_are_the_hand_computed_ones() -> None:
    """Against the shifted estimator (every probability 1 - ε on evidence 111), "claim 0, A^k = -1,
    recurse on the highest estimate" earns r²·P[ẑ = 0] = r²ε initially, -r·(P[Maj = 1] - (1 - ε))
    in round 1 and -(1 - (1 - ε)) = -ε in round 0; staying silent with the right claim earns
    r²(1 - ε); against the truthful estimator every round pays 0, so A earns r²·1(A(x) = L(x))."""
    g = game((1, 1, 1))
    r = g.rules.r
    majority = (1 - EPS) ** 3 + 3 * (1 - EPS) ** 2 * EPS
    down, silent, honest, wrong = st.pure_strategies(
        1, (DOWN, st.Plan(1, st.Belief.TRUTH, st.Push.SILENT), HONEST, WRONG)
    )
    assert g.value(0, down, BOBS["shifted"]) == pytest.approx(r * r * EPS - r * (majority - (1 - EPS)) - EPS, rel=1e-12)
    assert g.value(0, silent, BOBS["shifted"]) == pytest.approx(r * r * (1 - EPS), rel=1e-12)
    assert g.value(0, honest, BOBS["omniscient"]) == pytest.approx(r * r, rel=1e-12)
    assert g.value(0, wrong, BOBS["omniscient"]) == 0.0
    assert honest.honest and not wrong.honest and not down.honest


def test_the_honest_plan_plays_as_lemma_a5_s_a() -> None:
    """The plan declared honest is :class:`HonestAlice`: the same exact value against any estimator."""
    g = game((1, 1, 1))
    (plan,) = st.pure_strategies(1, (HONEST,))
    seat = Seat(g.cases[0].instance, Role.ALICE, np.random.default_rng(0), None, g.rules)
    for b in ("shifted", "constant", "inverted"):
        lemma_a5 = expected_rewards(g.cases[0].decomposition, HonestAlice(g.cases[0].decomposition, g.rules),
                                    BOBS[b].factory(seat), g.rules).sum()  # fmt: skip
        assert g.value(0, plan, BOBS[b]) == pytest.approx(lemma_a5, abs=1e-15)


def brute_force(g: st.Game, plans: tuple[st.Plan, ...], bobs: tuple[str, ...]) -> tuple[float, float, float | None]:
    """The leader's best payoff, its P[A(x) = L(x)], and the best payoff with P ≤ 1 - 4ε, by an
    enumeration of its own: players built here, values from expected_rewards, B's minimum per input."""
    per_input = []
    for c in g.cases:
        D, truth = c.decomposition, int(c.instance.truth)
        rows = []
        for a in st.pure_strategies(truth, plans):
            alice = a.factory(Seat(c.instance, Role.ALICE, np.random.default_rng(0), None, g.rules))
            values = []
            for name in bobs:
                seat = Seat(c.instance, Role.BOB, np.random.default_rng(0), None, g.rules, a)
                values.append(float(expected_rewards(D, alice, BOBS[name].factory(seat), g.rules).sum()))
            rows.append((min(values), float(alice.claim() == truth)))
        per_input.append(rows)
    best, violator = (-math.inf, 0.0), None
    for profile in itertools.product(*per_input):
        payoff = math.fsum(c.weight * v for c, (v, _) in zip(g.cases, profile, strict=True))
        accuracy = math.fsum(c.weight * ok for c, (_, ok) in zip(g.cases, profile, strict=True))
        if payoff > best[0]:
            best = (payoff, accuracy)
        if accuracy <= 1 - 4 * EPS:
            violator = payoff if violator is None else max(violator, payoff)
    return best[0], best[1], violator


PLANS = (WRONG, DOWN, st.Plan(1, st.Belief.CLAIM, st.Push.RULE_13), UP, HONEST)
CHEAP = ("omniscient", "shifted", "constant")


def test_exhaustive_search_is_an_independent_enumeration_s_optimum() -> None:
    g = game((1, 1, 1), (0, 0, 0))
    found = st.exhaustive(g, st.profiles(st.space(g, PLANS)), st.best_of(*(BOBS[b] for b in CHEAP)))
    payoff, accuracy, violator = brute_force(g, PLANS, CHEAP)
    assert found.search is st.Search.EXHAUSTIVE and found.searched == len(PLANS) ** 2
    assert found.leader_payoff == pytest.approx(payoff, rel=1e-12) and found.follower_payoff == -found.leader_payoff
    assert found.accuracy == accuracy and found.violator_payoff == pytest.approx(violator, rel=1e-12)
    assert found.bound == pytest.approx(1 - 4 * EPS) and found.holds == (accuracy > 1 - 4 * EPS)
    assert [b.name for b in found.reply] == [
        min(CHEAP, key=lambda b: g.value(i, a, BOBS[b])) for i, a in enumerate(found.leader)
    ]


def test_iterated_search_reaches_the_optimum_and_counts_its_evaluations() -> None:
    """B responds on each input alone, so one sweep from a wrong start reaches the optimum and a
    second confirms it: 2 sweeps × 2 inputs × 5 plans."""
    g = game((1, 1, 1), (0, 0, 0))
    follower = st.best_of(*(BOBS[b] for b in CHEAP))
    found = st.iterated(g, st.space(g, PLANS), follower)
    assert found.search is st.Search.ITERATED and found.searched == 2 * 2 * len(PLANS)
    assert found.leader_payoff == pytest.approx(brute_force(g, PLANS, CHEAP)[0], rel=1e-12)


def test_theorem_6_2_holds_where_its_hypotheses_hold() -> None:
    """Algorithm 1 (Lemma A.4's B) and the truthful estimator follow; A leads over four plans
    with Lemma A.5's among them, on two stable inputs: every hypothesis is checked and holds, and
    P[A(x) = L(x)] > 1 - 4ε. Every lying leader earns at most Lemma A.4's r^(d+1)·P + (2d+1)δ."""
    g = game((1, 1, 1), (0, 0, 0))
    bobs = (BOBS["honest"], BOBS["omniscient"])
    check = st.check_theorem(g, bobs, (WRONG, HONEST, UP, DOWN))
    hyp = check.hypotheses
    assert (hyp.stable, hyp.provable, hyp.estimator, hyp.exact, hyp.hold) == (True, True, True, True, True)
    assert hyp.delta is not None and 0 < hyp.delta <= hyp.delta_needed == EPS * g.rules.r**2 / 3
    assert check.equilibrium.accuracy > 1 - 4 * EPS and check.equilibrium.holds and check.verdict is True
    assert check.equilibrium.leader_payoff >= check.honest_floor
    assert check.equilibrium.violator_payoff is not None
    assert check.equilibrium.violator_payoff < g.rules.r**2 * 0.5 + 3 * hyp.delta_needed


def test_without_lemma_a4_s_estimator_there_is_no_promise() -> None:
    """Against the constant estimator every claim earns the same, so an equilibrium may lie (ties go
    to the first strategy searched: here the wrong claim on 111). The inequality fails, and the check
    says the theorem promised nothing (its follower lacks Lemma A.4's B) rather than calling it a bug."""
    g = game((1, 1, 1), (0, 0, 0))
    check = st.check_theorem(g, (BOBS["constant"],), (WRONG, HONEST))
    assert check.equilibrium.accuracy == 0.5 and not check.equilibrium.holds
    assert check.hypotheses.estimator is False and check.hypotheses.hold is False and check.verdict is None


def test_an_unstable_input_voids_the_hypotheses() -> None:
    g = game((1, 1, 0))
    check = st.check_theorem(g, (BOBS["omniscient"],), (HONEST, WRONG), search=st.Search.ITERATED)
    assert check.hypotheses.stable is False and check.hypotheses.hold is False and check.verdict is None


def test_a_game_checks_its_inputs() -> None:
    with pytest.raises(ValueError, match="sum to 1"):
        st.Game((st.case(0.5, Majority3((1, 1, 1))),), st.theorem_rules(EPS, 1))
    g = game((1, 1, 1), (0, 0, 0))
    with pytest.raises(ValueError, match="one A strategy per input"):
        st.exhaustive(g, [st.pure_strategies(1, (HONEST,))], st.best_of(BOBS["omniscient"]))
    with pytest.raises(ValueError, match="empty"):
        st.exhaustive(g, [], st.best_of(BOBS["omniscient"]))


# -- the command ------------------------------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["stackelberg", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_json_reports_the_search_and_the_bound(capsys: pytest.CaptureFixture[str]) -> None:
    """Iterated search over 10 plans on each of the 4 inputs: 2 sweeps × 40 evaluations; the
    truthful estimator alone is not Lemma A.4's B, so the hypotheses do not hold."""
    argv = ("--fan-in", "2", "--depth", "1", "--epsilon", "0.05", "--bob", "omniscient", "--search", "iterated")
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    data = json.loads(out)
    (row,) = data["rows"]
    assert (data["decomposition"], data["width"], data["depth"]) == ("EvidenceMajority", 6, 1)
    assert row["inputs"] == ["x=00", "x=01", "x=10", "x=11"]
    assert (row["search"], row["searched"], row["accuracy"], row["holds"]) == ("iterated", 80, 1.0, True)
    assert row["bound"] == pytest.approx(0.8) and row["follower_payoff"] == -row["leader_payoff"]
    assert row["hypotheses"]["stable"] is True and row["hypotheses"]["hold"] is False and row["verdict"] is None
    screen = io.StringIO()
    Console(file=screen, width=80).print(table(data))
    lines = screen.getvalue().splitlines()
    assert max(map(len, lines)) <= 80 and "…" not in screen.getvalue() and "iterated 80" in screen.getvalue()


def test_one_judgement_is_a_stable_majority_tree() -> None:
    """The command's default instance: κ = 3, d = 2, evidence all x; M_D is the majority at every
    node, L(x) = x, and (ε, 1/2)-stable at ε = 0.1 (sup|Δ| = 3ε² - 2ε³ = 0.028 < 0.05) but not at
    ε = 0.2 (0.104 > 0.1)."""
    g = st.evidence_majority_game(0.1, depth=2, kappa=3, fan_in=1)
    assert [c.instance.problem for c in g.cases] == ["x=0", "x=1"]
    D = g.cases[1].decomposition
    assert (D.depth, D.width, D.root(), D.split((1, 2), 1)) == (2, 3, (2, 0), ((0, 6), (0, 7), (0, 8)))
    assert [g.cases[x].instance.truth for x in (0, 1)] == [False, True]
    assert [D.combine(D.root(), 2, z) for z in ((1, 1, 0), (0, 0, 1))] == [1, 0]
    tree = st.OneJudgement(np.array([1, 1, 0, 0, 0, 1, 1, 0, 1]), 3, 0.1)
    assert [tree.truth((1, i), 1) for i in range(3)] == [1.0, 0.0, 1.0] and tree.truth(tree.root(), 2) == 1.0
    assert survey(D, 0.1, 0.5, 100, np.random.default_rng(0)).worst.sup_change == pytest.approx(3 * 0.01 - 2 * 0.001)
    assert survey(D, 0.2, 0.5, 100, np.random.default_rng(0)).stable is False
    with pytest.raises(ValueError, match="odd"):
        st.OneJudgement(np.ones(4, dtype=np.uint8), 2, 0.1)


@pytest.mark.parametrize(
    "argv",
    [["--epsilon", "0.5"], ["--epsilon", "0.05", "--epsilon", "nan"], ["--bob", "sampling"], ["--kappa", "2"],
     ["--depth", "0"], ["--depth", "5"],
     ["--fan-in", "0"], ["--fan-in", "2", "--depth", "3"], ["--kappa", "11"], ["--max-profiles", "0"],
     ["--search", "best"]],
)  # fmt: skip
def test_cli_mistakes_are_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.startswith("debatekit: error: ") and err.count("\n") == 1, (code, err)
