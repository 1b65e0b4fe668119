"""Stochastic-oracle debate: Theorem 6.2 / Figure 2 and its Lean formalization (Debate/Protocol.lean).

For t = 1..T, Alice claims p̂_t = P[y_t = 1 | a_{I(t)}]; the bit a_t is drawn from Bernoulli(p̂_t);
Bob may abort, and then the verifier estimates p_t itself and decides on Alice's claim alone.
Without an abort the verifier outputs a_T. The two forms (:class:`Form`) differ in order and randomness:

* ``lean`` (Protocol.lean ``step``): Alice claims p; Bob, seeing p but not the bit, accepts or
  rejects; on reject Vera is called once and her boolean is the output; on accept the protocol
  draws the bit from bernoulli(p) with external randomness.
* ``paper`` (Figure 2): the bit is a_t = 1 iff z_t <= p̂_t, z_t = z^A_t + z^B_t mod 1, one share
  from each side (neither sees the other's); Bob decides after seeing the bit.

Constants (:class:`~debatekit.protocols.stochastic.params.Constants`): ``lean`` uses
:meth:`Params.defaults`, ``paper`` Figure 2's d, r, R, and ``planned`` the certified plan of
:mod:`debatekit.protocols.stochastic.planner`; the form follows the constants (paper constants play
the paper form, the others the Lean form). Every honest test has the shape of Lean's ``bob'``:
estimate with n samples and compare |claim - estimate| with a threshold.

Departures, all at the security boundary: a claim that is not a finite number in [0, 1] (Lean
clamps it) and a share outside [0, 1) lose for their sender; so does an abort decision that is
not a bit. Compute and coin steps are estimated exactly (their p is 0/1 or the coin's
probability), so only oracle steps cost queries, as in Figure 2 step 3(a).

This module states the rules once. :func:`debate` is the protocol (Lean's ``debate``) and :func:`step`
one step of it (Lean's ``step``; Figure 2 steps 1-3), then :func:`end`: they ask an :class:`Interpreter`
for what they need (a message, the verifier's estimate, nature's uniform) and tell it what happens (a
verdict, bits read, a transcript bit). The messages (:data:`WITNESS`, :data:`CLAIM`, :data:`SHARE`,
:data:`ABORT`) carry what each must be and the forfeit when it is not; the record's events are written
by :func:`moved`, :func:`forfeited`, :func:`queried`, :func:`drawn` and :func:`record`; what the
verifier reads by :func:`bits_read_bound` and :func:`step`. Three interpreters answer them:
:mod:`.batch` for many debates at once (numpy rows), :mod:`.solo` for one on Python numbers (also
replay and resume), and :mod:`.exact`, which runs :func:`step` at each prefix with every answer a
distribution (an estimate's binomial law, a uniform share, a choice the best adversary makes) and
folds the outcomes by backward induction.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from enum import Enum, StrEnum
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

from debatekit.engine.boundary import as_bit, plain_int
from debatekit.engine.events import Drawn, Event, Moved, Queried
from debatekit.ledger import Concession, Role
from debatekit.machine.transcript import StepKind, TranscriptMachine
from debatekit.players.base import Seat
from debatekit.problems.registry import Instance
from debatekit.protocols.stochastic.params import Constants, PaperConstants, Params, counts
from debatekit.reader import word_width

Numbers = np.ndarray | float
"""One value per live debate: an array in a batch, a number when one debate is played alone (and in
:mod:`.exact` a distribution: a claim's rows, an estimate's law). The rules below are written once
for all three (they compare, add and take ``abs``, which numpy, Python and :mod:`.exact` each answer)."""
CLAIM_BITS = 64
"""A claim is sent as an IEEE double; the verifier reads all of it."""


class Form(StrEnum):
    """A step's order and randomness (the module docstring); each value is its spelling in records."""

    lean = "lean"
    """Protocol.lean ``step``: Bob decides before the bit, which the protocol draws itself."""
    paper = "paper"
    """Figure 2: the bit from both sides' shares; Bob decides after seeing it."""


