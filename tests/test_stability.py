"""(ε, ρ)-stability (Definition 5.3): the exact supremum against brute force over the corners of the
box and against closed forms, the automaton method against enumeration, the survey of a whole
decomposition, and the ``debatekit stability`` command.

Closed forms used below (p_i the same for every i and prefix):

* AND of q answers at p = 1: the path to 1 is all ones, and each step keeps it with q_i ≥ 1 − ε,
  so Vmin = (1 − ε)^q, Vmax = P_p = 1 and sup|Δ| = 1 − (1 − ε)^q. Since that is ≥ ε > ρε for
  every q ≥ 1 and ρ < 1, AND at its correct answers is never stable.
* AND at p = 0: P_p = 0 and Vmax = ε^q (every step moved up by ε), so stable iff ε^(q−1) < ρ.
* Majority of 3 at p = 1 (by hand, backward): V(11) = 1, V(10) = V(01) = min q_3 = 1 − ε, V(00) = 0;
  V(1) = (1 − ε)·1 + ε(1 − ε) = 1 − ε², V(0) = (1 − ε)²; Vmin = (1 − ε)(1 − ε²) + ε(1 − ε)²
  = (1 − ε)²(1 + 2ε) = P[Bin(3, 1 − ε) ≥ 2], so sup|Δ| = 3ε² − 2ε³ (stable iff 3ε − 2ε² < ρ).
* Majority of q (more than q/2 ones) at p = 1: the minimiser moves every q_i down (V is monotone),
  so sup|Δ| = P[Bin(q, ε) ≥ q − ⌊q/2⌋].
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable

import numpy as np
import pytest

from debatekit.analysis import stability
from debatekit.analysis.stability import StabilityError, check, sup_change, survey
from debatekit.cli.main import main
from debatekit.machine.circuit import parity_circuit
from debatekit.machine.decomposition import Automaton, Decomposition, Query, natural
from debatekit.problems import PROBLEMS, Instance, Problem

Conditional = Callable[[int, tuple[int, ...]], float]


class OneNode(Decomposition):
    """A depth-1 decomposition: one level-1 query whose M_D is ``f`` on q answers, with correct
    conditionals ``conditional`` and an optional automaton."""

    depth = 1

    def __init__(
        self,
        width: int,
        f: Callable[[tuple[int, ...]], int],
        conditional: Conditional,
        automaton: Automaton | None = None,
    ):
        self.width, self.f, self.cond, self.auto = width, f, conditional, automaton

    def root(self) -> Query:
        return "root"

    def split(self, query: Query, level: int) -> tuple[Query, ...]:
        return tuple(range(self.width))

    def combine(self, query: Query, level: int, answers: tuple[int, ...]) -> int:
        return self.f(answers)

    def conditional(self, query: Query, level: int, i: int, prefix: tuple[int, ...]) -> float:
        return self.cond(i, prefix)

    def automaton(self, query: Query, level: int) -> Automaton | None:
        return self.auto

    def leaf(self, query: Query) -> tuple[int, ...]:
        return ()

    def judge(self, query: Query, bits: tuple[int, ...]) -> float:
        return 1.0

    def proof(self, j: int) -> int:
        return 0

    def truth(self, query: Query, level: int) -> float:
        return 1.0


class Tree(Decomposition):
    """A depth-d, width-q majority tree; a query is its path of split indices. The correct answers
    of a node's split are all 1 when the node's path sums to an even number and 1/2 otherwise,
    so (for q = 3, ε = 0.1, ρ = 0.5) exactly the even nodes are stable. Records what it combines."""

    def __init__(self, depth: int, width: int):
        self.depth, self.width = depth, width
        self.seen: set[tuple[int, Query]] = set()

    def root(self) -> Query:
        return ()

    def split(self, query: Query, level: int) -> tuple[Query, ...]:
        return tuple((*query, i) for i in range(self.width))  # type: ignore[misc]

    def combine(self, query: Query, level: int, answers: tuple[int, ...]) -> int:
        self.seen.add((level, query))
        return int(2 * sum(answers) > self.width)

    def conditional(self, query: Query, level: int, i: int, prefix: tuple[int, ...]) -> float:
        return 1.0 if sum(query) % 2 == 0 else 0.5  # type: ignore[arg-type]

    def automaton(self, query: Query, level: int) -> Automaton:
        self.seen.add((level, query))
        return Automaton(0, lambda count, i, z: count + z, lambda count: int(2 * count > self.width))

    def leaf(self, query: Query) -> tuple[int, ...]:
        return ()

    def judge(self, query: Query, bits: tuple[int, ...]) -> float:
        return 1.0

    def proof(self, j: int) -> int:
        return 1

    def truth(self, query: Query, level: int) -> float:
        return 1.0


def prefixes(q: int) -> list[tuple[int, tuple[int, ...]]]:
    """Every (i, z_<i): the free values q_i(prefix) of Definition 5.3 (2^q − 1 of them)."""
    return [(i, prefix) for i in range(q) for prefix in itertools.product((0, 1), repeat=i)]


def accept(q: int, f: Callable[[tuple[int, ...]], int], cond: Conditional) -> float:
    """P_{z ~ cond}[f(z) = 1] by summing over all z."""
    total = 0.0
    for z in itertools.product((0, 1), repeat=q):
        weight = math.prod(cond(i, z[:i]) if z[i] else 1 - cond(i, z[:i]) for i in range(q))
        total += weight * f(z)
    return total


def brute_force(q: int, f: Callable[[tuple[int, ...]], int], p: Conditional, eps: float) -> float:
    """max |Δ| over all 2^(2^q − 1) corners, each q_i(prefix) set independently to an endpoint of
    [max(0, p − ε), min(1, p + ε)]."""
    keys = prefixes(q)
    base = accept(q, f, p)
    ends = [(max(0.0, p(i, z) - eps), min(1.0, p(i, z) + eps)) for i, z in keys]
    best = 0.0
    for corner in itertools.product((0, 1), repeat=len(keys)):
        values = {key: ends[j][c] for j, (key, c) in enumerate(zip(keys, corner, strict=True))}
        best = max(best, abs(accept(q, f, lambda i, z, v=values: v[(i, z)]) - base))
    return best


def random_case(rng: np.random.Generator, q: int) -> tuple[Callable[[tuple[int, ...]], int], Conditional]:
    """A random M_D on q answers and random conditionals (some at 0, 1 or near them, so that the
    box is clipped)."""
    table = {z: int(rng.integers(0, 2)) for z in itertools.product((0, 1), repeat=q)}
    pool = [0.0, 1.0, 0.03, 0.96, 0.5]
    cond = {
        key: float(rng.choice(pool)) if rng.random() < 0.4 else float(rng.random()) for key in prefixes(q)
    }  # fmt: skip
    return table.__getitem__, lambda i, z: cond[(i, z)]


# -- sup_change against brute force and closed forms -----------------------------------------


@pytest.mark.parametrize("seed", range(40))
def test_sup_change_equals_brute_force_over_all_corners(seed: int) -> None:
    rng = np.random.default_rng(seed)
    q = 1 + seed % 3
    f, p = random_case(rng, q)
    eps = float(rng.choice([0.01, 0.1, 0.25, 0.49]))
    decomposition = OneNode(q, f, p)
    exact = sup_change(decomposition, "root", 1, eps)
    assert exact == pytest.approx(brute_force(q, f, p, eps), abs=1e-12)
    # no point inside the box does better, and a bigger box never does worse
    keys, base = prefixes(q), accept(q, f, p)
    for _ in range(20):
        moved = {(i, z): float(np.clip(p(i, z) + rng.uniform(-eps, eps), 0, 1)) for i, z in keys}
        assert abs(accept(q, f, lambda i, z, m=moved: m[(i, z)]) - base) <= exact + 1e-12
    assert sup_change(decomposition, "root", 1, eps / 2) <= exact + 1e-12


@pytest.mark.parametrize("q", [1, 2, 3, 4, 5, 8])
@pytest.mark.parametrize("eps", [0.01, 0.1, 0.3])
def test_and_at_all_ones_moves_by_one_minus_one_minus_eps_to_the_q(q: int, eps: float) -> None:
    decomposition = OneNode(q, lambda z: int(all(z)), lambda i, z: 1.0)
    expected = 1 - (1 - eps) ** q
    assert sup_change(decomposition, "root", 1, eps) == pytest.approx(expected, abs=1e-12)
    result = check(decomposition, "root", 1, eps, 0.9)
    assert result.sup_change >= eps - 1e-12 and eps > result.bound and not result.stable


def test_and_at_all_zeros_is_stable_iff_eps_to_the_q_minus_one_is_below_rho() -> None:
    for q, eps, rho, stable in [(2, 0.1, 0.5, True), (3, 0.4, 0.2, True), (2, 0.4, 0.3, False), (1, 0.1, 0.9, False)]:
        decomposition = OneNode(q, lambda z: int(all(z)), lambda i, z: 1.0)
        result = check(decomposition, "root", 1, eps, rho, probabilities=0.0)
        assert result.sup_change == pytest.approx(eps**q, abs=1e-12)
        assert result.stable is stable is (eps ** (q - 1) < rho)


def test_natural_decomposition_is_the_and_of_its_blocks() -> None:
    case = PROBLEMS["parity"].instance(8, True, np.random.default_rng(0))
    for width in (2, 3, 4):
        decomposition = natural(case.machine, case.x, case.oracle, width)
        for method in ("enumeration", "automaton"):
            change = sup_change(decomposition, decomposition.root(), decomposition.depth, 0.1, method=method)
            assert change == pytest.approx(1 - 0.9**width, abs=1e-12)


@pytest.mark.parametrize(("eps", "stable"), [(0.1, True), (0.2, False)])
def test_majority_of_three_at_all_ones(eps: float, stable: bool) -> None:
    """3ε² − 2ε³: 0.028 < 0.05 at ε = 0.1; 0.104 >= 0.1 at ε = 0.2 (ρ = 0.5)."""
    decomposition = OneNode(3, lambda z: int(sum(z) >= 2), lambda i, z: 1.0)
    result = check(decomposition, "root", 1, eps, 0.5)
    assert result.sup_change == pytest.approx(3 * eps**2 - 2 * eps**3, abs=1e-12)
    assert result.stable is stable
    assert result.method == "enumeration"


def binomial_tail(n: int, p: float, k: int) -> float:
    return sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))


def counter() -> Automaton:
    return Automaton(0, lambda count, i, z: count + z, lambda count: count)


@pytest.mark.parametrize("q", [13, 15, 34])
def test_majority_beyond_enumeration_uses_the_automaton(q: int) -> None:
    majority = Automaton(0, lambda count, i, z: count + z, lambda count: int(2 * count > q))
    decomposition = OneNode(q, lambda z: int(2 * sum(z) > q), lambda i, z: 1.0, majority)
    result = check(decomposition, "root", 1, 0.1, 0.5)
    assert result.method == "automaton"
    needed = q // 2 + 1  # ones for M_D = 1; it fails iff at least q - needed + 1 answers are 0
    assert result.sup_change == pytest.approx(binomial_tail(q, 0.1, q - needed + 1), abs=1e-12)


def test_beyond_enumeration_without_an_automaton_is_a_clear_error() -> None:
    decomposition = OneNode(13, lambda z: 1, lambda i, z: 1.0)
    with pytest.raises(StabilityError, match="no automaton"):
        sup_change(decomposition, "root", 1, 0.1)
    with pytest.raises(StabilityError, match="enumeration takes width"):
        sup_change(decomposition, "root", 1, 0.1, method="enumeration")


# -- the automaton against enumeration -------------------------------------------------------


def run(automaton: Automaton, bits: tuple[int, ...]) -> object:
    state = automaton.start
    for i, z in enumerate(bits):
        state = automaton.step(state, i, z)
    return state


@pytest.mark.parametrize("seed", range(12))
def test_automaton_agrees_with_enumeration(seed: int) -> None:
    """A random automaton (count mod 3, last answer) with random outputs and conditionals that
    depend on the prefix only through the state, as the Automaton contract requires."""
    rng = np.random.default_rng(100 + seed)
    q = 1 + seed % 10
    out = {(c, last): int(rng.integers(0, 2)) for c in range(3) for last in (0, 1)}
    table = rng.random((q, 3, 2))
    table[rng.random((q, 3, 2)) < 0.3] = 1.0
    automaton = Automaton((0, 0), lambda s, i, z: ((s[0] + z) % 3, z), out.__getitem__)
    cond: Conditional = lambda i, z: float(table[(i, *run(automaton, z))])  # noqa: E731
    decomposition = OneNode(q, lambda z: out[run(automaton, z)], cond, automaton)
    eps = float(rng.choice([0.05, 0.2, 0.45]))
    for probabilities in (None, 0.3, lambda i, z: 1.0 - cond(i, z)):
        both = [
            sup_change(decomposition, "root", 1, eps, probabilities, method=method)
            for method in ("enumeration", "automaton")
        ]
        assert both[0] == pytest.approx(both[1], abs=1e-12)


# -- validation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("eps", "rho"), [(0.0, 0.5), (0.5, 0.5), (-0.1, 0.5), (float("nan"), 0.5), (0.1, 0.0), (0.1, 1.0)]
)
def test_epsilon_and_rho_are_validated(eps: float, rho: float) -> None:
    decomposition = OneNode(2, lambda z: int(all(z)), lambda i, z: 1.0)
    with pytest.raises(StabilityError, match=r"Definition 5\.3"):
        check(decomposition, "root", 1, eps, rho)
    with pytest.raises(StabilityError, match=r"Definition 5\.3"):
        survey(decomposition, eps, rho, 10, np.random.default_rng(0))


def test_bad_probabilities_outputs_and_budgets_are_refused() -> None:
    decomposition = OneNode(2, lambda z: int(all(z)), lambda i, z: 1.0)
    with pytest.raises(StabilityError, match="not a probability"):
        sup_change(decomposition, "root", 1, 0.1, probabilities=1.5)
    with pytest.raises(StabilityError, match="not a probability"):
        sup_change(decomposition, "root", 1, 0.1, probabilities=lambda i, z: -0.1)
    with pytest.raises(StabilityError, match="must output a bit"):
        sup_change(OneNode(2, lambda z: 2, lambda i, z: 1.0), "root", 1, 0.1)
    with pytest.raises(StabilityError, match="level >= 1"):
        sup_change(decomposition, "root", 0, 0.1)
    with pytest.raises(StabilityError, match="at least the depth"):
        survey(Tree(3, 3), 0.1, 0.5, 2, np.random.default_rng(0))


# -- survey ----------------------------------------------------------------------------------


def test_survey_checks_every_node_and_counts_exactly() -> None:
    """Tree(3, 3): levels 3, 2, 1 hold 1, 3, 9 nodes; the even-sum nodes (1, 2, 5) are stable."""
    tree = Tree(3, 3)
    result = survey(tree, 0.1, 0.5, 2000, np.random.default_rng(0))
    assert not result.sampled and result.nodes_total == result.nodes_checked == 13
    assert [(s.level, s.nodes, s.checked, s.unstable) for s in result.levels] == [
        (3, 1, 1, 0),
        (2, 3, 3, 1),
        (1, 9, 9, 4),
    ]
    assert not result.stable and result.stable_fraction == pytest.approx(8 / 13)
    assert result.bound == pytest.approx(0.05) and result.method == "enumeration"
    worst_stable = 3 * 0.1**2 - 2 * 0.1**3
    assert result.levels[0].max_sup_change == pytest.approx(worst_stable)
    assert result.worst is not None and not result.worst.stable
    assert len(tree.seen) == 13


def test_survey_samples_distinct_nodes_per_level_reproducibly() -> None:
    tree = Tree(5, 3)  # 1 + 3 + 9 + 27 + 81 = 121 nodes
    result = survey(tree, 0.1, 0.5, 40, np.random.default_rng(7))
    assert result.sampled and result.nodes_total == 121 and result.nodes_checked == 40
    assert [s.checked for s in result.levels] == [1, 3, 9, 13, 14]  # small levels whole, the rest shared
    assert len(tree.seen) == 40  # distinct nodes
    assert all(len(path) == 5 - level for level, path in tree.seen)
    assert survey(Tree(5, 3), 0.1, 0.5, 40, np.random.default_rng(7)) == result
    fractions = {survey(Tree(5, 3), 0.1, 0.5, 40, np.random.default_rng(s)).stable_fraction for s in range(6)}
    assert len(fractions) > 1


def test_survey_samples_from_huge_levels() -> None:
    """Width 34, depth 5: level 1 has 34^4 > 10^6 nodes, sampled by drawing paths."""
    tree = Tree(5, 34)
    result = survey(tree, 0.1, 0.5, 25, np.random.default_rng(1))
    assert result.method == "automaton" and result.nodes_checked == 25
    assert result.levels[-1].nodes == 34**4 and result.levels[-1].checked == 6
    assert len(tree.seen) == 25


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_every_problem_with_a_decomposition_surveys(name: str) -> None:
    """A problem whose instance has a recursive decomposition is surveyed from day one."""
    problem = PROBLEMS[name]
    case = problem.instance(problem.default_size, True, np.random.default_rng(0))
    decomposition = case.recursive_decomposition()
    if decomposition is None:
        pytest.skip(f"{name} has no recursive decomposition")
    eps = getattr(decomposition, "epsilon", None) or 0.1
    result = survey(decomposition, eps, 0.5, max(20, decomposition.depth), np.random.default_rng(0))
    assert result.nodes_checked == min(result.nodes_total, max(20, decomposition.depth))
    assert all(0.0 <= s.max_sup_change <= 1.0 for s in result.levels)


# -- the command line ------------------------------------------------------------------------


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def stability_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code, out, err = cli(capsys, "stability", *argv, "--json")
    assert code == 0, err
    assert out.endswith("\n") and out.count("\n") == 1
    return json.loads(out)


@pytest.mark.parametrize(("width", "depth"), [(2, 3), (4, 2)])
def test_cli_parity_json(capsys: pytest.CaptureFixture[str], width: int, depth: int) -> None:
    data = stability_json(capsys, "--problem", "parity", "--size", "8", "--width", str(width))
    keys = "problem size truth epsilon rho depth width method nodes_checked sampled stable stable_fraction levels bound"
    assert set(keys.split()) <= set(data)
    assert (data["problem"], data["size"], data["truth"], data["width"], data["depth"]) == (
        "parity", 8, "yes", width, depth
    )  # fmt: skip
    assert (data["epsilon"], data["rho"], data["bound"]) == (0.1, 0.5, pytest.approx(0.05))
    assert data["stable"] is False and data["sampled"] is False and data["stable_fraction"] == 0.0
    assert [level["level"] for level in data["levels"]] == list(range(depth, 0, -1))
    assert all(level["max_sup_change"] == pytest.approx(1 - 0.9**width) for level in data["levels"])


def test_cli_constant_probability_and_sampling(capsys: pytest.CaptureFixture[str]) -> None:
    data = stability_json(capsys, "--problem", "parity", "--size", "8", "--probability", "0")
    assert data["stable"] is True and data["stable_fraction"] == 1.0  # AND at p = 0 moves by ε² = 0.01
    data = stability_json(capsys, "--problem", "parity", "--size", "64", "--max-nodes", "10", "--seed", "3")
    assert data["sampled"] is True and data["nodes_checked"] == 10 and data["nodes_total"] == 63


def test_a_sampled_survey_states_only_what_the_sample_shows() -> None:
    """Sampled nodes that are all stable do not make the decomposition stable (the verdict is
    None, 'no unstable node in the sample'), and each sampled level's stable fraction comes with a
    Wilson interval that contains the true fraction; an unstable node found is a fact."""
    tree = Tree(5, 3)  # level k's nodes: the even-path ones are stable
    full = survey(tree, 0.1, 0.5, 2000, np.random.default_rng(0))
    assert all(level.stable_ci[0] == level.stable_ci[1] for level in full.levels)  # exact
    for seed in range(6):
        sampled = survey(Tree(5, 3), 0.1, 0.5, 40, np.random.default_rng(seed))
        assert sampled.stable is (None if sampled.stable_fraction == 1.0 else False)
        for level, truth in zip(sampled.levels, full.levels, strict=True):
            low, high = level.stable_ci
            assert low <= truth.stable_ci[0] <= high
            if level.sampled:
                assert level.max_sup_change <= truth.max_sup_change  # a lower bound on the level's max
    only_stable = survey(Tree(1, 3), 0.1, 0.5, 1, np.random.default_rng(0))
    assert only_stable.stable is True and not only_stable.sampled


def register(monkeypatch: pytest.MonkeyPatch, name: str, make: Callable[[int], Instance]) -> None:
    """A throwaway problem in the registry, for this test only."""
    problem = Problem(name, "test only", frozenset(), 8, 1, 64, lambda n, truth, rng: make(n))
    monkeypatch.setitem(PROBLEMS, name, problem)


def test_cli_falls_back_to_the_natural_decomposition_of_the_machine(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A problem with a transcript machine but no decomposition of its own (x = 1, 0, 0, 0, ...)."""
    x = lambda n: np.array([1] + [0] * (n - 1), dtype=np.uint8)  # noqa: E731
    register(monkeypatch, "bare-parity", lambda n: Instance("bare-parity", n, True, x(n), machine=parity_circuit(n)))
    data = stability_json(capsys, "--problem", "bare-parity", "--size", "8", "--width", "3")
    assert (data["decomposition"], data["width"], data["depth"]) == ("natural", 3, 2)  # T = 7 <= 3^2
    assert data["levels"][0]["max_sup_change"] == pytest.approx(1 - 0.9**3)


