"""Lemma A.4's B over the counts M_D reads (players/count_estimator.py, docs/count-estimator.md):
exact agreement with the enumerating Algorithm 1 on q ≤ 10, and evidence-majority played at q = 34."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from debatekit.cli.main import main
from debatekit.ledger import Role
from debatekit.machine.decomposition import CountStatistic, LeafOracle
from debatekit.players import estimator as est
from debatekit.players.base import Seat
from debatekit.players.count_estimator import Cells, CountEstimator, refine
from debatekit.problems.evidence_majority import EvidenceMajority
from debatekit.problems.registry import Instance
from debatekit.protocols.prover_estimator import expected_rewards
from debatekit.protocols.registry import PROTOCOLS


def every_z(q: int) -> np.ndarray:
    """{0,1}^q, z_1 the most significant bit (the index convention of indistinguishable.py)."""
    return (np.arange(2**q)[:, None] >> np.arange(q - 1, -1, -1)) & 1


def lifted(cells: Cells, H: np.ndarray) -> np.ndarray:
    """h(z) = H(c(z)) / N(c(z)) over all 2^q answer vectors, by enumeration."""
    index = np.array([cells.index(z) for z in every_z(cells.q)])
    return H[index] / cells.multiplicity[index]


def small_instance(evidence: np.ndarray, kappa: int = 3) -> Instance:
    D = EvidenceMajority(evidence, fan_in=2, kappa=kappa)
    truth = bool(D.truth(D.root(), D.depth))
    return Instance("evidence-majority", D.depth, truth, evidence, oracle=LeafOracle(D), decomposition=D)


def seat(instance: Instance, alice: str) -> Seat:
    a = PROTOCOLS["prover-estimator"].strategies[Role.ALICE][alice]
    return Seat(instance, Role.BOB, np.random.default_rng(0), None, None, a)


def test_evidence_majority_reads_only_the_group_counts():
    """The statistic's contract, on every answer vector of a q = 6 split (κ = 3) and on random
    within-group permutations at κ = 17: M_D is a function of the per-group counts."""
    D = EvidenceMajority(np.ones(36, dtype=np.uint8), fan_in=2, kappa=3)
    for level in (1, 2):
        seen: dict[tuple[int, ...], int] = {}
        for z in every_z(6):
            key = tuple(int(z[list(g)].sum()) for g in D.statistic.groups)
            assert seen.setdefault(key, D.combine(D.root(), level, tuple(z))) == D.combine(D.root(), level, tuple(z))
    wide = EvidenceMajority(np.ones(34**2, dtype=np.uint8))
    rng = np.random.default_rng(0)
    for _ in range(200):
        z = rng.integers(0, 2, 34)
        shuffled = z.copy()
        for group in wide.statistic.groups:
            shuffled[list(group)] = rng.permutation(z[list(group)])
        assert wide.combine(wide.root(), 2, tuple(z)) == wide.combine(wide.root(), 2, tuple(shuffled))


def test_count_space_equals_enumeration_exactly():
    """On q = 10 (two groups of 5, refined by answers): the lifting of a random H is a
    distribution whose conditionals (enumerated over 2^10 vectors, every prefix) are the count
    formula's; the pushforward of independent answers is the enumerated law's; and a test that
    reads counts has the same advantage on {0,1}^q as on Z'. With g constant on cells, the
    coordinate tests z_i of estimator.py have the advantage of their cell's fraction."""
    q, rng = 10, np.random.default_rng(1)
    answers = [1, 1, 0, 1, 0, 0, 0, 1, 1, 1]
    cells = Cells(refine(CountStatistic(((0, 1, 2, 3, 4), (5, 6, 7, 8, 9))), answers), q)
    assert cells.cells == ((0, 1, 3), (2, 4), (5, 6), (7, 8, 9))
    H = rng.dirichlet(np.ones(cells.size))
    H[rng.random(cells.size) < 0.3] = 0.0
    H /= H.sum()
    h = lifted(cells, H)
    assert h.sum() == pytest.approx(1.0, abs=1e-12)
    for i in range(q):
        for prefix in itertools.product((0, 1), repeat=i):
            assert cells.conditional(H, i, prefix) == pytest.approx(est._safe_conditional(h, i, prefix), abs=1e-12)
    p = np.array([0.9, 0.9, 0.2, 0.9, 0.2, 0.0, 0.0, 1.0, 1.0, 1.0])
    z = every_z(q)
    g = np.prod(np.where(z == 1, p, 1 - p), axis=1)
    G = cells.pushforward(p)
    index = np.array([cells.index(v) for v in z])
    assert np.allclose(np.bincount(index, weights=g, minlength=cells.size), G, atol=1e-15)
    phi = rng.uniform(-1, 1, (5, cells.size))
    assert np.allclose(phi[:, index] @ (g - h), phi @ (G - H), atol=1e-12)
    for i in range(q):
        cell = cells.cell_of[i]
        fraction = cells.counts[:, cell] / cells.sizes[cell]
        assert z[:, i] @ (g - h) == pytest.approx(fraction @ (G - H), abs=1e-12)


