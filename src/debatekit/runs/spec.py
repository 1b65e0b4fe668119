"""One run, described once: :class:`RunSpec`, the names and values the command line's ``run``, the
Python API's :func:`debatekit.run` and a sweep's grid cell give, with one JSON form
(:meth:`RunSpec.to_json`, :meth:`RunSpec.from_json`) that ``run.json``'s configuration, ``--json``
and a sweep's rows write and a record header's common fields share.

A run may also be given objects where the command line gives names (the Python API): a user's
:class:`~debatekit.oracle.Oracle`, a :class:`~debatekit.players.base.Strategy` or a factory
taking a Seat, a hand-built :class:`~debatekit.problems.Instance`. Such an object is written as
a description that says it was one (``<oracle object: TableOracle>``), never as a name it is not;
a factory that its ``module:qualname`` names is written by that name.

Imports nothing heavy (no numpy), so the command line's signatures may use :class:`Truth`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from debatekit.engine import DEFAULT_MOVE_TIMEOUT
from debatekit.mistakes import UserError
from debatekit.protocols.stochastic.params import Constants

if TYPE_CHECKING:
    from debatekit.oracle import Oracle
    from debatekit.players.base import Seat, Strategy
    from debatekit.problems import Instance

    Player = str | Strategy | Callable[[Seat], Any]
    """A strategy as ``--alice``/``--bob`` name it, a :class:`Strategy`, or a factory taking a Seat."""
    OracleChoice = str | Oracle
    """An oracle as ``--oracle`` names it (builtin, sample, people, llm:PROVIDER/MODEL), or an :class:`Oracle`."""


class Truth(StrEnum):
    """The instance's true answer, as ``--truth`` and a grid's ``truth`` axis give it."""

    yes = "yes"
    no = "no"


IDENTITY = ("protocol", "constants", "problem", "size", "truth", "seed", "params", "alice", "bob")
"""The fields a run's records repeat in each header (:meth:`RunSpec.identity`)."""

CELL_FIELDS = ("protocol", "problem", "size", "truth", "alice", "bob", "constants", "params", "seed", "trials")
"""The fields a sweep's grid has axes for; a run's :attr:`RunSpec.id` digests these always, and the
others only where they differ from their defaults (so a grid cell's id is what it always was)."""


DEFAULT_PLAYER_MEMORY = 4.0
"""``--player-memory``'s default GiB of address space for a user's strategy's worker: generous
for a Python player with numpy, far below what would trouble the machine."""


def judge_db_of(value: Any) -> Path | str | None:
    """``--judge-db`` as the judges' store takes it: a PostgreSQL URL kept as text, else a file's path."""
    from debatekit.judge.database import is_url

    return None if value is None else str(value) if is_url(str(value)) else Path(str(value))


