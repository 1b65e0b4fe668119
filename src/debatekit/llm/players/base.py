"""What every LLM player shares (issue 11, item 3): the LLM it consults, and one judgement asked
of it, read and noted in the debate's record.

Every honest LLM player here is its protocol's honest strategy with its LLM in place of the
judge, and every liar (:class:`~debatekit.players.base.Side`) argues against what its LLM
believes: where the honest player would ask the oracle a step's question, the LLM player asks its
model that question as a model of the judge is asked it (:meth:`ModelJudge.request
<debatekit.llm.judge.ModelJudge.request>`: its role and side's prompt, by default the judge's
``judge.txt``, with the question and its relevant coordinates I(t) as context lines; one token,
greedy, with the top log-probabilities)
and reads P[yes] from the first token (:func:`~debatekit.llm.backend.p_yes`). A call carries no
debate context: it is Definition 5.2's independent copy, "querying the same LLM with any previous
messages in the debate removed from the context" (doubly-efficient paper, Section 5.1). The
request is the whole cache key, so a question met before (asked by the other player of the same
model, or by a model of the judge) is answered from the cache; within one debate a question is
asked once for each role, by whichever copy of the player asks first (the debate's ``known``: a
fresh copy, such as the one A's committed proof is asked of, reuses the answer).

Model calls are not oracle queries: an LLM player asks the judge nothing, so its role's query
count stays 0. Each call is counted in the model's usage for the player's role and noted in the
debate's ``aside`` (:func:`~debatekit.oracle.aside`): the role, model, prompt, completion, P[yes],
tokens, whether the request was in the cache when asked, or the error the call ended in.

What a completion must be is what a model of the judge requires (:func:`~debatekit.llm.judge.read`).
An unusable answer (too long, out of range, neither yes nor no) raises from the player's move: its
sender forfeits, the reason in the record. A model that cannot be consulted (a timeout, a lost
connection, an HTTP 5xx after the retries, a refused request) is no argument of the player's: the
move raises :class:`~debatekit.oracle.Unanswered` and the debate is undecided. Where a protocol
needs a bit (a transcript), a judged step is yes iff P[yes] >= :data:`YES_AT`.

The players' methods are synchronous: each awaits its model calls through
:func:`~debatekit.oracle.settled`, so a player serves wherever it is called (the engine's worker
threads, Algorithm 1's tests of A, the recursive protocols' closing count of A's proof).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from debatekit.ledger import Role
from debatekit.llm.backend import ModelError, Rejected, Transient
from debatekit.llm.config import JUDGE, Prompt
from debatekit.llm.generation import Generation
from debatekit.llm.judge import ModelJudge
from debatekit.llm.model import Model
from debatekit.machine.transcript import StepKind, TranscriptMachine
from debatekit.oracle import Query, Unanswered, debating
from debatekit.players.base import Seat, Shape, Side, Strategy
from debatekit.problems.registry import Instance

YES_AT = 0.5
"""A judged step is yes, where a bit is needed, iff the model's P[yes] is at least this."""
MAX_PAIRED = 16
"""The most judged steps whose pairs a liar tries when no single lie flips its output."""


@dataclass(frozen=True)
class LLM:
    """The model an LLM player consults, named by its spec (``PROVIDER/MODEL``), the prompt it is
    asked through (default: the packaged ``judge.txt``, the judge's question), and how its
    judgements are generated (None: :class:`~debatekit.llm.generation.Generation`'s defaults)."""

    name: str
    model: Model
    prompt: Prompt = field(default_factory=lambda: Prompt.read((JUDGE,)))
    generation: Generation | None = None


