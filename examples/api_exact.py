"""Exact against Monte Carlo: stochastic debate (Theorem 6.2) on a small noisy-majority instance.
`solve` searches every strategy of Bob's for the one that beats honest Alice most often; every
built-in Bob, played 2,000 times with `run`, should do no better (up to its 95% interval).

    python examples/api_exact.py
"""

import debatekit

INSTANCE = {"problem": "noisy-majority", "size": 7, "truth": True, "seed": 0}

best = debatekit.solve("stochastic", **INSTANCE).solution
print(f"exact: honest {best.honest} wins with probability {best.value:.4f} against the best {best.adversary} "
      f"({best.positions} positions searched; theorem: >= {best.guarantee:.4f})")  # fmt: skip
for bob in ("always-abort", "never-abort", "random-abort", "bit-abort"):
    result = debatekit.run("stochastic", **INSTANCE, bob=bob, trials=2000)
    low, high = result.accept_ci  # the truth is yes: Alice, the honest side, wins exactly when V accepts
    verdict = "no better than the best" if high >= best.value else "BETTER THAN THE BEST"
    print(f"monte carlo: bob {bob}: honest win rate {result.honest_win_rate:.4f} [{low:.4f}, {high:.4f}]: {verdict}")