@dataclass(frozen=True)
class RunSpec:
    """``trials`` debates of ``alice`` against ``bob`` in ``protocol`` on ``problem``'s instance of
    ``size`` whose answer is ``truth`` (None: the problem's default, yes where it can be either and a
    plan's own answer), from ``seed``. ``params`` are the ``-P NAME=VALUE``
    assignments as (name, value) pairs; ``constants`` stochastic debate's choice; the oracles by
    side (``prover_oracle``/``verifier_oracle`` default to ``oracle``; people answer from
    ``judge_db``, at most ``answers_per_judge`` answers per judge and question, fresh questions for
    a rerun unless ``reuse_answers``); a player's time
    for one move; debates in flight; the directory of prompts that model roles read (``prompts``,
    ``--prompts``; None: ``DEBATEKIT_LLM_PROMPTS`` or the packaged ones). A user's strategy moves
    in worker processes of its own (:mod:`debatekit.engine.isolation`) with at most
    ``player_memory`` GiB of address space, unless ``trust_players`` plays it inline (to debug
    it; the boundary is then off). ``generation`` is how models' judgements are generated, as
    ``--generation FILE.toml``'s keys (:class:`debatekit.llm.generation.Generation`; none: its
    defaults). ``size`` None is the problem's default."""

    protocol: str
    problem: str | Instance
    size: int | None = None
    truth: Truth | None = None
    alice: Player = "honest"
    bob: Player = "honest"
    constants: Constants | None = None
    params: tuple[tuple[str, Any], ...] = ()
    seed: int = 0
    trials: int = 200
    oracle: OracleChoice = "builtin"
    prover_oracle: OracleChoice | None = None
    verifier_oracle: OracleChoice | None = None
    judge_db: Path | str | None = None
    """The judges' database: a SQLite file, or a PostgreSQL URL (:func:`judge_db_of`)."""
    answers_per_judge: int = 1
    reuse_answers: bool = False
    move_timeout: float = DEFAULT_MOVE_TIMEOUT
    concurrency: int = 1
    trust_players: bool = False
    player_memory: float = DEFAULT_PLAYER_MEMORY
    generation: tuple[tuple[str, Any], ...] = ()
    prompts: Path | None = None
    _id: str = field(default="", init=False, repr=False, compare=False)

    def assignments(self) -> list[str]:
        """``params`` as the ``-P NAME=VALUE`` assignments they stand for."""
        return assignments(self.params)

    def to_json(self) -> dict[str, Any]:
        """The run as plain JSON data: names as given, objects as descriptions (see the module)."""
        return {
            "protocol": self.protocol,
            "problem": described(self.problem, "instance"),
            "size": self.size,
            "truth": None if self.truth is None else self.truth.value,
            "alice": described(self.alice, "strategy"),
            "bob": described(self.bob, "strategy"),
            "constants": None if self.constants is None else self.constants.value,
            "params": dict(self.params),
            "seed": self.seed,
            "trials": self.trials,
            "oracles": {
                "oracle": described(self.oracle, "oracle"),
                "prover_oracle": described(self.prover_oracle, "oracle"),
                "verifier_oracle": described(self.verifier_oracle, "oracle"),
                "judge_db": None if self.judge_db is None else str(self.judge_db),
                "answers_per_judge": self.answers_per_judge,
                "reuse_answers": self.reuse_answers,
            },
            "move_timeout": self.move_timeout,
            "concurrency": self.concurrency,
            "trust_players": self.trust_players,
            "player_memory": self.player_memory,
            "generation": dict(self.generation),
            "prompts": None if self.prompts is None else str(self.prompts),
        }

    def identity(self) -> dict[str, Any]:
        """What fixes debate i of the run whatever else it is run with (its trials, oracles' names,
        time limit and concurrency aside), in :meth:`to_json`'s form: a record header's fields."""
        data = self.to_json()
        return {key: data[key] for key in IDENTITY}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunSpec:
        """The run :meth:`to_json` wrote (keys it does not write, such as a log's ``command``, are
        not read); a value of the wrong kind is a :class:`UserError`. An object's description
        comes back as text, which no lookup resolves: the object itself must be given again."""
        oracles = data.get("oracles") or {}
        params = data.get("params") or {}
        generation = data.get("generation") or {}
        if not all(isinstance(table, Mapping) for table in (oracles, params, generation)):
            raise UserError("a run's oracles, params and generation are tables")
        try:
            return cls(
                protocol=_of(data["protocol"], str, "protocol"),
                problem=_of(data["problem"], str, "problem"),
                size=_of(data.get("size"), int | None, "size"),
                truth=None if data.get("truth") is None else truth_named(data["truth"]),
                alice=_of(data.get("alice", "honest"), str, "alice"),
                bob=_of(data.get("bob", "honest"), str, "bob"),
                constants=constants_named(data.get("constants")),
                params=tuple((str(name), value) for name, value in params.items()),
                seed=_of(data.get("seed", 0), int, "seed"),
                trials=_of(data.get("trials", 200), int, "trials"),
                oracle=_of(oracles.get("oracle", "builtin"), str, "oracle"),
                prover_oracle=_of(oracles.get("prover_oracle"), str | None, "prover_oracle"),
                verifier_oracle=_of(oracles.get("verifier_oracle"), str | None, "verifier_oracle"),
                judge_db=judge_db_of(oracles.get("judge_db")),
                answers_per_judge=_of(oracles.get("answers_per_judge", 1), int, "answers_per_judge"),
                reuse_answers=_of(oracles.get("reuse_answers", False), bool, "reuse_answers"),
                move_timeout=float(_of(data.get("move_timeout", DEFAULT_MOVE_TIMEOUT), int | float, "move_timeout")),
                concurrency=_of(data.get("concurrency", 1), int, "concurrency"),
                trust_players=_of(data.get("trust_players", False), bool, "trust_players"),
                player_memory=float(
                    _of(data.get("player_memory", DEFAULT_PLAYER_MEMORY), int | float, "player_memory")
                ),
                generation=tuple((str(key), value) for key, value in generation.items()),
                prompts=None if data.get("prompts") is None else Path(_of(data["prompts"], str, "prompts")),
            )
        except KeyError as err:
            raise UserError(f"a run needs its {err.args[0]}") from None

    @property
    def id(self) -> str:
        """A 12-hex-digit digest of the run's canonical parameters: the grid's fields
        (:data:`CELL_FIELDS`), and any other that differs from its default."""
        if not self._id:
            import hashlib
            import json

            data, default = self.to_json(), _DEFAULT_JSON
            canonical = {key: value for key, value in data.items() if key in CELL_FIELDS or value != default[key]}
            digest = hashlib.sha256(json.dumps(canonical, sort_keys=True).encode()).hexdigest()[:12]
            object.__setattr__(self, "_id", digest)
        return self._id

    def fields(self) -> dict[str, Any]:
        """:meth:`to_json` with the run's :attr:`id` first: a sweep's row."""
        return {"id": self.id} | self.to_json()


