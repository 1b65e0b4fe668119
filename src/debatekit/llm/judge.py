"""An LLM's model of the judge: an :class:`~debatekit.oracle.Oracle` whose P[O(z)=1] is a model's
P[yes] read from the log-probabilities of its first answer token (issue 11, item 4).

The model is asked the question of ``z`` in words (a :class:`~debatekit.oracle.Question`'s text
under the lines of its relevant coordinates; any other query as its JSON) through the prompt
``judge.txt`` or the user's (:class:`~debatekit.llm.config.Prompt`), once per query: ``sample_count(z, r)``
is one binomial draw of r answers from that P[yes], so "r samples of the judge" cost one model
call, and a repeated query none (the model's cache). Departure from a person: the model answers
a query with the same P[yes] every time it is asked, so its r answers are independent draws from
one probability, not r separate judgements.

Its answers are awaitable (``waits``). What a completion must be (:func:`read`): at most
:data:`MAX_ANSWER` characters and no more tokens than asked for (else :class:`TooLong`); the
log-probabilities of its first token finite and at most 0 (else :class:`OutOfRange`); yes or no
among them (else :class:`~debatekit.llm.backend.Unparseable`); a backend that gives no
log-probabilities must answer the text yes or no, read as certain. A completion is checked before
it is cached, so an unusable one is asked again, never kept. Each call is noted in the debate's
``aside`` (:meth:`ModelJudge.judged`): the role, model, prompt, completion, P[yes], tokens,
whether it was in the cache, or the error it ended in.

A call that fails after its retries, or whose answer is unusable, is no party's argument: the
judge raises :class:`~debatekit.oracle.Pending` when the verifier asked (the debate stays pending,
the run stops, ``--resume`` asks again) and :class:`~debatekit.oracle.Unanswered` when a prover
did (the debate is undecided). It never answers by default.
"""

from __future__ import annotations

import asyncio
import copy
import json
import math
from collections.abc import Awaitable
from typing import Any

import numpy as np

from debatekit.ledger import Role
from debatekit.llm.backend import Completion, ModelError, Request, Unparseable, p_yes
from debatekit.llm.config import JUDGE, Prompt
from debatekit.llm.model import Model, cache_key
from debatekit.oracle import Asking, Oracle, Pending, Query, Question, Unanswered, aside, asking, question_json

TOP_LOGPROBS = 20
"""Alternatives asked for at the answer token (the most the OpenAI API gives)."""
MAX_ANSWER = 64
"""The most characters an answer may have (a yes or a no is asked for, in one token)."""
LOGPROB_SLACK = 1e-6
"""How far above 0 a log-probability may round before it is out of range."""


class OutOfRange(Unparseable):
    """A completion whose log-probabilities are no log-probabilities (above 0, or not finite)."""


class TooLong(Unparseable):
    """A completion longer than a one-word answer."""


def read(completion: Completion, request: Request) -> float:
    """P[yes] in ``completion``, the answer to ``request``, or why it cannot be used (module docstring)."""
    text = completion.text
    if len(text) > MAX_ANSWER or completion.completion_tokens > request.max_tokens:
        raise TooLong(
            f"an answer of {len(text)} characters in {completion.completion_tokens} tokens, where one word "
            f"(at most {MAX_ANSWER} characters, {request.max_tokens} token(s)) was asked for: {text[:40]!r}..."
        )
    if completion.logprobs:
        bad = [lp for _, lp in completion.logprobs[0] if not (math.isfinite(lp) and lp <= LOGPROB_SLACK)]
        if bad:
            raise OutOfRange(f"a log-probability of {bad[0]!r} is out of range (a log-probability is at most 0)")
        p = p_yes(completion)
    else:
        p = {"yes": 1.0, "no": 0.0}.get(text.strip().strip(".!").lower())
    if p is None:
        raise Unparseable(f"neither yes nor no in the answer {text!r}")
    return p


class ModelJudge(Oracle):
    """Answers judgement queries from ``model``'s P[yes] through ``prompt`` (default: the packaged
    ``judge.txt``; placeholders ``$question`` and ``$context``); ``name`` is the model's spec
    (``PROVIDER/MODEL``) as records and messages show it. Usage is counted for the role
    :func:`~debatekit.oracle.asking` names, else for ``role``."""

    waits = True

    def __init__(self, model: Model, prompt: Prompt | None = None, role: Role = Role.VERIFIER, name: str = ""):
        self.model, self.role, self.name = model, role, name or model.name
        self.prompt = prompt or Prompt.read((JUDGE,))

    def __deepcopy__(self, memo: dict) -> ModelJudge:
        """A seat's own judge (each seat gets a deep copy of the instance, its oracle with it) on
        the same :class:`Model`: a live client (connections, a loaded model, locks) is a service
        every seat shares, with usage counted by the role asking, never something to copy."""
        copied = copy.copy(self)
        memo[id(self)] = copied
        return copied

    def judgements(self, where: Asking) -> list[dict[str, Any]]:
        """Who answered, for the record (``judges``): this model, not the problem's own oracle, so
        replay does not hold its answers to that oracle's."""
        return [{"model": f"llm:{self.name}"}]

    def request(self, query: Query) -> Request:
        """The model call that asks ``query``: one token, greedy, with its top log-probabilities."""
        if isinstance(query, Question):
            text, lines = query.text, query.context
        else:
            text, lines = json.dumps(question_json(query)), ()
        context = "".join(f"\nGiven: {line}" for line in lines)
        prompt = self.prompt.filled(text, context)
        return Request(self.model.name, (("user", prompt),), max_tokens=1, top_logprobs=TOP_LOGPROBS)

    async def p_yes(self, query: Query) -> float:
        """The model's P[yes] for ``query``, as an oracle answers: :class:`~debatekit.oracle.Pending`
        when the verifier's call fails, :class:`~debatekit.oracle.Unanswered` when a prover's does."""
        where = asking()
        role = self.role if where is None else where.role
        try:
            return await self.judged(query, role)
        except ModelError as err:
            failed = Pending if role is Role.VERIFIER else Unanswered
            raise failed(f"llm:{self.name}", f"{type(err).__name__}: {err}") from err

    async def judged(self, query: Query, role: Role) -> float:
        """The model's P[yes] for ``query``, asked for ``role`` and noted in the debate's aside;
        the :class:`~debatekit.llm.backend.ModelError` the call ended in otherwise."""
        request = self.request(query)
        cache = self.model.cache
        cached = cache is not None and (
            await asyncio.to_thread(cache.get, cache_key(self.model.backend.endpoint, request)) is not None
        )
        entry = {"llm": role.value, "model": self.name, "prompt": request.messages[-1][1], "cached": cached}
        try:
            completion = await self.model.complete(request, role, lambda done: read(done, request))
            entry |= {"completion": completion.text, "prompt_tokens": completion.prompt_tokens,
                      "completion_tokens": completion.completion_tokens}  # fmt: skip
            p = read(completion, request)
        except ModelError as err:
            aside(entry | {"error": f"{type(err).__name__}: {err}"})
            raise
        aside(entry | {"p_yes": p})
        return p

    def sample(self, query: Query, rng: np.random.Generator) -> Awaitable[int]:  # type: ignore[override]
        return self._count(query, 1, rng)

    def sample_count(self, query: Query, r: int, rng: np.random.Generator) -> Awaitable[int]:  # type: ignore[override]
        """The number of yes among ``r`` answers: one binomial draw from one call's P[yes]."""
        return self._count(query, r, rng)

    async def _count(self, query: Query, r: int, rng: np.random.Generator) -> int:
        return int(rng.binomial(r, await self.p_yes(query)))
