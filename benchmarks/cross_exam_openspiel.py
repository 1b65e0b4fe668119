"""debatekit's exact solver for cross-examination debate beside OpenSpiel's expectiminimax on the same game.

The game is Figure 1 (Theorem 5.3) on one instance, ``make_instance(PROBLEMS[problem], n, truth, seed)``
(``parity`` by default: T = n - 1 XOR gates, no oracle):

1. Alice sends w ‖ a, m + T bits. Her move space is the one ``Move.options`` enumerates in
   ``debatekit.protocols.cross_exam.debate``: every bit string of length m + T, in
   ``itertools.product((0, 1), repeat=m + T)`` order (OpenSpiel action i is the string whose bits,
   most significant first, spell i), then one malformed message (the empty one; action 2^(m+T)),
   which loses for Alice at once.
2. Bob accepts or names a step: OpenSpiel action 0 is ``ACCEPT``, action t + 1 names step t, and
   action T + 1 is the malformed word (debatekit's option ``steps``), which loses for Bob when the
   verifier reads it.
3. The verifier's check (``cross_exam.verify``) is the terminal: on ``ACCEPT`` it outputs a_T; on a
   challenge of step t it recomputes step t from the claimed relevant bits (and x) and outputs 0 if
   a_t is wrong, else a_T. If step t is an oracle step, its query is a chance node over the oracle's
   answers with the oracle's probabilities (debatekit forks the same query the same way; a
   deterministic oracle gives one outcome of probability 1). Alice's return is the verdict (1 or 0),
   Bob's 1 minus it (constant-sum).

What is computed, on both sides: the quantity ``debatekit.analysis.exact.solve`` returns, the
honest side's probability of winning against the best adversary with the honest side's strategy
fixed. With truth yes Alice is honest and Bob searches all T + 2 words; with truth no Bob is honest
(he names the first step that does not follow from Alice's own bits, else accepts) and Alice
searches all 2^(m+T) + 1 messages. In OpenSpiel the honest side's node is a forced move (one legal
action: its honest message) and Alice is expectiminimax's maximising player, so OpenSpiel computes
max_Alice min_Bob E[V]; that equals ``solve``'s value for truth yes and 1 minus it for truth no
(``solve`` reports P[V = truth] for the honest side). The script checks this exactly (the values
are 0 or 1 here, sums of products of probabilities in general) and exits 1 if a size disagrees.

Same rules code: honest Alice's transcript (``machine.run``), honest Bob's step
(``machine.first_error``) and the verifier's recomputation (``machine.relevant``, ``machine.kind``,
``machine.rule``) call the same ``TranscriptMachine`` methods on both sides, so the difference is
the search machinery and each side's handling of a move, not the machine.

What each side does:

* debatekit: ``solve(spec, instance, budget=10**12)`` (the budget only lifts the cap): builds the game tree of nodes
  (``Move``/``Judge``/``End``), seats the honest player (a deep copy of the instance), and searches
  it (``_Search.value``/``worst``): every adversary option is committed through the protocol's commit
  boundary (``commit_bits``: a frozen uint8 buffer; ``index_word``), the honest player's message is
  asked of the honest strategy object, and each ``Judge`` is run as a generator through a ``Reader``
  that counts the bits the verifier reads in a ``Ledger``; values are exact ``Fraction``s. It would
  memoise subgames on ``Move.key``, but cross-examination declares no key, so nothing is memoised;
  it stops a node's search when the adversary reaches 0, which never happens here (the honest side
  wins every branch), so both sides visit the whole tree.
* OpenSpiel: ``open_spiel.python.algorithms.minimax.expectiminimax`` (pure Python; OpenSpiel 2.x has
  no C++ expectiminimax binding) from the root, to depth 3 (its depth check comes before its chance
  case), on the game below registered with ``pyspiel.register_game``. It clones every child
  (``State.clone`` of a Python game: a new initial state, then ``copy.deepcopy`` of each attribute;
  this state's attributes are a few ints and a shared rules object) and applies one action; no
  memoisation, no pruning; float values.

Positions: debatekit's ``Solution.positions`` (every node it evaluates, a ``Judge`` included);
OpenSpiel's are the states expectiminimax visits (the root and every child it applies an action to,
which adds a chance state for each challenge of an oracle step). For parity both are T + 4 for truth
yes and 2^(T+1) + 2 for truth no.

Each time is per search, the median of ``--repeat`` rounds in this one process (``time.perf_counter``;
with ``--clock cpu``, ``time.process_time``, steadier on a shared machine); each round times one run
of each side in turn, so a CPU whose clock is still rising from idle, or a neighbour's load, slows
both alike, and a run is as many searches as take about 5 ms (after a first, untimed search of
each), so a search of tens of microseconds is not timed alone (``timing.paired_times``). The
debatekit side times ``solve`` whole (its setup included), the OpenSpiel side
``game.new_initial_state()`` and the search (the game object, built from the same instance, is made
outside: nothing in it is searched).
A truth's sizes stop growing once its next run would pass ``--limit`` seconds (a truth-no run doubles
with each n). ``--profile N`` runs cProfile on both sides at size N instead (for ``--truth``; both:
no, then yes) and prints the functions with the most time of their own.

Run it with a Python that has OpenSpiel (kept out of the project's environment)::

    python3 -m venv /work/osvenv && /work/osvenv/bin/pip install open_spiel numpy
    /work/osvenv/bin/pip install -e .
    /work/osvenv/bin/python benchmarks/cross_exam_openspiel.py
    /work/osvenv/bin/python benchmarks/cross_exam_openspiel.py --sizes 3 4 5 6 --repeat 5   # a quick run
    /work/osvenv/bin/python benchmarks/cross_exam_openspiel.py --profile 14 --truth no

Without ``pyspiel`` it says so and exits 0. A measurement script, not a test: it asserts no time.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from fractions import Fraction
from typing import Any

import numpy as np

from debatekit.analysis.exact import solve
from debatekit.analysis.montecarlo import make_instance
from debatekit.machine.transcript import StepKind
from debatekit.prob import Dist
from debatekit.problems.registry import PROBLEMS, Instance
from debatekit.protocols.cross_exam import machine_of
from debatekit.protocols.registry import PROTOCOLS
from timing import paired_times, print_table

try:
    import pyspiel
    from open_spiel.python.algorithms.minimax import expectiminimax
except ImportError:  # main() says so and exits 0
    pyspiel = None

GAME_NAME = "python_debatekit_cross_exam"
ALICE, BOB = 0, 1
_State: Any = pyspiel.State if pyspiel is not None else object
_Game: Any = pyspiel.Game if pyspiel is not None else object


class Rules:
    """What every state of one game shares (never copied when a state is cloned): the instance,
    its machine, the move spaces and the honest side's moves."""

    def __init__(self, instance: Instance):
        self.instance, self.machine = instance, machine_of(instance)
        machine = self.machine
        self.m, self.n, self.steps = machine.n_witness, machine.n_inputs, machine.length
        self.size = self.m + self.steps  # Alice's message: w ‖ a
        self.malformed_message = 2**self.size  # Alice's last action: the empty message
        self.malformed_word = self.steps + 1  # Bob's last action: a word naming no step
        self.output = self.size - 1  # a_T's position in Alice's message
        self.shifts = np.arange(self.size - 1, -1, -1, dtype=np.int64)
        self.alice_honest = bool(instance.truth)
        self.rng = np.random.default_rng(0)  # never drawn from: the oracle is deterministic
        self.visited = 0

    def __deepcopy__(self, memo: dict[int, Any]) -> Rules:
        return self

    def ask(self, query: Any) -> int:
        """An honest prover's oracle query (cross-examination's oracle is deterministic)."""
        return self.instance.oracle.sample(query, self.rng)

    def bits(self, message: int) -> np.ndarray:
        return ((message >> self.shifts) & 1).astype(np.uint8)

    def honest_message(self) -> int:
        """Honest Alice's w ‖ a as an action (``HonestAlice.transcript``)."""
        instance = self.instance
        witness = instance.witness if instance.witness is not None else np.zeros(0, dtype=np.uint8)
        inputs = np.concatenate([instance.x, witness]).astype(np.uint8)
        message = np.concatenate([witness, self.machine.run(inputs, self.ask, self.rng)]).astype(np.uint8)
        return int("".join(map(str, message.tolist())), 2)

    def honest_challenge(self, message: int) -> int:
        """Honest Bob's word as an action (``HonestBob.challenge`` on a message of bits)."""
        claimed = self.bits(message)
        inputs = np.concatenate([self.instance.x, claimed[: self.m]]).astype(np.uint8)
        t = self.machine.first_error(inputs, claimed[self.m :], self.ask)
        return 0 if t is None else t + 1

    def bit(self, message: int, position: int) -> int:
        return (message >> (self.size - 1 - position)) & 1


