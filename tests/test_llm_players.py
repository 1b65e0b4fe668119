"""LLM players (issue 11, item 3) against a scripted OpenAI-compatible server on 127.0.0.1 (real
HTTP, the official client, no network). The server answers each judgement from the plan's ground
truth, or with a scripted lie, with first-token log-probabilities, so every outcome is known in
advance: an LLM that answers the truth plays as the theorems' honest players do, a lie is caught
by cross-examination, and a malformed, out-of-range, too long or late answer is its sender's
forfeit with the reason in the record. The caches make a rerun free, and the command line runs
it end to end (``llm:scripted/MODEL`` with ``DEBATEKIT_SCRIPTED_BASE_URL``)."""

from __future__ import annotations

import importlib
import json
import math
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")
pytest.importorskip("tenacity")

from debatekit.analysis.montecarlo import RunResult, make_instance, run
from debatekit.cli.main import main
from debatekit.engine.record import read_records, replay
from debatekit.ledger import Role
from debatekit.llm.backend import Completion, Request, Unparseable
from debatekit.llm.judge import OutOfRange, TooLong, read
from debatekit.llm.players import llm_strategy
from debatekit.players.base import Strategy
from debatekit.problems import PROBLEMS
from debatekit.problems.plan import Ask
from debatekit.problems.plan_file import PLANS, load
from debatekit.protocols.prover_estimator import Rules
from debatekit.protocols.registry import PROTOCOLS
from debatekit.protocols.stochastic.params import Constants
from debatekit.protocols.stochastic.rules import rules_for
from debatekit.protocols.stochastic.spec import StochasticParams
from llm_server import Reply, Server, chat, serving

FLOOR = -40.0
"""The log-probability of the answer a certain model does not give (P = 1 to double precision)."""
TRUTHFUL, LIAR = "truthful", "liar"
"""The scripted models: one answers every question as the plan's ground truth says, the other
lies where the test says."""


@pytest.fixture
def http() -> Iterator[Server]:
    """A server for each test: a call left running by an earlier test (an abandoned move's thread,
    a forfeited player's remaining questions) goes to that test's server, now closed, and is never
    counted or answered by this test's script."""
    yield from serving()


def truths(problem: str, truth: bool) -> dict[str, float]:
    """P[yes] of each judged step's question text, from the built-in plan's ground truth."""
    plan = next(p for p in load(PLANS / f"{problem}.toml") if p.truth is truth)
    return {step.text: step.p_yes for step in plan.steps if isinstance(step, Ask)}


def step_of(problem: str, ident: str) -> int:
    """The index t of the plan's step ``ident``."""
    return [step.id for step in load(PLANS / f"{problem}.toml")[0].steps].index(ident)


def said(p: float) -> Reply:
    """A one-token answer whose first token's log-probabilities give P[yes] = p."""
    yes, no = (math.log(p) if p > 0 else FLOOR), (math.log(1 - p) if p < 1 else FLOOR)
    top = (("Yes", yes), ("No", no)) if p >= 0.5 else (("No", no), ("Yes", yes))
    return Reply(chat(top[0][0], top, prompt=100))


def judging(problem: str, truth: bool, lies: dict[str, float] | None = None) -> Callable[[dict[str, Any]], Reply]:
    """The script: each request's question is found in the plan and answered with its ground
    truth, by the model ``liar`` with the P[yes] in ``lies`` (by step id) where it lies."""
    answers = truths(problem, truth)
    plan = load(PLANS / f"{problem}.toml")[0]
    texts = {step.id: text for step, text in zip((s for s in plan.steps if isinstance(s, Ask)), answers, strict=True)}
    lied = {texts[ident]: p for ident, p in (lies or {}).items()}

    def reply(body: dict[str, Any]) -> Reply:
        prompt = body["messages"][-1]["content"]
        (text,) = [text for text in answers if f"Question: {text}\n" in prompt]
        return said(lied.get(text, answers[text]) if body["model"] == LIAR else answers[text])

    return reply