class Judgements:
    """What one player (``role``) judges in one debate, each question asked of its LLM once
    (module docstring)."""

    def __init__(self, llm: LLM, role: Role):
        self.llm, self.role = llm, role
        self._judge = ModelJudge(llm.model, llm.prompt, role, llm.name, llm.generation)
        self._known: dict[Hashable, Any] = {}

    async def p_yes(self, question: Query) -> float:
        """The LLM's P[yes] on ``question`` (a :class:`~debatekit.oracle.Question`, or any query,
        asked as its JSON): once per debate and role, whichever copy of the player asks (once per
        player outside a debate)."""
        debate = debating()
        known = self._known if debate is None else debate.known
        key = ("p_yes", self.llm, self.role, question)
        if key not in known:
            known[key] = await self._asked(question)
        return known[key]

    async def _asked(self, question: Query) -> float:
        try:
            return await self._judge.judged(question, self.role)
        except (Transient, Rejected) as err:  # the model could not be consulted: no move of the player's
            raise Unanswered(f"llm:{self.llm.name}", f"{self.role.value}'s model: {type(err).__name__}: {err}") from err
        except ModelError as err:
            raise type(err)(f"{self.role.value}'s model {self.llm.name}: {err}") from err

    async def conditional(self, machine: TranscriptMachine, t: int, bits: tuple[int, ...]) -> float:
        """P[y_t = 1 | y_{I(t)} = bits] as this player believes it: its LLM's P[yes] on the
        question of an oracle step, the step's own value on a compute step (0 or 1) or a coin
        step (its probability)."""
        rule = machine.rule(t, bits)
        if machine.kind(t) is StepKind.ORACLE:
            return await self.p_yes(rule)
        return float(rule)  # type: ignore[arg-type]

    async def transcript(
        self, machine: TranscriptMachine, inputs: np.ndarray, lies: frozenset[int] = frozenset()
    ) -> np.ndarray:
        """y_1..y_T of a deterministic M on ``inputs`` (x, then w), step by step, each judged step
        yes iff P[yes] >= 1/2: Theorem 5.3's honest transcript with the LLM as the judge; the
        steps in ``lies`` flipped, every later step following from the bits before it."""
        values = np.zeros(machine.offset + machine.length, dtype=np.uint8)
        values[: machine.offset] = inputs
        for t in range(machine.length):
            bits = tuple(int(values[a]) for a in machine.relevant(t))
            values[machine.offset + t] = int(await self.conditional(machine, t, bits) >= YES_AT) ^ (t in lies)
        return values[machine.offset :]

    async def likelihood(self, machine: TranscriptMachine, values: np.ndarray, t: int) -> float:
        """How likely the bit at step ``t`` of ``values`` (x, w, then a transcript) is, as this
        player believes it, given the bits it reads."""
        p = await self.conditional(machine, t, tuple(int(values[a]) for a in machine.relevant(t)))
        return p if values[machine.offset + t] else 1 - p

    async def lie(self, machine: TranscriptMachine, inputs: np.ndarray) -> tuple[np.ndarray, list[int], str]:
        """The transcript that argues the answer opposite to this player's model with the lie it
        finds most plausible, the steps falsified, and why. Each judged step is tried flipped
        alone (then each pair, up to :data:`MAX_PAIRED` judged steps), every later step following
        from the bits before it (computed steps by their rule, so none is a certain catch; judged
        steps as the model judges them); of those whose output flips, the one whose least likely
        false bit is likeliest under the model, where a challenger's model is least likely to
        doubt it. With none, the output bit flipped (a computed step: a certain catch, said so)."""
        believed = await self.transcript(machine, inputs)
        judged = [t for t in range(machine.length) if machine.kind(t) is StepKind.ORACLE]
        tries = [frozenset([t]) for t in judged]
        if len(judged) <= MAX_PAIRED:
            tries += [frozenset(pair) for pair in itertools.combinations(judged, 2)]
        best: tuple[float, frozenset[int], np.ndarray] | None = None
        for size in (1, 2):
            for lies in (lies for lies in tries if len(lies) == size):
                written = await self.transcript(machine, inputs, lies)
                if written[-1] == believed[-1]:
                    continue
                values = np.concatenate([inputs, written])
                plausible = min([await self.likelihood(machine, values, t) for t in lies])
                if best is None or plausible > best[0]:
                    best = (plausible, lies, written)
            if best is not None:
                plausible, lies, written = best
                steps = sorted(lies)
                why = (
                    f"the model's answer is {int(believed[-1])}; falsifying judged step(s) {steps} (the least likely "
                    f"false bit has probability {plausible:.3g} under the model, the likeliest of the lies that flip "
                    f"the output) flips it to {int(written[-1])}, every computed step following by its rule"
                )
                return written, steps, why
        written = believed.copy()
        written[-1] ^= 1
        why = (
            f"no lie at one or two judged steps flips the model's answer {int(believed[-1])}: the output bit is "
            "flipped itself, a certain catch for a challenger who names it"
        )
        return written, [machine.length - 1], why


def strategy(
    llm: LLM,
    role: Role,
    description: str,
    factory: Callable[[Seat], Any],
    refuses: Callable[[Instance], str | None] | None = None,
    side: Side = Side.HONEST,
) -> Strategy:
    """An LLM player as a strategy (``llm:NAME``, a liar ``llm-liar:NAME``): untrusted (each move in
    a worker thread under the move time limit, its failures its own forfeit), playing stochastic
    debate on numbers, one debate a call."""
    name = f"llm:{llm.name}" if side is Side.HONEST else f"llm-{side.value}:{llm.name}"
    return Strategy(name, role, description, factory, refuses, shape=Shape.NUMBERS)