class CrossExamState(_State):
    """Alice's message, Bob's word, the oracle's answer (if the challenged step queries it), the verdict."""

    def __init__(self, game: Any, rules: Rules):
        super().__init__(game)
        self._rules = rules
        self._message: int | None = None
        self._challenge: int | None = None
        self._query: Any = None  # the oracle query of a challenged oracle step, until answered
        self._claimed = 0  # a_t of the challenged step
        self._value: float | None = None  # Alice's return once the verifier has decided

    def current_player(self) -> int:
        if self._value is not None:
            return pyspiel.PlayerId.TERMINAL
        if self._message is None:
            return ALICE
        if self._challenge is None:
            return BOB
        return pyspiel.PlayerId.CHANCE

    def _legal_actions(self, player: int) -> list[int]:
        rules = self._rules
        if player == ALICE:
            return [rules.honest_message()] if rules.alice_honest else list(range(rules.malformed_message + 1))
        if rules.alice_honest:
            return list(range(rules.malformed_word + 1))
        assert self._message is not None
        return [rules.honest_challenge(self._message)]

    def chance_outcomes(self) -> list[tuple[int, float]]:
        p = Fraction(self._rules.instance.oracle.probability(self._query))  # as debatekit's exact fork
        return [(answer, float(w)) for answer, w in Dist.bernoulli(p).items()]

    def _apply_action(self, action: int) -> None:
        rules = self._rules
        rules.visited += 1
        if self._message is None:
            self._message = action
            if action == rules.malformed_message:
                self._value = 0.0  # Alice's message does not commit: she loses
            return
        message = self._message
        if self._challenge is None:
            self._challenge = action
            if action == 0:  # ACCEPT: V outputs a_T
                self._value = float(rules.bit(message, rules.output))
                return
            if action == rules.malformed_word:  # Bob's word names no step: he loses
                self._value = 1.0
                return
            t, machine, n, x = action - 1, rules.machine, rules.n, rules.instance.x
            bits = tuple(int(x[a]) if a < n else rules.bit(message, a - n) for a in machine.relevant(t))
            self._claimed = rules.bit(message, rules.m + t)
            rule = machine.rule(t, bits)
            if machine.kind(t) is StepKind.COMPUTE:
                self._decide(int(rule))  # type: ignore[arg-type]
            else:
                self._query = rule  # the verifier's one oracle query: a chance node
            return
        self._decide(action)

    def _decide(self, expected: int) -> None:
        rules = self._rules
        if self._claimed != expected:
            self._value = 0.0
        else:
            self._value = float(
                self._claimed if self._challenge == rules.steps else rules.bit(self._message, rules.output)
            )

    def is_terminal(self) -> bool:
        return self._value is not None

    def returns(self) -> list[float]:
        value = self._value or 0.0
        return [value, 1.0 - value]

    def __str__(self) -> str:
        return f"message={self._message} challenge={self._challenge} value={self._value}"