def environ(http: Server, tmp_path: Path) -> dict[str, str]:
    return {
        "DEBATEKIT_SCRIPTED_BASE_URL": http.url,
        "DEBATEKIT_SCRIPTED_API_KEY": "sk-test",
        "DEBATEKIT_LLM_CACHE": str(tmp_path / "llm.sqlite"),
    }


def llm(protocol: str, role: Role, env: dict[str, str], model: str = TRUTHFUL) -> Strategy:
    return llm_strategy(PROTOCOLS[protocol], role, f"scripted/{model}", environ=env)


def played(
    protocol: str, problem: str, truth: bool, alice: Strategy, bob: Strategy, path: Path, trials: int = 2, **kw: Any
) -> tuple[RunResult, list[dict[str, Any]]]:
    """A recorded run and its records, each checked to replay."""
    spec = kw.pop("spec", PROTOCOLS[protocol])
    instance = make_instance(PROBLEMS[problem], PROBLEMS[problem].default_size, truth, 0)
    result = run(spec, instance, alice, bob, trials, 3, record=path, **kw)
    records = list(read_records(path))
    assert len(records) == trials
    assert all(replay(record, spec, instance).reproduced for record in records)
    return result, records


def honest(protocol: str, role: Role) -> Strategy:
    return PROTOCOLS[protocol].honest(role)


def calls_of(record: dict[str, Any], role: Role) -> list[dict[str, Any]]:
    return [entry for entry in record.get("aside", []) if entry.get("llm") == role.value]


# -- reading an answer -----------------------------------------------------------------------------


def completion(text: str, *top: tuple[str, float], tokens: int = 1) -> Completion:
    return Completion(text, 20, tokens, "length", (top,) if top else ())


def test_an_answer_is_read_from_logprobs_or_else_from_its_text() -> None:
    asked = Request("m", (("user", "Is it?"),), max_tokens=1, top_logprobs=20)
    mostly_yes = completion("Yes", ("Yes", math.log(0.6)), (" no", math.log(0.2)), ("The", -1.0))
    estimate = read(mostly_yes, asked)
    assert estimate.p_yes == pytest.approx(0.75) and estimate.dropped == pytest.approx(0.2)  # renormalised over yes, no
    assert read(completion("Yes."), asked).p_yes == 1.0 and read(completion(" no"), asked).p_yes == 0.0  # no logprobs
    assert read(completion("Yes."), asked).estimator == "answer"
    with pytest.raises(Unparseable, match="neither yes nor no"):
        read(completion("Perhaps"), asked)
    with pytest.raises(OutOfRange, match="out of range"):
        read(completion("Yes", ("Yes", float("nan")), ("No", -1.0)), asked)
    with pytest.raises(TooLong, match="2 tokens"):
        read(completion("Yes", ("Yes", -0.1), tokens=2), asked)


# -- cross-examination ----------------------------------------------------------------------------


@pytest.mark.parametrize("truth", [True, False])
def test_a_truthful_llm_alice_writes_the_true_transcript_and_honest_bob_accepts(http, tmp_path, truth) -> None:
    http.play(judging("caffeine", truth))
    env = environ(http, tmp_path)
    result, records = played(
        "cross-exam", "caffeine", truth, llm("cross-exam", Role.ALICE, env), honest("cross-exam", Role.BOB),
        tmp_path / "r.jsonl",
    )  # fmt: skip
    assert result.accept_rate == float(truth) and result.honest_win_rate == 1.0
    assert result.forfeits == {"alice": 0, "bob": 0} and result.alice_queries_mean == 0  # a model is not the judge
    for record in records:
        moves = [e for e in record["events"] if "move" in e]
        assert moves[1] == {"move": "bob", "message": None}  # accepted
        calls = calls_of(record, Role.ALICE)
        assert len(calls) == 10 == len({c["prompt"] for c in calls})  # each judged step asked once
        for call in calls:
            assert call["model"] == f"scripted/{TRUTHFUL}" and "Question: " in call["prompt"]
            assert call["completion"] in ("Yes", "No") and min(call["p_yes"], 1 - call["p_yes"]) < 1e-12
            assert call["prompt_tokens"] == 100 and call["completion_tokens"] == 1
    assert [c["cached"] for c in calls_of(records[1], Role.ALICE)] == [True] * 10  # debate 1 asks what debate 0 did
    assert http.calls == 10