@dataclass(frozen=True)
class Rules:
    """Sample counts and thresholds of one constant choice, and what the theorem then promises.

    Honest Bob aborts iff |claim - estimate| >= ``bob_threshold``; the verifier accepts iff
    |claim - estimate| < ``vera_threshold``."""

    form: Form
    alice_samples: int
    bob_samples: int
    vera_samples: int
    bob_threshold: float
    vera_threshold: float
    bob_margin: float
    """How far off a claim can be while honest Bob still accepts it with high probability."""
    completeness: float
    soundness: float
    parameters: dict[str, float] = field(default_factory=dict)

    @classmethod
    def from_params(cls, params: Params) -> Rules:
        parameters = {"k": params.k, "T": params.T, "v": params.v, "c": params.c, "s": params.s, "b": params.b,
                      "q": params.q, "w": params.w}  # fmt: skip
        return cls(Form.lean, **asdict(counts(params)), parameters=parameters)

    @classmethod
    def from_paper(cls, paper: PaperConstants) -> Rules:
        return cls(Form.paper, **asdict(counts(paper)), parameters={"K": paper.K, "T": paper.T, "d": paper.d})

    def rejects(self, claims: Numbers, estimates: Numbers) -> Numbers:
        """Honest Bob's test (Lean ``bob``; Figure 2 step 3): abort iff |claim - estimate| >= his threshold."""
        return abs(claims - estimates) >= self.bob_threshold

    def accepts(self, claims: Numbers, estimates: Numbers) -> Numbers:
        """The verifier's test after an abort (Lean ``vera``; Figure 2 step 3a): accept Alice's claim
        iff |claim - estimate| < her threshold."""
        return abs(claims - estimates) < self.vera_threshold


def coin_bit(claims: Numbers, alice_shares: Numbers, bob_shares: Numbers) -> Numbers:
    """Figure 2 step 2: a_t = 1 iff z_t <= p̂_t, with z_t = z^A_t + z^B_t mod 1 (True or False)."""
    return (alice_shares + bob_shares) % 1.0 <= claims


def drawn_bit(claims: Numbers, uniforms: Numbers) -> Numbers:
    """Protocol.lean ``step`` on accept: a_t ~ bernoulli(p̂_t) from the protocol's own randomness
    (True or False)."""
    return uniforms < claims


class Unplannable(ValueError):
    """The certified planner cannot plan this K and T (its per-step counts exceed what it
    supports): the planned constants do not exist for the instance."""


def rules_for(constants: Constants, k: float, steps: int, verifier_budget: int = 0) -> Rules:
    """The rules of ``constants`` for a K-Lipschitz machine of ``steps`` steps; planned with a
    ``verifier_budget``, the strongest guarantee at most that many verifier queries certify."""
    if verifier_budget and constants is not Constants.planned:
        raise Unplannable(f"a verifier budget is planned: it needs the planned constants, not {constants}")
    if constants is Constants.lean:
        return Rules.from_params(Params.defaults(k, steps))
    if constants is Constants.paper:
        return Rules.from_paper(PaperConstants(k, steps))
    if constants is Constants.planned:
        from debatekit.protocols.stochastic.planner import PlanError, plan, strongest

        try:
            chosen = strongest(k, steps, verifier_budget) if verifier_budget else plan(k, steps)
            return Rules.from_params(chosen.params)
        except PlanError as err:
            raise Unplannable(str(err)) from err
    raise TypeError(f"constants must be a Constants member, got {constants!r}")


def claims_ok(claims: Numbers) -> Numbers:
    """Which claims are probabilities: numbers in [0, 1] (NaN and the infinities fail both tests)."""
    return (claims >= 0) & (claims <= 1)


