"""The commit boundary: a prover's message becomes plain canonical data once, when it is committed.

A dishonest prover, an LLM or a person can send anything. Each protocol names, for every move,
the conversion (``Move.commit``) that turns what a player returned into plain data: bits as a
read-only ``uint8`` buffer backed by immutable ``bytes`` (it cannot be made writable again),
indices as bounded Python ``int``. The interpreter runs that conversion inside a catch-all, so a
message whose reading raises (its ``__len__``, ``__getitem__``, ``__int__``, ``__eq__``,
iteration), or that does not convert, is the sender's forfeit; the verifier and the opponent only
ever see the converted copy, so a value that changes when it is read, or a later write into the
object the player sent, changes nothing.

Conversions here never call a method of the player's object other than ``len`` and indexing of a
message, and never compare or hash one of its elements: an element counts only if its type is
exactly ``int``, ``bool`` or a numpy integer or bool (or an ``int`` subclass, read through
``int``'s own slot).
"""

from __future__ import annotations

import contextlib
import math
import reprlib
from collections.abc import Hashable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from debatekit.ledger import Malformed, Role
from debatekit.prob import Dist

NOT_A_BIT = 255
"""In a committed bit buffer: a position that was not 0 or 1 (or could not be read). Cross-
examination charges it to the sender only if the verifier reads it (Definition 5.2: V reads only
what it needs), so it is kept, not rejected, at commit."""

_NUMPY_INTS = frozenset(t for t in np.sctypeDict.values() if issubclass(t, np.integer | np.bool_))
_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 40
_REPR.maxlevel = 2


_WORD = 1 << 63
"""Integers smaller than it are described by their digits at once (:func:`safe_repr`)."""

HOSTILE = (Exception, SystemExit, KeyboardInterrupt, GeneratorExit)
"""What a player's object may raise from its own methods (``sys.exit()`` and ``raise
KeyboardInterrupt`` included) while the engine reads or describes it; a signal that stops the run
is none of these."""


def safe_repr(value: Any) -> str:
    """A short repr for error messages that cannot fail or end the process, whatever ``value``'s
    methods (or its type's metaclass) do: its ``__repr__`` may raise, call ``sys.exit()`` or
    return a ``str`` subclass with methods of its own; the text kept is a plain ``str``."""
    if type(value) is int and -_WORD <= value < _WORD:  # the common case (a word naming nothing), at once
        return str(value)
    try:
        text = str.__str__(_REPR.repr(value))
    except HOSTILE:
        text = f"<{type_name(value)} object>"
    return text if len(text) <= 80 else text[:77] + "..."


def safe_str(value: Any) -> str:
    """``str(value)`` as a plain ``str``, or ``<unprintable>`` when its ``__str__`` raises or
    tries to end the process (an exception a player raised is described with it)."""
    try:
        return str.__str__(str(value))
    except HOSTILE:
        return "<unprintable>"


def type_name(value: Any) -> str:
    """The name of ``value``'s type, read by ``type``'s own descriptor: a metaclass's ``__name__``
    never runs."""
    return vars(type)["__name__"].__get__(type(value))


def plain_int(value: Any) -> int | None:
    """``value`` as a plain ``int`` when its type is an integer type, else None. No method of the
    object (nor of a custom metaclass: its type's ``__eq__``, ``__hash__``, ``__class__``) is called:
    numpy scalars are read by numpy, ``int`` subclasses through ``int``'s slot."""
    kind = type(value)
    if kind is int:
        return value
    if type(kind) is not type:  # a class with its own metaclass: nothing of it is read
        return None
    if kind in _NUMPY_INTS:
        return int(value)
    if issubclass(kind, int):  # bool, IntEnum, or a subclass that overrides its dunders
        return int.__int__(value)
    return None


def as_bit(value: Any) -> int | None:
    """``value`` as 0 or 1, or None when it is anything else (NaN, 2, "1", 1.0, a list...)."""
    if type(value) is int:  # the common case, first
        return value if value in (0, 1) else None
    number = plain_int(value)
    return number if number in (0, 1) else None


def as_index(value: Any, size: int) -> int | None:
    """``value`` as an integer in ``range(size)`` (bools excluded), or None."""
    if type(value) is int:  # the common case, first
        return value if 0 <= value < size else None
    if type(value) is bool or type(value) is np.bool_:
        return None
    number = plain_int(value)
    return number if number is not None and 0 <= number < size else None


