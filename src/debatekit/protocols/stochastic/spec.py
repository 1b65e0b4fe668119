"""Stochastic-oracle debate as the registry knows it (Theorem 6.2 / Figure 2, Debate/Protocol.lean):
its parameter (the constants), its :class:`~debatekit.protocols.spec.ProtocolSpec` for each choice
of them, with the batch interpreter's ``simulate``, the scalar interpreter's ``replay`` and the
exact solver, and the rules each instance plays (made once per constants, K and T)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from debatekit.engine.events import Event
from debatekit.ledger import Tally
from debatekit.oracle import Oracle
from debatekit.params import ParamError, param
from debatekit.players import stochastic as stochastic_players
from debatekit.players.base import Strategy
from debatekit.problems.registry import Feature, Instance
from debatekit.protocols.spec import BatchPlay, Guarantee, ProtocolSpec
from debatekit.protocols.stochastic import batch as stochastic_batch
from debatekit.protocols.stochastic import rules as stochastic
from debatekit.protocols.stochastic import solo as stochastic_solo
from debatekit.protocols.stochastic.params import Constants


def _stochastic_rules(params: StochasticParams, instance: Instance) -> stochastic.Rules:
    if instance.lipschitz is None:
        raise ValueError(f"problem {instance.problem} has no Lipschitz constant for stochastic debate")
    k, steps = float(instance.lipschitz), stochastic.machine_of(instance).length
    return _rules(params.constants, k, steps, params.verifier_budget)


@functools.lru_cache(maxsize=64)
def _rules(constants: Constants, k: float, steps: int, verifier_budget: int) -> stochastic.Rules:
    return stochastic.rules_for(constants, k, steps, verifier_budget)


def _stochastic_solve(params: StochasticParams, instance: Instance):
    """Exact backward induction; imported on use, as scipy.stats is slow to import."""
    from debatekit.protocols.stochastic import exact

    return exact.solve(instance, _stochastic_rules(params, instance))


def _panel(params: StochasticParams, instance: Instance) -> tuple[int, float]:
    """R, the answers the verifier's one query asks, and the expected verifier judgements per debate
    with honest players: R times a certified bound on honest Bob aborting (R for the paper's constants)."""
    from debatekit.protocols.stochastic.planner import honest_abort

    rules = _stochastic_rules(params, instance)
    if rules.form is not stochastic.Form.lean:
        return rules.vera_samples, float(rules.vera_samples)
    p = rules.parameters
    aborts = honest_abort(int(p["T"]), rules.alice_samples, p["c"], rules.bob_samples, p["s"], p["b"])
    return rules.vera_samples, rules.vera_samples * aborts


@dataclass(frozen=True)
class StochasticParams:
    """Stochastic debate's parameters: the constant choice (Figure 2's sample counts and
    thresholds; ``--constants`` sets it too)."""

    constants: Constants = param(  # noqa: RUF009 (a field, as every param; ruff knows no enum is immutable)
        Constants.planned, "the constants: planned (certified plan), lean (Lean's defaults) or paper (Theorem 6.2's)"
    )
    verifier_budget: int = param(
        0,
        "planned constants: at most this many verifier queries per debate, with the strongest guarantee they "
        "certify (`debatekit plan --verifier-budget`); 0: the fewest for completeness and soundness 3/5",
        low=0,
    )


def _stochastic_spec(params: StochasticParams) -> ProtocolSpec:
    """Stochastic-oracle debate with the given constants."""
    constants = params.constants
    if params.verifier_budget and constants is not Constants.planned:
        raise ParamError(f"verifier_budget is planned: it needs constants=planned, not {constants}")

    def guarantee(instance: Instance) -> Guarantee:
        rules = _stochastic_rules(params, instance)
        bits = stochastic.bits_read_bound(stochastic.machine_of(instance))
        return Guarantee(
            rules.completeness,
            1 - rules.soundness,
            rules.vera_samples,
            bits,
            f"Thm 6.2 ({constants} constants): P[V=1] >= {rules.completeness:.3f} if P[M=1] >= 2/3, "
            f"<= {1 - rules.soundness:.3f} if P[M=1] <= 1/3; {rules.vera_samples} verifier queries",
        )

    def simulate(
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
    ) -> Tally:
        rules = _stochastic_rules(params, instance)
        return stochastic_batch.simulate(
            instance, rules, alice, bob, seed, debates, progress, keep, provers=provers, events=events
        )

    def replay(record: dict, instance: Instance):
        return stochastic_solo.replay(record, instance, _stochastic_rules(params, instance))

    def describe(instance: Instance) -> dict:
        rules = _stochastic_rules(params, instance)
        return {
            "K": instance.lipschitz,
            "constants": constants.value,
            "form": rules.form.value,
            "parameters": rules.parameters
            | {
                "alice_samples": rules.alice_samples,
                "bob_samples": rules.bob_samples,
                "vera_samples": rules.vera_samples,
                "bob_threshold": rules.bob_threshold,
                "vera_threshold": rules.vera_threshold,
            },
        }

    return ProtocolSpec(
        "stochastic", "Theorem 6.2 (Figure 2) and the Lean formalization; with a witness Theorem 7.2",
        "Alice claims each step's probability, the bit is drawn, Bob may abort, V samples the oracle once",
        None, guarantee, lambda instance: stochastic.machine_of(instance).length, stochastic_players.STRATEGIES,
        frozenset({Feature.TRANSCRIPT, Feature.LIPSCHITZ}),
        batch=BatchPlay(simulate, replay, stochastic_batch.BATCH), params=params, configure=_stochastic_spec,
        describe=describe,
        solver=lambda instance: _stochastic_solve(params, instance), players=stochastic.PLAYERS,
        llm="debatekit.llm.players.stochastic:PLAYERS", isolated=True,
        panel=lambda instance: _panel(params, instance),
    )  # fmt: skip


SPEC = _stochastic_spec(StochasticParams())
"""Stochastic debate with the planned constants (``-P constants=`` varies it)."""