def shares_ok(shares: Numbers) -> Numbers:
    """Which coin shares are in [0, 1)."""
    return (shares >= 0) & (shares < 1)


def as_numbers(message: Any, size: int) -> np.ndarray:
    """A batch of numeric messages as a private float copy; anything unreadable becomes NaN (and so
    fails). Only exact int and float types are read (:mod:`debatekit.engine.boundary`): no method
    of a hostile object runs outside this catch-all, and none of its values survives it."""
    try:
        if type(message) is np.ndarray and message.dtype.kind in "biuf" and message.shape == (size,):
            return message.astype(float)
        items = _items(message, size)
        if items is None or len(items) != size:
            return np.full(size, np.nan)
        if set(map(type, items)) <= _PLAIN_NUMBERS:
            with contextlib.suppress(OverflowError):  # else an int past float's range: read one by one
                return np.array(items, dtype=float)
        return np.array([_number(m) for m in items], dtype=float)
    except Exception:  # a hostile object raised while being read: unreadable
        return np.full(size, np.nan)


def as_flags(message: Any, size: int) -> np.ndarray:
    """A batch of yes/no decisions as 0/1, with -1 for anything that is not a bit."""
    try:
        if type(message) is np.ndarray and message.dtype == np.bool_ and message.shape == (size,):
            return message.astype(np.int64)
        if type(message) is np.ndarray and message.dtype.kind in "bui" and message.shape == (size,):
            values = message.astype(np.int64)
            return np.where((values == 0) | (values == 1), values, -1)
        items = _items(message, size)
        if items is None or len(items) != size:
            return np.full(size, -1)
        return np.array([-1 if (bit := as_bit(value)) is None else bit for value in items], dtype=np.int64)
    except Exception:  # a hostile object raised while being read: unreadable
        return np.full(size, -1)


def _items(message: Any, size: int) -> list | None:
    """At most size + 1 items of ``message`` (an endless iterator cannot stall the verifier)."""
    try:
        return list(itertools.islice(iter(message), size + 1))
    except Exception:  # not iterable, or its iterator fails: unreadable
        return None


_PLAIN_NUMBERS = frozenset({int, bool, float, np.float64, np.float32, np.int64, np.int32, np.bool_})


def _number(value: Any) -> float:
    """One debate's number, NaN (which fails) when unreadable or an int past float's range
    (``10**400``: the sender's forfeit in that debate alone)."""
    if type(value) in (float, np.float64, np.float32, np.float16):
        return float(value)
    number = plain_int(value)
    try:
        return float("nan") if number is None else float(number)
    except OverflowError:
        return float("nan")


# ---------------------------------------------------------------------------------------------
# The protocol, step by step (Protocol.lean ``step`` and ``debate``; Figure 2 steps 1-3)
# ---------------------------------------------------------------------------------------------


class Reading(Enum):
    """How a message is read at the boundary (each interpreter has one reader per kind)."""

    NUMBERS = "numbers"
    FLAGS = "flags"
    BITS = "bits"


@dataclass(frozen=True, eq=False)
class Message:
    """One kind of message: its name in records, how it is read, what it must be, the forfeit of a
    sender whose message is not that (``ok`` is written for numbers and arrays alike), and the player's
    method that sends it. Each is one of the four below, compared and hashed by identity."""

    what: str
    reading: Reading
    ok: Callable[[Any], Any]
    reason: str
    method: Callable[[Any], Callable[..., Any]]


WITNESS = Message(
    "witness", Reading.BITS, lambda w: w >= 0, "the witness is not a matrix of bits", lambda alice: alice.witness
)
"""Theorem 7.2: Alice's witness w, sent once before the first step (``ok`` per bit; -1 where unreadable)."""
CLAIM = Message(
    "claim", Reading.NUMBERS, claims_ok, "a claim that is not a probability in [0, 1]", lambda alice: alice.claims
)
"""Lean ``alice``; Figure 2 step 1: Alice's p̂_t."""
SHARE = Message("share", Reading.NUMBERS, shares_ok, "a coin share outside [0, 1)", lambda player: player.shares)
"""Figure 2 step 2: a share z^A_t or z^B_t of the coin."""
ABORT = Message(
    "abort", Reading.FLAGS, lambda flags: flags >= 0, "an abort decision that is not a bit", lambda bob: bob.aborts
)
"""Lean ``bob``; Figure 2 step 3: 1 if Bob aborts (-1 where it is not a bit)."""


