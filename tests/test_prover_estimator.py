"""Prover-estimator and naive recursive debate: exact payoffs by enumeration on tiny
decompositions (Lemma A.5's completeness, Lemma A.4's soundness with the truthful estimator),
the verifier against garbage, and the command line."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from debatekit.cli.main import main
from debatekit.ledger import Ledger, Role
from debatekit.machine.decomposition import Automaton, Decomposition, natural
from debatekit.oracle import NO_ORACLE
from debatekit.players.base import Seat
from debatekit.problems.registry import PROBLEMS, Instance
from debatekit.protocols import naive_recursive as nr
from debatekit.protocols import prover_estimator as pe
from debatekit.protocols.proof import CommittedProof, ProofTruth
from debatekit.protocols.registry import PROTOCOLS


class MajorityTree(Decomposition):
    """Majority of 3 at every node over 3^d deterministic leaves (u_j, judged by u_j itself):
    (ε, 1/2)-stable at the correct answers for ε = 0.1 (sup change 3ε² - 2ε³ = 0.028 < 0.05)."""

    width = 3

    def __init__(self, leaves: list[int]):
        self.u = list(leaves)
        self.depth = round(math.log(len(leaves), 3))
        self.leaf_bound = 1

    def root(self):
        return (0, len(self.u))

    def split(self, query, level):
        a, b = query
        span = (b - a) // 3
        return tuple((a + i * span, a + (i + 1) * span) for i in range(3))

    def combine(self, query, level, answers):
        return int(sum(answers) >= 2)

    def automaton(self, query, level):
        return Automaton(0, lambda s, i, z: s + z, lambda s: int(s >= 2))

    def leaf(self, query):
        return (query[0],)

    def judge(self, query, bits):
        return float(bits[0])

    def proof(self, j):
        return self.u[j]

    def truth(self, query, level):
        a, b = query
        if b - a == 1:
            return float(self.u[a])
        return float(self.combine(query, level, tuple(int(self.truth(y, level - 1)) for y in self.split(query, level))))


def instance_of(decomposition: Decomposition) -> Instance:
    truth = bool(decomposition.truth(decomposition.root(), decomposition.depth))
    return Instance("tiny", 0, truth, np.zeros(1, dtype=np.uint8), decomposition=decomposition)


def players(protocol: str, role: Role, inst: Instance) -> dict:
    table = PROTOCOLS[protocol].strategies[role]
    seat = Seat(inst, role, np.random.default_rng(0), None, None, None)
    return {
        name: s.factory(seat) for name, s in table.items() if name not in ("sampling", "honest") or role is Role.ALICE
    }


TREES = [[1, 1, 0, 1, 0, 0, 0, 1, 1], [0, 0, 1, 1, 0, 1, 0, 1, 0], [1] * 9, [0, 1, 1] * 9]
RULES = pe.Rules(0.1, 0.5)


@pytest.mark.parametrize("leaves", TREES)
def test_completeness_on_a_stable_decomposition(leaves):
    """Lemma A.5: honest A's exact expected payoff is at least (1-ε) r^(d+1) against every B."""
    D = MajorityTree(leaves)
    inst = instance_of(D)
    alice = pe.HonestAlice(D, RULES)
    floor = (1 - RULES.epsilon) * RULES.r ** (D.depth + 1)
    for name, bob in players("prover-estimator", Role.BOB, inst).items():
        value = pe.expected_rewards(D, alice, bob, RULES).sum()
        assert value >= floor * (1 - 1e-9), (name, value / RULES.r ** (D.depth + 1))


