"""Frozen metadata for a protocol, in the manner of OpenSpiel's ``GameType``.

Analysis reads this record and never special-cases a protocol by name: the game tree comes from
``debate``, the promised completeness and soundness and the per-debate bounds from
``guarantee``, and the strategies for each role from ``strategies``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from debatekit.game import Node
from debatekit.ledger import Role
from debatekit.players.base import Strategy
from debatekit.problems.registry import Instance
from debatekit.reader import Reader


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


@dataclass(frozen=True)
class ProtocolSpec:
    name: str
    theorem: str
    summary: str
    debate: Callable[[Instance, Reader], Node]
    guarantee: Callable[[Instance], Guarantee]
    length: Callable[[Instance], int]
    """T, the length of the computation debated."""
    strategies: dict[Role, dict[str, Strategy]]
