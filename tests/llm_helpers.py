"""What the LLM players' tests share: a scripted model backend and the ground truth it stands for."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np

from debatekit.llm.backend import Completion, Request
from debatekit.machine.transcript import StepKind
from debatekit.oracle import Question
from debatekit.problems import Instance


class Fake:
    """A backend whose P[yes] for a prompt is ``p_of(text)`` for the question ``text`` of ``texts``
    that it asks (kept inside (0, 1) for its log-probabilities), counting its calls."""

    endpoint = "fake://judge"

    def __init__(self, p_of: Callable[[str], float], texts: Iterable[str]):
        self.p_of, self.texts, self.calls = p_of, tuple(texts), 0

    async def complete(self, request: Request) -> Completion:
        self.calls += 1
        prompt = request.messages[-1][1]
        (text,) = [text for text in self.texts if f"Question: {text}\n" in prompt]
        p = min(max(self.p_of(text), 1e-12), 1 - 1e-12)
        top = (("Yes", math.log(p)), ("No", math.log(1 - p)))
        return Completion("Yes" if p >= 0.5 else "No", 10, 1, "length", (top,))


def truth_of(instance: Instance) -> dict[str, float]:
    """The judge's P[yes] on each judged question of the machine, whatever bits it is built from."""
    machine = instance.machine
    assert machine is not None
    found: dict[str, float] = {}
    for t in range(machine.length):
        if machine.kind(t) is StepKind.ORACLE:
            for bits in np.ndindex(*(2,) * len(machine.relevant(t))):
                question = machine.rule(t, tuple(bits))
                assert isinstance(question, Question)
                found[question.text] = instance.oracle.probability(question)
    return found
