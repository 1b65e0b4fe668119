"""QuALITY's reading-comprehension questions as a debatekit dataset (issue 22, point 4): each answer option of
each question becomes a yes/no row over the article, "yes" for the gold option and "no" for the others.

QuALITY (Pang et al., 2022) is at https://github.com/nyu-mll/quality: download data/v1.0.1/QuALITY.v1.0.1.zip
there, unzip it, and convert a split with gold labels (train or dev; the test split has none), preferably an
HTML-stripped one:

    python examples/quality_to_dataset.py QuALITY.v1.0.1.htmlstripped.dev quality.jsonl --balanced --seed 0

Each input line is one article with its "article", "title" and "questions"; a question has "question",
"options", "gold_label" (1-based) and "question_unique_id". Each output row is

    {"id": "<question id>-<k>", "question": "Does the passage support this answer to \"<question>\": \"<option>\"?",
     "passage": <article>, "truth": "yes" if option k is the gold one else "no"}

``--balanced`` keeps, per question, the gold option and one wrong option drawn with ``--seed``, so half the rows
are yes; ``--max-passage`` skips longer articles (the dataset loader caps a text at 20,000 characters);
``--limit`` stops after that many questions. A line that is not such an article is one line on stderr naming
the file and line, exit 2, and nothing is written. Then, for example:

    debatekit experiment judge-accuracy --debaters llm:local/smollm2 --judge llm:local/smollm2 --dataset quality.jsonl
    debatekit run cross-exam --problem quality.jsonl --verifier-oracle llm:local/smollm2
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

from debatekit.files import FileMistake, read_jsonl

MAX_PASSAGE = 20_000


def question_rows(question: dict[str, Any], article: str, rng: random.Random | None) -> list[dict[str, str]]:
    """The rows of one question: every option, or with ``rng`` the gold one and one wrong one drawn with it."""
    gold, options = question["gold_label"], question["options"]
    kept = list(range(1, len(options) + 1))
    if rng is not None:
        kept = sorted([gold, rng.choice([k for k in kept if k != gold])])
    return [
        {
            "id": f"{question['question_unique_id']}-{k}",
            "question": f'Does the passage support this answer to "{question["question"]}": "{options[k - 1]}"?',
            "passage": article,
            "truth": "yes" if k == gold else "no",
        }
        for k in kept
    ]


def checked(raw: dict[str, Any], file: Path, line: int) -> tuple[str, list[dict[str, Any]]]:
    """A QuALITY line's article and questions, or a :class:`FileMistake` naming the line."""
    article, questions = raw.get("article"), raw.get("questions")
    if not isinstance(article, str) or not article.strip():
        raise FileMistake(file, line, 'an article needs its text as "article"')
    if not isinstance(questions, list):
        raise FileMistake(file, line, '"questions" is a list of questions')
    for n, question in enumerate(questions, 1):
        where = f"question {n}"
        if not isinstance(question, dict):
            raise FileMistake(file, line, f"{where} is not an object")
        if not isinstance(question.get("question"), str) or not isinstance(question.get("question_unique_id"), str):
            raise FileMistake(file, line, f'{where} needs "question" and "question_unique_id" as text')
        options = question.get("options")
        if not isinstance(options, list) or len(options) < 2 or not all(isinstance(o, str) for o in options):
            raise FileMistake(file, line, f'{where}: "options" is a list of at least two texts')
        gold = question.get("gold_label")
        if type(gold) is not int or not 1 <= gold <= len(options):
            raise FileMistake(file, line, f'{where}: "gold_label" is an option number, 1 to {len(options)} '
                                          f"(QuALITY's test split has none), not {gold!r}")  # fmt: skip
    return article, questions


def convert(source: Path, balanced: bool, seed: int, max_passage: int, limit: int | None) -> tuple[list[dict], str]:
    """The rows of the QuALITY file ``source`` and a line saying what was kept."""
    rng = random.Random(seed) if balanced else None
    rows: list[dict[str, str]] = []
    ids: set[str] = set()
    questions = articles = skipped = 0
    for line, raw in read_jsonl(source):
        article, asked = checked(raw, source, line)
        if len(article) > max_passage:
            skipped += 1
            continue
        articles += 1
        for question in asked[: None if limit is None else limit - questions]:
            if question["question_unique_id"] in ids:
                raise FileMistake(source, line, f"the question id {question['question_unique_id']!r} is repeated")
            ids.add(question["question_unique_id"])
            rows += question_rows(question, article, rng)
            questions += 1
        if questions == limit:
            break
    yes = sum(row["truth"] == "yes" for row in rows)
    said = f"{len(rows)} rows ({yes} yes, {len(rows) - yes} no) from {questions} questions on {articles} articles"
    return rows, said + f"; {skipped} articles longer than {max_passage} characters skipped"


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"a positive whole number, not {text}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, metavar="IN.jsonl", help="a QuALITY file (one article a line)")
    parser.add_argument("out", type=Path, metavar="OUT.jsonl", help="the dataset to write")
    parser.add_argument("--balanced", action="store_true", help="per question, the gold option and one wrong one")
    parser.add_argument("--seed", type=int, default=0, help="draws the wrong option in --balanced (default 0)")
    parser.add_argument("--max-passage", type=positive, default=MAX_PASSAGE, metavar="CHARS",
                        help=f"skip longer articles (default {MAX_PASSAGE})")  # fmt: skip
    parser.add_argument("--limit", type=positive, metavar="N", help="convert at most N questions")
    args = parser.parse_args(argv)
    try:
        rows, said = convert(args.source, args.balanced, args.seed, args.max_passage, args.limit)
        args.out.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    except FileMistake as err:
        print(err, file=sys.stderr)
        return 2
    except OSError as err:
        print(f"{args.out}: cannot write it: {err.strerror or err}", file=sys.stderr)
        return 2
    print(f"{args.out}: {said}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