@pytest.mark.parametrize(("flip", "alice"), [(None, "honest"), (None, "wrong-answer"), (6, "honest"),
                                             (6, "obfuscate"), (18, "bad-proof")])  # fmt: skip
def test_count_estimator_matches_algorithm1_on_small_evidence_majority(monkeypatch, flip, alice):
    """q = 6 (w = 2, κ = 3, d = 2), against the enumerating Algorithm 1 (estimator.Indistinguishable,
    with its 2q + 2 static tests, as it runs beyond SELECTION_LIMIT) trained against the same A: at
    every situation the count estimator trained on, those tests (on all 2^6 answer vectors, with
    its correct answers g) cannot tell the lifted h from g by δ, nor can any test by more than
    the reported bound; B's conditionals along the correct answers z* are within δ of z* at every
    situation it trained on (Algorithm 1's guarantee is on average over μ_k only, and the two μ_k
    can differ, as A's argmax breaks ties between errors below δ); and A's exact
    expected payoff is the same within (2d + 2)δ. A flipped piece of evidence (``flip``) makes the
    correct answers of one group disagree where the cheater goes (6: obfuscate's level-1 copy; 18:
    bad-proof's), and she answers that group alike."""
    monkeypatch.setattr(est, "SELECTION_LIMIT", 0)
    evidence = np.ones(36, dtype=np.uint8)
    evidence[:18] = 0  # inputs 0 and 1 false: the OR below the top AND is false
    if flip is not None:
        evidence[flip] ^= 1
    instance = small_instance(evidence)
    full, counts = est.Indistinguishable(seat(instance, alice)), CountEstimator(seat(instance, alice))
    delta = counts.rules.delta_at(counts.D.depth)
    assert counts.fits and 0 <= counts.delta < delta and full.delta < delta
    split = 0
    for i, fit in counts.fits.items():
        point = counts.points[i]
        s, ys = point.situation, point.subqueries
        split += len(point.cells.cells) > 2
        h = lifted(point.cells, fit.estimate.h[0])
        g = full.truth.answer_distribution(s.query, s.level)
        assert np.abs(g - h).sum() == pytest.approx(fit.bound, abs=1e-12) and fit.bound < delta
        static = full.points[full._register(s, ys)].static
        assert np.max(np.abs(static @ (g - h))) < delta
        star = every_z(6)[int(np.argmax(g))]
        for j in range(6):
            assert abs(counts.conditional(s, ys, j, tuple(int(b) for b in star[:j])) - star[j]) < delta
    assert split == (flip is not None and alice != "honest")
    a = PROTOCOLS["prover-estimator"].strategies[Role.ALICE][alice].factory(seat(instance, alice))
    D = instance.recursive_decomposition()
    paid = [expected_rewards(D, a, b, counts.rules).sum() for b in (full, counts)]
    assert abs(paid[0] - paid[1]) < (2 * D.depth + 2) * delta


def test_evidence_majority_plays_at_q34_with_the_theorems_b(capsys):
    """Issue 25: `run prover-estimator --problem evidence-majority --oracle sample` exits 2 before
    (Algorithm 1 refused q = 34); now the honest A against the theorem's B meets Lemma A.5's floor."""
    code = main(["run", "prover-estimator", "--problem", "evidence-majority", "--oracle", "sample",
                 "--trials", "5", "--json"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    result = json.loads(out)
    assert (result["bob"], result["width"], result["payoff_bound_kind"]) == ("honest", 34, "completeness")
    assert result["payoff_ci"][0] >= result["payoff_bound"]