def test_a_scripted_lie_is_caught_by_honest_bobs_cross_examination(http, tmp_path) -> None:
    """In the variant (the answer is no) Study D finds no improvement; the liar says it does,
    which makes her pooled conclusion yes. Honest Bob names that step, and the judge refutes it."""
    http.play(judging("caffeine", False, {"finds-d": 1.0}))
    env = environ(http, tmp_path)
    result, records = played(
        "cross-exam", "caffeine", False, llm("cross-exam", Role.ALICE, env, LIAR), honest("cross-exam", Role.BOB),
        tmp_path / "r.jsonl",
    )  # fmt: skip
    lie = step_of("caffeine", "finds-d")
    assert result.accept_rate == 0.0 and result.verifier_queries_max == 1
    for record in records:
        sent = [e["message"] for e in record["events"] if "move" in e]
        assert sent[0]["bits"][lie] == "1" and sent[0]["bits"][-1] == "1"  # the lie, and the answer it buys
        assert sent[1] == lie
        (asked,) = [e for e in record["events"] if e.get("query") == "verifier"]
        assert asked["answer"] == 0 and record["verdict"] == 0


def test_llm_bob_cross_examines_a_fresh_copy_and_disputes_the_lie(http, tmp_path) -> None:
    """Alice's model lies; Bob's, asked each step afresh, does not: he names the lie."""
    http.play(judging("caffeine", False, {"finds-d": 1.0}))
    env = environ(http, tmp_path)
    result, records = played(
        "cross-exam", "caffeine", False, llm("cross-exam", Role.ALICE, env, LIAR),
        llm("cross-exam", Role.BOB, env, TRUTHFUL), tmp_path / "r.jsonl",
    )  # fmt: skip
    assert result.accept_rate == 0.0 and result.bob_queries_mean == 0
    for record in records:
        assert [e["message"] for e in record["events"] if "move" in e][1] == step_of("caffeine", "finds-d")
        questions = [c["prompt"] for c in calls_of(record, Role.BOB)]
        assert len(questions) == 10 and all("Question: " in q for q in questions)


def test_llm_bob_accepts_the_honest_transcript_from_the_cache_of_alices_model(http, tmp_path) -> None:
    """One model for both: Bob's fresh questions are Alice's, word for word, so they cost no call."""
    http.play(judging("caffeine", True))
    env = environ(http, tmp_path)
    result, records = played(
        "cross-exam", "caffeine", True, llm("cross-exam", Role.ALICE, env), llm("cross-exam", Role.BOB, env),
        tmp_path / "r.jsonl",
    )  # fmt: skip
    assert result.accept_rate == 1.0 and http.calls == 10
    assert all(call["cached"] for record in records for call in calls_of(record, Role.BOB))


BAD = {
    "unparseable": (Reply(chat("Maybe", (("Maybe", -0.1), ("Perhaps", -2.0)))), "neither yes nor no"),
    "out-of-range": (Reply(chat("Yes", (("Yes", 2.0), ("No", -1.0)))), "out of range"),
    "too-long": (Reply(chat("Yes, because " + "the study " * 30, (("Yes", -0.1), ("No", -3.0)))), "one word"),
}


