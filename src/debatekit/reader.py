"""The verifier's only window on a debate: a counting reader (Definition 5.2, cross-examination).

The verifier never touches a prover's message directly. It reads single bits, fixed-width words
and whole configurations through a :class:`Reader`, which counts every bit into the ledger and
turns anything unreadable (index out of range, a value that is not a bit, garbage) into
:class:`~debatekit.ledger.Malformed` against the message's sender. Oracle queries go through the
reader's oracle access, which counts them for the verifier.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable
from typing import Any, Protocol

import numpy as np

from debatekit.ledger import Ledger, Malformed, Role


class OracleAccess(Protocol):
    """What the verifier may do with the oracle: one query, or r queries on the same point."""

    def __call__(self, query: Hashable) -> int: ...

    def many(self, query: Hashable, r: int) -> int: ...


def word_width(values: int) -> int:
    """Bits in a word that can name any of ``values`` values."""
    return max(1, math.ceil(math.log2(values))) if values > 1 else 0


def as_bit(value: Any) -> int | None:
    """``value`` as 0 or 1, or None when it is anything else (NaN, 2, "1", a list...)."""
    if isinstance(value, bool | np.bool_):
        return int(value)
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return int(value)
    return None


def as_index(value: Any, size: int) -> int | None:
    """``value`` as an integer in ``range(size)``, or None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        return None
    value = int(value)
    return value if 0 <= value < size else None


class Reader:
    """Counted reads of prover messages and counted oracle queries, for the verifier."""

    def __init__(self, ledger: Ledger, oracle: OracleAccess):
        self.ledger = ledger
        self.ask = oracle

    def bit(self, message: Any, index: int, sender: Role) -> int:
        """Read bit ``index`` of ``message``; one bit."""
        self.ledger.count_read(1)
        try:
            value = message[index]
        except Exception as err:  # any failure to index is the sender's fault
            raise Malformed(sender, f"no bit at position {index}") from err
        bit = as_bit(value)
        if bit is None:
            raise Malformed(sender, f"position {index} holds {value!r}, not a bit")
        return bit

    def word(self, value: Any, width: int) -> Any:
        """Read a ``width``-bit word (an index, a choice); the caller validates the value."""
        self.ledger.count_read(width)
        return value

    def input_bit(self, x: Any, index: int) -> int:
        """Read bit ``index`` of the common input x (counted apart from prover bits)."""
        self.ledger.input_bits_read += 1
        return int(x[index])

    def query_input(self, x: Any, index: int) -> int:
        """Read bit ``index`` of x as a query of the query-complexity model (Section 2 of that
        paper), where the verifier pays alike for bits of x, α and β: counted in ``bits_read``
        as well as in ``input_bits_read``."""
        self.ledger.count_read(1)
        return self.input_bit(x, index)
