"""Names to the objects they stand for, once, for every command and the Python API: protocols,
problems (built in or a plan file), strategies (built in, ``module:attr``, ``llm:PROVIDER/MODEL``,
or objects), oracles (``builtin``, ``sample``, ``people``, ``llm:PROVIDER/MODEL``, or objects),
``-P`` parameters and stochastic debate's constants; a mistake is a :class:`UserError` naming the
command line's option."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from debatekit.ledger import Role
from debatekit.mistakes import UserError
from debatekit.oracle import Oracle, SampleOnly
from debatekit.params import ParamError, as_dict, bind, declared
from debatekit.players.base import Side, Strategy, StrategyError, resolve
from debatekit.problems import PROBLEMS, Instance, InstanceError, Problem
from debatekit.protocols.registry import PROTOCOLS, protocols_of
from debatekit.protocols.spec import ProtocolSpec
from debatekit.protocols.stochastic.params import Constants
from debatekit.runs.spec import Truth, described

if TYPE_CHECKING:
    from debatekit.analysis.montecarlo import Oracles
    from debatekit.llm.generation import Generation
    from debatekit.runs.spec import OracleChoice, Player, RunSpec


class OracleKind(Enum):
    BUILTIN = "builtin"
    SAMPLE = "sample"
    PEOPLE = "people"
    MODEL = "llm"


def model_spec(text: str) -> str | None:
    """``PROVIDER/MODEL`` when ``text`` names a model (``llm:PROVIDER/MODEL``, a player or an oracle), else None."""
    kind, _, model = text.partition(":")
    return model if kind == OracleKind.MODEL.value else None


MODEL_PLAYERS = {"llm": Side.HONEST} | {f"llm-{side.value}": side for side in Side}
"""The prefixes that name an LLM player and the side each argues: ``llm:`` and ``llm-honest:`` its
model's answer, ``llm-liar:`` the other."""


def model_player(text: str) -> tuple[str, Side] | None:
    """``(PROVIDER/MODEL, side)`` when ``text`` names an LLM player (:data:`MODEL_PLAYERS`), else None."""
    kind, _, model = text.partition(":")
    return (model, MODEL_PLAYERS[kind]) if kind in MODEL_PLAYERS else None


@dataclass(frozen=True)
class OracleSpec:
    """An oracle named on the command line: the instance's own (``builtin``), its sample-only view
    (``sample``), people answering in a browser (``people``, with ``--judge-db``) or a model of
    the judge (``llm:PROVIDER/MODEL``)."""

    kind: OracleKind
    model: str = ""

    @classmethod
    def parse(cls, text: str, option: str) -> OracleSpec:
        kind, _, model = text.partition(":")
        try:
            found = OracleKind(kind)
        except ValueError:
            known = "builtin, sample, people or llm:PROVIDER/MODEL"
            raise UserError(f"{option}: unknown oracle {text!r}; use {known}") from None
        if (found is OracleKind.MODEL) != bool(model):
            raise UserError(f"{option}: {text!r}: only llm takes a model, as llm:PROVIDER/MODEL")
        return cls(found, model)


