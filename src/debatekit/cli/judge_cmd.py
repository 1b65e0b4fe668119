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
