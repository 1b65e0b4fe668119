"""The transcript model of a computation (Section 3 of the doubly-efficient debate paper).

A run of M on input x writes a transcript y_1..y_T of bits; y_T is the output. Step t reads only
its *relevant coordinates* I(t) and writes y_t either deterministically (one step of M), by one
oracle query on a query built from y_{I(t)}, or by an internal coin (probabilistic machines,
Section 6). Addresses index one array: the input x, then the witness w (Theorem 7.1; empty for
plain machines), then the transcript::

    address:  0 .. n-1 | n .. n+m-1 | n+m .. n+m+T-1
    holds:    x        | w          | y_1 .. y_T

Steps are numbered from 0 here (step t writes address n+m+t).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np

from debatekit.oracle import Oracle

Ask = Callable[[Hashable], int]


class StepKind(Enum):
    COMPUTE = "compute"
    ORACLE = "oracle"
    COIN = "coin"


class TranscriptMachine(ABC):
    """A time-T computation with relevant coordinates; subclasses may vectorise ``run``."""

    n_inputs: int
    n_witness: int
    length: int

    @property
    def offset(self) -> int:
        """Address of y_1, the first transcript bit."""
        return self.n_inputs + self.n_witness

    @abstractmethod
    def kind(self, t: int) -> StepKind:
        """Whether step t computes, queries the oracle, or tosses a coin."""

    @abstractmethod
    def relevant(self, t: int) -> tuple[int, ...]:
        """I(t): the addresses step t reads, all below ``offset + t``."""

    @abstractmethod
    def rule(self, t: int, bits: tuple[int, ...]) -> int | Hashable | float:
        """Given y_{I(t)}: the bit (COMPUTE), the oracle query (ORACLE) or P[y_t=1] (COIN)."""

    @property
    def deterministic(self) -> bool:
        """True when no step tosses a coin (oracle steps may remain)."""
        return all(self.kind(t) is not StepKind.COIN for t in range(self.length))

    @property
    def max_relevant(self) -> int:
        """max_t |I(t)|, the l of Theorem 5.3's O(l log T) bound."""
        return max((len(self.relevant(t)) for t in range(self.length)), default=0)

    def step(self, t: int, bits: tuple[int, ...], ask: Ask, rng: np.random.Generator) -> int:
        """Execute step t on y_{I(t)} = bits."""
        kind = self.kind(t)
        value = self.rule(t, bits)
        if kind is StepKind.COMPUTE:
            return int(value)  # type: ignore[arg-type]
        if kind is StepKind.ORACLE:
            return ask(value)
        return int(rng.random() < float(value))  # type: ignore[arg-type]

    def conditional(self, t: int, bits: tuple[int, ...], oracle: Oracle) -> float:
        """P[y_t = 1 | y_{I(t)} = bits] (Section 6's p_t): the bit of a compute step, the oracle's
        known probability for an oracle step, the coin's probability for a coin step."""
        kind, value = self.kind(t), self.rule(t, bits)
        if kind is StepKind.ORACLE:
            p = oracle.probability(value)
            if p is None:
                raise ValueError("this needs an oracle with known probabilities")
            return float(p)
        return float(value)  # type: ignore[arg-type]

    def run(self, inputs: np.ndarray, ask: Ask, rng: np.random.Generator) -> np.ndarray:
        """The transcript y of M on (x, w) = ``inputs``, as a uint8 array of length T."""
        values = np.zeros(self.offset + self.length, dtype=np.uint8)
        values[: self.offset] = inputs
        for t in range(self.length):
            bits = tuple(int(values[a]) for a in self.relevant(t))
            values[self.offset + t] = self.step(t, bits, ask, rng)
        return values[self.offset :]

    def first_error(self, inputs: np.ndarray, transcript: np.ndarray, ask: Ask) -> int | None:
        """The first step whose claimed bit does not follow from the claimed y_{I(t)}, if any.

        This is honest Bob's search in Theorem 5.3; it queries the oracle once per oracle step.
        Coin steps cannot be wrong in a deterministic sense and are skipped.
        """
        values = np.concatenate([np.asarray(inputs, dtype=np.uint8), transcript])
        for t in range(self.length):
            kind = self.kind(t)
            if kind is StepKind.COIN:
                continue
            bits = tuple(int(values[a]) for a in self.relevant(t))
            rule = self.rule(t, bits)
            expected = int(rule) if kind is StepKind.COMPUTE else ask(rule)  # type: ignore[arg-type]
            if expected != transcript[t]:
                return t
        return None


