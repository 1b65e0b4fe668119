"""Run logs: every ``debatekit run`` leaves a folder that says what was run and what came of it.

A log folder (``./debatekit-logs/`` by default) holds one folder per run, named by the time it
started and a short random suffix (``20261123-211944-3f9a1c``), created exclusively so that two
runs never share one. Each holds ``run.json`` (the command line, the resolved configuration, the
debatekit version and, best effort, the git commit of its source: :func:`git_commit`),
``debates.jsonl`` (the per-debate records, with ``--log-records``; ``record_path`` in ``run.json``
names the file the user chose with ``--record``, or is null when no record was kept: a run of
stochastic debate at T = 10^4 keeps ~10^4 events a debate, so records are asked for, not
implied) and ``summary.json`` (what ``run --json`` prints), written when the run ends: a run
without one did not finish.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from debatekit.files import FileMistake, read_json

DEFAULT_LOG_DIR = Path("debatekit-logs")
RUN_FILE, RECORDS_FILE, SUMMARY_FILE = "run.json", "debates.jsonl", "summary.json"
STAMP = "_build.json"
"""The file a build of the package writes with the source's commit (the project's ``setup.py``)."""
PACKAGE = Path(__file__).resolve().parents[1]
"""The debatekit package's folder."""


class LogError(OSError):
    """A log folder that cannot be written."""


def version() -> str:
    """The installed debatekit's version."""
    try:
        return metadata.version("debatekit")
    except metadata.PackageNotFoundError:
        return "unknown"