class CrossExamGame(_Game):
    """Figure 1 on one instance, given by the game's parameters (problem, size, truth, seed)."""

    def __init__(self, params: dict[str, Any] | None = None):
        params = {**game_type().parameter_specification, **(params or {})}
        problem, size, truth, seed = params["problem"], params["size"], params["truth"], params["seed"]
        self.rules = Rules(make_instance(PROBLEMS[problem], size, truth, seed))
        rules = self.rules
        info = pyspiel.GameInfo(
            num_distinct_actions=max(rules.malformed_message, rules.malformed_word) + 1,
            max_chance_outcomes=2,
            num_players=2,
            min_utility=0.0,
            max_utility=1.0,
            utility_sum=1.0,
            max_game_length=3,
        )
        super().__init__(game_type(), info, params)

    def new_initial_state(self) -> CrossExamState:
        return CrossExamState(self, self.rules)


def game_type() -> Any:
    return pyspiel.GameType(
        short_name=GAME_NAME,
        long_name="debatekit cross-examination debate (Theorem 5.3, Figure 1)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.PERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.CONSTANT_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2,
        min_num_players=2,
        provides_information_state_string=False,
        provides_information_state_tensor=False,
        provides_observation_string=False,
        provides_observation_tensor=False,
        parameter_specification={"problem": "parity", "size": 3, "truth": False, "seed": 0},
    )


def openspiel_value(game: Any) -> tuple[float, int]:
    """Alice's value max_Alice min_Bob E[V] (the honest side's node forced) and the positions visited."""
    game.rules.visited = 0
    value, _ = expectiminimax(game.new_initial_state(), game.max_game_length(), None, ALICE)
    return value, 1 + game.rules.visited


