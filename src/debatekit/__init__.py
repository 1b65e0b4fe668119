"""debatekit: executable debate protocols (doubly-efficient debate, and more to come).

The public surface: the computation model, the protocol and problem registries, players and
analysis. Implementation lives in the submodules.
"""

from debatekit.analysis.exact import ExactError, Solution, accept_probability, solve
from debatekit.analysis.montecarlo import Outcome, RunResult, make_instance, play_one, run
from debatekit.catalog import PROTOCOLS
from debatekit.ledger import Ledger, Malformed, Role
from debatekit.machine.circuit import Circuit, CircuitBuilder, Gate
from debatekit.machine.transcript import MachineBuilder, StepKind, TranscriptMachine
from debatekit.machine.turing import Config, TuringMachine
from debatekit.oracle import FunctionOracle, Oracle, SampleOracle, TableOracle
from debatekit.players.base import Seat, Strategy, resolve
from debatekit.prob import Dist
from debatekit.problems import PROBLEMS, Instance, problem

__all__ = [
    "PROBLEMS",
    "PROTOCOLS",
    "Circuit",
    "CircuitBuilder",
    "Config",
    "Dist",
    "ExactError",
    "FunctionOracle",
    "Gate",
    "Instance",
    "Ledger",
    "MachineBuilder",
    "Malformed",
    "Oracle",
    "Outcome",
    "Role",
    "RunResult",
    "SampleOracle",
    "Seat",
    "Solution",
    "StepKind",
    "Strategy",
    "TableOracle",
    "TranscriptMachine",
    "TuringMachine",
    "accept_probability",
    "make_instance",
    "play_one",
    "problem",
    "resolve",
    "run",
    "solve",
]
