"""examples/quality_to_dataset.py (issue 22, point 4): QuALITY-style articles become yes/no rows over their
passage, one per answer option (or, balanced, the gold option and one wrong one drawn by the seed), and a bad
input line is one line on stderr naming it, exit 2, with nothing written."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "examples" / "quality_to_dataset.py"
spec = importlib.util.spec_from_file_location("quality_to_dataset", SCRIPT)
assert spec is not None and spec.loader is not None
quality = importlib.util.module_from_spec(spec)
spec.loader.exec_module(quality)

ARTICLES = [
    {
        "article_id": "10001",
        "set_unique_id": "10001_A",
        "title": "The Lighthouse",
        "article": "Mara rowed to the lighthouse at dawn. The keeper, an old man named Bram, gave her tea. " * 3,
        "questions": [
            {"question": "Who rowed to the lighthouse?", "options": ["Bram", "Mara", "Tomas", "Pike"],
             "gold_label": 2, "question_unique_id": "10001_A_1"},
            {"question": "What did the keeper give her?", "options": ["Bread", "Soup", "A map", "Tea"],
             "gold_label": 4, "question_unique_id": "10001_A_2"},
        ],
    },
    {
        "article_id": "10002",
        "set_unique_id": "10002_B",
        "title": "Council",
        "article": "The council met on Monday. Nine members voted for the new bridge and five against.",
        "questions": [
            {"question": "How many voted for the bridge?", "options": ["Nine", "Five", "Fourteen", "None"],
             "gold_label": 1, "question_unique_id": "10002_B_1"},
        ],
    },
]  # fmt: skip
QUESTIONS = {q["question_unique_id"]: (a, q) for a in ARTICLES for q in a["questions"]}


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "quality.jsonl"
    path.write_text("".join(json.dumps(article) + "\n" for article in ARTICLES), encoding="utf-8")
    return path


def converted(source: Path, *options: str) -> tuple[list[dict], str]:
    out = source.with_name("out.jsonl")
    assert quality.main([str(source), str(out), *options]) == 0
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()], out.read_text()


def check_row(row: dict) -> tuple[str, int]:
    """The row's question id and option number, after checking it against the article it came from."""
    qid, _, k = row["id"].rpartition("-")
    article, question = QUESTIONS[qid]
    option = question["options"][int(k) - 1]
    assert row["question"] == f'Does the passage support this answer to "{question["question"]}": "{option}"?'
    assert row["passage"] == article["article"]
    assert row["truth"] == ("yes" if int(k) == question["gold_label"] else "no")
    assert set(row) == {"id", "question", "passage", "truth"}
    return qid, int(k)


def test_every_option_is_a_row_and_only_the_gold_one_is_true(source: Path, capsys: pytest.CaptureFixture) -> None:
    rows, _ = converted(source)
    assert sorted(check_row(row) for row in rows) == sorted((qid, k) for qid in QUESTIONS for k in range(1, 5))
    assert len({row["id"] for row in rows}) == len(rows) == 12
    assert [row["truth"] for row in rows].count("yes") == 3
    assert "12 rows (3 yes, 9 no) from 3 questions on 2 articles; 0 articles" in capsys.readouterr().out


def test_balanced_keeps_the_gold_option_and_one_wrong_one_drawn_by_the_seed(source: Path) -> None:
    drawn = set()
    for seed in range(12):
        rows, text = converted(source, "--balanced", "--seed", str(seed))
        assert converted(source, "--balanced", "--seed", str(seed))[1] == text  # the same seed, the same file
        kept = [check_row(row) for row in rows]
        assert sorted(qid for qid, _ in kept) == sorted(2 * list(QUESTIONS))
        for qid in QUESTIONS:
            assert sorted(row["truth"] for row in rows if row["id"].startswith(qid + "-")) == ["no", "yes"]
        drawn.add(tuple(kept))
    assert len(drawn) > 1  # the seed chooses the wrong option


def test_long_articles_are_skipped_and_the_limit_counts_questions(source: Path, capsys: pytest.CaptureFixture) -> None:
    short = len(ARTICLES[1]["article"])
    assert short < len(ARTICLES[0]["article"])
    rows, _ = converted(source, "--max-passage", str(short))
    assert {check_row(row)[0] for row in rows} == {"10002_B_1"}
    assert "; 1 articles longer than" in capsys.readouterr().out
    rows, _ = converted(source, "--limit", "1")
    assert {check_row(row)[0] for row in rows} == {"10001_A_1"} and len(rows) == 4
    rows, _ = converted(source, "--limit", "3", "--balanced")
    assert len(rows) == 6


BAD = {
    "not JSON": ("{'article': 'A text.'}", "not valid JSON"),
    "no article": (json.dumps({"questions": []}), '"article"'),
    "no gold label (the test split)": (
        json.dumps({"article": "A text.", "questions": [{"question": "Q?", "options": ["a", "b", "c", "d"],
                                                          "question_unique_id": "x"}]}),
        "gold_label",
    ),
    "gold label out of range": (
        json.dumps({"article": "A text.", "questions": [{"question": "Q?", "options": ["a", "b", "c", "d"],
                                                          "gold_label": 5, "question_unique_id": "x"}]}),
        "gold_label",
    ),
    "a repeated question id": (json.dumps(ARTICLES[0]), "10001_A_1"),
}  # fmt: skip


@pytest.mark.parametrize("bad", BAD, ids=list(BAD))
def test_a_bad_line_is_one_line_naming_it_exit_2_and_nothing_written(source: Path, bad: str) -> None:
    line, reason = BAD[bad]
    source.write_text(source.read_text() + line + "\n", encoding="utf-8")
    out = source.with_name("out.jsonl")
    done = subprocess.run([sys.executable, str(SCRIPT), str(source), str(out)], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 2
    assert re.fullmatch(rf"{re.escape(str(source))}:3: .+\n", done.stderr) and reason in done.stderr
    assert not out.exists()
