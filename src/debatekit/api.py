"""The Python API: the commands ``run``, ``solve``, ``plan`` and ``sweep`` as functions.

Each takes what its command takes, by the same names and with the same defaults (protocols,
problems, plan files and strategies by name, ``params`` as ``-P``; ``run`` also objects), builds
what the command builds (``run``: a :class:`~debatekit.runs.spec.RunSpec`), resolves it as the
command does (:mod:`debatekit.runs`) and returns the object whose ``to_json()`` is what the
command's ``--json`` prints. A mistake raises :class:`UsageError` with the command's one-line message;
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

from debatekit.engine import DEFAULT_MOVE_TIMEOUT
from debatekit.mistakes import UserError
from debatekit.protocols.stochastic.params import Proof
from debatekit.runs.spec import DEFAULT_PLAYER_MEMORY, RunSpec, assignments, constants_named, judge_db_of, truth_named

if TYPE_CHECKING:
    from debatekit.analysis.montecarlo import RunResult
    from debatekit.experiments.sweep import SweepResult
    from debatekit.problems import Instance
    from debatekit.protocols.stochastic.planner import Plan
    from debatekit.runs.dataset import DatasetResult
    from debatekit.runs.experiment import JudgeAccuracy
    from debatekit.runs.plan import Frontier, Strongest
    from debatekit.runs.solve import EveryInput, Solved
    from debatekit.runs.spec import OracleChoice, Player


class UsageError(ValueError):
    """A mistake in what was asked for (an unknown name, a bad parameter): the command line's exit-2 message."""


@contextmanager
def _usage() -> Iterator[None]:
    try:
        yield
    except UserError as err:
        raise UsageError(str(err)) from None


def _seed(seed: int) -> int:
    if seed < 0:
        raise UserError(f"seed must be at least 0, got {seed}")
    return seed


def run(
    protocol: str,
    *,
    problem: str | Path | Instance,
    size: int | None = None,
    truth: bool | str | None = None,
    params: Mapping[str, object] | None = None,
    alice: Player = "honest",
    bob: Player = "honest",
    trials: int = 200,
    constants: str | None = None,
    seed: int = 0,
    oracle: OracleChoice = "builtin",
    prover_oracle: OracleChoice | None = None,
    verifier_oracle: OracleChoice | None = None,
    judge_db: str | Path | None = None,
    answers_per_judge: int = 1,
    reuse_answers: bool = False,
    record: str | Path | None = None,
    move_timeout: float = DEFAULT_MOVE_TIMEOUT,
    concurrency: int = 1,
    trust: bool = False,
    player_memory: float = DEFAULT_PLAYER_MEMORY,
    resume: bool = False,
    overwrite: bool = False,
    generation: Mapping[str, object] | None = None,
    prompts: str | Path | None = None,
) -> RunResult | DatasetResult:
    """``debatekit run``: ``trials`` debates of ``alice`` against ``bob`` (a progress bar on a
    terminal); over a dataset (``problem`` a ``.csv`` or ``.jsonl`` file or a shipped dataset's
    name), ``trials`` debates an item, each with its own truth: a
    :class:`~debatekit.runs.dataset.DatasetResult`. The result's ``to_json()`` is what ``run --json``
    prints; it holds the parameters in effect (``params``) and, when a model played, its usage by
    role (``model_usage``). No run log is written; forfeits are in ``forfeit_reasons``, not printed.
    ``truth`` None is the problem's own (yes, or a plan's stated answer); ``generation`` is how
    models answer, as ``--generation FILE.toml``'s keys (``{"mode": "reason", "samples": 5, ...}``).
    A ``record`` file that exists is refused unless ``resume`` continues it or ``overwrite``
    replaces it (``--resume``, ``--overwrite``). People asked before by the same run are asked
    fresh questions unless ``resume`` or ``reuse_answers`` (``--reuse-answers``).

    Besides names, ``problem`` may be an :class:`~debatekit.problems.Instance` (its size and truth
    are the run's), ``alice``/``bob`` a :class:`~debatekit.players.base.Strategy` or a factory
    taking a Seat, and each oracle an :class:`~debatekit.oracle.Oracle`; an object no name stands
    for is recorded as a description saying it was one (``<oracle object: TableOracle>``).

    A user's strategy (a ``module:attr`` name or an object its module names) moves in worker
    processes of its own, with ``player_memory`` GiB of address space and ``move_timeout`` seconds
    a move, enforced by the operating system; ``trust=True`` plays it inline instead, to debug it
    (the boundary is then off: the result's ``boundary`` and the record's header say so). A
    function or class that no ``module:attr`` names can only be played with ``trust=True``.

    ``prompts`` is a directory of prompt files for the model roles (``--prompts``: ``judge.txt``,
    ``alice-honest.txt``, ``alice-liar.txt``, ``bob-honest.txt``, ``bob-liar.txt``), each missing
    one falling back to the packaged; the record's header names each file read and its SHA-256."""
    from debatekit.problems import Instance
    from debatekit.progress import progress
    from debatekit.runs.dataset import debates, is_dataset_run, item_runs, played
    from debatekit.runs.prepare import play, prepare, writable

    with _usage():
        asked = RunSpec(
            protocol=protocol,
            problem=problem if isinstance(problem, Instance) else str(problem),
            size=size,
            truth=None if truth is None else truth_named(truth),
            alice=alice,
            bob=bob,
            constants=constants_named(constants),
            params=tuple((params or {}).items()),
            seed=seed,
            trials=trials,
            oracle=oracle,
            prover_oracle=prover_oracle,
            verifier_oracle=verifier_oracle,
            judge_db=judge_db_of(judge_db),
            answers_per_judge=answers_per_judge,
            reuse_answers=reuse_answers,
            move_timeout=move_timeout,
            concurrency=concurrency,
            trust_players=trust,
            player_memory=player_memory,
            generation=tuple((generation or {}).items()),
            prompts=None if prompts is None else Path(prompts),
        )
        if is_dataset_run(asked):
            if record is not None or resume:
                raise UserError(f"{problem} is a dataset: run keeps no records of it; sweep it, or name one item")
            runs = item_runs(asked)
            with progress(debates(runs), f"{protocol} on {problem}") as advance:
                return played(asked, runs, advance)
        ready = prepare(asked)
        written = writable(None if record is None else Path(record), ready.spec, resume, overwrite)
        with progress(trials, ready.title) as advance:
            return play(ready, advance, record=written, resume=resume)


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
    from debatekit.runs.solve import solved

    with _usage():
        return solved(protocol, str(problem), size, truth_named(truth), assignments((params or {}).items()),
                      _seed(seed), budget, constants_named(constants), all_inputs)  # fmt: skip


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
    verifier_budget: int | None = None,
) -> Plan | Frontier | Strongest:
    """``debatekit plan``: the certified plan for stochastic debate (``constants`` "lean" or "paper":
    those constants; ``frontier``: plans against the prover budget; ``verifier_budget``: the strongest
    guarantee with at most that many verifier queries); ``to_json()`` is what ``plan --json`` prints."""
    from debatekit.runs.plan import FixedConstants, planned

    with _usage():
        try:
            chosen = None if constants is None else FixedConstants(constants)
            route = None if proof is None else Proof(proof)
        except ValueError as err:
            raise UserError(f"constants is lean or paper, proof direct or lean: {err}") from None
        return planned(K, T, completeness, soundness, prover_budget, chosen, route, frontier, verifier_budget)


