"""What the command signatures share: choices and options. Building the app imports this and the
command modules only, so it imports nothing beyond Typer (no numpy, no rich), stochastic debate's
light parameter module (its :class:`Constants`), the run description's :class:`Truth` and the
protocols' names (:func:`debatekit.protocols.registry.names`, which imports no protocol)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from debatekit.protocols import registry
from debatekit.protocols.stochastic.params import Constants
from debatekit.runs.spec import Truth

PROBLEM_NAMES = ("parity", "majority", "palindrome", "sat-witness", "approval-majority", "equality",
                 "addition-overflow", "tqbf", "bike-lanes", "caffeine", "code-review", "obfuscated-primality",
                 "evidence-majority", "noisy-majority", "xor-of-judgements", "meta-analysis", "ma-witness",
                 "one-claim")  # fmt: skip
"""The problems' names, for ``--help`` without importing them (a test holds them equal)."""

ProtocolArgument = Annotated[
    str,
    typer.Argument(
        metavar="PROTOCOL",
        help=f"The protocol: {', '.join(registry.names())}.",
        show_default=False,
        autocompletion=registry.names,
    ),
]
ProblemOption = Annotated[
    str,
    typer.Option(
        "--problem",
        metavar="PROBLEM",
        autocompletion=lambda: PROBLEM_NAMES,
        help=f"A built-in problem ({', '.join(PROBLEM_NAMES)}; see `debatekit problems`), a plan file "
        "(FILE.toml or FILE.json), or a dataset played item by item (FILE.csv, FILE.jsonl, or the shipped "
        "claims or compound; one item: DATASET#ID).",
    ),
]
STRATEGY_HELP = (
    "A built-in strategy of the protocol (`debatekit players PROTOCOL` lists them; every protocol has honest), "
    "your own as module:attr, or llm:PROVIDER/MODEL (cross-exam, stochastic, prover-estimator, naive-recursive; "
    "llm-liar:PROVIDER/MODEL argues the answer its model does not give)."
)
ConstantsOption = Annotated[
    Constants | None,
    typer.Option(
        "--constants",
        help=f"Stochastic debate: {Constants.planned} (default), {Constants.lean} or {Constants.paper}.",
    ),
]
SizeOption = Annotated[int | None, typer.Option("--size", help="Instance size (default: the problem's).")]
TruthOption = Annotated[Truth, typer.Option("--truth", help="The instance's true answer.")]
RunTruthOption = Annotated[
    Truth | None,
    typer.Option("--truth", help="The instance's true answer (default: yes; a plan file's own answer)."),
]
SeedOption = Annotated[int, typer.Option("--seed", min=0, help="Seed for the instance and every debate (>= 0).")]
JsonOption = Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")]
GenerationOption = Annotated[
    Path | None,
    typer.Option(
        "--generation",
        metavar="FILE.toml",
        help='How models answer: mode = "logprobs" (first token) or "reason" (reason, then answer), '
        "temperature, samples, max_tokens, system (a system prompt).",
    ),
]
ParamOption = Annotated[
    list[str] | None,
    typer.Option(
        "-P",
        "--param",
        metavar="NAME=VALUE",
        help="Set a problem's or protocol's parameter; repeatable (see `debatekit problems --params`).",
    ),
]
