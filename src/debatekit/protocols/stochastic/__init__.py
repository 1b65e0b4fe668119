"""Stochastic-oracle debate (Theorem 6.2 / Figure 2, Debate/Protocol.lean), one module per job:

* :mod:`.params`: the constants (Lean's ``Params``, Figure 2's, the choices and the planner's proofs);
  light, so the command line reads it;
* :mod:`.rules`: the rules, the step stated once (:func:`~.rules.debate`), messages, what a party sees;
* :mod:`.batch`, :mod:`.solo`: its interpreters, many debates as numpy rows and one on Python numbers
  (also replay and resume);
* :mod:`.exact`: exact backward induction;
* :mod:`.tails`, :mod:`.planner`: certified binomial tails, and the search for the fewest verifier queries.

Nothing is imported here: each module is imported by its own name.
"""
