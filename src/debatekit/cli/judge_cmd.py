"""``debatekit judge``: serve the judges' pages, invite judges, and print the experimenter's link.

People answer the verifier's oracle queries one local step at a time (the judge extra). The
server's modules (FastAPI, Uvicorn) are imported when a command runs, never when the app is built.
"""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from debatekit.cli.options import JsonOption
from debatekit.mistakes import UserError

if TYPE_CHECKING:
    from debatekit.judge.store import Store

app = typer.Typer(
    help="People answer the verifier's oracle queries in a browser (extra: judge).",
    invoke_without_command=True,
    add_completion=False,
    rich_markup_mode=None,
)


@app.callback()
def judge(ctx: typer.Context) -> None:
    """People answer the verifier's oracle queries in a browser (extra: judge)."""
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())


DbOption = Annotated[Path, typer.Option("--db", metavar="FILE.sqlite", help="The judges' database (created if new).")]
UrlOption = Annotated[str, typer.Option("--url", help="The address judges reach the server at, for the printed link.")]


def open_store(db: Path) -> Store:
    """The store at ``db``, or a one-line UserError saying why it cannot be opened."""
    from debatekit.judge.store import Store

    if db.is_dir():
        raise UserError(f"--db {db} is a folder; give a file such as {db / 'judges.sqlite'}")
    if not db.parent.is_dir():
        raise UserError(f"--db {db}: the folder {db.parent} does not exist")
    try:
        return Store(db)
    except sqlite3.Error as err:
        raise UserError(f"cannot open the judges' database {db}: {err}") from None


def _base(url: str) -> str:
    if not url.startswith(("http://", "https://")):
        raise UserError(f"--url {url} must start with http:// or https://")
    return url.rstrip("/")


@app.command("serve", epilog="\b\nExamples:\n  debatekit judge serve --db judges.sqlite --port 8000")
def serve(
    db: DbOption,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")] = 8000,
) -> None:
    """Serve the judges' pages and the experimenter's page (FastAPI on Uvicorn)."""
    try:
        import uvicorn

        from debatekit.judge.server import create_app
    except ImportError as err:
        raise UserError(
            f"the judge server needs the judge extra ({err.name} is missing): pip install 'debatekit[judge]'"
        ) from None
    open_store(db).close()
    try:
        with socket.create_server((host, port)):
            pass
    except OSError as err:
        raise UserError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
    typer.echo(f"judges' server on http://{host}:{port} (database {db}); stop with Ctrl-C", err=True)
    uvicorn.run(create_app(db), host=host, port=port, log_level="warning")


@app.command(
    "invite", epilog="\b\nExamples:\n  debatekit judge invite Ada --db judges.sqlite --url http://127.0.0.1:8000"
)
def invite(
    name: Annotated[str, typer.Argument(help="The judge's name, as the experimenter's page shows it.")],
    db: DbOption,
    url: UrlOption = "http://127.0.0.1:8000",
) -> None:
    """Add a judge and print their personal link (its token is stored hashed, shown only now)."""
    base = _base(url)
    if not name.strip():
        raise UserError("a judge needs a name")
    _, token = open_store(db).invite(name)
    typer.echo(f"{base}/j/{token}")


@app.command("admin", epilog="\b\nExamples:\n  debatekit judge admin --db judges.sqlite")
def admin(db: DbOption, url: UrlOption = "http://127.0.0.1:8000") -> None:
    """Print a fresh experimenter link (the previous one stops working)."""
    base = _base(url)
    typer.echo(f"{base}/admin/{open_store(db).new_admin_token()}")


@app.command("tasks", epilog="\b\nExamples:\n  debatekit judge tasks --db judges.sqlite")
def tasks(db: DbOption, json_out: JsonOption = False) -> None:
    """Open tasks, oldest first (the order judges are shown them), with their age and what each waits for."""
    from debatekit.cli.common import emit_json

    waiting = open_store(db).open_tasks()
    for task in waiting:
        task["waits_for"] = waits_for(task)
    if json_out:
        emit_json({"tasks": waiting})
        return
    if not waiting:
        typer.echo("no open tasks")
        return
    from rich.table import Table

    from debatekit.cli.common import stdout
    from debatekit.judge.server import ago

    table = Table(title=f"open tasks in {db}")
    for name in ("task", "run", "debate", "asked by", "answers", "asked", "waits for"):
        table.add_column(name, justify="right" if name in ("task", "debate", "answers") else "left")
    for task in waiting:
        table.add_row(str(task["id"]), task["run"], str(task["debate"]), f"{task['role']} #{task['number']}",
                      f"{task['given']}/{task['needed']}", ago(task["created"]), task["waits_for"])  # fmt: skip
    stdout.print(table)


def waits_for(task: dict) -> str:
    """What an open task waits for, in words: answers (some held by judges now), or judges, when
    the judges not revoked cannot give the answers it still needs."""
    missing = task["needed"] - task["given"]
    if task["possible"] < missing:
        return (f"more judges: {missing} answers needed, the judges invited can give {task['possible']} "
                f"(at most {task['per_judge']} each)")  # fmt: skip
    held = f", {task['held']} being answered now" if task["held"] else ""
    return f"{missing} more answers{held}"


@app.command(
    "close",
    epilog="\b\nExamples:\n  debatekit judge close 12 --db judges.sqlite\n"
    "  debatekit judge close --run 3f2a9c0d1e4b5a6f --db judges.sqlite",
)
def close(
    db: DbOption,
    task: Annotated[int | None, typer.Argument(help="The task to close (`judge tasks` lists them).")] = None,
    run: Annotated[str | None, typer.Option("--run", help="Close every open task of this run and its reruns.")] = None,
) -> None:
    """Close tasks no run will wait for (a dead run's): judges are not shown them again, and a run still
    waiting on one stops with its debate pending."""
    if (task is None) == (run is None):
        raise UserError("judge close takes a TASK or --run RUN (one of them)")
    store = open_store(db)
    if task is not None and store.task(task) is None:
        raise UserError(f"there is no task {task} in {db} (`debatekit judge tasks --db {db}` lists the open ones)")
    if run is not None and not store.runs_asked(run):
        raise UserError(f"no run {run} asked anything in {db} (`debatekit judge tasks --db {db}` lists open tasks)")
    closed = store.close_tasks(task, run)
    typer.echo(f"closed {closed} open task{'s' * (closed != 1)}")


@app.command("revoke", epilog="\b\nExamples:\n  debatekit judge revoke Ada --db judges.sqlite")
def revoke(
    name: Annotated[str, typer.Argument(help="The judge's name, as invited.")],
    db: DbOption,
) -> None:
    """Revoke a judge's link (every judge of that name): it stops working at once, the questions held
    for them go back to the others; their answers stay."""
    revoked = open_store(db).revoke(name.strip())
    if not revoked:
        raise UserError(f"no judge named {name.strip()!r} can be revoked in {db}")
    typer.echo(f"revoked {revoked} judge{'s' * (revoked != 1)} named {name.strip()!r}")
