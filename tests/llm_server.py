"""An OpenAI-compatible chat server in this process on 127.0.0.1, scripted per test, for the
tests of the model layer and of the LLM players (issue 11): real HTTP, called through the
official ``openai`` client, no network. A test module's fixture serves one (:func:`serving`) and each
test plays a script of :class:`Reply` values, or functions of the request body that return one."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted HTTP response: a JSON value (or raw text) with a status, headers, a delay."""

    body: Any
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    raw: bool = False


def chat(text: str = "Yes", top: tuple[tuple[str, float], ...] | None = None, prompt: int = 7) -> dict[str, Any]:
    """An OpenAI chat completion body; ``top`` gives the first token's top log-probabilities."""
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": text},
        "finish_reason": "stop",
        "logprobs": None,
    }
    if top is not None:
        alternatives = [{"token": t, "logprob": lp, "bytes": None} for t, lp in top]
        choice["logprobs"] = {
            "content": [{"token": text, "logprob": top[0][1], "bytes": None, "top_logprobs": alternatives}]
        }
    usage = {"prompt_tokens": prompt, "completion_tokens": 1, "total_tokens": prompt + 1}
    return {"id": "c", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice], "usage": usage}


@dataclass
class Server:
    """The scripted server: each POST takes the next reply (the last one repeats); it records the
    request bodies and headers, the times calls arrived and the most calls in flight at once
    (counting the calls of this script only: slow replies of an earlier one may still be running)."""

    url: str = ""
    script: list[Reply | Callable[[dict[str, Any]], Reply]] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)
    arrivals: list[float] = field(default_factory=list)
    in_flight: int = 0
    most_in_flight: int = 0
    script_number: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def play(self, *replies: Reply | Callable[[dict[str, Any]], Reply]) -> None:
        with self.lock:
            self.script = list(replies)
            self.bodies.clear()
            self.authorizations.clear()
            self.arrivals.clear()
            self.in_flight = self.most_in_flight = 0
            self.script_number += 1

    @property
    def calls(self) -> int:
        return len(self.bodies)

    def reply(self, body: dict[str, Any], authorization: str) -> tuple[Reply, int]:
        with self.lock:
            self.arrivals.append(time.monotonic())
            self.bodies.append(body)
            self.authorizations.append(authorization)
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            step = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        return (step(body) if callable(step) else step), self.script_number

    def done(self, script_number: int) -> None:
        with self.lock:
            if script_number == self.script_number:
                self.in_flight -= 1


def _handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            assert self.path == "/v1/chat/completions"
            reply, script_number = server.reply(body, self.headers.get("Authorization", ""))
            try:
                time.sleep(reply.delay)
                payload = (reply.body if reply.raw else json.dumps(reply.body)).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in reply.headers:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except OSError:  # the client gave up on a slow reply
                pass
            finally:
                server.done(script_number)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def serving() -> Iterator[Server]:
    """A scripted server listening on 127.0.0.1 until the generator is closed: a test module's
    fixture yields from it (``yield from serving()``)."""
    server = Server()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
    httpd.daemon_threads = True
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
