"""Every random choice of a run flows from its one seed.

The instance draws from child 0 of ``SeedSequence(seed)``; debate i from child (1, i), whatever
the batch it is played in, the number of debates in the run, or the worker that plays it. So the
first k debates of a run of n are the debates of a run of k, on any machine.
"""

from __future__ import annotations

import numpy as np


def instance_seed(seed: int) -> np.random.SeedSequence:
    """The seed sequence the run's instance is drawn from."""
    return np.random.SeedSequence(seed, spawn_key=(0,))


def debate_seed(seed: int, index: int) -> np.random.SeedSequence:
    """Debate ``index``'s seed sequence, from the run's seed and the index alone."""
    return np.random.SeedSequence(seed, spawn_key=(1, index))
