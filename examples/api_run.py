"""Cross-examination (Theorem 5.3) on majority of 1,024 bits against a Bob who challenges a random
step: the Python API's `run`, which takes what `debatekit run` takes.

    python examples/api_run.py
"""

import debatekit

result = debatekit.run("cross-exam", problem="majority", size=1024, truth=True, bob="point-random", trials=200, seed=0)
g = result.guarantee
low, high = result.accept_ci
print(f"{result.protocol} on {result.problem} (size {result.size}, T = {result.T}): alice {result.alice} "
      f"vs bob {result.bob}, {result.trials} debates")  # fmt: skip
print(f"honest win rate {result.honest_win_rate:.3f}, accept rate {result.accept_rate:.3f} [{low:.3f}, {high:.3f}] "
      f"(theorem: completeness >= {g.completeness:g})")  # fmt: skip
print(f"verifier queries (max) {result.verifier_queries_max} (theorem: <= {g.verifier_queries})")
print(f"bits read (max) {result.verifier_bits_read_max} (theorem: <= {g.bits_read}) of {result.size} input bits "
      f"and {result.T} transcript bits")  # fmt: skip
