"""The protocols debatekit runs, by name (a plain dict, as the problems are)."""

from __future__ import annotations

from debatekit.players import bisection as bisection_players
from debatekit.players import cross_exam as cross_exam_players
from debatekit.problems.registry import Instance
from debatekit.protocols import bisection, cross_exam
from debatekit.protocols.spec import Guarantee, ProtocolSpec


def _cross_exam_guarantee(instance: Instance) -> Guarantee:
    machine = cross_exam.machine_of(instance)
    return Guarantee(
        1.0,
        0.0,
        1,
        cross_exam.bits_bound(machine),
        "Thm 5.3/7.1: c=1, s=0, <=1 oracle query, (l+1)*ceil(log2 T)+2 bits",
    )


def _bisection_guarantee(instance: Instance) -> Guarantee:
    tm = bisection.machine_of(instance)
    return Guarantee(
        1.0,
        0.0,
        1,
        bisection.bits_bound(tm),
        "Thm 5.1: c=1, s=0, <=1 oracle query, ceil(log2 T)*(config+1)+config bits",
    )


PROTOCOLS: dict[str, ProtocolSpec] = {
    "cross-exam": ProtocolSpec(
        "cross-exam",
        "Theorem 5.3 (Figure 1); with a witness Theorem 7.1 (Figure 3)",
        "Alice writes the transcript, Bob names one step, V checks it",
        cross_exam.debate,
        _cross_exam_guarantee,
        lambda instance: cross_exam.machine_of(instance).length,
        cross_exam_players.STRATEGIES,
    ),
    "bisection": ProtocolSpec(
        "bisection",
        "Theorem 5.1 (Figure 4)",
        "Alice bisects the run of a Turing machine, Bob picks the false half, V checks one step",
        bisection.debate,
        _bisection_guarantee,
        lambda instance: bisection.machine_of(instance).time,
        bisection_players.STRATEGIES,
    ),
}