def test_cli_width_is_refused_for_a_problem_s_own_decomposition(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    register(monkeypatch, "tree", lambda n: Instance("tree", n, True, np.zeros(n, np.uint8), decomposition=Tree(2, 3)))
    data = stability_json(capsys, "--problem", "tree")  # the paths (), (0,), (2,) have even sums
    assert (data["decomposition"], data["nodes_checked"], data["stable_fraction"]) == ("Tree", 4, 0.75)
    code, out, err = cli(capsys, "stability", "--problem", "tree", "--width", "4")
    assert code == 2 and out == "" and err.count("\n") == 1 and "--width applies to natural" in err


def test_cli_prints_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "stability", "--problem", "parity", "--size", "8")
    assert code == 0, err
    assert "NOT stable" in out and "max sup|change|" in out and "0.19" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["--problem", "parity", "--epsilon", "0.6"],
        ["--problem", "parity", "--rho", "1"],
        ["--problem", "no-such-problem"],
        ["--problem", "parity", "--probability", "1.5"],
        ["--problem", "parity", "--width", "1"],
        ["--problem", "parity", "--max-nodes", "0"],
        ["--problem", "palindrome"],
    ],
)
def test_cli_user_mistakes_are_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, out, err = cli(capsys, "stability", *argv)
    assert code == 2, (code, out, err)
    assert out == "" and err.startswith("debatekit: error: ") and err.count("\n") == 1
    assert "Traceback" not in err


def test_module_exports_the_documented_api() -> None:
    assert callable(stability.sup_change) and callable(stability.check) and callable(stability.survey)
    assert stability.MAX_ENUMERATED_WIDTH == 12
