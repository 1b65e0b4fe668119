"""The viewer's web app: an index of debates with filters and pages, one page per debate, a page
per run (a log folder or a sweep's cell) and per sweep, linked to each other.

Server-rendered Jinja2 with autoescaping on every page (a record is untrusted: its messages,
questions and model texts are shown as text, never markup), no scripts, the judges' server's
security headers and body cap (:class:`debatekit.judge.server.Guard`); it serves only what
``load`` read, and binds where the command line says (127.0.0.1).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import FastAPI, Query, Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape

from debatekit.experiments.sweep import flat
from debatekit.experiments.viewer.data import EVENTS_PER_PAGE, FILTERS, Library, Source, ViewError, page_of
from debatekit.judge.server import MAX_BODY, Guard, Problem, error_pages

PER_PAGE = 50
"""Debates listed on one page of the index, unless ``per`` says otherwise (at most :data:`MAX_PER_PAGE`)."""
MAX_PER_PAGE = 1000


def create_app(library: Library) -> FastAPI:
    """The viewer's app over ``library`` (:func:`debatekit.experiments.viewer.data.load`)."""
    env = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"), autoescape=select_autoescape())
    app = FastAPI(title="debatekit viewer", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(Guard, limit=MAX_BODY)

    def page(template: str, code: int = 200, **context: Any) -> HTMLResponse:
        return HTMLResponse(env.get_template(template).render(library=library, **context), status_code=code)

    error_pages(app, page)

    def source_of(index: int) -> Source:
        if not 0 <= index < len(library.sources):
            raise Problem(404, f"there is no source {index} here")
        return library.sources[index]

    @app.get("/", response_class=HTMLResponse)
    def index(
        request: Request,
        page_number: int = Query(1, alias="page", ge=1),
        per: int = Query(PER_PAGE, ge=1, le=MAX_PER_PAGE),
    ) -> HTMLResponse:
        """Every debate that passes the filters (query parameters), a page at a time."""
        filters = {key: request.query_params.get(key, "") for key in FILTERS}
        rows = library.select(filters)
        pages = max(1, math.ceil(len(rows) / per))
        number = min(page_number, pages)
        kept = {key: value for key, value in filters.items() if value} | ({"per": per} if per != PER_PAGE else {})

        def link(at: int) -> str:
            return "/?" + urlencode(kept | {"page": at})

        return page(
            "index.html",
            rows=rows[(number - 1) * per : number * per],
            matched=len(rows),
            filters=filters,
            choices=library.choices(),
            number=number,
            pages=pages,
            previous=link(number - 1) if number > 1 else None,
            next=link(number + 1) if number < pages else None,
            errors=[s for s in library.sources if s.error and s.shared is None],
        )

    @app.get("/source/{index}/debate/{debate}", response_class=HTMLResponse)
    def debate_page(index: int, debate: int, at: int = Query(0, ge=0)) -> HTMLResponse:
        """One debate: its events in order (a page of them), reads marked, outcome and aside."""
        source = source_of(index)
        row = library.row(index, debate)
        if row is None:
            raise Problem(404, f"{source.label} holds no debate {debate}")
        try:
            record, events = library.record(row)
        except ViewError as err:
            raise Problem(422, str(err)) from None
        shown = page_of(record, events, at)
        base = f"/source/{index}/debate/{debate}"
        return page(
            "debate.html",
            row=row,
            source=source,
            record=record,
            shown=shown,
            earlier=f"{base}?at={max(0, at - EVENTS_PER_PAGE)}" if at > 0 else None,
            later=f"{base}?at={at + EVENTS_PER_PAGE}" if at + EVENTS_PER_PAGE < shown.total else None,
        )

    @app.get("/source/{index}", response_class=HTMLResponse)
    def source_page(index: int) -> HTMLResponse:
        """A run's log folder or a sweep's cell (its configuration, results and debates), a sweep
        (its cells), or a record file."""
        source = source_of(index)
        cells = [library.sources[k] for k in source.cells]
        return page(
            "source.html",
            source=source,
            config=flat(source.config),
            summary=flat(source.summary or {}),
            cells=cells,
            parent=None if source.parent is None else library.sources[source.parent],
        )

    return app
