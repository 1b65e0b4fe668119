"""The verifier's only window on a debate: a counting reader (Definition 5.2, cross-examination).

The verifier reads committed prover messages (:mod:`debatekit.engine.boundary`) single bits,
fixed-width words and whole configurations at a time through a :class:`Reader`, which counts
every bit into the ledger (and notes each read in the debate's record) and turns a position that
does not hold a bit into :class:`~debatekit.ledger.Malformed` against the message's sender. The
verifier's oracle queries are not made here: its check yields a
:class:`~debatekit.engine.nodes.Query` and the interpreter answers it.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from debatekit.engine.boundary import Invalid
from debatekit.engine.events import Read
from debatekit.ledger import Ledger, Malformed, Role


@functools.cache
def word_width(values: int) -> int:
    """Bits in a word that can name any of ``values`` values."""
    return max(1, math.ceil(math.log2(values))) if values > 1 else 0


class Reader:
    """Counted reads of committed prover messages and of the common input, for the verifier."""

    def __init__(self, ledger: Ledger):
        self.ledger = ledger

    def bit(self, message: Any, index: int, sender: Role) -> int:
        """Read bit ``index`` of a committed message (a bit buffer or a tuple of bits); one bit."""
        self.ledger.bits_read += 1
        if self.ledger.events is not None and not self.ledger.made_again(Role.VERIFIER):
            self.ledger.note(Read(sender=sender, at=index))
        bit = int(message[index])
        if bit not in (0, 1):
            raise Malformed(sender, f"position {index} does not hold a bit")
        return bit

    def word(self, value: Any, width: int, sender: Role) -> Any:
        """Read a committed ``width``-bit word (an index, a choice, a configuration); a word that
        spells no legal value (:class:`~debatekit.engine.boundary.Invalid`) loses for its sender."""
        self.ledger.bits_read += width
        if self.ledger.events is not None and not self.ledger.made_again(Role.VERIFIER):
            self.ledger.note(Read(sender=sender, bits=width))
        if type(value) is Invalid:
            raise Malformed(sender, value.reason)
        return value

    def input_bit(self, x: Any, index: int) -> int:
        """Read bit ``index`` of the common input x (counted apart from prover bits)."""
        self.ledger.input_bits_read += 1
        if self.ledger.events is not None and not self.ledger.made_again(Role.VERIFIER):
            self.ledger.note(Read(sender=None, at=index))
        return int(x[index])

    def query_input(self, x: Any, index: int) -> int:
        """Read bit ``index`` of x as a query of the query-complexity model (Section 2 of that
        paper), where the verifier pays alike for bits of x, α and β: counted in ``bits_read``
        as well as in ``input_bits_read``."""
        self.ledger.bits_read += 1
        return self.input_bit(x, index)
