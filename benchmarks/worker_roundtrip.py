"""The cost of the process boundary (issue 20): a user's cross-examination player played in its worker
(:mod:`debatekit.engine.isolation`) against the same player inline.

The player is honest Bob named as a user's strategy (``debatekit.protocols.cross_exam:HonestBob``,
loaded as ``module:attr``, so inline it is an untrusted player as any user's is), on parity of
``--n`` bits against honest Alice's committed transcript. Measured side by side, each the median of
``--repeat`` runs with ``time.perf_counter``:

(0) the floor: a bare round trip of one byte between this process and a Python echo process through
    the memory they share (:class:`~debatekit.engine.shared.Link`, the transport a worker's frames
    take: every move's share, whatever the format);
(a) one move: ``bob.challenge(message)`` on the inline player and on its :class:`Remote` (``--moves``
    calls each): microseconds per move, the worker's overhead (target < 200 µs) and the ratio;
(b) one debate's seating: the strategy's factory inline and the pool's reset of a warm worker;
(c) whole debates through ``montecarlo.run`` (``--debates`` each), the engine's thread per move
    included on both sides: milliseconds per debate and the ratio.

Run: ``python benchmarks/worker_roundtrip.py [--n N] [--moves M] [--debates D] [--repeat R]``.
A measurement script, not a test: it checks only that both ways give the same challenges and verdicts.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np

from debatekit.analysis.montecarlo import make_instance, run
from debatekit.engine.isolation import SPIN, Limits, Pool
from debatekit.engine.shared import Link, memory
from debatekit.ledger import Ledger, Role
from debatekit.oracle import Asker
from debatekit.players.base import Seat, resolve
from debatekit.problems import PROBLEMS
from debatekit.protocols.cross_exam import HonestAlice
from debatekit.protocols.registry import PROTOCOLS
from timing import median_time, print_table

USER_BOB = "debatekit.protocols.cross_exam:HonestBob"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--moves", type=int, default=2000)
    parser.add_argument("--debates", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    spec = PROTOCOLS["cross-exam"]
    instance = make_instance(PROBLEMS["parity"], args.n, True, 0)
    rng = np.random.default_rng(0)
    seat = Seat(instance, Role.BOB, rng, Asker(instance.oracle, Role.BOB, Ledger(), rng))
    message = HonestAlice(Seat(instance, Role.ALICE, rng, seat.ask)).transcript()
    message[len(message) // 2] ^= 1  # one lie: Bob has a step to find
    inline = resolve(USER_BOB, Role.BOB, {})
    alice = spec.strategies[Role.ALICE]["lie-output"]

    with Pool(USER_BOB, Role.BOB, Limits(timeout=60)) as pool:
        local, remote = inline.factory(seat), pool.seat(seat)
        assert local.challenge(message) == remote.challenge(message)

        def moves(player: object) -> None:
            for _ in range(args.moves):
                player.challenge(message)  # type: ignore[attr-defined]

        t_inline, _ = median_time(lambda: moves(local), args.repeat)
        t_worker, _ = median_time(lambda: moves(remote), args.repeat)
        remote = None  # its worker back to the pool, for the seating measure

        def seatings(factory: object) -> None:
            for _ in range(args.moves // 10):
                factory(seat)  # type: ignore[operator]

        s_inline, _ = median_time(lambda: seatings(inline.factory), args.repeat)
        s_worker, _ = median_time(lambda: seatings(pool.strategy.factory), args.repeat)

        def debates(bob: object) -> object:
            return run(spec, instance, alice, bob, args.debates, 0, timeout=60)  # type: ignore[arg-type]

        d_inline, r_inline = median_time(lambda: debates(inline), args.repeat)
        d_worker, r_worker = median_time(lambda: debates(pool.strategy), args.repeat)
    assert (r_inline.accept_rate, r_inline.forfeits) == (r_worker.accept_rate, r_worker.forfeits)

    floor = bare_round_trip(args.moves, args.repeat) * 1e6
    per_move = (t_inline / args.moves * 1e6, t_worker / args.moves * 1e6)
    per_seat = (s_inline / (args.moves // 10) * 1e6, s_worker / (args.moves // 10) * 1e6)
    per_debate = (d_inline / args.debates * 1e3, d_worker / args.debates * 1e3)
    print(f"cross-examination, parity n = {args.n} (T = {instance.machine.length}), median of {args.repeat}")  # type: ignore[union-attr]
    print_table(
        [
            ("measure", "inline", "worker", "overhead", "ratio", "target"),
            ("(0) bare round trip, µs", "", f"{floor:.1f}", "", "", "(the floor)"),
            ("(a) one move, µs", *_row(*per_move), "overhead < 200 µs"),
            ("(b) seating, µs", *_row(*per_seat), ""),
            ("(c) one debate, ms", *_row(*per_debate), ""),
        ]
    )


ECHO = """
import sys, time
from debatekit.engine.shared import Link
link = Link(*map(int, sys.argv[1:4]), engine=False)
while True:
    kind, data = link.receive(1, None, time.perf_counter() + 0.001)
    link.send([data], kind, None, 0.0)
"""


def bare_round_trip(calls: int, repeat: int) -> float:
    """Seconds per one-byte round trip through shared memory to an echo process, each side polling
    as the engine and a worker do (median of ``repeat`` runs of ``calls``)."""
    fd, (echo_in, into), (back, echo_out) = memory(), os.pipe(), os.pipe()
    numbers = (fd, echo_in, echo_out)
    echo = subprocess.Popen([sys.executable, "-c", ECHO, *map(str, numbers)], pass_fds=numbers)
    link = Link(fd, back, into, engine=True)

    def trips() -> None:
        for _ in range(calls):
            link.send([b"x"], 0, None, 0.0)
            link.receive(1, None, time.perf_counter() + SPIN)

    try:
        return median_time(trips, repeat)[0] / calls
    finally:
        echo.kill()
        echo.wait()
        for end in (fd, echo_in, into, back, echo_out):
            os.close(end)


def _row(inline: float, worker: float) -> tuple[str, str, str, str]:
    return f"{inline:.1f}", f"{worker:.1f}", f"{worker - inline:.1f}", f"{worker / inline:.2f}x"


if __name__ == "__main__":
    main()
