"""LLM players for every protocol family whose moves rest on judgements (issue 11, item 3), as
``--alice llm:PROVIDER/MODEL`` and ``--bob llm:PROVIDER/MODEL`` name them.

A protocol names its LLM players in its spec (``ProtocolSpec.llm``): cross-examination
(:mod:`.cross_exam`), stochastic debate (:mod:`.stochastic`), prover-estimator and naive recursive
debate (:mod:`.recursive`); what they share, and what each model call leaves in the debate's
record, is in :mod:`.base`. The query-complexity protocols (``kw``, ``circuit-cross-exam``, and the
DQC search) and bisection have none: their messages are bits of a computation with no judgement in
it (gate values, a walk down a circuit, configurations of a Turing machine), which a programmed
prover computes exactly.

The command line loads a model once per process and cache file (:func:`shared_model`; Alice and
Bob of one model share it, and its usage is counted by role) and notes each model's usage by role
on stderr when the run is over (:func:`note_usage`).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict
from pathlib import Path

from debatekit.ledger import Role
from debatekit.llm.config import JUDGE, REASON, ModelSpec, Prompt, cache_path, model_of, price_of
from debatekit.llm.generation import Generation, Mode
from debatekit.llm.judge import ModelJudge
from debatekit.llm.model import Cache, Model
from debatekit.llm.players.base import LLM
from debatekit.players.base import Side, Strategy
from debatekit.protocols.registry import PROTOCOLS
from debatekit.protocols.spec import ProtocolSpec

__all__ = [
    "LLM",
    "NoLLMPlayers",
    "llm_strategy",
    "model_judge",
    "note_usage",
    "prompt_for",
    "shared_model",
    "usage_json",
    "usage_lines",
]

PROMPTS = "DEBATEKIT_LLM_PROMPTS"
"""The environment variable naming a directory of prompts that replace the packaged ones where no
``--prompts DIR`` is given (:func:`prompt_for`)."""


class NoLLMPlayers(ValueError):
    """A protocol whose messages need no LLM."""


def llm_strategy(
    protocol: ProtocolSpec,
    role: Role,
    spec: str,
    prompts: Path | None = None,
    environ: Mapping[str, str] = os.environ,
    side: Side = Side.HONEST,
    generation: Generation | None = None,
) -> Strategy:
    """``protocol``'s LLM player for ``role`` on ``side`` (its ``ProtocolSpec.llm``), consulting the
    model ``spec`` names (``PROVIDER/MODEL``, :func:`shared_model`) through its prompt
    (:func:`prompt_for`), generating as ``generation`` says (None: the defaults).
    :class:`NoLLMPlayers` for a protocol without them; :class:`~debatekit.llm.config.ConfigError`
    for a model that cannot be had or a prompt that cannot be used."""
    if protocol.llm is None:
        playing = ", ".join(name for name, other in PROTOCOLS.items() if other.llm is not None)
        raise NoLLMPlayers(
            f"{protocol.name} has no LLM players: its provers' messages are bits of a computation with no judgement "
            f"in it, which a programmed prover computes exactly (LLM players play {playing})"
        )
    module, _, attr = protocol.llm.partition(":")
    seats: Mapping[Role, Callable[[LLM, Side], Strategy]] = getattr(importlib.import_module(module), attr)
    prompt = prompt_for(role, side, prompts, environ, generation)
    return seats[role](LLM(spec, shared_model(spec, environ), prompt, generation), side)


def model_judge(
    spec: str,
    environ: Mapping[str, str] = os.environ,
    prompts: Path | None = None,
    generation: Generation | None = None,
) -> ModelJudge:
    """A model of the judge (``--oracle llm:PROVIDER/MODEL`` and its kin) on the model ``spec``
    names (:func:`shared_model`: the players' model and cache) through the judge's prompt
    (:func:`prompt_for`), generating as ``generation`` says (None: the defaults)."""
    prompt = prompt_for(Role.VERIFIER, None, prompts, environ, generation)
    return ModelJudge(shared_model(spec, environ), prompt, name=spec, generation=generation)


def prompt_for(
    role: Role,
    side: Side | None,
    prompts: Path | None = None,
    environ: Mapping[str, str] = os.environ,
    generation: Generation | None = None,
) -> Prompt:
    """The prompt a model asks through in ``role`` on ``side`` (None: the judge): ``ROLE-SIDE.txt``
    (``alice-honest.txt``, ``alice-liar.txt``, ``bob-honest.txt``, ``bob-liar.txt``), else
    ``judge.txt`` (``reason.txt`` when ``generation`` reasons before it answers), from the
    directory ``prompts`` (default: the one ``DEBATEKIT_LLM_PROMPTS`` names), else the packaged
    one: a player asks its model the judge's question unless told otherwise (Definition 5.2)."""
    judge = REASON if generation is not None and generation.mode is Mode.REASON else JUDGE
    names = (judge,) if side is None else (f"{role.value}-{side.value}.txt", judge)
    directory = prompts or (Path(environ[PROMPTS]).expanduser() if environ.get(PROMPTS) else None)
    return Prompt.read(names, directory)


_MODELS: dict[tuple[str, Path], Model] = {}


def shared_model(spec: str, environ: Mapping[str, str] = os.environ) -> Model:
    """The model ``spec`` names with the on-disk cache (:func:`~debatekit.llm.config.cache_path`),
    made once per process for each spec and cache file: a local model is loaded once."""
    key = (spec, cache_path(environ))
    if key not in _MODELS:
        parsed = ModelSpec.parse(spec)
        _MODELS[key] = model_of(parsed, cache=Cache(key[1]), price=price_of(parsed, environ), environ=environ)
    return _MODELS[key]


def usage_lines() -> list[str]:
    """One line for each shared model and role it served: model calls, cache hits, tokens, cost."""
    lines = []
    for (spec, _), model in _MODELS.items():
        for role, used in model.usage.items():
            cost = "" if used.cost is None else f", ${used.cost:.4f}"
            lines.append(
                f"note: llm:{spec} for {role.value}: {used.calls} model calls, {used.cache_hits} from the cache, "
                f"{used.prompt_tokens} prompt and {used.completion_tokens} completion tokens{cost}"
            )
    return lines


Usages = dict[str, dict[str, dict[str, float | int | None]]]


def usage_json(since: Usages | None = None) -> Usages:
    """Each shared model's usage by role (tokens, cost, model calls, cache hits), for a run's JSON:
    all of this process's, or what was used after ``since`` (an earlier reading) when given."""
    now = {
        f"llm:{spec}": {role.value: asdict(used) for role, used in model.usage.items()}
        for (spec, _), model in _MODELS.items()
    }
    if since is None:
        return now

    def minus(used: dict[str, float | int | None], earlier: dict[str, float | int | None]) -> dict:
        return {k: v if v is None or earlier.get(k) is None else v - earlier[k] for k, v in used.items()}  # type: ignore[operator]

    return {
        model: {role: minus(used, since.get(model, {}).get(role, {})) for role, used in roles.items()}
        for model, roles in now.items()
    }


def note_usage() -> None:
    """:func:`usage_lines` on stderr (the command line's, once the run is over)."""
    for line in usage_lines():
        print(line, file=sys.stderr)
