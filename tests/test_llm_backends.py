"""The model layer over real HTTP, offline: an OpenAI-compatible server in this process on
127.0.0.1, scripted per test, called through the official ``openai`` client. Malformed bodies,
429 with Retry-After, 5xx, 4xx, slow responses, logprobs, the concurrency bound and the cache
(a rerun, in another process too, makes zero HTTP calls) are exercised for real (issue 11)."""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from email.utils import formatdate
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("openai")
pytest.importorskip("tenacity")

from debatekit.ledger import Role
from debatekit.llm import (
    Cache,
    Completion,
    ConfigError,
    Limits,
    Model,
    ModelJudge,
    ModelSpec,
    ModelTimeout,
    Price,
    Rejected,
    Request,
    Transient,
    Unparseable,
    model_of,
    p_yes,
)
from debatekit.llm.config import JUDGE, Prompt, price_of
from debatekit.llm.openai_chat import OpenAIChat, retry_after
from debatekit.oracle import Pending, Question, consulted, here, in_debate
from llm_server import Reply, Server, chat, serving

ROOT = Path(__file__).resolve().parents[1]
FAST = Limits(max_connections=4, timeout=5.0, max_retries=3, backoff=0.01, max_wait=5.0)


@pytest.fixture(scope="module")
def http() -> Iterator[Server]:
    yield from serving()


def model(server: Server, limits: Limits = FAST, cache: Cache | None = None, client_timeout: float = 10.0) -> Model:
    return Model("m", OpenAIChat(server.url, "sk-test", client_timeout), limits, cache)


def ask(text: str = "Is it?", **settings: Any) -> Request:
    return Request("m", (("user", text),), **settings)


def test_a_completion_over_http_carries_the_whole_request_and_its_logprobs(http: Server) -> None:
    top = (("Yes", math.log(0.6)), (" yes", math.log(0.1)), ("No", math.log(0.2)), ("Maybe", math.log(0.1)))
    http.play(Reply(chat("Yes", top, prompt=11)))
    llm = model(http)
    completion = asyncio.run(llm.complete(ask(temperature=0.5, max_tokens=3, seed=9, top_logprobs=4), Role.ALICE))
    assert completion.text == "Yes" and completion.prompt_tokens == 11 and completion.completion_tokens == 1
    assert completion.finish_reason == "stop"
    assert completion.logprobs[0] == top  # floats survive JSON exactly
    assert p_yes(completion) == pytest.approx(0.7 / 0.9)
    sent = http.bodies[0]
    assert sent["model"] == "m" and sent["messages"] == [{"role": "user", "content": "Is it?"}]
    assert (sent["temperature"], sent["max_tokens"], sent["seed"]) == (0.5, 3, 9)
    assert sent["logprobs"] is True and sent["top_logprobs"] == 4
    assert http.authorizations == ["Bearer sk-test"]
    usage = llm.usage[Role.ALICE]
    assert (usage.prompt_tokens, usage.completion_tokens, usage.calls, usage.cache_hits) == (11, 1, 1, 0)
    assert usage.cost is None


def test_no_logprobs_are_asked_for_unless_wanted_and_p_yes_is_then_unknown(http: Server) -> None:
    http.play(Reply(chat("Yes")))
    completion = asyncio.run(model(http).complete(ask(), Role.BOB))
    assert "logprobs" not in http.bodies[0] and "top_logprobs" not in http.bodies[0]
    assert completion.logprobs == () and p_yes(completion) is None


def test_p_yes_normalises_over_yes_and_no_variants_only() -> None:
    def first(*top: tuple[str, float]) -> Completion:
        return Completion("x", 1, 1, "stop", (top,))

    assert p_yes(first(("YES", math.log(0.2)), ("\nno", math.log(0.2)), (" No", math.log(0.4)))) == pytest.approx(1 / 4)
    assert p_yes(first(("yes", -1.0), ("Maybe", -0.1))) == 1.0
    assert p_yes(first(("Maybe", -0.1), ("nope", -0.2))) is None
    assert p_yes(Completion("x", 1, 1, "stop")) is None


