"""Shared helpers: random circuits and step-by-step machines, and players that log what they send.

A :class:`MachineSpec` describes a machine as plain data (each step's kind, the addresses it
reads and a truth table), so a test can build it with ``MachineBuilder`` and also evaluate it
directly in Python, independently of the library. Oracle steps ask the query ``(t, bits)`` of a
deterministic oracle whose answers are the step's table (and that raises on any other query).
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import strategies as st

from debatekit.ledger import Role
from debatekit.machine.circuit import Circuit, Gate
from debatekit.machine.transcript import MachineBuilder, StepKind, TableMachine
from debatekit.machine.turing import TuringMachine
from debatekit.oracle import NO_ORACLE, FunctionOracle, Oracle
from debatekit.players.base import Seat, Strategy
from debatekit.prob import Dist
from debatekit.problems import Instance
from postgres_helpers import postgres_server, postgres_url, store_location  # noqa: F401 (fixtures: a real PostgreSQL server)


def table_index(bits: tuple[int, ...]) -> int:
    """The row of ``bits`` in a truth table (first bit most significant)."""
    return int("".join(map(str, bits)) or "0", 2)


@dataclass(frozen=True)
class StepSpec:
    kind: StepKind
    deps: tuple[int, ...]
    table: tuple[int, ...]  # the bit (compute) or the oracle's answer (oracle) for each row


@dataclass(frozen=True)
class MachineSpec:
    n_inputs: int
    n_witness: int
    steps: tuple[StepSpec, ...]

    def build(self) -> tuple[TableMachine, Oracle]:
        """The machine through ``MachineBuilder`` and its deterministic oracle."""
        b = MachineBuilder(self.n_inputs, self.n_witness)
        answers: dict[tuple[int, tuple[int, ...]], float] = {}
        for t, step in enumerate(self.steps):
            if step.kind is StepKind.COMPUTE:
                address = b.compute(lambda *bits, table=step.table: table[table_index(bits)], *step.deps)
            else:
                address = b.ask(lambda *bits, t=t: (t, bits), *step.deps)
                for bits in itertools.product((0, 1), repeat=len(step.deps)):
                    answers[(t, bits)] = float(step.table[table_index(bits)])
            assert address == self.n_inputs + self.n_witness + t
        return b.build(), FunctionOracle(answers.__getitem__)  # a query M never makes raises KeyError

    def evaluate(self, inputs: list[int]) -> list[int]:
        """The transcript, by a direct loop over the tables."""
        values = list(inputs)
        for step in self.steps:
            values.append(step.table[table_index(tuple(values[d] for d in step.deps))])
        return values[self.n_inputs + self.n_witness :]


@st.composite
def machine_specs(draw, max_inputs: int = 4, max_witness: int = 0, max_steps: int = 10, oracle: bool = True):
    n = draw(st.integers(0, max_inputs))
    m = draw(st.integers(0, max_witness))
    kinds = [StepKind.COMPUTE, StepKind.ORACLE] if oracle else [StepKind.COMPUTE]
    steps = []
    for t in range(draw(st.integers(1, max_steps))):
        address = n + m + t
        k = draw(st.integers(0, min(3, address)))
        deps = tuple(draw(st.lists(st.integers(0, address - 1), min_size=k, max_size=k))) if k else ()
        table = tuple(draw(st.lists(st.integers(0, 1), min_size=2**k, max_size=2**k)))
        steps.append(StepSpec(draw(st.sampled_from(kinds)), deps, table))
    return MachineSpec(n, m, tuple(steps))


@st.composite
def circuits(draw, max_inputs: int = 5, max_witness: int = 0, max_gates: int = 12) -> Circuit:
    """A random fan-in-2 circuit; gates read any earlier address (repeats allowed)."""
    n = draw(st.integers(1, max_inputs))
    m = draw(st.integers(0, max_witness))
    ops, in0, in1 = [], [], []
    for t in range(draw(st.integers(1, max_gates))):
        own = n + m + t
        op = draw(st.sampled_from(list(Gate)))
        a = draw(st.integers(0, own - 1))
        ops.append(int(op))
        in0.append(a)
        in1.append(a if op is Gate.NOT else draw(st.integers(0, own - 1)))
    return Circuit(n, np.array(ops), np.array(in0), np.array(in1), n_witness=m)


def bit_arrays(n: int) -> st.SearchStrategy[np.ndarray]:
    return st.lists(st.integers(0, 1), min_size=n, max_size=n).map(lambda v: np.array(v, dtype=np.uint8))


def circuit_values(circuit: Circuit, inputs: np.ndarray) -> list[int]:
    """All gate values by a plain per-gate loop (no levels, no numpy batching)."""
    values = [int(v) for v in inputs]
    for op, a, b in zip(circuit.ops.tolist(), circuit.in0.tolist(), circuit.in1.tolist(), strict=True):
        u, v = values[a], values[b]
        values.append({Gate.AND: u & v, Gate.OR: u | v, Gate.XOR: u ^ v, Gate.NOT: 1 - u}[Gate(op)])
    return values[len(inputs) :]


def instance_of(machine, x: np.ndarray, output, oracle: Oracle = NO_ORACLE, name: str = "random") -> Instance:
    """An Instance whose truth is real: some witness w makes ``output(w)`` (M's last bit on x, w) 1.
    The witness is found by brute force; honest Alice gets the first one that works."""
    m = machine.n_witness
    witness = None
    for w in itertools.product((0, 1), repeat=m):
        if output(list(w)):
            witness = np.array(w, dtype=np.uint8)
            break
    truth = witness is not None
    if witness is None:
        witness = np.zeros(m, dtype=np.uint8)
    return Instance(name, len(x), truth, np.asarray(x, dtype=np.uint8), oracle, machine=machine, witness=witness)


def oracle_parity_machine(n: int) -> TuringMachine:
    """A Turing machine with query states: for each input cell it asks O on that one cell and
    accepts iff O said 1 an odd number of times. Each cell takes 3 steps (go to the query state,
    the query, move right), so T = 3n + 1, S = n + 2."""
    even, odd, ask_even, ask_odd, next_even, next_odd, accept, reject = range(8)
    delta = {(even, 0): (reject, 0, 0), (odd, 0): (accept, 0, 0)}
    for s in (0, 1, 2):
        delta |= {(next_even, s): (even, s, 1), (next_odd, s): (odd, s, 1)}
    for s in (1, 2):
        delta |= {(even, s): (ask_even, s, 0), (odd, s): (ask_odd, s, 0)}
    names = ["even", "odd", "ask-even", "ask-odd", "next-even", "next-odd", "accept", "reject"]
    return TuringMachine(
        "oracle-parity",
        names,
        3,
        delta,
        start=even,
        accept=accept,
        reject=reject,
        space=n + 2,
        time=3 * n + 1,
        queries={ask_even: (next_odd, next_even), ask_odd: (next_even, next_odd)},
        query_length=1,
    )


@st.composite
def circuit_instances(draw, max_witness: int = 2) -> Instance:
    """A random circuit on a random input, as an Instance with its real answer."""
    circuit = draw(circuits(max_witness=max_witness))
    x = draw(bit_arrays(circuit.n_inputs))
    return instance_of(circuit, x, lambda w: circuit_values(circuit, [*x.tolist(), *w])[-1], name="circuit")


@st.composite
def machine_instances(draw, max_witness: int = 2) -> Instance:
    """A random MachineBuilder machine (with oracle steps) on a random input, with its real answer."""
    spec = draw(machine_specs(max_witness=max_witness))
    machine, oracle = spec.build()
    x = draw(bit_arrays(spec.n_inputs))
    return instance_of(machine, x, lambda w: spec.evaluate([*x.tolist(), *w])[-1], oracle, name="machine")


class _Recording:
    """Forwards to a player and logs ``(role, message)`` for each message it sends. A mixed move is
    sampled here with the player's own generator, as the game itself would sample it."""

    def __init__(self, player: Any, seat: Seat, log: list):
        self.player, self.seat, self.log = player, seat, log

    def _send(self, method: str, *args: Any) -> Any:
        message = getattr(self.player, method)(*args)
        if isinstance(message, Dist):
            message = message.sample(self.seat.rng)
        self.log.append((self.seat.role, message))
        return message

    def transcript(self) -> Any:
        return self._send("transcript")

    def challenge(self, message: Any) -> Any:
        return self._send("challenge", message)

    def final(self) -> Any:
        return self._send("final")

    def middle(self, *args: Any) -> Any:
        return self._send("middle", *args)

    def half(self, *args: Any) -> Any:
        return self._send("half", *args)


def recording(strategy: Strategy, log: list) -> Strategy:
    """``strategy``, logging what it sends into ``log`` as (role, message) pairs."""
    factory = lambda seat: _Recording(strategy.factory(seat), seat, log)  # noqa: E731
    return Strategy(strategy.name, strategy.role, strategy.description, factory)


def sent(log: list, role: Role) -> list:
    return [message for who, message in log if who is role]


# -- the tests' own reading of messages (independent of debatekit.reader) --------------------


def a_bit(value: Any) -> int | None:
    """The test's own notion of a readable bit: 0/1 as an integer or a bool, nothing else."""
    if isinstance(value, bool | np.bool_):
        return int(value)
    if isinstance(value, int | np.integer) and value in (0, 1):
        return int(value)
    return None


def readable(message: Any, size: int) -> list[int] | None:
    """The bits of a well-formed cross-examination message, or None."""
    try:
        if len(message) != size:
            return None
        bits = [a_bit(message[i]) for i in range(size)]
    except Exception:
        return None
    return None if None in bits else bits


def a_step(challenge: Any, steps: int) -> int | None:
    if isinstance(challenge, bool | np.bool_) or not isinstance(challenge, numbers.Integral):
        return None
    return int(challenge) if 0 <= challenge < steps else None


def length_of(message: Any) -> int | None:
    """len(message), or None when it has none."""
    try:
        return len(message)
    except Exception:
        return None


@pytest.fixture(autouse=True, scope="session")
def _log_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Runs log under a temporary folder, not the working directory (``--log-dir``'s default)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DEBATEKIT_LOG_DIR", str(tmp_path_factory.mktemp("debatekit-logs")))
        yield


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Name the folder the demo report's test keeps (CI's artifact), when the run made it."""
    for kept in sorted((Path(__file__).resolve().parent.parent / "test-artifacts").glob("demo-report*/report.html")):
        terminalreporter.write_line(f"demo report kept at: {kept}")
