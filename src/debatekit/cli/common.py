"""What the commands share when they run: name lookups, instances, players, progress bars and output.
Commands import it when called, not when the app is built (see ``options``)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from debatekit.catalog import PROTOCOLS
from debatekit.cli.options import Truth, UserError
from debatekit.ledger import Role
from debatekit.oracle import Oracle, SampleOnly
from debatekit.params import ParamError, as_dict, bind
from debatekit.players.base import Strategy, StrategyError, resolve
from debatekit.problems import PROBLEMS, Instance, InstanceError, Problem
from debatekit.protocols.spec import ProtocolSpec
from debatekit.protocols.stochastic.params import Constants

if TYPE_CHECKING:
    from debatekit.analysis.montecarlo import Oracles

stdout = Console(width=None if sys.stdout.isatty() else 160)
stderr = Console(stderr=True)


class OracleKind(Enum):
    BUILTIN = "builtin"
    SAMPLE = "sample"
    PEOPLE = "people"
    MODEL = "llm"


def model_spec(text: str) -> str | None:
    """``PROVIDER/MODEL`` when ``text`` names a model (``llm:PROVIDER/MODEL``, a player or an oracle), else None."""
    kind, _, model = text.partition(":")
    return model if kind == OracleKind.MODEL.value else None


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
    both: str,
    provers: str | None = None,
    verifier: str | None = None,
    judge_db: Path | None = None,
    answers_per_judge: int = 1,
) -> Oracles:
    """Each side's oracle: ``--oracle`` for both, ``--prover-oracle`` / ``--verifier-oracle`` for
    one (the provers may consult a model of the judge while the verifier asks people)."""
    from debatekit.analysis.montecarlo import Oracles

    made: dict[OracleSpec, Oracle] = {}

    def made_of(spec: OracleSpec, option: str) -> Oracle:
        if spec not in made:
            made[spec] = _oracle(case, spec, option, judge_db, answers_per_judge)
        return made[spec]

    chosen = [  # (spec, the option that named it): the provers', then the verifier's
        (OracleSpec.parse(text, option), option)
        for text, option in ((provers, "--prover-oracle"), (verifier, "--verifier-oracle"))
        if text is not None
    ]
    default = OracleSpec.parse(both, "--oracle"), "--oracle"
    if provers is None:
        chosen.insert(0, default)
    if verifier is None:
        chosen.append(default)
    if judge_db is not None and OracleKind.PEOPLE not in {spec.kind for spec, _ in chosen}:
        raise UserError("--judge-db is for people answering: add --oracle people or --verifier-oracle people")
    return Oracles(*(made_of(spec, option) for spec, option in chosen))


def _oracle(case: Instance, spec: OracleSpec, option: str, judge_db: Path | None, answers_per_judge: int) -> Oracle:
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
            return People(judge_db, answers_per_judge)
        except Exception as err:  # sqlite's errors for a path it cannot open
            raise UserError(f"--judge-db: cannot open {str(judge_db)!r}: {err}") from err
    try:
        from debatekit.llm import ConfigError
        from debatekit.llm.players import model_judge
    except ImportError as err:
        raise UserError(f"{option} llm:... needs the llm extra: pip install '.[llm]' ({err.name})") from err
    try:
        return model_judge(spec.model)  # the players' model, on-disk cache and prompts
    except ConfigError as err:
        raise UserError(f"{option}: {err}") from err


def writable(path: Path | None, spec: ProtocolSpec, resume: bool = False, overwrite: bool = True) -> Path | None:
    """``--record``'s file, checked before any debate is played (and kept as it is to resume); one
    that exists is refused unless the run resumes it or ``overwrite``."""
    if path is None:
        if resume:
            raise UserError("--resume needs --record FILE.jsonl, the record of the run to resume")
        return None
    if spec.debate is None and spec.replay is None:
        raise UserError(f"--record: {spec.name} keeps no per-debate record")
    if path.exists() and not (resume or overwrite):
        raise UserError(f"--record: {str(path)!r} exists; --resume continues its run, --overwrite replaces it")
    try:
        path.open("a" if resume else "w").close()
    except OSError as err:
        raise UserError(f"--record: cannot write {str(path)!r}: {err.strerror}") from err
    return path


def with_constants(spec: ProtocolSpec, constants: Constants | None) -> ProtocolSpec:
    """The protocol with the chosen constants (only protocols that have constants take them)."""
    if constants is None:
        return spec
    if spec.variant is None:
        raise UserError(f"--constants applies to stochastic debate, not {spec.name}")
    return spec.variant(constants)


def protocol(name: str) -> ProtocolSpec:
    if name not in PROTOCOLS:
        raise UserError(f"unknown protocol {name!r}; choose from: {', '.join(PROTOCOLS)}")
    return PROTOCOLS[name]


def problem_for(name: str, spec: ProtocolSpec) -> Problem:
    """A built-in problem by name, or the plan of steps in a ``.toml`` or ``.json`` file."""
    if name.endswith((".toml", ".json")):
        from debatekit.problems.plan_file import plan_problem

        try:
            found = plan_problem(Path(name))
        except InstanceError as err:  # PlanError: the file and step at fault
            raise UserError(str(err)) from err
    elif name in PROBLEMS:
        found = PROBLEMS[name]
    else:
        known = ", ".join(PROBLEMS)
        raise UserError(f"unknown problem {name!r}; choose from: {known} (or a plan file, .toml or .json)")
    if spec.name not in found.protocols:
        raise UserError(f"problem {name!r} does not support {spec.name}; it supports: {', '.join(found.protocols)}")
    return found


def configure(spec: ProtocolSpec, found: Problem, assignments: list[str] | None) -> tuple[ProtocolSpec, Any]:
    """The protocol playing, and the problem's parameter values, with the ``-P`` assignments."""
    try:
        problem_values, protocol_values = bind(
            assignments or (), (found.params, type(spec.params)), f"{found.name} with {spec.name}"
        )
        return spec.with_params(protocol_values), problem_values
    except ParamError as err:
        raise UserError(str(err)) from err


