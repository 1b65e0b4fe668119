"""Problems with known answers; importing this package registers the built-in ones."""

from debatekit.problems import builtin as _builtin  # noqa: F401  (registers the built-ins)
from debatekit.problems import dqc as _dqc  # noqa: F401
from debatekit.problems import dqc_tqbf as _dqc_tqbf  # noqa: F401
from debatekit.problems import plan as _plan  # noqa: F401
from debatekit.problems import recursive as _recursive  # noqa: F401
from debatekit.problems import stochastic as _stochastic  # noqa: F401
from debatekit.problems.registry import PROBLEMS, Instance, InstanceError, Problem, problem

__all__ = ["PROBLEMS", "Instance", "InstanceError", "Problem", "problem"]