@pytest.mark.parametrize("leaves", TREES)
def test_soundness_against_the_truthful_estimator(leaves):
    """Lemma A.4 with δ = 0 (h = g on A's proof ũ): every A's exact payoff is at most
    r^(d+1)·1(A(x) = M_D(ũ))."""
    D = MajorityTree(leaves)
    inst = instance_of(D)
    unit = RULES.r ** (D.depth + 1)
    for name, alice in players("prover-estimator", Role.ALICE, inst).items():
        truth = ProofTruth(D, None if pe.gives_implicit_proof(alice, D) else CommittedProof(alice.proof))
        right = alice.claim() == truth.truth(D.root(), D.depth) if name != "malformed" else True
        value = pe.expected_rewards(D, alice, pe.TruthfulBob(truth), RULES).sum()
        assert value <= unit * right + 1e-15, name


def test_exact_payoffs_of_named_pairs():
    """Honest vs truthful: exactly r^(d+1). Honest vs shifted: exactly (1-ε) r^(d+1), the
    completeness bound met with equality (A stays silent when |p_d - A(x)| ≤ ε)."""
    D = MajorityTree(TREES[0])
    inst = instance_of(D)
    unit = RULES.r ** (D.depth + 1)
    bobs = players("prover-estimator", Role.BOB, inst)
    alice = pe.HonestAlice(D, RULES)
    assert pe.expected_rewards(D, alice, bobs["omniscient"], RULES).sum() == pytest.approx(unit, rel=1e-12)
    assert pe.expected_rewards(D, alice, bobs["shifted"], RULES).sum() == pytest.approx(0.9 * unit, rel=1e-12)


def test_reward_vector_is_the_per_round_ledger():
    """Against the inverted estimator A's initial reward is 0 (ẑ ≠ L(x) surely) and round d pays
    r^d·(M_D - p_d) with M_D sampled from B's inverted conditionals."""
    D = MajorityTree(TREES[2])  # every leaf 1: L(x) = 1, B says 0 everywhere
    inst = instance_of(D)
    bob = players("prover-estimator", Role.BOB, inst)["inverted"]
    rewards = pe.expected_rewards(D, pe.HonestAlice(D, RULES), bob, RULES)
    assert rewards[0] == 0
    assert rewards[1] == pytest.approx(0.0)  # z all 0 surely, M_D = 0 = p_d
    assert rewards.sum() > 0  # caught in the final round, where the oracle answers 1


def test_naive_obfuscation_exact_win_probability():
    """Naive recursion on an AND decomposition with one false leaf: the obfuscator (all subclaims
    claimed true) survives unless a uniformly random B walks to the false leaf: 1 - q^-d."""
    inst = PROBLEMS["parity"].instance(16, False, np.random.default_rng(3))
    D = natural(inst.machine, inst.x, NO_ORACLE, 2)
    seat = Seat(inst, Role.ALICE, np.random.default_rng(0), None)
    alice = PROTOCOLS["naive-recursive"].strategies[Role.ALICE]["obfuscate"].factory(seat)
    bob = PROTOCOLS["naive-recursive"].strategies[Role.BOB]["random"].factory(seat)
    false_leaves = sum(
        D.judge((t, t + 1), tuple(D.proof(j) for j in D.leaf((t, t + 1)))) == 0 for t in range(2**D.depth)
    )
    assert false_leaves == 1
    assert nr.win_probability(D, alice, bob) == pytest.approx(1 - 2.0**-D.depth)
    omniscient = PROTOCOLS["naive-recursive"].strategies[Role.BOB]["omniscient"].factory(seat)
    assert nr.win_probability(D, alice, omniscient) == 0.0


@pytest.mark.parametrize("protocol", ["prover-estimator", "naive-recursive"])
def test_malformed_players_lose_and_never_crash(protocol):
    inst = PROBLEMS["parity"].instance(8, True, np.random.default_rng(0))
    D = inst.recursive_decomposition()
    alices = players(protocol, Role.ALICE, inst)
    bobs = players(protocol, Role.BOB, inst)
    for name, bob in bobs.items():
        if protocol == "prover-estimator":
            rewards = pe.expected_rewards(D, alices["malformed"], bob, RULES) if name != "malformed" else None
            if rewards is not None:
                assert rewards.sum() < 0
        elif name != "malformed":
            assert nr.win_probability(D, alices["malformed"], bob) == 0.0
    for name, alice in alices.items():
        if name == "malformed":
            continue
        if protocol == "prover-estimator":
            assert pe.expected_rewards(D, alice, bobs["malformed"], RULES).sum() > 0
        else:
            assert nr.win_probability(D, alice, bobs["malformed"]) == 1.0


