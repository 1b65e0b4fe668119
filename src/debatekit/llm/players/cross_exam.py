"""LLM players of cross-examination debate: Figure 1 and Theorem 5.3 of the doubly-efficient
debate paper (Figure 3 / Theorem 7.1 with a witness).

Alice writes the transcript a step by step: each compute step by its rule, each judged step as
her LLM judges its question (yes iff P[yes] >= 1/2), the question built from her own earlier bits
a_{I(t)}: Theorem 5.3's honest Alice with her model in place of the judge. A witness, where the
machine takes one, is the instance's, as the honest Alice sends it.

Bob cross-examines (Definition 5.2): he puts the question of every judged step, built from
Alice's claimed bits a_{I(t)}, to a fresh copy of his LLM, with no debate context (the prefix an
honest judge would see, so a step Alice's model already answered costs Bob a cache lookup when
both play one model), all at once. He has one challenge, so he spends it where a catch is likeliest
(issue 22): first a step the verifier settles without the judge, a certain catch (one reading or
writing a position that is not a bit, or a compute step whose bit does not follow from her bits
by its rule); else the judged step whose claimed bit his model finds least likely, when it finds
that bit less likely than not; else he accepts. Why is noted in the debate's aside (``decided``).

Liars (``llm-liar:PROVIDER/MODEL``, :class:`~debatekit.players.base.Side`) argue the answer
opposite to their model's. Alice flips the output of her model's transcript with the lie her
model finds most plausible (:meth:`~debatekit.llm.players.base.Judgements.lie`). Bob, believing
Alice's transcript (no certain catch, every judged bit at least as likely as not), challenges the
judged step whose bit his model finds least likely, where the judge is likeliest to side with his
lie; doubting it, he accepts, so that her lie stands. Each notes why in the aside (``lied``,
``decided``). The verifier is the judge: against the judge's answers a liar wins no more than
the theorem's soundness allows.

Departure: the theorem's honest players ask the oracle; these ask a model, so its completeness
and soundness promises hold of them only where the model answers as the judge does. The
verifier is unchanged and asks the run's oracle.
"""

from __future__ import annotations

import asyncio

import numpy as np

from debatekit.ledger import Role
from debatekit.llm.players.base import LLM, YES_AT, Judgements, strategy
from debatekit.machine.transcript import StepKind, TranscriptMachine
from debatekit.oracle import aside, settled
from debatekit.players.base import Seat, Side, Strategy
from debatekit.protocols.cross_exam import machine_of, parse_bits


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


class LiarAlice(Alice):
    """Alice on the side her model does not believe: the most plausible lie that flips her output
    (module docstring)."""

    def transcript(self) -> np.ndarray:
        instance = self.seat.instance
        witness = instance.witness if instance.witness is not None else np.zeros(0, dtype=np.uint8)
        inputs = np.concatenate([instance.x, witness]).astype(np.uint8)
        written, lies, why = settled(self.judgements.lie(machine_of(instance), inputs))
        aside({"lied": self.seat.role.value, "model": self.judgements.llm.name, "steps": lies, "why": why})
        return np.concatenate([witness, written]).astype(np.uint8)


