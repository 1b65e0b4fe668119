"""(ε, ρ)-stability of a recursive decomposition (Definition 5.3 of the prover-estimator debate paper).

M_D is (ε, ρ)-stable at x, a query ŷ (with split y) and conditional probabilities p_i(z_<i) if every
q_i(z_<i) with |p_i(z_<i) − q_i(z_<i)| < ε for all i and prefixes moves P[M_D(x, y, z) = 1] by less
than ρε. As a function of the free values q_i(prefix), P_q[M_D = 1] is multilinear (each value
appears in one factor of each path's probability), so its supremum over the box is reached at a
corner, and backward induction over the prefix tree computes it exactly:

    V(z) = M_D(x, y, z) for |z| = q;
    V(prefix) = max over q ∈ [max(0, p − ε), min(1, p + ε)] of q·V(prefix 1) + (1 − q)·V(prefix 0),

an endpoint chosen by the sign of V(prefix 1) − V(prefix 0); the same with min gives Vmin, and
sup|Δ| = max(Vmax − P_p, P_p − Vmin). A node is stable iff sup|Δ| < ρε. This uses the closed box,
whose maximum is the supremum over the definition's open box (P_q is continuous); it is
conservative only when sup|Δ| = ρε exactly and is attained only on the boundary, where the open
box never reaches it (we then report "unstable" for a node the definition calls stable).

Two exact methods:

* enumeration (q ≤ :data:`MAX_ENUMERATED_WIDTH`): combine() on all 2^q answer vectors, the
  conditionals on all 2^q − 1 prefixes, and the induction vectorised with numpy one position at a
  time;
* automaton (beyond): the same induction over (position, state) pairs of
  :meth:`Decomposition.automaton`, with the conditional for a state read at any prefix reaching it.
  This is exact when the conditionals depend on the prefix only through the state, as the
  :class:`~debatekit.machine.decomposition.Automaton` contract requires: then by induction the
  values V, and hence the optimal corner, depend only on the state too.

"At the given probabilities": by default p_i is the correct conditional
(:meth:`Decomposition.conditional`). For a deterministic decomposition that is Definition 5.3's
"stable with probability 1 − γ" form, p_i = 1 iff the correct answer to y_i is 1. A constant or a
callable ``(i, prefix) -> p`` may be given instead.

:func:`survey` checks every query the honest splits reach from the root (levels d..1; level-0
queries have no split), or a uniformly random subset of each level when there are more than
``max_nodes``.

Length: the definition's two exact methods (enumeration and automaton), the parameter check and the
survey of a whole decomposition share the backward induction above; splitting them would split it.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Hashable
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

from debatekit.analysis.stats import wilson
from debatekit.machine.decomposition import Automaton, Decomposition, Query, check_stability_parameters

MAX_ENUMERATED_WIDTH = 12
"""Widths up to this are enumerated (2^q answer vectors); beyond, the decomposition's automaton."""
MAX_AUTOMATON_STATES = 2**16
"""The most distinct automaton states allowed at one position."""

Probabilities = float | Callable[[int, tuple[int, ...]], float] | None
"""p_i(z_<i): None (the correct conditionals), a constant, or a callable ``(i, prefix) -> p``."""
Method = Literal["auto", "enumeration", "automaton"]


class StabilityError(ValueError):
    """Stability cannot be computed for these arguments (bad ε or ρ, bad probabilities, a width
    beyond enumeration with no automaton, ...)."""


@dataclass(frozen=True)
class NodeStability:
    """Definition 5.3 at one query: sup|Δ| over the ε-box against the bound ρε."""

    level: int
    query: str
    """repr of the query."""
    sup_change: float
    bound: float
    stable: bool
    method: str

    @property
    def margin(self) -> float:
        """ρε − sup|Δ| (positive iff stable)."""
        return self.bound - self.sup_change


@dataclass(frozen=True)
class LevelSummary:
    """The checked queries of one level."""

    level: int
    nodes: int
    """Queries at this level of the decomposition tree (q^(d − level))."""
    checked: int
    max_sup_change: float
    """The largest sup|change| over the checked nodes: the level's maximum when every node is
    checked, a lower bound on it when they are sampled."""
    min_margin: float
    unstable: int
    stable_ci: tuple[float, float]
    """95% Wilson interval for the level's fraction of stable nodes ([f, f] when every node is
    checked: then it is exact)."""

    @property
    def sampled(self) -> bool:
        return self.checked < self.nodes