def oracles(
    case: Instance,
    both: OracleChoice,
    provers: OracleChoice | None = None,
    verifier: OracleChoice | None = None,
    judge_db: Path | str | None = None,
    answers_per_judge: int = 1,
    reuse_answers: bool = False,
    generation: Generation | None = None,
    prompts: Path | None = None,
) -> Oracles:
    """Each side's oracle: ``--oracle`` for both, ``--prover-oracle`` / ``--verifier-oracle`` for
    one (the provers may consult a model of the judge while the verifier asks people, fresh
    questions unless ``reuse_answers``); each a name, or (from Python) an :class:`Oracle` of the
    user's, used as it is; a model of the judge generates as ``generation`` says (None: the
    defaults) and reads ``judge.txt`` in ``prompts``."""
    from debatekit.analysis.montecarlo import Oracles

    made: dict[OracleSpec, Oracle] = {}

    def made_of(given: OracleSpec | Oracle, option: str) -> Oracle:
        if isinstance(given, Oracle):
            return given
        if given not in made:
            made[given] = _oracle(case, given, option, judge_db, answers_per_judge, not reuse_answers, generation,
                                  prompts)  # fmt: skip
        return made[given]

    def parsed(given: OracleChoice, option: str) -> tuple[OracleSpec | Oracle, str]:
        if isinstance(given, str):
            return OracleSpec.parse(given, option), option
        if not isinstance(given, Oracle):
            raise UserError(f"{option}: {given!r} is not an oracle (a name or an Oracle)")
        return given, option

    chosen = [  # (spec or oracle, the option that named it): the provers', then the verifier's
        parsed(given, option)
        for given, option in ((provers, "--prover-oracle"), (verifier, "--verifier-oracle"))
        if given is not None
    ]
    default = parsed(both, "--oracle")
    if provers is None:
        chosen.insert(0, default)
    if verifier is None:
        chosen.append(default)
    people = {spec.kind for spec, _ in chosen if isinstance(spec, OracleSpec)}
    if judge_db is not None and OracleKind.PEOPLE not in people:
        raise UserError("--judge-db is for people answering: add --oracle people or --verifier-oracle people")
    if reuse_answers and OracleKind.PEOPLE not in people:
        raise UserError("--reuse-answers is for people answering: add --oracle people or --verifier-oracle people")
    return Oracles(*(made_of(spec, option) for spec, option in chosen))


def _oracle(
    case: Instance,
    spec: OracleSpec,
    option: str,
    judge_db: Path | str | None,
    answers_per_judge: int,
    fresh: bool,
    generation: Generation | None,
    prompts: Path | None,
) -> Oracle:
    if spec.kind is OracleKind.BUILTIN:
        return case.oracle
    if spec.kind is OracleKind.SAMPLE:
        return SampleOnly(case.oracle)
    if spec.kind is OracleKind.PEOPLE:
        if judge_db is None:
            raise UserError(f"{option} people needs --judge-db FILE.sqlite, the judges' database")
        try:
            from debatekit.judge.people import People
        except ImportError as err:
            raise UserError(f"{option} people needs the judge extra: pip install '.[judge]' ({err.name})") from err
        try:
            return People(judge_db, answers_per_judge, fresh=fresh)
        except Exception as err:  # sqlite's or psycopg's errors for a database it cannot open
            from debatekit.judge.database import redacted

            reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise UserError(f"--judge-db: cannot open {redacted(judge_db)!r}: {reason}") from err
    try:
        from debatekit.llm import ConfigError
        from debatekit.llm.players import model_judge
    except ImportError as err:
        raise UserError(f"{option} llm:... needs the llm extra: pip install '.[llm]' ({err.name})") from err
    try:
        return model_judge(spec.model, prompts=prompts, generation=generation)  # the players' model and cache
    except ConfigError as err:
        raise UserError(f"{option}: {err}") from err


def generation_file(path: Path) -> tuple[tuple[str, Any], ...]:
    """The keys set in ``--generation``'s TOML file, read through :mod:`debatekit.files`."""
    from debatekit.files import FileMistake, parse_toml, read_text

    try:
        return tuple(parse_toml(read_text(path), path).items())
    except FileMistake as err:
        raise UserError(f"--generation: {err}") from None


def generation_of(settings: tuple[tuple[str, Any], ...]) -> Generation | None:
    """The generation record ``--generation``'s keys set (None when none are set)."""
    if not settings:
        return None
    try:
        from debatekit.llm.backend import ConfigError
        from debatekit.llm.generation import Generation
    except ImportError as err:
        raise UserError(f"--generation needs the llm extra: pip install '.[llm]' ({err.name})") from err
    try:
        return Generation.of(dict(settings))
    except ConfigError as err:
        raise UserError(f"--generation: {err}") from err


