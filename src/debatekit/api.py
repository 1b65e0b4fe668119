"""The Python API: the commands ``run``, ``solve``, ``plan`` and ``sweep`` as functions.

Each takes what its command takes, by the same names and with the same defaults (protocols,
problems, plan files and strategies by name, ``params`` as ``-P``), resolves them through the
command line's own lookups and returns the object whose ``to_json()`` is what the command's
``--json`` prints. A mistake raises :class:`UsageError` with the command's one-line message;
nothing is printed. The typed engine functions stay in their modules
(:func:`debatekit.analysis.montecarlo.run`, :func:`debatekit.analysis.exact.solve`, ...).

    >>> import debatekit
    >>> result = debatekit.run("cross-exam", problem="majority", size=1024, bob="point-random", trials=200)
    >>> result.honest_win_rate
    1.0
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from debatekit.cli.options import Truth, UserError
from debatekit.engine import DEFAULT_MOVE_TIMEOUT
from debatekit.protocols.stochastic.params import Constants, Proof

if TYPE_CHECKING:
    from debatekit.analysis.montecarlo import RunResult
    from debatekit.cli.plan_cmd import Frontier
    from debatekit.cli.run_cmd import Player
    from debatekit.cli.solve_cmd import EveryInput, Solved
    from debatekit.experiments.sweep import SweepResult
    from debatekit.protocols.stochastic.planner import Plan


class UsageError(ValueError):
    """A mistake in what was asked for (an unknown name, a bad parameter): the command line's exit-2 message."""


@contextmanager
def _usage() -> Iterator[None]:
    try:
        yield
    except UserError as err:
        raise UsageError(str(err)) from None


def _truth(truth: bool | str) -> Truth:
    if isinstance(truth, bool):
        return Truth.yes if truth else Truth.no
    try:
        return Truth(truth)
    except ValueError:
        raise UserError(f"truth must be True, False, 'yes' or 'no', got {truth!r}") from None


def _constants(constants: str | None) -> Constants | None:
    try:
        return None if constants is None else Constants(constants)
    except ValueError:
        raise UserError(f"constants must be one of {', '.join(Constants)}, got {constants!r}") from None


def _assignments(params: Mapping[str, object] | None) -> list[str]:
    """``params`` as the ``-P NAME=VALUE`` assignments they stand for."""
    return [f"{name}={value}" for name, value in (params or {}).items()]


def _seed(seed: int) -> int:
    if seed < 0:
        raise UserError(f"seed must be at least 0, got {seed}")
    return seed


def run(
    protocol: str,
    *,
    problem: str | Path,
    size: int | None = None,
    truth: bool | str = True,
    params: Mapping[str, object] | None = None,
    alice: Player = "honest",
    bob: Player = "honest",
    trials: int = 200,
    constants: str | None = None,
    seed: int = 0,
    oracle: str = "builtin",
    prover_oracle: str | None = None,
    verifier_oracle: str | None = None,
    judge_db: str | Path | None = None,
    answers_per_judge: int = 1,
    record: str | Path | None = None,
    move_timeout: float = DEFAULT_MOVE_TIMEOUT,
    concurrency: int = 1,
    resume: bool = False,
    overwrite: bool = False,
) -> RunResult:
    """``debatekit run``: ``trials`` debates of ``alice`` against ``bob`` (a progress bar on a
    terminal). The result's ``to_json()`` is what ``run --json`` prints: its ``extra`` holds the
    parameters in effect (``params``) and, when a model played, its usage by role
    (``model_usage``). No run log is written; forfeits are in ``forfeit_reasons``, not printed.
    A ``record`` file that exists is refused unless ``resume`` continues it or ``overwrite``
    replaces it (``--resume``, ``--overwrite``)."""
    from debatekit.cli import common
    from debatekit.cli.run_cmd import play, prepare

    with _usage():
        ready = prepare(protocol, str(problem), size, _truth(truth), _assignments(params), alice, bob, trials,
                        _constants(constants), seed, oracle, prover_oracle, verifier_oracle,
                        None if judge_db is None else Path(judge_db), answers_per_judge, move_timeout,
                        concurrency)  # fmt: skip
        written = common.writable(None if record is None else Path(record), ready.spec, resume, overwrite)
        with common.progress(trials, f"{ready.spec.name} on {ready.problem.name}") as advance:
            return play(ready, trials, seed, advance, record=written, timeout=move_timeout,
                        concurrency=concurrency, resume=resume)  # fmt: skip


def solve(
    protocol: str,
    *,
    problem: str | Path,
    size: int | None = None,
    truth: bool | str = True,
    params: Mapping[str, object] | None = None,
    seed: int = 0,
    budget: int = 5_000_000,
    constants: str | None = None,
    all_inputs: bool = False,
) -> Solved | EveryInput:
    """``debatekit solve``: the honest side's exact value against the best adversary (on every input
    of ``size`` bits with ``all_inputs``); ``to_json()`` is what ``solve --json`` prints."""
    from debatekit.cli.solve_cmd import solved

    with _usage():
        return solved(protocol, str(problem), size, _truth(truth), _assignments(params), _seed(seed), budget,
                      _constants(constants), all_inputs)  # fmt: skip


def plan(
    K: float,
    T: int,
    *,
    completeness: float | None = None,
    soundness: float | None = None,
    prover_budget: int | None = None,
    constants: str | None = None,
    proof: Proof | str | None = None,
    frontier: bool = False,
) -> Plan | Frontier:
    """``debatekit plan``: the certified plan for stochastic debate (``constants`` "lean" or "paper":
    those constants; ``frontier``: plans against the prover budget); ``to_json()`` is what
    ``plan --json`` prints."""
    from debatekit.cli.plan_cmd import FixedConstants, planned

    with _usage():
        try:
            chosen = None if constants is None else FixedConstants(constants)
            route = None if proof is None else Proof(proof)
        except ValueError as err:
            raise UserError(f"constants is lean or paper, proof direct or lean: {err}") from None
        return planned(K, T, completeness, soundness, prover_budget, chosen, route, frontier)


def sweep(
    grid: str | Path | Mapping[str, Any],
    *,
    out: str | Path | None = None,
    backend: str = "local",
    workers: int | None = None,
    address: str | None = None,
    shard: str | None = None,
    overrides: Sequence[str] = (),
) -> SweepResult:
    """``debatekit sweep``: every cell of a grid file (or its table, as parsed TOML, with ``out``),
    skipping cells finished in ``out``; ``overrides`` are ``-P NAME=VALUE``; ``to_json()`` is what
    ``sweep --json`` prints."""
    from debatekit.cli.sweep_cmd import Backend, swept

    with _usage():
        try:
            chosen = Backend(backend)
        except ValueError:
            raise UserError(f"backend must be local or ray, got {backend!r}") from None
        table = grid if isinstance(grid, Mapping) else Path(grid)
        return swept(table, chosen, workers, address, shard, list(overrides), None if out is None else Path(out))
