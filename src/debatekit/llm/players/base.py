"""What every LLM player shares (issue 11, item 3): the LLM it consults, and one judgement asked
of it, read and noted in the debate's record.

Every LLM player here is its protocol's honest strategy with its LLM in place of the judge:
where the honest player would ask the oracle a step's question, the LLM player asks its model
that question exactly as a model of the judge is asked it (:meth:`ModelJudge.request
<debatekit.llm.judge.ModelJudge.request>`: the prompt ``judge.txt`` with the question and its
relevant coordinates I(t) as context lines; one token, greedy, with the top log-probabilities)
and reads P[yes] from the first token (:func:`~debatekit.llm.backend.p_yes`). A call carries no
debate context: it is Definition 5.2's independent copy, "querying the same LLM with any previous
messages in the debate removed from the context" (doubly-efficient paper, Section 5.1). The
request is the whole cache key, so a question met before (asked by the other player of the same
model, or by a model of the judge) is answered from the cache; within one player and debate a
question is asked once.

Model calls are not oracle queries: an LLM player asks the judge nothing, so its role's query
count stays 0. Each call is counted in the model's usage for the player's role and noted in the
debate's ``aside`` (:func:`~debatekit.oracle.aside`): the role, model, prompt, completion, P[yes],
tokens, whether the request was in the cache when asked, or the error the call ended in.

What a completion must be (:func:`read`): at most :data:`MAX_ANSWER` characters and no more tokens
than asked for (else :class:`TooLong`); the log-probabilities of its first token finite and at
most 0 (else :class:`OutOfRange`); yes or no among them (else
:class:`~debatekit.llm.backend.Unparseable`). A backend that gives no log-probabilities must
answer the text yes or no, read as certain. Such an answer, or a model call that fails after its
retries, raises from the player's move: its sender forfeits, the reason in the record. Where a
protocol needs a bit (a transcript), a judged step is yes iff P[yes] >= :data:`YES_AT`.

The players' methods are synchronous: each awaits its model calls through
:func:`~debatekit.oracle.settled`, so a player serves wherever it is called (the engine's worker
threads, Algorithm 1's tests of A, the recursive protocols' closing count of A's proof).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from debatekit.ledger import Role
from debatekit.llm.backend import Completion, ModelError, Request, Unparseable, p_yes
from debatekit.llm.judge import ModelJudge
from debatekit.llm.model import Model, cache_key
from debatekit.machine.transcript import StepKind, TranscriptMachine
from debatekit.oracle import Query, aside
from debatekit.players.base import Seat, Strategy
from debatekit.problems.registry import Instance

MAX_ANSWER = 64
"""The most characters an answer may have (a yes or a no is asked for, in one token)."""
YES_AT = 0.5
"""A judged step is yes, where a bit is needed, iff the model's P[yes] is at least this."""
LOGPROB_SLACK = 1e-6
"""How far above 0 a log-probability may round before it is out of range."""


class OutOfRange(Unparseable):
    """A completion whose log-probabilities are no log-probabilities (above 0, or not finite)."""


class TooLong(Unparseable):
    """A completion longer than a one-word answer."""


@dataclass(frozen=True)
class LLM:
    """The model an LLM player consults, named by its spec (``PROVIDER/MODEL``), and the directory
    whose ``judge.txt`` replaces the packaged prompt (None: the packaged one)."""

    name: str
    model: Model
    prompts: Path | None = None


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


class Judgements:
    """What one player (``role``) judges in one debate, each question asked of its LLM once
    (module docstring)."""

    def __init__(self, llm: LLM, role: Role):
        self.llm, self.role = llm, role
        self._judge = ModelJudge(llm.model, llm.prompts, role)
        self._known: dict[Query, float] = {}

    async def p_yes(self, question: Query) -> float:
        """The LLM's P[yes] on ``question`` (a :class:`~debatekit.oracle.Question`, or any query,
        asked as its JSON)."""
        if question not in self._known:
            self._known[question] = await self._asked(question)
        return self._known[question]

    async def _asked(self, question: Query) -> float:
        model, request = self.llm.model, self._judge.request(question)
        cached = model.cache is not None and (
            await asyncio.to_thread(model.cache.get, cache_key(model.backend.endpoint, request)) is not None
        )
        entry: dict[str, Any] = {"llm": self.role.value, "model": self.llm.name, "prompt": request.messages[-1][1],
                                 "cached": cached}  # fmt: skip
        try:
            completion = await model.complete(request, self.role)
            entry |= {"completion": completion.text, "prompt_tokens": completion.prompt_tokens,
                      "completion_tokens": completion.completion_tokens}  # fmt: skip
            p = read(completion, request)
        except ModelError as err:
            entry["error"] = f"{type(err).__name__}: {err}"
            aside(entry)
            raise type(err)(f"{self.role.value}'s model {self.llm.name}: {err}") from err
        aside(entry | {"p_yes": p})
        return p

    async def conditional(self, machine: TranscriptMachine, t: int, bits: tuple[int, ...]) -> float:
        """P[y_t = 1 | y_{I(t)} = bits] as this player believes it: its LLM's P[yes] on the
        question of an oracle step, the step's own value on a compute step (0 or 1) or a coin
        step (its probability)."""
        rule = machine.rule(t, bits)
        if machine.kind(t) is StepKind.ORACLE:
            return await self.p_yes(rule)
        return float(rule)  # type: ignore[arg-type]

    async def transcript(self, machine: TranscriptMachine, inputs: np.ndarray) -> np.ndarray:
        """y_1..y_T of a deterministic M on ``inputs`` (x, then w), step by step, each judged step
        yes iff P[yes] >= 1/2: Theorem 5.3's honest transcript with the LLM as the judge."""
        values = np.zeros(machine.offset + machine.length, dtype=np.uint8)
        values[: machine.offset] = inputs
        for t in range(machine.length):
            bits = tuple(int(values[a]) for a in machine.relevant(t))
            values[machine.offset + t] = int(await self.conditional(machine, t, bits) >= YES_AT)
        return values[machine.offset :]


def strategy(
    llm: LLM,
    role: Role,
    description: str,
    factory: Callable[[Seat], Any],
    refuses: Callable[[Instance], str | None] | None = None,
) -> Strategy:
    """An LLM player as a strategy: untrusted (each move in a worker thread under the move time
    limit, its failures its own forfeit), playing stochastic debate on numbers, one debate a call."""
    return Strategy(f"llm:{llm.name}", role, description, factory, refuses, scalar=True, batched=False)