MAX_TRIALS = 10**10
"""The most debates one run plays: a day or more at the batch engines' speed; beyond it a number
is a slip (``1000000000000``), and a larger study is a sweep over seeds."""


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


def memory_limit(gib: float) -> float:
    """``--player-memory``, checked: from 0.25 GiB (a worker's interpreter and numpy) to 1 TiB."""
    if not 0.25 <= gib <= 1024:
        raise UserError(f"--player-memory must be from 0.25 to 1024 GiB, got {gib:g}")
    return gib


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


def truth_named(value: bool | str) -> Truth:
    """``True``/``False`` or ``"yes"``/``"no"`` as a :class:`Truth` (the API's and a grid's forms)."""
    if isinstance(value, bool):
        return Truth.yes if value else Truth.no
    try:
        return Truth(value)
    except ValueError:
        raise UserError(f"truth must be True, False, 'yes' or 'no', got {value!r}") from None


def constants_named(value: str | None) -> Constants | None:
    """A stochastic debate constant choice by its value, or None."""
    try:
        return None if value is None else Constants(value)
    except ValueError:
        raise UserError(f"constants must be one of {', '.join(Constants)}, got {value!r}") from None


def described(value: object, kind: str) -> str | None:
    """A name as it is (a path as text); a factory by the ``module:qualname`` that names it; any
    other object as ``<KIND object: WHAT>``, which no lookup takes for a name."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Path):
        return str(value)
    name = getattr(value, "__qualname__", None)
    if name is not None:  # a function or class: a factory taking a Seat
        path = f"{getattr(value, '__module__', '?')}:{name}"
        module = sys.modules.get(getattr(value, "__module__", ""))
        return path if getattr(module, name, None) is value else f"<factory object: {path}>"
    what = getattr(value, "name", None) or getattr(value, "problem", None) or type(value).__name__
    return f"<{kind} object: {what}>"


def assignments(params: Iterable[tuple[str, object]]) -> list[str]:
    """(name, value) pairs as the ``-P NAME=VALUE`` assignments they stand for (booleans as TOML writes them)."""
    return [f"{name}={str(value).lower() if isinstance(value, bool) else value}" for name, value in params]


def _of(value: Any, kind: Any, key: str) -> Any:
    if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
        raise UserError(f"a run's {key} cannot be {value!r}")
    return value


_DEFAULT_JSON = RunSpec(protocol="", problem="").to_json()
