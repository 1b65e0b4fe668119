"""Lemma A.4's estimator (Algorithm 1 against a committed A) and the issue's end-to-end claims
about obfuscated primality."""

from __future__ import annotations

import json

import numpy as np
import pytest

from debatekit.analysis.montecarlo import make_instance
from debatekit.cli.main import main
from debatekit.ledger import Role
from debatekit.players import estimator as est
from debatekit.players.base import Seat
from debatekit.problems import PROBLEMS
from debatekit.protocols.registry import PROTOCOLS


def trained(problem: str, size: int, truth: bool, alice: str) -> est.Indistinguishable:
    instance = make_instance(PROBLEMS[problem], size, truth, 0)
    a = PROTOCOLS["prover-estimator"].strategies[Role.ALICE][alice]
    return est.Indistinguishable(Seat(instance, Role.BOB, np.random.default_rng(0), None, None, a))


@pytest.mark.parametrize(("problem", "size", "truth", "alice"), [
    ("obfuscated-primality", 10, False, "obfuscate"),
    ("obfuscated-primality", 10, False, "wrong-answer"),
    ("parity", 8, True, "random-direction"),
])  # fmt: skip
def test_every_round_is_delta_indistinguishable(problem, size, truth, alice):
    """Definition A.1 on each round's training distribution μ_k, recomputed from the tests' values:
    max_f |Σ_x μ(x) Σ_z (g - h)(x, z) f(x, z, h(x))| < δ."""
    b = trained(problem, size, truth, alice)
    assert b.estimates, "no round was trained"
    for level, estimate in b.estimates.items():
        keys, mu, g = b.training[level]
        assert np.allclose(g, [b.truth.answer_distribution(b.points[i].situation.query, level) for i in keys])
        values = estimate.tests.values(keys, estimate.h)
        assert np.all(np.abs(values) <= 1)
        advantages = np.einsum("fxz,x,xz->f", values, mu, g - estimate.h)
        assert np.max(np.abs(advantages)) < b.rules.delta_at(b.D.depth)
        assert np.max(np.abs(advantages)) == pytest.approx(estimate.advantage, abs=1e-15)
    assert 0 <= b.delta < b.rules.delta_at(b.D.depth)


def test_estimates_are_probabilities_and_replay_matches_training():
    b = trained("obfuscated-primality", 10, False, "obfuscate")
    for level, estimate in b.estimates.items():
        assert np.allclose(estimate.h.sum(axis=1), 1) and np.all(estimate.h >= -1e-12)
        some = np.array([i for i in b.rows if b.points[i].situation.level == level][:3])
        replayed = estimate.predict(some)
        assert np.allclose(replayed, np.stack([b.rows[int(i)] for i in some]))
    for point in b.points[:5]:
        for i in range(b.D.width):
            p = b.conditional(point.situation, point.subqueries, i, (1,) * i)
            assert 0 <= p <= 1


def test_estimator_refuses_what_it_cannot_build():
    instance = make_instance(PROBLEMS["evidence-majority"], 1, True, 0)
    a = PROTOCOLS["prover-estimator"].strategies[Role.ALICE]["honest"]
    with pytest.raises(ValueError, match="2\\^q"):
        est.Indistinguishable(Seat(instance, Role.BOB, np.random.default_rng(0), None, None, a))
    with pytest.raises(ValueError, match="committed A"):
        est.Indistinguishable(
            Seat(make_instance(PROBLEMS["parity"], 8, True, 0), Role.BOB, np.random.default_rng(0), None)
        )


def _json(capsys, *argv: str) -> dict:
    capsys.readouterr()
    assert main(["run", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_obfuscation_end_to_end(capsys):
    """The issue's claims: naive recursion loses to the obfuscator; prover-estimator debate holds
    her mean payoff within its bound on the same instance; the honest prover earns more."""
    common = ("--problem", "obfuscated-primality", "--trials", "100")
    naive = _json(capsys, "naive-recursive", *common, "--truth", "no", "--alice", "obfuscate")
    assert naive["payoff_ci"][0] > 0.9  # the dishonest prover wins (Wilson lower bound)
    assert naive["honest_win_rate"] < 0.1
    pe = _json(capsys, "prover-estimator", *common, "--truth", "no", "--alice", "obfuscate")
    assert pe["payoff_bound_kind"] == "soundness" and pe["payoff_bound_covers_bob"]
    assert pe["payoff_ci"][0] <= pe["payoff_bound"]
    honest = _json(capsys, "prover-estimator", *common, "--truth", "yes")
    assert honest["payoff_mean"] > pe["payoff_ci"][1]
    assert honest["payoff_mean"] >= honest["payoff_bound"]  # (1-ε) r^(d+1), met with room


def test_players_lists_every_strategy(capsys):
    for protocol in ("prover-estimator", "naive-recursive"):
        capsys.readouterr()
        assert main(["players", protocol]) == 0
        out = capsys.readouterr().out
        for role in (Role.ALICE, Role.BOB):
            for name in PROTOCOLS[protocol].strategies[role]:
                assert name in out
