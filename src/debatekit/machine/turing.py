"""Single-tape oracle Turing machines with explicit configurations, for bisection (Figure 4).

A configuration is (state, head, tape) with exactly S tape cells (space S). Symbols are 0 (blank),
1 (the bit 0) and 2 (the bit 1), unless a machine declares more. Halting states (accept, reject)
step to themselves, so "the configuration after T steps" is defined for every run, and M(x) = 1
iff that configuration is in the accept state. A *query state* asks the oracle on the
``query_length`` cells from the head (Section 3's oracle machine) and moves to its yes or no
state: that step costs one oracle query to whoever executes it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from debatekit.engine.boundary import as_index

BLANK = 0
Ask = Callable[[Hashable], int]


@dataclass(frozen=True)
class Config:
    """A configuration of M: control state, head position, and the whole tape."""

    state: int
    head: int
    tape: tuple[int, ...]


Move = tuple[int, int, int]  # (next state, symbol written, head move in {-1, 0, +1})


class TuringMachine:
    """M with its space bound S and time bound T fixed for one input length."""

    def __init__(
        self,
        name: str,
        states: Sequence[str],
        symbols: int,
        delta: Mapping[tuple[int, int], Move],
        *,
        start: int,
        accept: int,
        reject: int,
        space: int,
        time: int,
        queries: Mapping[int, tuple[int, int]] | None = None,
        query_length: int = 0,
    ):
        self.name, self.states, self.symbols = name, list(states), symbols
        self.start, self.accept, self.reject = start, accept, reject
        self.space, self.time = space, time
        self.queries = dict(queries or {})
        self.query_length = query_length
        n_states = len(self.states)
        # Unlisted (state, symbol) pairs halt in reject; halting states stay where they are.
        table = [[(reject, s, 0) for s in range(symbols)] for _ in range(n_states)]
        for (q, s), move in delta.items():
            if not (
                0 <= q < n_states
                and 0 <= s < symbols
                and 0 <= move[0] < n_states
                and 0 <= move[1] < symbols
                and move[2] in (-1, 0, 1)
            ):
                raise ValueError(f"bad transition {(q, s)} -> {move}")
            table[q][s] = move
        for halt in (accept, reject):
            table[halt] = [(halt, s, 0) for s in range(symbols)]
        self._table = table

    # -- configurations ----------------------------------------------------------------
    @property
    def config_bits(self) -> int:
        """Bits to write one configuration: state, head position, and S symbols."""
        width = lambda k: max(1, math.ceil(math.log2(k)))  # noqa: E731
        return width(len(self.states)) + width(self.space) + self.space * width(self.symbols)

    def initial(self, x: Sequence[int]) -> Config:
        """Start state, head on cell 1, input bits in cells 1..n (cell 0 is a left end marker)."""
        tape = [BLANK] * self.space
        for i, bit in enumerate(x):
            tape[1 + i] = 1 + int(bit)
        return Config(self.start, 1, tuple(tape))

    def parse(self, message: Any) -> Config | None:
        """A prover's message as a valid configuration, or None (Figure 4, step 2's check)."""
        try:
            state, head, tape = (message.state, message.head, message.tape) if isinstance(message, Config) else message
            cells = tuple(itertools.islice(tape, self.space + 1))  # one cell too many is enough to reject
        except Exception:
            return None
        state, head = as_index(state, len(self.states)), as_index(head, self.space)
        symbols = tuple(as_index(c, self.symbols) for c in cells)
        if state is None or head is None or len(symbols) != self.space or None in symbols:
            return None
        return Config(state, head, symbols)  # type: ignore[arg-type]

    def valid(self, message: Any) -> bool:
        return self.parse(message) is not None

    def is_query(self, config: Config) -> bool:
        return config.state in self.queries

    def query_of(self, config: Config) -> tuple[int, ...]:
        return config.tape[config.head : config.head + self.query_length]

    # -- dynamics ------------------------------------------------------------------------
    def step(self, config: Config, ask: Ask) -> Config:
        """One transition of M; a query state costs one oracle query."""
        if config.state in self.queries:
            yes, no = self.queries[config.state]
            answer = ask(self.query_of(config))
            return Config(yes if answer else no, config.head, config.tape)
        q, w, mv = self._table[config.state][config.tape[config.head]]
        tape = list(config.tape)
        tape[config.head] = w
        return Config(q, min(max(config.head + mv, 0), self.space - 1), tuple(tape))

    def advance(self, config: Config, steps: int, ask: Ask) -> Config:
        """The configuration ``steps`` transitions after ``config``."""
        state, head, tape = config.state, config.head, list(config.tape)
        table, queries, last = self._table, self.queries, self.space - 1
        for _ in range(steps):
            if state in queries:
                yes, no = queries[state]
                state = yes if ask(tuple(tape[head : head + self.query_length])) else no
                continue
            state, tape[head], mv = table[state][tape[head]]
            head = min(max(head + mv, 0), last)
        return Config(state, head, tuple(tape))

    def run(self, x: Sequence[int], ask: Ask) -> Trajectory:
        """All T steps of M on x."""
        return self.run_from(self.initial(x), self.time, ask)

    def run_from(self, start: Config, steps: int, ask: Ask) -> Trajectory:
        """``steps`` steps of M from ``start``, stored compactly (states, heads, symbols written)."""
        states = np.empty(steps + 1, dtype=np.int64)
        heads = np.empty(steps + 1, dtype=np.int64)
        written = np.empty(steps, dtype=np.int64)
        state, head, tape = start.state, start.head, list(start.tape)
        table, queries, last = self._table, self.queries, self.space - 1
        for t in range(steps):
            states[t], heads[t] = state, head
            if state in queries:
                yes, no = queries[state]
                state = yes if ask(tuple(tape[head : head + self.query_length])) else no
            else:
                state, tape[head], mv = table[state][tape[head]]
                head = min(max(head + mv, 0), last)
            written[t] = tape[heads[t]]
        states[steps], heads[steps] = state, head
        return Trajectory(start, states, heads, written)

    def accepts(self, config: Config) -> bool:
        return config.state == self.accept


@dataclass(frozen=True)
class Trajectory:
    """A run of M: ``config_at(t)`` rebuilds the configuration after t steps in O(t log t)."""

    start: Config
    states: np.ndarray
    heads: np.ndarray
    written: np.ndarray

    def config_at(self, t: int) -> Config:
        tape = np.array(self.start.tape, dtype=np.int64)
        if t:
            cells, last = np.unique(self.heads[:t][::-1], return_index=True)
            tape[cells] = self.written[:t][::-1][last]
        return Config(int(self.states[t]), int(self.heads[t]), tuple(tape.tolist()))

    @property
    def final(self) -> Config:
        return self.config_at(len(self.written))


def parity_machine(n: int) -> TuringMachine:
    """Scan right keeping the parity in the state; accept iff the number of ones is odd.
    Space S = n + 2, time T = n + 1."""
    even, odd, accept, reject = range(4)
    delta = {
        (even, 1): (even, 1, 1),
        (even, 2): (odd, 2, 1),
        (even, BLANK): (reject, BLANK, 0),
        (odd, 1): (odd, 1, 1),
        (odd, 2): (even, 2, 1),
        (odd, BLANK): (accept, BLANK, 0),
    }
    return TuringMachine(
        "parity",
        ["even", "odd", "accept", "reject"],
        3,
        delta,
        start=even,
        accept=accept,
        reject=reject,
        space=n + 2,
        time=n + 1,
    )


def palindrome_machine(n: int) -> TuringMachine:
    """The textbook palindrome checker: erase the first symbol, run to the end, compare and erase
    the last, run back; T(n) ~ n^2/2 (the exact running time on a palindrome of length n, which
    is the longest), space S = n + 2."""
    start, seek0, seek1, check0, check1, back, accept, reject = range(8)
    delta = {(start, BLANK): (accept, BLANK, 0), (start, 1): (seek0, BLANK, 1), (start, 2): (seek1, BLANK, 1)}
    for seek, check in ((seek0, check0), (seek1, check1)):
        delta |= {(seek, 1): (seek, 1, 1), (seek, 2): (seek, 2, 1), (seek, BLANK): (check, BLANK, -1)}
    delta |= {
        (check0, 1): (back, BLANK, -1),
        (check0, 2): (reject, 2, 0),
        (check0, BLANK): (accept, BLANK, 0),
        (check1, 2): (back, BLANK, -1),
        (check1, 1): (reject, 1, 0),
        (check1, BLANK): (accept, BLANK, 0),
        (back, 1): (back, 1, -1),
        (back, 2): (back, 2, -1),
        (back, BLANK): (start, BLANK, 1),
    }
    names = ["start", "seek0", "seek1", "check0", "check1", "back", "accept", "reject"]
    probe = TuringMachine("palindrome", names, 3, delta, start=start, accept=accept, reject=reject, space=n + 2, time=0)
    config, steps = probe.initial([0] * n), 0
    while config.state != accept:
        config, steps = probe.step(config, _no_oracle), steps + 1
    return TuringMachine(
        "palindrome", names, 3, delta, start=start, accept=accept, reject=reject, space=n + 2, time=steps
    )


def _no_oracle(query: Hashable) -> int:
    raise RuntimeError("this machine has no query states")
