"""Prover-estimator debate: Figure 2 of the prover-estimator debate paper (Theorem 6.1).

A (Alice) claims A(x); B (Bob) estimates p_d = P[L(x) = 1] and a trusted coin ẑ ~ p_d pays A
the initial reward r^(d+1)·1(ẑ = A(x)), with the reward ratio r = ε(1-ρ)/4. In round k = d..1, A
says whether B's p_k is over-, about right or under-estimated (A^k ∈ {-1, 0, +1}) and sends the
split y^k of the current query ŷ^k; B gives each answer's conditional probability B^k_i(z_<i),
the trusted coin draws z^k_i from it, and A earns r^k·A^k·(M_D(x, y^k, z^k) - p_k). A names a
subquery j to recurse on: ŷ^(k-1) = y^k_j, p_(k-1) = B^k_j. In round 0 the verifier asks A, with
no other context, for the proof bits ũ_S the leaf names, queries the human-judgement oracle once
on them, and A earns A^0·(O(ũ_S) - p_0). A's payoff is the sum; B's is its negative.

"No other context" (step 3b) is enforced by committing A's proof once (:class:`CommittedProof`):
the engine asks one context-free copy of her strategy, seated with a generator seeded for the
instance alone and no opponent, for the bits of the positions it needs, in batches
(:meth:`Prover.proof`, ``proof(leaves) -> bits``), commits each answer through the boundary as a
frozen uint8 buffer and keeps it. B's training (Lemma A.4's estimator) and the verifier's round-0
check then read the same committed bits, and no copy of A is asked again for a position already
committed; positions nobody has needed yet are asked when first needed, once, and read by both
thereafter. So A's bits form one context-free proof ũ, the proof the soundness argument needs
(proof of Lemma A.4, eq. 10: g_0 is well defined and is what B was trained on). Its answers, the
probability that M_D evaluates to 1 with every leaf answered by O(ũ_S), are :class:`ProofTruth`;
the truthful estimator (:class:`TruthfulBob`) plays them.

The verifier is the security boundary (:class:`Boundary`). Every message is asked once, by a
typed call of the player's method (:func:`ask`; ``what`` names it only in a forfeit's reason), and
parsed before use by :mod:`debatekit.engine.boundary`'s conversions, inside one catch-all: a
claim that is not a bit, a direction outside {-1, 0, 1}, a split that is not plain data
(:func:`~debatekit.engine.boundary.commit_plain`) M_D is defined on
(:meth:`~debatekit.machine.decomposition.Decomposition.valid_split`), an index outside [q) or a
proof bit that is not a bit loses for A; a probability that is not a finite number in [0, 1]
loses for B; so does a player that raises, or sends a mixed move whose weights are not a
distribution. Players see only parsed data: the situation is an immutable tuple, splits are
rebuilt tuples, estimates and coins tuples of floats and ints. Losing means the rest of the
debate pays the sender its worst: every later reward at its extreme (-r^k for A's forfeit, +r^k
for B's), so a forfeit is never better for its sender than any way of playing on.

The same rules serve play, replay and exact analysis: randomness (the trusted coins, the
verifier's oracle query, mixed moves) goes through a :class:`Chance` as a list of weighted
branches, one sampled branch (:class:`Sampled`, which notes each draw in a ledger that keeps the
debate's events), the recorded one (replay, :mod:`debatekit.analysis.recursive`) or every outcome
with its probability (:class:`Exact`, which memoises rounds by their situation; strategies must
then be functions of their arguments, as Figure 2's are). Rounds are walked with
an explicit stack, so the depth d and width q are not limited by Python's recursion limit.
Values are vectors of per-round rewards (index 0 the initial reward, index 1 + d - k round k), so
one pass yields the reward ledger.

Length: Figure 2's rules, the message boundary both recursive protocols share, the chance
interpreters (sampled and exact) and the iterative walk live here until the recursive protocols
move onto the node engine (:mod:`debatekit.engine`), which takes the boundary and the walk.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np

from debatekit.engine.boundary import (
    NOT_A_BIT,
    as_index,
    commit_bit,
    commit_bits,
    commit_plain,
    commit_probability,
    mixed_branches,
    plain_int,
    safe_repr,
    to_json,
)
from debatekit.engine.play import describe
from debatekit.engine.trust import charge
from debatekit.ledger import Ledger, Malformed, Role
from debatekit.machine.decomposition import Decomposition, LeafOracle, Query, check_stability_parameters
from debatekit.oracle import Asker, Oracle
from debatekit.prob import Dist
from debatekit.problems.registry import Instance
from debatekit.reader import word_width

PROBABILITY_BITS = 64
"""A probability is read as one float64."""


DEFAULT_DELTA = 1e-15
"""δ asked of Algorithm 1 by default: the least δ float64 resolves, so that Lemma A.4's slack
(2d+2)δ (:func:`soundness_slack`) stays below the honest floor (1-ε)·r^(d+1) to the greatest depth
affordable. At the default ε = 0.1, ρ = 1/2 (r = 0.0125) that is d ≤ 6: at d = 6 (parity's and
obfuscated-primality's b = 16) the slack is 14·1e-15 = 1.4e-14 against the floor 4.29e-14
(r^7 = 4.77e-14); at d = 7 the floor is 5.4e-16, below any slack float64 can resolve, and the bound
is reported vacuous (``no promise``). The old 1e-9 gave 1.4e-8 at d = 6, 2.9·10^5 floors.

Cost (measured, ``Indistinguishable`` trained on one instance, two shared cores): Algorithm 1's
step bound is O(|Z|/δ²), but on a point mass the correct answers are vertices of the simplex and
its projections approach them geometrically, so steps grow with log(1/δ): obfuscated-primality
b = 16 (d = 6, q = 4) against ``obfuscate``, 1562 steps at δ = 1e-9, 2070 at 1e-12, 2574 at 1e-15
(9-10 s each); parity b = 64 (d = 6, q = 2), 198 steps at 1e-9 and 318 at 1e-15 (0.6 s). At
δ = 1e-16 the advantage is below float64's rounding of probabilities near 1: Algorithm 1 never
reaches it (advantage 2.5e-3 after its 20,000-step budget, 380 s at b = 12), so 1e-15 is the floor."""


COARSE_DELTA = 1e-9
"""The default δ where the bound is vacuous at any δ (:meth:`Rules.delta_at`): the earlier default,
which Algorithm 1 reaches at every built-in size."""


def soundness_slack(depth: int, delta: float) -> float:
    """(2d+2)·δ: what Lemma A.4 adds to r^(d+1)·P[A(x) = L(x)] against an estimator whose rounds
    are each δ-indistinguishable from the truth.

    Departure: the paper states (2d+1)δ; its proof sums to (2d+2)δ. The proof bounds the initial
    reward by r^(d+1)·P + δ (eq. 5), and each round's reward by eq. 11, E[r_k] < 2δ: one δ from the
    round's own indistinguishability (eq. 6, h_k against g_k) and one from the test f_(k+1) on the
    round above (eq. 8-9; for k = 0, eq. 10). "Summing over the d rounds" counts k = 1..d, but A is
    paid in d+1 rounds, k = d..0 (Figure 2: R = Σ_(k=0..d) r_k). Round 0 draws no coin from B
    (O(ũ_S) is the verifier's query on A's proof bits, so E_(h_0) = E_(g_0) and eq. 6 costs
    nothing there), which leaves E[r_0] < δ by eq. 10 alone. So the total is δ (eq. 5) + 2δ·d
    (rounds d..1) + δ (round 0) = (2d+2)δ; reading eq. 11 literally at k = 0 as well would give
    (2d+3)δ. Theorem 6.1's δ = η/(2d+1) then yields η(2d+2)/(2d+1), not η."""
    return (2 * depth + 2) * delta


@dataclass(frozen=True)
class Rules:
    """Figure 2's parameters: the stability parameters (ε, ρ) of Definition 5.3, which fix the
    reward ratio r = ε(1-ρ)/4, and δ, the indistinguishability Lemma A.4's estimator is built to
    (Algorithm 1's accuracy; the soundness bound carries (2d+2)δ, :func:`soundness_slack`)."""

    epsilon: float = 0.1
    rho: float = 0.5
    delta: float = DEFAULT_DELTA

    def __post_init__(self) -> None:
        check_stability_parameters(self.epsilon, self.rho)
        if not 0 < self.delta <= 2:  # NaN fails too
            raise ValueError(f"delta must satisfy 0 < delta <= 2 (Algorithm 1's accuracy), got {self.delta}")

    @property
    def r(self) -> float:
        """The reward ratio r = ε(1-ρ)/4 (Figure 2, initialisation step 1)."""
        return self.epsilon * (1 - self.rho) / 4

    def delta_at(self, depth: int) -> float:
        """The δ Algorithm 1 is asked for at depth d. A δ given with ``-P`` is kept. The default
        (:data:`DEFAULT_DELTA`) asks for the coarsest of :data:`COARSE_DELTA` and DEFAULT_DELTA
        whose slack (2d+2)δ is below the honest floor (1-ε)·r^(d+1), so the bound is informative
        at the least cost (evidence-majority's d = 2: 1e-9; obfuscated-primality's b = 12 to 16,
        d = 4 to 6: 1e-15), and COARSE_DELTA where neither is (d ≥ 7 at the default ε, ρ): there
        the bound is vacuous whatever δ, and at 1e-15 Algorithm 1 stops at its step budget short
        of δ, its estimates spreading B's coins over more situations than B trains on (3^8 at
        obfuscated-primality's default b = 24, d = 10, against 4096)."""
        if self.delta != DEFAULT_DELTA:
            return self.delta
        floor = (1 - self.epsilon) * self.r ** (depth + 1)
        return next((d for d in (COARSE_DELTA, DEFAULT_DELTA) if soundness_slack(depth, d) < floor), COARSE_DELTA)


class Situation(NamedTuple):
    """The public state at the start of round ``level``: the query ŷ^k, B's p_k for it, A's claim
    A(x) and B's initial estimate p_d. A tuple, so a player it is shown to cannot write into the
    verifier's copy (a frozen dataclass yields to ``object.__setattr__``)."""

    level: int
    query: Query
    p: float
    claim: int
    p_root: float


class Alice(Protocol):
    def claim(self) -> int | Dist:
        """A(x) ∈ {0, 1}."""

    def answer(self, level: int, query: Query) -> int:
        """A(x, y): her answer to a query (Definition 5.2); the tests of Algorithm 1 query it."""

    def direction(self, s: Situation) -> int | Dist:
        """A^k ∈ {-1, 0, 1}: p_k is over-estimated, about right, under-estimated."""

    def queries(self, s: Situation) -> tuple[Query, ...]:
        """y^k, the split of ŷ^k (rounds k ≥ 1), as plain data: ints, strings and tuples of them."""

    def recurse(
        self, s: Situation, subqueries: tuple[Query, ...], estimates: tuple[float, ...], z: tuple[int, ...]
    ) -> int | Dist:
        """j ∈ [q], the subquery to recurse on, having seen B's estimates and the coins z."""

    def proof(self, leaves: tuple[int, ...]) -> Any:
        """ũ at the proof positions ``leaves`` (Figure 2, step 3b): a sequence of as many bits
        (a uint8 array, say), asked of a context-free copy once per position (:class:`CommittedProof`)."""


class Bob(Protocol):
    def initial(self) -> float | Dist:
        """p_d = B(x), the probability that L(x) = 1."""

    def conditional(self, s: Situation, subqueries: tuple[Query, ...], i: int, prefix: tuple[int, ...]) -> float | Dist:
        """B^k_i(x, y^k, z_<i): the probability that z_i = 1 (``i`` counts from 0 here)."""


Branches = list[tuple[float, Any]]
"""Outcomes with their probabilities."""


class Chance(Protocol):
    """Where the debate's randomness goes: a trusted coin, the verifier's oracle query, or a
    player's mixed move. ``ledger`` is the debate's: it counts the verifier's query and, when it
    keeps the debate's events, notes each draw."""

    memoise: bool
    """Whether a round's value may be reused for an equal situation (exact values only)."""

    def coin(self, p: float, what: str, ledger: Ledger) -> Branches:
        """A trusted coin that is 1 with probability ``p`` (``what`` names it: ``z_hat``, ``z^k_i``)."""

    def judge(self, oracle: Oracle, question: Hashable, ledger: Ledger) -> Branches:
        """The verifier's one query of the oracle: an answer drawn, or both with their weights."""

    def mixed(self, role: Role, what: str, branches: Branches, ledger: Ledger) -> Branches:
        """The branches of a move (:func:`~debatekit.engine.boundary.mixed_branches`) to follow."""


def coin_event(what: str, p: float, z: int) -> dict:
    """A trusted coin as the record notes it."""
    return {"chance": what, "by": Role.VERIFIER.value, "p": p, "outcome": z}


@dataclass
class Sampled:
    """One debate: coins from the verifier's generator, the verifier's query through its counted
    :class:`~debatekit.oracle.Asker`, mixed moves from the mover's generator; each draw noted."""

    rngs: dict[Role, np.random.Generator]
    memoise = False

    def coin(self, p: float, what: str, ledger: Ledger) -> Branches:
        z = int(self.rngs[Role.VERIFIER].random() < p)
        ledger.note(coin_event(what, p, z))
        return [(1.0, z)]

    def judge(self, oracle: Oracle, question: Hashable, ledger: Ledger) -> Branches:
        return [(1.0, int(Asker(oracle, Role.VERIFIER, ledger, self.rngs[Role.VERIFIER])(question)))]

    def mixed(self, role: Role, what: str, branches: Branches, ledger: Ledger) -> Branches:
        """One branch, drawn with the mover's generator as :meth:`Dist.sample` draws it; the
        record notes its position among the move's outcomes."""
        if len(branches) == 1:
            return [(1.0, branches[0][1])]
        cumulative = np.cumsum([w for w, _ in branches])
        index = int(np.searchsorted(cumulative, self.rngs[role].random() * cumulative[-1], side="right"))
        index = min(index, len(branches) - 1)
        ledger.note({"chance": what, "by": role.value, "outcome": index})
        return [(1.0, branches[index][1])]


@dataclass
class Exact:
    """Expected values: every outcome weighted by its probability; rounds memoised."""

    memoise = True

    def coin(self, p: float, what: str = "", ledger: Ledger | None = None) -> Branches:
        if p >= 1:
            return [(1.0, 1)]
        if p <= 0:
            return [(1.0, 0)]
        return [(p, 1), (1 - p, 0)]

    def judge(self, oracle: Oracle, question: Hashable, ledger: Ledger) -> Branches:
        p = oracle.probability(question)
        if p is None:
            raise ValueError("exact values need the oracle's probabilities; this oracle only answers samples")
        ledger.count_queries(Role.VERIFIER)
        return self.coin(p)

    def mixed(self, role: Role, what: str, branches: Branches, ledger: Ledger) -> Branches:
        return branches


@dataclass
class Record:
    """What one sampled debate left behind, beside the query ledger."""

    forfeit: Role | None = None
    reason: str = ""
    claim: int | None = None


def as_direction(value: Any) -> int | None:
    """A^k ∈ {-1, 0, 1} as a plain int (bools excluded), or None."""
    if type(value) is bool or type(value) is np.bool_:
        return None
    number = plain_int(value)
    return number if number in (-1, 0, 1) else None


def direction_of(sent: Any) -> int:
    """A's A^k, else her forfeit."""
    direction = as_direction(sent)
    if direction is None:
        raise Malformed(Role.ALICE, f"direction {safe_repr(sent)} is not -1, 0 or 1")
    return direction


def bit_of(what: str) -> Callable[[Any], int]:
    """The parser of one of A's bits (her claim, an answer, a proof bit)."""
    return lambda sent: commit_bit(sent, Role.ALICE, what)


def index_of(sent: Any, size: int, sender: Role, what: str) -> int:
    """An index in [0, size), else ``sender``'s forfeit."""
    index = as_index(sent, size)
    if index is None:
        raise Malformed(sender, f"{what} {safe_repr(sent)} is not in [0, {size})")
    return index


def split_of(decomposition: Decomposition, query: Query, level: int, sent: Any) -> tuple[Query, ...]:
    """A's split of ``query`` as plain data (a fresh tuple of q queries) M_D is defined on, else
    her forfeit."""
    ys = commit_plain(sent, Role.ALICE, "the split")
    if not (type(ys) is tuple and len(ys) == decomposition.width and decomposition.valid_split(query, level, ys)):
        raise Malformed(Role.ALICE, f"queries {safe_repr(ys)} are not a split of {safe_repr(query)}")
    return ys


def raised(what: str, err: Exception) -> str:
    """A forfeit's reason for an exception a player's code raised, whatever its ``__str__`` does."""
    try:
        return f"{what} raised {describe(err)}"
    except Exception:  # even its type's name is hostile
        return f"{what} raised an exception"


def conceded(value: Any, role: Role) -> Malformed | None:
    """A fresh copy of ``value`` when it is ``role``'s own forfeit with a plain reason (a player may
    concede, sending or raising it: a replayed record does so where its sender forfeited), else
    None. Only its exact type and plain attributes are read."""
    try:
        if type(value) is Malformed and value.sender is role and type(value.reason) is str:
            return Malformed(role, value.reason)
    except Exception:  # its attributes were taken away
        pass
    return None


def ask(move: Callable[[], Any], role: Role, what: str, trusted: bool | None = None) -> Any:
    """``role``'s message, ``move()`` (a call of one of its player's methods, as
    ``lambda: alice.direction(s)``); a player that raises has sent garbage (``what`` names the
    message in the reason). Whether ``role``'s player is trusted: ``trusted``, or by default the
    debate's trusted seats (:func:`~debatekit.engine.trust.charge`)."""
    try:
        return move()
    except Exception as err:  # untrusted code: an LLM, a person, a user's strategy
        charge(role, err, trusted)  # a trusted built-in's: an internal error (engine.trust)
        raise conceded(err, role) or Malformed(role, raised(what, err)) from None


def branches(move: Callable[[], Any], role: Role, what: str, mixed: bool = True) -> Branches:
    """``role``'s message (:func:`ask`) as weighted outcomes, unread (a mixed move's, when
    ``mixed``, else the message itself, a Dist included); a player that raises or a mixed move
    that is no distribution is ``role``'s forfeit."""
    message = ask(move, role, what)
    if not mixed:
        return [(1.0, message)]
    try:
        return mixed_branches(message)
    except Exception as err:
        raise Malformed(role, f"{what} sent {safe_repr(message)}: {raised('its weights', err)}") from None


def parse(sent: Any, parser: Callable[[Any], Any], role: Role, what: str) -> Any:
    """``parser(sent)``, or the Malformed against ``role`` that reading ``sent`` came to: a
    conversion that raises (a hostile object's method) is its sender's fault."""
    conceding = conceded(sent, role)
    if conceding is not None:
        return conceding
    try:
        return parser(sent)
    except Malformed as bad:
        return bad
    except Exception:
        return Malformed(role, f"{what} {safe_repr(sent)} cannot be read")


class Prover(Protocol):
    def proof(self, leaves: tuple[int, ...]) -> Any:
        """ũ at the positions ``leaves``, as a sequence of ``len(leaves)`` bits (Figure 2, step 3b)."""


PROOF_BATCH = 1 << 16
"""The most proof positions asked of A in one request."""
DENSE_POSITIONS = 1 << 26
"""Positions below this are kept in one uint8 array (the built-in problems' proofs, m ≤ 2^24);
positions above it (a decomposition that numbers its proof sparsely) in a dict."""
_UNASKED = 254
"""A position of the proof not yet committed (never a committed value: 0, 1 or NOT_A_BIT)."""


class CommittedProof:
    """ũ, A's context-free proof (Figure 2, step 3b), committed once per position: ``request``
    asks her for the bits at a tuple of positions (one context-free copy's
    :meth:`Prover.proof`); each answer is committed through the boundary
    (:func:`~debatekit.engine.boundary.commit_bits`: a frozen uint8 buffer of exactly that length;
    a position that is not a bit holds NOT_A_BIT) and kept, so every reader (B's training, the
    verifier's round 0, the truthful estimator) reads the same bits and no position is asked twice.
    A request that raises or is not a sequence of the right length commits NOT_A_BIT at every
    position it asked for, with its reason: A forfeits at any leaf that names one.

    Kept once per run and instance (:func:`~debatekit.players.estimator.committed_proof`), as the
    paper's ũ is a function of x alone: a debate cannot change bits an earlier debate or B's
    training read. ``implicit`` marks a trusted source known to give the decomposition's own proof
    u, whose truth B may read off the decomposition (:func:`gives_implicit_proof`). ``trusted``
    says whether the source is a trusted built-in, whose request that raises is an internal error
    whoever asks (None: as the debate asking says, :func:`ask`)."""

    def __init__(self, request: Callable[[tuple[int, ...]], Any], implicit: bool = False, trusted: bool | None = None):
        self.request, self.implicit, self.trusted = request, implicit, trusted
        self.requests = 0
        """How many batched requests A has been asked (each once, at most PROOF_BATCH positions)."""
        self._bits = np.full(0, _UNASKED, dtype=np.uint8)
        self._why: np.ndarray | None = None
        self._far: dict[int, tuple[int, int]] = {}
        """Positions at or above DENSE_POSITIONS: (bit, reason number)."""
        self._reasons: list[str] = []

    def _grow(self, top: int) -> None:
        if top >= len(self._bits):
            grown = np.full(max(top + 1, 2 * len(self._bits)), _UNASKED, dtype=np.uint8)
            grown[: len(self._bits)] = self._bits
            self._bits = grown
            if self._why is not None:
                self._why = np.concatenate([self._why, np.zeros(len(grown) - len(self._why), dtype=np.int32)])

    def commit(self, positions: tuple[int, ...] | np.ndarray) -> None:
        """Ask A once, in batches, for the positions not yet committed."""
        if not len(positions):
            return
        wanted = np.asarray(positions, dtype=np.int64)
        dense = wanted < DENSE_POSITIONS
        if dense.any():
            self._grow(int(wanted[dense].max()))
        known = np.zeros(len(wanted), dtype=bool)
        known[dense] = self._bits[wanted[dense]] != _UNASKED
        known[~dense] = [int(j) in self._far for j in wanted[~dense]]
        asked = np.zeros(len(self._bits), dtype=bool)  # the dense ones, each once, in order
        asked[wanted[dense & ~known]] = True
        missing = np.concatenate([np.flatnonzero(asked), np.unique(wanted[~dense & ~known])])
        for start in range(0, len(missing), PROOF_BATCH):
            self._ask(missing[start : start + PROOF_BATCH])

    def _store(self, batch: np.ndarray, values: np.ndarray | int, why: int = 0) -> None:
        dense = batch < DENSE_POSITIONS
        self._bits[batch[dense]] = values[dense] if isinstance(values, np.ndarray) else values
        if why:
            if self._why is None:
                self._why = np.zeros(len(self._bits), dtype=np.int32)
            self._why[batch[dense]] = why
        for k in np.flatnonzero(~dense):
            value = int(values[k]) if isinstance(values, np.ndarray) else values
            self._far[int(batch[k])] = (value, why)

    def _ask(self, batch: np.ndarray) -> None:
        self.requests += 1
        leaves = tuple(batch.tolist())
        try:
            sent = ask(lambda: self.request(leaves), Role.ALICE, "proof", self.trusted)
        except Malformed as bad:
            sent = bad
        bits = parse(sent, lambda m: commit_bits(m, len(leaves), Role.ALICE), Role.ALICE, "proof")
        if isinstance(bits, Malformed):
            self._reasons.append(bits.reason)
            self._store(batch, NOT_A_BIT, len(self._reasons))
        else:
            self._store(batch, bits)

    def _read(self, j: int) -> tuple[int, int]:
        if j < DENSE_POSITIONS:
            return int(self._bits[j]), int(self._why[j]) if self._why is not None else 0
        return self._far[j]

    def bits(self, positions: tuple[int, ...]) -> tuple[int, ...]:
        """The committed bits at ``positions`` (NOT_A_BIT where A's was not a bit), asking A for
        the ones not yet committed."""
        self.commit(positions)
        return tuple(self._read(j)[0] for j in positions)

    def array(self, positions: np.ndarray) -> np.ndarray:
        """The committed bits at ``positions`` (all committed), as a uint8 array."""
        dense = positions < DENSE_POSITIONS
        out = np.empty(len(positions), dtype=np.uint8)
        out[dense] = self._bits[positions[dense]]
        out[~dense] = [self._far[int(j)][0] for j in positions[~dense]]
        return out

    def reason(self, j: int) -> str:
        """Why position ``j`` holds no bit."""
        why = self._read(j)[1]
        return self._reasons[why - 1] if why else f"proof bit {j} is not 0 or 1"


class Boundary:
    """Where a recursive protocol's verifier meets its players: each message is asked once
    (``move``, a call of the player's method), a mixed move resolved through ``chance``, the bits
    read counted in ``ledger``, and each outcome parsed, all inside one catch-all, so nothing a
    player sends runs code or survives unparsed. A's proof bits are read from ``prover``, her
    committed proof (:class:`CommittedProof`; without one, a proof committed from ``alice``
    herself, which is context-free only for strategies that are functions of their arguments).
    When the ledger keeps the debate's events, each message is noted as committed
    (``{"move", "what", "message"}``), or its forfeit (``"forfeit"``, with ``"refused"`` when a
    message came and did not parse); the leaf's proof bits as one message, the list of its bits."""

    alice: Prover
    chance: Chance
    ledger: Ledger
    prover: CommittedProof | None

    def receive(
        self,
        role: Role,
        what: str,
        move: Callable[[], Any],
        bits: int,
        parser: Callable[[Any], Any],
        mixed: bool = True,
    ) -> list[tuple[float, Any]]:
        """(weight, parsed message, or the Malformed that ends the branch) for each branch followed."""
        try:
            sent = branches(move, role, what, mixed)
        except Malformed as bad:
            self.ledger.note({"move": role.value, "what": what, "forfeit": bad.reason})
            return [(1.0, bad)]
        out = []
        for weight, message in self.chance.mixed(role, what, sent, self.ledger):
            self.ledger.count_read(bits)
            parsed = parse(message, parser, role, what)
            if self.ledger.events is not None:
                self.ledger.note(
                    {"move": role.value, "what": what, "forfeit": parsed.reason, "refused": True}
                    if isinstance(parsed, Malformed)
                    else {"move": role.value, "what": what, "message": to_json(parsed)}
                )
            out.append((weight, parsed))
        return out

    def proof_bits(self, leaf: tuple[int, ...]) -> tuple[int, ...]:
        """ũ_S from A's committed proof (step 3b; nothing is noted for a leaf naming no bits);
        raises A's Malformed when a bit of it is not a bit."""
        if not leaf:
            return ()
        if self.prover is None:
            alice = self.alice
            self.prover = CommittedProof(lambda leaves: alice.proof(leaves))
        bits = self.prover.bits(leaf)
        self.ledger.count_read(len(leaf))
        bad = next((j for j, b in zip(leaf, bits, strict=True) if b == NOT_A_BIT), None)
        if bad is not None:
            reason = self.prover.reason(bad)
            self.ledger.note({"move": Role.ALICE.value, "what": "proof", "forfeit": reason})
            raise Malformed(Role.ALICE, reason)
        self.ledger.note({"move": Role.ALICE.value, "what": "proof", "message": list(bits)})
        return bits


def reward_scale(depth: int, rules: Rules) -> np.ndarray:
    """The most each entry of the reward vector can be worth: r^(d+1), r^d, ..., r^0 = 1."""
    r = rules.r
    return np.array([r ** (depth + 1)] + [r**k for k in range(depth, -1, -1)])


def forfeit_values(sender: Role, depth: int, rules: Rules, level: int | None) -> np.ndarray:
    """The rest of the debate at its worst for ``sender``, from round ``level`` down (and the
    initial reward when ``level`` is None): -r^k to A for her forfeit, +r^k for B's. A's initial
    reward is never negative, so her forfeit before it costs her nothing there."""
    scale = reward_scale(depth, rules)
    start = 0 if level is None else 1 + depth - level
    values = np.zeros(depth + 2)
    values[start:] = scale[start:] * (-1.0 if sender is Role.ALICE else 1.0)
    if level is None and sender is Role.ALICE:
        values[0] = 0.0
    return values


Outcome = tuple[float, np.ndarray, Situation | None]
"""One way a round can end: its probability, the rewards it pays (a forfeit included) and the
next round's situation (None when the debate is over)."""


def walk(root: Hashable, outcomes: Callable[[Any], list], memo: dict | None, zero: Any) -> Any:
    """The value of a chain of rounds from ``root``: ``outcomes(node)`` lists (probability, value
    paid, next node or None). Without a memo the one sampled branch is followed in a loop; with
    one, the expectation is taken by a post-order walk with an explicit stack, each node's value
    kept in ``memo``. Either way no Python recursion, so depth is unbounded."""
    if memo is None:
        total, node = zero, root
        while node is not None:
            ((_, paid, node),) = outcomes(node)
            total = total + paid
        return total
    pending: dict[Any, list] = {}
    stack = [root]
    while stack:
        node = stack[-1]
        if node in memo:
            stack.pop()
            continue
        if node not in pending:
            pending[node] = outcomes(node)
        todo = [n for _, _, n in pending[node] if n is not None and n not in memo]
        if todo:
            stack.extend(todo)
            continue
        memo[node] = sum((w * (paid + (memo[n] if n is not None else 0.0)) for w, paid, n in pending.pop(node)), zero)
        stack.pop()
    return memo[root]


class Debate(Boundary):
    """Figure 2 on one decomposition, between two players, under given rules. ``prover`` is A's
    committed proof (step 3b, :class:`CommittedProof`); without it her bits are committed from
    ``alice`` herself, which is context-free only for strategies that are functions of their
    arguments (what :class:`Exact` requires anyway). The verifier's round-0 query goes to ``oracle`` (the
    decomposition's judge by default, :class:`~debatekit.machine.decomposition.LeafOracle`)."""

    def __init__(
        self,
        decomposition: Decomposition,
        alice: Alice,
        bob: Bob,
        rules: Rules,
        chance: Chance,
        ledger: Ledger | None = None,
        record: Record | None = None,
        prover: CommittedProof | None = None,
        oracle: Oracle | None = None,
    ):
        self.d, self.q = decomposition.depth, decomposition.width
        self.D, self.alice, self.bob, self.rules, self.chance = decomposition, alice, bob, rules, chance
        self.ledger, self.record = ledger or Ledger(), record or Record()
        self.prover = prover
        self.oracle = oracle or LeafOracle(decomposition)
        self.scale = reward_scale(self.d, rules)
        self.memo: dict[Situation, np.ndarray] = {}

    def index(self, level: int) -> int:
        return 1 + self.d - level

    def forfeit(self, bad: Malformed, level: int | None) -> np.ndarray:
        if self.record.forfeit is None:
            self.record.forfeit, self.record.reason = bad.sender, bad.reason
        return forfeit_values(bad.sender, self.d, self.rules, level)

    def value(self) -> np.ndarray:
        """The per-round rewards to A: realised (Sampled) or expected (Exact)."""
        total = np.zeros(self.d + 2)
        claimed = self.receive(Role.ALICE, "claim", lambda: self.alice.claim(), 1, bit_of("the claim A(x) ="))
        for weight, claim in claimed:
            total += weight * (self.forfeit(claim, None) if isinstance(claim, Malformed) else self._claimed(claim))
        return total

    def _claimed(self, claim: int) -> np.ndarray:
        """B's p_d, the trusted coin ẑ ~ p_d and the initial reward r^(d+1)·1(ẑ = A(x))."""
        self.record.claim = claim
        total = np.zeros(self.d + 2)
        for weight, p_d in self.receive(
            Role.BOB, "initial", lambda: self.bob.initial(), PROBABILITY_BITS, _estimate("p_d")
        ):
            if isinstance(p_d, Malformed):
                total += weight * self.forfeit(p_d, None)
                continue
            coins = self.chance.coin(p_d, "z_hat", self.ledger)  # ẑ is drawn before the rounds, as in Figure 2
            values = self.rounds(Situation(self.d, self.D.root(), p_d, claim, p_d))
            for w_coin, z_hat in coins:
                total += weight * w_coin * values
                total[0] += weight * w_coin * self.scale[0] * (z_hat == claim)
        return total

    def rounds(self, root: Situation) -> np.ndarray:
        """The rewards of rounds d..0 from ``root`` (:func:`walk`)."""
        return walk(root, self.outcomes, self.memo if self.chance.memoise else None, np.zeros(self.d + 2))

    def outcomes(self, s: Situation) -> list[Outcome]:
        """Round ``s.level`` of Figure 2 up to the next situation, every branch weighted."""
        out: list[Outcome] = []
        for weight, direction in self.receive(
            Role.ALICE, "direction", lambda: self.alice.direction(s), 2, direction_of
        ):
            if isinstance(direction, Malformed):
                out.append((weight, self.forfeit(direction, s.level), None))
            else:
                out += [(weight * w, reward, n) for w, reward, n in self._directed(s, direction)]
        return out

    def _directed(self, s: Situation, direction: int) -> list[Outcome]:
        if s.level == 0:
            return self._final(s, direction)
        ((_, subqueries),) = self.receive(
            Role.ALICE, "queries", lambda: self.alice.queries(s), 0,
            lambda sent: split_of(self.D, s.query, s.level, sent), mixed=False,
        )  # fmt: skip
        if isinstance(subqueries, Malformed):
            return [(1.0, self.forfeit(subqueries, s.level), None)]
        out: list[Outcome] = []
        for weight, z, estimates, forfeited in self._answers(s, subqueries):
            if forfeited is not None:
                out.append((weight, forfeited, None))
            else:
                settled = self._settle(s, direction, subqueries, z, estimates)
                out += [(weight * w, reward, n) for w, reward, n in settled]
        return out

    def _answers(
        self, s: Situation, ys: tuple[Query, ...]
    ) -> list[tuple[float, tuple[int, ...], tuple[float, ...], np.ndarray | None]]:
        """Figure 2, step 4: z_i drawn from B's conditional probabilities one at a time. Returns
        (weight, z, estimates, None) per answer vector, or (weight, ..., B's forfeit)."""
        partial: list[tuple[float, tuple[int, ...], tuple[float, ...]]] = [(1.0, (), ())]
        done: list[tuple[float, tuple[int, ...], tuple[float, ...], np.ndarray | None]] = []
        for i in range(self.q):
            grown = []
            for weight, z, estimates in partial:
                for w_move, b in self._conditional(s, ys, i, z):
                    if isinstance(b, Malformed):
                        done.append((weight * w_move, z, estimates, self.forfeit(b, s.level)))
                    else:
                        coins = self.chance.coin(b, f"z^{s.level}_{i + 1}", self.ledger)
                        grown += [(weight * w_move * w, (*z, zi), (*estimates, b)) for w, zi in coins]
            partial = grown
        return done + [(w, z, e, None) for w, z, e in partial]

    def _conditional(self, s: Situation, ys: tuple[Query, ...], i: int, z: tuple[int, ...]) -> list[tuple[float, Any]]:
        """B's B^k_i(z_<i), i counted from 0."""
        return self.receive(
            Role.BOB, "conditional", lambda: self.bob.conditional(s, ys, i, z), PROBABILITY_BITS,
            _estimate(f"B^k_{i + 1}"),
        )  # fmt: skip

    def _settle(
        self, s: Situation, direction: int, ys: tuple[Query, ...], z: tuple[int, ...], estimates: tuple[float, ...]
    ) -> list[Outcome]:
        """Round k's reward r^k·A^k·(M_D - p_k), then A's choice of subquery (steps 5-7)."""
        reward = np.zeros(self.d + 2)
        reward[self.index(s.level)] = (
            self.scale[self.index(s.level)] * direction * (self.D.combine(s.query, s.level, z) - s.p)
        )
        out: list[Outcome] = []
        chosen = self.receive(
            Role.ALICE, "recurse", lambda: self.alice.recurse(s, ys, estimates, z), word_width(self.q),
            lambda sent: index_of(sent, self.q, Role.ALICE, "recursion index"),
        )  # fmt: skip
        for weight, j in chosen:
            if isinstance(j, Malformed):
                out.append((weight, reward + self.forfeit(j, s.level - 1), None))
            else:
                out.append((weight, reward, Situation(s.level - 1, ys[j], estimates[j], s.claim, s.p_root)))
        return out

    def _final(self, s: Situation, direction: int) -> list[Outcome]:
        """Round 0: A's proof bits with no context, one oracle query, A^0·(O(ũ_S) - p_0)."""
        try:
            bits = self.proof_bits(self.D.leaf(s.query))
        except Malformed as bad:
            return [(1.0, self.forfeit(bad, 0), None)]
        out: list[Outcome] = []
        for weight, o in self.chance.judge(self.oracle, (s.query, bits), self.ledger):
            reward = np.zeros(self.d + 2)
            reward[self.index(0)] = direction * (o - s.p)
            out.append((weight, reward, None))
        return out


def _estimate(what: str) -> Callable[[Any], float]:
    return lambda sent: commit_probability(sent, Role.BOB, what)


def decomposition_of(instance: Instance) -> Decomposition:
    found = instance.recursive_decomposition()
    if found is None:
        raise ValueError(f"problem {instance.problem} has no recursive decomposition")
    return found


def rules_for(instance: Instance) -> Rules:
    """ε from the decomposition when it was built for one (Theorem 8.3), else 0.1; ρ = 1/2 as in
    Theorem 6.1; δ the default."""
    epsilon = getattr(decomposition_of(instance), "epsilon", None)
    return Rules(epsilon if epsilon is not None else 0.1, 0.5)


def rules_of(seat: Any) -> Rules:
    """The rules a player's seat carries, else the instance's (:func:`rules_for`)."""
    return seat.rules if isinstance(seat.rules, Rules) else rules_for(seat.instance)


def expected_rewards(
    decomposition: Decomposition, alice: Alice, bob: Bob, rules: Rules, prover: CommittedProof | None = None
) -> np.ndarray:
    """A's exact expected reward per round (index 0 initial, 1 + d - k round k), by summing over
    every trusted coin and mixed move (strategies must be functions of their arguments);
    ``prover`` as in :class:`Debate`."""
    return Debate(decomposition, alice, bob, rules, Exact(), prover=prover).value()


# -- the truth of A's proof ----------------------------------------------------------------------


class ProofTruth:
    """g on A's context-free proof ũ: the probability that a query's M_D evaluates to 1 when every
    leaf S is answered by the oracle on A's bits, O(ũ_S). This is the g of the proof of Lemma A.4
    (eq. 10 needs A's own proof, not the implicit proof u the decomposition is built on); on
    ũ = u it is :meth:`~debatekit.machine.decomposition.Decomposition.truth`.

    ``proof`` is her committed proof (:class:`CommittedProof`; None: ũ = u, answered by the
    decomposition itself). A bit that is not a bit reads as 0: A forfeits at that leaf whatever B
    says. Leaves are independent oracle draws and the split is a tree, so the subclaims of a split
    are independent given ũ; a query's value is computed from its split's (exactly on bits,
    through the decomposition's automaton, or by enumerating the uncertain answers), over the
    whole subtree: the unbounded estimator's cost. The bits a subtree's leaves name are committed
    first, in batches (:meth:`CommittedProof.commit`), never one request per leaf."""

    def __init__(self, decomposition: Decomposition, proof: CommittedProof | None):
        self.D, self.proof = decomposition, proof
        self.values: dict[tuple[Query, int], float] = {}

    def truth(self, query: Query, level: int) -> float:
        if self.proof is None:
            return self.D.truth(query, level)
        if (query, level) not in self.values:
            self._evaluate(query, level)
        return self.values[(query, level)]

    def _evaluate(self, query: Query, level: int) -> None:
        """Value every node below ``query`` not yet valued, level by level: the leaves' bits read in
        one pass (committed in batches), each leaf judged on them, then each level combined from
        the one below."""
        rows: list[list[Query]] = [[query]]  # rows[i]: the nodes to value at level - i
        for k in range(level, 0, -1):
            rows.append([c for y in rows[-1] for c in self.D.split(y, k) if (c, k - 1) not in self.values])
        leaves = rows[-1]
        judged = self.D.judge_leaves(leaves, self.proof_bits).tolist()
        self.values.update(zip([(y, 0) for y in leaves], judged, strict=True))
        for k, row in zip(range(1, level + 1), reversed(rows[:-1]), strict=True):
            for y in row:
                self.values[(y, k)] = self._combined(y, k, [self.values[(c, k - 1)] for c in self.D.split(y, k)])

    def proof_bits(self, positions: np.ndarray) -> np.ndarray:
        """ũ at ``positions`` as B reads it (committed, PROOF_BATCH positions per request; NOT_A_BIT read as 0)."""
        assert self.proof is not None
        self.proof.commit(positions)
        bits = self.proof.array(positions)
        return np.where(bits == NOT_A_BIT, np.uint8(0), bits)

    def _combined(self, query: Query, level: int, p: list[float]) -> float:
        """P[M_D(query, z) = 1] for independent z_i ~ Bernoulli(p_i)."""
        uncertain = [i for i, pi in enumerate(p) if 0 < pi < 1]
        if not uncertain:
            return float(self.D.combine(query, level, tuple(int(pi >= 1) for pi in p)))
        machine = self.D.automaton(query, level)
        if machine is not None:
            states: dict[Hashable, float] = {machine.start: 1.0}
            for i, pi in enumerate(p):
                grown: dict[Hashable, float] = {}
                for state, w in states.items():
                    for zi, wz in ((1, pi), (0, 1 - pi)):
                        if wz > 0:
                            nxt = machine.step(state, i, zi)
                            grown[nxt] = grown.get(nxt, 0.0) + w * wz
                states = grown
            return sum(w for state, w in states.items() if machine.output(state))
        total, base = 0.0, [int(pi >= 1) for pi in p]
        for mask in range(2 ** len(uncertain)):
            z, w = list(base), 1.0
            for b, i in enumerate(uncertain):
                zi = (mask >> b) & 1
                z[i], w = zi, w * (p[i] if zi else 1 - p[i])
            total += w * self.D.combine(query, level, tuple(z))
        return total

    def conditional(self, query: Query, level: int, i: int, prefix: tuple[int, ...]) -> float:
        """P[z_i = 1 | z_<i] on the split of ``query``: the subclaim's truth (independent answers);
        the decomposition's own conditional when ũ = u."""
        if self.proof is None:
            return self.D.conditional(query, level, i, prefix)
        return self.truth(self.D.split(query, level)[i], level - 1)

    def answer_distribution(self, query: Query, level: int) -> np.ndarray:
        """g_k of Lemma A.4 on ũ: the joint distribution of the split's answers over {0,1}^q
        (z_1 the most significant bit)."""
        if self.proof is None:
            return self.D.answer_distribution(query, level)
        probs = np.ones(1)
        for y in self.D.split(query, level):
            p1 = self.truth(y, level - 1)
            probs = np.stack([probs * (1 - p1), probs * p1], axis=1).reshape(-1)
        return probs


# -- honest A (Lemma A.5) and the truthful estimator ---------------------------------------------


class HonestAlice:
    """Lemma A.5: claim L(x); if |p_d - A(x)| ≤ ε say A^k = 0 throughout; else the correct split
    in every round, A^k by rule (13) from the correct answer g, and recurse on the subquery whose
    estimate is furthest from its correct answer. Proof bits are the implicit proof's. Knowing
    every correct answer is Definition 5.2's A-provability."""

    def __init__(self, decomposition: Decomposition, rules: Rules):
        self.D, self.epsilon = decomposition, rules.epsilon
        self._truths: dict[tuple[tuple[Query, ...], int], list[float]] = {}
        """The correct answers to a split's subqueries (asked again at every answer vector z)."""

    def claim(self) -> int:
        return int(self.D.truth(self.D.root(), self.D.depth) >= 0.5)

    def answer(self, level: int, query: Query) -> int:
        return int(self.D.truth(query, level) >= 0.5)

    def direction(self, s: Situation) -> int:
        if abs(s.p_root - s.claim) <= self.epsilon:
            return 0
        gap = self.D.truth(s.query, s.level) - s.p
        return 1 if gap > self.epsilon else -1 if gap < -self.epsilon else 0

    def queries(self, s: Situation) -> tuple[Query, ...]:
        return self.D.split(s.query, s.level)

    def recurse(
        self, s: Situation, subqueries: tuple[Query, ...], estimates: tuple[float, ...], z: tuple[int, ...]
    ) -> int:
        key = (subqueries, s.level - 1)
        if key not in self._truths:
            self._truths[key] = [self.D.truth(y, s.level - 1) for y in subqueries]
        errors = [abs(b - g) for b, g in zip(estimates, self._truths[key], strict=True)]
        return errors.index(max(errors))  # the first furthest, as argmax

    def proof(self, leaves: tuple[int, ...]) -> np.ndarray:
        return self.D.proof_array(np.fromiter(leaves, dtype=np.int64, count=len(leaves)))


def gives_implicit_proof(player: Any, decomposition: Decomposition) -> bool:
    """Whether ``player``'s proof bits are the implicit proof u of ``decomposition``: its class keeps
    :meth:`HonestAlice.proof` and it holds this decomposition. Then ProofTruth(ũ) is the
    decomposition's own truth, and no bit need be read (the bits the verifier reads are committed
    from the same player, so both are u). A player whose attributes raise is not."""
    try:
        return type(player).proof is HonestAlice.proof and player.D is decomposition
    except Exception:  # no such attributes, or hostile ones
        return False


class TruthfulBob:
    """The truthful estimator (δ = 0 in Lemma A.4): the correct conditional probabilities on A's
    committed proof ũ, the g_k of the proof of Lemma A.4 (:class:`ProofTruth`)."""

    def __init__(self, truth: ProofTruth):
        self.truth, self.D = truth, truth.D

    def initial(self) -> float:
        return self.truth.truth(self.D.root(), self.D.depth)

    def conditional(self, s: Situation, subqueries: tuple[Query, ...], i: int, prefix: tuple[int, ...]) -> float:
        return self.truth.conditional(s.query, s.level, i, prefix)
