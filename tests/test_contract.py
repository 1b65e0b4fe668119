"""The contract every registered protocol and every built-in strategy keeps, walked over the
registries (so a new protocol or adversary is tested from its first commit):

* every protocol names a small instance here to be tested on;
* every built-in strategy of every role plays a few debates against the honest opponent without
  crashing the verifier: verdicts are bits, the honest side wins whenever the theorem promises
  certainty, the verifier's queries and reads stay within the guarantee;
* on the protocols written as nodes, every debate's record replays.
"""

from __future__ import annotations

import pytest

from debatekit.analysis.montecarlo import make_instance, run
from debatekit.catalog import PROTOCOLS
from debatekit.engine.record import read_records, replay
from debatekit.ledger import Role
from debatekit.problems import PROBLEMS

CONTRACT_INSTANCES = {
    "cross-exam": ("approval-majority", 6),
    "bisection": ("parity", 2),
    "kw": ("majority", 4),
    "circuit-cross-exam": ("tqbf", 4),
    "stochastic": ("noisy-majority", 8),
    "prover-estimator": ("evidence-majority", 1),
    "naive-recursive": ("evidence-majority", 1),
}
"""(problem, size) per protocol: small enough for a few debates of every strategy in seconds."""


def test_every_protocol_has_a_contract_instance() -> None:
    assert set(CONTRACT_INSTANCES) == set(PROTOCOLS)
    for name, (problem, _) in CONTRACT_INSTANCES.items():
        assert name in PROBLEMS[problem].protocols


def test_every_role_declares_one_honest_strategy() -> None:
    """Analysis and the demo find the theorem's honest player by its declaration, never its name."""
    for name, spec in PROTOCOLS.items():
        for role in (Role.ALICE, Role.BOB):
            declared = [s for s in spec.strategies[role].values() if s.honest]
            assert len(declared) == 1, (name, role)
            assert spec.honest(role) is declared[0]


CASES = [
    (name, role, strategy)
    for name, spec in PROTOCOLS.items()
    for role in (Role.ALICE, Role.BOB)
    for strategy in spec.strategies[role]
]


@pytest.mark.parametrize(("name", "role", "strategy"), CASES)
def test_every_strategy_keeps_the_contract(tmp_path, name, role, strategy) -> None:
    spec = PROTOCOLS[name]
    problem, size = CONTRACT_INSTANCES[name]
    # The strategy plays the side the truth is against, so the honest opponent defends the truth.
    truth = int(role is Role.BOB) == spec.alice_argues
    instance = make_instance(PROBLEMS[problem], size, truth, 0)
    player = spec.strategies[role][strategy]
    if player.refuses is not None and player.refuses(instance):
        pytest.skip(f"{strategy} refuses this instance: {player.refuses(instance)}")
    honest = spec.strategies[role.opponent]["honest"]
    if honest.refuses is not None and honest.refuses(instance):  # a built-in never plays what it refuses
        honest = next(s for s in spec.strategies[role.opponent].values() if s.truthful)
    players = {role: player, role.opponent: honest}
    record = tmp_path / "r.jsonl" if spec.debate is not None else None
    result = run(spec, instance, players[Role.ALICE], players[Role.BOB], trials=3, seed=0, record=record)
    g = result.guarantee
    assert 0.0 <= result.accept_rate <= 1.0 and 0.0 <= result.honest_win_rate <= 1.0
    if (g.completeness, g.soundness) == (1.0, 0.0):
        assert result.honest_win_rate == 1.0
    assert result.verifier_queries_max <= g.verifier_queries
    assert result.verifier_bits_read_max <= g.bits_read
    if record is not None:
        records = list(read_records(record))
        assert len(records) == 3
        assert all(replay(r, spec, instance).reproduced for r in records)
