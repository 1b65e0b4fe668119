"""A debate as explicit nodes, the one statement of a protocol's rules that every interpreter reads.

Following OpenSpiel's Python games, a protocol writes its rules as nodes, so the same object
serves playing one debate (:mod:`debatekit.engine.play`, async), recording and replaying it
(:mod:`debatekit.engine.record`) and exact analysis (:mod:`debatekit.analysis.exact`):

* :class:`Move`: ``role`` sends a message. ``ask(player)`` gets it from a player (a message, a
  :class:`~debatekit.prob.Dist` of messages for a mixed move, or an awaitable of either);
  ``commit(message)`` turns it into plain canonical data (:mod:`debatekit.engine.boundary`) or
  raises :class:`~debatekit.ledger.Malformed`; ``then(committed)`` continues. ``options`` lists
  a finite move space for exhaustive search and ``key`` names the subgame when its value depends
  on nothing else (a memo key for the solver). ``lose`` is the end a forfeit there comes to;
  ``what`` names the message in the record (the recursive protocols') and ``bits`` is what the
  verifier reads of it when it comes.
* :class:`Judge`: the verifier's final check. ``check()`` reads through the debate's
  :class:`~debatekit.reader.Reader` and returns 0 or 1; a check that consults the oracle is a
  generator that yields one :class:`Query` per oracle query and receives the answer, so the
  interpreter decides how a query is answered (a counted sample, an awaited person, every
  outcome with its probability, or the answer a record holds).
* :class:`End`: the debate is decided without a check (a forfeit or a conceded claim), or is
  undecided (``verdict`` None): a player's model could not be consulted
  (:class:`~debatekit.oracle.Unanswered`), which is no party's argument.

Games with randomness of their own and payoffs (the recursive protocols: trusted coins, per-round
rewards) use three more, as OpenSpiel's chance nodes (``chance_outcomes``) and per-step rewards:

* :class:`Chance`: nature's draw, a trusted coin the verifier tosses. ``outcomes()`` lists
  (outcome, probability) pairs, which exact analysis sums over; ``sample(rng)`` draws one from the
  verifier's generator where only sampling is possible, or where the protocol fixes how its draw is
  made (a coin ``rng.random() < p``, :meth:`Chance.coin`); ``then(outcome)`` continues. The record
  notes a :class:`~debatekit.engine.events.Drawn` by the verifier (with what the rules note beside
  the outcome); replay and a resumed debate hand the recorded outcome back.
* :class:`Paid`: rewards paid on the way (a round's reward), then the debate goes on: a debate's
  payoff is the sum of what it was paid and its :class:`Payoff`, so the value of a subgame (a round
  and the rounds below, memoised on ``key``) does not depend on how it was reached.
* :class:`Payoff`: the debate ends with a payoff vector to A (the recursive protocols' per-round
  reward vector; B's is its negative), its forfeit and reason; tree protocols keep verdict ends.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Hashable, Iterable, Sequence
from dataclasses import dataclass
from types import GeneratorType
from typing import Any

from debatekit.engine.events import Drawn, Moved
from debatekit.engine.trust import InternalError, charge
from debatekit.ledger import Malformed, Role, loser_verdict


@dataclass(frozen=True)
class Move:
    role: Role
    ask: Callable[[Any], Any]
    commit: Callable[[Any], Any]
    then: Callable[[Any], Node]
    options: Callable[[], Iterable[Any]] | None = None
    key: Hashable | None = None
    lose: Callable[[Role, str], Node] | None = None
    """The end when the move is forfeited (by its sender, or by whoever ``then`` finds at fault):
    by default the verdict against the loser (:func:`forfeit`); a payoff game pays the rest of the
    debate at its worst for the loser."""
    what: str = ""
    """The message's name, where a protocol's record names its messages (the recursive protocols':
    ``claim``, ``direction``, ...): the record's :class:`~debatekit.engine.events.Moved` carries it,
    a forfeit of a message that came and did not commit is marked ``refused``, each draw of a mixed
    move is noted (a :class:`~debatekit.engine.events.Drawn` by the mover, its outcome the index),
    and a player's failure is named ``what raised ...``. Empty: the tree protocols' unnamed moves."""
    bits: int = 0
    """The bits of the message the verifier reads when it comes, whether or not it commits."""


@dataclass(frozen=True)
class Query:
    """One query of the verifier's oracle on ``question``."""

    question: Hashable


Check = Generator[Query, int, "int | End | Payoff"]


@dataclass(frozen=True)
class Judge:
    check: Callable[[], int | End | Payoff | Check]