@pytest.mark.parametrize("kind", list(BAD))
def test_an_unusable_answer_is_the_senders_forfeit_with_its_reason(http, tmp_path, kind) -> None:
    reply, why = BAD[kind]
    http.play(reply)
    env = environ(http, tmp_path)
    result, records = played(
        "cross-exam", "caffeine", True, llm("cross-exam", Role.ALICE, env), honest("cross-exam", Role.BOB),
        tmp_path / "r.jsonl",
    )  # fmt: skip
    assert result.forfeits == {"alice": 2, "bob": 0} and result.accept_rate == 0.0
    for record in records:
        assert record["forfeit"] == "alice" and why in record["reason"] and "scripted/truthful" in record["reason"]
        (call,) = calls_of(record, Role.ALICE)
        assert why in call["error"]


def test_a_users_prompt_directory_replaces_the_packaged_judge_prompt(http, tmp_path) -> None:
    (tmp_path / "judge.txt").write_text("Q: $question$context\nYes or no?")
    http.play(said(1.0))
    env = environ(http, tmp_path) | {"DEBATEKIT_LLM_PROMPTS": str(tmp_path)}
    played(
        "cross-exam", "caffeine", True, llm("cross-exam", Role.ALICE, env), honest("cross-exam", Role.BOB),
        tmp_path / "r.jsonl", trials=1,
    )  # fmt: skip
    prompts = [body["messages"][-1]["content"] for body in http.bodies]
    assert len(prompts) == 10 and all(p.startswith("Q: Study ") and p.endswith("\nYes or no?") for p in prompts)


def test_a_model_slower_than_the_move_limit_is_the_senders_forfeit(http, tmp_path) -> None:
    http.play(Reply(chat("Yes", (("Yes", -0.1), ("No", -3.0))), delay=1.0))
    env = environ(http, tmp_path)
    result, records = played(
        "cross-exam", "caffeine", True, honest("cross-exam", Role.ALICE), llm("cross-exam", Role.BOB, env),
        tmp_path / "r.jsonl", trials=1, timeout=0.3,
    )  # fmt: skip
    assert result.forfeits == {"alice": 0, "bob": 1} and records[0]["reason"] == "no move within 0.3 s"


def test_a_cached_rerun_makes_no_model_call_and_plays_the_same_debates(http, tmp_path) -> None:
    http.play(judging("caffeine", False, {"finds-d": 1.0}))
    env = environ(http, tmp_path)
    players = llm("cross-exam", Role.ALICE, env, LIAR), llm("cross-exam", Role.BOB, env, TRUTHFUL)
    _, first = played("cross-exam", "caffeine", False, *players, tmp_path / "a.jsonl", trials=3)
    made = http.calls
    assert made == 20  # ten questions for each model, asked in debate 0 only
    _, again = played("cross-exam", "caffeine", False, *players, tmp_path / "b.jsonl", trials=3)
    assert http.calls == made
    for one, other in zip(first, again, strict=True):
        assert all(call["cached"] for call in other["aside"] if "prompt" in call)  # every model call
        assert {k: v for k, v in one.items() if k != "aside"} == {k: v for k, v in other.items() if k != "aside"}


# -- stochastic debate ------------------------------------------------------------------------------


def test_llm_alice_claims_her_models_probabilities_and_honest_bob_lets_them_stand(http, tmp_path) -> None:
    """code-review's judge is stochastic; the scripted model's P[yes] is the ground truth's, so every
    claim is the true conditional and honest Bob never aborts: the verdict is the last bit drawn."""
    http.play(judging("code-review", True))
    env = environ(http, tmp_path)
    result, records = played(
        "stochastic", "code-review", True, llm("stochastic", Role.ALICE, env), honest("stochastic", Role.BOB),
        tmp_path / "r.jsonl", trials=3,
    )  # fmt: skip
    machine = make_instance(PROBLEMS["code-review"], 10, True, 0).machine
    judge = make_instance(PROBLEMS["code-review"], 10, True, 0).oracle
    assert result.forfeits == {"alice": 0, "bob": 0} and result.verifier_queries_max == 0
    for record in records:
        events = record["events"]
        claims = [e["message"] for e in events if e.get("what") == "claim"]
        bits = [e["outcome"] for e in events if e.get("chance") == "bit"]
        assert [e["message"] for e in events if e.get("what") == "abort"] == [0] * 10
        for t, claim in enumerate(claims):  # P[y_t = 1 | a_{I(t)}] under the ground truth, exactly
            assert claim == pytest.approx(machine.conditional(t, tuple(bits[a] for a in machine.relevant(t)), judge))
        assert len(calls_of(record, Role.ALICE)) == 6 and record["verdict"] == bits[-1]