def frozen(values: np.ndarray) -> np.ndarray:
    """A read-only ``uint8`` view of a private ``bytes`` copy: numpy refuses to make it writable."""
    return np.frombuffer(np.ascontiguousarray(values, dtype=np.uint8).tobytes(), dtype=np.uint8)


def commit_bits(message: Any, length: int, sender: Role) -> np.ndarray:
    """A message of ``length`` bits as a frozen buffer; positions that are not bits hold
    :data:`NOT_A_BIT`. A message that is not a sequence, or has the wrong length, is ``sender``'s
    forfeit (framing is checked without reading any bit)."""
    if type(message) is np.ndarray:
        if message.ndim == 0 or message.shape[0] != length:
            raise Malformed(sender, f"the message has shape {message.shape}, expected ({length},)")
        if message.ndim > 1:  # a sequence of rows, none of them a bit (as a list of lists would be)
            return frozen(np.full(length, NOT_A_BIT))
        if message.dtype.char in "B?":  # uint8 or bool: one byte a position, all bits the common case
            raw = message.tobytes()
            if not raw.translate(None, b"\x00\x01"):
                return np.frombuffer(raw, dtype=np.uint8)  # a bytes object's view: never writable
        if message.dtype.kind in "biu":  # bits where the value is 0 or 1, compared in its own dtype
            out = np.full(length, NOT_A_BIT, dtype=np.uint8)
            bits = (message == 0) | (message == 1)
            out[bits] = message[bits]
            return frozen(out)
        if message.dtype.kind != "O":
            return frozen(np.full(length, NOT_A_BIT))
    if type(message) is tuple or type(message) is list:  # a list copied at once: later changes are not read
        plain = tuple(message)
        if len(plain) == length and all(type(b) is int for b in plain):  # exact ints: bytes() calls nobody's code
            with contextlib.suppress(ValueError):  # an int past a byte: read below, position by position
                raw = bytes(plain)
                if not raw.translate(None, b"\x00\x01"):
                    return np.frombuffer(raw, dtype=np.uint8)
    try:
        size = len(message)
    except Exception as err:
        raise Malformed(sender, f"{safe_repr(message)} is not a sequence") from err
    if plain_int(size) != length:
        raise Malformed(sender, f"the message has length {safe_repr(size)}, expected {length}")
    out = np.empty(length, dtype=np.uint8)
    for i in range(length):
        try:
            bit = as_bit(message[i])
        except Exception:  # unreadable: the sender's fault, charged if the verifier reads it
            bit = None
        out[i] = NOT_A_BIT if bit is None else bit
    return frozen(out)


@dataclass(frozen=True)
class Invalid:
    """A committed word that is none of the move's legal values. The verifier pays to read the
    word (a word of w bits can spell values that mean nothing) and its sender then loses."""

    reason: str


def commit_bit(message: Any, sender: Role, what: str) -> int:
    """One bit, or ``sender``'s forfeit at once (a bit the protocol takes without reading it)."""
    bit = as_bit(message)
    if bit is None:
        raise Malformed(sender, f"{what} {safe_repr(message)} is not 0 or 1")
    return bit


def bit_word(message: Any, what: str) -> int | Invalid:
    """A one-bit word the verifier reads: 0, 1, or :class:`Invalid`."""
    if type(message) is Invalid:
        return message
    bit = as_bit(message)
    return Invalid(f"{what} {safe_repr(message)} is not 0 or 1") if bit is None else bit


def index_word(message: Any, size: int, what: str) -> int | Invalid | None:
    """A word naming an index in [0, size) or None (the protocol's 'no index': accept), or
    :class:`Invalid`."""
    if message is None or type(message) is Invalid:
        return message
    index = as_index(message, size)
    return Invalid(f"{what} {safe_repr(message)} is not None or an index in [0, {size})") if index is None else index


def commit_probability(message: Any, sender: Role, what: str) -> float:
    """A finite real in [0, 1] as a Python float, else ``sender``'s forfeit."""
    number = plain_int(message)
    if number is None:
        if not any(type(message) is kind for kind in (float, np.float64, np.float32, np.float16)):
            raise Malformed(sender, f"{what} {safe_repr(message)} is not a number")
        number = float(message)
    if not (math.isfinite(number) and 0 <= number <= 1):
        raise Malformed(sender, f"{what} {safe_repr(message)} is not a probability in [0, 1]")
    return float(number)


