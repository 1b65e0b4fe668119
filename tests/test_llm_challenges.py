"""LLM Bob's strategic challenge in cross-examination (issue 22, point 2), with a fake model in
process (no network, no download): he has one challenge, so he spends it on a step the verifier
computes itself when one is wrong (a certain catch), else on the judged step whose claimed bit
his model finds least likely; the aside says why. Before, he named the first step his model
disagreed with, so a spurious doubt about a right judged step used his challenge and the lie
went through (SmolLM2 on caffeine, ``--truth no --alice lie-output``: accept 1.0)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tenacity")

from debatekit.analysis.montecarlo import make_instance, run
from debatekit.engine.record import read_records
from debatekit.ledger import Ledger, Role
from debatekit.llm.model import Limits, Model
from debatekit.llm.players.base import LLM, strategy
from debatekit.llm.players.cross_exam import Bob
from debatekit.machine.transcript import StepKind
from debatekit.oracle import Asker
from debatekit.players.base import Seat, Strategy
from debatekit.players.cross_exam import _consistent_lie, lie_output
from debatekit.problems import PROBLEMS
from debatekit.protocols.registry import PROTOCOLS
from llm_helpers import Fake, truth_of

CROSS_EXAM = PROTOCOLS["cross-exam"]


def llm_bob(p_of: Callable[[str], float], texts: Iterable[str]) -> tuple[Strategy, Fake]:
    fake = Fake(p_of, texts)
    llm = LLM("fake/judge", Model("judge", fake, Limits(max_connections=4, timeout=10.0, max_retries=0)))
    return strategy(llm, Role.BOB, "fake", lambda seat: Bob(seat, llm)), fake


def caffeine_no():
    return make_instance(PROBLEMS["caffeine"], PROBLEMS["caffeine"].default_size, False, 0)


def seat(instance, role: Role) -> Seat:
    rng = np.random.default_rng(0)
    return Seat(instance, role, rng, Asker(instance.oracle, role, Ledger(), rng))


def judged_steps(instance, message: np.ndarray) -> list[tuple[int, str, int]]:
    """Each judged step of ``message``: (t, its question's text, the claimed bit)."""
    machine = instance.machine
    return [
        (t, machine.rule(t, tuple(int(message[a]) for a in machine.relevant(t))).text, int(message[t]))
        for t in range(machine.length)
        if machine.kind(t) is StepKind.ORACLE
    ]


def challenged(instance, bob: Strategy, message: np.ndarray, path: Path) -> tuple[int | None, list[dict[str, Any]]]:
    """Bob's challenge of ``message`` and what he put aside, in a recorded one-debate run of a fixed Alice."""
    alice = Strategy("tests:fixed", Role.ALICE, "sends the message", lambda s: _Fixed(message))
    run(CROSS_EXAM, instance, alice, bob, 1, 0, record=path)
    (record,) = read_records(path)
    sent = [e["message"] for e in record["events"] if e.get("move") == "bob"]
    return sent[0], [entry for entry in record["aside"] if entry.get("decided") == "bob"]


class _Fixed:
    def __init__(self, message: np.ndarray):
        self.message = message

    def transcript(self) -> np.ndarray:
        return self.message


def test_a_wrong_computed_step_is_challenged_before_any_judged_doubt(tmp_path: Path) -> None:
    """The issue's case: a model that leans no on every question (as SmolLM2 does, P[yes] 0.4)
    doubts every judged step claimed yes; the flipped output bit is a computed step, a certain
    catch, and he names it: the lie is rejected."""
    instance = caffeine_no()
    message = lie_output(seat(instance, Role.ALICE)).message
    bob, fake = llm_bob(lambda text: 0.4, truth_of(instance))
    assert any(bit == 1 for _, _, bit in judged_steps(instance, message))  # a judged step he doubts
    step, decided = challenged(instance, bob, message, tmp_path / "r.jsonl")
    assert step == instance.machine.length - 1
    assert decided[0]["challenge"] == step and "certain catch" in decided[0]["why"]
    assert fake.calls == 0  # a certain catch needs no model call


def test_the_least_likely_judged_bit_is_challenged_not_the_first_doubted(tmp_path: Path) -> None:
    """Alice lies at one judged step (and computes the rest from it, so no computed step is
    wrong). Bob's model doubts every true yes a little (P[yes] 0.35) and the lie a lot: he
    challenges the step whose claimed bit it finds least likely, which is the lie; the first step
    it doubts is a true one, which would have spent his challenge for nothing."""
    instance = caffeine_no()
    machine, truth = instance.machine, truth_of(instance)
    honest = _consistent_lie(seat(instance, Role.ALICE), np.zeros(0, dtype=np.uint8), None)
    lies = [
        t
        for t, _, bit in judged_steps(instance, honest)
        if bit == 0 and (m := _consistent_lie(seat(instance, Role.ALICE), np.zeros(0, np.uint8), t))[-1] == 1
        and machine.first_error(instance.x, m, lambda q: int(truth[q.text] >= 0.5)) == t
    ]  # fmt: skip
    assert lies, "a judged lie that buys yes on its own"
    lie = lies[-1]
    message = _consistent_lie(seat(instance, Role.ALICE), np.zeros(0, dtype=np.uint8), lie)

    def p_of(text: str) -> float:
        return 0.35 if truth[text] >= 0.5 else 0.02

    bob, _ = llm_bob(p_of, truth)
    steps = judged_steps(instance, message)
    likely = {t: p_of(text) if bit else 1 - p_of(text) for t, text, bit in steps}
    doubted = [t for t in likely if likely[t] < 0.5]
    assert doubted[0] != lie  # the first doubt is about a right step
    step, decided = challenged(instance, bob, message, tmp_path / "r.jsonl")
    assert step == min(likely, key=likely.__getitem__) == lie
    assert "least of" in decided[0]["why"] and f"{likely[lie]:.3g}" in decided[0]["why"]
    result = run(CROSS_EXAM, instance, Strategy("tests:liar", Role.ALICE, "", lambda s: _Fixed(message)), bob, 2, 0)
    assert result.accept_rate == 0.0


def test_he_accepts_when_his_model_believes_every_bit(tmp_path: Path) -> None:
    instance = make_instance(PROBLEMS["caffeine"], PROBLEMS["caffeine"].default_size, True, 0)
    truth = truth_of(instance)
    bob, _ = llm_bob(lambda text: 0.9 if truth[text] >= 0.5 else 0.1, truth)
    result = run(CROSS_EXAM, instance, CROSS_EXAM.honest(Role.ALICE), bob, 1, 0, record=tmp_path / "r.jsonl")
    (record,) = read_records(tmp_path / "r.jsonl")
    (decided,) = [entry for entry in record["aside"] if entry.get("decided") == "bob"]
    assert decided["challenge"] is None and "at least as likely" in decided["why"]
    assert result.accept_rate == 1.0 and result.verifier_queries_max == 0