def git_commit(package: Path = PACKAGE) -> str | None:
    """The commit of the source this package came from (with ``+dirty`` when it had uncommitted
    changes): for an installed copy, the stamp its build wrote (``_build.json``, from the
    project's ``setup.py``); for a checkout (an editable install), what git says of it now. None
    when neither can say."""
    if "site-packages" in package.parts:  # an installed copy: any enclosing checkout is not its source
        try:
            stamp = json.loads((package / STAMP).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        commit = stamp.get("git_commit") if isinstance(stamp, dict) else None
        return commit if isinstance(commit, str) else None
    try:
        head, dirty = (
            subprocess.run(
                ["git", "-C", str(package), *args], capture_output=True, text=True, timeout=5, check=True
            ).stdout.strip()
            for args in (["rev-parse", "HEAD"], ["status", "--porcelain", "--untracked-files=no"])
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "") if head else None


def writable_dir(folder: Path) -> Path:
    """``folder``, created if need be, after checking that a file can be made in it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".probe-{secrets.token_hex(4)}"
        probe.touch()
        probe.unlink()
    except OSError as err:
        raise LogError(f"cannot write the log folder {str(folder)!r}: {err.strerror or err}") from err
    return folder


@dataclass(frozen=True)
class RunLog:
    """One run's folder."""

    folder: Path

    @property
    def records(self) -> Path:
        return self.folder / RECORDS_FILE

    @classmethod
    def start(
        cls, log_dir: Path, argv: list[str], config: dict[str, Any], record: Path | None = None, keep: bool = False
    ) -> RunLog:
        """A new run folder under ``log_dir`` with its ``run.json``; ``record`` is the user's own
        ``--record`` file; without one, ``keep`` keeps the records in the folder (:attr:`records`)."""
        writable_dir(log_dir)
        started = datetime.now(UTC)
        while True:
            folder = log_dir / f"{started:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
            try:
                folder.mkdir()
                break
            except FileExistsError:
                continue
            except OSError as err:
                raise LogError(f"cannot write the log folder {str(log_dir)!r}: {err.strerror or err}") from err
        log = cls(folder)
        head = {
            "argv": argv,
            "started": started.isoformat(timespec="seconds"),
            "version": version(),
            "git_commit": git_commit(),
            "config": config,
            "record_path": str(record.resolve()) if record else str(log.records.resolve()) if keep else None,
        }
        _write_json(folder / RUN_FILE, head)
        return log

    def finish(self, summary: dict[str, Any], elapsed_s: float) -> None:
        """Write ``summary.json``: the run's result as ``run --json`` prints it, and its wall time."""
        _write_json(self.folder / SUMMARY_FILE, summary | {"elapsed_s": elapsed_s})


def _write_json(path: Path, data: dict[str, Any]) -> None:
    """``path`` written whole or not at all (a temporary file, then renamed)."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(data, indent=1, default=str) + "\n", encoding="utf-8")
    os.replace(partial, path)


@dataclass(frozen=True)
class LoggedRun:
    """One logged command as ``debatekit logs`` lists it: ``run``, ``solve``, ``plan``, ``demo`` or
    ``judge-accuracy``;
    ``accept_rate`` (a run's) and ``outcome`` (its headline, in words) are None when it did not finish."""

    folder: Path
    started: str
    command: str
    protocol: str
    problem: str
    size: int | None
    truth: str
    alice: str
    bob: str
    trials: int
    accept_rate: float | None
    outcome: str | None
    config: dict[str, Any]
    """The command's whole configuration as its ``run.json`` holds it (constants, parameters,
    oracles, seed, ...)."""
    version: str
    git_commit: str | None
    elapsed_s: float | None
    """Its wall time (None when it did not finish)."""

    def described(self) -> str:
        """What ran, in words: the command, protocol, problem, size and truth, a run's players and
        trials, its constants and parameters."""
        config = self.config
        what = [self.command, self.protocol, f"on {self.problem}" if self.problem else ""]
        what += [f"size {self.size}" if self.size is not None else "", f"truth {self.truth}" if self.truth else ""]
        if self.command == "run":
            what += [f"{self.alice} vs {self.bob},", f"{self.trials} trials"]
        if self.command == "judge-accuracy":
            what += [f"debaters {config.get('debaters')}, judge {config.get('judge')}",
                     f"on {config.get('dataset') or 'the built-in plans'},", f"{self.trials} trials"]  # fmt: skip
        params = config.get("params")  # a run's {NAME: VALUE}; solve's and the demo's -P as given, NAME=VALUE
        if isinstance(params, dict):
            params = [f"{key}={value}" for key, value in params.items()]
        params = [str(param) for param in params] if isinstance(params, list) else []
        if config.get("constants") and not any(param.startswith("constants=") for param in params):
            what.append(f"constants={config['constants']}")  # as -P names them in the parameters
        return " ".join(part for part in [*what, *params] if part)

    def to_json(self) -> dict[str, Any]:
        """``logs --json``'s entry: the folder, when it started, the version and commit, the whole
        configuration, and how it ended (``outcome`` None: unfinished)."""
        return {
            "folder": str(self.folder),
            "started": self.started,
            "command": self.command,
            "version": self.version,
            "git_commit": self.git_commit,
            "config": self.config,
            "finished": self.outcome is not None,
            "outcome": self.outcome,
            "accept_rate": self.accept_rate,
            "elapsed_s": self.elapsed_s,
        }


def outcome(command: str, summary: dict[str, Any]) -> str:
    """A finished command's headline: a run's accept rate, solve's exact value, plan's verifier
    queries, whether the demo's guarantees held, judge-accuracy's accuracy per arm."""
    if command == "judge-accuracy":
        arms = summary["arms"]
        return ", ".join(f"{arm['name']} " + ("–" if arm["accuracy"] is None else f"{arm['accuracy']:.2f}")
                         for arm in arms)  # fmt: skip
    if command == "solve":
        exact = summary.get("exact")
        return f"exact {exact}" if exact is not None else f"{len(summary.get('inputs', []))} inputs solved"
    if command == "plan":
        queries = summary.get("verifier_queries")
        return f"{queries} V queries" if queries is not None else f"frontier of {len(summary.get('frontier', []))}"
    if command == "demo":
        return "guarantees hold" if summary.get("all_guarantees_hold") else "a guarantee FAILED"
    if "pooled" in summary:  # a run over a dataset
        correct = summary["pooled"]["correct"]
        return f"verdict = truth {correct['rate']:.3f} ({len(summary['items'])} items)"
    return f"accept {summary['accept_rate']:.3f}"


def _started(folder: Path) -> tuple[str, int]:
    """A log folder's place in time: its name's second, then when its ``run.json`` was written."""
    try:
        written = (folder / RUN_FILE).stat().st_mtime_ns
    except OSError:
        written = 0
    return folder.name[:15], written


def runs(log_dir: Path) -> list[LoggedRun]:
    """The commands logged in ``log_dir``, oldest first (folders without a ``run.json`` or whose
    ``run.json`` is not a run's are skipped); a file that is not JSON, or nested too deep, is a
    :class:`~debatekit.files.FileMistake` naming it and its line. Folders started in the same
    second (their names sort by the second, then at random) are ordered by when ``run.json`` was
    written."""
    found = []
    for folder in sorted(log_dir.iterdir(), key=_started) if log_dir.is_dir() else ():
        try:
            head = read_json(folder / RUN_FILE)
            config = head["config"]
            command = str(config.get("command", "run"))
        except FileMistake:
            if (folder / RUN_FILE).is_file():
                raise
            continue
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        try:
            summary = read_json(folder / SUMMARY_FILE)
            said = outcome(command, summary)
        except FileMistake:
            if (folder / SUMMARY_FILE).is_file():
                raise
            summary, said = {}, None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            summary, said = {}, None
        accept = summary.get("accept_rate") if said is not None else None
        found.append(
            LoggedRun(
                folder,
                str(head.get("started", "")),
                command,
                str(config.get("protocol", "")),
                str(config.get("problem", "")),
                config.get("size"),
                str(config.get("truth") or ""),
                str(config.get("alice", "")),
                str(config.get("bob", "")),
                int(config.get("trials", 0) or 0),
                accept,
                said,
                config,
                str(head.get("version", "")),
                head.get("git_commit") if isinstance(head.get("git_commit"), str) else None,
                summary.get("elapsed_s") if said is not None and isinstance(summary.get("elapsed_s"), float) else None,
            )
        )
    return found