@pytest.mark.parametrize(
    "reply",
    [
        Reply("this is not JSON {", raw=True),
        Reply({"id": "c", "object": "chat.completion"}),  # no choices
        Reply({**chat(), "choices": []}),
        Reply({**chat(), "usage": None}),
        Reply({**chat(), "choices": [{"index": 0, "message": {"role": "assistant"}, "finish_reason": "stop"}]}),
        Reply([1, 2, 3]),
    ],
    ids=["not-json", "no-choices", "empty-choices", "no-usage", "no-content", "a-list"],
)
def test_a_malformed_body_raises_unparseable_without_retrying(http: Server, reply: Reply) -> None:
    http.play(reply, Reply(chat()))
    with pytest.raises(Unparseable):
        asyncio.run(model(http).complete(ask(), Role.ALICE))
    assert http.calls == 1


def test_429_waits_at_least_retry_after_then_succeeds(http: Server) -> None:
    http.play(
        Reply({"error": {"message": "slow down"}}, status=429, headers=(("Retry-After", "1"),)), Reply(chat("No"))
    )
    llm = model(http)
    started = time.monotonic()
    completion = asyncio.run(llm.complete(ask(), Role.BOB))
    assert completion.text == "No" and http.calls == 2
    assert http.arrivals[1] - http.arrivals[0] >= 1.0  # the backoff alone (0.01 s) is far shorter
    assert time.monotonic() - started < 4.0
    assert llm.usage[Role.BOB].calls == 2


@pytest.mark.parametrize("status", [500, 502, 503])
def test_a_server_error_is_retried_with_backoff(http: Server, status: int) -> None:
    http.play(Reply({"error": {"message": "boom"}}, status=status), Reply(chat("Yes")))
    assert asyncio.run(model(http).complete(ask(), Role.ALICE)).text == "Yes"
    assert http.calls == 2


def test_persistent_server_errors_end_in_transient_after_the_retries(http: Server) -> None:
    http.play(Reply({"error": {"message": "down"}}, status=503))
    with pytest.raises(Transient, match="503"):
        asyncio.run(model(http).complete(ask(), Role.ALICE))
    assert http.calls == FAST.max_retries + 1


@pytest.mark.parametrize("status", [400, 401, 404])
def test_a_client_error_is_rejected_without_retrying(http: Server, status: int) -> None:
    http.play(Reply({"error": {"message": "no"}}, status=status), Reply(chat()))
    with pytest.raises(Rejected, match=str(status)):
        asyncio.run(model(http).complete(ask(), Role.ALICE))
    assert http.calls == 1


@pytest.mark.parametrize("whose", ["model", "client"])
def test_a_slow_server_times_out_after_the_retries_within_bounded_time(http: Server, whose: str) -> None:
    """The per-call limit of the model (asyncio) or of the HTTP client fires; either way every
    attempt is abandoned at its limit and the call ends in ModelTimeout."""
    http.play(Reply(chat(), delay=3.0))
    limits = Limits(timeout=0.3 if whose == "model" else 10.0, max_retries=2, backoff=0.01, max_wait=0.05)
    llm = model(http, limits, client_timeout=10.0 if whose == "model" else 0.3)
    started = time.monotonic()
    with pytest.raises(ModelTimeout):
        asyncio.run(llm.complete(ask(), Role.VERIFIER))
    assert time.monotonic() - started < 2.5  # three attempts of 0.3 s, not one reply of 3 s
    # three attempts made; under load an attempt may be abandoned before its request reaches the server
    assert llm.usage[Role.VERIFIER].calls == 3 and 1 <= http.calls <= 3