class Interpreter(Protocol):
    """What :func:`debate` asks of an interpreter: each method answers for the debates still live
    (one number each in :mod:`.solo`, arrays over a step's rows in :mod:`.batch`, distributions over
    Alice's possible claims in :mod:`.exact`); ``where`` narrows that to the debates where it holds
    (:data:`ALL`: every one)."""

    def begin(self, t: int) -> bool:
        """Step t begins; False when no debate is live (the debate is over)."""

    def say(self, role: Role, message: Message, *seen: Any) -> Any:
        """``role``'s ``message`` (showing it ``seen``: Bob's abort sees the claim and, in the paper
        form, the bit), read at the boundary (``message.reading``); where ``message.ok`` fails the
        sender loses (``message.reason``, :func:`forfeited`), elsewhere it is committed (:func:`moved`).
        Answers the values read."""

    def estimate(self, role: Role, n: int, where: Any) -> Any:
        """``role``'s estimate of p_t with n samples where ``where`` holds (:meth:`StepView.estimate`:
        n oracle queries on an oracle step, counted and recorded, :func:`queried`)."""

    def nature(self) -> Any:
        """A uniform in [0, 1) from each debate's own stream, at counter ``(t, NATURE)``."""

    def extend(self, where: Any, bits: Any, chance: bool) -> None:
        """a_t = ``bits`` where ``where`` holds; ``chance`` when nature drew them (recorded, :func:`drawn`)."""

    def verdict(self, where: Any, accepted: Any) -> None:
        """The debates where ``where`` holds end: the verifier outputs ``accepted``."""

    def read(self, where: Any, bits: int, input_bits: int) -> None:
        """The verifier reads ``bits`` prover bits and ``input_bits`` bits of x where ``where`` holds."""

    def last_bit(self) -> Any:
        """a_T of each debate still live, or None when none is."""


ALL = True
"""``where`` for every debate still live."""


def some(where: Any) -> bool:
    """Whether ``where`` (one debate's bool, or an array of them) holds anywhere."""
    return where if type(where) is bool else bool(where.any())


def debate(rules: Rules, machine: TranscriptMachine, play: Interpreter) -> None:
    """Protocol.lean ``debate`` (Figure 2), the protocol once, for one debate or many: ``play`` answers
    what it asks (each value a number, or an array with one entry per live debate). The verifier reads
    Bob's word (the step he aborts at, or none), Alice sends her witness where the machine takes one,
    then each :func:`step` in turn while a debate is live, and the :func:`end`.

    Written as calls on an :class:`Interpreter` rather than a generator's yields: both state the
    step once, and a call costs the scalar interpreter a fraction of a yield, its request object
    and its dispatch (about 4 µs a step on the benchmark's machine, more than the 2x floor allows)."""
    play.read(ALL, word_width(machine.length + 1), 0)
    if machine.n_witness:
        play.say(Role.ALICE, WITNESS)
    for t in range(machine.length):
        if not play.begin(t):
            return
        step(rules, machine, play, t)
    end(play)


