"""A bounded estimator for prover-estimator debate: B with the operation budget of naive
recursion's bounded challengers on obfuscated-primality (Section 7, like for like). On another
decomposition it knows what the decomposition's ``bounded_truth`` says a bounded prover knows
(everything, where the computation debated is efficient), at no counted cost.

Lemma A.4's estimator (``honest``, Algorithm 1) is trained on the truth of A's proof on the one
instance played: on obfuscated-primality it puts probability 0 exactly on the interval holding N's
factor at every level, so it has in effect factored N. This B knows only what a debater spending
``budget`` operations per debate (:data:`~debatekit.problems.obfuscated_primality.DIVISION_BUDGET` = 2^10 by
default; one operation is a division with remainder or a multiplication modulo N) can know, spent
as naive recursion's challengers spend it (:mod:`debatekit.players.naive_recursive`):

* ``bounded`` (naive ``honest``): trial division of a split's candidates once they all fit in what
  is left of the budget (:func:`~debatekit.problems.obfuscated_primality.trial_divide`, one operation each);
* ``bounded-rho`` (naive ``pollard-rho``): Pollard's rho on N at its first estimate
  (:func:`~debatekit.problems.obfuscated_primality.pollard_rho`, charged the operations it reports).

Free for both, as for the challengers: Miller-Rabin (the polynomial-time test both debaters run),
claims about no candidate, and what a search already settled. Its estimates: p_d = 1 when
Miller-Rabin says N is prime, else 0; a subclaim it knows gets 0 or 1 (the others 1 once the false
one is known); the u it cannot decide share the doubt 1 - p_k about their parent ŷ^k, its estimate
of a round earlier, evenly: each is false with probability (1 - p_k)/u, independently of the coins
drawn before it. At the root of a composite N that is Section 7's B, "a probability of 1/q that
each answer z_i = 0". Departure: it is not consistent with its parent (P[M_D = 1] under these
estimates is (1 - (1 - p_k)/u)^u, not p_k); the consistent joint (exactly one false) would have to
give the last undecided subclaim 0 after u - 1 coins of 1, the estimate the obfuscator recurses
on, and pay her about 1 in round 0.

Declared neither ``honest`` nor ``truthful``: Lemma A.4 promises nothing against it, which is the
comparison's point (the obfuscator's payoff against it, beside her win rate against the bounded
challenger in naive recursion).
"""

from __future__ import annotations

from debatekit.machine.decomposition import Query
from debatekit.players.base import Seat
from debatekit.problems.obfuscated_primality import FactorIntervals, pollard_rho, trial_divide
from debatekit.protocols.prover_estimator import Situation, decomposition_of


class Bounded:
    """B within ``D.budget`` operations a debate on obfuscated-primality; ``rho`` spends them on
    Pollard's rho, else on trial division. ``spent`` counts them (never above the budget)."""

    def __init__(self, seat: Seat, rho: bool = False):
        self.D, self.rng, self.rho = decomposition_of(seat.instance), seat.rng, rho
        self.spent = 0
        self.divisor: int | None = None
        self.searched: list[range] = []
        self.factored = False
        self.rows: dict[tuple[Situation, tuple[Query, ...]], tuple[float | None, ...]] = {}

    @property
    def left(self) -> int:
        return self.D.budget - self.spent if isinstance(self.D, FactorIntervals) else 0

    def known(self, query: Query, level: int) -> float | None:
        """The claim "no factor in ``query``" as B knows it (1 true, 0 false), or None; on another
        decomposition, its own ``bounded_truth`` (the truth where the computation is efficient)."""
        D = self.D
        if not isinstance(D, FactorIntervals):
            return D.bounded_truth(query, level)
        candidates = D.candidates(query)
        if D.miller_rabin or not candidates or (candidates.start <= 2 and candidates.stop > D.sqrt_n):
            return float(D.miller_rabin)
        if self.divisor is not None:
            return float(self.divisor not in candidates)
        if any(done.start <= candidates.start and candidates.stop <= done.stop for done in self.searched):
            return 1.0
        return None

    def _search(self, subqueries: tuple[Query, ...]) -> None:
        """Spend on this split what the method spends (module docstring)."""
        D = self.D
        if not isinstance(D, FactorIntervals) or D.miller_rabin or self.divisor is not None:
            return
        if self.rho:
            if not self.factored:
                self.factored = True
                found = pollard_rho(D.n, self.rng, self.left)
                self.spent += found.operations
                if found.factor is not None:
                    self.divisor = min(found.factor, D.n // found.factor)
            return
        open_ = [D.candidates(y) for y in subqueries if self.known(y, 0) is None]
        total = sum(len(c) for c in open_)
        if not open_ or total > self.left:
            return
        for candidates in open_:
            found = trial_divide(D.n, candidates, self.left)
            self.spent += len(candidates) if found is None else found - candidates.start + 1
            if found is not None:
                self.divisor = found
                return
            self.searched.append(candidates)

    def initial(self) -> float:
        known = self.known(self.D.root(), self.D.depth)
        return 0.5 if known is None else known

    def conditional(self, s: Situation, subqueries: tuple[Query, ...], i: int, prefix: tuple[int, ...]) -> float:
        key = (s, subqueries)
        if key not in self.rows:
            self._search(subqueries)
            self.rows[key] = tuple(self.known(y, s.level - 1) for y in subqueries)
        row = self.rows[key]
        if row[i] is not None:
            return row[i]  # type: ignore[return-value]
        if 0.0 in row:
            return 1.0  # the one false interval is known
        return 1 - (1 - s.p) / row.count(None)


def bounded(seat: Seat) -> Bounded:
    return Bounded(seat)


def bounded_rho(seat: Seat) -> Bounded:
    return Bounded(seat, rho=True)