def test_concurrency_is_bounded_per_model(http: Server) -> None:
    http.play(Reply(chat(), delay=0.2))
    llm = model(http, Limits(max_connections=2, timeout=5.0, max_retries=0))

    async def many() -> list[Completion]:
        return await asyncio.gather(*(llm.complete(ask(f"q{i}"), Role.ALICE) for i in range(6)))

    assert len(asyncio.run(many())) == 6
    assert http.calls == 6 and http.most_in_flight == 2


def _echo(body: dict[str, Any]) -> Reply:
    """A reply that depends on the request, so a cache mixing requests up would show."""
    content = body["messages"][-1]["content"]
    return Reply(chat(f"{content}/{body['seed']}", prompt=len(content)))


RERUN = """
import asyncio, json, sys
from pathlib import Path
from debatekit.ledger import Role
from debatekit.llm import Cache, Limits, Model, Request
from debatekit.llm.openai_chat import OpenAIChat

url, path = sys.argv[1], Path(sys.argv[2])
llm = Model("m", OpenAIChat(url, "sk-test", 10.0), Limits(max_retries=0), Cache(path))
requests = [Request("m", (("user", f"q{i}"),), seed=i) for i in range(5)]


async def main():
    return await asyncio.gather(*(llm.complete(r, Role.BOB) for r in requests))

completions = asyncio.run(asyncio.wait_for(main(), 30))
usage = llm.usage[Role.BOB]
print(json.dumps({"texts": [c.text for c in completions], "calls": usage.calls, "hits": usage.cache_hits}))
"""