PLAIN_DEPTH = 32
"""How deeply tuples may nest in plain data (a query, a split)."""
PLAIN_SIZE = 1 << 16
"""The most items plain data may hold in all."""


def commit_plain(message: Any, sender: Role, what: str) -> Hashable:
    """``message`` rebuilt as plain immutable data (a query, a split of one), else ``sender``'s
    forfeit. Plain data is ``None``, a ``bool``, ``str``, ``bytes`` or ``float`` of exactly that type,
    an integer (:func:`plain_int`; numpy bools become ``bool``) or a tuple of plain data, read
    through ``tuple``'s own slots and rebuilt as an exact tuple, so a tuple subclass that compares
    equal to one split and indexes as another has no say. At most PLAIN_DEPTH levels, PLAIN_SIZE
    items."""
    budget = PLAIN_SIZE

    def copy(value: Any, depth: int) -> Hashable:
        nonlocal budget
        budget -= 1
        kind = type(value)
        if value is None or kind is bool or kind is str or kind is bytes or kind is float:
            return value
        if kind is np.bool_:
            return bool(value)
        number = plain_int(value)
        if number is not None:
            return number
        if issubclass(kind, tuple) and depth < PLAIN_DEPTH and tuple.__len__(value) <= budget:
            return tuple(copy(tuple.__getitem__(value, i), depth + 1) for i in range(tuple.__len__(value)))
        raise Malformed(sender, f"{what} {safe_repr(message)} is not plain data (ints, strings, tuples)")

    return copy(message, 0)


def mixed_branches(message: Any) -> list[tuple[float, Any]]:
    """A message as (weight, outcome) pairs: a :class:`~debatekit.prob.Dist` (exactly that type, a
    mixed move) as its outcomes with float weights, anything else as itself with weight 1. The
    Dist's methods are not called and its weights are checked again (a player can rewrite them
    after construction): each an integer, float or Fraction, finite and non-negative, summing to 1;
    else ValueError. Outcomes are returned unread, in insertion order (:meth:`Dist.sample`'s)."""
    if type(message) is not Dist:
        return [(1.0, message)]
    weights = message._weights
    if type(weights) is not dict:
        raise ValueError("a mixed move whose weights are not a dict")
    pairs = [(_weight(w), outcome) for outcome, w in dict.items(weights)]
    pairs = [(w, outcome) for w, outcome in pairs if w > 0]
    if abs(math.fsum(w for w, _ in pairs) - 1) > 1e-9:
        raise ValueError("a mixed move whose weights do not sum to 1")
    return pairs


def _weight(value: Any) -> float:
    number: Any = plain_int(value)
    if number is None and type(value) is Fraction:
        numerator, denominator = plain_int(value.numerator), plain_int(value.denominator)
        number = numerator / denominator if numerator is not None and denominator else None
    elif number is None and (type(value) is float or type(value) is np.float64):
        number = float(value)
    if number is None or not (math.isfinite(number) and number >= 0):
        raise ValueError(f"weight {safe_repr(value)} is not a probability")
    return float(number)


def to_json(value: Any) -> Any:
    """A committed message as JSON data: bit buffers as ``{"bits": "01x"}`` (x: not a bit),
    tuples as lists, dataclasses (a Turing-machine configuration) as lists of their fields."""
    if isinstance(value, np.ndarray):
        return {"bits": value.tobytes().translate(_BIT_CHARS).decode()}
    if isinstance(value, Invalid):
        return {"invalid": value.reason}
    if isinstance(value, tuple | list):
        return [to_json(v) for v in value]
    fields = getattr(value, "__dataclass_fields__", None)
    if fields is not None:
        return [to_json(getattr(value, name)) for name in fields]
    return value


def from_json(value: Any) -> Any:
    """The inverse of :func:`to_json` up to commit: data that commits to the same message (lists
    back to the tuples that plain data is committed as)."""
    if isinstance(value, dict) and "bits" in value:
        return [None if c == "x" else int(c) for c in value["bits"]]
    if isinstance(value, dict) and "invalid" in value:
        return Invalid(value["invalid"])
    if isinstance(value, list):
        return tuple(from_json(v) for v in value)
    return value


_BIT_CHARS = bytes.maketrans(bytes([0, 1, NOT_A_BIT]), b"01x")
