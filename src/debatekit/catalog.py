"""The specs of the recursive protocols (prover-estimator, naive recursion), registered by
:mod:`debatekit.protocols.registry` as ``debatekit.catalog:NAME``: their debates are played by
:mod:`debatekit.analysis.recursive`, which sits above the protocols, so their specs sit above it
too. Stochastic debate's spec is :mod:`debatekit.protocols.stochastic.spec`; a tree protocol's is
beside its strategy table (``players/X.SPEC``)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from debatekit.analysis import recursive
from debatekit.params import param
from debatekit.players import naive_recursive as naive_recursive_players
from debatekit.players import prover_estimator as prover_estimator_players
from debatekit.problems.registry import Feature, Instance
from debatekit.protocols import prover_estimator
from debatekit.protocols.spec import BatchPlay, Guarantee, ProtocolSpec
from debatekit.reader import word_width


def _prover_estimator_guarantee(instance: Instance) -> Guarantee:
    """The decomposition protocols promise payoffs, not verdicts (see
    :mod:`debatekit.analysis.recursive`): the verdict bounds are vacuous and the payoff bound
    comes with each run. The verifier makes one oracle query, on the leaf, and reads A's claim,
    B's p_d, per round A^k, B's q estimates and A's index, then A^0 and the leaf's proof bits."""
    D = prover_estimator.decomposition_of(instance)
    per_round = 2 + prover_estimator.PROBABILITY_BITS * D.width + word_width(D.width)
    bits = 1 + prover_estimator.PROBABILITY_BITS + D.depth * per_round + 2 + D.leaf_bound
    statement = "Thm 6.1 bounds A's mean payoff (payoff_bound); 1 oracle query; probabilities read as 64 bits"
    return Guarantee(0.0, 1.0, 1, bits, statement)


def _naive_recursive_guarantee(instance: Instance) -> Guarantee:
    """As :func:`_prover_estimator_guarantee`; the verifier reads A's claim, per round her q answers
    and B's index, then the leaf's proof bits."""
    D = prover_estimator.decomposition_of(instance)
    bits = 1 + D.depth * (D.width + word_width(D.width)) + D.leaf_bound
    return Guarantee(0.0, 1.0, 1, bits, "naive recursion: sound only against a B who finds the flaw; 1 oracle query")


def _leaves(instance: Instance) -> int:
    """q^d: the leaves of the decomposition, the size of the argument debated."""
    D = prover_estimator.decomposition_of(instance)
    return D.width**D.depth


def _recursive_description(instance: Instance) -> dict:
    D = prover_estimator.decomposition_of(instance)
    return {"depth": D.depth, "width": D.width}


_RULES = prover_estimator.Rules()
"""The default rules (``rules_for`` gives these ε and ρ for both built-in problems)."""


@dataclass(frozen=True)
class ProverEstimatorParams:
    """Figure 2's parameters: the stability parameters (ε, ρ) of Definition 5.3, which fix the
    reward ratio r = ε(1-ρ)/4, and the δ to which Algorithm 1 makes the estimator B
    indistinguishable from the truth (Lemma A.4). The defaults are what the debate plays:
    ε = 0.1 (evidence-majority's decomposition is built (0.1, 1/2)-stable), ρ = 1/2 as in
    Theorem 6.1, δ = :data:`~debatekit.protocols.prover_estimator.DEFAULT_DELTA`."""

    eps: float = param(
        _RULES.epsilon,
        "ε of (ε, ρ)-stability (Def 5.3); reward ratio r = ε(1-ρ)/4",
        low=0,
        high=0.5,
        open_low=True,
        open_high=True,
    )
    rho: float = param(
        _RULES.rho, "ρ of (ε, ρ)-stability (Def 5.3); r = ε(1-ρ)/4", low=0, high=1, open_low=True, open_high=True
    )
    delta: float = param(
        _RULES.delta, "δ: Algorithm 1 makes the estimator δ-indistinguishable (Lemma A.4)", low=0, high=2, open_low=True
    )


def _prover_estimator_spec(params: ProverEstimatorParams) -> ProtocolSpec:
    """Prover-estimator debate playing ``params``."""
    rules = prover_estimator.Rules(params.eps, params.rho, params.delta)
    return ProtocolSpec(
        "prover-estimator",
        "Theorem 6.1 (Figure 2) of the prover-estimator debate paper",
        "A decomposes, B estimates every subclaim's probability, rewards grow by 1/r a round, V queries one leaf",
        None,
        _prover_estimator_guarantee,
        _leaves,
        prover_estimator_players.STRATEGIES,
        frozenset({Feature.DECOMPOSITION}),
        batch=BatchPlay(
            functools.partial(recursive.simulate, recursive.PROVER_ESTIMATOR, rules=rules),
            functools.partial(recursive.replay, recursive.PROVER_ESTIMATOR, rules=rules),
            recursive.BATCH,
        ),
        conclude=functools.partial(recursive.conclusions, recursive.PROVER_ESTIMATOR, rules=rules),
        describe=_recursive_description,
        llm="debatekit.llm.players.recursive:PROVER_ESTIMATOR",
        isolated=True,
        params=params,
        configure=_prover_estimator_spec,
    )


PROVER_ESTIMATOR = _prover_estimator_spec(ProverEstimatorParams())
NAIVE_RECURSIVE = ProtocolSpec(
    "naive-recursive",
    "Section 7 of the prover-estimator debate paper (the baseline obfuscation breaks)",
    "A decomposes and answers every subclaim, B picks one to recurse on, V checks the leaf",
    None,
    _naive_recursive_guarantee,
    _leaves,
    naive_recursive_players.STRATEGIES,
    frozenset({Feature.DECOMPOSITION, Feature.DETERMINISTIC}),
    batch=BatchPlay(
        functools.partial(recursive.simulate, recursive.NAIVE_RECURSIVE),
        functools.partial(recursive.replay, recursive.NAIVE_RECURSIVE),
        recursive.BATCH,
    ),
    conclude=functools.partial(recursive.conclusions, recursive.NAIVE_RECURSIVE),
    describe=_recursive_description,
    llm="debatekit.llm.players.recursive:NAIVE",
    isolated=True,
)
