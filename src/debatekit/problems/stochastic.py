"""Problems for stochastic-oracle debate (Section 6), each with its Lipschitz constant K.

K is the hybrid bound of :mod:`debatekit.analysis.lipschitz` in closed form: only the judgement
steps and the final threshold step influence the output, so K = 1 + sum over judgements of the
largest probability that the later judgements make this one pivotal (``threshold_k``).
"""

from __future__ import annotations

import numpy as np

from debatekit.analysis.lipschitz import threshold_k
from debatekit.machine.transcript import MachineBuilder
from debatekit.oracle import FunctionOracle, Question, TableOracle
from debatekit.problems.registry import Feature, Instance, InstanceError, problem

VOTES = 5
"""Judgements in noisy-majority: fixed, so K does not grow with the computation's length."""
SUPPORTED = ("is the claim supported by the evidence?",)
JUDGE_YES = 0.98
"""P[yes] of each judgement in xor-of-judgements."""
CLAIM = "the Elm Street bridge was closed to traffic for repairs in 2023"
PASSAGES = {
    True: "Riverton council minutes, March 2023: the council voted to close the Elm Street bridge to all vehicles "
    "from April to September 2023 while its deck was replaced. Traffic was diverted over the Oak Avenue bridge.",
    False: "Riverton council minutes, March 2023: the council voted to keep the Elm Street bridge open to traffic "
    "throughout 2023 and to postpone the replacement of its deck to 2025.",
}
"""one-claim's passage, by the truth: one that supports :data:`CLAIM`, one that does not."""
CLAIM_YES = 0.9
"""P[yes] of one-claim's judgement when the claim is supported (1 - this when it is not)."""


