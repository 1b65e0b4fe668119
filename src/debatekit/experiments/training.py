"""Training data from recorded debates (issue 22, point 7): every move a debater made, as a row a
trainer reads (TRL's prompt-completion datasets, with a reward for RL and a label for KTO).

Doubly-efficient debate's training story (Section 1 of that paper) is self-play in the zero-sum
game the protocol defines (prover-estimator debate, Definition 4.2): each debater is trained on the
outcome of its own debates. A row is one committed move of Alice or Bob:

* ``prompt``: what the mover had seen, in words: the protocol, the problem, its role, and the
  debate's committed messages and nature's draws before the move (the last ``context`` of them;
  never the truth, the verdict or the other side's oracle queries). The input x is not written
  out (a record keeps the instance's fingerprint): ``make_instance`` rebuilds it from the row's
  problem and the record's size, truth and seed;
* ``completion``: the move as committed (its JSON);
* ``reward``: the mover's outcome in the protocol's game. Tree protocols and stochastic debate
  decide a verdict: the winner 1, the loser 0 (the game of Definition 5.2's verifier, constant-sum).
  The recursive protocols pay A her payoff and B its negation (zero-sum), with each round's
  reward in ``round_rewards``;
* ``side``: ``true`` when the mover argues for the truth (Alice argues the protocol's
  ``alice_argues``, or in the recursive protocols the claim she made; Bob the other side);
* ``label``: whether the mover won (the reward above 0 in the zero-sum games, 1 in the others).

An LLM player's model calls (the record's ``aside``: each prompt and completion) are rows too
(``source`` ``model``), with the reward of the debate their player was in. A forfeited move (no
message was committed) and an undecided debate give no row. Records are untrusted files: one that
is not a record is a :class:`~debatekit.files.FileMistake` naming its line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from debatekit.engine.events import NO_STEP, Drawn, EventError, Moved, events_from_json
from debatekit.engine.record import Mismatch, chain_lines
from debatekit.files import FileMistake
from debatekit.ledger import Role
from debatekit.mistakes import UserError

CONTEXT = 40
"""Committed events before a move shown in its prompt, by default (the newest; a long stochastic
debate's prompts would otherwise grow with T)."""
ROLES = {Role.ALICE.value: Role.ALICE, Role.BOB.value: Role.BOB}


@dataclass(frozen=True)
class Row:
    """One move (or one model call) of a debater, with its outcome."""

    prompt: str
    completion: str
    reward: float
    label: bool
    side: str
    role: str
    source: str
    """``move``: a committed message; ``model``: a model call of an LLM player (its aside)."""
    protocol: str
    problem: str
    debate: int
    move: int
    """The move's place among the debate's committed moves (a model call: the next move's)."""
    round_rewards: list[float] | None


def export(paths: Iterable[Path], out: Path, context: int = CONTEXT) -> tuple[int, int]:
    """Write the rows of every debate recorded in ``paths`` to ``out`` (``.jsonl``, or ``.parquet``
    with pyarrow): (rows, debates)."""
    if out.suffix not in (".jsonl", ".parquet"):
        raise UserError(f"--out {out}: write .jsonl or .parquet")
    found, debates = [], 0
    try:
        for path in paths:
            for record, number in _records(path):
                debates += 1
                found += [asdict(row) for row in rows(record, context, f"{path}:{number}")]
    except FileMistake as err:
        raise UserError(str(err)) from None
    try:
        if out.suffix == ".jsonl":
            out.write_text("".join(json.dumps(row) + "\n" for row in found), encoding="utf-8")
        else:
            _parquet(found, out)
    except OSError as err:
        raise UserError(f"cannot write {out}: {err.strerror or err}") from None
    return len(found), debates


def _parquet(found: list[dict[str, Any]], out: Path) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise UserError("--out .parquet needs pyarrow: pip install 'debatekit[sweep]', or write .jsonl") from None
    pq.write_table(pa.Table.from_pylist(found), out)


def _records(path: Path) -> Iterator[tuple[dict[str, Any], int]]:
    try:
        for number, value, _, _ in chain_lines(path):
            if number > 1:
                yield value, number
    except Mismatch as err:
        raise FileMistake(path, None, str(err)) from None


def rows(record: dict[str, Any], context: int = CONTEXT, where: str = "record") -> list[Row]:
    """The rows of one recorded debate (none when it was undecided)."""
    from debatekit.protocols.registry import PROTOCOLS

    try:
        protocol, problem, truth = str(record["protocol"]), str(record["problem"]), record["truth"]
        events = events_from_json(record["events"] or [])
        debate = int(record["debate"])
    except (KeyError, TypeError, ValueError, EventError) as err:
        raise FileMistake(where, None, f"not a debate's record ({type(err).__name__}: {err})") from None
    spec = PROTOCOLS.get(protocol)
    if spec is None or truth not in ("yes", "no"):
        raise FileMistake(where, None, f"a record of protocol {protocol!r}, truth {truth!r}: not one debatekit plays")
    outcome = _outcome(record, spec.alice_argues, truth == "yes")
    if outcome is None:
        return []
    reward, won, side, rounds = outcome
    found: list[Row] = []
    seen: list[str] = []
    moves = 0
    for event in events:
        if isinstance(event, Moved) and event.role in (Role.ALICE, Role.BOB) and event.forfeit is None:
            role = event.role.value
            prompt = _prompt(protocol, problem, record.get("size"), role, seen, context, event)
            found.append(Row(prompt, json.dumps(event.message), reward[role], won[role], side[role], role, "move",
                             protocol, problem, debate, moves, rounds[role]))  # fmt: skip
            moves += 1
        if isinstance(event, Moved | Drawn):
            seen.append(_line(event))
    for entry in record.get("aside") or ():
        role = entry.get("llm") if isinstance(entry, dict) else None
        if role in ROLES and isinstance(entry.get("prompt"), str) and isinstance(entry.get("completion"), str):
            found.append(Row(entry["prompt"], entry["completion"], reward[role], won[role], side[role], role, "model",
                             protocol, problem, debate, moves, rounds[role]))  # fmt: skip
    return found


def _outcome(
    record: dict[str, Any], alice_argues: int, truth: bool
) -> tuple[dict[str, float], dict[str, bool], dict[str, str], dict[str, list[float] | None]] | None:
    """Each debater's reward, whether it won, its side and its rounds' rewards; None when undecided."""
    payoff, verdict = record.get("payoff"), record.get("verdict")
    if isinstance(payoff, int | float) and not isinstance(payoff, bool):  # the recursive protocols: zero-sum
        claim = record.get("claim")
        rounds = record.get("rewards")
        alice_rounds = [float(r) for r in rounds] if isinstance(rounds, list) else None
        honest = claim in (0, 1) and bool(claim) == truth
        return (
            {"alice": float(payoff), "bob": -float(payoff)},
            {"alice": payoff > 0, "bob": payoff < 0},
            {"alice": str(honest).lower(), "bob": str(not honest).lower()},
            {"alice": alice_rounds, "bob": None if alice_rounds is None else [-r for r in alice_rounds]},
        )
    if verdict not in (0, 1):
        return None
    alice_won = verdict == alice_argues
    honest = bool(alice_argues) == truth
    return (
        {"alice": float(alice_won), "bob": float(not alice_won)},
        {"alice": alice_won, "bob": not alice_won},
        {"alice": str(honest).lower(), "bob": str(not honest).lower()},
        {"alice": None, "bob": None},
    )


def _step(event: Moved | Drawn) -> str:
    return "" if event.t is NO_STEP or event.t is None else f" at step {event.t}"


def _line(event: Moved | Drawn) -> str:
    step = _step(event)
    if isinstance(event, Moved):
        return f"{event.role.value} {event.what or 'message'}{step}: {json.dumps(event.message)}"
    return f"nature drew {event.what}{step}: {json.dumps(event.outcome)}"


def _prompt(protocol: str, problem: str, size: Any, role: str, seen: list[str], context: int, event: Moved) -> str:
    earlier = seen[-context:] if context else []
    left = len(seen) - len(earlier)
    lines = [f"Debate: {protocol} on {problem} (size {size}). You are {role.capitalize()}."]
    lines.append("The debate so far:" if seen else "The debate so far: nothing.")
    if left:
        lines.append(f"({left} earlier events)")
    lines += [f"  {line}" for line in earlier]
    lines.append(f"Your move: {event.what or 'message'}{_step(event)}.")
    return "\n".join(lines)
