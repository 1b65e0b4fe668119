"""Playing and replaying stochastic-oracle debates: one interpreter of the rules in
:mod:`debatekit.protocols.stochastic`, for one debate or many at once.

:func:`simulate` plays debates ``debates`` (a range of indices of a run) step by step as numpy
arrays, one row per live debate. Every draw comes from the debate's own counter-based stream
(:mod:`debatekit.engine.streams`): nature's bit in the Lean form, each party's estimates, and the
players' own coins (``view.random()``). So debate i comes out the same played alone, in a batch
of 10^4, or replayed from its record: a single debate is a batch of one, and there is no second
interpreter to disagree with the first.

Each step, in the order of the form: Alice claims; in the paper form both send coin shares and
the bit is :func:`~debatekit.protocols.stochastic.coin_bit`; Bob accepts or aborts; after an
abort the verifier estimates with ``vera_samples`` queries and decides by
:meth:`~debatekit.protocols.stochastic.Rules.accepts`; else, in the Lean form, nature draws the bit
(:func:`~debatekit.protocols.stochastic.drawn_bit`). Every message is read once into a private
array (:func:`~debatekit.protocols.stochastic.as_numbers`, ``as_flags``) and whatever fails to read
is its sender's forfeit; players see read-only copies.

With ``keep`` each debate's record lists its events in order: each committed message, nature's
bits, and every oracle query with its role, question, count and answer (a count of yes among n
samples). :func:`replay` plays the record's messages and answers through :func:`simulate` again
(nature's bits come again from the debate's stream) and compares every event and count.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from debatekit.engine.play import describe
from debatekit.engine.streams import Streams, counter
from debatekit.engine.trust import charge
from debatekit.ledger import Role, Tally
from debatekit.machine.transcript import StepKind
from debatekit.oracle import Oracle, question_json
from debatekit.players.base import Seat, Strategy, own_copies
from debatekit.problems.registry import Instance
from debatekit.protocols import stochastic_solo as solo
from debatekit.protocols.stochastic import (
    CLAIM_BITS,
    Form,
    Rules,
    StepView,
    _bits_matrix,
    _conditional,
    _frozen,
    as_flags,
    as_numbers,
    claims_ok,
    coin_bit,
    conditionals,
    drawn_bit,
    machine_of,
    shares_ok,
)
from debatekit.protocols.stochastic_solo import NATURE, PLAYER_COINS, PURPOSE, SEAT
from debatekit.reader import word_width

BATCH = 4096
"""Debates per call in a run: memory stays at BATCH rows of the transcript whatever the trials."""


@dataclass
class _Events:
    """Per-debate events of a batch, kept as columns and laid out per debate at the end."""

    size: int
    columns: list[tuple[list[int], list[dict]]] = field(default_factory=list)

    def add(self, rows: np.ndarray, listed: list[dict]) -> None:
        """The k-th event of ``listed`` appended to the debate of the k-th of ``rows``."""
        if rows.size:
            self.columns.append((rows.tolist(), listed))

    def per_debate(self) -> list[list[dict]]:
        out: list[list[dict]] = [[] for _ in range(self.size)]
        for rows, listed in self.columns:
            for row, event in zip(rows, listed, strict=True):
                out[row].append(event)
        return out


def simulate(
    instance: Instance,
    rules: Rules,
    alice: Strategy,
    bob: Strategy,
    seed: int,
    debates: range,
    progress: Callable[[int], None] | None = None,
    keep: bool = False,
    *,
    provers: Oracle | None = None,
    events: list[dict] | None = None,
) -> Tally:
    """Debates ``debates`` of a run seeded ``seed`` (Figure 2 / Protocol.lean ``debate``), played
    at once. The verifier asks ``instance.oracle``; Alice and Bob ask ``provers`` (a model of the
    judge, say; default the same oracle): each party's view shows, and samples, its own. One
    debate is played by :func:`~debatekit.protocols.stochastic_solo.play` (``events``: its
    journaled list, from which it resumes)."""
    if len(debates) == 1 or not (alice.batched and bob.batched):
        tallies = [solo.play(instance, rules, alice, bob, seed, i, keep, provers=provers, events=events)
                   for i in debates]  # fmt: skip
        return tallies[0] if len(tallies) == 1 else Tally.concatenate(tallies)
    machine = machine_of(instance)
    steps, offset, n = machine.length, machine.offset, len(debates)
    consulted = {Role.VERIFIER: instance}
    consulted[Role.ALICE] = consulted[Role.BOB] = instance if provers is None else replace(instance, oracle=provers)
    views = {Role.ALICE: 0, Role.BOB: 0, Role.VERIFIER: 1}  # the row of a step's probabilities each party sees
    streams = Streams(seed, np.arange(debates.start, debates.stop))
    events = _Events(n) if keep else None
    queries = {role: np.zeros(n, dtype=np.int64) for role in Role}
    first = streams.generator(0, counter(0, SEAT))  # a seat's own generator: its batch's first debate's
    players: dict[Role, Any] = {}
    seated = own_copies(consulted[Role.BOB], {Role.ALICE: alice, Role.BOB: bob})
    for role, chosen in ((Role.ALICE, alice), (Role.BOB, bob)):
        try:
            players[role] = chosen.factory(Seat(seated[role], role, first, None, rules))  # type: ignore[arg-type]
        except Exception as err:  # untrusted strategy code failed to sit down: every call will fail
            charge(role, err, chosen.trusted)
            players[role] = err
    verdicts = np.full(n, -1)
    forfeits = np.zeros(n, dtype=np.int8)
    reasons: dict[Role, str] = {}
    values = np.zeros((n, offset + steps), dtype=np.uint8, order="F")  # one column per step
    values[:, : machine.n_inputs] = instance.x
    alive = np.ones(n, dtype=bool)
    ended = False  # some debate ended since the live rows were last listed
    history = np.asarray(memoryview(values).toreadonly())  # players' view: cannot be made writable

    def forfeit(rows: np.ndarray, role: Role, what: str, reason: str, t: int | None = None) -> None:
        nonlocal ended
        if rows.size:
            ended = True
            verdicts[rows] = 0 if role is Role.ALICE else 1
            forfeits[rows] = 1 if role is Role.ALICE else 2
            alive[rows] = False
            reasons.setdefault(role, reason)
            if events is not None:
                events.add(rows, [{"move": role.value, "what": what, "t": t, "forfeit": reason} for _ in rows])

    def call(role: Role, method: Callable[[Any], Callable[..., Any]], *args: Any) -> Any:
        """``method(player)(*args)``, the player's move (``method`` picks it, as
        ``lambda alice: alice.claims``), or the exception a failing player raised (its debates
        forfeit)."""
        player = players[role]
        if isinstance(player, Exception):
            reasons.setdefault(role, describe(player))
            return player
        try:
            return method(player)(*args)
        except Exception as err:  # untrusted strategy code: its debates are forfeited
            charge(role, err, (alice if role is Role.ALICE else bob).trusted)
            reasons.setdefault(role, describe(err))
            return err

    def committed(rows: np.ndarray, role: Role, what: str, message: np.ndarray, t: int, mask: Any = None) -> None:
        """Record ``message`` (where ``mask`` holds) as committed, when events are kept."""
        if events is not None:
            if mask is not None:
                rows, message = rows[mask], message[mask]
            plain = message.tolist()  # only what committed: finite claims and shares, 0/1 decisions
            events.add(rows, [{"move": role.value, "what": what, "t": t, "message": m} for m in plain])

    if machine.n_witness:
        w = call(Role.ALICE, lambda alice: alice.witness, n)
        w = np.full((n, machine.n_witness), -1) if isinstance(w, Exception) else _bits_matrix(w, n, machine.n_witness)
        bad = (w < 0).any(axis=1)
        forfeit(np.flatnonzero(bad), Role.ALICE, "witness", "the witness is not a matrix of bits")
        values[:, machine.n_inputs : offset] = np.where(w < 0, 0, w)
        good = np.flatnonzero(~bad)
        if events is not None:
            witness = values[good, machine.n_inputs : offset].tolist()
            events.add(good, [{"move": "alice", "what": "witness", "t": None, "message": w} for w in witness])

    calls: dict[tuple[int, int], int] = {}

    def next_count(t: int, purpose: int) -> int:
        k = calls.get((t, purpose), 0)
        calls[(t, purpose)] = k + 1
        return counter(t, purpose, k)

    def questions(view: StepView) -> list:
        relevant = values[np.ix_(view.rows, machine.relevant(view.t))]
        return [machine.rule(view.t, tuple(int(b) for b in row)) for row in relevant]

    def sampler_for(role: Role) -> Callable[[StepView, int], np.ndarray]:
        def sample(view: StepView, count: int) -> np.ndarray:
            if view.kind is not StepKind.ORACLE:
                return np.array(view.probabilities, dtype=float)
            at = next_count(view.t, PURPOSE[role])
            queries[role][view.rows] += count
            if not np.isnan(view.probabilities).any():  # known: one binomial draw for `count` queries
                yes = streams.binomial(view.rows, at, count, view.probabilities)
            else:  # sample-only: ask each debate's question
                asked = zip(view.rows.tolist(), questions(view), strict=True)
                oracle = consulted[role].oracle
                yes = np.array([oracle.sample_count(q, count, streams.generator(r, at)) for r, q in asked])
            if events is not None:
                said = zip((question_json(q) for q in questions(view)), yes.tolist(), strict=True)
                events.add(
                    view.rows,
                    [{"query": role.value, "t": view.t, "question": q, "n": count, "answer": int(a)} for q, a in said],
                )
            return yes / count

        return sample

    def coins_for(role: Role) -> Callable[[StepView], np.ndarray]:
        return lambda view: streams.uniform(view.rows, next_count(view.t, PLAYER_COINS + PURPOSE[role]))

    samplers = {role: sampler_for(role) for role in Role}
    coins = {role: coins_for(role) for role in (Role.ALICE, Role.BOB)}
    width = word_width(steps + 1)
    bits_read = np.full(n, width, dtype=np.int64)  # V reads Bob's word: the abort step, or none
    input_bits_read = np.zeros(n, dtype=np.int64)
    rows = np.arange(n)
    for t in range(steps):
        if ended:  # some debates ended last step: find the live ones again
            ended, rows = False, np.flatnonzero(alive)
        if rows.size == 0:
            break
        relevant = machine.relevant(t)
        p_provers = _probabilities(machine, t, consulted[Role.BOB], values, rows)
        p = np.broadcast_to(p_provers, (2, rows.size))
        if consulted[Role.BOB] is not instance:
            p = np.stack([p_provers, _probabilities(machine, t, instance, values, rows)])

        def view(role: Role, live: np.ndarray = rows, probs: np.ndarray = p, step: int = t) -> StepView:
            # Players get read-only copies: nothing they do can change what the verifier uses.
            return StepView(
                step, steps, machine.kind(step), _frozen(live), _frozen(probs[views[role]]), rules, samplers[role],
                history, offset + step, coins.get(role),
            )  # fmt: skip

        claims = as_numbers(call(Role.ALICE, lambda alice: alice.claims, view(Role.ALICE)), rows.size)
        good = claims_ok(claims)
        if not good.all():
            forfeit(rows[~good], Role.ALICE, "claim", "a claim that is not a probability in [0, 1]", t)
            rows, claims, p = _kept(good, rows, claims, p)
        committed(rows, Role.ALICE, "claim", claims, t)
        if rules.form is Form.paper:
            a = as_numbers(call(Role.ALICE, lambda alice: alice.shares, view(Role.ALICE, rows, p)), rows.size)
            a_ok = shares_ok(a)
            forfeit(rows[~a_ok], Role.ALICE, "share", "a coin share outside [0, 1)", t)
            committed(rows, Role.ALICE, "share", a, t, a_ok)
            b = as_numbers(call(Role.BOB, lambda bob: bob.shares, view(Role.BOB, rows, p)), rows.size)
            both = a_ok & shares_ok(b)
            forfeit(rows[a_ok & ~shares_ok(b)], Role.BOB, "share", "a coin share outside [0, 1)", t)
            committed(rows, Role.BOB, "share", b, t, both)
            rows, claims, p, a, b = _kept(both, rows, claims, p, a, b)
            bits = coin_bit(claims, a, b).astype(np.uint8)
        else:
            bits = None
        seen = _frozen(claims), None if bits is None else _frozen(bits)
        flags = as_flags(call(Role.BOB, lambda bob: bob.aborts, view(Role.BOB, rows, p), *seen), rows.size)
        if (flags < 0).any():
            forfeit(rows[flags < 0], Role.BOB, "abort", "an abort decision that is not a bit", t)
        committed(rows, Role.BOB, "abort", flags, t, flags >= 0)
        stop = flags == 1
        if stop.any():
            ended = True
            judged = rows[stop]
            estimate = view(Role.VERIFIER, judged, p[:, stop]).estimate(rules.vera_samples)
            verdicts[judged] = rules.accepts(claims[stop], estimate)
            alive[judged] = False
            prover = sum(a >= machine.n_inputs for a in relevant)
            bits_read[judged] += CLAIM_BITS + prover
            input_bits_read[judged] += len(relevant) - prover
        go = flags == 0
        if bits is None:
            bits = drawn_bit(claims, streams.uniform(rows, counter(t, NATURE))).astype(np.uint8)
            if events is not None:
                events.add(rows[go], [{"chance": "bit", "t": t, "outcome": b} for b in bits[go].tolist()])
        live, drawn = _kept(go, rows, bits)
        values[slice(None) if live.size == n else live, offset + t] = drawn
        if progress:
            progress(n * (t + 1) // steps)
    finished = np.flatnonzero(alive)
    verdicts[finished] = values[finished, -1]
    bits_read[finished] += 1  # a_T
    forfeited = {Role.ALICE: int((forfeits == 1).sum()), Role.BOB: int((forfeits == 2).sum())}
    records = None
    if events is not None:
        records = [
            {
                "events": listed,
                "verdict": int(verdicts[k]),
                "forfeit": None if forfeits[k] == 0 else (Role.ALICE if forfeits[k] == 1 else Role.BOB).value,
                "reason": next((e["forfeit"] for e in listed if "forfeit" in e), ""),
                "queries": {role.value: int(queries[role][k]) for role in Role},
                "bits_read": int(bits_read[k]),
                "input_bits_read": int(input_bits_read[k]),
            }
            for k, listed in enumerate(events.per_debate())
        ]
    return Tally(verdicts, queries, bits_read, input_bits_read, forfeited, reasons, records=records)


def _kept(mask: np.ndarray, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The entries of each array (its last axis) where ``mask`` holds; the arrays themselves when it
    holds everywhere, as it does in every step honest players play."""
    if mask.all():
        return arrays
    return tuple(array.compress(mask, axis=-1) for array in arrays)


def _probabilities(machine: Any, t: int, instance: Instance, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """P[y_t = 1 | a_{I(t)}] under ``instance``'s oracle for each debate in ``rows`` (NaN where a
    sample-only oracle does not give it)."""
    relevant = machine.relevant(t)
    if all(a < machine.n_inputs for a in relevant):  # reads only x: the same in every debate
        return np.full(rows.size, _conditional(machine, t, tuple(int(instance.x[a]) for a in relevant), instance))
    return conditionals(machine, t, values[np.ix_(rows, relevant)], instance)
