"""Bisection debate over Turing-machine configurations: Theorem 5.1 and Figure 4.

Alice claims M(x) = 1 by naming an accepting configuration z'_0 that M reaches from the initial
configuration z_0 in T steps. In round k, for the claim "z_k reaches z'_k in t_k steps", Alice
sends the middle configuration a_k (after floor(t_k/2) steps) and Bob sends a bit b_k: 0 disputes
the first half (z_k to a_k), 1 the second (a_k to z'_k), and the claim shrinks to that half. When
t_k = 1 the verifier checks that z'_k is one step of M from z_k (at most one oracle query).

Figure 4's step 1(b) describes b_k = 1 as disputing the first half while step 1(c) continues with
the second half when b_k = 1; we follow 1(c), the rule the recursion actually uses.

The verifier reads every configuration Alice sends (``config_bits`` each) and validates it as it
arrives (Figure 4, step 2; checking on arrival gives the same verdict as checking at the end), and
reads each b_k (one bit). An invalid configuration loses for Alice, a b_k that is not 0 or 1 loses
for Bob; a final configuration that is valid but not accepting concedes the debate.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from debatekit.engine.boundary import Invalid, bit_word
from debatekit.engine.nodes import Check, End, Judge, Move, Node, Query
from debatekit.ledger import Role
from debatekit.machine.turing import Config, TuringMachine
from debatekit.players.base import Seat
from debatekit.prob import Dist
from debatekit.problems.registry import Instance
from debatekit.protocols.spec import Guarantee
from debatekit.reader import Reader, word_width


@runtime_checkable
class Alice(Protocol):
    """Alice's player: Figure 4's configurations."""

    def final(self) -> Config | Dist:
        """z'_0: the accepting configuration M reaches after T steps."""

    def middle(self, start: Config, end: Config, begin: int, steps: int) -> Config | Dist:
        """a_k: the configuration floor(steps/2) steps after ``start`` (which is at time ``begin``)."""


@runtime_checkable
class Bob(Protocol):
    """Bob's player: Figure 4's bits b_k."""

    def half(self, start: Config, middle: Config, end: Config, begin: int, steps: int) -> int | Dist:
        """0 to dispute start→middle, 1 to dispute middle→end."""


PLAYERS: dict[Role, type] = {Role.ALICE: Alice, Role.BOB: Bob}
"""Each role's player interface (:attr:`~debatekit.protocols.spec.ProtocolSpec.players`)."""


def debate(instance: Instance, reader: Reader) -> Node:
    """The game tree of Figure 4."""
    tm = machine_of(instance)
    config_bits = tm.config_bits

    def commit_config(message: Any) -> Config | Invalid:
        config = message if type(message) is Invalid else tm.parse(message)
        return Invalid("not a valid configuration of M") if config is None else config

    def claim(start: Config, end: Config, begin: int, steps: int) -> Node:
        if steps == 0:  # only when T = 0: the claim is z_0 = z'_0, nothing to bisect
            return Judge(lambda: int(start == end))
        if steps == 1:
            return Judge(lambda: last_step(tm, start, end))
        first = steps // 2

        def ask_middle(alice: Alice) -> Config | Dist:
            return alice.middle(start, end, begin, steps)

        def on_middle(message: Config) -> Node:
            middle = reader.word(message, config_bits, Role.ALICE)

            def ask_half(bob: Bob) -> int | Dist:
                return bob.half(start, middle, end, begin, steps)

            def on_bit(bit: int) -> Node:
                half = reader.word(bit, 1, Role.BOB)
                if half == 0:
                    return claim(start, middle, begin, first)
                return claim(middle, end, begin + first, steps - first)

            return Move(
                Role.BOB,
                ask=ask_half,
                commit=lambda sent: bit_word(sent, "b_k ="),
                then=on_bit,
                options=lambda: (0, 1, 2),
            )

        return Move(
            Role.ALICE,
            ask=ask_middle,
            commit=commit_config,
            then=on_middle,
            options=lambda: all_configs(tm),
            key=(start, end, steps),
        )

    def ask_final(alice: Alice) -> Config | Dist:
        return alice.final()

    def on_final(message: Config) -> Node:
        end = reader.word(message, config_bits, Role.ALICE)
        if not tm.accepts(end):
            return End(0, reason="Alice's final configuration does not accept")
        return claim(tm.initial(instance.x.tolist()), end, 0, tm.time)

    return Move(
        Role.ALICE,
        ask=ask_final,
        commit=commit_config,
        then=on_final,
        options=lambda: (c for c in all_configs(tm) if c is None or tm.accepts(c)),
    )


def last_step(tm: TuringMachine, start: Config, end: Config) -> Check:
    """Figure 4, step 2's last check: ``end`` is one transition of M from ``start`` (one oracle
    query when ``start`` is a query state)."""
    answer = (yield Query(tm.query_of(start))) if tm.is_query(start) else 0
    return int(tm.step(start, lambda query: answer) == end)


def rounds(tm: TuringMachine) -> int:
    """Rounds of bisection: ceil(log2 T)."""
    return word_width(tm.time)


def bits_bound(tm: TuringMachine) -> int:
    """Theorem 5.1's O(S log T) made concrete: ceil(log2 T) rounds of one configuration and one
    bit, plus the final configuration."""
    return rounds(tm) * (tm.config_bits + 1) + tm.config_bits


def machine_of(instance: Instance) -> TuringMachine:
    if instance.turing is None:
        raise ValueError(f"problem {instance.problem} has no Turing-machine form for bisection")
    return instance.turing


def guarantee(instance: Instance) -> Guarantee:
    """Theorem 5.1 on ``instance``: completeness 1, soundness 0, one oracle query,
    :func:`bits_bound` bits read."""
    statement = "Thm 5.1: c=1, s=0, <=1 oracle query, ceil(log2 T)*(config+1)+config bits"
    return Guarantee(1.0, 0.0, 1, bits_bound(machine_of(instance)), statement)


def all_configs(tm: TuringMachine) -> Iterator[Config | None]:
    """Every valid configuration, then ``None`` standing for every invalid message (they all lose
    the same way), for exhaustive search."""
    for state, head in itertools.product(range(len(tm.states)), range(tm.space)):
        for tape in itertools.product(range(tm.symbols), repeat=tm.space):
            yield Config(state, head, tape)
    yield None


class HonestAlice:
    """Theorem 5.1 completeness: run M once and send the true configurations."""

    def __init__(self, seat: Seat):
        self.seat = seat
        tm = machine_of(seat.instance)
        self.trajectory = tm.run(seat.instance.x.tolist(), seat.ask)

    def final(self) -> Config:
        return self.trajectory.final

    def middle(self, start: Config, end: Config, begin: int, steps: int) -> Config:
        return self.trajectory.config_at(begin + steps // 2)


class HonestBob:
    """Theorem 5.1 soundness: run M for floor(t_k/2) steps from z_k and dispute the first half if
    that does not reach a_k, else the second half. Total work O(T)."""

    def __init__(self, seat: Seat):
        self.seat = seat
        self.tm = machine_of(seat.instance)

    def half(self, start: Config, middle: Config, end: Config, begin: int, steps: int) -> int:
        return 0 if self.tm.advance(start, steps // 2, self.seat.ask) != middle else 1
