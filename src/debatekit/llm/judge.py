"""An LLM's model of the judge: an :class:`~debatekit.oracle.Oracle` whose P[O(z)=1] is a model's
P[yes], read as its :class:`~debatekit.llm.generation.Generation` says: from the log-probabilities
of its first answer token (issue 11, item 4), or from n reasoned answers (issue 22, point 3).

The model is asked the question of ``z`` in words (a :class:`~debatekit.oracle.Question`'s text
under the lines of its relevant coordinates; any other query as its JSON) through the prompt
``judge.txt`` or the user's (:class:`~debatekit.llm.config.Prompt`), once per query: ``sample_count(z, r)``
is one binomial draw of r answers from that P[yes], so "r samples of the judge" cost one model
call, and a repeated query none (the model's cache). Departure from a person: the model answers
a query with the same P[yes] every time it is asked, so its r answers are independent draws from
one probability, not r separate judgements.

Its answers are awaitable (``waits``). What a one-token completion must be (:func:`read`): at most
:data:`MAX_ANSWER` characters and no more tokens than asked for (else :class:`TooLong`); the
log-probabilities of its first token finite and at most 0 (else :class:`OutOfRange`); yes or no
among them (else :class:`~debatekit.llm.backend.Unparseable`); a backend that gives no
log-probabilities must answer the text yes or no, read as certain. A reasoned completion
(:func:`reasoned`) has no more tokens than asked for; its final answer may be missing (a sample
that gave none). A completion is checked before it is cached, so an unusable one is asked again,
never kept. Each judgement is noted in the debate's ``aside`` (:meth:`ModelJudge.judged`): the
role, model, prompt, completion (the first sample's), P[yes] with its estimator
(:class:`~debatekit.llm.generation.Estimate`), tokens, whether it was in the cache, or the error
it ended in.

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
from debatekit.llm.backend import Completion, Message, ModelError, Request, Unparseable, yes_no_mass
from debatekit.llm.config import JUDGE, REASON, Prompt
from debatekit.llm.generation import Estimate, Generation, Mode, final_answer
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


def read(completion: Completion, request: Request) -> Estimate:
    """P[yes] in the one-token ``completion``, the answer to ``request``, with its estimator, or
    why it cannot be used (module docstring)."""
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
        yes, no = yes_no_mass(completion) or (0.0, 0.0)
        if yes + no > 0:
            return Estimate(yes / (yes + no), "logprobs", dropped=max(0.0, 1.0 - yes - no))
    else:
        p = {"yes": 1.0, "no": 0.0}.get(text.strip().strip(".!").lower())
        if p is not None:
            return Estimate(p, "answer")
    raise Unparseable(f"neither yes nor no in the answer {text!r}")


def reasoned(completion: Completion, request: Request) -> bool | None:
    """The final answer of a reasoned ``completion`` (:func:`~debatekit.llm.generation.final_answer`),
    None where it gives none; :class:`TooLong` past the tokens ``request`` allows."""
    if completion.completion_tokens > request.max_tokens:
        raise TooLong(f"{completion.completion_tokens} tokens, where at most {request.max_tokens} were asked for")
    return final_answer(completion.text)


def sampled(answers: list[bool | None]) -> Estimate:
    """P[yes] as the fraction of the answered samples that said yes; :class:`Unparseable` when none answered."""
    given = [a for a in answers if a is not None]
    if not given:
        raise Unparseable(f"no final yes or no in any of {len(answers)} reasoned answer(s)")
    yes = sum(given)
    return Estimate(yes / len(given), "samples", n=len(answers), yes=yes, unanswered=len(answers) - len(given))


class ModelJudge(Oracle):
    """Answers judgement queries from ``model``'s P[yes], generated as ``generation`` says, through
    ``prompt`` (default: the packaged ``judge.txt``, or ``reason.txt`` in ``reason`` mode;
    placeholders ``$question`` and ``$context``); ``name`` is the model's spec (``PROVIDER/MODEL``)
    as records and messages show it. Usage is counted for the role
    :func:`~debatekit.oracle.asking` names, else for ``role``."""

    waits = True

    def __init__(
        self,
        model: Model,
        prompt: Prompt | None = None,
        role: Role = Role.VERIFIER,
        name: str = "",
        generation: Generation | None = None,
    ):
        self.model, self.role, self.name = model, role, name or model.name
        self.generation = generation or Generation()
        self.answered: list[tuple[Query, float]] = []
        """Each query judged and its P[yes], in the order answered (shared by a seat's copies): what a
        run scores against the ground truth."""
        self.prompt = prompt or Prompt.read((REASON if self.generation.mode is Mode.REASON else JUDGE,))

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

    def request(self, query: Query, sample: int = 0) -> Request:
        """The model call that asks ``query`` (its ``sample``-th, seeded by it): in ``logprobs``
        mode one token with its top log-probabilities, in ``reason`` mode a reasoned answer."""
        if isinstance(query, Question):
            text, lines = query.text, query.context
        else:
            text, lines = json.dumps(question_json(query)), ()
        context = "".join(f"\nGiven: {line}" for line in lines)
        prompt = self.prompt.filled(text, context)
        g = self.generation
        system: tuple[Message, ...] = (("system", g.system),) if g.system else ()
        logprobs = TOP_LOGPROBS if g.mode is Mode.LOGPROBS else None
        return Request(self.model.name, (*system, ("user", prompt)), g.temperature, g.max_tokens, sample, logprobs)

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
        """The model's P[yes] for ``query``, asked for ``role`` (:meth:`estimated`)."""
        return (await self.estimated(query, role)).p_yes

    async def estimated(self, query: Query, role: Role) -> Estimate:
        """The model's P[yes] for ``query`` with its estimator, asked for ``role`` and noted in the
        debate's aside; the :class:`~debatekit.llm.backend.ModelError` the call ended in otherwise."""
        requests = [self.request(query, i) for i in range(self.generation.samples)]
        cache = self.model.cache
        endpoint = self.model.backend.endpoint
        cached = cache is not None and all(
            [await asyncio.to_thread(cache.get, cache_key(endpoint, r)) is not None for r in requests]
        )
        entry = {"llm": role.value, "model": self.name, "prompt": requests[0].messages[-1][1], "cached": cached}
        try:
            if self.generation.mode is Mode.LOGPROBS:
                (request,) = requests
                completions = [await self.model.complete(request, role, lambda done: read(done, request))]
            else:
                completions = list(
                    await asyncio.gather(
                        *(self.model.complete(r, role, lambda done, r=r: reasoned(done, r)) for r in requests)
                    )
                )
            entry |= {"completion": completions[0].text,
                      "prompt_tokens": sum(c.prompt_tokens for c in completions),
                      "completion_tokens": sum(c.completion_tokens for c in completions)}  # fmt: skip
            if self.generation.mode is Mode.LOGPROBS:
                estimate = read(completions[0], requests[0])
            else:
                estimate = sampled([reasoned(c, r) for c, r in zip(completions, requests, strict=True)])
        except ModelError as err:
            aside(entry | {"error": f"{type(err).__name__}: {err}"})
            raise
        aside(entry | {"p_yes": estimate.p_yes, "estimator": estimate.to_json()})
        self.answered.append((query, estimate.p_yes))
        return estimate

    def sample(self, query: Query, rng: np.random.Generator) -> Awaitable[int]:  # type: ignore[override]
        return self._count(query, 1, rng)

    def sample_count(self, query: Query, r: int, rng: np.random.Generator) -> Awaitable[int]:  # type: ignore[override]
        """The number of yes among ``r`` answers: one binomial draw from one call's P[yes]."""
        return self._count(query, r, rng)

    async def _count(self, query: Query, r: int, rng: np.random.Generator) -> int:
        return int(rng.binomial(r, await self.p_yes(query)))