def step(rules: Rules, machine: TranscriptMachine, play: Interpreter, t: int) -> None:
    """Protocol.lean ``step`` (Figure 2 steps 1-3), step t of the debates still live. In outline
    (SPEC.md 1d; bits newest-first there)::

        p ← alice y                         -- Alice gives p
        if bob y p then y.push (bernoulli p)   -- Bob accepts: the protocol draws the bit
        else vera y p                       -- Bob rejects: Vera's boolean is the output

    The paper form draws the bit from both sides' shares before Bob decides. The batch and scalar
    interpreters run it inside :func:`debate`; the exact one (:mod:`.exact`) runs it alone at each
    prefix, its answers enumerations."""
    say = play.say
    claim = say(Role.ALICE, CLAIM)
    bit = None
    if rules.form is Form.paper:
        bit = coin_bit(claim, say(Role.ALICE, SHARE), say(Role.BOB, SHARE))
    abort = say(Role.BOB, ABORT, claim, bit)
    aborted = abort == 1
    if some(aborted):  # Vera decides on Alice's claim alone (Figure 2 step 3(a))
        estimate = play.estimate(Role.VERIFIER, rules.vera_samples, aborted)
        play.verdict(aborted, rules.accepts(claim, estimate))
        play.read(aborted, *claim_bits(machine, t))
    accepted = abort == 0
    if some(accepted):
        if bit is None:  # Lean: bernoulli p, with the protocol's own randomness
            play.extend(accepted, drawn_bit(claim, play.nature()), True)
        else:
            play.extend(accepted, bit, False)


def end(play: Interpreter) -> None:
    """Protocol.lean ``debate``'s last line: with no abort the verifier outputs a_T (one bit read)."""
    last = play.last_bit()
    if last is not None:
        play.verdict(ALL, last)
        play.read(ALL, 1, 0)


def claim_bits(machine: TranscriptMachine, t: int) -> tuple[int, int]:
    """What the verifier reads after an abort at step t: Alice's claim and a_{I(t)} (prover bits: the
    claim and the relevant witness and transcript bits; input bits: the relevant bits of x)."""
    relevant = machine.relevant(t)
    prover = sum(a >= machine.n_inputs for a in relevant)
    return CLAIM_BITS + prover, len(relevant) - prover


def bits_read_bound(machine: TranscriptMachine) -> int:
    """The most bits :func:`debate` has the verifier read: Bob's word, an abort's claim and relevant
    bits, and a_T."""
    return word_width(machine.length + 1) + CLAIM_BITS + machine.max_relevant + 1


NATURE, PLAYER_COINS, SEAT = 0, 8, 255
"""Draw purposes besides the parties' estimates (a role's purpose is 1 + its index in Role,
:data:`PURPOSE`); a player's own coins are PLAYER_COINS + its role's purpose; SEAT seeds the generator
of a seat (``Seat.rng``) from the first debate of the call, which only a trusted built-in holds in a
batch (it draws from ``view.random()``, never from the seat's generator); a user's player in a batch
(in its worker) holds :class:`NoSeatDraws`, and a user's player called one debate per call holds
debate i's own generator."""
PURPOSE = {role: 1 + i for i, role in enumerate(Role)}


class NoSeatDraws:
    """``Seat.rng`` of a user's player called for a batch of debates at once: a draw from it would
    tie debate i to the batch it was played in (and so to the batch size and the run's split), so
    none may be made; each debate's own uniforms are ``view.random()``."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # Python's own protocols (pickle, copy) are not draws
            raise AttributeError(name)
        raise RuntimeError(f"seat.rng.{name}: a batched player draws from view.random() (each debate's own), "
                           "never from its seat's generator")  # fmt: skip


def moved(role: Role, message: Message, t: int | None, value: Any) -> Moved:
    """The record's event of a committed message (t None: the witness, before step 1)."""
    return Moved(role=role, what=message.what, t=t, message=value)


def forfeited(role: Role, message: Message, t: int | None) -> Moved:
    """The record's event of a message that loses for its sender."""
    return Moved(role=role, what=message.what, t=t, forfeit=message.reason)


def queried(role: Role, t: int, question: Any, n: int, answer: int, judges: tuple[dict, ...] = ()) -> Queried:
    """The record's event of n oracle queries at step t (``question`` as JSON), ``answer`` of them
    yes (``judges``: who answered, people)."""
    return Queried(role=role, t=t, question=question, n=n, answer=answer, judges=judges)