def params_json(spec: ProtocolSpec, problem_values: Any) -> dict[str, Any]:
    """The parameters in effect, by name (the problem's, then the protocol's)."""
    return as_dict(problem_values) | as_dict(spec.params)


def instance(found: Problem, size: int | None, truth: Truth, seed: int, params: Any = None) -> Instance:
    from debatekit.analysis.montecarlo import make_instance

    try:
        return make_instance(found, found.default_size if size is None else size, truth is Truth.yes, seed, params)
    except InstanceError as err:
        raise UserError(str(err)) from err


def strategy(spec: ProtocolSpec, role: Role, name: str) -> Strategy:
    """A built-in strategy, ``module:attr`` importable from the current directory too, or
    ``llm:PROVIDER/MODEL``: the protocol's LLM player for ``role`` (the llm extra), whose model's
    usage by role is noted on stderr when the process ends."""
    model = model_spec(name)
    if model is not None:
        import atexit

        try:
            from debatekit.llm.config import ConfigError
            from debatekit.llm.players import NoLLMPlayers, llm_strategy, note_usage

            chosen = llm_strategy(spec.name, role, model)
        except ImportError as err:
            raise UserError(f"--{role.value} {name}: LLM players need the llm extra: pip install '.[llm]'") from err
        except (ConfigError, NoLLMPlayers) as err:
            raise UserError(f"--{role.value} {name}: {err}") from err
        atexit.unregister(note_usage)
        atexit.register(note_usage)
        return chosen
    if ":" in name and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return resolve(name, role, spec.strategies[role])
    except StrategyError as err:
        raise UserError(str(err)) from err


def positive(value: int, option: str) -> int:
    if value < 1:
        raise UserError(f"{option} must be at least 1, got {value}")
    return value


MAX_MOVE_TIMEOUT = 86_400.0
"""``--move-timeout``'s most seconds: a day, for a person who answers overnight. Past it a number
is a slip, and ``inf`` or ``1e300`` would overflow the engine's thread waits, which a player
must never be charged for."""

MAX_CONCURRENCY = 256
"""``--concurrency``'s most debates in flight. Each holds a worker thread and its player's move
threads (two or three in all), so 256 stay within the thread and process limits of common
containers (often 1,024 to 4,096), while a model API's or a panel of people's own limit on
parallel work is rarely above it; 3,000 exhausted a machine's threads and was charged to a player."""


MAX_WORKERS = MAX_CONCURRENCY
"""``--workers``' most processes (a local pool) or CPUs (a new Ray cluster), as many as
``--concurrency``'s debates in flight: each is a process holding a Python interpreter and its
threads, and a larger number is a slip (the default, the machine's cores, is capped at it)."""


def pool_size(workers: int | None) -> int:
    """``--workers``, checked: from 1 to :data:`MAX_WORKERS`; None: the cores, at most that."""
    if workers is None:
        return min(os.cpu_count() or 1, MAX_WORKERS)
    if not 1 <= workers <= MAX_WORKERS:
        raise UserError(f"--workers must be from 1 to {MAX_WORKERS} processes, got {workers}")
    return workers


def time_limit(seconds: float) -> float:
    """``--move-timeout``, checked: more than 0 and at most :data:`MAX_MOVE_TIMEOUT` (NaN fails)."""
    if not 0 < seconds <= MAX_MOVE_TIMEOUT:
        raise UserError(f"--move-timeout must be more than 0 and at most {MAX_MOVE_TIMEOUT:g} seconds (a day), "
                        f"got {seconds:g}")  # fmt: skip
    return seconds


def in_flight(debates: int) -> int:
    """``--concurrency``, checked: from 1 to :data:`MAX_CONCURRENCY`."""
    if not 1 <= debates <= MAX_CONCURRENCY:
        raise UserError(f"--concurrency must be from 1 to {MAX_CONCURRENCY} debates in flight, got {debates}")
    return debates


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, default=_jsonable) + "\n")


def _jsonable(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


@contextmanager
def progress(total: int, description: str) -> Iterator[Callable[[int], None]]:
    """A transient progress bar on stderr (shown on a terminal) with the time elapsed and an
    estimate of the time left (at the current rate, to ``total``); yields ``advance(done)``. Off a
    terminal, nothing (rich before 13.9 writes a blank line on stopping even a disabled bar)."""
    if not stderr.is_terminal:
        yield lambda done: None
        return
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=stderr,
        transient=True,
    )
    with bar:
        task = bar.add_task(description, total=total)
        yield lambda done: bar.update(task, completed=done)
