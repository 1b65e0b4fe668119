"""LLM players of cross-examination debate: Figure 1 and Theorem 5.3 of the doubly-efficient
debate paper (Figure 3 / Theorem 7.1 with a witness).

Alice writes the transcript a step by step: each compute step by its rule, each judged step as
her LLM judges its question (yes iff P[yes] >= 1/2), the question built from her own earlier bits
a_{I(t)}: Theorem 5.3's honest Alice with her model in place of the judge. A witness, where the
machine takes one, is the instance's, as the honest Alice sends it.

Bob cross-examines (Definition 5.2): he puts the question of every judged step, built from
Alice's claimed bits a_{I(t)}, to a fresh copy of his LLM, with no debate context (the prefix an
honest judge would see, so a step Alice's model already answered costs Bob a cache lookup when
both play one model), all at once; then he is Theorem 5.3's honest Bob with those answers as his
judge: he names the first step whose claimed bit does not follow from her claimed bits (a compute
step by its rule, a judged step where his model answers otherwise, any step reading a position
that is not a bit), and accepts when there is none.

Departure: the theorem's honest players ask the oracle; these ask a model, so its completeness
and soundness promises hold of them only where the model answers as the judge does. The
verifier is unchanged and asks the run's oracle.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

import numpy as np

from debatekit.ledger import Ledger, Role
from debatekit.llm.players.base import LLM, YES_AT, Judgements, strategy
from debatekit.machine.transcript import StepKind
from debatekit.oracle import Asker, TableOracle, settled
from debatekit.players.base import Seat, Strategy
from debatekit.protocols.cross_exam import HonestBob, machine_of, parse_bits


class Alice:
    """Theorem 5.3's honest Alice with her LLM as the judge (module docstring)."""

    def __init__(self, seat: Seat, llm: LLM):
        self.seat, self.judgements = seat, Judgements(llm, seat.role)

    def transcript(self) -> np.ndarray:
        """w ‖ a."""
        instance = self.seat.instance
        witness = instance.witness if instance.witness is not None else np.zeros(0, dtype=np.uint8)
        inputs = np.concatenate([instance.x, witness]).astype(np.uint8)
        written = settled(self.judgements.transcript(machine_of(instance), inputs))
        return np.concatenate([witness, written]).astype(np.uint8)


class Bob:
    """Definition 5.2's cross-examination by a fresh copy of Bob's LLM, then Theorem 5.3's honest
    Bob with its answers as his judge (module docstring)."""

    def __init__(self, seat: Seat, llm: LLM):
        self.seat, self.judgements = seat, Judgements(llm, seat.role)

    def challenge(self, message: np.ndarray) -> int | None:
        """The first step that does not follow, or None (accept)."""
        judge = settled(self._judge(message))
        asker = Asker(judge, Role.BOB, Ledger(), self.seat.rng)  # a model's answers: no query of the judge
        return HonestBob(replace(self.seat, ask=asker)).challenge(message)

    async def _judge(self, message: np.ndarray) -> TableOracle:
        """His LLM's answer (1 iff P[yes] >= 1/2) to the question of every judged step, built from
        Alice's claimed bits (a position that is not a bit read as 0, as honest Bob reads it)."""
        instance, machine = self.seat.instance, machine_of(self.seat.instance)
        values = np.concatenate([instance.x, np.maximum(parse_bits(message), 0)]).astype(np.uint8)
        questions = list(
            dict.fromkeys(
                machine.rule(t, tuple(int(values[a]) for a in machine.relevant(t)))
                for t in range(machine.length)
                if machine.kind(t) is StepKind.ORACLE
            )
        )
        answers = await asyncio.gather(*(self.judgements.p_yes(q) for q in questions))
        return TableOracle({q: float(p >= YES_AT) for q, p in zip(questions, answers, strict=True)})


def alice(llm: LLM) -> Strategy:
    return strategy(llm, Role.ALICE, f"{llm.name} writes the transcript, judging each step", lambda s: Alice(s, llm))


def bob(llm: LLM) -> Strategy:
    return strategy(
        llm, Role.BOB, f"{llm.name}, asked each step afresh, disputes the first it judges otherwise",
        lambda s: Bob(s, llm),
    )  # fmt: skip


PLAYERS = {Role.ALICE: alice, Role.BOB: bob}
"""Each role's LLM player (the protocol's ``ProtocolSpec.llm``)."""