class TableMachine(TranscriptMachine):
    """A machine stored step by step, as :class:`MachineBuilder` makes it."""

    def __init__(
        self,
        n_inputs: int,
        n_witness: int,
        kinds: Sequence[StepKind],
        relevant: Sequence[tuple[int, ...]],
        rules: Sequence[Callable[..., int | Hashable | float]],
    ):
        self.n_inputs, self.n_witness, self.length = n_inputs, n_witness, len(kinds)
        self._kinds, self._relevant, self._rules = list(kinds), list(relevant), list(rules)

    def kind(self, t: int) -> StepKind:
        return self._kinds[t]

    def relevant(self, t: int) -> tuple[int, ...]:
        return self._relevant[t]

    def rule(self, t: int, bits: tuple[int, ...]) -> int | Hashable | float:
        return self._rules[t](*bits)


@dataclass(frozen=True)
class _BitRule:
    """A compute step's rule: ``fn``'s value, checked to be a bit (a class, not a closure, so a
    machine built of module-level functions pickles: an isolated player's copy of it)."""

    fn: Callable[..., int]

    def __call__(self, *bits: int) -> int:
        value = self.fn(*bits)
        if value not in (0, 1):
            raise ValueError(f"compute step returned {value!r}, not a bit")
        return int(value)


class MachineBuilder:
    """Write a transcript machine step by step; each step returns the address it writes.

    >>> b = MachineBuilder(inputs=2)
    >>> x0, x1 = b.inputs
    >>> judged = b.ask(lambda a: ("is item", a, "acceptable?"), x0)
    >>> out = b.compute(lambda j, c: j & c, judged, x1)
    >>> machine = b.build()        # T = 2, y_T = out
    """

    def __init__(self, inputs: int, witness: int = 0):
        if inputs < 0 or witness < 0:
            raise ValueError("input and witness lengths must be non-negative")
        self._n, self._m = inputs, witness
        self._kinds: list[StepKind] = []
        self._relevant: list[tuple[int, ...]] = []
        self._rules: list[Callable[..., int | Hashable | float]] = []

    @property
    def inputs(self) -> list[int]:
        """Addresses of x."""
        return list(range(self._n))

    @property
    def witness(self) -> list[int]:
        """Addresses of the witness w."""
        return list(range(self._n, self._n + self._m))

    def _add(self, kind: StepKind, rule: Callable[..., int | Hashable | float], deps: tuple[int, ...]) -> int:
        address = self._n + self._m + len(self._kinds)
        if any(not 0 <= d < address for d in deps):
            raise ValueError(f"step at address {address} may only read earlier addresses, got {deps}")
        self._kinds.append(kind)
        self._relevant.append(tuple(deps))
        self._rules.append(rule)
        return address

    def compute(self, fn: Callable[..., int], *deps: int) -> int:
        """A deterministic step y_t = fn(y_{deps})."""
        return self._add(StepKind.COMPUTE, _BitRule(fn), deps)

    def ask(self, query: Callable[..., Hashable], *deps: int) -> int:
        """An oracle step y_t = O(query(y_{deps}))."""
        return self._add(StepKind.ORACLE, query, deps)

    def coin(self, p: float | Callable[..., float], *deps: int) -> int:
        """A coin step: y_t = 1 with probability p (or p(y_{deps}))."""
        rule = p if callable(p) else (lambda *bits: p)
        return self._add(StepKind.COIN, rule, deps)

    def build(self) -> TableMachine:
        if not self._kinds:
            raise ValueError("a machine needs at least one step; its last step is the output")
        return TableMachine(self._n, self._m, self._kinds, self._relevant, self._rules)
