"""Stochastic-oracle debate's scalar interpreter: one debate on Python numbers, answering
:func:`debatekit.protocols.stochastic.rules.debate` as :mod:`debatekit.protocols.stochastic.batch`
answers it for many.

The batch interpreter pays numpy's fixed cost per call, which for one debate is most of the work;
this one answers the same calls with numbers (the rules' tests, :func:`~.rules.coin_bit`, ... are
written for numbers and arrays alike), draws the same numbers from the debate's
:class:`~debatekit.engine.streams.Stream` at the same counters (:func:`~debatekit.engine.streams.counter`),
and writes the same events, so debate i comes out the same played either way (a test plays both). It
is the path of slow players (one debate per call), of replay, and of a debate resumed from its
journal: ``prefix`` holds the events it had journaled; its moves are committed again without asking
the players and its verifier answers given again without asking the oracle. A debate that ends (a
forfeit, a verdict) stops asking the rules.

Players see a :class:`SoloView`: :class:`~debatekit.protocols.stochastic.rules.StepView`'s fields for
one live debate. A player declared ``scalar`` (:class:`~debatekit.players.base.Strategy`) gets
numbers; any other gets arrays of one entry, as a batch of one, so a player written for arrays
plays alone as it plays in a batch. A message may be a number or a length-1 sequence or array;
anything else is its sender's forfeit.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from debatekit.engine.boundary import as_bit
from debatekit.engine.events import Event, Moved, Queried
from debatekit.engine.play import describe
from debatekit.engine.record import Forged, Replayed, recorded_events
from debatekit.engine.streams import Stream, counter
from debatekit.engine.trust import ReplayError, charge
from debatekit.ledger import Role, Tally
from debatekit.machine.transcript import StepKind, TranscriptMachine
from debatekit.oracle import Oracle, consulted, here, judged, question_json, settled
from debatekit.players.base import Seat, Strategy, own_copies
from debatekit.problems.registry import Instance
from debatekit.protocols.stochastic.rules import (
    NATURE,
    PLAYER_COINS,
    PURPOSE,
    SEAT,
    WITNESS,
    Message,
    Reading,
    Rules,
    SampleOnlyError,
    _bits_matrix,
    _conditional,
    debate,
    drawn,
    forfeited,
    machine_of,
    moved,
    queried,
    record,
)

_ONE_ROW = np.zeros(1, dtype=np.int64)
_ONE_ROW.flags.writeable = False
_ORACLE = StepKind.ORACLE


def one(value: float | int) -> np.ndarray:
    """``value`` as a batch of one (a bit as uint8, as a batch holds bits)."""
    return np.array((value,), dtype=np.uint8 if type(value) is int else float)


def number(value: float | int) -> float | int:
    return value


class SoloView:
    """What a party sees at step t of a debate played alone (:class:`StepView`'s fields, each
    per-debate value through its party's shape: :func:`number` or :func:`one`). Estimates are
    queries counted for the party; ``p`` is free and refused when a sample-only oracle does not
    give it. Each party has one view, brought to the current step before each of its calls."""

    __slots__ = ("_bits", "_p", "_party", "_width", "kind", "rules", "steps", "t")

    def __init__(self, t: int, steps: int, kind: StepKind, rules: Rules, p: float, party: _Party, bits: bytearray,
                 width: int):  # fmt: skip
        self.t, self.steps, self.kind, self.rules, self._p = t, steps, kind, rules, p
        self._party, self._bits, self._width = party, bits, width

    rows = _ONE_ROW
    """One live debate (its position in the call)."""

    @property
    def probabilities(self) -> Any:
        return self._party.shape(self._p)

    @property
    def p(self) -> Any:
        if self._p != self._p:  # NaN
            raise SampleOnlyError("this strategy reads P[y_t = 1], which a sample-only oracle does not give")
        return self._party.shape(self._p)

    @property
    def values(self) -> np.ndarray:
        """x, w and a_1..a_t, as one row (a copy)."""
        return np.frombuffer(bytes(self._bits[: self._width]), dtype=np.uint8).reshape(1, -1)

    def estimate(self, n: int) -> Any:
        party, kind = self._party, self.kind
        value = party.estimate(self.t, kind, self._p, n) if kind is _ORACLE else self._p  # else p exactly
        return value if party.shape is number else party.shape(value)

    def random(self) -> Any:
        party = self._party
        t = self.t
        if t != party.t:
            party.t, party.estimates, party.coins_drawn = t, 0, 0
        drawn = party.coins_drawn
        party.coins_drawn = drawn + 1
        value = party.uniform((t << 24) | party.coins | drawn)  # streams.counter(t, coins, drawn), inlined
        return value if party.shape is number else party.shape(value)


class _Party:
    """One party's access to its debate's randomness and oracle: every estimate on an oracle step
    is ``count`` queries, counted for it and noted."""

    def __init__(self, role: Role, debate: _Debate, oracle: Oracle, shape: Callable[[Any], Any]):
        self.role, self.debate, self.oracle, self.shape = role, debate, oracle, shape
        self.purpose, self.coins = PURPOSE[role], (PLAYER_COINS + PURPOSE[role]) << 16
        self.uniform = debate.stream.uniform
        self.queries = 0
        self.t, self.estimates, self.coins_drawn = -1, 0, 0
        """The step of the party's last draw, and how many estimates and coins it drew there."""
        self.given: deque[int] | None = None
        """The verifier's answers a script holds (a replay's or a resumed debate's)."""

    def estimate(self, t: int, kind: StepKind, p: float, count: int) -> float:
        if kind is not StepKind.ORACLE:
            return p
        debate = self.debate
        if t != self.t:
            self.t, self.estimates, self.coins_drawn = t, 0, 0
        at = counter(t, self.purpose, self.estimates)
        self.estimates += 1
        where = here(self.role, self.queries)  # the queries before these: the task's key on resume too
        self.queries += count
        if self.given is not None and (self.given or debate.strict):
            if not self.given:
                raise ReplayError("the record has fewer verifier answers than the verifier asks")
            yes = self.given.popleft()
            if not 0 <= yes <= count or (p in (0.0, 1.0) and yes != int(p) * count):  # p is NaN when hidden
                raise Forged(f"the verifier's answer at step {t}: {yes} of {count}, which the oracle never gives here")
        elif p == p:  # known: one binomial draw for `count` queries
            yes = debate.stream.binomial(at, count, p)
        else:  # sample-only: the oracle answers the count of yes itself
            question, rng = debate.question(t), debate.stream.generator(at)
            yes = int(settled(consulted(where, lambda: self.oracle.sample_count(question, count, rng))))
        if debate.listed is not None:
            debate.note(
                queried(self.role, t, question_json(debate.question(t)), count, yes, judged(self.oracle, where))
            )
        return yes / count


class _Debate:
    """The state one debate's parties share: its stream, transcript bits and events."""

    def __init__(self, machine: TranscriptMachine, stream: Stream, bits: bytearray, listed: list[Event] | None,
                 journaled: deque[Event], strict: bool):  # fmt: skip
        self.machine, self.stream, self.bits, self.listed = machine, stream, bits, listed
        self.journaled, self.strict = journaled, strict

    def question(self, t: int) -> Any:
        return self.machine.rule(t, tuple(self.bits[a] for a in self.machine.relevant(t)))

    def note(self, event: Event) -> None:
        if self.journaled and self.journaled[0] == event:  # journaled before the stop
            self.journaled.popleft()
        elif self.listed is not None:
            self.listed.append(event)


def one_number(message: Any) -> float:
    """A numeric message for one debate as a float (NaN, which fails every test, if unreadable):
    a number, or a length-1 list, tuple or array of one. Only exact numeric types are read; an int
    past float's range (``10**400``) is unreadable too."""
    kind = type(message)
    try:
        if kind is float or kind is int or kind is bool:
            return float(message)
        if isinstance(message, np.generic) and message.dtype.kind in "biuf":
            return float(message)
        if kind is np.ndarray and message.size == 1 and message.dtype.kind in "biuf":
            return float(message.reshape(-1)[0])
        if (kind is list or kind is tuple) and len(message) == 1:
            inner = message[0]
            if type(inner) in (float, int, bool) or isinstance(inner, np.generic):
                return one_number(inner)
    except Exception:  # an int past float's range, or a hostile subclass raised while being read
        pass
    return float("nan")


def one_flag(message: Any) -> int:
    """A yes/no decision for one debate as 0/1, or -1 if it is not a bit (a bit, or a length-1
    list, tuple or array of one)."""
    if message is True or message is False:
        return int(message)
    try:
        if type(message) is np.ndarray:
            if message.size != 1 or message.dtype.kind not in "bui":
                return -1
            message = message.reshape(-1)[0]
        elif (type(message) is list or type(message) is tuple) and len(message) == 1:
            message = message[0]
        bit = as_bit(message)
    except Exception:  # a hostile object raised while being read: not a bit
        return -1
    return -1 if bit is None else bit


def play(
    instance: Instance,
    rules: Rules,
    alice: Strategy,
    bob: Strategy,
    seed: int,
    index: int,
    keep: bool = False,
    *,
    provers: Oracle | None = None,
    script: list[Event] | None = None,
    events: list[Event] | None = None,
) -> Tally:
    """Debate ``index`` of a run seeded ``seed`` (Figure 2 / Protocol.lean ``debate``), as
    :func:`~debatekit.protocols.stochastic.batch.simulate` plays it in a batch, keeping its events
    when ``keep``. Moves and verifier answers that ``script`` holds (a record's events) are taken
    from it, not from the players and the oracle. ``events``, when given (a journaled list),
    receives the events as they happen; the events it already holds are those of a stopped
    debate, which this one resumes (they are its script)."""
    machine = machine_of(instance)
    steps, offset, n_inputs = machine.length, machine.offset, machine.n_inputs
    consulted = {Role.VERIFIER: instance}
    consulted[Role.ALICE] = consulted[Role.BOB] = instance if provers is None else replace(instance, oracle=provers)
    resumed = list(events) if events else []
    strict = script is not None and not resumed  # a replay: the verifier's answers all come from the script
    script = resumed or script or []
    listed: list[Event] | None = events if events is not None else ([] if keep else None)
    bits = bytearray(offset + steps)
    bits[:n_inputs] = bytes(int(b) for b in instance.x)
    journaled = deque(e for e in resumed if _made_again(e))
    shared = _Debate(machine, Stream(seed, index), bits, listed, journaled, strict)
    stream = shared.stream
    shapes = {Role.ALICE: number if alice.shape.numbers else one, Role.BOB: number if bob.shape.numbers else one}
    parties = {role: _Party(role, shared, consulted[role].oracle, shapes.get(role, number)) for role in Role}
    verifier = parties[Role.VERIFIER]
    moves = {(e.role, e.what, e.t): _message(e) for e in script if isinstance(e, Moved)}
    if script:
        verifier.given = deque(e.answer for e in script if isinstance(e, Queried) and e.role is Role.VERIFIER)
    elif strict:
        verifier.given = deque()
    for event in resumed:  # the provers' queries made before the stop (their moves are not asked again)
        if isinstance(event, Queried) and event.role is not Role.VERIFIER:
            parties[event.role].queries += event.n

    players: dict[Role, Any] = {}
    seated = own_copies(consulted[Role.BOB], {Role.ALICE: alice, Role.BOB: bob})
    first = stream.generator(counter(0, SEAT))
    for role, chosen in ((Role.ALICE, alice), (Role.BOB, bob)):
        try:
            players[role] = chosen.factory(Seat(seated[role], role, first, None, rules))  # type: ignore[arg-type]
        except Exception as err:  # untrusted strategy code failed to sit down: every call will fail
            charge(role, err, chosen.trusted)
            players[role] = err
    solo = _Solo(rules, consulted, machine, shared, parties, players, {Role.ALICE: alice, Role.BOB: bob}, moves)
    with contextlib.suppress(_Over):
        debate(rules, machine, solo)
    loser = solo.loser
    forfeited_count = {Role.ALICE: int(loser is Role.ALICE), Role.BOB: int(loser is Role.BOB)}
    queries = {role: party.queries for role, party in parties.items()}
    records = None
    if listed is not None:
        records = [record(listed, solo.outcome, loser, queries, solo.bits_read, solo.input_bits_read)]
    return Tally(
        np.array([solo.outcome]), {role: np.array([queries[role]]) for role in Role}, np.array([solo.bits_read]),
        np.array([solo.input_bits_read]), forfeited_count, solo.reasons, records=records,
    )  # fmt: skip


_ALICE, _NUMBERS = Role.ALICE, Reading.NUMBERS


class _Over(Exception):
    """The debate ended with a forfeit: the rules are asked nothing more."""


class _Solo:
    """The rules' :class:`~debatekit.protocols.stochastic.rules.Interpreter` for one debate: every value
    a Python number, every ``where`` a bool."""

    def __init__(self, rules: Rules, consulted: dict[Role, Instance], machine: TranscriptMachine, shared: _Debate,
                 parties: dict[Role, _Party], players: dict[Role, Any], strategies: dict[Role, Strategy],
                 moves: dict) -> None:  # fmt: skip
        self.instance, self.provers = consulted[Role.VERIFIER], consulted[Role.BOB]
        self.routed = self.provers is not self.instance
        self.machine, self.moves, self.offset = machine, moves, machine.offset
        self.bits, self.stream, self.listed, self.note = shared.bits, shared.stream, shared.listed, shared.note
        self.players, self.strategies, self.parties = players, strategies, parties
        self.reasons: dict[Role, str] = {}
        self.alice_methods: dict[Message, Callable[..., Any]] = {}
        """Alice's bound methods, by message (looked up once per debate)."""
        self.bob_methods: dict[Message, Callable[..., Any]] = {}
        self.outcome, self.loser = -1, None
        self.bits_read = self.input_bits_read = 0
        self.t, self.kind, self.p, self.seen_bits = -1, StepKind.COMPUTE, 0.0, ()
        steps, offset = machine.length, machine.offset
        self.view_a = SoloView(0, steps, machine.kind(0), rules, 0.0, parties[Role.ALICE], self.bits,
                               offset)  # fmt: skip
        self.view_b = SoloView(0, steps, machine.kind(0), rules, 0.0, parties[Role.BOB], self.bits,
                               offset)  # fmt: skip

    def move(self, role: Role, message: Message, t: int | None, args: tuple) -> Any:
        """The role's message: the script's if it holds this move, else the player's, or the exception
        a failing player raised."""
        moves = self.moves
        if moves and (role, message.what, t) in moves:
            return moves[(role, message.what, t)]
        bound = self.alice_methods if role is _ALICE else self.bob_methods
        method = bound.get(message)
        if method is None:
            method = bound[message] = _bound(self.players[role], message.method)
        try:
            return method(*args)
        except Exception as err:  # untrusted strategy code: the debate is forfeited
            return self.failed(role, err)

    def failed(self, role: Role, err: Exception) -> Exception:
        """A player's move raised: its debate is forfeited (the error is the message)."""
        charge(role, err, self.strategies[role].trusted)
        self.reasons.setdefault(role, describe(err))
        return err

    def lose(self, role: Role, message: Message, t: int | None) -> None:
        self.outcome, self.loser = (0 if role is Role.ALICE else 1), role
        self.reasons.setdefault(role, message.reason)
        if self.listed is not None:
            self.note(forfeited(role, message, t))
        raise _Over

    def begin(self, t: int) -> bool:
        if self.outcome >= 0:
            return False
        machine = self.machine
        self.t = t
        kind = self.kind = machine.kind(t)
        bits = self.bits
        seen_bits = self.seen_bits = tuple(map(bits.__getitem__, machine.relevant(t)))
        if kind is StepKind.ORACLE:
            p = self.p = _conditional(machine, t, seen_bits, self.provers)
        else:
            p = self.p = float(machine.rule(t, seen_bits))  # type: ignore[arg-type]
        view_a, view_b = self.view_a, self.view_b
        view_a.t = view_b.t = t
        view_a.kind = view_b.kind = kind
        view_a._p = view_b._p = p
        view_a._width = view_b._width = machine.offset + t
        return True

    def say(self, role: Role, message: Message, *seen: Any) -> Any:
        if message is WITNESS:
            return self.witness()
        t = self.t
        if role is _ALICE:
            view, method = self.view_a, self.alice_methods.get(message)
        else:
            view, method = self.view_b, self.bob_methods.get(message)
        if seen:  # Bob's abort: Alice's claim and the coin bit, through his shape
            shape = view._party.shape
            claim, bit = seen
            if shape is not number:
                claim, bit = shape(claim), None if bit is None else shape(int(bit))
            elif bit is not None:
                bit = int(bit)
        if method is None or self.moves:  # the first call, or a script: looked up there
            sent = self.move(role, message, t, (view, claim, bit) if seen else (view,))
        else:
            try:
                sent = method(view, claim, bit) if seen else method(view)
            except Exception as err:  # untrusted strategy code: the debate is forfeited
                sent = self.failed(role, err)
        value = one_number(sent) if message.reading is _NUMBERS else one_flag(sent)
        if not message.ok(value):
            self.lose(role, message, t)
        if self.listed is not None:
            self.note(moved(role, message, t, value))
        return value

    def witness(self) -> np.ndarray:
        machine = self.machine
        sent = self.move(Role.ALICE, WITNESS, None, (1,))
        w = _bits_matrix(np.full((1, machine.n_witness), -1) if isinstance(sent, Exception) else sent,
                         1, machine.n_witness)[0]  # fmt: skip
        if not WITNESS.ok(w).all():
            self.lose(Role.ALICE, WITNESS, None)
        self.bits[machine.n_inputs : machine.offset] = bytes(int(b) for b in w)
        if self.listed is not None:
            self.note(moved(Role.ALICE, WITNESS, None, [int(b) for b in w]))
        return w

    def estimate(self, role: Role, n: int, where: bool) -> float:
        t, p = self.t, self.p
        if self.routed and role is Role.VERIFIER:  # the verifier asks its own oracle
            p = _conditional(self.machine, t, self.seen_bits, self.instance)
        return self.parties[role].estimate(t, self.kind, p, n)

    def nature(self) -> float:
        return self.stream.uniform(counter(self.t, NATURE))

    def extend(self, where: bool, bits: bool, chance: bool) -> None:
        t, bit = self.t, int(bits)
        self.bits[self.offset + t] = bit
        if chance and self.listed is not None:
            self.note(drawn(t, bit))

    def verdict(self, where: bool, accepted: Any) -> None:
        self.outcome = int(accepted)

    def read(self, where: bool, bits: int, input_bits: int) -> None:
        self.bits_read += bits
        self.input_bits_read += input_bits

    def last_bit(self) -> int | None:
        return None if self.outcome >= 0 else self.bits[-1]


def _bound(player: Any, method: Callable[[Any], Callable[..., Any]]) -> Callable[..., Any]:
    """The player's bound ``method``, looked up once per debate; where the player failed to sit
    down (an exception in its place) or the lookup raises, a move that sends that exception."""
    if isinstance(player, Exception):
        return _raising(player)
    try:
        return method(player)
    except Exception as err:  # untrusted strategy code: its moves fail
        return _raising(err)


def _raising(err: Exception) -> Callable[..., Any]:
    def send(*args: Any) -> Any:
        raise err

    return send


def _message(event: Moved) -> Any:
    """What a scripted move sends: the committed message (a witness as its one row), or where the
    move was a forfeit something that cannot commit."""
    if event.forfeit is not None:
        return None
    return [event.message] if event.what == WITNESS.what else event.message


def _made_again(event: Event) -> bool:
    """Whether a replayed or resumed debate makes ``event`` again: every event but the provers' own
    queries (their moves are given, not asked)."""
    return not isinstance(event, Queried) or event.role is Role.VERIFIER


class _Unscripted:
    """A replayed debate's player: the record holds every move it made, so being asked for one is
    the record's fault."""

    def __getattr__(self, name: str) -> Any:
        raise ReplayError(f"the record has no {name} here")


def replay(record: dict[str, Any], instance: Instance, rules: Rules) -> Replayed:
    """Debate ``record["debate"]`` again: its recorded messages and verifier answers, nature's bits
    from the debate's stream; every event (the provers' own queries apart) and count must come out
    as recorded."""
    recorded = recorded_events(record)
    seats = {
        role: Strategy("recorded", role, "the record's messages (untrusted)", lambda _: _Unscripted())
        for role in (Role.ALICE, Role.BOB)
    }
    index = int(record["debate"])
    tally = play(instance, rules, seats[Role.ALICE], seats[Role.BOB], int(record["seed"]), index, keep=True,
                 script=recorded)  # fmt: skip
    assert tally.records is not None
    again = tally.records[0]
    differences = []

    def comparable(listed: list[Event]) -> list[Event]:
        return [e for e in listed if _made_again(e)]

    if comparable(again["events"]) != comparable(recorded):
        differences.append("events: the replayed debate's messages, bits or verifier queries differ")
    for key in ("verdict", "forfeit", "bits_read", "input_bits_read"):
        if again[key] != record[key]:
            differences.append(f"{key}: recorded {record[key]}, replayed {again[key]}")
    if again["queries"][Role.VERIFIER.value] != record["queries"][Role.VERIFIER.value]:
        differences.append("verifier queries differ")
    return Replayed(index, not differences, tuple(differences))
