"""Prompts per role and side in files a user can override (issue 22, point 1): ``--prompts DIR``
holds ``judge.txt``, ``alice-honest.txt``, ``alice-liar.txt``, ``bob-honest.txt``,
``bob-liar.txt``; a player without its own file reads ``judge.txt`` there, else the packaged one.
Each model role asks through its own, the run's record names each file read and its SHA-256, and
a prompt without ``$question`` or a directory that cannot be read is one line and exit 2."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

pytest.importorskip("tenacity")

from debatekit.cli.main import main
from debatekit.engine.record import read_records
from debatekit.ledger import Role
from debatekit.llm import players
from debatekit.llm.config import JUDGE, ConfigError, Prompt
from debatekit.llm.players import prompt_for
from debatekit.players.base import Side
from test_llm_sides import caffeine, llm_of

ASKED = "Question: $question\n$context\nYes or no?"
"""The part of each test prompt the fake model reads its question from."""


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The fake model of :mod:`test_llm_sides` (answering caffeine's questions truthfully) served as
    ``llm:fake/judge``; the prompts it is asked, in order."""
    cache = tmp_path / "llm.sqlite"
    llm = llm_of(caffeine(False))
    asked: list[str] = []
    complete = llm.model.backend.complete

    async def noting(request):  # type: ignore[no-untyped-def]
        asked.append(request.messages[-1][1])
        return await complete(request)

    monkeypatch.setattr(llm.model.backend, "complete", noting)
    monkeypatch.setitem(players._MODELS, ("fake/judge", cache), llm.model)
    monkeypatch.setenv("DEBATEKIT_LLM_CACHE", str(cache))
    monkeypatch.delenv("DEBATEKIT_LLM_PROMPTS", raising=False)
    return asked


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["run", "cross-exam", "--problem", "caffeine", "--truth", "no", "--trials", "1", "--no-log",
                 *map(str, argv)])  # fmt: skip
    out, err = capsys.readouterr()
    return code, out, err


def test_each_role_and_side_reads_its_own_file_else_judge_txt_else_the_packaged_one(tmp_path: Path) -> None:
    packaged = Prompt.read((JUDGE,))
    assert packaged.source == "packaged:judge.txt"
    assert prompt_for(Role.ALICE, Side.LIAR, tmp_path) == packaged  # an empty directory
    (tmp_path / "judge.txt").write_text("J " + ASKED)
    (tmp_path / "alice-liar.txt").write_text("L " + ASKED)
    assert prompt_for(Role.ALICE, Side.LIAR, tmp_path).source == str(tmp_path / "alice-liar.txt")
    assert prompt_for(Role.ALICE, Side.HONEST, tmp_path).source == str(tmp_path / "judge.txt")
    assert prompt_for(Role.VERIFIER, None, tmp_path).text.startswith("J ")
    lied = prompt_for(Role.ALICE, Side.LIAR, tmp_path)
    assert lied.sha256 == hashlib.sha256(("L " + ASKED).encode()).hexdigest()
    assert lied.filled("Is it?", "\nGiven: x") == "L Question: Is it?\n\nGiven: x\nYes or no?"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("Is it so?", r"no \$question"),
        ("$question $passage", r"unknown placeholder \$passage"),
        ("$question $", "stray"),
    ],
)
def test_a_prompt_it_cannot_fill_is_refused(tmp_path: Path, text: str, why: str) -> None:
    (tmp_path / "bob-liar.txt").write_text(text)
    with pytest.raises(ConfigError, match=why):
        prompt_for(Role.BOB, Side.LIAR, tmp_path)


def test_the_run_asks_through_each_roles_prompt_and_its_record_names_them(
    tmp_path: Path, served: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "alice-liar.txt").write_text("You argue the false side.\n" + ASKED)
    (prompts / "judge.txt").write_text("You judge.\n" + ASKED)
    record = tmp_path / "r.jsonl"
    code, out, err = run(capsys, "--alice", "llm-liar:fake/judge", "--bob", "llm:fake/judge",
                         "--oracle", "llm:fake/judge", "--prompts", prompts, "--record", record, "--json")  # fmt: skip
    assert code == 0, err
    header = json.loads(record.read_text().splitlines()[0])["header"]
    read = {name: {"file": str(prompts / name), "sha256": hashlib.sha256((prompts / name).read_bytes()).hexdigest()}
            for name in ("alice-liar.txt", "judge.txt")}  # fmt: skip
    expected = {"alice": read["alice-liar.txt"], "bob": read["judge.txt"]}
    expected |= {"prover_oracle": read["judge.txt"], "verifier_oracle": read["judge.txt"]}
    assert json.loads(out)["prompts"] == header["prompts"] == expected
    (debate,) = read_records(record)
    by_role = {role: [e["prompt"] for e in debate["aside"] if e.get("llm") == role] for role in ("alice", "bob")}
    assert by_role["alice"] and all(p.startswith("You argue the false side.") for p in by_role["alice"])
    assert by_role["bob"] and all(p.startswith("You judge.") for p in by_role["bob"])
    assert served and all(p.startswith(("You argue the false side.", "You judge.")) for p in served)
    assert main(["replay", str(record)]) == 0


@pytest.mark.parametrize("where", ["missing", "file", "no-question"])
def test_a_prompts_mistake_is_one_line_and_exit_2(
    tmp_path: Path, served: list[str], capsys: pytest.CaptureFixture[str], where: str
) -> None:
    prompts = tmp_path / "prompts"
    if where == "file":
        prompts.write_text("not a directory")
    elif where == "no-question":
        prompts.mkdir()
        (prompts / "alice-liar.txt").write_text("Answer yes or no.")
    code, out, err = run(capsys, "--alice", "llm-liar:fake/judge", "--prompts", prompts)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert ("no $question" if where == "no-question" else "--prompts") in err
    assert served == []
