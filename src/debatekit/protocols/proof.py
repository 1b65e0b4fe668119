"""A's proof in the recursive protocols: ũ, committed once and context-free (Figure 2, step 3b of
the prover-estimator debate paper), and its truth g (the proof of Lemma A.4, eq. 10).

"No other context" is enforced by committing A's proof once (:class:`CommittedProof`): the engine
asks one context-free copy of her strategy, seated with a generator seeded for the instance alone
and no opponent, for the bits of the positions it needs, in batches (:meth:`Prover.proof`,
``proof(leaves) -> bits``), commits each answer through the boundary as a frozen uint8 buffer and
keeps it. B's training (Lemma A.4's estimator) and the verifier's round-0 check then read the same
committed bits, and no copy of A is asked again for a position already committed; positions
nobody has needed yet are asked when first needed, once, and read by both thereafter. So A's bits
form one context-free proof ũ, the proof the soundness argument needs (g_0 is well defined and is
what B was trained on). Its answers, the probability that M_D evaluates to 1 with every leaf
answered by O(ũ_S), are :class:`ProofTruth`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Protocol

import numpy as np

from debatekit.engine.boundary import NOT_A_BIT, commit_bit, commit_bits, safe_repr
from debatekit.engine.nodes import Move, Node
from debatekit.ledger import Malformed, Role
from debatekit.machine.decomposition import Decomposition, Query
from debatekit.protocols.recursive_engine import ask, parse
from debatekit.reader import Reader


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


def implicit_proof(player: Any, leaves: tuple[int, ...]) -> np.ndarray:
    """An honest A's ``proof`` method (both recursive protocols'): u at ``leaves``, her
    decomposition ``player.D``'s own proof bits. :func:`~debatekit.protocols.prover_estimator.gives_implicit_proof`
    recognises it, so B reads such a proof's truth off the decomposition."""
    return player.D.proof_array(np.fromiter(leaves, dtype=np.int64, count=len(leaves)))


def proof_move(
    leaf: tuple[int, ...],
    reader: Reader,
    prover: CommittedProof | None,
    then: Callable[[tuple[int, ...]], Node],
    lose: Callable[[Role, str], Node],
    key: Hashable | None = None,
) -> Node:
    """Figure 2, step 3b (and naive recursion's round 0): ũ_S for the leaf's positions ``leaf``,
    read from A's committed proof ``prover`` (its bits, counted as read whatever they are; a
    position that holds no bit is her forfeit with its reason), then ``then(bits)``; a leaf naming
    no bits goes straight on. ``key`` names the subgame, as :class:`~debatekit.engine.nodes.Move`'s."""
    if not leaf:
        return then(())
    reader.ledger.count_read(len(leaf))

    def bits_of(_alice: Any) -> tuple[int, ...]:
        assert prover is not None, "a proof is read from the record when none is committed"
        bits = prover.bits(leaf)
        bad = next((j for j, b in zip(leaf, bits, strict=True) if b == NOT_A_BIT), None)
        if bad is not None:
            raise Malformed(Role.ALICE, prover.reason(bad))
        return bits

    def committed(sent: Any) -> tuple[int, ...]:
        if type(sent) not in (tuple, list) or len(sent) != len(leaf):
            raise Malformed(Role.ALICE, f"proof {safe_repr(sent)} is not {len(leaf)} bits")
        return tuple(commit_bit(b, Role.ALICE, "proof bit") for b in sent)

    return Move(Role.ALICE, bits_of, committed, then, key=key, lose=lose, what="proof")


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
