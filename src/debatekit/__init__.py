"""debatekit: executable debate protocols from the theory of AI safety via debate.

The public surface, curated: the commands as functions taking names as the command line does
(``run``, ``solve``, ``plan``, ``sweep``: :mod:`debatekit.api`), the computation model, the protocol
and problem registries, the extension types (protocol metadata, the engine's nodes and boundary,
oracles, players), and the typed analysis entry points with their result types (the typed
Monte Carlo ``run`` and exact ``solve`` are in :mod:`debatekit.analysis.montecarlo` and
:mod:`debatekit.analysis.exact`). Names load on first use (PEP 562), so the command
line starts without importing what a command does not need; type checkers read each name's home
module (``_HOME``), where it is fully typed.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOME = {
    # the commands as functions
    "run": "debatekit.api",
    "experiment_judge_accuracy": "debatekit.api",
    "solve": "debatekit.api",
    "plan": "debatekit.api",
    "sweep": "debatekit.api",
    "UsageError": "debatekit.api",
    # computation model
    "Dist": "debatekit.prob",
    "MachineBuilder": "debatekit.machine.transcript",
    "StepKind": "debatekit.machine.transcript",
    "TranscriptMachine": "debatekit.machine.transcript",
    "Circuit": "debatekit.machine.circuit",
    "CircuitBuilder": "debatekit.machine.circuit",
    "Gate": "debatekit.machine.circuit",
    "Config": "debatekit.machine.turing",
    "TuringMachine": "debatekit.machine.turing",
    "Decomposition": "debatekit.machine.decomposition",
    # registries
    "PROBLEMS": "debatekit.problems",
    "Instance": "debatekit.problems",
    "problem": "debatekit.problems",
    "PROTOCOLS": "debatekit.protocols.registry",
    # protocol metadata and the engine
    "ProtocolSpec": "debatekit.protocols.spec",
    "Guarantee": "debatekit.protocols.spec",
    "Move": "debatekit.engine.nodes",
    "Judge": "debatekit.engine.nodes",
    "Query": "debatekit.engine.nodes",
    "End": "debatekit.engine.nodes",
    "Invalid": "debatekit.engine.boundary",
    "Reader": "debatekit.reader",
    "Role": "debatekit.ledger",
    "Ledger": "debatekit.ledger",
    "Malformed": "debatekit.ledger",
    # oracles and players
    "Oracle": "debatekit.oracle",
    "TableOracle": "debatekit.oracle",
    "FunctionOracle": "debatekit.oracle",
    "SampleOracle": "debatekit.oracle",
    "SampleOnly": "debatekit.oracle",
    "Seat": "debatekit.players.base",
    "Strategy": "debatekit.players.base",
    "resolve": "debatekit.players.base",
    # analysis and results
    "play_one": "debatekit.analysis.montecarlo",
    "make_instance": "debatekit.analysis.montecarlo",
    "Oracles": "debatekit.analysis.montecarlo",
    "Outcome": "debatekit.analysis.montecarlo",
    "RunResult": "debatekit.analysis.montecarlo",
    "Summary": "debatekit.engine.summary",
    "replay": "debatekit.engine.record",
    "read_records": "debatekit.engine.record",
    "Replayed": "debatekit.engine.record",
    "accept_probability": "debatekit.analysis.exact",
    "ExactError": "debatekit.analysis.exact",
    "Solution": "debatekit.analysis.exact",
}

__all__ = [
    "PROBLEMS",
    "PROTOCOLS",
    "Circuit",
    "CircuitBuilder",
    "Config",
    "Decomposition",
    "Dist",
    "End",
    "ExactError",
    "FunctionOracle",
    "Gate",
    "Guarantee",
    "Instance",
    "Invalid",
    "Judge",
    "Ledger",
    "MachineBuilder",
    "Malformed",
    "Move",
    "Oracle",
    "Oracles",
    "Outcome",
    "ProtocolSpec",
    "Query",
    "Reader",
    "Replayed",
    "Role",
    "RunResult",
    "SampleOnly",
    "SampleOracle",
    "Seat",
    "Solution",
    "StepKind",
    "Strategy",
    "Summary",
    "TableOracle",
    "TranscriptMachine",
    "TuringMachine",
    "UsageError",
    "accept_probability",
    "experiment_judge_accuracy",
    "make_instance",
    "plan",
    "play_one",
    "problem",
    "read_records",
    "replay",
    "resolve",
    "run",
    "solve",
    "sweep",
]


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'debatekit' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOME[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