def drawn(t: int, outcome: int) -> Drawn:
    """The record's event of nature's bit (the Lean form)."""
    return Drawn(what="bit", t=t, outcome=outcome)


def record(events: list[Event], verdict: int, loser: Role | None, queries: dict[Role, int], bits: int,
           input_bits: int) -> dict:  # fmt: skip
    """One debate's record: its events, verdict, forfeit (the first forfeit event's reason), queries by
    role and bits read."""
    return {
        "events": events,
        "verdict": verdict,
        "forfeit": None if loser is None else loser.value,
        "reason": next((e.forfeit for e in events if isinstance(e, Moved) and e.forfeit is not None), ""),
        "queries": {role.value: queries[role] for role in Role},
        "bits_read": bits,
        "input_bits_read": input_bits,
    }


class SampleOnlyError(Concession, ValueError):
    """A strategy needs the oracle's probabilities and the oracle only answers samples."""


@dataclass
class StepView:
    """What a party sees at step t of a batch of live debates.

    ``values`` holds x, w and the bits a_1..a_t so far (one row per live debate); :attr:`p` is the
    true P[y_t = 1 | a_{I(t)}], which an unbounded adversary may use (NaN in ``probabilities``
    where a sample-only oracle does not give it); honest parties use :meth:`estimate`, which
    queries the oracle and is counted."""

    t: int
    steps: int
    kind: StepKind
    rows: np.ndarray
    probabilities: np.ndarray
    rules: Rules
    sampler: Callable[[StepView, int], np.ndarray]
    table: np.ndarray
    width: int
    draw: Callable[[StepView], np.ndarray] | None = None
    """The debates' own uniforms (:meth:`random`); None where nothing may be drawn."""
    ahead: Ahead | None = None
    """:meth:`estimate` and :meth:`random` answered before they are asked (the batch interpreter's);
    None where they cannot be."""

    @property
    def p(self) -> np.ndarray:
        """P[y_t = 1 | a_{I(t)}] for each live debate; a sample-only oracle (a person, a model,
        ``--oracle sample``) does not give it, and asking is the asker's error."""
        if np.isnan(self.probabilities).any():
            raise SampleOnlyError("this strategy reads P[y_t = 1], which a sample-only oracle does not give")
        return self.probabilities

    @property
    def values(self) -> np.ndarray:
        """x, w and a_1..a_t of each live debate (a copy, made only when asked for)."""
        return self.table[self.rows, : self.width]

    def estimate(self, n: int) -> np.ndarray:
        """The mean of n samples of y_t for each live debate (n oracle queries each on an oracle
        step, counted for the caller; exact on compute and coin steps)."""
        return self.sampler(self, n)

    def random(self) -> np.ndarray:
        """A uniform in [0, 1) for each live debate, from that debate's own stream (its seed and
        index, the step, the party and how many times it asked this step): a player that draws
        here plays debate i the same in any batch. Exact analysis refuses players that draw."""
        if self.draw is None:
            raise SampleOnlyError("nothing may be drawn here")
        return self.draw(self)


class Advance(NamedTuple):
    """A read of a :class:`StepView` answered before the player makes it: its ``value``, and ``take``,
    which makes the read happen (its queries counted, its stream's count moved on, its event
    recorded) when the player does make it, first of its kind in the step."""

    value: np.ndarray
    take: Callable[[], None]


def no_take() -> None:
    """Taking a read that changes nothing (an estimate on a step that asks no oracle, the probabilities)."""


class Ahead(NamedTuple):
    """A view's reads answered ahead (:class:`Advance`): a player across the process boundary is
    sent them with its call when its last call made them, saving a round trip each
    (:mod:`debatekit.engine.isolation`); an estimate where the oracle only samples is None (asking
    it is the read)."""

    estimate: Callable[[StepView, int], Advance | None]
    random: Callable[[StepView], Advance]