def sweep(
    grid: str | Path | Mapping[str, Any],
    *,
    out: str | Path | None = None,
    backend: str = "local",
    workers: int | None = None,
    address: str | None = None,
    shard: str | None = None,
    overrides: Sequence[str] = (),
    sets: Sequence[str] = (),
    prune: bool = False,
    records: str = "failures",
) -> SweepResult:
    """``debatekit sweep``: every cell of a grid file (or its table, as parsed TOML, with ``out``),
    skipping cells finished in ``out``; ``overrides`` are ``-P NAME=VALUE``, ``sets`` ``--set
    KEY=V1,V2`` (an axis for every grid); ``prune`` removes cell folders the grid does not make;
    ``records`` (none, failures, all) is which debates each cell keeps, as ``--records``;
    ``to_json()`` is what ``sweep --json`` prints."""
    from debatekit.experiments.backends import Backend
    from debatekit.experiments.sweep import Records, swept

    with _usage():
        try:
            chosen = Backend(backend)
        except ValueError:
            raise UserError(f"backend must be local or ray, got {backend!r}") from None
        try:
            kept = Records(records)
        except ValueError:
            raise UserError(f"records must be none, failures or all, got {records!r}") from None
        table = grid if isinstance(grid, Mapping) else Path(grid)
        return swept(table, chosen, workers, address, shard, list(overrides), None if out is None else Path(out),
                     list(sets), prune, kept)  # fmt: skip


def experiment_judge_accuracy(
    *,
    debaters: str,
    judge: str = "builtin",
    dataset: str | Path | None = None,
    protocols: Sequence[str] | None = None,
    trials: int = 10,
    seed: int = 0,
    liar: str | None = None,
    generation: Mapping[str, object] | None = None,
    liar_bob: str | None = None,
) -> JudgeAccuracy:
    """``debatekit experiment judge-accuracy``: the judge's accuracy per arm (direct, consultancy,
    each of ``protocols``; default cross-exam and prover-estimator) with Wilson intervals, over the
    built-in plans in both truths or ``dataset``'s claims; ``liar`` and ``liar_bob`` replace Alice's
    and Bob's built-in liars; models generate as ``generation``'s keys say (``--generation``);
    ``to_json()`` is what ``--json`` prints."""
    from debatekit.runs.experiment import judge_accuracy

    with _usage():
        return judge_accuracy(debaters, judge, None if dataset is None else str(dataset), protocols, trials,
                              _seed(seed), liar, generation=tuple((generation or {}).items()),
                              liar_bob=liar_bob)  # fmt: skip
