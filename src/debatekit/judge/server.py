"""The judges' web app: each person sees one verifier query at a time and answers it.

Doubly-efficient debate promises that the judge checks one local step, never the whole argument;
so a judge's page (``/j/{token}``, their personal link) shows only the next task's question and
its context lines I(t): never the rest of the transcript, which side claimed what, or other
judges' answers; it says how many answers the debate still needs. The judge answers with a
confidence, their probability that the claim is true (a slider, as on the NYU debate platform),
and an optional explanation; the verifier's oracle reads the bit ``confidence > 0.5`` (50% is
refused: that is "Unsure / skip", which hands the question back to the other judges). A page's
GET holds nothing: its script's render beacon holds the slot, and the time of that first render
is when the question was shown (a form sent without it counts from the signed time the page was
made). With ``instructions`` and ``consent`` (the experimenter's Markdown), a judge accepts the
consent page before their first question, and the instructions are linked from every page. The
experimenter's page (``/admin/{token}``) shows the debates waiting, judgements per debate against
the planned budget, per-judge statistics and the agreement between judges, with JSON and CSV exports.

Malformed requests get a clear 4xx and change nothing: bodies are capped (413), forms carry a
token bound by HMAC to the judge, the task and the slot, and a cross-site Origin, Referer or
Sec-Fetch-Site is refused (403). A task that does not exist and one that is not the judge's get the
same 403, so task ids cannot be probed; an address that sends :data:`FAILED_TOKENS` wrong judge or
experimenter links within :data:`FAILED_WINDOW` seconds is refused (429) until the window passes.
Pages are server-rendered Jinja2 with plain forms; no cookies. The judges' own requests (their page,
its render beacon, an answer: many a second in a large study) are plain async routes, their form read
once, the store read inline (SQLite) or in a thread (PostgreSQL) and its writes awaited, so that no
thread waits on a commit; the rest (experimenter's pages, consent, instructions) are FastAPI's.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import re
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar
from urllib.parse import parse_qsl, urlsplit

from fastapi import FastAPI, Form, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from debatekit.judge.store import MAX_EXPLANATION, Judge, Refused, Store, Task
from debatekit.judge.study import export_csv

T = TypeVar("T")

MAX_BODY = 8 * MAX_EXPLANATION + 1024
"""Largest request body accepted, in bytes: an answer form with the longest explanation, URL-encoded."""

ANSWERS = {"yes": 1, "no": 0, "1": 1, "0": 0}
"""A bare yes or no (for scripts); the page's form sends ``submit`` with its confidence, or ``skip``."""

RENDER_JS = """document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("answer-form");
  if (!form) return;
  fetch(form.dataset.shown, {method: "POST", body: new URLSearchParams(new FormData(form))})
    .then((reply) => { if (reply.status === 409) location.replace(form.dataset.next); });
  const slider = document.getElementById("confidence"), value = document.getElementById("confidence-value");
  const show = () => { value.textContent = Math.round(slider.value * 100) + "%"; };
  slider.addEventListener("input", show);
  show();
});
"""
"""The judge's page script: the render beacon (which holds the question's slot, or moves on when others
took it) and the slider's percentage."""

HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; form-action 'self';"
        b" frame-ancestors 'none'; base-uri 'none'",
    ),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]

REFUSED_STATUS = {"answer": 422, "unknown": 403, "not yours": 403}
MOVED_ON = {
    "closed": "That question already had all the answers it needed, so yours was not counted.",
    "taken": "Other judges gave that question the answers it needed first, so yours was not counted.",
    "held": "Other judges took the question you were opening; here is the next one.",
    "changed": "You had answered that question already; your first answer stands.",
}
"""Submissions that change nothing but need no error page, and a render beacon that came too late (``held``):
the judge is shown the next question with this note."""

FAILED_TOKENS = 20
"""Wrong judge or experimenter links one client address may send within :data:`FAILED_WINDOW`."""
FAILED_WINDOW = 60.0


