"""LLM debates on the local model (issue 11's benchmark): debates per minute at concurrency 1 and 4,
and a cached rerun's time and model calls (target: zero calls).

The debate is fixed and small: cross-examination (Theorem 5.3) on the built-in ``caffeine`` plan
(T = 26 steps, 10 judged), Alice and Bob both ``llm:local/smollm2`` (SmolLM2-135M-Instruct in
process through llama-cpp-python, no network). Alice asks her model each judged step in turn; Bob
asks a fresh copy each step of her transcript (Definition 5.2), all at once.

Rows:

* concurrency 1 and 4, no cache: every model call is made (Bob's questions are Alice's, asked
  again), so the rate is the model's; the one loaded model serves one call at a time (a llama.cpp
  context is not thread-safe), so more debates in flight overlap only the players' own work;
* cold cache, concurrency 4: the same debates with the on-disk cache, empty at first: the debates
  first in flight each ask what the others are asking (the cache is filled as calls end, and does
  not hold back a request already in flight), Bob's questions are Alice's, and the debates after
  them are answered from it;
* rerun: the same debates again on that cache file through a new model object: no model call.

Nothing is asserted about time; the script exits 1 if the rerun makes a model call or if a debate's
verdict differs between rows (the model is greedy, so every row plays the same debates).

Run: ``python benchmarks/llm_debates.py [--debates N] [--seed S]`` (about three minutes for N = 8 on two cores).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
import time
from pathlib import Path

from debatekit.analysis.montecarlo import make_instance, run
from debatekit.engine.record import read_records
from debatekit.ledger import Role
from debatekit.llm import Cache, Model, ModelSpec, model_of
from debatekit.llm.players import LLM
from debatekit.players.base import Side
from debatekit.problems import PROBLEMS
from debatekit.protocols.registry import PROTOCOLS

PROTOCOL, PROBLEM, SPEC = "cross-exam", "caffeine", "local/smollm2"


def debates(model: Model, count: int, seed: int, concurrency: int, record: Path) -> tuple[float, list[int]]:
    """Seconds for ``count`` debates between LLM players of ``model``, and their verdicts."""
    spec, problem = PROTOCOLS[PROTOCOL], PROBLEMS[PROBLEM]
    llm = LLM(SPEC, model)
    module, _, attr = spec.llm.partition(":")  # the protocol's table of LLM players (ProtocolSpec.llm)
    seats = getattr(importlib.import_module(module), attr)
    alice, bob = (seats[role](llm, Side.HONEST) for role in (Role.ALICE, Role.BOB))
    instance = make_instance(problem, problem.default_size, True, seed)
    start = time.perf_counter()
    run(spec, instance, alice, bob, count, seed, record=record, concurrency=concurrency, timeout=600.0)
    return time.perf_counter() - start, [r["verdict"] for r in read_records(record)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--debates", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    loaded = model_of(ModelSpec.parse(SPEC))  # loaded once; each row wraps its backend anew
    rows, verdicts = [], []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        cache = folder / "llm.sqlite"
        plan = [("no cache", 1, None), ("no cache", 4, None), ("cold cache", 4, cache), ("rerun", 4, cache)]
        for number, (label, concurrency, path) in enumerate(plan):
            model = Model(loaded.name, loaded.backend, loaded.limits, None if path is None else Cache(path))
            seconds, found = debates(model, args.debates, args.seed, concurrency, folder / f"{number}.jsonl")
            used = model.total()
            rows.append((label, concurrency, seconds, 60 * args.debates / seconds, used.calls, used.cache_hits))
            verdicts.append(found)
    print(f"{PROTOCOL} on {PROBLEM}, alice and bob llm:{SPEC}, {args.debates} debates per row")
    print(f"{'row':<12}{'in flight':>10}{'seconds':>10}{'debates/min':>13}{'model calls':>13}{'cache hits':>12}")
    for label, concurrency, seconds, rate, calls, hits in rows:
        print(f"{label:<12}{concurrency:>10}{seconds:>10.2f}{rate:>13.1f}{calls:>13}{hits:>12}")
    failed = []
    if rows[-1][4] != 0:
        failed.append(f"the cached rerun made {rows[-1][4]} model calls")
    if any(found != verdicts[0] for found in verdicts):
        failed.append("the rows' verdicts differ")
    for why in failed:
        print(f"FAILED: {why}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