def test_a_rerun_through_the_cache_makes_zero_model_calls_in_this_process_and_another(
    http: Server, tmp_path: Path
) -> None:
    http.play(_echo)
    requests = [ask(f"q{i}", seed=i) for i in range(5)]
    first = model(http, cache=Cache(tmp_path / "cache.sqlite"))

    async def run(llm: Model, role: Role) -> list[Completion]:
        return await asyncio.gather(*(llm.complete(r, role) for r in requests))

    made = asyncio.run(run(first, Role.ALICE))
    assert [c.text for c in made] == [f"q{i}/{i}" for i in range(5)] and http.calls == 5
    assert first.usage[Role.ALICE].calls == 5 and first.usage[Role.ALICE].prompt_tokens == 10

    again = model(http, cache=Cache(tmp_path / "cache.sqlite"))  # a new model, the same file
    assert asyncio.run(run(again, Role.ALICE)) == made
    assert http.calls == 5  # zero new HTTP calls
    assert again.usage[Role.ALICE].calls == 0 and again.usage[Role.ALICE].cache_hits == 5
    assert again.usage[Role.ALICE].prompt_tokens == 0  # nothing paid for

    other = subprocess.run(
        [sys.executable, "-c", RERUN, http.url, str(tmp_path / "cache.sqlite")],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert other.returncode == 0, other.stderr
    assert json.loads(other.stdout) == {"texts": [c.text for c in made], "calls": 0, "hits": 5}
    assert http.calls == 5

    # anything else in the request is a different key: one more call each
    asyncio.run(again.complete(ask("q0", seed=1), Role.ALICE))
    asyncio.run(again.complete(ask("q0", seed=0, temperature=0.7), Role.ALICE))
    asyncio.run(again.complete(ask("q0", seed=0, top_logprobs=2), Role.ALICE))
    assert http.calls == 8


def test_a_failed_call_is_not_cached(http: Server, tmp_path: Path) -> None:
    http.play(Reply({"error": {"message": "bad"}}, status=400), Reply(chat("Yes")))
    llm = model(http, cache=Cache(tmp_path / "cache.sqlite"))
    with pytest.raises(Rejected):
        asyncio.run(llm.complete(ask(), Role.ALICE))
    assert asyncio.run(llm.complete(ask(), Role.ALICE)).text == "Yes"
    assert http.calls == 2


def test_usage_is_counted_per_role_and_priced(http: Server) -> None:
    http.play(Reply(chat(prompt=1000)))
    llm = Model("m", OpenAIChat(http.url, "k", 5.0), FAST, price=Price(input=2.0, output=8.0))
    for role in (Role.ALICE, Role.ALICE, Role.BOB):
        asyncio.run(llm.complete(ask(), role))
    assert llm.usage[Role.ALICE].calls == 2 and llm.usage[Role.BOB].calls == 1 and Role.VERIFIER not in llm.usage
    assert llm.usage[Role.ALICE].cost == pytest.approx(2 * (1000 * 2.0 + 1 * 8.0) / 1e6)
    assert llm.total().prompt_tokens == 3000 and llm.total().completion_tokens == 3


def test_retry_after_reads_seconds_milliseconds_and_dates() -> None:
    assert retry_after({"retry-after": "2.5"}) == 2.5
    assert retry_after({"retry-after-ms": "1500"}) == 1.5
    assert retry_after({"retry-after": formatdate(time.time() + 30, usegmt=True)}) == pytest.approx(30, abs=2)
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None


def test_the_judge_model_answers_from_p_yes_with_one_call_for_n_samples(http: Server) -> None:
    http.play(Reply(chat("Yes", (("Yes", math.log(0.3)), ("No", math.log(0.7))))))
    judge = ModelJudge(model(http))
    question = Question("Does study 3 have a clear methodological flaw?", ("study 3: n=12, no control group",))
    count = asyncio.run(judge.sample_count(question, 1000, np.random.default_rng(5)))
    assert count == np.random.default_rng(5).binomial(1000, 0.3)
    assert http.calls == 1
    prompt = http.bodies[0]["messages"][-1]["content"]
    assert question.text in prompt and question.context[0] in prompt
    assert http.bodies[0]["max_tokens"] == 1 and http.bodies[0]["top_logprobs"] == 20
    assert asyncio.run(judge.sample(("t", 3, (0, 1)), np.random.default_rng(0))) in (0, 1)
    assert json.dumps(["t", 3, [0, 1]]) in http.bodies[1]["messages"][-1]["content"]
    assert judge.waits and judge.probability(question) is None
    assert judge.model.usage[Role.VERIFIER].calls == 2  # outside a run: charged to its role


def test_the_judge_model_raises_when_it_cannot_read_yes_or_no(http: Server) -> None:
    """The verifier's model (its role outside a run) that cannot answer leaves the query pending,
    naming the model and what the call ended in; it never answers by default."""
    http.play(Reply(chat("Perhaps", (("Perhaps", -0.1), ("Maybe", -2.0)))))
    with pytest.raises(Pending, match="llm:m: Unparseable: neither yes nor no") as failed:
        asyncio.run(ModelJudge(model(http)).sample(Question("Is it?"), np.random.default_rng(0)))
    assert isinstance(failed.value.__cause__, Unparseable)
    http.play(Reply({"error": {"message": "bad key"}}, status=401))
    with pytest.raises(Pending, match="Rejected") as failed:
        asyncio.run(ModelJudge(model(http)).sample(Question("Is it?"), np.random.default_rng(0)))
    assert isinstance(failed.value.__cause__, Rejected)


def test_a_users_judge_prompt_replaces_the_packaged_one(http: Server, tmp_path: Path) -> None:
    (tmp_path / "judge.txt").write_text("Q: $question\nC: $context\nYes or no?")
    http.play(Reply(chat("No", (("No", -0.1), ("Yes", -3.0)))))
    judge = ModelJudge(model(http), Prompt.read((JUDGE,), tmp_path))
    asyncio.run(judge.sample(Question("Is x?", ("x=1",)), np.random.default_rng(0)))
    assert http.bodies[0]["messages"][-1]["content"] == "Q: Is x?\nC: \nGiven: x=1\nYes or no?"
    assert judge.prompt.source == str(tmp_path / "judge.txt")
    (tmp_path / "judge.txt").write_text("Q: $query")
    with pytest.raises(ConfigError, match=r"unknown placeholder \$query"):
        Prompt.read((JUDGE,), tmp_path)


def test_a_spec_names_a_provider_configured_by_environment(http: Server) -> None:
    http.play(Reply(chat("Yes")))
    environ = {"DEBATEKIT_MY_SERVER_BASE_URL": http.url, "DEBATEKIT_MY_SERVER_API_KEY": "sk-env"}
    llm = model_of(ModelSpec.parse("my-server/org/model-1"), FAST, environ=environ)
    assert llm.name == "org/model-1"
    asyncio.run(llm.complete(Request(llm.name, (("user", "hi"),)), Role.ALICE))
    assert http.bodies[0]["model"] == "org/model-1" and http.authorizations == ["Bearer sk-env"]


@pytest.mark.parametrize(
    "spec, environ, message",
    [
        ("nobody/m", {}, "unknown model provider 'nobody'"),
        ("openai/gpt-4o-mini", {}, "OPENAI_API_KEY"),
        ("vllm/m", {"DEBATEKIT_VLLM_BASE_URL": "http://127.0.0.1:1/v1"}, "DEBATEKIT_VLLM_API_KEY"),
        ("local/no-such-model", {}, "smollm2 or the path of a .gguf file"),
    ],
)
def test_an_unusable_spec_raises_config_error(spec: str, environ: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        model_of(ModelSpec.parse(spec), environ=environ)


@pytest.mark.parametrize("text", ["smollm2", "local/", "/m", ""])
def test_a_spec_is_provider_slash_model(text: str) -> None:
    with pytest.raises(ConfigError, match="PROVIDER/MODEL"):
        ModelSpec.parse(text)


def test_the_openai_provider_reads_its_key_and_calls_the_openai_api() -> None:
    llm = model_of(ModelSpec.parse("openai/gpt-4o-mini"), environ={"OPENAI_API_KEY": "sk-x"})
    assert llm.name == "gpt-4o-mini" and llm.backend.endpoint == "https://api.openai.com/v1"


def test_calls_from_different_event_loops_and_threads_share_one_model(http: Server) -> None:
    """The engine runs debates under separate ``asyncio.run`` calls and worker threads."""
    http.play(Reply(chat(), delay=0.1))
    llm = model(http, Limits(max_connections=1, timeout=5.0, max_retries=0))
    threads = [threading.Thread(target=lambda i=i: asyncio.run(llm.complete(ask(f"t{i}"), Role.BOB))) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert http.calls == 4 and http.most_in_flight == 1 and llm.usage[Role.BOB].calls == 4


def test_the_judge_is_charged_to_the_role_asking_in_a_run(http: Server) -> None:
    http.play(Reply(chat("Yes", (("Yes", -0.1), ("No", -3.0)))))
    judge = ModelJudge(model(http))

    async def asked_by_bob() -> int:
        in_debate("run", 0)
        return await consulted(here(Role.BOB, 0), lambda: judge.sample(Question("q"), np.random.default_rng(0)))

    assert asyncio.run(asked_by_bob()) in (0, 1)
    assert judge.model.usage[Role.BOB].calls == 1 and Role.VERIFIER not in judge.model.usage


def test_a_price_set_in_the_environment_is_read_and_a_bad_one_refused() -> None:
    spec = ModelSpec.parse("openai/gpt-4o-mini")
    assert price_of(spec, {}) is None
    assert price_of(spec, {"DEBATEKIT_OPENAI_PRICE": "0.15,0.6"}) == Price(0.15, 0.6)
    assert Price(0.15, 0.6).cost(1_000_000, 1_000_000) == pytest.approx(0.75)
    for bad in ("0.15", "a,b", "-1,2", "inf,1"):
        with pytest.raises(ConfigError, match="DEBATEKIT_OPENAI_PRICE"):
            price_of(spec, {"DEBATEKIT_OPENAI_PRICE": bad})
