"""Where a sweep's cells run: in this process, a local process pool, or a Ray cluster.

Each backend is a context manager yielding a ``Mapper``: ``mapper(fn, items)`` calls ``fn`` on
every item as an independent task and yields the results as they finish (in any order). ``fn``
must be a module-level function and items and results picklable.
"""

from __future__ import annotations

import functools
import logging
import os
import secrets
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from debatekit.engine.interrupts import held
from debatekit.mistakes import UserError
from debatekit.runs.spec import MAX_CONCURRENCY

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

Mapper = Callable[[Callable[[Any], Any], Sequence[Any]], Iterator[Any]]
RAY_DIR_ROOM = 40
"""The longest temp dir a local Ray cluster gets as it is: its sockets (about 65 bytes below it) must fit
in an AF_UNIX path's 107 bytes."""
RAY_WAIT = 0.5
"""Seconds one ``ray.wait`` may block. A signal's handler that raises within Ray's calls breaks
them (``SystemError``), so a signal there only sets the stop flag, acted on between waits."""


class Backend(StrEnum):
    """Where cells run (``--backend``): a local process pool, or a Ray cluster."""

    local = "local"
    ray = "ray"


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


class BackendError(RuntimeError):
    """A backend that cannot start: Ray not installed, or a cluster that cannot be reached."""