@dataclass(frozen=True)
class Survey:
    """Definition 5.3 over a whole decomposition: per-level summaries and the overall verdict.

    ``stable`` is a fact only when it can be: True when every node was checked and is stable,
    False when some checked node is unstable (then the decomposition is not stable, sampled or
    not), and None when nodes were sampled and none of them is unstable (the sample cannot show
    that the rest are stable; each level's ``stable_ci`` bounds its fraction). ``stable_fraction``
    is over the checked nodes."""

    epsilon: float
    rho: float
    bound: float
    depth: int
    width: int
    method: str
    levels: tuple[LevelSummary, ...]
    nodes_total: int
    nodes_checked: int
    sampled: bool
    stable: bool | None
    stable_fraction: float
    worst: NodeStability | None
    """The checked node of smallest margin."""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["levels"] = [asdict(level) | {"sampled": level.sampled} for level in self.levels]
        return data


def _fraction_ci(stable: int, checked: int, nodes: int) -> tuple[float, float]:
    """The level's stable fraction: exact when every node was checked, else a 95% Wilson interval
    (a uniform sample without replacement; Wilson's with-replacement interval is conservative)."""
    if checked == nodes:
        return (stable / nodes, stable / nodes) if nodes else (1.0, 1.0)
    return wilson(stable, checked)


def validate(epsilon: float, rho: float) -> None:
    """Definition 5.3 takes 0 < ε < 1/2 and 0 < ρ < 1."""
    try:
        check_stability_parameters(epsilon, rho)
    except ValueError as err:
        raise StabilityError(str(err)) from None


def sup_change(
    decomposition: Decomposition,
    query: Query,
    level: int,
    epsilon: float,
    probabilities: Probabilities = None,
    method: Method = "auto",
) -> float:
    """sup |P_p[M_D = 1] − P_q[M_D = 1]| over conditionals q within ε of p (Definition 5.3), exact.

    ``method`` "auto" enumerates for q ≤ 12 and uses the automaton beyond; either can be forced.
    """
    return _sup_change(decomposition, query, level, epsilon, probabilities, method)[0]


def check(
    decomposition: Decomposition,
    query: Query,
    level: int,
    epsilon: float,
    rho: float,
    probabilities: Probabilities = None,
    method: Method = "auto",
) -> NodeStability:
    """Whether M_D is (ε, ρ)-stable at ``query`` (Definition 5.3): sup|Δ| < ρε."""
    validate(epsilon, rho)
    change, chosen = _sup_change(decomposition, query, level, epsilon, probabilities, method)
    bound = rho * epsilon
    return NodeStability(level, repr(query), change, bound, change < bound, chosen)


def survey(
    decomposition: Decomposition,
    epsilon: float,
    rho: float,
    max_nodes: int,
    rng: np.random.Generator,
    probabilities: Probabilities = None,
    advance: Callable[[int], None] | None = None,
) -> Survey:
    """Definition 5.3 at every query of levels d..1 reached from the root by :meth:`split`.

    If the tree (Σ_k q^(d−k) nodes) has more than ``max_nodes``, the budget is shared between the
    levels as evenly as their sizes allow (small levels whole, the rest split equally) and each
    level's share is a uniformly random subset drawn from ``rng``. ``advance(done)`` reports progress.
    """
    validate(epsilon, rho)
    d, q = decomposition.depth, decomposition.width
    counts = {k: q ** (d - k) for k in range(d, 0, -1)}
    total = sum(counts.values())
    if max_nodes < min(d, total):
        raise StabilityError(f"max_nodes must be at least the depth d = {d} (one node per level), got {max_nodes}")
    sampled = total > max_nodes
    takes = _shares(counts, max_nodes) if sampled else counts
    nodes = _sample_nodes(decomposition, takes, counts, rng) if sampled else _all_nodes(decomposition)
    results: dict[int, list[NodeStability]] = {k: [] for k in counts}
    for done, (k, query) in enumerate(nodes, start=1):
        results[k].append(check(decomposition, query, k, epsilon, rho, probabilities))
        if advance is not None:
            advance(done)
    levels = tuple(
        LevelSummary(
            k,
            counts[k],
            len(found),
            max((r.sup_change for r in found), default=float("nan")),
            min((r.margin for r in found), default=float("nan")),
            sum(not r.stable for r in found),
            _fraction_ci(sum(r.stable for r in found), len(found), counts[k]),
        )
        for k, found in results.items()
    )
    checked = [r for found in results.values() for r in found]
    stable_count = sum(r.stable for r in checked)
    every = stable_count == len(checked)
    return Survey(
        epsilon=epsilon,
        rho=rho,
        bound=rho * epsilon,
        depth=d,
        width=q,
        method=_method(decomposition, "auto"),
        levels=levels,
        nodes_total=total,
        nodes_checked=len(checked),
        sampled=sampled,
        stable=None if every and sampled else every,
        stable_fraction=stable_count / len(checked) if checked else 1.0,
        worst=min(checked, key=lambda r: r.margin) if checked else None,
    )


