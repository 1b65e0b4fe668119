"""Every random choice of a run flows from its one seed.

The instance draws from child 0 of ``SeedSequence(seed)``; debate i from child (1, i), whatever
the batch it is played in, the number of debates in the run, or the worker that plays it. So the
first k debates of a run of n are the debates of a run of k, on any machine. A run over a dataset
plays each item as a run of its own, from the seed child (2, h) gives, h the item's id hashed
(:func:`item_seed`): items' debates are independent, and an item's do not depend on the others.
"""

from __future__ import annotations

import hashlib

import numpy as np


def instance_seed(seed: int) -> np.random.SeedSequence:
    """The seed sequence the run's instance is drawn from."""
    return np.random.SeedSequence(seed, spawn_key=(0,))


def debate_seed(seed: int, index: int) -> np.random.SeedSequence:
    """Debate ``index``'s seed sequence, from the run's seed and the index alone."""
    return np.random.SeedSequence(seed, spawn_key=(1, index))


def item_seed(seed: int, ident: str) -> int:
    """The seed a dataset's item ``ident`` is played from in a run over the dataset from ``seed``:
    63 bits of child (2, h), h the first 8 bytes of the id's SHA-256 (so it is the item's own,
    whatever the other items or their order)."""
    h = int.from_bytes(hashlib.sha256(ident.encode()).digest()[:8], "big")
    high, low = (int(w) for w in np.random.SeedSequence(seed, spawn_key=(2, h)).generate_state(2, np.uint32))
    return (high << 31) | (low >> 1)
