"""Stochastic-oracle debate (Theorem 6.2 / Figure 2, Debate/Protocol.lean), one module per job:

* :mod:`.params`: the constants (Lean's ``Params``, Figure 2's, the choices and the planner's proofs);
  light, so the command line reads it;
* :mod:`.rules`: the rules, the step stated once (:func:`~.rules.step`, Lean's ``step``, within
  :func:`~.rules.debate`), messages, what a party sees;
* :mod:`.batch`, :mod:`.solo`, :mod:`.exact`: its interpreters, many debates as numpy rows, one on
  Python numbers (also replay and resume), and every outcome at once (backward induction, the step's
  answers enumerated);
* :mod:`.tails`, :mod:`.planner`: certified binomial tails, and the search for the fewest verifier queries;
* :mod:`.spec`: its registration (``StochasticParams`` and the ``ProtocolSpec`` of each choice of constants).

Nothing is imported here: each module is imported by its own name.
"""