def with_constants(spec: ProtocolSpec, assignments: Iterable[str] | None, constants: Constants | None) -> list[str]:
    """The ``-P`` assignments with ``--constants``, which sets the ``constants`` parameter of a
    protocol that declares one (stochastic debate) as ``-P constants=...`` does; the two must agree."""
    given = list(assignments or ())
    if constants is None:
        return given
    if "constants" not in {p.name for p in declared(type(spec.params))}:
        raise UserError(f"--constants applies to stochastic debate, not {spec.name}")
    named = [text.strip() for name, _, text in (a.partition("=") for a in given) if name.strip() == "constants"]
    if any(text != constants.value for text in named):
        raise UserError(f"--constants {constants.value} and -P constants={named[0]} disagree")
    return given if named else [*given, f"constants={constants.value}"]


def protocol(name: str) -> ProtocolSpec:
    if name not in PROTOCOLS:
        raise UserError(f"unknown protocol {name!r}; choose from: {', '.join(PROTOCOLS)}")
    return PROTOCOLS[name]


def problem_for(name: str, spec: ProtocolSpec) -> Problem:
    """A built-in problem by name, the plan of steps in a ``.toml`` or ``.json`` file, or one item
    of a dataset, ``DATASET#ID`` (a whole dataset is played item by item: :mod:`debatekit.runs.dataset`)."""
    from debatekit.problems.dataset import SHIPPED, is_dataset, item_of, item_problem

    if name.endswith((".toml", ".json")):
        from debatekit.problems.plan_file import plan_problem

        try:
            found = plan_problem(Path(name))
        except InstanceError as err:  # PlanError: the file and step at fault
            raise UserError(str(err)) from err
    elif name in PROBLEMS:
        found = PROBLEMS[name]
    elif item_of(name) is not None:
        try:
            found = item_problem(name)
        except InstanceError as err:  # DatasetError: the file, row or item at fault
            raise UserError(str(err)) from err
    elif is_dataset(name):
        raise UserError(f"{name} is a dataset: run and sweep play it item by item; one item is {name}#ID")
    else:
        known = ", ".join(PROBLEMS)
        raise UserError(f"unknown problem {name!r}; choose from: {known} (or a plan file, .toml or .json; a "
                        f"dataset, .csv or .jsonl, or a shipped one: {', '.join(SHIPPED)})")  # fmt: skip
    if not spec.needs <= found.features:
        raise UserError(f"problem {name!r} does not support {spec.name}; it supports: {', '.join(protocols_of(found))}")
    return found


def configure(spec: ProtocolSpec, found: Problem | None, assignments: list[str] | None) -> tuple[ProtocolSpec, Any]:
    """The protocol playing, and the problem's parameter values, with the ``-P`` assignments (a
    hand-built instance's problem, None, takes none: its parameters are fixed already)."""
    try:
        if found is None:
            (protocol_values,) = bind(assignments or (), (type(spec.params),), spec.name)
            return spec.with_params(protocol_values), None
        problem_values, protocol_values = bind(
            assignments or (), (found.params, type(spec.params)), f"{found.name} with {spec.name}"
        )
        return spec.with_params(protocol_values), problem_values
    except ParamError as err:
        raise UserError(str(err)) from err


def params_json(spec: ProtocolSpec, problem_values: Any) -> dict[str, Any]:
    """The parameters in effect, by name (the problem's, then the protocol's)."""
    return ({} if problem_values is None else as_dict(problem_values)) | as_dict(spec.params)


def instance(found: Problem, size: int | None, truth: Truth | None, seed: int, params: Any = None) -> Instance:
    """``found``'s instance; ``truth`` None is the problem's default (a plan's own answer)."""
    from debatekit.analysis.montecarlo import make_instance

    answer = found.truths[0] if truth is None else truth is Truth.yes
    try:
        return make_instance(found, found.default_size if size is None else size, answer, seed, params)
    except InstanceError as err:
        raise UserError(str(err)) from err


