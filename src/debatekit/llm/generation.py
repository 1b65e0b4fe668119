"""How a model is asked a judgement (a model of the judge's, or an LLM player's) and how its P[yes]
is estimated (issue 22, point 3): the
:class:`Generation` record a run's ``--generation FILE.toml`` sets, the parser that finds the
final yes or no in free text (:func:`final_answer`), and the :class:`Estimate` each judgement
states in the record.

Two modes, each with its estimator stated:

- ``logprobs`` (the default): one token (greedy at the default temperature 0); P[yes] is the yes
  variants' probability mass among the first token's top log-probabilities over the yes and no
  variants' together, and the mass this renormalisation drops (tokens that are neither) is
  reported beside it (``dropped``).
- ``reason``: reason, then answer: ``samples`` completions of at most ``max_tokens`` tokens at
  ``temperature`` (seeds 0..n-1) of the prompt ``reason.txt``, each ending, as it asks, in a final
  answer that :func:`final_answer` reads; P[yes] is the fraction of the samples that answered
  which answered yes, with n, the yes count and the samples with no final answer reported.

A ``system`` prompt, when set, is the first message of every call.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

from debatekit.llm.backend import ConfigError


class Mode(StrEnum):
    """How P[yes] is read: from the first token's log-probabilities, or from reasoned answers."""

    LOGPROBS = "logprobs"
    REASON = "reason"


MAX_SAMPLES = 64
"""The most completions one judgement may cost."""
MAX_TOKENS = 4096
"""The most tokens one reasoned completion may have."""
MAX_SYSTEM = 10_000
"""The most characters of a system prompt."""
KEYS = ("mode", "temperature", "samples", "max_tokens", "system")


@dataclass(frozen=True)
class Generation:
    """How each judgement is generated: ``mode``, sampling ``temperature``, ``samples`` per
    judgement (``reason`` only), ``max_tokens`` per completion (1 in ``logprobs`` mode) and the
    ``system`` prompt ("" for none)."""

    mode: Mode = Mode.LOGPROBS
    temperature: float = 0.0
    samples: int = 1
    max_tokens: int = 1
    system: str = ""

    def __post_init__(self) -> None:
        if not 0.0 <= self.temperature <= 2.0:
            raise ConfigError(f"temperature is in [0, 2], got {self.temperature!r}")
        if not 1 <= self.samples <= MAX_SAMPLES:
            raise ConfigError(f"samples is 1 to {MAX_SAMPLES}, got {self.samples!r}")
        if not 1 <= self.max_tokens <= MAX_TOKENS:
            raise ConfigError(f"max_tokens is 1 to {MAX_TOKENS}, got {self.max_tokens!r}")
        if len(self.system) > MAX_SYSTEM:
            raise ConfigError(f"the system prompt is at most {MAX_SYSTEM} characters")
        if self.mode is Mode.LOGPROBS and (self.samples, self.max_tokens) != (1, 1):
            raise ConfigError(
                "mode logprobs reads one token's log-probabilities (samples = 1, max_tokens = 1); "
                'use mode = "reason" for sampled answers'
            )
        if self.samples > 1 and self.temperature == 0:
            raise ConfigError("samples > 1 at temperature 0 are copies of one answer; set a temperature")

    @classmethod
    def of(cls, settings: Mapping[str, Any]) -> Generation:
        """The record from a table of :data:`KEYS` (a ``--generation`` file's); ``reason`` mode's
        ``max_tokens`` defaults to 256. Any mistake is a :class:`ConfigError`."""
        unknown = sorted(set(settings) - set(KEYS))
        if unknown:
            raise ConfigError(f"unknown key {unknown[0]!r}; the keys are {', '.join(KEYS)}")
        try:
            mode = Mode(settings.get("mode", Mode.LOGPROBS))
        except ValueError:
            raise ConfigError(f"mode is logprobs or reason, not {settings['mode']!r}") from None
        temperature = settings.get("temperature", 0.0)
        if type(temperature) not in (int, float):
            raise ConfigError(f"temperature is a number, not {temperature!r}")
        whole = {key: settings.get(key, default) for key, default in (("samples", 1), ("max_tokens", None))}
        for key, value in whole.items():
            if value is not None and type(value) is not int:
                raise ConfigError(f"{key} is a whole number, not {value!r}")
        system = settings.get("system", "")
        if not isinstance(system, str):
            raise ConfigError(f"system is text, not {system!r}")
        tokens = whole["max_tokens"] or (256 if mode is Mode.REASON else 1)
        return cls(mode, float(temperature), whole["samples"], tokens, system)

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"mode": self.mode.value}


@dataclass(frozen=True)
class Estimate:
    """A judgement's P[yes] and how it was estimated: ``estimator`` ``logprobs`` (renormalised over
    yes and no, ``dropped`` the first token's mass on neither), ``answer`` (a backend without
    log-probabilities: the one answer read as certain) or ``samples`` (``yes`` of the ``n``
    samples that gave a final answer, ``unanswered`` more gave none)."""

    p_yes: float
    estimator: str
    dropped: float | None = None
    n: int | None = None
    yes: int | None = None
    unanswered: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The estimator and its figures, for the record (the fields that apply)."""
        return {key: value for key, value in asdict(self).items() if key != "p_yes" and value is not None}


_MARKED = re.compile(
    r"\banswer\b\W{0,3}(?:is\W{0,3})?\W{0,3}(yes|no)\b(?!\W{0,3}(?:/|\bor\b)\W{0,3}(?:yes|no)\b)", re.IGNORECASE
)
_WORD = re.compile(r"[A-Za-z]+")


def final_answer(text: str) -> bool | None:
    """The final yes (True) or no (False) in a model's free text, or None when it gives none:
    the last "answer: yes|no" (any case, markdown and punctuation around it, "the answer is no"),
    else a last line that is only yes or no, else a reply that starts with yes or no and says
    neither word again. Ambiguity ("yes or no", a last line naming both) is None."""
    marked = _MARKED.findall(text)
    if marked:
        return marked[-1].lower() == "yes"
    lines = [line for line in text.splitlines() if _WORD.search(line)]
    if not lines:
        return None
    last = [word.lower() for word in _WORD.findall(lines[-1])]
    if last in (["yes"], ["no"]):
        return last[0] == "yes"
    words = [word.lower() for word in _WORD.findall(text)]
    if words[0] in ("yes", "no") and words.count("yes") + words.count("no") == 1:
        return words[0] == "yes"
    return None