@runtime_checkable
class Alice(Protocol):
    """Alice's side of a step (Figure 2 steps 1-2): a claim and a coin share per live debate (one
    debate's numbers for a ``scalar`` strategy); her witness (Theorem 7.2) is asked only where the
    machine takes one."""

    def claims(self, view: StepView) -> Any: ...

    def shares(self, view: StepView) -> Any: ...


@runtime_checkable
class Bob(Protocol):
    """Bob's side of a step (Figure 2 steps 2-3): a coin share, and whether to abort on Alice's claims
    (``bits``: the step's bits in the paper form, None in Lean's, where Bob decides first)."""

    def aborts(self, view: StepView, claims: np.ndarray, bits: np.ndarray | None) -> Any: ...

    def shares(self, view: StepView) -> Any: ...


PLAYERS = {Role.ALICE: Alice, Role.BOB: Bob}
"""Each role's player interface, which the contract tests check every strategy against."""


class HonestAlice:
    """Lean ``alice c q``: the mean of ``alice_samples`` samples; a uniform coin share."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def witness(self, size: int) -> np.ndarray:
        w = self.seat.instance.witness
        return np.zeros((size, 0), dtype=np.uint8) if w is None else np.tile(w, (size, 1))

    def claims(self, view: StepView) -> np.ndarray:
        return view.estimate(view.rules.alice_samples)

    def shares(self, view: StepView) -> np.ndarray:
        return view.random()


class HonestBob:
    """Lean ``bob s b q`` (paper: abort iff the estimate is >= 1/(2d) from the claim)."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def aborts(self, view: StepView, claims: np.ndarray, bits: np.ndarray | None) -> np.ndarray:
        return view.rules.rejects(claims, view.estimate(view.rules.bob_samples))

    def shares(self, view: StepView) -> np.ndarray:
        return view.random()


def machine_of(instance: Instance) -> TranscriptMachine:
    if instance.machine is None:
        raise ValueError(f"problem {instance.problem} has no transcript machine for stochastic debate")
    return instance.machine


def conditionals(machine: TranscriptMachine, t: int, bits: np.ndarray, instance: Instance) -> np.ndarray:
    """P[y_t = 1 | a_{I(t)}] for each row of relevant bits, computed once per distinct pattern (NaN
    where a sample-only oracle does not give it)."""
    if bits.shape[1] == 0:
        return np.full(bits.shape[0], _conditional(machine, t, (), instance))
    if bits.shape[1] < 63:  # one integer code per pattern: a 1-D unique is much faster
        codes, index = np.unique(bits.astype(np.int64) @ (1 << np.arange(bits.shape[1])), return_inverse=True)
        patterns = ((codes[:, None] >> np.arange(bits.shape[1])) & 1).astype(np.uint8)
    else:
        patterns, index = np.unique(bits, axis=0, return_inverse=True)
    probs = np.array([_conditional(machine, t, tuple(int(b) for b in row), instance) for row in patterns])
    return probs[index.reshape(-1)]


def _conditional(machine: TranscriptMachine, t: int, bits: tuple[int, ...], instance: Instance) -> float:
    """P[y_t = 1 | bits], NaN on an oracle step whose oracle only answers samples."""
    if machine.kind(t) is StepKind.ORACLE and instance.oracle.probability(machine.rule(t, bits)) is None:
        return float("nan")
    return machine.conditional(t, bits, instance.oracle)


def _bits_matrix(message: Any, rows: int, cols: int) -> np.ndarray:
    try:
        w = np.asarray(message)
    except Exception:
        return np.full((rows, cols), -1)
    if w.shape != (rows, cols) or w.dtype.kind not in "biu":
        return np.full((rows, cols), -1)
    return np.where((w == 0) | (w == 1), w.astype(np.int64), -1)
