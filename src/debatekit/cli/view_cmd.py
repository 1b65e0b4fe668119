"""``debatekit view PATH``: browse debates in a local web page (issue 24): a table of debates with
filters, one page per debate, and pages for runs and sweeps (extra: judge). The web stack is
imported when the command runs, never when the app is built."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Annotated

import typer

from debatekit.mistakes import UserError

HOST = "127.0.0.1"
"""The viewer listens on this machine only."""


def view(
    path: Annotated[
        Path,
        typer.Argument(
            metavar="PATH",
            help="A record file (run --record), a run's log folder, a sweep folder, "
            "or a folder of these (a log folder).",
        ),
    ],
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="Port to listen on at 127.0.0.1 (0: a free one).")
    ] = 0,
    no_open: Annotated[bool, typer.Option("--no-open", help="Print the address without opening a browser.")] = False,
) -> None:
    """Serve a viewer of debates on 127.0.0.1 and print its address: filter the debates (protocol,
    problem, truth, players, verdict, forfeit, oracle, judge), open one to see its messages, the
    verifier's reads, the oracle's questions and answers and the model calls kept aside."""  # fmt: skip
    try:
        import uvicorn

        from debatekit.experiments.viewer.app import create_app
    except ImportError as err:
        raise UserError(
            f"the viewer needs the judge extra ({err.name} is missing): pip install 'debatekit[judge]'"
        ) from None
    from debatekit.experiments.viewer.data import ViewError, load

    try:
        library = load(path)
    except ViewError as err:
        raise UserError(str(err)) from None
    try:
        listening = socket.create_server((HOST, port))
    except OSError as err:
        raise UserError(f"cannot listen on {HOST}:{port}: {err.strerror or err}") from None
    url = f"http://{HOST}:{listening.getsockname()[1]}/"
    typer.echo(f"debatekit view: {url} ({len(library.rows)} debates from {path}); stop with Ctrl-C", err=True)
    if not no_open:
        import webbrowser

        webbrowser.open(url)
    server = uvicorn.Server(uvicorn.Config(create_app(library), log_level="warning"))
    with listening:
        server.run(sockets=[listening])