class Problem(Exception):
    """A request refused with ``status`` and a one-line reason for the person who sent it."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class Guard:
    """ASGI middleware: refuses bodies over ``limit`` bytes before the app sees them (413; a
    malformed Content-Length 400), and adds the security headers to every response."""

    def __init__(self, app: ASGIApp, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def guarded(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and not declared.isdigit():
            await self._refuse(guarded, 400, "malformed Content-Length")
            return
        if declared is not None and int(declared) > self.limit:
            await self._refuse(guarded, 413, f"request body larger than {self.limit} bytes")
            return
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.limit:
                await self._refuse(guarded, 413, f"request body larger than {self.limit} bytes")
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, guarded)

    @staticmethod
    async def _refuse(send: Send, status: int, reason: str) -> None:
        text = reason.encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"text/plain; charset=utf-8"),
                    (b"content-length", str(len(text)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": text})


class Failures:
    """Wrong tokens by client address in a sliding window: past ``limit`` the address is refused."""

    def __init__(self, limit: int = FAILED_TOKENS, window: float = FAILED_WINDOW):
        self.limit, self.window = limit, window
        self._seen: dict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def _recent(self, client: str, now: float) -> deque[float]:
        times = self._seen[client]
        while times and times[0] <= now - self.window:
            times.popleft()
        return times

    def check(self, client: str) -> None:
        """Refuse ``client`` (429) while it has sent ``limit`` wrong tokens within the window."""
        with self._lock:
            blocked = len(self._recent(client, time.monotonic())) >= self.limit
            if not self._seen[client]:
                del self._seen[client]
        if blocked:
            raise Problem(429, "too many wrong links from your address; wait a minute and check your link")

    def add(self, client: str) -> None:
        with self._lock:
            now = time.monotonic()
            self._recent(client, now).append(now)


def error_pages(app: FastAPI, page: Callable[..., HTMLResponse]) -> None:
    """Every error ``app`` meets as its ``error.html`` page (``page(template, status, **context)``):
    a :class:`Problem` it raised, a malformed request (the fields named, nothing echoed), an HTTP error."""

    @app.exception_handler(Problem)
    async def problem(request: Request, err: Problem) -> HTMLResponse:
        return page("error.html", err.status, status=err.status, message=str(err))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, err: RequestValidationError) -> HTMLResponse:
        return await problem(request, malformed([str(e["loc"][-1]) for e in err.errors()]))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, err: HTTPException) -> HTMLResponse:
        return page("error.html", err.status_code, status=err.status_code, message=str(err.detail))


@dataclass(frozen=True)
class Field:
    """A form field of the judges' routes: an integer, or text of at most ``longest`` characters; an
    empty value is an absent one."""

    longest: int | None = None
    required: bool = True


BEACON = {"task": Field(), "slot": Field(), "rendered": Field(32), "csrf": Field(64)}
"""The render beacon's form (the judge's page's hidden fields)."""
ANSWER = {
    **BEACON,
    "answer": Field(8),
    "confidence": Field(32, required=False),
    "explanation": Field(MAX_EXPLANATION, required=False),
}
"""The answer form: the page's hidden fields, the button pressed, the slider and the explanation."""

INTEGER = re.compile(r"[+-]?[0-9]{1,18}")
TRUE, FALSE = {"1", "true", "t", "yes", "y", "on"}, {"0", "false", "f", "no", "n", "off"}
"""A flag's spellings in a query string (as FastAPI reads a bool)."""


def malformed(names: list[str]) -> Problem:
    """A request whose ``names`` are missing or malformed (422): the fields named, nothing echoed."""
    return Problem(422, f"malformed request: check {', '.join(sorted(set(names)))}")


def number(value: str, name: str) -> int:
    """``value`` as an integer, else :func:`malformed`."""
    if INTEGER.fullmatch(value) is None:
        raise malformed([name])
    return int(value)


def flag(query: Mapping[str, str], name: str) -> bool:
    """The flag ``name`` of a query string (absent: False), else :func:`malformed`."""
    value = query.get(name, "false").lower()
    if value not in TRUE | FALSE:
        raise malformed([name])
    return value in TRUE


