"""The oracle "people": the verifier's queries answered by judges in a browser.

Doubly-efficient debate asks the human-judgement oracle about one local step (cross-examination
and bisection: one query; stochastic debate: R answers to one question). Each query becomes a
task in the judges' store, keyed by the query it answers (:func:`debatekit.oracle.asking`), and
the debate awaits the answers. As the key is the same when a stopped debate is resumed, the task
is found again with the answers already given: no task is asked twice, no answer is lost. A run
started afresh (``fresh``: ``debatekit run`` without ``--resume`` or ``--reuse-answers``) asks its
questions again under the next rerun's key (``RUN.2``, ``RUN.3``, ...): earlier people's answers are
reused only when asked for, and then counted (``reused``).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Coroutine
from typing import Any

import numpy as np

from debatekit.judge.store import Store, Task, TaskKey, answer_json
from debatekit.mistakes import UserError
from debatekit.oracle import Asking, Oracle, Pending, Query, Question, asking, question_json


def shown(query: Query) -> tuple[str, tuple[str, ...]]:
    """What a judge sees of ``query``: a :class:`~debatekit.oracle.Question`'s text and its context
    lines (the relevant coordinates I(t)); any other query as its JSON, with no context."""
    if isinstance(query, Question):
        return query.text, tuple(query.context)
    return json.dumps(question_json(query)), ()


class People(Oracle):
    """Judges answering through the store at ``db``: each query waits for its R answers from a
    panel of distinct judges, at most ``answers_per_judge`` each, polling every ``poll`` seconds.
    Only the number of yes comes back, never a probability. ``fresh``: a run whose questions were
    asked before asks them again under its next rerun's key; else the latest key's tasks are found
    again with their answers (``reused`` counts the answers found from before this oracle began)."""

    waits = True

    def __init__(self, db: str | os.PathLike[str], answers_per_judge: int = 1, poll: float = 1.0, fresh: bool = False):
        if answers_per_judge < 1:
            raise ValueError(f"answers_per_judge must be at least 1, got {answers_per_judge}")
        if poll <= 0:
            raise ValueError(f"poll must be positive seconds, got {poll}")
        self.store = Store(db)
        self.answers_per_judge, self.poll, self.fresh = answers_per_judge, poll, fresh
        self.reused = 0
        self._keys: dict[str, str] = {}
        self._found: set[int] = set()
        self._lock = threading.Lock()

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
        task = self.store.find(self.task_key(where))
        return [] if task is None else [answer_json(answer) for answer in self.store.answers(task.id)]

    def task_key(self, where: Asking) -> TaskKey:
        """The task key of the query ``where``: its run's key in this store (the run's own, or a rerun's)."""
        with self._lock:
            if where.run not in self._keys:
                self._keys[where.run] = self._asked_as(where.run)
            run = self._keys[where.run]
        return TaskKey(run, where.debate, where.role.value, where.number)

    def _asked_as(self, run: str) -> str:
        """The key ``run``'s questions are asked under now: a fresh run's next one, else the latest
        (whose answers per judge must be this run's: a user's mistake otherwise, before anything is asked)."""
        earlier = self.store.runs_asked(run)
        if not earlier:
            return run
        latest = earlier[-1]
        if self.fresh:
            return f"{run}.{2 if latest == run else int(latest.rsplit('.', 1)[1]) + 1}"
        before = self.store.per_judge_of(latest) - {self.answers_per_judge}
        if before:
            raise UserError(
                f"--answers-per-judge {self.answers_per_judge}: this run's questions were asked with "
                f"--answers-per-judge {min(before)}; give that, or rerun without --resume and --reuse-answers "
                "to ask fresh questions"
            )
        return latest

    def _task(self, query: Query, r: int) -> Task:
        """The task for the query being answered now, created or found again (read at call time)."""
        where = asking()
        if where is None:
            raise ValueError("people answer only a run's debates: asking() is None outside one (see in_debate)")
        text, context = shown(query)
        key = self.task_key(where)
        try:
            task = self.store.task_for(key, text, context, r, self.answers_per_judge)
        except ValueError as err:
            raise UserError(f"{err}; rerun without --resume and --reuse-answers to ask fresh questions") from None
        with self._lock:
            if task.id not in self._found:
                self._found.add(task.id)
                self.reused += len(self.store.answers(task.id))  # given before this oracle met the task
        return task

    async def _yes(self, task: Task) -> int:
        """The number of yes once R answers are in; a task closed short of them is :class:`Pending`
        (its state read before its answers, so a task closed by its last answer is never taken for one)."""
        while True:
            current = self.store.task(task.id)
            answers = self.store.answers(task.id)
            if len(answers) >= task.needed:
                return sum(answer.answer for answer in answers[: task.needed])
            if current is not None and current.closed is not None:
                raise Pending(
                    "people",
                    f"question {task.id} was closed by the experimenter (`judge close`) with {len(answers)} of "
                    f"{task.needed} answers; rerun without --resume to ask it afresh",
                )
            await asyncio.sleep(self.poll)