class Bob:
    """Definition 5.2's cross-examination by a fresh copy of Bob's LLM, then the challenge most
    likely to catch a lie (module docstring)."""

    def __init__(self, seat: Seat, llm: LLM):
        self.seat, self.llm, self.judgements = seat, llm, Judgements(llm, seat.role)

    def challenge(self, message: np.ndarray) -> int | None:
        """A certain catch, else the judged step whose claimed bit is least likely, else None (accept)."""
        machine = machine_of(self.seat.instance)
        claimed = parse_bits(message)
        values = np.concatenate([self.seat.instance.x, np.maximum(claimed, 0)]).astype(np.uint8)
        step, why = self._certain(machine, claimed, values)
        if step is None:
            step, why = settled(self._least_likely(machine, values))
        aside({"decided": self.seat.role.value, "model": self.llm.name, "challenge": step, "why": why})
        return step

    def _certain(self, machine: TranscriptMachine, claimed: np.ndarray, values: np.ndarray) -> tuple[int | None, str]:
        """The first step the verifier settles against her without the judge, and why; (None, "") if none."""
        n, m = machine.n_inputs, machine.n_witness
        unreadable = {n + int(p) for p in np.flatnonzero(claimed < 0)}
        for t in range(machine.length):
            if n + m + t in unreadable or unreadable.intersection(machine.relevant(t)):
                return t, f"step {t} reads or writes a position that is not a bit: a certain catch"
            if machine.kind(t) is StepKind.COMPUTE:
                expected = int(machine.rule(t, tuple(int(values[a]) for a in machine.relevant(t))))  # type: ignore[arg-type]
                if expected != values[n + m + t]:
                    return t, (f"step {t} is computed by the verifier: her bit {values[n + m + t]} does not follow "
                               f"from her bits by its rule ({expected}), a certain catch")  # fmt: skip
        return None, ""

    async def _least_likely(self, machine: TranscriptMachine, values: np.ndarray) -> tuple[int | None, str]:
        """The judged step whose claimed bit his model gives the least probability, asked of it
        afresh on her bits (a position that is not a bit read as 0, as honest Bob reads it), when
        that probability is below 1/2; else accept."""
        offset = machine.n_inputs + machine.n_witness
        judged = [t for t in range(machine.length) if machine.kind(t) is StepKind.ORACLE]
        questions = [machine.rule(t, tuple(int(values[a]) for a in machine.relevant(t))) for t in judged]
        distinct = list(dict.fromkeys(questions))
        p_yes = dict(zip(distinct, await asyncio.gather(*map(self.judgements.p_yes, distinct)), strict=True))
        likely = [p_yes[q] if values[offset + t] else 1 - p_yes[q] for t, q in zip(judged, questions, strict=True)]
        if not likely or min(likely) >= YES_AT:
            return None, f"every judged step's claimed bit is at least as likely as not under the model ({len(judged)})"
        least = int(np.argmin(likely))
        return judged[least], (
            f"step {judged[least]} is judged; the model gives her bit {values[offset + judged[least]]} probability "
            f"{likely[least]:.3g}, the least of {len(judged)} judged steps, and no step is a certain catch"
        )


class LiarBob(Bob):
    """Bob on the side his model does not believe (module docstring): against a transcript he
    believes, the judge's likeliest disagreement; one he doubts he accepts."""

    def challenge(self, message: np.ndarray) -> int | None:
        machine = machine_of(self.seat.instance)
        claimed = parse_bits(message)
        values = np.concatenate([self.seat.instance.x, np.maximum(claimed, 0)]).astype(np.uint8)
        certain, _ = self._certain(machine, claimed, values)
        step, why = settled(self._against(machine, values, certain is None))
        aside({"decided": self.seat.role.value, "model": self.llm.name, "challenge": step, "why": why})
        return step

    async def _against(self, machine: TranscriptMachine, values: np.ndarray, readable: bool) -> tuple[int | None, str]:
        """His challenge and why, ``readable`` when no step is a certain catch."""
        judged = [t for t in range(machine.length) if machine.kind(t) is StepKind.ORACLE]
        found = await asyncio.gather(*(self.judgements.likelihood(machine, values, t) for t in judged))
        likely = dict(zip(judged, found, strict=True))
        if readable and all(p >= YES_AT for p in likely.values()):
            if not likely:
                return None, "he believes her transcript and no step is judged: nothing the judge could dispute"
            least = min(likely, key=likely.__getitem__)
            return least, (
                f"he believes her transcript; step {least} is judged and her bit {values[machine.offset + least]} has "
                f"the least probability under his model ({likely[least]:.3g}), the judge's likeliest disagreement"
            )
        return None, "he doubts her transcript (a certain catch, or a judged bit he finds unlikely): he lets it stand"


def alice(llm: LLM, side: Side = Side.HONEST) -> Strategy:
    if side is Side.LIAR:
        return strategy(
            llm, Role.ALICE, f"{llm.name} flips its own answer with the lie it finds most plausible",
            lambda s: LiarAlice(s, llm), side=side,
        )  # fmt: skip
    return strategy(llm, Role.ALICE, f"{llm.name} writes the transcript, judging each step", lambda s: Alice(s, llm))


def bob(llm: LLM, side: Side = Side.HONEST) -> Strategy:
    if side is Side.LIAR:
        return strategy(
            llm, Role.BOB, f"{llm.name} disputes what it believes, and lets stand what it doubts",
            lambda s: LiarBob(s, llm), side=side,
        )  # fmt: skip
    return strategy(
        llm, Role.BOB, f"{llm.name}, asked each step afresh, disputes a certain catch, else the least likely bit",
        lambda s: Bob(s, llm),
    )  # fmt: skip


PLAYERS = {Role.ALICE: alice, Role.BOB: bob}
"""Each role's LLM player (the protocol's ``ProtocolSpec.llm``)."""