async def read_form(request: Request, fields: dict[str, Field]) -> dict[str, Any]:
    """The form ``request`` carries (URL-encoded or multipart), checked against ``fields``: the values
    present, integers as ``int``; any missing, too long or not a number is :func:`malformed`."""
    form: Mapping[str, Any]
    if request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):  # a page's form
        form = dict(parse_qsl((await request.body()).decode(errors="replace")))
    else:
        form = await request.form()
    values: dict[str, Any] = {}
    wrong = []
    for name, field in fields.items():
        value = form.get(name) or None
        if value is None:
            if field.required:
                wrong.append(name)
        elif not isinstance(value, str) or (field.longest is not None and len(value) > field.longest):
            wrong.append(name)
        elif field.longest is None:
            if INTEGER.fullmatch(value) is None:
                wrong.append(name)
            else:
                values[name] = int(value)
        else:
            values[name] = value
    if wrong:
        raise malformed(wrong)
    return values


def form_token(secret: bytes, judge: int, task: int | str, slot: int = 0, rendered: str = "") -> str:
    """The token a judge's form carries: HMAC-SHA256 of (judge, task, slot, when the page was made);
    the consent form's ``task`` is ``consent``."""
    return hmac.new(secret, f"{judge}:{task}:{slot}:{rendered}".encode(), hashlib.sha256).hexdigest()


def judged(answer: str, confidence: str | None) -> tuple[int, float | None]:
    """The bit the verifier's oracle reads and the confidence kept with it: from the slider (``submit``:
    yes when the judge's probability that the claim is true is above 50%; 50% itself is refused),
    or a bare yes or no, with a confidence that must agree when one is given."""
    p = None
    if confidence:
        try:
            p = float(confidence)
        except ValueError:
            p = -1.0
        if not 0 <= p <= 1:
            raise Problem(422, "a confidence is a probability, from 0 to 1")
    if answer == "submit":
        if p is None or p == 0.5:
            raise Problem(422, "50% says neither yes nor no: move the slider, or choose Unsure / skip")
        return int(p > 0.5), p
    if answer not in ANSWERS:
        raise Problem(422, "an answer is yes or no (1 or 0), a confidence, or skip")
    if p is not None and int(p > 0.5) != ANSWERS[answer]:
        raise Problem(422, f"answer {answer} and confidence {p:g} disagree")
    return ANSWERS[answer], p


def same_origin(request: Request) -> bool:
    """False when the browser says the request comes from another site: Sec-Fetch-Site, else
    Origin, else Referer, compared with the Host the request was sent to (absent: allowed)."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return False
    host = request.headers.get("host", "")
    for header in ("origin", "referer"):
        value = request.headers.get(header)
        if value is not None:
            return urlsplit(value).netloc == host
    return True


def blocks(text: str) -> list[tuple[str, str]]:
    """A question's text as ("text" | "code", content) blocks: paragraphs split at blank lines, and a
    paragraph whose lines are all indented by four spaces (Markdown's code block) as code, dedented,
    with the blank lines between such paragraphs kept in it."""
    out: list[tuple[str, str]] = []
    for paragraph in re.split(r"\n\s*\n", text.strip("\n")):
        lines = paragraph.split("\n")
        if all(line.startswith("    ") for line in lines):
            code = "\n".join(line[4:] for line in lines)
            if out and out[-1][0] == "code":
                code = out.pop()[1] + "\n\n" + code
            out.append(("code", code))
        else:
            out.append(("text", paragraph))
    return out


def ago(then: float | None, now: float | None = None) -> str:
    """``then`` as a short age for the experimenter's page."""
    if then is None:
        return "–"
    seconds = max(0, int((time.time() if now is None else now) - then))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit} ago"
    return f"{seconds} s ago"


