"""An LLM's model of the judge: an :class:`~debatekit.oracle.Oracle` whose P[O(z)=1] is a model's
P[yes] read from the log-probabilities of its first answer token (issue 11, item 4).

The model is asked the question of ``z`` in words (a :class:`~debatekit.oracle.Question`'s text
under the lines of its relevant coordinates; any other query as its JSON) through the prompt
``judge.txt`` (:func:`~debatekit.llm.config.prompt_text`), once per query: ``sample_count(z, r)``
is one binomial draw of r answers from that P[yes], so "r samples of the judge" cost one model
call, and a repeated query none (the model's cache). Departure from a person: the model answers
a query with the same P[yes] every time it is asked, so its r answers are independent draws from
one probability, not r separate judgements.

Its answers are awaitable (``waits``). A call that fails, or whose first token offers neither yes
nor no, raises a :class:`~debatekit.llm.backend.ModelError`, which the engine charges to whoever
asked; it never answers by default.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Awaitable
from pathlib import Path
from string import Template

import numpy as np

from debatekit.ledger import Role
from debatekit.llm.backend import Request, Unparseable, p_yes
from debatekit.llm.config import prompt_text
from debatekit.llm.model import Model
from debatekit.oracle import Oracle, Query, Question, asking, question_json

TOP_LOGPROBS = 20
"""Alternatives asked for at the answer token (the most the OpenAI API gives)."""


class ModelJudge(Oracle):
    """Answers judgement queries from ``model``'s P[yes]. ``prompts`` is a directory whose
    ``judge.txt`` replaces the packaged prompt (placeholders ``$question`` and ``$context``).
    Usage is counted for the role :func:`~debatekit.oracle.asking` names, else for ``role``."""

    waits = True

    def __init__(self, model: Model, prompts: Path | None = None, role: Role = Role.VERIFIER):
        self.model, self.role = model, role
        self._template = Template(prompt_text("judge.txt", prompts))
        self._template.substitute(question="", context="")  # a prompt with other placeholders fails here

    def __deepcopy__(self, memo: dict) -> ModelJudge:
        """A seat's own judge (each seat gets a deep copy of the instance, its oracle with it) on
        the same :class:`Model`: a live client (connections, a loaded model, locks) is a service
        every seat shares, with usage counted by the role asking, never something to copy."""
        copied = copy.copy(self)
        memo[id(self)] = copied
        return copied

    def request(self, query: Query) -> Request:
        """The model call that asks ``query``: one token, greedy, with its top log-probabilities."""
        if isinstance(query, Question):
            text, lines = query.text, query.context
        else:
            text, lines = json.dumps(question_json(query)), ()
        context = "".join(f"\nGiven: {line}" for line in lines)
        prompt = self._template.substitute(question=text, context=context)
        return Request(self.model.name, (("user", prompt),), max_tokens=1, top_logprobs=TOP_LOGPROBS)

    async def p_yes(self, query: Query) -> float:
        """The model's P[yes] for ``query``."""
        where = asking()
        completion = await self.model.complete(self.request(query), self.role if where is None else where.role)
        p = p_yes(completion)
        if p is None:
            raise Unparseable(f"{self.model.name}: neither yes nor no is a likely first token ({completion.text!r})")
        return p

    def sample(self, query: Query, rng: np.random.Generator) -> Awaitable[int]:  # type: ignore[override]
        return self._count(query, 1, rng)

    def sample_count(self, query: Query, r: int, rng: np.random.Generator) -> Awaitable[int]:  # type: ignore[override]
        """The number of yes among ``r`` answers: one binomial draw from one call's P[yes]."""
        return self._count(query, r, rng)

    async def _count(self, query: Query, r: int, rng: np.random.Generator) -> int:
        return int(rng.binomial(r, await self.p_yes(query)))
