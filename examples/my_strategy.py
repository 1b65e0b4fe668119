"""Your own Bob: a class that takes its `Seat` and answers cross-examination's one question,
`challenge(message)`, a step to check or None to accept (the typed interface
`debatekit.protocols.cross_exam.Bob`), played through
the Python API and through the command line (`--bob my_strategy:SpotCheckBob`).

`SpotCheckBob` recomputes the output step and a few random steps of Alice's transcript and
challenges the first one she got wrong: cheaper than honest Bob, who checks every step, so a
liar who covers her tracks (`lie-step`) escapes him sometimes.

    python examples/my_strategy.py
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import debatekit
from debatekit.players.base import Seat

CHECKS = 4
"""Steps recomputed besides the output step."""


class SpotCheckBob:
    """Recompute the output step and CHECKS random steps; challenge the first wrong one, else accept."""

    def __init__(self, seat: Seat) -> None:
        self.seat = seat

    def challenge(self, message: np.ndarray) -> int | None:
        instance, rng = self.seat.instance, self.seat.rng
        machine = instance.machine
        values = np.concatenate([instance.x, message])  # x, then Alice's witness and transcript
        steps = rng.choice(machine.length - 1, size=min(CHECKS, machine.length - 1), replace=False)
        for t in (machine.length - 1, *sorted(int(t) for t in steps)):
            bits = tuple(int(values[a]) for a in machine.relevant(t))
            if machine.step(t, bits, self.seat.ask, rng) != values[machine.offset + t]:
                return t
        return None  # accept


if __name__ == "__main__":
    game = {"problem": "parity", "size": 32, "truth": False, "alice": "lie-step", "trials": 100, "seed": 0}
    # By the name its worker process imports it by (a class defined in __main__ has none there;
    # trust=True would play SpotCheckBob itself inline, for a debugger)
    mine = debatekit.run("cross-exam", **game, bob="my_strategy:SpotCheckBob")
    honest = debatekit.run("cross-exam", **game, bob="honest")
    print(f"api: bob {mine.bob}: honest win rate {mine.honest_win_rate:.3f} against alice lie-step "
          f"(honest bob: {honest.honest_win_rate:.3f}; T = {mine.T})")  # fmt: skip
    fair = debatekit.run("cross-exam", **(game | {"truth": True, "alice": "honest"}), bob="my_strategy:SpotCheckBob")
    print(f"api: bob {fair.bob}: accept rate {fair.accept_rate:.3f} against honest alice (a true claim)")

    here = Path(__file__).resolve().parent
    command = [str(Path(sys.executable).parent / "debatekit"), "run", "cross-exam", "--problem", "parity", "--size",
               "32", "--truth", "no", "--alice", "lie-step", "--bob", "my_strategy:SpotCheckBob", "--trials", "100",
               "--seed", "0", "--json", "--no-log"]  # fmt: skip
    env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(here), os.environ.get("PYTHONPATH")]))}
    printed = json.loads(subprocess.run(command, capture_output=True, text=True, check=True, env=env).stdout)
    print(f"cli: bob {printed['bob']}: honest win rate {printed['honest_win_rate']:.3f} against alice lie-step")