def create_app(
    db_path: str | os.PathLike[str],
    max_body: int = MAX_BODY,
    failures: Failures | None = None,
    instructions: str | None = None,
    consent: str | None = None,
) -> FastAPI:
    """The judges' app on the store at ``db_path`` (created if missing); ``failures`` counts wrong
    tokens by client address (default :data:`FAILED_TOKENS` per :data:`FAILED_WINDOW`);
    ``instructions`` and ``consent``: the experimenter's pages as safe HTML (``study.read_markdown``)."""
    store = Store(db_path)
    local = isinstance(store.location, Path)
    failed = Failures() if failures is None else failures
    secret = store.form_secret()
    env = Environment(
        loader=FileSystemLoader(Path(__file__).parent / "templates"), autoescape=select_autoescape(), auto_reload=False
    )
    env.filters["ago"] = ago
    env.filters["blocks"] = blocks
    templates = {name: env.get_template(name) for name in env.list_templates(extensions=["html"])}
    app = FastAPI(title="debatekit judges", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(Guard, limit=max_body)

    def page(template: str, code: int = 200, **context: Any) -> HTMLResponse:
        return HTMLResponse(templates[template].render(**context), status_code=code)

    def client(request: Request) -> str:
        return request.client.host if request.client is not None else "unknown"

    def judge_of(request: Request, token: str) -> Judge:
        failed.check(client(request))
        judge = store.judge(token)
        if judge is None:
            failed.add(client(request))
            raise Problem(404, "this judge link is not known here; ask the experimenter for yours")
        return judge

    def admin(request: Request, token: str) -> None:
        failed.check(client(request))
        if not store.is_admin(token):
            failed.add(client(request))
            raise Problem(403, "this experimenter link is not valid (each `debatekit judge admin` makes a new one)")

    error_pages(app, page)

    def signed(judge: Judge, task: int, slot: int, rendered: str, csrf: str) -> float:
        """When the form's page was made, once its token is checked (403 otherwise)."""
        if not hmac.compare_digest(csrf, form_token(secret, judge.id, task, slot, rendered)):
            raise Problem(403, "this form was not issued to you for this question; reload your page")
        return float(rendered)

    def posted(request: Request, token: str, consenting: bool = False) -> Judge:
        """The judge sending a form from this site's own pages, who accepted the consent page (unless
        ``consenting``: the form that accepts it)."""
        judge = judge_of(request, token)
        if not same_origin(request):
            raise Problem(403, "answers are accepted only from this site's own pages")
        if consent is not None and judge.consented is None and not consenting:
            raise Problem(403, "accept the consent page first: open your link again")
        return judge

    async def read(reads: Callable[..., T], *args: Any) -> T:
        """``reads(*args)``, reads of the store: inline on a SQLite file (each a few microseconds), in a
        thread on PostgreSQL (each a round trip, which the event loop must not wait for)."""
        if local:
            return reads(*args)
        return await run_in_threadpool(reads, *args)

    async def judge_page(request: Request) -> HTMLResponse:
        """The judge's next question and its context lines, nothing else of the debate (with a note on
        the last answer when it was not counted: :data:`MOVED_ON`; a gold question's feedback after
        the judge answered it); the consent page first, when there is one; holds nothing."""
        query = request.query_params
        answered, skipped, note, gold = flag(query, "answered"), flag(query, "skipped"), query.get("note"), None
        if query.get("gold") is not None:
            gold = number(query["gold"], "gold")
        return await read(next_page, request, answered, skipped, note, gold)

    def next_page(request: Request, answered: bool, skipped: bool, note: str | None, gold: int | None) -> HTMLResponse:
        """:func:`judge_page`'s reads and its page, once its link's query is checked."""
        token = request.path_params["token"]
        judge = judge_of(request, token)
        common = {"judge": judge, "token": token, "instructions": instructions is not None}
        if consent is not None and judge.consented is None:
            return page("consent.html", consent=consent, csrf=form_token(secret, judge.id, "consent"), **common)
        offer = store.peek(judge)
        rendered = f"{time.time():.3f}"
        csrf = None if offer is None else form_token(secret, judge.id, offer.task.id, offer.slot, rendered)
        shown = None if gold is None else store.task(gold)
        feedback = None
        if shown is not None and shown.gold is not None and any(a.judge == judge.id for a in store.answers(gold)):
            feedback = shown.feedback
        return page(
            "judge.html", offer=offer, csrf=csrf, rendered=rendered, answered=answered, skipped=skipped,
            note=MOVED_ON.get(note or ""), feedback=feedback, finished=offer is None and store.finished(judge),
            max_explanation=MAX_EXPLANATION, **common,
        )  # fmt: skip

    @app.get("/j/{token}/instructions", response_class=HTMLResponse)
    def instructions_page(request: Request, token: str) -> HTMLResponse:
        """The experimenter's instructions."""
        judge = judge_of(request, token)
        return page("instructions.html", judge=judge, token=token, instructions=instructions)

    @app.post("/j/{token}/consent")
    def agree(request: Request, token: str, csrf: Annotated[str, Form(max_length=64)]) -> Response:
        """The judge accepts the consent page; on to their first question."""
        judge = posted(request, token, consenting=True)
        if not hmac.compare_digest(csrf, form_token(secret, judge.id, "consent")):
            raise Problem(403, "this form was not issued to you; reload your page")
        store.consent(judge)
        return RedirectResponse(f"/j/{token}", status_code=303)

    async def render_js(request: Request) -> Response:
        return Response(RENDER_JS, media_type="text/javascript")

    async def shown(request: Request) -> Response:
        """The render beacon: the page was rendered, so its slot is held for the judge from now (204),
        or others took it meanwhile (409: the page moves on)."""
        form = await read_form(request, BEACON)
        judge = await read(posted, request, request.path_params["token"])
        signed(judge, form["task"], form["slot"], form["rendered"], form["csrf"])
        held = await asyncio.wrap_future(store.holding(judge, form["task"], form["slot"]))
        return Response(status_code=204 if held else 409)

    def answering(request: Request, token: str, task_id: int) -> tuple[Judge, Task | None]:
        """The judge sending an answer (:func:`posted`) and the task it answers, read before the answer is
        written: what the next page needs of it (a gold question's feedback) never changes."""
        return posted(request, token), store.task(task_id)

    async def submit(request: Request) -> Response:
        """Record one answer (:func:`judged`) to a task shown to this judge, or its skip; a double
        submit counts once. A task that does not exist is refused as one not shown to the judge (the same 403)."""
        form = await read_form(request, ANSWER)
        token, task, slot, answer = request.path_params["token"], form["task"], form["slot"], form["answer"]
        judge, answered = await read(answering, request, token, task)
        if answer != "skip":
            bit, p = judged(answer, form.get("confidence"))
        when = signed(judge, task, slot, form["rendered"], form["csrf"])
        try:
            if answer == "skip":
                await asyncio.wrap_future(store.skipping(judge, task))
                return RedirectResponse(f"/j/{token}?skipped=true", status_code=303)
            explanation = form.get("explanation", "").strip() or None
            await asyncio.wrap_future(store.submitting(judge, task, slot, bit, p, explanation, rendered=when))
        except Refused as refused:
            if refused.kind in MOVED_ON:  # nothing to fix: on to the next question, saying why
                return RedirectResponse(f"/j/{token}?note={refused.kind}", status_code=303)
            raise Problem(REFUSED_STATUS[refused.kind], str(refused)) from None
        after = f"&gold={task}" if answered is not None and answered.feedback else ""  # a gold question's feedback
        return RedirectResponse(f"/j/{token}?answered=true{after}", status_code=303)

    # the judges' own requests, many a second: plain routes on the event loop, no dependency injection
    # each; reads as `read` runs them, writes awaited on the store's writer (no thread waits for them)
    app.add_route("/j/{token}", judge_page, methods=["GET"])
    app.add_route("/render.js", render_js, methods=["GET"])
    app.add_route("/j/{token}/shown", shown, methods=["POST"])
    app.add_route("/j/{token}/answer", submit, methods=["POST"])

    @app.get("/admin/{token}", response_class=HTMLResponse)
    def admin_page(request: Request, token: str) -> HTMLResponse:
        """Debates waiting, judgements per debate against the planned budget, per-judge statistics, agreement."""
        admin(request, token)
        return page("admin.html", status=store.status(), token=token)

    @app.get("/admin/{token}/export.json")
    def export(request: Request, token: str) -> JSONResponse:
        """Every task, judgement and skip, per-judge statistics and agreement (judges by id and name, never tokens)."""
        admin(request, token)
        return JSONResponse(store.export())

    @app.get("/admin/{token}/export.csv")
    def export_table(request: Request, token: str) -> Response:
        """Every answer and skip as CSV (:func:`~debatekit.judge.study.export_csv`)."""
        admin(request, token)
        return Response(export_csv(store.export()), media_type="text/csv; charset=utf-8")

    return app