def names_a_model(run: RunSpec) -> bool:
    """Whether a model plays (``llm:``, ``llm-liar:``) or judges (``llm:PROVIDER/MODEL``) in ``run``."""
    oracles = (run.oracle, run.prover_oracle, run.verifier_oracle)
    return any(isinstance(o, str) and model_spec(o) is not None for o in oracles) or any(
        isinstance(p, str) and model_player(p) is not None for p in (run.alice, run.bob)
    )


def prompt_dir(path: Path | None) -> Path | None:
    """``--prompts DIR``, checked: a directory this process can read (None: not given)."""
    if path is None:
        return None
    if not path.is_dir() or not os.access(path, os.R_OK | os.X_OK):
        raise UserError(f"--prompts: {str(path)!r} is not a directory of prompts this process can read")
    return path


def strategy(
    spec: ProtocolSpec, role: Role, name: str, prompts: Path | None = None, generation: Generation | None = None
) -> Strategy:
    """A built-in strategy, ``module:attr`` importable from the current directory too, or
    ``llm:PROVIDER/MODEL`` (``llm-honest:``, ``llm-liar:``: :func:`model_player`): the protocol's LLM
    player for ``role`` on that side (the llm extra) with its prompt from ``prompts``, generating as
    ``generation`` says, whose model's usage by role is noted on stderr when the process ends."""
    named = model_player(name)
    if named is not None:
        import atexit

        model, side = named
        try:
            from debatekit.llm.config import ConfigError
            from debatekit.llm.players import NoLLMPlayers, llm_strategy, note_usage

            chosen = llm_strategy(spec, role, model, prompts, side=side, generation=generation)
        except ImportError as err:
            raise UserError(f"--{role.value} {name}: LLM players need the llm extra: pip install '.[llm]'") from err
        except (ConfigError, NoLLMPlayers) as err:
            raise UserError(f"--{role.value} {name}: {err}") from err
        atexit.unregister(note_usage)
        atexit.register(note_usage)
        return chosen
    if ":" in name:
        from_here()
    try:
        return resolve(name, role, spec.strategies[role])
    except StrategyError as err:
        raise UserError(str(err)) from err


def player(
    spec: ProtocolSpec, role: Role, given: Player, prompts: Path | None = None, generation: Generation | None = None
) -> Strategy:
    """A strategy as ``--alice``/``--bob`` name it (:func:`strategy`), or, from Python, a
    :class:`Strategy` of that role or a factory taking a Seat (a class, say). An object that no
    name stands for plays under its description (``<strategy object: NAME>``), so that results,
    records and logs never give it a name it does not have."""
    if isinstance(given, str):
        return strategy(spec, role, given, prompts, generation)
    if isinstance(given, Strategy):
        if given.role is not role:
            raise UserError(f"{role.value}: strategy {given.name!r} plays {given.role.value}")
        named = spec.strategies[role].get(given.name) == given or given == _imported(given.name, role)
        return given if named else replace(given, name=described(given, "strategy"))
    if not callable(given):
        raise UserError(f"{role.value}: {given!r} is not a strategy (a name, a Strategy or a factory taking a Seat)")
    doc = (given.__doc__ or "user strategy").strip().splitlines()[0]
    return Strategy(described(given, "strategy"), role, doc, given)


def from_here() -> None:
    """Let a user's ``module:attr`` be imported from the current directory (a worker is given this
    process's path)."""
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())


def _imported(name: str, role: Role) -> Strategy | None:
    """The strategy ``module:attr`` names when its module is imported already (none is imported here)."""
    module, sep, _ = name.partition(":")
    if not sep or module not in sys.modules:
        return None
    try:
        return resolve(name, role, {})
    except StrategyError:
        return None
