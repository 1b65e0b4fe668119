"""Machines: transcript machines, circuits, Turing machines, oracles, and the built-in problems."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from conftest import (
    MachineSpec,
    bit_arrays,
    circuit_values,
    circuits,
    machine_specs,
    oracle_parity_machine,
)
from debatekit.analysis.montecarlo import make_instance
from debatekit.ledger import Ledger, Role
from debatekit.machine.circuit import Circuit, CircuitBuilder, Gate, majority_circuit, parity_circuit
from debatekit.machine.transcript import MachineBuilder, StepKind, TranscriptMachine
from debatekit.machine.turing import BLANK, Config, TuringMachine, palindrome_machine, parity_machine
from debatekit.oracle import NO_ORACLE, Asker, FunctionOracle, SampleOracle, TableOracle
from debatekit.problems import PROBLEMS, InstanceError
from debatekit.problems.builtin import cnf_circuit
from debatekit.protocols.registry import protocols_of

FAST = settings(deadline=None, max_examples=60)


def all_inputs(n: int) -> list[list[int]]:
    return [list(x) for x in itertools.product((0, 1), repeat=n)]


def counted(oracle, role: Role = Role.ALICE, seed: int = 0) -> tuple[Asker, Ledger]:
    ledger = Ledger()
    return Asker(oracle, role, ledger, np.random.default_rng(seed)), ledger


def no_oracle(query):
    raise AssertionError(f"unexpected oracle query {query!r}")


# -- oracles and the ledger ---------------------------------------------------------------------


def test_known_oracles_report_their_probabilities():
    f = FunctionOracle(lambda q: 0.25 * len(q))
    assert f.probability((1, 2)) == 0.5
    t = TableOracle({"a": 1.0, "b": 0.0}, default=0.3)
    assert (t.probability("a"), t.probability("b"), t.probability("zzz")) == (1.0, 0.0, 0.3)
    assert SampleOracle(lambda q, rng: 1).probability("q") is None


class _NoRng:
    def __getattr__(self, name):
        raise AssertionError("a deterministic answer must not draw randomness")


def test_deterministic_oracle_answers_without_randomness():
    t = TableOracle({"yes": 1.0}, default=0.0)
    assert t.sample("yes", _NoRng()) == 1
    assert t.sample("no", _NoRng()) == 0


def test_asker_counts_every_query_for_its_role():
    ledger = Ledger()
    rng = np.random.default_rng(1)
    alice = Asker(TableOracle({"q": 1.0}), Role.ALICE, ledger, rng)
    vera = Asker(TableOracle({"q": 1.0}), Role.VERIFIER, ledger, rng)
    assert [alice("q"), alice("r"), vera("q")] == [1, 0, 1]
    assert alice.many("q", 5) == 5
    assert ledger.queries == {Role.ALICE: 7, Role.BOB: 0, Role.VERIFIER: 1}


@pytest.mark.parametrize(
    "oracle", [FunctionOracle(lambda q: 0.3), SampleOracle(lambda q, rng: int(rng.random() < 0.3))]
)
def test_sample_count_is_binomial(oracle):
    """Ones among r answers ~ Binomial(r, 0.3), whether drawn at once or one by one."""
    r, reps, alpha = 200, 200, 1e-4
    rng = np.random.default_rng(7)
    total = sum(oracle.sample_count("q", r, rng) for _ in range(reps))
    low, high = binom.interval(1 - alpha, r * reps, 0.3)
    assert low <= total <= high


def test_roles():
    assert Role.ALICE.opponent is Role.BOB
    assert Role.BOB.opponent is Role.ALICE
    with pytest.raises(ValueError):
        _ = Role.VERIFIER.opponent


# -- step-by-step machines (MachineBuilder) ---------------------------------------------------


@FAST
@given(spec=machine_specs(max_witness=2), data=st.data())
def test_builder_machine_runs_like_direct_evaluation(spec: MachineSpec, data):
    machine, oracle = spec.build()
    inputs = data.draw(bit_arrays(spec.n_inputs + spec.n_witness))
    ask, ledger = counted(oracle)
    transcript = machine.run(inputs, ask, np.random.default_rng(0))
    assert transcript.tolist() == spec.evaluate(inputs.tolist())
    assert transcript.dtype == np.uint8 and len(transcript) == len(spec.steps)
    oracle_steps = sum(s.kind is StepKind.ORACLE for s in spec.steps)
    assert ledger.queries[Role.ALICE] == oracle_steps  # one query per oracle step, no more
    assert machine.offset == spec.n_inputs + spec.n_witness
    assert machine.max_relevant == max(len(s.deps) for s in spec.steps)
    assert machine.deterministic
    assert [machine.relevant(t) for t in range(machine.length)] == [s.deps for s in spec.steps]


@FAST
@given(spec=machine_specs(max_witness=2), data=st.data())
def test_first_error_finds_the_first_flipped_step(spec: MachineSpec, data):
    machine, oracle = spec.build()
    inputs = data.draw(bit_arrays(spec.n_inputs + spec.n_witness))
    truth = np.array(spec.evaluate(inputs.tolist()), dtype=np.uint8)
    ask, _ = counted(oracle)
    assert machine.first_error(inputs, truth, ask) is None
    flips = data.draw(st.sets(st.integers(0, len(truth) - 1), min_size=1))
    lie = truth.copy()
    lie[list(flips)] ^= 1
    # Every step before the first flip reads true bits and claims its true value.
    assert machine.first_error(inputs, lie, ask) == min(flips)


def test_builder_doc_example():
    b = MachineBuilder(inputs=2)
    x0, x1 = b.inputs
    judged = b.ask(lambda a: ("is item", a, "acceptable?"), x0)
    out = b.compute(lambda j, c: j & c, judged, x1)
    machine = b.build()
    assert (machine.length, out, machine.kind(0), machine.kind(1)) == (2, 3, StepKind.ORACLE, StepKind.COMPUTE)
    oracle = TableOracle({("is item", 1, "acceptable?"): 1.0})
    for x in all_inputs(2):
        ask, ledger = counted(oracle)
        y = machine.run(np.array(x), ask, np.random.default_rng(0))
        assert y.tolist() == [x[0], x[0] & x[1]]
        assert ledger.queries[Role.ALICE] == 1


def test_builder_rejects_bad_machines():
    b = MachineBuilder(inputs=2, witness=1)
    assert (b.inputs, b.witness) == ([0, 1], [2])
    with pytest.raises(ValueError):
        b.compute(lambda a: a, 3)  # address 3 is the step itself
    with pytest.raises(ValueError):
        b.compute(lambda a: a, -1)
    with pytest.raises(ValueError):
        MachineBuilder(inputs=-1)
    with pytest.raises(ValueError):
        MachineBuilder(inputs=2).build()  # no steps
    bad = MachineBuilder(inputs=1)
    bad.compute(lambda a: a + 1, 0)  # returns 2 on input 1
    machine = bad.build()
    with pytest.raises(ValueError):
        machine.run(np.array([1]), no_oracle, np.random.default_rng(0))


def test_coin_steps_make_a_machine_probabilistic():
    b = MachineBuilder(inputs=1)
    c = b.coin(0.25)
    b.compute(lambda x, c: x ^ c, 0, c)
    machine = b.build()
    assert not machine.deterministic
    rng = np.random.default_rng(3)
    n, alpha = 4000, 1e-4
    ones = sum(int(machine.run(np.array([0]), no_oracle, rng)[-1]) for _ in range(n))
    low, high = binom.interval(1 - alpha, n, 0.25)
    assert low <= ones <= high
    # honest Bob's search skips coin steps: they cannot be wrong in a deterministic sense
    assert machine.first_error(np.array([0]), np.array([1, 1], dtype=np.uint8), no_oracle) is None
    assert machine.first_error(np.array([0]), np.array([1, 0], dtype=np.uint8), no_oracle) == 1


# -- circuits ----------------------------------------------------------------------------------


@FAST
@given(circuit=circuits(max_witness=2), data=st.data())
def test_circuit_evaluate_matches_a_plain_gate_loop(circuit: Circuit, data):
    inputs = data.draw(bit_arrays(circuit.offset))
    expected = circuit_values(circuit, inputs)
    assert circuit.evaluate(inputs).tolist() == expected
    assert circuit.run(inputs, no_oracle, np.random.default_rng(0)).tolist() == expected
    # the generic step-by-step run (rule per gate) agrees as well
    assert TranscriptMachine.run(circuit, inputs, no_oracle, np.random.default_rng(0)).tolist() == expected


@FAST
@given(circuit=circuits(max_witness=2))
def test_circuit_levels_respect_dependencies(circuit: Circuit):
    levels = circuit.levels.tolist()
    depth = [0] * circuit.offset + levels
    for t in range(circuit.length):
        reads = circuit.relevant(t)
        assert levels[t] == 1 + max(depth[a] for a in (*reads, int(circuit.in1[t])))
    assert circuit.depth == max(levels)


@FAST
@given(circuit=circuits(max_witness=2), data=st.data())
def test_circuit_local_check_matches_the_generic_one(circuit: Circuit, data):
    inputs = data.draw(bit_arrays(circuit.offset))
    claimed = data.draw(bit_arrays(circuit.length))
    values = [*inputs.tolist(), *claimed.tolist()]
    generic = [
        circuit.rule(t, tuple(values[a] for a in circuit.relevant(t))) != claimed[t] for t in range(circuit.length)
    ]
    assert circuit.local_errors(inputs, claimed).tolist() == generic
    first = TranscriptMachine.first_error(circuit, inputs, claimed, no_oracle)
    assert circuit.first_error(inputs, claimed, no_oracle) == first
    assert first == (generic.index(True) if any(generic) else None)
    honest = circuit.evaluate(inputs)
    assert circuit.first_error(inputs, honest, no_oracle) is None


def test_circuit_rejects_bad_gates():
    with pytest.raises(ValueError):
        Circuit(2, np.array([0]), np.array([0]), np.array([2]))  # reads itself
    with pytest.raises(ValueError):
        Circuit(2, np.array([7]), np.array([0]), np.array([1]))  # no such gate
    with pytest.raises(ValueError):
        Circuit(2, np.array([], dtype=np.uint8), np.array([], dtype=np.int64), np.array([], dtype=np.int64))
    with pytest.raises(ValueError):
        Circuit(2, np.array([0]), np.array([-1]), np.array([1]))


@pytest.mark.parametrize("n", range(1, 9))
def test_parity_and_majority_circuits_exhaustively(n):
    parity, majority = parity_circuit(n), majority_circuit(n)
    for x in all_inputs(n):
        inputs = np.array(x, dtype=np.uint8)
        assert parity.evaluate(inputs)[-1] == sum(x) % 2
        assert majority.evaluate(inputs)[-1] == int(sum(x) > n / 2)
        assert circuit_values(majority, inputs)[-1] == int(sum(x) > n / 2)
    assert parity.length == max(1, n - 1)
    assert parity.depth == max(1, math.ceil(math.log2(n)))


@settings(deadline=None, max_examples=30)
@given(n=st.integers(9, 300), data=st.data())
def test_parity_and_majority_circuits_on_larger_inputs(n, data):
    x = data.draw(bit_arrays(n))
    # inputs near the majority threshold are the interesting ones
    if data.draw(st.booleans()):
        ones = data.draw(st.integers(max(0, n // 2 - 2), min(n, n // 2 + 2)))
        x = np.zeros(n, dtype=np.uint8)
        x[:ones] = 1
        x = x[data.draw(st.permutations(range(n)))]
    assert parity_circuit(n).evaluate(x)[-1] == x.sum() % 2
    assert majority_circuit(n).evaluate(x)[-1] == int(x.sum() > n / 2)


def test_circuit_builder_reduce():
    b = CircuitBuilder(inputs=5)
    out = b.reduce(Gate.OR, list(range(5)))
    circuit = b.build()
    assert out == circuit.offset + circuit.length - 1
    for x in all_inputs(5):
        assert circuit.evaluate(np.array(x))[-1] == int(any(x))
    with pytest.raises(ValueError):
        CircuitBuilder(inputs=1).reduce(Gate.AND, [])


literals = st.integers(1, 6).flatmap(lambda v: st.sampled_from([v, -v]))


@settings(deadline=None, max_examples=60)
@given(n_vars=st.integers(1, 6), data=st.data())
def test_cnf_circuit_evaluates_cnfs(n_vars, data):
    lits = st.integers(1, n_vars).flatmap(lambda v: st.sampled_from([v, -v]))
    clauses = data.draw(st.lists(st.lists(lits, min_size=1, max_size=4).map(tuple), min_size=1, max_size=6))
    circuit = cnf_circuit(clauses, n_vars)
    assert (circuit.n_inputs, circuit.n_witness) == (0, n_vars)
    for w in all_inputs(n_vars):
        expected = all(any((lit > 0) == bool(w[abs(lit) - 1]) for lit in clause) for clause in clauses)
        assert circuit.evaluate(np.array(w, dtype=np.uint8))[-1] == int(expected)


# -- Turing machines ---------------------------------------------------------------------------


def halting_time(tm: TuringMachine, trajectory) -> int:
    halted = np.flatnonzero(np.isin(trajectory.states, [tm.accept, tm.reject]))
    return int(halted[0])


@pytest.mark.parametrize("n", range(0, 9))
def test_parity_machine_decides_parity_within_its_time(n):
    tm = parity_machine(n)
    assert (tm.space, tm.time) == (n + 2, n + 1)
    for x in all_inputs(n):
        run = tm.run(x, no_oracle)
        assert tm.accepts(run.final) == (sum(x) % 2 == 1)
        assert halting_time(tm, run) == n + 1  # scans n cells, then decides on the blank


@pytest.mark.parametrize("n", range(0, 9))
def test_palindrome_machine_decides_palindromes_within_its_time(n):
    tm = palindrome_machine(n)
    times = []
    for x in all_inputs(n):
        run = tm.run(x, no_oracle)
        assert run.final.state in (tm.accept, tm.reject)  # halted within T steps
        assert tm.accepts(run.final) == (x == x[::-1])
        times.append(halting_time(tm, run))
    assert max(times) == tm.time  # T is the longest running time, not a loose bound
    assert times[0] == tm.time  # reached on the all-zero palindrome


@settings(deadline=None, max_examples=40)
@given(n=st.integers(0, 7), data=st.data())
def test_config_at_equals_stepping(n, data):
    tm = data.draw(st.sampled_from([parity_machine(n), palindrome_machine(n)]))
    x = data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    run = tm.run(x, no_oracle)
    config = tm.initial(x)
    assert config == Config(tm.start, 1, (BLANK, *(1 + b for b in x), BLANK))
    for t in range(tm.time + 1):
        assert run.config_at(t) == config
        assert tm.advance(tm.initial(x), t, no_oracle) == config
        config = tm.step(config, no_oracle)
    assert run.final == run.config_at(tm.time)
    # a run from the middle continues the same trajectory
    k = data.draw(st.integers(0, tm.time))
    rest = tm.run_from(run.config_at(k), tm.time - k, no_oracle)
    assert rest.final == run.final


@pytest.mark.parametrize("n", range(0, 7))
@pytest.mark.parametrize("answers", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_query_states_cost_one_query_each(n, answers):
    tm = oracle_parity_machine(n)
    oracle = TableOracle({(1,): float(answers[0]), (2,): float(answers[1])})
    for x in all_inputs(n):
        ask, ledger = counted(oracle, Role.VERIFIER)
        run = tm.run(x, ask)
        query_steps = int(np.isin(run.states[:-1], list(tm.queries)).sum())
        assert query_steps == n
        assert ledger.queries == {Role.ALICE: 0, Role.BOB: 0, Role.VERIFIER: query_steps}
        assert tm.accepts(run.final) == (sum(answers[b] for b in x) % 2 == 1)
        # single steps: one query exactly when the configuration is in a query state
        config = tm.initial(x)
        for _ in range(tm.time):
            before = ledger.queries[Role.VERIFIER]
            was_query = tm.is_query(config)
            config = tm.step(config, ask)
            assert ledger.queries[Role.VERIFIER] - before == int(was_query)
        assert config == run.final
        ask, ledger = counted(oracle, Role.BOB)
        assert tm.advance(tm.initial(x), tm.time, ask) == run.final
        assert ledger.queries[Role.BOB] == n


def test_query_of_reads_query_length_cells_from_the_head():
    tm = oracle_parity_machine(3)
    assert tm.query_of(Config(2, 2, (0, 1, 2, 1, 0))) == (2,)


def test_config_bits_counts_state_head_and_tape():
    tm = palindrome_machine(6)  # 8 states, 8 cells, 3 symbols
    assert tm.config_bits == 3 + 3 + 8 * 2
    assert parity_machine(1).config_bits == 2 + 2 + 3 * 2


def test_parse_accepts_valid_configurations():
    tm = parity_machine(3)  # 4 states, 5 cells, 3 symbols
    c = Config(1, 4, (0, 1, 2, 1, 0))
    assert tm.parse(c) == c
    assert tm.parse((1, 4, (0, 1, 2, 1, 0))) == c
    assert tm.parse([1, 4, [0, 1, 2, 1, 0]]) == c
    assert tm.parse((np.int64(1), np.uint8(4), np.array([0, 1, 2, 1, 0]))) == c
    assert tm.valid(c)


@pytest.mark.parametrize(
    "message",
    [
        Config(1, 0, (0, 1, 2, 1)),  # tape too short
        Config(1, 0, (0, 1, 2, 1, 0, 0)),  # tape too long
        Config(4, 0, (0, 1, 2, 1, 0)),  # no state 4
        Config(-1, 0, (0, 1, 2, 1, 0)),
        Config(1, 5, (0, 1, 2, 1, 0)),  # head past the last cell
        Config(1, -1, (0, 1, 2, 1, 0)),
        Config(1, 0, (0, 1, 3, 1, 0)),  # no symbol 3
        Config(1, 0, (0, 1, -1, 1, 0)),
        Config(1, 0, (0, 1, 1.0, 1, 0)),  # a float, even a whole one
        Config(1, 0, (0, 1, None, 1, 0)),
        Config(1, 0, (0, 1, "1", 1, 0)),
        Config(True, 0, (0, 1, 2, 1, 0)),  # a bool is not a state
        (1, float("nan"), (0, 1, 2, 1, 0)),
        (float("nan"), 0, (0, 1, 2, 1, 0)),
        (1, 0, (0, 1, float("nan"), 1, 0)),
        (1, 0.0, (0, 1, 2, 1, 0)),
        (1, 0),
        (1, 0, (0, 1, 2, 1, 0), 7),
        (1, 0, 5),
        (1, 0, "01210"),
        None,
        "the middle configuration",
        42,
        {"state": 1, "head": 0, "tape": (0, 1, 2, 1, 0)},
    ],
)
def test_parse_rejects_malformed_configurations(message):
    tm = parity_machine(3)
    assert tm.parse(message) is None
    assert not tm.valid(message)


def test_parse_reads_no_more_of_a_tape_than_it_needs():
    """A lazy tape is read one cell past the space bound at most: an endless one cannot hang V."""
    tm = parity_machine(3)
    consumed = []

    def endless_blanks():
        for i in range(10_000):
            consumed.append(i)
            yield 0

    assert tm.parse((0, 1, endless_blanks())) is None
    assert len(consumed) <= tm.space + 1
    assert tm.parse((0, 1, itertools.repeat(0))) is None
    assert tm.parse((0, 1, iter([0, 1, 2, 1, 0]))) == Config(0, 1, (0, 1, 2, 1, 0))


def test_turing_machine_rejects_bad_transitions():
    with pytest.raises(ValueError):
        TuringMachine("bad", ["a", "b"], 2, {(0, 0): (5, 0, 1)}, start=0, accept=1, reject=1, space=2, time=1)
    with pytest.raises(ValueError):
        TuringMachine("bad", ["a", "b"], 2, {(0, 0): (1, 0, 2)}, start=0, accept=1, reject=1, space=2, time=1)


def test_head_stays_on_the_tape():
    tm = palindrome_machine(2)
    config = Config(5, 0, (0, 2, 2, 0))  # "back" on the left end marker moves right
    assert tm.step(config, no_oracle).head == 1
    stay = Config(1, 3, (0, 1, 1, 1))  # "seek0" at the last cell on a non-blank would move right
    assert tm.step(stay, no_oracle).head == 3


# -- the built-in problems ---------------------------------------------------------------------


def brute_force_outputs(circuit: Circuit, x: np.ndarray) -> np.ndarray:
    """M(x, w) for every witness w at once, by a per-gate loop over bit columns."""
    m = circuit.n_witness
    ws = np.array(all_inputs(m), dtype=np.uint8).reshape(2**m, m)
    values = np.zeros((circuit.offset + circuit.length, 2**m), dtype=np.uint8)
    values[: circuit.n_inputs] = x[:, None]
    values[circuit.n_inputs : circuit.offset] = ws.T
    ops = {Gate.AND: np.bitwise_and, Gate.OR: np.bitwise_or, Gate.XOR: np.bitwise_xor}
    for t, (op, a, b) in enumerate(zip(circuit.ops.tolist(), circuit.in0.tolist(), circuit.in1.tolist(), strict=True)):
        out = 1 - values[a] if op == Gate.NOT else ops[Gate(op)](values[a], values[b])
        values[circuit.offset + t] = out
    return values[-1]


def machine_output(instance, witness: np.ndarray) -> int:
    machine = instance.machine
    inputs = np.concatenate([instance.x, witness]).astype(np.uint8)
    if isinstance(machine, Circuit):
        return circuit_values(machine, inputs)[-1]

    def ask(query):
        p = instance.oracle.probability(query)
        assert p in (0.0, 1.0), "a problem for deterministic debate needs a deterministic oracle"
        return int(p)

    return int(machine.run(inputs, ask, np.random.default_rng(0))[-1])


SEMANTICS = {
    "parity": lambda x: x.sum() % 2 == 1,
    "majority": lambda x: x.sum() > len(x) / 2,
    "palindrome": lambda x: list(x) == list(x[::-1]),
    "equality": lambda x: _number(x[: (len(x) + 1) // 2]) == _number(x[(len(x) + 1) // 2 :]),
    "addition-overflow": lambda x: (
        _number(x[: (len(x) + 1) // 2]) + _number(x[(len(x) + 1) // 2 :]) >= 2 ** ((len(x) + 1) // 2)
    ),
}


def _number(bits: np.ndarray) -> int:
    """A little-endian bit array as an integer (exact, any width)."""
    return sum(int(bit) << i for i, bit in enumerate(bits))


def problem_cases():
    for name, problem in PROBLEMS.items():
        sizes = sorted({max(problem.min_size, 2), max(problem.min_size, 3), 5, 8, 12})
        for size in sizes:
            if problem.min_size <= size <= problem.max_size:
                yield pytest.param(name, size, id=f"{name}-{size}")


@pytest.mark.parametrize(("name", "size"), list(problem_cases()))
@pytest.mark.parametrize("truth", [True, False])
def test_problem_truth_is_the_real_output(name, size, truth):
    problem = PROBLEMS[name]
    for seed in range(3):
        instance = make_instance(problem, size, truth, seed)
        assert (instance.problem, instance.size, instance.truth, instance.answer) == (name, size, truth, int(truth))
        if name in SEMANTICS:
            assert SEMANTICS[name](instance.x) == truth
        if "cross-exam" in protocols_of(problem):
            machine = instance.machine
            assert machine is not None and machine.n_inputs == len(instance.x)
            m = machine.n_witness
            witness = instance.witness if instance.witness is not None else np.zeros(0, dtype=np.uint8)
            assert len(witness) == m
            assert machine_output(instance, witness) == int(truth)  # the planted witness, if any
            if 0 < m <= 12 and isinstance(machine, Circuit):
                outputs = brute_force_outputs(machine, instance.x)
                assert outputs.any() == truth  # no-instances: no assignment at all satisfies them
                assert outputs[int("".join(map(str, witness.tolist())), 2)] == int(truth)
        if "bisection" in protocols_of(problem):
            tm = instance.turing
            assert tm is not None
            final = tm.run(instance.x.tolist(), no_oracle).final
            assert final.state in (tm.accept, tm.reject)
            assert tm.accepts(final) == truth


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_same_seed_same_instance(name):
    problem = PROBLEMS[name]
    size = min(max(problem.min_size, 6), problem.max_size)
    for truth in (True, False):
        a = problem.instance(size, truth, np.random.default_rng(11))
        b = problem.instance(size, truth, np.random.default_rng(11))
        c = make_instance(problem, size, truth, 11)
        d = make_instance(problem, size, truth, 11)
        for one, two in ((a, b), (c, d)):
            assert np.array_equal(one.x, two.x)
            assert (one.witness is None) == (two.witness is None)
            if one.witness is not None:
                assert np.array_equal(one.witness, two.witness)
            if isinstance(one.machine, Circuit):
                for field in ("ops", "in0", "in1"):
                    assert np.array_equal(getattr(one.machine, field), getattr(two.machine, field))
            if one.turing is not None:
                assert (one.turing.space, one.turing.time) == (two.turing.space, two.turing.time)


def test_impossible_instances_raise_instance_error():
    with pytest.raises(InstanceError):
        PROBLEMS["palindrome"].instance(1, False, np.random.default_rng(0))
    sat = PROBLEMS["sat-witness"]
    with pytest.raises(InstanceError):
        sat.instance(sat.min_size - 1, True, np.random.default_rng(0))


def test_no_oracle_answers_zero():
    assert NO_ORACLE.probability("anything") == 0.0