def _serial(fn: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[Any]:
    for item in items:
        yield fn(item)


@contextmanager
def local(workers: int) -> Iterator[Mapper]:
    """A pool of ``workers`` processes on this machine (one worker: this process, no pool). The
    workers ignore SIGINT and die at SIGTERM, and keep their temporary files in one folder of this
    sweep's; when the sweep stops early (an error, Ctrl-C, SIGTERM) they are terminated, not waited
    for, and that folder is removed, so no process or temporary folder outlives the sweep."""
    if workers == 1:
        yield _serial
        return
    scratch = tempfile.mkdtemp(prefix="debatekit-sweep-")
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait  # on use: `--help` stays fast

    pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker, initargs=(scratch,))

    def mapper(fn: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[Any]:
        pending: set[Future] = {pool.submit(fn, item) for item in items}
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    yield future.result()
        finally:
            for future in pending:  # an error or interrupt: drop what has not started
                future.cancel()

    try:
        yield mapper
    except BaseException:
        _terminate(pool)
        raise
    else:
        pool.shutdown(wait=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _worker(scratch: str) -> None:
    """A pool worker's set-up: Ctrl-C is for the sweep (which stops its workers), SIGTERM ends it
    at once, temporary files go under ``scratch``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    tempfile.tempdir = scratch


def _terminate(pool: ProcessPoolExecutor, grace: float = 2.0) -> None:
    """Stop ``pool`` without waiting for its cells: SIGTERM to every worker, SIGKILL to any left
    after ``grace`` seconds. (``_processes``: the executor has no public way before Python 3.14.)"""
    processes = list((pool._processes or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    deadline = time.monotonic() + grace
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join(1.0)


@contextmanager
def ray_cluster(address: str | None, workers: int, temp_dir: Path) -> Iterator[Mapper]:
    """Tasks on the Ray cluster at ``address`` (``auto``: the one this machine belongs to), or
    with none a local cluster of ``workers`` CPUs started here, keeping its files in ``temp_dir``
    (a link there to a short folder when its path is too long for Ray's sockets) and its tasks'
    temporary files in one folder of this sweep's; one CPU per task; its token in the environment,
    never in the home folder (:func:`_authentication`). The cluster started here stops on exit, the
    tasks' folder is removed, a short folder's files are moved to ``temp_dir`` (:func:`_keep`) and the
    environment is put back; a joined one is only disconnected. Signals stay the sweep's (Ray's
    driver would take SIGTERM for itself)."""
    try:
        import ray
    except ImportError as err:
        raise BackendError("--backend ray needs Ray: pip install 'debatekit[ray]'") from err
    options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.WARNING}
    scratch = short = None
    environment = {}
    if address is None:
        files = _short(temp_dir.absolute())
        short = None if files == temp_dir.absolute() else files
        options |= {"num_cpus": workers, "_temp_dir": str(files)}
        scratch = tempfile.mkdtemp(prefix="debatekit-sweep-")
        environment = _authentication()
    handlers = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    before = {name: os.environ.get(name) for name in (*environment, "RAY_AUTH_MODE")}
    os.environ.update(environment)
    try:
        try:
            with held():
                ray.init(address=address, **options)
        except (OSError, ValueError, RuntimeError) as err:  # OSError: ConnectionError, a socket path too long
            raise BackendError(f"--backend ray: cannot start or join a cluster: {err}") from err
        finally:
            if threading.current_thread() is threading.main_thread():
                for signum, handler in handlers.items():
                    signal.signal(signum, handler)

        def mapper(fn: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[Any]:
            task = ray.remote(num_cpus=1)(_in_scratch)
            pending = [task.remote(scratch, fn, item) for item in items]
            try:
                while pending:
                    with held():  # a signal within Ray's calls is raised once they return (bounded waits)
                        done, pending = ray.wait(pending, num_returns=1, timeout=RAY_WAIT)
                        try:
                            result = ray.get(done[0]) if done else None
                        except ray.exceptions.RayTaskError as err:  # the task's own exception, as the pool raises it
                            raise err.cause from None
                    if done:
                        yield result
            finally:  # an error or interrupt: tasks not started are dropped, those running interrupted
                for ref in pending:
                    ray.cancel(ref)

        yield mapper
    finally:  # also when a signal stops the cluster starting
        ray.shutdown()
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        if short is not None:
            _keep(short, temp_dir)


def _authentication() -> dict[str, str]:
    """What a cluster started here needs in the environment to leave the home folder alone: Ray
    turns token authentication on for a new local cluster and, with no token given, writes one to
    ``~/.ray/auth_token``, which then turns it on for every later Ray program of the user. Token
    authentication stays on, with this process's token (:func:`_token`) in the environment the
    cluster's processes inherit; a mode or token the user set is kept. (``RAY_AUTH_MODE`` is left to
    Ray, which reads it once: it sets it to token for the cluster, and :func:`ray_cluster` puts it back.)"""
    mode = os.environ.get("RAY_AUTH_MODE", "token").lower()
    given = any(name in os.environ for name in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"))
    return {} if mode != "token" or given else {"RAY_AUTH_TOKEN": _token()}


@functools.cache
def _token() -> str:
    """One random token for every cluster this process starts (Ray's driver keeps the first it reads)."""
    return secrets.token_hex(32)


def _in_scratch(scratch: str | None, fn: Callable[[Any], Any], item: Any) -> Any:
    """``fn(item)`` as a Ray task, its temporary files under ``scratch`` (when given)."""
    if scratch is not None:
        tempfile.tempdir = scratch
    return fn(item)


def _keep(short: Path, temp_dir: Path) -> None:
    """The cluster's files, kept in ``short`` while it ran (:func:`_short`), moved to ``temp_dir``
    (the link to ``short`` replaced by a folder) where the sweep's folder and the temporary folder
    share a file system, else dropped; ``short`` is removed either way."""
    try:
        if temp_dir.is_symlink():
            temp_dir.unlink()
        temp_dir.mkdir(exist_ok=True)
        for entry in short.iterdir():
            target = temp_dir / entry.name
            if target.is_symlink() or target.is_file():  # Ray's session_latest link
                target.unlink()
            os.rename(entry, target)
    except OSError:
        pass
    finally:
        shutil.rmtree(short, ignore_errors=True)


def _short(temp_dir: Path) -> Path:
    """``temp_dir`` if its path leaves room for Ray's sockets, else a new short folder linked from it."""
    temp_dir.parent.mkdir(parents=True, exist_ok=True)
    if len(str(temp_dir)) <= RAY_DIR_ROOM:
        temp_dir.mkdir(exist_ok=True)
        return temp_dir
    short = Path(tempfile.mkdtemp(prefix="dkray-"))
    if temp_dir.is_symlink():  # a link from an earlier invocation
        temp_dir.unlink()
    if not temp_dir.exists():
        temp_dir.symlink_to(short, target_is_directory=True)
    return short