@dataclass(frozen=True)
class End:
    verdict: int | None
    """0 or 1; None for an undecided debate, ``reason`` saying why."""
    forfeit: Role | None = None
    reason: str = ""


@dataclass(frozen=True)
class Chance:
    """Nature's draw (module docstring): ``outcomes()`` its (outcome, probability) pairs (None where
    only sampling is possible), ``sample(rng)`` a draw from the verifier's generator (None: drawn
    from ``outcomes``), ``then(outcome)`` the continuation, ``noted`` what the record keeps beside
    the outcome (a coin's p) and ``key`` the subgame's memo key, as :class:`Move`'s."""

    what: str
    then: Callable[[Any], Node]
    outcomes: Callable[[], Sequence[tuple[Any, Any]]] | None = None
    sample: Callable[[Any], Any] | None = None
    noted: tuple[tuple[str, Any], ...] = ()
    key: Hashable | None = None

    @classmethod
    def coin(cls, what: str, p: float, then: Callable[[int], Node]) -> Chance:
        """A trusted coin that is 1 with probability ``p``, drawn as ``rng.random() < p`` (a p
        outside (0, 1) is certain), its p noted."""
        outcomes = coin_outcomes(p)
        return cls(what, then, lambda: outcomes, lambda rng: int(rng.random() < p), (("p", p),))

    def event(self, outcome: Any) -> Drawn:
        """The draw as the record notes it (``outcome`` in its JSON form)."""
        return Drawn(what=self.what, by=Role.VERIFIER, noted=self.noted, outcome=outcome)

    def possible(self, outcome: Any) -> bool:
        """Whether ``outcome`` can be drawn here (always, when only sampling is possible)."""
        return self.outcomes is None or any(o == outcome and w > 0 for o, w in self.outcomes())


def coin_outcomes(p: float) -> list[tuple[int, float]]:
    """A trusted coin's (outcome, probability) pairs: one certain outcome for p outside (0, 1)."""
    if p >= 1:
        return [(1, 1.0)]
    if p <= 0:
        return [(0, 1.0)]
    return [(1, p), (0, 1 - p)]


@dataclass(frozen=True)
class Paid:
    """``rewards`` (a vector, A's) paid on the way; the debate goes on at ``then``."""

    rewards: tuple[float, ...]
    then: Node


@dataclass(frozen=True)
class Payoff:
    """A debate's end with a payoff vector to A (what it was :class:`Paid` on the way is added)."""

    rewards: tuple[float, ...]
    forfeit: Role | None = None
    reason: str = ""


Node = Move | Judge | Chance | Paid | End | Payoff


def forfeit(loser: Role, reason: str, alice_argues: int = 1) -> End:
    return End(loser_verdict(loser, alice_argues), loser, reason)


def lost(node: Move, loser: Role, reason: str, alice_argues: int = 1) -> Node:
    """The debate's end when ``loser`` forfeits at ``node`` (its ``lose``, else :func:`forfeit`)."""
    if node.lose is None:
        return forfeit(loser, reason, alice_argues)
    try:
        return node.lose(loser, reason)
    except Exception as err:  # the rules' own code
        raise InternalError.of(err) from err


class _Nothing:
    def __repr__(self) -> str:
        return "NOTHING"


NOTHING: Any = _Nothing()
"""What an interpreter reports as committed when no message came (its sender failed to answer)."""


class _Refused:
    def __repr__(self) -> str:
        return "REFUSED"


REFUSED: Any = _Refused()
"""What :func:`advance` reports as committed when a message came and did not commit."""


def advance(node: Move, message: Any, alice_argues: int = 1) -> tuple[Any, Node]:
    """Commit ``message`` and continue: (the committed message, the next node). A message that
    does not commit, for any reason, loses for its sender, and :data:`REFUSED` was committed,
    unless its sender is a trusted seat (:mod:`debatekit.engine.trust`); the rules' continuation
    that raises is an :class:`~debatekit.engine.trust.InternalError`."""
    try:
        committed = node.commit(message)
    except Malformed as bad:
        return REFUSED, lost(node, bad.sender, bad.reason, alice_argues)
    except Exception as err:  # a hostile object raised while being read: its sender's fault
        charge(node.role, err)  # unless its sender is trusted: then the rules failed
        return REFUSED, lost(node, node.role, f"unreadable message ({type(err).__name__})", alice_argues)
    try:
        return committed, node.then(committed)
    except Malformed as bad:
        return committed, lost(node, bad.sender, bad.reason, alice_argues)
    except Exception as err:  # the rules' own code, on committed data
        raise InternalError.of(err) from err