def fmt_time(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms" if seconds < 1 else f"{seconds:.2f} s"


def profile(problem: str, size: int, truth: bool, seed: int, top: int) -> None:
    """cProfile of each side on one instance: the functions with the most time of their own."""
    spec = PROTOCOLS["cross-exam"]
    instance = make_instance(PROBLEMS[problem], size, truth, seed)
    game = pyspiel.load_game(GAME_NAME, {"problem": problem, "size": size, "truth": truth, "seed": seed})
    runs = max(1, 20_000 // (2 ** (size - 1) if not truth else size + 4))  # about 20,000 positions each
    sides = [
        ("debatekit solve", lambda: solve(spec, instance, budget=10**12)),
        ("OpenSpiel", lambda: openspiel_value(game)),
    ]
    for name, run in sides:
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(runs):
            run()
        profiler.disable()
        print(f"\ncProfile of {name}, {problem} n = {size}, truth {'yes' if truth else 'no'}, {runs} run(s):")
        pstats.Stats(profiler, stream=sys.stdout).strip_dirs().sort_stats("tottime").print_stats(top)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="parity", help="a problem cross-examination plays (default parity)")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(range(3, 21)), help="problem sizes n")
    parser.add_argument("--truth", choices=("no", "yes", "both"), default="both")
    parser.add_argument("--repeat", type=int, default=5, help="rounds per measure (median)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=float, default=60.0, help="stop growing n once a run passes this (s)")
    parser.add_argument("--profile", type=int, metavar="N", help="cProfile both sides at size N instead of timing")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="cpu: this process's CPU time")
    parser.add_argument("--top", type=int, default=20, help="rows of the profile")
    args = parser.parse_args(argv)
    if pyspiel is None:
        print("pyspiel is not importable: install open_spiel (see this script's docstring); nothing measured")
        return 0
    pyspiel.register_game(game_type(), CrossExamGame)
    truths = {"no": [False], "yes": [True], "both": [False, True]}[args.truth]
    if args.profile is not None:
        for truth in truths:
            profile(args.problem, args.profile, truth, args.seed, args.top)
        return 0

    spec = PROTOCOLS["cross-exam"]
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    header = ("n", "T", "truth", "value", "debatekit pos", "debatekit time", "OpenSpiel pos", "OpenSpiel time")
    rows: list[tuple[str, ...]] = [(*header, "us/pos dk", "us/pos OS", "debatekit/OpenSpiel")]
    ratios: dict[bool, list[float]] = {False: [], True: []}
    mismatches, stopped = [], set()
    for size in sorted(args.sizes):
        for truth in truths:
            if truth in stopped:
                continue
            instance = make_instance(PROBLEMS[args.problem], size, truth, args.seed)
            game = pyspiel.load_game(
                GAME_NAME, {"problem": args.problem, "size": size, "truth": truth, "seed": args.seed}
            )
            sides = (lambda: solve(spec, instance, budget=10**12), lambda: openspiel_value(game))  # noqa: B023
            (dk_time, os_time), (solution, (os_value, os_positions)) = paired_times(sides, args.repeat, clock)
            honest = Fraction(solution.exact)
            if Fraction(os_value) != (honest if truth else 1 - honest):
                mismatches.append(f"n = {size}, truth {truth}: debatekit {honest}, OpenSpiel (Alice) {os_value}")
            ratio = dk_time / os_time
            ratios[truth].append(ratio)
            rows.append(
                (
                    str(size),
                    str(machine_of(instance).length),
                    "yes" if truth else "no",
                    solution.exact,
                    str(solution.positions),
                    fmt_time(dk_time),
                    str(os_positions),
                    fmt_time(os_time),
                    f"{dk_time / solution.positions * 1e6:.2f}",
                    f"{os_time / os_positions * 1e6:.2f}",
                    f"{ratio:.2f}x",
                )
            )
            print(f"  n = {size}, truth {rows[-1][2]}: {ratio:.2f}x", file=sys.stderr, flush=True)
            if max(dk_time, os_time) * (2 if not truth else 1) > args.limit:
                stopped.add(truth)
    print(f"\n{args.problem}, seed {args.seed}, median of {args.repeat} rounds, sides in turn ({args.clock} time)")
    print("value: the honest side's exact win probability from debatekit's solve (OpenSpiel's Alice value is it for")
    print("truth yes, 1 minus it for truth no); us/pos: microseconds per position\n")
    print_table(rows)
    for truth, found in ratios.items():
        if found:
            print(
                f"truth {'yes' if truth else 'no '}: debatekit/OpenSpiel from {min(found):.2f}x to {max(found):.2f}x "
                f"(largest n: {found[-1]:.2f}x)"
            )
    if mismatches:
        print("VALUES DIFFER:\n  " + "\n  ".join(mismatches))
        return 1
    print("values agree exactly at every size")
    return 0


if __name__ == "__main__":
    sys.exit(main())
