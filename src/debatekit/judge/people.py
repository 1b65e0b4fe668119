"""The oracle "people": the verifier's queries answered by judges in a browser.

Doubly-efficient debate asks the human-judgement oracle about one local step (cross-examination
and bisection: one query; stochastic debate: R answers to one question). Each query becomes a
task in the judges' store, keyed by the query it answers (:func:`debatekit.oracle.asking`), and
the debate awaits the answers. As the key is the same when a stopped debate is resumed, the task
is found again with the answers already given: no task is asked twice, no answer is lost.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Coroutine
from typing import Any

import numpy as np

from debatekit.judge.store import Store, Task, TaskKey, answer_json
from debatekit.oracle import Asking, Oracle, Query, Question, asking, question_json


def shown(query: Query) -> tuple[str, tuple[str, ...]]:
    """What a judge sees of ``query``: a :class:`~debatekit.oracle.Question`'s text and its context
    lines (the relevant coordinates I(t)); any other query as its JSON, with no context."""
    if isinstance(query, Question):
        return query.text, tuple(query.context)
    return json.dumps(question_json(query)), ()


def task_key(where: Asking) -> TaskKey:
    return TaskKey(where.run, where.debate, where.role.value, where.number)


class People(Oracle):
    """Judges answering through the store at ``db``: each query waits for its R answers from a
    panel of distinct judges, at most ``answers_per_judge`` each, polling every ``poll`` seconds.
    Only the number of yes comes back, never a probability."""

    waits = True

    def __init__(self, db: str | os.PathLike[str], answers_per_judge: int = 1, poll: float = 1.0):
        if answers_per_judge < 1:
            raise ValueError(f"answers_per_judge must be at least 1, got {answers_per_judge}")
        if poll <= 0:
            raise ValueError(f"poll must be positive seconds, got {poll}")
        self.store = Store(db)
        self.answers_per_judge, self.poll = answers_per_judge, poll

    def probability(self, query: Query) -> None:
        return None

    @property
    def deterministic(self) -> None:
        return None

    def sample(self, query: Query, rng: np.random.Generator) -> Coroutine[Any, Any, int]:
        """One person's answer (0 or 1), awaited."""
        return self._yes(self._task(query, 1))

    def sample_count(self, query: Query, r: int, rng: np.random.Generator) -> Coroutine[Any, Any, int]:
        """The number of yes among ``r`` answers from distinct judges, awaited."""
        return self._yes(self._task(query, r))

    def judgements(self, where: Asking) -> list[dict[str, Any]]:
        """The judges' answers to the query ``where``, with when each was shown and submitted
        (for the debate's record; judges by id and name, never their tokens)."""
        task = self.store.find(task_key(where))
        return [] if task is None else [answer_json(answer) for answer in self.store.answers(task.id)]

    def _task(self, query: Query, r: int) -> Task:
        """The task for the query being answered now, created or found again (read at call time)."""
        where = asking()
        if where is None:
            raise ValueError("people answer only a run's debates: asking() is None outside one (see in_debate)")
        text, context = shown(query)
        return self.store.task_for(task_key(where), text, context, r, self.answers_per_judge)

    async def _yes(self, task: Task) -> int:
        while True:
            answers = self.store.answers(task.id)
            if len(answers) >= task.needed:
                return sum(answer.answer for answer in answers[: task.needed])
            await asyncio.sleep(self.poll)
