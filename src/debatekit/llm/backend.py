"""What a model is asked and what it answers, the interface every backend implements, and the
errors a call can end in (issue 11, item 1).

A :class:`Request` is the whole of a chat completion call, so its hash is the cache key
(:mod:`debatekit.llm.limits`); a :class:`Completion` keeps the text, the token counts and, when
asked for, each generated token's top log-probabilities, from which :func:`p_yes` reads a judge
model's P[yes] (issue 11, item 4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, Protocol

Message = tuple[Literal["system", "user", "assistant"], str]
"""One chat message: (role, content)."""

TopLogprobs = tuple[tuple[str, float], ...]
"""The most likely tokens at one position of a completion, with their natural-log probabilities."""


@dataclass(frozen=True)
class Request:
    """One chat completion call. ``top_logprobs`` asks for that many alternatives (with their
    log-probabilities) at each generated position; None asks for none."""

    model: str
    messages: tuple[Message, ...]
    temperature: float = 0.0
    max_tokens: int = 256
    seed: int | None = 0
    top_logprobs: int | None = None


@dataclass(frozen=True)
class Completion:
    """A model's answer to a :class:`Request`: ``logprobs`` holds one :data:`TopLogprobs` per
    generated token when they were asked for and given, else it is empty."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    logprobs: tuple[TopLogprobs, ...] = ()


class Backend(Protocol):
    """A chat model behind some transport (an HTTP API, a model file loaded in-process)."""

    @property
    def endpoint(self) -> str:
        """Where requests go (an API's base URL, a model file's path): part of the cache key."""
        ...

    async def complete(self, request: Request) -> Completion:
        """The completion of ``request``, or one of the :class:`ModelError` types."""
        ...


class ConfigError(ValueError):
    """A model spec that cannot be used: malformed, an unknown provider, a missing key or file."""


class ModelError(Exception):
    """A model call that failed or whose answer cannot be used; whoever relied on it is charged."""


class Transient(ModelError):
    """A failure worth retrying (rate limit 429, a 5xx, a lost connection); ``retry_after`` is the
    wait in seconds the server asked for, if it did."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class ModelTimeout(Transient):
    """No completion within the per-call time limit."""


class Rejected(ModelError):
    """The request was refused for good (400 bad request, 401 unauthorised, 404 no such model)."""


class Unparseable(ModelError):
    """A response that is not a completion (not JSON, fields missing), or one whose content the
    caller cannot read (no yes or no where one was asked for)."""


def completion_of(data: Any) -> Completion:
    """The :class:`Completion` in an OpenAI-format chat completion body (what an OpenAI-compatible
    server sends and what llama-cpp-python returns), or :class:`Unparseable`."""
    try:
        choice = data["choices"][0]
        text, usage = choice["message"]["content"], data["usage"]
        content = (choice.get("logprobs") or {}).get("content") or ()
        logprobs = tuple(
            tuple((str(alt["token"]), float(alt["logprob"])) for alt in position["top_logprobs"])
            for position in content
        )
        completion = Completion(
            text, int(usage["prompt_tokens"]), int(usage["completion_tokens"]), str(choice["finish_reason"]), logprobs
        )
    except (LookupError, TypeError, ValueError, AttributeError) as err:
        raise Unparseable(f"not a chat completion ({type(err).__name__}: {err})") from err
    if not isinstance(text, str):
        raise Unparseable("a chat completion without text")
    return completion


_YES, _NO = "yes", "no"


def yes_no_mass(completion: Completion) -> tuple[float, float] | None:
    """The probability masses of the yes and of the no variants (any case, surrounding whitespace:
    "Yes", " yes", "YES", "No") among the first generated token's top log-probabilities, or None
    when no log-probabilities were given."""
    if not completion.logprobs:
        return None
    mass = {_YES: 0.0, _NO: 0.0}
    for token, logprob in completion.logprobs[0]:
        word = token.strip().lower()
        if word in mass:
            mass[word] += math.exp(logprob)
    return mass[_YES], mass[_NO]


def p_yes(completion: Completion) -> float | None:
    """P[yes] from the first generated token's top log-probabilities, normalised over the yes and
    no variants among them (:func:`yes_no_mass`), or None when neither appears (or no
    log-probabilities were given)."""
    mass = yes_no_mass(completion)
    if mass is None or sum(mass) <= 0:
        return None
    return mass[0] / sum(mass)
