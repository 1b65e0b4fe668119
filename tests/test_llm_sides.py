"""Assigned-side LLM debaters (issue 22, point 1), with a fake model in process (no network): an
LLM player on the liar's side (``llm-liar:PROVIDER/MODEL``) argues the answer its model does not
give. A lying Alice flips her answer with the lie her model finds most plausible and keeps every
computed step consistent; the aside says why. The verifier stays the judge: with a model whose
answers are the ground truth, a liar wins no more than each protocol's guarantee allows (the
soundness bound against the theorem's Bob, the completeness floor for the honest Alice)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tenacity")

from debatekit.analysis.montecarlo import make_instance, run
from debatekit.cli.main import main
from debatekit.engine.record import read_records, replay
from debatekit.ledger import Role
from debatekit.llm.model import Limits, Model
from debatekit.llm.players.base import LLM
from debatekit.machine.transcript import StepKind
from debatekit.players.base import Side, Strategy
from debatekit.problems import PROBLEMS, Instance
from debatekit.protocols.registry import PROTOCOLS
from debatekit.runs.names import model_player
from llm_helpers import Fake, truth_of

RECURSIVE = ("naive-recursive", "prover-estimator")
THEOREMS_BOB = {"naive-recursive": "omniscient"}
"""The Bob each protocol's soundness promise covers, where it is not ``honest``."""


def caffeine(truth: bool) -> Instance:
    return make_instance(PROBLEMS["caffeine"], PROBLEMS["caffeine"].default_size, truth, 0)


def llm_of(instance: Instance, p_of: Callable[[str], float] | None = None) -> LLM:
    truth = truth_of(instance)
    fake = Fake(p_of or truth.__getitem__, truth)
    return LLM("fake/judge", Model("judge", fake, Limits(max_connections=4, timeout=10.0, max_retries=0)))


def seats(protocol: str) -> Any:
    import importlib

    module, _, attr = PROTOCOLS[protocol].llm.partition(":")
    return getattr(importlib.import_module(module), attr)


def played(instance: Instance, flips: frozenset[int], truth: dict[str, float]) -> np.ndarray:
    """x, then M's transcript with the judge's answers, the steps in ``flips`` flipped and every
    later step following from the bits before it."""
    machine = instance.machine
    values = np.concatenate([instance.x, np.zeros(machine.length, dtype=np.uint8)]).astype(np.uint8)
    for t in range(machine.length):
        rule = machine.rule(t, tuple(int(values[a]) for a in machine.relevant(t)))
        bit = int(truth[rule.text] >= 0.5) if machine.kind(t) is StepKind.ORACLE else int(rule)  # type: ignore[union-attr, arg-type]
        values[machine.offset + t] = bit ^ (t in flips)
    return values


def test_the_command_line_names_a_side_once() -> None:
    assert model_player("llm:local/smollm2") == ("local/smollm2", Side.HONEST)
    assert model_player("llm-honest:openai/gpt-4o-mini") == ("openai/gpt-4o-mini", Side.HONEST)
    assert model_player("llm-liar:vllm/meta-llama/Llama-3.1-8B") == ("vllm/meta-llama/Llama-3.1-8B", Side.LIAR)
    assert model_player("llm-sly:local/smollm2") is None and model_player("lie-output") is None


def test_a_lying_alice_flips_her_answer_at_the_step_her_model_doubts_most(tmp_path: Path) -> None:
    """Caffeine's answer is no. Of the judged steps whose flip alone turns the output to 1, the
    model is unsure (P[yes] 0.4) about one: she lies there and nowhere else, every other step
    following from her bits, and says why. Unchallenged the lie carries the debate; an honest LLM
    Bob of the same model challenges it (the least likely bit), and the judge rejects it."""
    instance, machine = caffeine(False), caffeine(False).machine
    truth = truth_of(instance)
    judged = [t for t in range(machine.length) if machine.kind(t) is StepKind.ORACLE]
    flipping = [t for t in judged if played(instance, frozenset([t]), truth)[-1] == 1]
    assert len(flipping) >= 2, "a choice of lies"
    chosen = flipping[-1]
    honest = played(instance, frozenset(), truth)
    doubted = machine.rule(chosen, tuple(int(honest[a]) for a in machine.relevant(chosen))).text  # type: ignore[union-attr]
    llm = llm_of(instance, lambda text: 0.4 if text == doubted else truth[text])
    cross = seats("cross-exam")
    liar = cross[Role.ALICE](llm, Side.LIAR)
    assert liar.name == "llm-liar:fake/judge"
    spec = PROTOCOLS["cross-exam"]
    result = run(spec, instance, liar, spec.strategies[Role.BOB]["accept"], 1, 0, record=tmp_path / "a.jsonl")
    (record,) = read_records(tmp_path / "a.jsonl")
    (sent,) = [e["message"] for e in record["events"] if e.get("move") == "alice"]
    assert sent["bits"] == "".join(map(str, played(instance, frozenset([chosen]), truth)[machine.n_inputs :]))
    (lied,) = [entry for entry in record["aside"] if entry.get("lied") == "alice"]
    assert lied["steps"] == [chosen] and "0.4" in lied["why"]
    assert result.accept_rate == 1.0
    caught = run(spec, instance, liar, cross[Role.BOB](llm, Side.HONEST), 2, 0)
    assert caught.accept_rate == 0.0


