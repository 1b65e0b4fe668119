"""Problems with known answers; importing this package registers the built-in ones, in the order
the registry (and ``--help``) lists them."""

# isort: off
from debatekit.problems import builtin as _builtin  # noqa: F401  (registers the built-ins)
from debatekit.problems import dqc as _dqc  # noqa: F401
from debatekit.problems import dqc_tqbf as _dqc_tqbf  # noqa: F401
from debatekit.problems import plan_file as _plan_file  # noqa: F401  (registers the built-in plans)
from debatekit.problems import obfuscated_primality as _obfuscated_primality  # noqa: F401
from debatekit.problems import evidence_majority as _evidence_majority  # noqa: F401
from debatekit.problems import stochastic as _stochastic  # noqa: F401

# isort: on
from debatekit.problems.registry import PROBLEMS, Instance, InstanceError, Problem, problem

__all__ = ["PROBLEMS", "Instance", "InstanceError", "Problem", "problem"]