def test_a_lying_claim_makes_honest_bob_abort_and_the_verifier_reject(http, tmp_path) -> None:
    http.play(judging("code-review", True, {"bug-port": 0.6}))
    env = environ(http, tmp_path)
    result, records = played(
        "stochastic", "code-review", True, llm("stochastic", Role.ALICE, env, LIAR), honest("stochastic", Role.BOB),
        tmp_path / "r.jsonl",
    )  # fmt: skip
    rules = rules_for(Constants.planned, make_instance(PROBLEMS["code-review"], 10, True, 0).lipschitz, 10)
    assert result.accept_rate == 0.0 and result.verifier_queries_max == rules.vera_samples
    for record in records:
        moves = [e for e in record["events"] if "move" in e]
        assert moves[:2] == [{"move": "alice", "what": "claim", "t": 0, "message": 0.6},
                             {"move": "bob", "what": "abort", "t": 0, "message": 1}]  # fmt: skip
        assert record["verdict"] == 0


def test_paper_form_llm_players_share_coins_and_one_model_never_aborts_on_itself(http, tmp_path) -> None:
    http.play(judging("code-review", False))
    env = environ(http, tmp_path)
    spec = PROTOCOLS["stochastic"].with_params(StochasticParams(Constants.paper))
    result, records = played(
        "stochastic", "code-review", False, llm("stochastic", Role.ALICE, env), llm("stochastic", Role.BOB, env),
        tmp_path / "r.jsonl", spec=spec,
    )  # fmt: skip
    assert result.forfeits == {"alice": 0, "bob": 0}
    for record in records:
        events = record["events"]
        shares = {(e["move"], e["t"]): e["message"] for e in events if e.get("what") == "share"}
        claims = {e["t"]: e["message"] for e in events if e.get("what") == "claim"}
        assert len(shares) == 20 and all(0 <= s < 1 for s in shares.values())
        assert [e["message"] for e in events if e.get("what") == "abort"] == [0] * 10
        last = (shares["alice", 9] + shares["bob", 9]) % 1.0 <= claims[9]  # Figure 2 (c, d) at t = T
        assert record["verdict"] == int(last)


def test_an_unusable_estimate_is_bobs_forfeit_in_stochastic_debate(http, tmp_path) -> None:
    reply, why = BAD["out-of-range"]
    http.play(reply)
    env = environ(http, tmp_path)
    result, records = played(
        "stochastic", "code-review", True, honest("stochastic", Role.ALICE), llm("stochastic", Role.BOB, env),
        tmp_path / "r.jsonl",
    )  # fmt: skip
    assert result.forfeits == {"alice": 0, "bob": 2} and why in result.forfeit_reasons["bob"]
    for record in records:
        assert record["forfeit"] == "bob" and record["verdict"] == 1
        assert why in calls_of(record, Role.BOB)[0]["error"]


# -- the recursive protocols --------------------------------------------------------------------------


