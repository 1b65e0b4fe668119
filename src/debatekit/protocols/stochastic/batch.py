"""Stochastic-oracle debate's batch interpreter: many debates of a run at once, one numpy row per
live debate, answering :func:`debatekit.protocols.stochastic.rules.debate`.

:func:`simulate` plays debates ``debates`` (a range of indices of a run). Every draw comes from the
debate's own counter-based stream (:mod:`debatekit.engine.streams`): nature's bit in the Lean form,
each party's estimates, and the players' own coins (``view.random()``). So debate i comes out the same
played in a batch of 10^4 or alone by the scalar interpreter, :mod:`debatekit.protocols.stochastic.solo`,
which plays a single debate, players that are not batched, and replays (a test plays debates both
ways and compares records).

The rules (:func:`~debatekit.protocols.stochastic.rules.debate`) ask for each step's messages and
draws; this module answers for a whole batch: a ``where`` is an array over the step's rows, every
value the rules see has one entry per row of the step (a row that forfeited within the step keeps
a placeholder the rules never use: its abort flag is -1). Every message is read once into a private array
(:func:`~debatekit.protocols.stochastic.rules.as_numbers`, ``as_flags``) and whatever fails its
message's test is its sender's forfeit. Players see what the verifier uses through read-only buffers
(:func:`_read_only`: no copy, and no player can make them writable again).

With ``keep`` each debate's record lists its events in order (the rules' event functions): each
committed message, nature's bits, and every oracle query with its role, question, count and answer
(a count of yes among n samples).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from debatekit.engine.events import Event
from debatekit.engine.play import describe
from debatekit.engine.streams import Streams, counter
from debatekit.engine.trust import charge
from debatekit.ledger import Role, Tally
from debatekit.machine.transcript import StepKind
from debatekit.oracle import Oracle, question_json
from debatekit.players.base import Seat, Strategy, own_copies
from debatekit.problems.registry import Instance
from debatekit.protocols.stochastic import solo
from debatekit.protocols.stochastic.rules import (
    NATURE,
    PLAYER_COINS,
    PURPOSE,
    SEAT,
    WITNESS,
    Advance,
    Ahead,
    Form,
    Message,
    NoSeatDraws,
    Reading,
    Rules,
    StepView,
    _bits_matrix,
    _conditional,
    as_flags,
    as_numbers,
    conditionals,
    debate,
    drawn,
    forfeited,
    machine_of,
    moved,
    no_take,
    queried,
    record,
)

BATCH = 4096
"""Debates per call in a run: memory stays at BATCH rows of the transcript whatever the trials."""


@dataclass
class _Events:
    """Per-debate events of a batch, kept as columns and laid out per debate at the end."""

    size: int
    columns: list[tuple[list[int], list[Event]]] = field(default_factory=list)

    def add(self, rows: np.ndarray, listed: list[Event]) -> None:
        """The k-th event of ``listed`` appended to the debate of the k-th of ``rows``."""
        if rows.size:
            self.columns.append((rows.tolist(), listed))

    def add_each(self, rows: np.ndarray, values: list, event: Callable[[Any], Event]) -> None:
        """``event(v)`` appended to the debate of each of ``rows`` for its value v in ``values``: one
        event per distinct value, shared by the debates that sent it (events are frozen), so a
        batch keeps a few event objects a step rather than one a debate. A zero is keyed with its
        repr too (0.0 and -0.0 are equal, and their JSON is not)."""
        made: dict[Any, Event] = {}
        listed = []
        for value in values:
            key = value if value else (value, repr(value))
            shared = made.get(key)
            if shared is None:
                shared = made[key] = event(value)
            listed.append(shared)
        self.add(rows, listed)

    def per_debate(self) -> list[list[Event]]:
        out: list[list[Event]] = [[] for _ in range(self.size)]
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
    events: list[Event] | None = None,
) -> Tally:
    """Debates ``debates`` of a run seeded ``seed`` (Figure 2 / Protocol.lean ``debate``), played
    at once. The verifier asks ``instance.oracle``; Alice and Bob ask ``provers`` (a model of the
    judge, say; default the same oracle): each party's view shows, and samples, its own. One
    debate, or a player that is not batched, is played by :func:`~debatekit.protocols.stochastic.solo.play`
    (``events``: its journaled list, from which it resumes)."""
    if len(debates) == 1 or not (alice.shape.batched and bob.shape.batched):
        tallies = [solo.play(instance, rules, alice, bob, seed, i, keep, provers=provers, events=events)
                   for i in debates]  # fmt: skip
        return tallies[0] if len(tallies) == 1 else Tally.concatenate(tallies)
    return _Batch(instance, rules, alice, bob, seed, debates, progress, keep, provers).play()


class _Batch:
    """One call's state (the transcript table, the live rows, each debate's ledger) and the rules'
    :class:`~debatekit.protocols.stochastic.rules.Interpreter` for it: a ``where`` is an array over the
    step's rows."""

    def __init__(self, instance: Instance, rules: Rules, alice: Strategy, bob: Strategy, seed: int,
                 debates: range, progress: Callable[[int], None] | None, keep: bool,
                 provers: Oracle | None) -> None:  # fmt: skip
        machine = machine_of(instance)
        self.instance, self.rules, self.machine, self.progress = instance, rules, machine, progress
        self.strategies = {Role.ALICE: alice, Role.BOB: bob}
        self.steps, self.offset, n = machine.length, machine.offset, len(debates)
        self.n = n
        consulted = {Role.VERIFIER: instance}
        consulted[Role.ALICE] = consulted[Role.BOB] = instance if provers is None else replace(instance, oracle=provers)
        self.consulted = consulted
        self.streams = Streams(seed, np.arange(debates.start, debates.stop))
        self.events = _Events(n) if keep else None
        self.queries = {role: np.zeros(n, dtype=np.int64) for role in Role}
        self.verdicts = np.full(n, -1)
        self.forfeits = np.zeros(n, dtype=np.int8)
        self.reasons: dict[Role, str] = {}
        self.values = np.zeros((n, self.offset + self.steps), dtype=np.uint8, order="F")  # one column per step
        self.values[:, : machine.n_inputs] = instance.x
        self.history = np.asarray(memoryview(self.values).toreadonly())  # players' view: cannot be made writable
        self.alive = np.ones(n, dtype=bool)
        self.ended = False  # some debate ended since the live rows were last listed
        self.bits_read = np.zeros(n, dtype=np.int64)
        self.input_bits_read = np.zeros(n, dtype=np.int64)
        self.calls: dict[tuple[int, int], int] = {}
        self.samplers = {role: self._sampler(role) for role in Role}
        self.coins = {role: self._coins(role) for role in (Role.ALICE, Role.BOB)}
        self.aheads = {role: self.ahead(role) for role in (Role.ALICE, Role.BOB)}
        self.t = -1
        self.nature_ahead: tuple[int, np.ndarray, np.ndarray] | None = None
        """Nature's uniforms of the step: the step, its live rows and the draws (:meth:`nature`)."""
        self.rows = np.arange(n)
        """The live debates at this step's start."""
        self.live: np.ndarray | None = None
        """Which of ``rows`` are still live within the step (None: all of them)."""
        self.p: tuple[np.ndarray, np.ndarray] = (np.zeros(n), np.zeros(n))
        """P[y_t = 1 | a_{I(t)}] of the step's live rows under the provers' oracle and the verifier's."""
        first = self.streams.generator(0, counter(0, SEAT))  # a seat's own generator: its batch's first debate's
        seated = own_copies(consulted[Role.BOB], self.strategies)
        self.players: dict[Role, Any] = {}
        for role, chosen in self.strategies.items():
            try:
                rng = first if chosen.trusted else NoSeatDraws()
                self.players[role] = chosen.factory(Seat(seated[role], role, rng, None, rules))  # type: ignore[arg-type]
            except Exception as err:  # untrusted strategy code failed to sit down: every call will fail
                charge(role, err, chosen.trusted)
                self.players[role] = err
        self.remote: set[Role] = set()
        """The roles whose players move in workers (:class:`~debatekit.engine.isolation.Remote`)."""
        if any(chosen.isolated for chosen in self.strategies.values()):
            from debatekit.engine.isolation import Remote  # imported only where a worker plays

            self.remote = {role for role, player in self.players.items() if isinstance(player, Remote)}

    def play(self) -> Tally:
        try:
            debate(self.rules, self.machine, self)
        finally:  # the players let go now (a worker's back in its pool for the next block), not at a collection
            self.players.clear()
        if self.progress:
            self.progress(self.n)
        return self.tally()

    def live_rows(self) -> np.ndarray:
        """List the live debates again when some ended."""
        if self.ended:
            self.ended, self.rows = False, np.flatnonzero(self.alive)
        self.live = None
        return self.rows

    def begin(self, t: int) -> bool:
        if self.live_rows().size == 0:
            return False
        self.t = t
        if self.progress and t:
            self.progress(self.n * t // self.steps)
        p_provers = _probabilities(self.machine, t, self.consulted[Role.BOB], self.values, self.rows)
        if self.consulted[Role.BOB] is self.instance:
            self.p = (p_provers, p_provers)
        else:
            self.p = (p_provers, _probabilities(self.machine, t, self.instance, self.values, self.rows))
        return True

    def last_bit(self) -> np.ndarray | None:
        rows = self.live_rows()
        return self.values[rows, -1] if rows.size else None

    def view(self, role: Role, where: np.ndarray | None = None) -> StepView:
        """What ``role`` sees of the step's live rows (or of those where ``where`` holds), through
        read-only buffers: nothing it does can change what the verifier uses."""
        rows, p = self.rows, self.p[1 if role is Role.VERIFIER else 0]
        if where is not None:
            rows, p = rows[where], p[where]
        t = self.t
        return StepView(t, self.steps, self.machine.kind(t), _read_only(rows), _read_only(p), self.rules,
                        self.samplers[role], self.history, self.offset + t, self.coins.get(role),
                        self.aheads.get(role))  # fmt: skip

    def call(self, role: Role, message: Message, *args: Any) -> Any:
        """The player's ``message`` (its method called with ``args``), or the exception a failing player
        raised (its debates forfeit)."""
        player = self.players[role]
        if isinstance(player, Exception):
            self.reasons.setdefault(role, describe(player))
            return player
        try:
            if role in self.remote:  # while its worker thinks, the engine draws ahead
                return message.method(player)(*args, meanwhile=self.draw_ahead)
            return message.method(player)(*args)
        except Exception as err:  # untrusted strategy code: its debates are forfeited
            charge(role, err, self.strategies[role].trusted)
            self.reasons.setdefault(role, describe(err))
            return err

    def say(self, role: Role, message: Message, *seen: Any) -> np.ndarray:
        if message is WITNESS:
            return self.witness()
        live = self.live
        rows = self.rows if live is None else self.rows[live]
        sent = self.call(role, message, self.view(role, live), *(_seen(s, live) for s in seen))
        read = as_numbers(sent, rows.size) if message.reading is Reading.NUMBERS else as_flags(sent, rows.size)
        ok = message.ok(read)
        every = ok.all()
        if not every:
            self.forfeit(rows[~ok], role, message, self.t)
        if self.events is not None:
            kept, plain = (rows, read) if every else (rows[ok], read[ok])
            t = self.t
            self.events.add_each(kept, plain.tolist(), lambda m: moved(role, message, t, m))
        if live is None and every:
            return read
        if live is None:
            self.live = ok
            return read
        full = np.full(self.rows.size, -1 if message.reading is Reading.FLAGS else np.nan)
        full[live] = read
        self.live = live.copy()
        self.live[live] = ok
        return full

    def witness(self) -> np.ndarray:
        n, machine = self.n, self.machine
        w = self.call(Role.ALICE, WITNESS, n)
        w = np.full((n, machine.n_witness), -1) if isinstance(w, Exception) else _bits_matrix(w, n, machine.n_witness)
        bad = ~WITNESS.ok(w).all(axis=1)
        self.forfeit(np.flatnonzero(bad), Role.ALICE, WITNESS, None)
        self.values[:, machine.n_inputs : self.offset] = np.where(w < 0, 0, w)
        good = np.flatnonzero(~bad)
        if self.events is not None:
            witness = self.values[good, machine.n_inputs : self.offset].tolist()
            self.events.add(good, [moved(Role.ALICE, WITNESS, None, w) for w in witness])
        return w

    def forfeit(self, rows: np.ndarray, role: Role, message: Message, t: int | None) -> None:
        if rows.size:
            self.ended = True
            self.verdicts[rows] = 0 if role is Role.ALICE else 1
            self.forfeits[rows] = 1 if role is Role.ALICE else 2
            self.alive[rows] = False
            self.reasons.setdefault(role, message.reason)
            if self.events is not None:
                self.events.add(rows, [forfeited(role, message, t)] * rows.size)

    def estimate(self, role: Role, n: int, where: np.ndarray) -> np.ndarray:
        out = np.full(self.rows.size, np.nan)
        out[where] = self.view(role, where).estimate(n)
        return out

    def nature(self) -> np.ndarray:
        """The step's uniforms for nature's bit, drawn once per step and live rows (:meth:`draw_ahead`
        may have drawn them while a worker thought)."""
        ahead = self.nature_ahead
        if ahead is None or ahead[0] != self.t or ahead[1] is not self.rows:
            self.nature_ahead = ahead = (self.t, self.rows, self.streams.uniform(self.rows, counter(self.t, NATURE)))
        return ahead[2]

    def draw_ahead(self) -> None:
        """Nature's uniforms for the step (the Lean form's bit), drawn while a worker thinks: they
        are a function of the live rows and the step alone, whatever the players answer, so
        :meth:`nature` takes them as drawn (about a quarter of a step's time at T = 10^4 that the
        engine would otherwise spend after the worker answered). Before the first step (Alice's
        witness) there is none to draw."""
        if self.t >= 0 and self.rules.form is Form.lean:
            self.nature()

    def extend(self, where: Any, bits: np.ndarray, chance: bool) -> None:
        bits = bits.astype(np.uint8)
        if where is True or where.all():
            rows = self.rows
        else:
            rows, bits = self.rows[where], bits[where]
        self.values[slice(None) if rows.size == self.n else rows, self.offset + self.t] = bits
        if chance and self.events is not None:
            t = self.t
            self.events.add_each(rows, bits.tolist(), lambda b: drawn(t, b))

    def verdict(self, where: Any, accepted: np.ndarray) -> None:
        rows = self.where(where)
        self.verdicts[rows] = accepted if where is True else accepted[where]
        self.alive[rows] = False
        self.ended = True

    def read(self, where: Any, bits: int, input_bits: int) -> None:
        rows = self.where(where)
        self.bits_read[rows] += bits
        self.input_bits_read[rows] += input_bits

    def where(self, where: Any) -> np.ndarray:
        """The live rows where ``where`` holds (before the first step: every debate)."""
        if where is True:
            return self.rows if self.live is None else self.rows[self.live]
        return self.rows[where]

    def ahead(self, role: Role) -> Ahead:
        """``role``'s reads answered ahead (:class:`~debatekit.protocols.stochastic.rules.Ahead`)."""
        return Ahead(functools.partial(self._estimate, role), functools.partial(self._random, role))

    def _questions(self, view: StepView) -> list:
        machine = self.machine
        relevant = self.values[np.ix_(view.rows, machine.relevant(view.t))]
        return [machine.rule(view.t, tuple(int(b) for b in row)) for row in relevant]

    def _sampler(self, role: Role) -> Callable[[StepView, int], np.ndarray]:
        def sample(view: StepView, count: int) -> np.ndarray:
            known = self._estimate(role, view, count)
            if known is not None:
                known.take()
                return known.value
            k = self.calls.get((view.t, PURPOSE[role]), 0)  # sample-only: ask each debate's question
            self.calls[(view.t, PURPOSE[role])], at = k + 1, counter(view.t, PURPOSE[role], k)
            self.queries[role][view.rows] += count
            asked = zip(view.rows.tolist(), self._questions(view), strict=True)
            oracle = self.consulted[role].oracle
            yes = np.array([oracle.sample_count(q, count, self.streams.generator(r, at)) for r, q in asked])
            self._queried(role, view, count, yes)
            return yes / count

        return sample

    def _estimate(self, role: Role, view: StepView, count: int) -> Advance | None:
        """``role``'s estimate of ``count`` samples, answered before it is taken (one binomial draw
        for ``count`` queries of each live debate, from its stream at the step's next count), or
        None where the oracle only samples (asking it is the estimate)."""
        if view.kind is not StepKind.ORACLE:
            return Advance(np.array(view.probabilities, dtype=float), no_take)
        if np.isnan(view.probabilities).any():
            return None
        t, purpose, rows = view.t, PURPOSE[role], view.rows
        k = self.calls.get((t, purpose), 0)
        yes = self.streams.binomial(rows, counter(t, purpose, k), count, view.probabilities)

        def take() -> None:
            assert self.calls.get((t, purpose), 0) == k, "an estimate answered ahead taken after another"
            self.calls[(t, purpose)] = k + 1
            self.queries[role][rows] += count
            self._queried(role, view, count, yes)

        return Advance(yes / count, take)

    def _queried(self, role: Role, view: StepView, count: int, yes: np.ndarray) -> None:
        if self.events is not None:
            said = zip((question_json(q) for q in self._questions(view)), yes.tolist(), strict=True)
            self.events.add(view.rows, [queried(role, view.t, q, count, int(a)) for q, a in said])

    def _random(self, role: Role, view: StepView) -> Advance:
        """A uniform for each live debate from its stream at the step's next count for ``role``'s coins."""
        t, purpose = view.t, PLAYER_COINS + PURPOSE[role]
        k = self.calls.get((t, purpose), 0)

        def take() -> None:
            assert self.calls.get((t, purpose), 0) == k, "a coin answered ahead taken after another"
            self.calls[(t, purpose)] = k + 1

        return Advance(self.streams.uniform(view.rows, counter(t, purpose, k)), take)

    def _coins(self, role: Role) -> Callable[[StepView], np.ndarray]:
        def draw(view: StepView) -> np.ndarray:
            coins = self._random(role, view)
            coins.take()
            return coins.value

        return draw

    def tally(self) -> Tally:
        forfeits = self.forfeits
        forfeited_count = {Role.ALICE: int((forfeits == 1).sum()), Role.BOB: int((forfeits == 2).sum())}
        records = None
        if self.events is not None:
            losers = {0: None, 1: Role.ALICE, 2: Role.BOB}
            records = [
                record(
                    listed,
                    int(self.verdicts[k]),
                    losers[int(forfeits[k])],
                    {role: int(self.queries[role][k]) for role in Role},
                    int(self.bits_read[k]),
                    int(self.input_bits_read[k]),
                )
                for k, listed in enumerate(self.events.per_debate())
            ]
        return Tally(self.verdicts, self.queries, self.bits_read, self.input_bits_read, forfeited_count,
                     self.reasons, records=records)  # fmt: skip


def _seen(value: np.ndarray | None, live: np.ndarray | None) -> np.ndarray | None:
    """A value shown to a player (its live rows; a bit as 0/1), read-only."""
    if value is None:
        return None
    if live is not None:
        value = value[live]
    return _read_only(value.astype(np.uint8) if value.dtype == np.bool_ else value)


def _read_only(array: np.ndarray) -> np.ndarray:
    """``array`` through a read-only buffer: no copy, and it cannot be made writable again (a copy
    cost the batch about a tenth of its time at T = 10^4)."""
    return np.asarray(memoryview(array).toreadonly())


def _probabilities(machine: Any, t: int, instance: Instance, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """P[y_t = 1 | a_{I(t)}] under ``instance``'s oracle for each debate in ``rows`` (NaN where a
    sample-only oracle does not give it)."""
    relevant = machine.relevant(t)
    if all(a < machine.n_inputs for a in relevant):  # reads only x: the same in every debate
        return np.full(rows.size, _conditional(machine, t, tuple(int(instance.x[a]) for a in relevant), instance))
    return conditionals(machine, t, values[np.ix_(rows, relevant)], instance)
