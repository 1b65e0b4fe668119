"""``plan --verifier-budget R``: the strongest certified guarantee with at most R verifier queries per
debate (planner.strongest), under both proofs; stochastic debate planned for a budget
(``-P verifier_budget=R``) plays with at most R verifier queries; the study-sized problem one-claim."""

from __future__ import annotations

import json

import pytest

from debatekit.cli.main import main
from debatekit.protocols.stochastic import planner
from debatekit.protocols.stochastic.params import Proof

STEP = float(planner.TARGET_STEP)


@pytest.fixture(scope="module")
def best_100() -> planner.Plan:
    return planner.strongest(1, 1, 100)


def test_strongest_fits_the_budget_is_certified_and_the_next_target_does_not_fit(best_100) -> None:
    p = best_100
    assert p.verifier_queries <= 100 and planner.certifies(p)
    d = p.params.soundness  # the symmetric target found, on the grid
    assert p.params.completeness == d and round(d / STEP) * STEP == pytest.approx(d)
    assert p.completeness >= d and p.soundness >= d
    assert planner.plan(1, 1, d + STEP, d + STEP).verifier_queries > 100


def test_a_larger_budget_certifies_more_and_a_fixed_soundness_frees_completeness(best_100) -> None:
    more = planner.strongest(1, 1, 300)
    assert more.verifier_queries <= 300 and more.params.soundness > best_100.params.soundness
    fixed = planner.strongest(1, 1, 100, soundness=0.3)
    assert fixed.params.soundness == 0.3 and fixed.verifier_queries <= 100 and planner.certifies(fixed)
    assert fixed.params.completeness > best_100.params.completeness


def test_too_small_a_budget_certifies_nothing() -> None:
    with pytest.raises(planner.PlanError, match="1 verifier queries certify no guarantee"):
        planner.strongest(1, 1, 1)
    with pytest.raises(planner.PlanError, match="at most one"):
        planner.strongest(1, 1, 100, completeness=0.5, soundness=0.5)


def test_honest_abort_bounds_bob_aborting(best_100) -> None:
    q = best_100.params
    bound = planner.honest_abort(q.T, q.alice_samples, q.c, q.bob_samples, q.s, q.b)
    assert best_100.alice_failure + best_100.bob_complete_failure == pytest.approx(bound)
    assert 0 < bound <= 2 * q.q * q.T


def test_cli_json_has_plan_keys_and_both_proofs(capsys) -> None:
    assert main(["plan", "--K", "1", "--T", "1", "--verifier-budget", "30", "--json", "--no-log"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verifier_budget"] == 30 and data["proof"] == "direct"
    for key in ("verifier_queries", "completeness", "soundness", "params", "gap"):
        assert key in data
    assert data["gap"] == pytest.approx(data["completeness"] + data["soundness"] - 1)
    assert set(data["proofs"]) == {p.value for p in Proof}
    for name, p in data["proofs"].items():
        assert p["proof"] == name and p["verifier_queries"] <= 30
    assert data["verifier_queries"] == data["proofs"]["direct"]["verifier_queries"]


@pytest.mark.parametrize(
    "argv",
    [
        ["--verifier-budget", "0"],
        ["--verifier-budget", "10", "--frontier"],
        ["--verifier-budget", "10", "--completeness", "0.5", "--soundness", "0.5"],
        ["--verifier-budget", "10", "--constants", "lean"],
    ],
)
def test_cli_mistakes(capsys, argv) -> None:
    assert main(["plan", "--K", "1", "--T", "1", "--no-log", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("debatekit: error: ") and err.count("\n") == 1


def test_a_budgeted_run_asks_at_most_r_and_keeps_its_promise(capsys) -> None:
    argv = ["run", "stochastic", "--problem", "one-claim", "-P", "verifier_budget=30", "--bob", "always-abort",
            "--trials", "300", "--json", "--no-log"]  # fmt: skip
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["T"] == 1 and data["verifier_queries_max"] == data["guarantee"]["verifier_queries"] <= 30
    assert data["accept_ci"][1] >= data["guarantee"]["completeness"]


def test_a_verifier_budget_needs_the_planned_constants(capsys) -> None:
    argv = ["run", "stochastic", "--problem", "one-claim", "--constants", "lean", "-P", "verifier_budget=50",
            "--trials", "2", "--no-log"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "needs constants=planned" in err and err.count("\n") == 1


def test_the_api_takes_a_verifier_budget_and_refuses_a_bad_one() -> None:
    import debatekit
    from debatekit.api import UsageError

    with pytest.raises(UsageError, match="--verifier-budget must be at least 1"):
        debatekit.plan(1, 1, verifier_budget=0)
    with pytest.raises(UsageError, match="at most one of --completeness, --soundness"):
        debatekit.plan(1, 1, verifier_budget=10, completeness=0.5, soundness=0.5)
