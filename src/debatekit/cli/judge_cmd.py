"""``debatekit judge``: serve the judges' pages, invite judges, add gold questions, print the
experimenter's link, and export a study's answers and statistics.

People answer the verifier's oracle queries one local step at a time (the judge extra). The
server's modules (FastAPI, Uvicorn) are imported when a command runs, never when the app is built.
"""

from __future__ import annotations

import socket
import sqlite3
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from debatekit.cli.options import JsonOption
from debatekit.files import FileMistake
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


DbOption = Annotated[
    str,
    typer.Option(
        "--db",
        metavar="FILE.sqlite|postgresql://...",
        help="The judges' database: a SQLite file (created if new) or a PostgreSQL database's URL.",
    ),
]
UrlOption = Annotated[str, typer.Option("--url", help="The address judges reach the server at, for the printed link.")]


def where(db: str) -> str:
    """``--db`` as shown to a person (a PostgreSQL URL without its password)."""
    from debatekit.judge.database import redacted

    return redacted(db)


def open_store(db: str) -> Store:
    """The store at ``db`` (a SQLite file or a PostgreSQL URL), or a one-line UserError saying why it
    cannot be opened."""
    from debatekit.judge.database import is_url
    from debatekit.judge.store import Store

    if is_url(db):
        try:
            import psycopg
        except ImportError:
            raise UserError(
                "a PostgreSQL database needs the postgres extra: pip install 'debatekit[postgres]'"
            ) from None
        try:
            return Store(db)
        except psycopg.Error as err:
            reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise UserError(f"cannot open the judges' database {where(db)}: {reason}") from None
    path = Path(db)
    if path.is_dir():
        raise UserError(f"--db {db} is a folder; give a file such as {path / 'judges.sqlite'}")
    if not path.parent.is_dir():
        raise UserError(f"--db {db}: the folder {path.parent} does not exist")
    try:
        return Store(path)
    except sqlite3.Error as err:
        raise UserError(f"cannot open the judges' database {db}: {err}") from None


def _base(url: str) -> str:
    if not url.startswith(("http://", "https://")):
        raise UserError(f"--url {url} must start with http:// or https://")
    return url.rstrip("/")


@app.command(
    "serve",
    epilog="\b\nExamples:\n  debatekit judge serve --db judges.sqlite --port 8000\n"
    "  debatekit judge serve --db judges.sqlite --instructions instructions.md --consent consent.md",
)
def serve(
    db: DbOption,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")] = 8000,
    instructions: Annotated[
        Path | None,
        typer.Option("--instructions", metavar="FILE.md", help="Instructions (Markdown), linked from every page."),
    ] = None,
    consent: Annotated[
        Path | None,
        typer.Option(
            "--consent", metavar="FILE.md", help="Consent (Markdown) a judge accepts before the first question."
        ),
    ] = None,
) -> None:
    """Serve the judges' pages and the experimenter's page (FastAPI on Uvicorn)."""
    try:
        import uvicorn

        from debatekit.judge.server import create_app
        from debatekit.judge.study import read_markdown
    except ImportError as err:
        raise UserError(
            f"the judge server needs the judge extra ({err.name} is missing): pip install 'debatekit[judge]'"
        ) from None
    try:
        pages = {
            name: None if file is None else read_markdown(file)
            for name, file in (("instructions", instructions), ("consent", consent))
        }
    except FileMistake as err:
        raise UserError(str(err)) from None
    open_store(db).close()
    try:
        with socket.create_server((host, port)):
            pass
    except OSError as err:
        raise UserError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
    typer.echo(f"judges' server on http://{host}:{port} (database {where(db)}); stop with Ctrl-C", err=True)
    uvicorn.run(create_app(db, **pages), host=host, port=port, log_level="warning", access_log=False)


@app.command(
    "invite", epilog="\b\nExamples:\n  debatekit judge invite Ada --db judges.sqlite --url http://127.0.0.1:8000"
)
def invite(
    name: Annotated[str, typer.Argument(help="The judge's name, as the experimenter's page shows it.")],
    db: DbOption,
    url: UrlOption = "http://127.0.0.1:8000",
    quota: Annotated[
        int | None, typer.Option("--quota", min=1, help="At most this many answers; then their completion code.")
    ] = None,
) -> None:
    """Add a judge and print their personal link (its token is stored hashed, shown only now). With
    --quota, the judge is shown a completion code (for crowd platforms) once they gave that many answers."""
    base = _base(url)
    if not name.strip():
        raise UserError("a judge needs a name")
    _, token = open_store(db).invite(name, quota)
    typer.echo(f"{base}/j/{token}")


@app.command("gold", epilog="\b\nExamples:\n  debatekit judge gold gold.jsonl --db judges.sqlite")
def gold(
    file: Annotated[Path, typer.Argument(metavar="FILE.jsonl", help="Gold questions, one JSON object a line.")],
    db: DbOption,
) -> None:
    """Add gold questions (known answers) shown among the real ones: each line {"question": ...,
    "context": [...], "answer": true|false, "feedback": ...} (context and feedback optional). Their
    answers never reach a debate; each judge's accuracy on them is in the statistics."""
    from debatekit.judge.study import read_gold

    try:
        questions = read_gold(file)
    except FileMistake as err:
        raise UserError(str(err)) from None
    added = open_store(db).add_gold(questions)
    typer.echo(f"added {added} gold question{'s' * (added != 1)} ({len(questions) - added} already there)")


class Format(StrEnum):
    csv = "csv"
    json = "json"


@app.command(
    "export",
    epilog="\b\nExamples:\n  debatekit judge export --db judges.sqlite --format csv --out answers.csv",
)
def export(
    db: DbOption,
    format: Annotated[
        Format, typer.Option("--format", help="csv: one row per answer and skip; json: everything.")
    ] = Format.json,
    out: Annotated[
        Path | None, typer.Option("--out", metavar="FILE", help="Write here (default: standard output).")
    ] = None,
) -> None:
    """Every answer (confidence, explanation, seconds from first render) and skip, the tasks, per-judge
    statistics (answers, skips, median time, gold accuracy, completion codes) and Krippendorff's alpha."""
    import json

    from debatekit.judge.database import is_url
    from debatekit.judge.study import export_csv

    if not is_url(db) and not Path(db).is_file():
        raise UserError(f"--db {db}: no such judges' database")
    data = open_store(db).export()
    text = export_csv(data) if format is Format.csv else json.dumps(data, indent=2) + "\n"
    if out is None:
        typer.echo(text, nl=False)
        return
    try:
        out.write_text(text)
    except OSError as err:
        raise UserError(f"--out {out}: cannot write it: {err.strerror or err}") from None
    typer.echo(f"wrote {out}", err=True)


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

    table = Table(title=f"open tasks in {where(db)}")
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
        raise UserError(
            f"there is no task {task} in {where(db)} (`debatekit judge tasks --db {where(db)}` lists the open ones)"
        )
    if run is not None and not store.runs_asked(run):
        raise UserError(
            f"no run {run} asked anything in {where(db)} (`debatekit judge tasks --db {where(db)}` lists open tasks)"
        )
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
        raise UserError(f"no judge named {name.strip()!r} can be revoked in {where(db)}")
    typer.echo(f"revoked {revoked} judge{'s' * (revoked != 1)} named {name.strip()!r}")
