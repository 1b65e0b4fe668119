"""Frozen metadata for a protocol, in the manner of OpenSpiel's ``GameType``.

Analysis reads this record and never special-cases a protocol by name: the game tree comes from
``debate``, the promised completeness and soundness and the per-debate bounds from
``guarantee``, the strategies for each role from ``strategies``, the problems it plays from
``needs``, and the interface each role's player keeps from ``players``. A protocol's parameters
(:mod:`debatekit.params`) are the values in ``params``; ``with_params`` gives the protocol playing
other values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from debatekit.engine.events import Event
from debatekit.engine.nodes import Node
from debatekit.ledger import Role
from debatekit.oracle import Oracle
from debatekit.params import NoParams
from debatekit.players.base import Strategy
from debatekit.problems.registry import Feature, Instance
from debatekit.protocols.payoffs import Conclusions
from debatekit.reader import Reader

if TYPE_CHECKING:
    from debatekit.engine.summary import Summary
    from debatekit.ledger import Tally


@dataclass(frozen=True)
class Guarantee:
    """What the theorem promises on one instance.

    completeness: P[V = 1] is at least this when x is in L, honest Alice against any Bob.
    soundness: P[V = 1] is at most this when x is not in L, honest Bob against any Alice.
    verifier_queries, bits_read: per-debate bounds on the verifier's oracle queries and on the
    prover bits it reads, made concrete for this instance.
    """

    completeness: float
    soundness: float
    verifier_queries: int
    bits_read: int
    statement: str


class Simulate(Protocol):
    """A batch protocol's interpreter: debates ``debates`` (a range of indices) of a run seeded
    ``seed`` played at once, debate i drawing only from ``(seed, i)``; ``progress`` told how many
    ended; with ``keep``, each debate's record; the provers ask ``provers`` where it is not the
    verifier's oracle (a model of the judge); ``events`` is one debate's journaled list, which it
    resumes from when the list already holds a stopped debate's events."""

    def __call__(
        self,
        instance: Instance,
        alice: Strategy,
        bob: Strategy,
        seed: int,
        debates: range,
        progress: Callable[[int], None] | None = None,
        keep: bool = False,
        *,
        provers: Oracle | None = None,
        events: list[Event] | None = None,
    ) -> Tally: ...


class Conclude(Protocol):
    """A run's own results (a payoff bound) from its :class:`~debatekit.engine.summary.Summary`,
    which merges over blocks, shards and a resumed run's records."""

    def __call__(self, instance: Instance, alice: Strategy, bob: Strategy, summary: Summary) -> Conclusions: ...


@dataclass(frozen=True)
class BatchPlay:
    """A protocol played by its own interpreter of many debates at once rather than debate by
    debate on ``debate``'s nodes (stochastic debate's numpy rows, the recursive protocols' blocks)."""

    simulate: Simulate
    replay: Callable[[dict, Instance], Any]
    """``replay(record, instance) -> Replayed``: the interpreter run again on a record's messages
    and answers."""
    block: int | None = None
    """The most debates ``simulate`` plays in one call (None: a run's debates in one call, and a
    run that cannot resume). A protocol with a block also plays one debate per call with
    ``events=`` a journaled list, which it resumes from when the list already holds a stopped
    debate's events."""


@dataclass(frozen=True)
class ProtocolSpec:
    name: str
    theorem: str
    summary: str
    debate: Callable[[Instance, Reader], Node] | None
    """The game tree, for debate-by-debate play and exact search (None: batch play only)."""
    guarantee: Callable[[Instance], Guarantee]
    length: Callable[[Instance], int]
    """T, the length of the computation debated."""
    strategies: dict[Role, dict[str, Strategy]]
    needs: frozenset[Feature]
    """What an instance must carry for this protocol: every problem whose features include these
    supports it (:func:`~debatekit.protocols.registry.protocols_of`)."""
    players: dict[Role, type] | None = None
    """Each role's player interface: the ``typing.Protocol`` whose methods the rules call on that
    role's player (the protocol module's ``PLAYERS``); the contract tests check every strategy of
    the role against it. None: not declared yet."""
    llm: str | None = None
    """``module:attr`` of its LLM players (``--alice llm:PROVIDER/MODEL``): a table of each role's
    player made from the model it consults, in the llm extra, imported on use. None: its messages
    rest on no judgement (bits of a computation, which a programmed prover computes exactly)."""
    isolated: bool = False
    """A user's players can move in worker processes (:mod:`debatekit.engine.isolation`): every
    argument the rules hand them crosses :mod:`debatekit.engine.wire` (a run then plays them there
    by default)."""
    batch: BatchPlay | None = None
    """Its own batch interpreter (:class:`BatchPlay`; the Monte Carlo path when present)."""
    conclude: Conclude | None = None
    """The run's own results (a payoff bound) from its merged summary (:class:`Conclude`)."""
    solver: Callable[[Instance], Any] | None = None
    """Exact value against the best adversary for protocols without an enumerable tree."""
    describe: Callable[[Instance], dict[str, Any]] | None = None
    """Extra facts for reports (stochastic debate: K, constants, parameters)."""
    alice_argues: int = 1
    """The answer Alice argues for: 1 in the doubly-efficient debate papers, 0 in the
    query-complexity paper, where Alice is Prover 0 (its Theorem 6)."""
    deterministic_oracle: bool = False
    """The theorem assumes a deterministic oracle (Theorems 5.1 and 5.3: P[O(z)=1] in {0, 1})."""
    params: Any = field(default_factory=NoParams)
    """The parameter values this spec plays (an instance of its declaration, a frozen dataclass)."""
    configure: Callable[[Any], ProtocolSpec] | None = None
    """The same protocol playing other parameter values (None: it declares none)."""
    panel: Callable[[Instance], tuple[int, float]] | None = None
    """People's load: the answers the verifier's one query asks of a panel of distinct judges (R) and
    the expected verifier judgements per debate with honest players (None: one answer per query)."""

    def __post_init__(self) -> None:
        if self.configure is None and type(self.params) is not NoParams:
            raise TypeError(f"{self.name} declares parameters, so it needs configure")

    def honest(self, role: Role) -> Strategy:
        """The strategy ``role`` plays in the theorem's completeness (declared ``honest``)."""
        return next(s for s in self.strategies[role].values() if s.honest)

    def with_params(self, values: Any) -> ProtocolSpec:
        """This protocol playing ``values``, an instance of the declaration ``type(self.params)``."""
        if type(values) is not type(self.params):
            raise TypeError(f"{self.name} takes {type(self.params).__name__}, got {type(values).__name__}")
        if values == self.params or self.configure is None:  # every NoParams() is equal
            return self
        return self.configure(values)


NO_GUARANTEE = "assumes a deterministic oracle, and this oracle is not known to be one: no guarantee"


def guarantee_for(spec: ProtocolSpec, instance: Instance, oracle: Oracle) -> Guarantee:
    """The theorem's guarantee on ``instance`` when the verifier asks ``oracle``; where the
    theorem assumes a deterministic oracle and ``oracle`` is not known to be one, the vacuous
    guarantee (completeness 0, soundness 1), saying why."""
    guarantee = spec.guarantee(instance)
    if spec.deterministic_oracle and oracle.deterministic is not True:
        return replace(guarantee, completeness=0.0, soundness=1.0, statement=f"{spec.theorem} {NO_GUARANTEE}")
    return guarantee


def honest_role(spec: ProtocolSpec, truth: bool) -> Role:
    """The side that argues for the true answer."""
    return Role.ALICE if int(truth) == spec.alice_argues else Role.BOB
