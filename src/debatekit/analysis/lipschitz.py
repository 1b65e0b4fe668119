"""The Lipschitz constant K of Definition 6.1, in the Lean form (Comp/Oracle.lean
``Oracle.lipschitz``): the machine M and oracle O are fixed, and every step's conditional
probability P[y_t = 1 | y_<t] may move to that of another oracle O'.

Upper bound (a hybrid argument): run O' for the first t steps and O after; the hybrids telescope,
and step t's term is E[(p'_t - p_t)(V(y_<t 1) - V(y_<t 0))] with V(y) = P_O[M = 1 | y]. So
|P_O[M=1] - P_O'[M=1]| <= dist(O, O') * sum_t max_y |V(y 1) - V(y 0)|, the max over every prefix
(O' can reach prefixes O cannot). Lower bound: a concrete O' that moves each step by eps towards
the output 1 wherever that helps, whose exact effect divided by eps no K can undercut.
Both are computed exactly by enumerating all 2^T prefixes, so only for small T; built-in problems
also carry K in closed form (:func:`threshold_k`), checked against the enumeration in the tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the problems import this module's closed forms: no import back at run time
    from debatekit.problems.registry import Instance

MAX_ENUMERATED_STEPS = 18


class LipschitzError(ValueError):
    """The instance is too long to enumerate, or its oracle probabilities are unknown."""


def threshold_k(contributions: Sequence[dict[int, float]], output_steps: int = 1) -> float:
    """The hybrid bound for a machine whose only influential steps are independent steps with the
    given contribution distributions, followed by ``output_steps`` deterministic steps computing a
    threshold of the sum: 1 per output step, plus for each step the largest probability that the
    steps after it sum to any one value (the chance that this step is pivotal)."""
    total = float(output_steps)
    suffix = {0: 1.0}
    for contribution in reversed(contributions):
        total += max(suffix.values())
        nxt: dict[int, float] = {}
        for value, p in suffix.items():
            for c, q in contribution.items():
                nxt[value + c] = nxt.get(value + c, 0.0) + p * q
        suffix = nxt
    return total


@dataclass(frozen=True)
class LipschitzBounds:
    problem: str
    size: int
    T: int
    claimed: float | None
    lower: float
    upper: float
    method: str


def enumerate_bounds(instance: Instance, eps: Sequence[float] = (1e-3, 1e-2, 1e-1)) -> LipschitzBounds:
    """Exact lower and upper bounds on K by enumerating every prefix (T <= 18)."""
    machine = instance.machine
    if machine is None:
        raise LipschitzError(f"problem {instance.problem} has no transcript machine")
    steps = machine.length
    if steps > MAX_ENUMERATED_STEPS:
        raise LipschitzError(f"T = {steps} is too long to enumerate (at most {MAX_ENUMERATED_STEPS} steps)")
    inputs = np.concatenate([instance.x, instance.witness if instance.witness is not None else []]).astype(int)
    conditional = [np.empty(2**t) for t in range(steps)]  # p_t for each prefix y_<t (bit i of the index is y_i)
    for t in range(steps):
        for prefix in range(2**t):
            values = np.concatenate([inputs, [(prefix >> i) & 1 for i in range(t)]])
            bits = tuple(int(values[a]) for a in machine.relevant(t))
            conditional[t][prefix] = machine.conditional(t, bits, instance.oracle)
    # V over prefixes, backwards: V(y) for |y| = T is y_T.
    value = (np.arange(2**steps) >> (steps - 1)) & 1
    gaps = []
    for t in reversed(range(steps)):
        one, zero = value[2**t :], value[: 2**t]  # y_<t followed by 1 / by 0
        gaps.append(one - zero)
        value = conditional[t] * one + (1 - conditional[t]) * zero
    gaps.reverse()
    upper = float(sum(np.abs(g).max() for g in gaps))
    base = float(value[0])
    lower = 0.0
    for e in eps:
        prob = np.ones(1)
        for t in range(steps):
            moved = np.clip(conditional[t] + e * np.sign(gaps[t]), 0, 1)
            prob = np.concatenate([prob * (1 - moved), prob * moved])
        shifted = float(prob @ ((np.arange(2**steps) >> (steps - 1)) & 1))
        lower = max(lower, abs(shifted - base) / e)
    return LipschitzBounds(
        instance.problem,
        instance.size,
        steps,
        instance.lipschitz,
        lower,
        upper,
        f"exact enumeration of all 2^{steps} prefixes",
    )