def test_prover_estimator_llm_alice_earns_the_honest_reward_against_algorithm_1(http, tmp_path) -> None:
    """A truthful model's beliefs are the correct answers, so she is Lemma A.5's honest A: she claims
    L(x), Algorithm 1's B estimates p_d near it, she says A^k = 0 throughout and earns r^(d+1)."""
    http.play(judging("bike-lanes", True))
    env = environ(http, tmp_path)
    result, records = played(
        "prover-estimator", "bike-lanes", True, llm("prover-estimator", Role.ALICE, env),
        honest("prover-estimator", Role.BOB), tmp_path / "r.jsonl",
    )  # fmt: skip
    unit = Rules().r ** 3
    assert result.accept_rate == 1.0 and result.verifier_queries_max == 1
    for record in records:
        assert record["claim"] == 1 and record["payoff"] == pytest.approx(unit)
        assert [e["message"] for e in record["events"] if e.get("what") == "direction"] == [0, 0, 0]
        calls = calls_of(record, Role.ALICE)  # hers: Algorithm 1 trains once per run, before any debate
        assert len(calls) == 9 and len({call["prompt"] for call in calls}) == 9  # each leaf of the claim tree


def test_prover_estimator_llm_bob_is_the_truthful_estimator_of_a_truthful_model(http, tmp_path) -> None:
    http.play(judging("bike-lanes", False))
    env = environ(http, tmp_path)
    result, records = played(
        "prover-estimator", "bike-lanes", False, PROTOCOLS["prover-estimator"].strategies[Role.ALICE]["wrong-answer"],
        llm("prover-estimator", Role.BOB, env), tmp_path / "r.jsonl",
    )  # fmt: skip
    assert result.accept_rate == 0.0
    for record in records:
        initial, *conditionals = [e["message"] for e in record["events"] if e.get("move") == "bob"]
        assert initial < 1e-12 and record["claim"] == 1 and record["payoff"] <= 0
        assert all(min(b, 1 - b) < 1e-12 for b in conditionals)


def test_naive_llm_bob_challenges_the_obfuscators_false_subclaim(http, tmp_path) -> None:
    """The obfuscator claims the true claim false and answers every subclaim alike; Bob's model
    believes each subclaim true, so he walks down to a leaf where the judge refutes her."""
    http.play(judging("bike-lanes", True))
    env = environ(http, tmp_path)
    result, records = played(
        "naive-recursive", "bike-lanes", True, PROTOCOLS["naive-recursive"].strategies[Role.ALICE]["obfuscate"],
        llm("naive-recursive", Role.BOB, env), tmp_path / "r.jsonl",
    )  # fmt: skip
    assert result.accept_rate == 1.0 and result.honest_win_rate == 1.0
    for record in records:
        assert record["payoff"] == 0.0 and record["claim"] == 0
        (asked,) = [e for e in record["events"] if e.get("query") == "verifier"]
        assert asked["question"][0] == "hospital" and asked["answer"] == 1


def test_naive_llm_players_defend_and_check_the_true_claim(http, tmp_path) -> None:
    http.play(judging("bike-lanes", True))
    env = environ(http, tmp_path)
    result, records = played(
        "naive-recursive", "bike-lanes", True, llm("naive-recursive", Role.ALICE, env),
        llm("naive-recursive", Role.BOB, env), tmp_path / "r.jsonl",
    )  # fmt: skip
    assert result.accept_rate == 1.0
    for record in records:
        splits = [e["message"] for e in record["events"] if e.get("what") == "decompose"]
        assert splits[0] == [["injuries-fell", "not-fewer-cyclists", "not-other-causes"], [1, 1, 1]]
        assert record["payoff"] == 1.0


def test_an_unusable_estimate_is_bobs_forfeit_in_prover_estimator_debate(http, tmp_path) -> None:
    reply, why = BAD["too-long"]
    http.play(reply)
    env = environ(http, tmp_path)
    result, records = played(
        "prover-estimator", "bike-lanes", True, honest("prover-estimator", Role.ALICE),
        llm("prover-estimator", Role.BOB, env), tmp_path / "r.jsonl",
    )  # fmt: skip
    assert result.forfeits == {"alice": 0, "bob": 2}
    for record in records:
        assert record["forfeit"] == "bob" and why in record["reason"] and record["reason"].startswith("initial raised")