def test_a_lying_bob_disputes_the_bit_his_model_doubts_most_and_the_judge_upholds_it(tmp_path: Path) -> None:
    """Caffeine's answer is yes and Alice is honest. Bob's model believes her transcript, least
    surely at one judged step (0.6): lying, he challenges that step, and the judge, who is right,
    upholds her bit (completeness 1)."""
    instance, machine = caffeine(True), caffeine(True).machine
    truth = truth_of(instance)
    honest = played(instance, frozenset(), truth)
    judged = [t for t in range(machine.length) if machine.kind(t) is StepKind.ORACLE]
    unsure = judged[len(judged) // 2]
    text = machine.rule(unsure, tuple(int(honest[a]) for a in machine.relevant(unsure))).text  # type: ignore[union-attr]
    leaning = 0.6 if truth[text] >= 0.5 else 0.4
    llm = llm_of(instance, lambda q: leaning if q == text else truth[q])
    spec = PROTOCOLS["cross-exam"]
    result = run(spec, instance, spec.honest(Role.ALICE), seats("cross-exam")[Role.BOB](llm, Side.LIAR), 2, 0,
                 record=tmp_path / "b.jsonl")  # fmt: skip
    records = list(read_records(tmp_path / "b.jsonl"))
    assert all(replay(record, spec, instance).reproduced for record in records)
    (decided,) = [entry for entry in records[0]["aside"] if entry.get("decided") == "bob"]
    assert decided["challenge"] == unsure and "0.6" in decided["why"]
    assert result.accept_rate == 1.0 >= result.guarantee.completeness


@pytest.mark.parametrize("protocol", ["cross-exam", "stochastic", *RECURSIVE])
def test_a_liar_wins_no_more_than_the_protocol_promises(protocol: str, tmp_path: Path) -> None:
    """With a model whose answers are the judge's, the lying Alice on a false claim against the
    Bob the soundness promise covers, and the honest Alice on a true one against the lying Bob,
    stay within the protocol's guarantee: the soundness bound (accept rate, or the recursive
    protocols' mean payoff) and the completeness floor. The liars do argue, saying why: each lying
    Alice claims the false answer."""
    spec, trials = PROTOCOLS[protocol], 6
    false, true = caffeine(False), caffeine(True)
    bob = spec.strategies[Role.BOB][THEOREMS_BOB.get(protocol, "honest")]
    path, other = tmp_path / "r.jsonl", tmp_path / "o.jsonl"
    lying = run(spec, false, seats(protocol)[Role.ALICE](llm_of(false), Side.LIAR), bob, trials, 0, record=path)
    liar = seats(protocol)[Role.BOB](llm_of(true), Side.LIAR)
    against = run(spec, true, spec.honest(Role.ALICE), liar, trials, 0, record=other)
    for file, role in (path, "alice"), (other, "bob"):  # each liar says why, in every debate
        assert all(any(role in (e.get("lied"), e.get("decided")) for e in r["aside"]) for r in read_records(file))
    if protocol in RECURSIVE:
        found = lying.to_json()
        assert found["payoff_bound_promised"] and found["payoff_bound_covers_bob"]
        assert found["payoff_mean"] <= found["payoff_bound"]
        assert {record["claim"] for record in read_records(path)} == {1}  # she claims yes, the false answer
        assert against.honest_win_rate == 1.0
    else:
        assert lying.accept_ci[0] <= lying.guarantee.soundness
        assert against.accept_ci[1] >= against.guarantee.completeness
    if protocol == "cross-exam":
        assert lying.accept_rate == 0.0


def test_llm_liar_on_the_command_line_plays_and_its_record_replays(tmp_path: Path, monkeypatch, capsys) -> None:
    """``--alice llm-liar:P/M`` through the command line, with the fake model served by name."""
    from debatekit.llm import players

    instance = caffeine(False)
    monkeypatch.setitem(players._MODELS, ("fake/judge", Path(tmp_path / "c.sqlite")), llm_of(instance).model)
    monkeypatch.setenv("DEBATEKIT_LLM_CACHE", str(tmp_path / "c.sqlite"))
    record = tmp_path / "r.jsonl"
    code = main(["run", "cross-exam", "--problem", "caffeine", "--truth", "no", "--alice", "llm-liar:fake/judge",
                 "--bob", "accept", "--trials", "1", "--record", str(record), "--json", "--no-log"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert '"alice": "llm-liar:fake/judge"' in out and '"accept_rate": 1.0' in out
    assert main(["replay", str(record)]) == 0


def test_a_strategy_for_each_side_of_each_protocol_with_llm_players() -> None:
    for name, spec in PROTOCOLS.items():
        if spec.llm is None:
            continue
        for role in Role.ALICE, Role.BOB:
            made = {side: seats(name)[role](llm_of(caffeine(True)), side) for side in Side}
            assert made[Side.HONEST].name == "llm:fake/judge" and made[Side.LIAR].name == "llm-liar:fake/judge"
            assert isinstance(made[Side.LIAR], Strategy) and made[Side.LIAR].role is role


def test_naive_llm_bob_spends_his_challenge_on_a_certain_catch_not_a_spurious_doubt(tmp_path: Path) -> None:
    """Naive recursion on caffeine's natural decomposition, whose answer is no: ``wrong-answer``
    Alice claims yes and hides the lie in the half of her proof with the output step, which the
    verifier computes (a certain catch). Bob's model doubts a right judged step in the other half
    (her bit has probability 0.45 under it): rounded to a bit that doubt was as strong as the
    catch and came first; weighed, he challenges the catch, and she loses."""
    instance, machine = caffeine(False), caffeine(False).machine
    truth = truth_of(instance)
    honest = played(instance, frozenset(), truth)
    first = [t for t in range(machine.length) if machine.kind(t) is StepKind.ORACLE and t < 16]  # steps [0, 16)
    assert first and machine.length > 16, "a judged step in the first half, the output in the second"
    text = machine.rule(first[0], tuple(int(honest[a]) for a in machine.relevant(first[0]))).text  # type: ignore[union-attr]
    llm = llm_of(instance, lambda q: (0.45 if truth[q] >= 0.5 else 0.55) if q == text else truth[q])
    spec = PROTOCOLS["naive-recursive"]
    bob = seats("naive-recursive")[Role.BOB](llm, Side.HONEST)
    result = run(spec, instance, spec.strategies[Role.ALICE]["wrong-answer"], bob, 2, 0, record=tmp_path / "n.jsonl")
    assert result.accept_rate == 0.0
    record = next(iter(read_records(tmp_path / "n.jsonl")))
    decided = [entry for entry in record["aside"] if entry.get("decided") == "bob"]
    assert decided[0]["challenge"] == 1 and "certain catch" in decided[0]["why"]


def test_prover_estimator_llm_bob_estimates_his_models_doubt_not_a_rounded_bit(tmp_path: Path) -> None:
    """On caffeine's natural decomposition, whose answer is yes, honest Alice's proof is right.
    Bob's model gives her bit at one judged step probability 0.6 and is sure of the rest: his
    estimate of the root claim, P[every step right], is 0.6 (rounded to bits it was 1), and of
    each sub-claim in the first round the product over its own steps."""
    instance, machine = caffeine(True), caffeine(True).machine
    truth = truth_of(instance)
    honest = played(instance, frozenset(), truth)
    t = next(t for t in range(machine.length) if machine.kind(t) is StepKind.ORACLE)
    text = machine.rule(t, tuple(int(honest[a]) for a in machine.relevant(t))).text  # type: ignore[union-attr]
    llm = llm_of(instance, lambda q: (0.6 if truth[q] >= 0.5 else 0.4) if q == text else truth[q])
    spec = PROTOCOLS["prover-estimator"]
    bob = seats("prover-estimator")[Role.BOB](llm, Side.HONEST)
    run(spec, instance, spec.honest(Role.ALICE), bob, 1, 0, record=tmp_path / "p.jsonl")
    (record,) = read_records(tmp_path / "p.jsonl")
    estimates = {e["what"]: e["message"] for e in record["events"] if e.get("move") == "bob" and "message" in e}
    assert estimates["initial"] == pytest.approx(0.6)
    first = [e["message"] for e in record["events"] if e.get("move") == "bob" and e.get("what") == "conditional"][:2]
    assert sorted(first) == pytest.approx([0.6, 1.0])