# -- the two exact methods -------------------------------------------------------------------


def _sup_change(
    decomposition: Decomposition,
    query: Query,
    level: int,
    epsilon: float,
    probabilities: Probabilities,
    method: Method,
) -> tuple[float, str]:
    """sup|Δ| and the method that computed it."""
    if not 0 < epsilon < 0.5:
        raise StabilityError(f"epsilon must satisfy 0 < epsilon < 1/2 (Definition 5.3), got {epsilon}")
    if level < 1:
        raise StabilityError(f"only queries of level >= 1 have a split, got level {level}")
    prob = _probability(decomposition, query, level, probabilities)
    chosen = _method(decomposition, method)
    if chosen == "enumeration":
        top, bottom, at_p = _by_enumeration(decomposition, query, level, epsilon, prob)
    else:
        automaton = decomposition.automaton(query, level)
        if automaton is None:
            raise StabilityError(
                f"width q = {decomposition.width} is beyond enumeration (q <= {MAX_ENUMERATED_WIDTH}) and "
                f"the decomposition has no automaton for level-{level} query {query!r}"
            )
        top, bottom, at_p = _by_automaton(automaton, decomposition.width, epsilon, prob)
    return max(top - at_p, at_p - bottom, 0.0), chosen


def _extremes(
    p: np.ndarray,
    epsilon: float,
    top: tuple[np.ndarray, np.ndarray],
    bottom: tuple[np.ndarray, np.ndarray],
    at_p: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One step of the induction: each pair is (V after 0, V after 1); the best q is an endpoint of
    [max(0, p − ε), min(1, p + ε)] (the value is linear in q)."""
    lo, hi = np.clip(p - epsilon, 0.0, 1.0), np.clip(p + epsilon, 0.0, 1.0)
    gap = top[1] - top[0]
    new_top = top[0] + np.maximum(lo * gap, hi * gap)
    gap = bottom[1] - bottom[0]
    new_bottom = bottom[0] + np.minimum(lo * gap, hi * gap)
    new_at_p = at_p[0] + p * (at_p[1] - at_p[0])
    return new_top, new_bottom, new_at_p


def _by_enumeration(
    decomposition: Decomposition,
    query: Query,
    level: int,
    epsilon: float,
    prob: Callable[[int, tuple[int, ...]], float],
) -> tuple[float, float, float]:
    """(Vmax, Vmin, P_p) over all 2^q answer vectors (index: z_1 most significant)."""
    q = decomposition.width
    outputs = np.array([_bit(decomposition.combine(query, level, _bits(z, q))) for z in range(2**q)], dtype=float)
    top = bottom = at_p = outputs
    for i in reversed(range(q)):
        p = np.array([prob(i, _bits(prefix, i)) for prefix in range(2**i)], dtype=float)
        pairs = [(v.reshape(-1, 2)[:, 0], v.reshape(-1, 2)[:, 1]) for v in (top, bottom, at_p)]
        top, bottom, at_p = _extremes(p, epsilon, *pairs)
    return float(top[0]), float(bottom[0]), float(at_p[0])


def _by_automaton(
    automaton: Automaton, q: int, epsilon: float, prob: Callable[[int, tuple[int, ...]], float]
) -> tuple[float, float, float]:
    """(Vmax, Vmin, P_p) over (position, state) pairs; each state's conditional is read at the
    first prefix found reaching it."""
    states: dict[Hashable, int] = {automaton.start: 0}  # the states at this position, numbered
    prefixes: list[tuple[int, ...]] = [()]  # a prefix reaching each
    moves: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # per position: p, next state after 0, after 1
    for i in range(q):
        after: dict[Hashable, int] = {}
        reached: list[tuple[int, ...]] = []
        p, zero, one = [], [], []
        for state, prefix in zip(states, prefixes, strict=True):
            p.append(prob(i, prefix))
            for bit, target in ((0, zero), (1, one)):
                nxt = automaton.step(state, i, bit)
                if nxt not in after:
                    after[nxt] = len(reached)
                    reached.append((*prefix, bit))
                target.append(after[nxt])
        if len(after) > MAX_AUTOMATON_STATES:
            raise StabilityError(f"the automaton has more than {MAX_AUTOMATON_STATES} states at position {i + 1}")
        moves.append((np.array(p, dtype=float), np.array(zero), np.array(one)))
        states, prefixes = after, reached
    outputs = np.array([_bit(automaton.output(state)) for state in states], dtype=float)
    top = bottom = at_p = outputs
    for p, zero, one in reversed(moves):
        pairs = [(v[zero], v[one]) for v in (top, bottom, at_p)]
        top, bottom, at_p = _extremes(p, epsilon, *pairs)
    return float(top[0]), float(bottom[0]), float(at_p[0])


# -- helpers ---------------------------------------------------------------------------------


def _bits(value: int, length: int) -> tuple[int, ...]:
    """``value`` as ``length`` bits, most significant first."""
    return tuple((value >> (length - 1 - j)) & 1 for j in range(length))


def _bit(value: object) -> int:
    if value not in (0, 1):
        raise StabilityError(f"M_D must output a bit, got {value!r}")
    return int(value)  # type: ignore[call-overload]


def _probability(
    decomposition: Decomposition, query: Query, level: int, probabilities: Probabilities
) -> Callable[[int, tuple[int, ...]], float]:
    """p_i(prefix) as a checked function."""
    if probabilities is None:
        raw: Callable[[int, tuple[int, ...]], float] = lambda i, prefix: decomposition.conditional(  # noqa: E731
            query, level, i, prefix
        )
    elif isinstance(probabilities, numbers.Real):
        constant = float(probabilities)
        raw = lambda i, prefix: constant  # noqa: E731
    elif callable(probabilities):
        raw = probabilities
    else:
        raise StabilityError(f"probabilities must be None, a number or a callable, got {probabilities!r}")

    def prob(i: int, prefix: tuple[int, ...]) -> float:
        p = float(raw(i, prefix))
        if not 0.0 <= p <= 1.0:
            raise StabilityError(f"p_{i + 1}({prefix}) = {p} is not a probability")
        return p

    return prob


def _method(decomposition: Decomposition, method: Method) -> str:
    if method == "auto":
        return "enumeration" if decomposition.width <= MAX_ENUMERATED_WIDTH else "automaton"
    if method not in ("enumeration", "automaton"):
        raise StabilityError(f"method must be auto, enumeration or automaton, got {method!r}")
    if method == "enumeration" and decomposition.width > MAX_ENUMERATED_WIDTH:
        raise StabilityError(f"enumeration takes width q <= {MAX_ENUMERATED_WIDTH}, got {decomposition.width}")
    return method


def _all_nodes(decomposition: Decomposition) -> list[tuple[int, Query]]:
    """Every (level, query) of levels d..1, level by level."""
    out: list[tuple[int, Query]] = []
    layer = [decomposition.root()]
    for k in range(decomposition.depth, 0, -1):
        out.extend((k, query) for query in layer)
        if k > 1:
            layer = [child for query in layer for child in decomposition.split(query, k)]
    return out


def _shares(counts: dict[int, int], budget: int) -> dict[int, int]:
    """Water-filling: levels from smallest, each taking min(its size, an equal share of what is left)."""
    takes: dict[int, int] = {}
    order = sorted(counts, key=lambda k: counts[k])
    for j, k in enumerate(order):
        takes[k] = min(counts[k], budget // (len(order) - j))
        budget -= takes[k]
    return takes


def _sample_nodes(
    decomposition: Decomposition, takes: dict[int, int], counts: dict[int, int], rng: np.random.Generator
) -> list[tuple[int, Query]]:
    """For each level, ``takes[k]`` distinct nodes uniformly at random: a node is its path of split
    indices from the root (an integer in [0, q^(d−k)) in base q)."""
    d, q = decomposition.depth, decomposition.width
    splits: dict[tuple[int, ...], tuple[Query, ...]] = {}

    def node(path: tuple[int, ...]) -> Query:
        query = decomposition.root()
        for j, c in enumerate(path):
            if path[:j] not in splits:
                splits[path[:j]] = decomposition.split(query, d - j)
            query = splits[path[:j]][c]
        return query

    out: list[tuple[int, Query]] = []
    for k in sorted(takes, reverse=True):
        length, take = d - k, takes[k]
        if counts[k] <= 10**6:
            paths = {_digits(int(i), q, length) for i in rng.choice(counts[k], size=take, replace=False)}
        else:
            paths = set()
            while len(paths) < take:
                paths.add(tuple(int(c) for c in rng.integers(0, q, size=length)))
        out.extend((k, node(path)) for path in sorted(paths))
    return out


def _digits(value: int, base: int, length: int) -> tuple[int, ...]:
    out = []
    for _ in range(length):
        value, c = divmod(value, base)
        out.append(c)
    return tuple(reversed(out))
