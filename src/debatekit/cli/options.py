"""What the command signatures share: the user's-mistake error, choices and options. Building the app
imports this and the command modules only, so it imports nothing beyond Typer (no numpy, no rich)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer


class UserError(Exception):
    """A mistake in the command line or a config: one line on stderr, exit status 2."""


class Truth(StrEnum):
    yes = "yes"
    no = "no"


class Constants(StrEnum):
    planned = "planned"
    lean = "lean"
    paper = "paper"


SizeOption = Annotated[int | None, typer.Option("--size", help="Instance size (default: the problem's).")]
TruthOption = Annotated[Truth, typer.Option("--truth", help="The instance's true answer.")]
SeedOption = Annotated[int, typer.Option("--seed", min=0, help="Seed for the instance and every debate (>= 0).")]
JsonOption = Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")]
ParamOption = Annotated[
    list[str] | None,
    typer.Option(
        "-P",
        "--param",
        metavar="NAME=VALUE",
        help="Set a problem's or protocol's parameter; repeatable (see `debatekit problems --params`).",
    ),
]