garbage = st.one_of(
    st.none(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.tuples(st.integers(), st.integers()),
    st.lists(st.integers(-3, 3), max_size=5).map(tuple),
    st.booleans(),
)


class Scripted:
    """Honest play except one message slot, which sends ``junk``."""

    def __init__(self, honest, slot: str, junk):
        self.honest, self.slot, self.junk = honest, slot, junk

    def __getattr__(self, name):
        if name == self.slot:
            return lambda *args: self.junk
        return getattr(self.honest, name)


@settings(max_examples=150, deadline=None)
@given(
    junk=garbage, slot=st.sampled_from(["claim", "direction", "queries", "recurse", "proof", "initial", "conditional"])
)
def test_fuzzed_messages_lose_for_their_sender(junk, slot):
    """Whatever one message holds, the verifier finishes, and a message it refuses costs its sender:
    A's payoff never exceeds honest play's when she sends junk, and B's junk never hurts A."""
    D = MajorityTree(TREES[0])
    alice, bob = pe.HonestAlice(D, RULES), pe.TruthfulBob(ProofTruth(D, None))
    honest_value = pe.expected_rewards(D, alice, bob, RULES).sum()
    ledger = Ledger()
    rngs = {role: np.random.default_rng(1) for role in Role}
    if slot in ("initial", "conditional"):
        end = pe.sampled(D, alice, Scripted(bob, slot, junk), RULES, rngs, ledger)
        value = np.sum(end.rewards)
        assert end.forfeit in (None, Role.BOB)
        assert value >= honest_value * (1 - 1e-12) or end.forfeit is None
    else:
        end = pe.sampled(D, Scripted(alice, slot, junk), bob, RULES, rngs, ledger)
        value = np.sum(end.rewards)
        assert end.forfeit in (None, Role.ALICE)
        assert value <= honest_value + 1e-15


def test_rules_validate():
    for epsilon, rho, delta in [
        (0.0, 0.5, 0.1), (0.5, 0.5, 0.1), (0.1, 1.0, 0.1), (float("nan"), 0.5, 0.1),
        (0.1, 0.5, 0.0), (0.1, 0.5, 2.5), (0.1, 0.5, float("nan")),
    ]:  # fmt: skip
        with pytest.raises(ValueError):
            pe.Rules(epsilon, rho, delta)
    assert pe.Rules(0.1, 0.5).r == pytest.approx(0.0125)
    assert pe.Rules(0.1, 0.5, 0.25).delta == 0.25


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    capsys.readouterr()
    assert main(["run", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_reports_payoffs(capsys):
    out = _run(
        capsys, "prover-estimator", "--problem", "parity", "--size", "8", "--bob", "omniscient", "--trials", "20"
    )
    assert out["payoff_mean"] == pytest.approx(out["reward_unit"])
    assert out["payoff_bound_kind"] == "completeness"
    assert out["payoff_mean"] >= out["payoff_bound"]
    lo, hi = out["payoff_ci"]
    assert lo <= out["payoff_mean"] <= hi
    assert out["honest_win_rate"] == 1.0
    naive = _run(
        capsys, "naive-recursive", "--problem", "parity", "--size", "8", "--truth", "no", "--alice", "obfuscate"
    )
    assert naive["payoff_bound_kind"] == "soundness"
    assert naive["verifier_bits_read_max"] <= naive["guarantee"]["bits_read"]


def test_cli_user_errors_exit_2(capsys):
    for args in (
        ["run", "prover-estimator", "--problem", "palindrome"],
        ["run", "naive-recursive", "--problem", "parity", "--bob", "nobody"],
    ):
        capsys.readouterr()
        assert main(args) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err