def moved(node: Move, message: Any = None, forfeit: str | None = None, refused: bool = False) -> Moved:
    """A move's event: its sender, its name when it has one (then a message that came and did not
    commit is marked ``refused``), and its message (in its JSON form) or its forfeit's reason."""
    return Moved(role=node.role, what=node.what, message=message, forfeit=forfeit, refused=refused and bool(node.what))


def ended(node: Node) -> End | Payoff:
    """A forfeit's end (the rules may pay on the way to it)."""
    while isinstance(node, Paid):
        node = node.then
    assert isinstance(node, End | Payoff), f"a forfeit must end the debate, not continue at {node}"
    return node


def drawn(node: Chance, outcome: Any, alice_argues: int = 1) -> Node:
    """The debate after nature drew ``outcome``: a malformed message the rules meet there loses
    for its sender; the rules' continuation that raises otherwise is an
    :class:`~debatekit.engine.trust.InternalError`."""
    try:
        return node.then(outcome)
    except Malformed as bad:
        return forfeit(bad.sender, bad.reason, alice_argues)
    except Exception as err:  # the rules' own code
        raise InternalError.of(err) from err


def drawn_from(node: Chance, rng: Any) -> Any:
    """One outcome of ``node`` drawn with ``rng`` (its ``sample``, else by inverting the cumulative
    weights of its outcomes, draw for draw as :meth:`~debatekit.prob.Dist.sample`)."""
    try:
        if node.sample is not None:
            return node.sample(rng)
        assert node.outcomes is not None, "a chance node with neither outcomes nor a sampler"
        pairs = list(node.outcomes())
        if len(pairs) == 1:
            return pairs[0][0]
        u, total = rng.random(), sum(float(w) for _, w in pairs)
        at = 0.0
        for outcome, w in pairs:
            at += float(w)
            if u * total < at:
                return outcome
        return pairs[-1][0]
    except Exception as err:  # the rules' own code
        raise InternalError.of(err) from err


def added(paid: list[float] | None, rewards: tuple[float, ...]) -> list[float]:
    """What a debate was :class:`Paid` so far (None: nothing), ``rewards`` added."""
    return list(rewards) if paid is None else [a + b for a, b in zip(paid, rewards, strict=True)]


def settled(end: Node, paid: list[float] | None) -> End | Payoff:
    """The debate's end with what it was paid on the way added to its payoff."""
    if isinstance(end, Payoff) and paid is not None:
        return Payoff(tuple(added(paid, end.rewards)), end.forfeit, end.reason)
    if isinstance(end, End) and paid is not None and end.verdict is not None:
        raise InternalError.of(TypeError("the rules paid rewards and ended with a verdict"))
    assert isinstance(end, End | Payoff)
    return end


def checking(node: Judge, alice_argues: int = 1) -> Generator[Query, int, End | Payoff]:
    """The verifier's check as a generator of its oracle queries, ending in the debate's end (the
    check's verdict, or the end it returns itself: a :class:`Payoff`); a malformed message met
    while reading loses for its sender."""
    try:
        result = node.check()
        if _generates(result):
            result = yield from result
    except Exception as err:
        return _failed(err, alice_argues)
    return result if isinstance(result, End | Payoff) else End(result)


def judge(node: Judge, answer: Callable[[Hashable], int], alice_argues: int = 1) -> End | Payoff:
    """Run the verifier's check, answering each of its oracle queries with ``answer(question)``:
    :func:`checking`'s end, driven here without that generator (the exact solver judges every
    leaf of its search here). What ``answer`` raises is the caller's and passes through."""
    try:
        result = node.check()
    except Exception as err:
        return _failed(err, alice_argues)
    if _generates(result):
        answered = None
        while True:
            try:
                query = result.send(answered)
            except StopIteration as stop:
                result = stop.value
                break
            except Exception as err:
                return _failed(err, alice_argues)
            answered = answer(query.question)
    return result if isinstance(result, End | Payoff) else End(result)


def _generates(result: Any) -> bool:
    """Whether a check returned a generator of queries (a generator function's, tested first)."""
    return type(result) is GeneratorType or isinstance(result, Generator)


def _failed(err: Exception, alice_argues: int) -> End:
    """A check that raised: a malformed message met while reading loses for its sender; anything
    else is the verifier's own code failing (its reader included)."""
    if isinstance(err, Malformed):
        return forfeit(err.sender, err.reason, alice_argues)
    raise InternalError.of(err) from err
