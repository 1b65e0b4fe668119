"""Training data from debates (issue 22, point 7): record cross-examination debates, export every
move as a (prompt, completion, reward, side) row, and fit the smallest policy there is to it.

Alice plays honest in half the runs and lies at one random step in the other half, against honest
Bob, on majority of 15 bits (truth yes). The exported rows give each of her transcripts the
reward of its debate (won 1, lost 0). The fitted policy is a table: for each transcript position,
the bit whose rows won more often. Honest Bob catches every transcript that breaks M's rules
(Theorem 5.3), so the policy fitted on rewards alone writes honest Alice's transcript. A trainer
such as TRL reads the same file (``prompt``, ``completion``, ``reward``; ``label`` for KTO).

    python examples/train_from_debates.py
"""

import json
import tempfile
from pathlib import Path

import numpy as np

import debatekit
from debatekit.experiments.training import export

with tempfile.TemporaryDirectory() as folder:
    records = [Path(folder) / f"{alice}.jsonl" for alice in ("honest", "lie-step")]
    for path in records:
        debatekit.run("cross-exam", problem="majority", size=15, truth=True, alice=path.stem, bob="honest",
                      trials=100, seed=1, record=path)  # fmt: skip
    dataset = Path(folder) / "debates.jsonl"
    count, debates = export(records, dataset)
    rows = [json.loads(line) for line in dataset.read_text().splitlines()]

alice = [row for row in rows if row["role"] == "alice"]
bits = np.array([[int(b) for b in json.loads(row["completion"])["bits"]] for row in alice])
reward = np.array([row["reward"] for row in alice])


def won_with(bit: int) -> np.ndarray:
    """For each position, the mean reward of Alice's rows with ``bit`` there (0 where none has it)."""
    return np.array([reward[column == bit].mean() if (column == bit).any() else 0.0 for column in bits.T])


policy = (won_with(1) > won_with(0)).astype(int)
honest = bits[reward == 1][0]
print(f"{count} rows from {debates} debates; Alice's rows: {len(alice)}, won {int(reward.sum())}")
print(f"fitted policy's transcript: {''.join(map(str, policy))}")
print(f"honest Alice's transcript:  {''.join(map(str, honest))}")
print(f"the policy fitted on rewards plays honest Alice: {'yes' if (policy == honest).all() else 'no'}")