def test_llm_players_refuse_decompositions_they_cannot_judge(http, tmp_path) -> None:
    strategy = llm("prover-estimator", Role.ALICE, environ(http, tmp_path))
    primes = make_instance(PROBLEMS["obfuscated-primality"], 24, True, 0)
    assert "claim tree or the natural decomposition" in strategy.refuses(primes)
    assert strategy.refuses(make_instance(PROBLEMS["caffeine"], 26, True, 0)) is None


# -- the command line -------------------------------------------------------------------------------


def test_each_protocol_declares_its_llm_players_for_both_roles() -> None:
    declared = {name: spec.llm for name, spec in PROTOCOLS.items() if spec.llm is not None}
    assert set(declared) == {"cross-exam", "stochastic", "prover-estimator", "naive-recursive"}
    for where in declared.values():
        module, _, attr = where.partition(":")
        assert set(getattr(importlib.import_module(module), attr)) == {Role.ALICE, Role.BOB}


def test_llm_players_on_a_query_complexity_protocol_are_a_usage_error(capsys) -> None:
    code = main(["run", "kw", "--problem", "parity", "--size", "4", "--alice", "llm:local/smollm2"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "kw has no LLM players" in err


@pytest.mark.parametrize(
    ("spec", "why"), [("llm:nowhere/m", "unknown model provider"), ("llm:smollm2", "PROVIDER/MODEL")]
)
def test_an_unusable_model_spec_is_a_usage_error(capsys, monkeypatch, spec, why) -> None:
    monkeypatch.delenv("DEBATEKIT_NOWHERE_BASE_URL", raising=False)
    code = main(["run", "cross-exam", "--problem", "caffeine", "--bob", spec])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and why in err


EXECUTABLE = shutil.which("debatekit") or str(Path(sys.executable).with_name("debatekit"))


def test_the_command_line_runs_llm_players_end_to_end_and_replay_and_show_read_the_record(http, tmp_path) -> None:
    http.play(judging("caffeine", True))
    env = os.environ | environ(http, tmp_path)
    record = tmp_path / "r.jsonl"

    def debatekit(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([EXECUTABLE, *argv], capture_output=True, text=True, env=env, timeout=300)

    ran = debatekit(
        "run", "cross-exam", "--problem", "caffeine", "--alice", f"llm:scripted/{TRUTHFUL}",
        "--bob", f"llm:scripted/{TRUTHFUL}", "--trials", "3", "--record", str(record), "--json",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    data = json.loads(ran.stdout)
    assert data["alice"] == data["bob"] == f"llm:scripted/{TRUTHFUL}" and data["accept_rate"] == 1.0
    assert data["guarantee"]["completeness"] == 1.0
    # Alice asks each of the 10 judged steps once (a transient failure may cost a retried attempt,
    # counted as a call); every other ask, hers in later debates and all of Bob's, is a cache hit.
    assert len({json.dumps(body, sort_keys=True) for body in http.bodies}) == 10
    assert f"note: llm:scripted/{TRUTHFUL} for alice: {http.calls} model calls, 20 from the cache" in ran.stderr
    assert f"note: llm:scripted/{TRUTHFUL} for bob: 0 model calls, 30 from the cache" in ran.stderr
    used = data["model_usage"][f"llm:scripted/{TRUTHFUL}"]  # the same counts, by role, in the run's JSON
    assert (used["alice"]["calls"], used["alice"]["cache_hits"], used["bob"]["calls"]) == (http.calls, 20, 0)
    assert used["alice"]["prompt_tokens"] > 0 and used["bob"]["cache_hits"] == 30
    replayed = debatekit("replay", str(record))
    assert replayed.returncode == 0 and "3 of 3 debates reproduce" in replayed.stdout
    shown = debatekit("show", str(record), "--debate", "2")
    assert shown.returncode == 0, shown.stderr
    assert "debate 2: alice llm:scripted/truthful vs bob llm:scripted/truthful" in shown.stdout
    assert "26 bits: " in shown.stdout and "1 (accept)" in shown.stdout and "20 model calls" in shown.stdout
