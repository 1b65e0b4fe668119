"""LLM debaters' model layer (the ``llm`` extra, issue 11): backends for OpenAI-compatible APIs
(:mod:`.openai_chat`) and in-process GGUF models (:mod:`.local`), the :class:`Model` every
caller uses (limits, retries, cache, usage by role), model specs (:mod:`.config`) and the LLM
model of the judge (:class:`ModelJudge`). The backends load on first use: ``llm:local/...``
needs llama-cpp-python, the others the ``openai`` client."""

from debatekit.llm.backend import (
    Backend,
    Completion,
    Message,
    ModelError,
    ModelTimeout,
    Rejected,
    Request,
    Transient,
    Unparseable,
    p_yes,
)
from debatekit.llm.config import ConfigError, ModelSpec, Prompt, cache_path, model_of
from debatekit.llm.judge import ModelJudge
from debatekit.llm.model import Cache, Limits, Model, Price, Usage

__all__ = [
    "Backend",
    "Cache",
    "Completion",
    "ConfigError",
    "Limits",
    "Message",
    "Model",
    "ModelError",
    "ModelJudge",
    "ModelSpec",
    "ModelTimeout",
    "Price",
    "Prompt",
    "Rejected",
    "Request",
    "Transient",
    "Unparseable",
    "Usage",
    "cache_path",
    "model_of",
    "p_yes",
]