@problem(
    "noisy-majority",
    f"majority of {VOTES} independent human judgements of one claim, after size - {VOTES + 1} bookkeeping "
    "steps: K = O(1) however long the computation",
    frozenset({Feature.TRANSCRIPT, Feature.LIPSCHITZ}),
    default_size=100,
    min_size=VOTES + 1,
    max_size=10**6,
)
def noisy_majority(size: int, truth: bool, rng: np.random.Generator) -> Instance:
    """T = size steps: size - VOTES - 1 bookkeeping steps copying the dossier x (read by nothing
    after), VOTES judgements of the same question (P[yes] = 0.8 if the claim is supported, 0.2 if
    not), and one step computing their majority: P[M = 1] = 0.942 or 0.058. K = 1 + sum_r max_k
    P[Bin(r, p) = k] over r = 0..VOTES-1 remaining votes = 4.36."""
    dossier = size - VOTES - 1
    x = rng.integers(0, 2, max(dossier, 1)).astype(np.uint8)
    b = MachineBuilder(inputs=len(x))
    for i in range(dossier):
        b.compute(lambda bit: bit, i)
    votes = [b.ask(lambda: SUPPORTED) for _ in range(VOTES)]
    b.compute(lambda *v: int(sum(v) > VOTES // 2), *votes)
    p = 0.8 if truth else 0.2
    k = threshold_k([{0: 1 - p, 1: p}] * VOTES)
    return Instance(
        "noisy-majority", size, truth, x, oracle=TableOracle({SUPPORTED: p}), machine=b.build(), lipschitz=k
    )


@problem(
    "xor-of-judgements",
    "XOR of n human judgements (the paper's non-Lipschitz example): K grows with n, and beyond n = 26 "
    "the answer is too close to a coin flip for the 2/3 promise",
    frozenset({Feature.TRANSCRIPT, Feature.LIPSCHITZ}),
    default_size=5,
    max_size=26,
)
def xor_of_judgements(n: int, truth: bool, rng: np.random.Generator) -> Instance:
    """n judgements (P[yes] = 0.98 each), XORed by a chain of n - 1 compute steps, and a last step
    that outputs the XOR or its negation, whichever has the requested answer. P[XOR = 1] =
    (1 - 0.96^n)/2 for odd n and (1 + 0.96^n)/2 for even n: it tends to 1/2, so the promise
    P[M = 1] > 2/3 or < 1/3 holds only for n <= 26. The hybrid bound is K = n (chain and last
    steps, each of influence 1) + sum_r 0.96^r (a judgement's influence is |1-2p|^(later ones))."""
    p = JUDGE_YES
    prob_xor = (1 - (1 - 2 * p) ** n) / 2
    if max(prob_xor, 1 - prob_xor) <= 2 / 3:
        raise InstanceError(f"xor-of-judgements of size {n} has P[M = 1] = {prob_xor:.3f}, too close to 1/2")
    negate = (prob_xor > 0.5) != truth
    b = MachineBuilder(inputs=0)
    votes = [b.ask(lambda i=i: ("is statement", i, "true?")) for i in range(n)]
    acc = votes[0]
    for v in votes[1:]:
        acc = b.compute(lambda a, c: a ^ c, acc, v)
    b.compute((lambda a: 1 - a) if negate else (lambda a: a), acc)
    k = n + sum(abs(1 - 2 * p) ** r for r in range(n))
    return Instance(
        "xor-of-judgements",
        n,
        truth,
        np.zeros(0, dtype=np.uint8),
        oracle=FunctionOracle(lambda q: p),
        machine=b.build(),
        lipschitz=k,
    )


def _studies(size: int, truth: bool, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Effect signs and flaw probabilities of synthetic studies, with the answer ``truth``."""
    for _ in range(1000):
        positive = rng.random(size) < (0.7 if truth else 0.3)
        flaw = np.where(rng.random(size) < 0.3, 0.85, 0.05)  # some studies are clearly flawed
        if _meta_probability(positive, flaw) > 2 / 3 if truth else _meta_probability(positive, flaw) < 1 / 3:
            return positive.astype(np.uint8), flaw
    raise InstanceError(f"no meta-analysis instance of size {size} with that answer; try another size")


def _contributions(positive: np.ndarray, flaw: np.ndarray) -> list[dict[int, float]]:
    return [{0: float(f), (1 if s else -1): float(1 - f)} for s, f in zip(positive, flaw, strict=True)]


def _meta_probability(positive: np.ndarray, flaw: np.ndarray) -> float:
    """P[more included studies show a positive effect than a negative one]."""
    dist = {0: 1.0}
    for contribution in _contributions(positive, flaw):
        nxt: dict[int, float] = {}
        for value, p in dist.items():
            for c, q in contribution.items():
                nxt[value + c] = nxt.get(value + c, 0.0) + p * q
        dist = nxt
    return sum(p for value, p in dist.items() if value > 0)


@problem(
    "meta-analysis",
    "the paper's caffeine plan: one 'clear methodological flaw?' judgement per study, then a vote of "
    "the included studies' effects",
    frozenset({Feature.TRANSCRIPT, Feature.LIPSCHITZ}),
    default_size=15,
    min_size=3,
    max_size=2000,
)
def meta_analysis(size: int, truth: bool, rng: np.random.Generator) -> Instance:
    """x holds each study's effect sign (1: caffeine helped); study i is judged flawed with its
    own probability (0.85 for a weak design, 0.05 for a sound one) and included iff not flawed;
    M outputs 1 iff more included studies are positive than negative. K by ``threshold_k`` over
    the studies' contributions (+1, -1 or 0)."""
    positive, flaw = _studies(size, truth, rng)
    b = MachineBuilder(inputs=size)
    table = {("does study", i, "have a clear methodological flaw?"): float(f) for i, f in enumerate(flaw)}
    flawed = [b.ask(lambda i=i: ("does study", i, "have a clear methodological flaw?")) for i in range(size)]
    b.compute(
        lambda *bits: int(sum((1 - f) * (1 if s else -1) for f, s in zip(bits[:size], bits[size:], strict=True)) > 0),
        *flawed,
        *range(size),
    )
    return Instance(
        "meta-analysis",
        size,
        truth,
        positive,
        oracle=TableOracle(table),
        machine=b.build(),
        lipschitz=threshold_k(_contributions(positive, flaw)),
    )


@problem(
    "ma-witness",
    "Theorem 7.2: Alice names a study (the witness) and M asks 5 judges whether it is sound",
    frozenset({Feature.TRANSCRIPT, Feature.LIPSCHITZ}),
    default_size=16,
    min_size=2,
    max_size=2**16,
)
def ma_witness(size: int, truth: bool, rng: np.random.Generator) -> Instance:
    """size studies; the witness w is a study's index in binary. Each judge is asked whether
    study w is sound (P[yes] = 0.9 for a sound study, 0.1 for a flawed one) and M accepts iff most
    say yes. Yes-instances have one sound study (honest Alice names it); in no-instances every
    study is flawed, so every witness gives P[M = 1] = 0.009. K as in noisy-majority with p = 0.9."""
    bits = max(1, int(np.ceil(np.log2(size))))
    sound = np.zeros(size, dtype=bool)
    if truth:
        sound[rng.integers(size)] = True
    b = MachineBuilder(inputs=0, witness=bits)

    def question(*w: int) -> tuple[str, int]:
        return ("is study", int("".join(map(str, w)), 2), "sound?")

    votes = [b.ask(question, *b.witness) for _ in range(VOTES)]
    b.compute(lambda *v: int(sum(v) > VOTES // 2), *votes)
    oracle = FunctionOracle(lambda q: 0.9 if q[1] < size and sound[q[1]] else 0.1)
    chosen = int(np.flatnonzero(sound)[0]) if truth else 0
    witness = np.array([int(c) for c in np.binary_repr(chosen, bits)], dtype=np.uint8)
    return Instance(
        "ma-witness",
        size,
        truth,
        np.zeros(0, dtype=np.uint8),
        oracle=oracle,
        machine=b.build(),
        witness=witness,
        lipschitz=threshold_k([{0: 0.1, 1: 0.9}] * VOTES),
    )


@problem(
    "one-claim",
    "the study-sized one: one human judgement of one claim (T = 1, K = 1), so a panel of a few judges can "
    "answer a certified plan (`plan --verifier-budget R`, then `run -P verifier_budget=R`)",
    frozenset({Feature.TRANSCRIPT, Feature.LIPSCHITZ}),
    default_size=1,
    max_size=1,
)
def one_claim(size: int, truth: bool, rng: np.random.Generator) -> Instance:
    """M asks one judge whether a passage supports a claim and outputs the answer: P[yes] =
    CLAIM_YES if it does, 1 - CLAIM_YES if not. T = 1 and K = 1 (the answer is the output), the
    smallest a machine with a judgement can have, so the fewest verifier queries per guarantee.
    The judge reads the passage (:data:`PASSAGES`: the truth decides which) and the claim."""
    question = Question(f"{PASSAGES[truth]}\nDoes this passage support the claim that {CLAIM}?")
    b = MachineBuilder(inputs=0)
    b.ask(lambda: question)
    p = CLAIM_YES if truth else 1 - CLAIM_YES
    return Instance(
        "one-claim", size, truth, np.zeros(0, dtype=np.uint8), oracle=TableOracle({question: p}), machine=b.build(),
        lipschitz=threshold_k([], output_steps=1),
    )  # fmt: skip
