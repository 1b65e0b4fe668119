"""Any OpenAI-compatible chat API (OpenAI, vLLM, llama.cpp's server, Ollama) through the official
``openai`` async client (issue 11, item 1).

The client's own retries are off (``max_retries=0``): retries, backoff and Retry-After belong to
:mod:`debatekit.llm.limits`, so this backend only translates each failure into a
:class:`~debatekit.llm.backend.ModelError`: 429 and 5xx (with the server's Retry-After) and lost
connections are :class:`Transient`, other statuses :class:`Rejected`, a body that is not a chat
completion :class:`Unparseable`. The body is parsed here from its JSON, never trusted as typed.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
from collections.abc import Mapping
from weakref import WeakKeyDictionary

import openai

from debatekit.llm.backend import (
    Completion,
    ModelTimeout,
    Rejected,
    Request,
    Transient,
    Unparseable,
    completion_of,
)


class OpenAIChat:
    """Chat completions from ``base_url`` with ``api_key``, each call at most ``timeout`` seconds."""

    def __init__(self, base_url: str, api_key: str, timeout: float):
        self._base_url, self._api_key, self._timeout = base_url, api_key, timeout
        self._clients: WeakKeyDictionary[asyncio.AbstractEventLoop, openai.AsyncOpenAI] = WeakKeyDictionary()

    @property
    def endpoint(self) -> str:
        return self._base_url

    def _client(self) -> openai.AsyncOpenAI:
        """This event loop's client (an async connection pool belongs to the loop that opened it)."""
        loop = asyncio.get_running_loop()
        if loop not in self._clients:
            self._clients[loop] = openai.AsyncOpenAI(
                base_url=self._base_url, api_key=self._api_key, max_retries=0, timeout=self._timeout
            )
        return self._clients[loop]

    async def complete(self, request: Request) -> Completion:
        wanted = request.top_logprobs is not None
        try:
            raw = await self._client().chat.completions.with_raw_response.create(
                model=request.model,
                messages=[{"role": role, "content": content} for role, content in request.messages],  # type: ignore[misc]
                temperature=request.temperature,
                max_tokens=request.max_tokens,
                seed=request.seed,
                logprobs=True if wanted else openai.NOT_GIVEN,
                top_logprobs=request.top_logprobs if wanted else openai.NOT_GIVEN,
            )
            body = raw.text
        except openai.APITimeoutError as err:
            raise ModelTimeout(f"{self._base_url}: no response within {self._timeout:g} s") from err
        except openai.APIConnectionError as err:
            raise Transient(f"{self._base_url}: {err}") from err
        except openai.APIStatusError as err:
            reason = f"{self._base_url}: HTTP {err.status_code}: {err.message}"
            if err.status_code == 429 or err.status_code >= 500:
                raise Transient(reason, retry_after(err.response.headers)) from err
            raise Rejected(reason) from err
        try:
            data = json.loads(body)
        except ValueError as err:
            raise Unparseable(f"{self._base_url}: a response that is not JSON: {body[:200]!r}") from err
        return completion_of(data)


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait in seconds a 429 or 503 response asks for: ``retry-after-ms``, else ``retry-after``
    as seconds or as an HTTP date (RFC 9110, Section 10.2.3); None when absent or unreadable.
    ``headers`` is the client's case-insensitive mapping."""
    if "retry-after-ms" in headers:
        try:
            return max(float(headers["retry-after-ms"]) / 1000, 0.0)
        except ValueError:
            return None
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        return max(email.utils.parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
    except (TypeError, ValueError):
        return None
