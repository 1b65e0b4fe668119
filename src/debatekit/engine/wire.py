"""What crosses the process boundary to an isolated player (:mod:`debatekit.engine.isolation`): one
value format, JSON with arrays' bytes beside it, in length-prefixed frames bounded in size.

A frame is a 4-byte big-endian length and that many bytes of payload: a 4-byte length, that many
bytes of UTF-8 JSON, and then the raw bytes of the arrays the JSON names (each 8-byte aligned, so
a batch of 4,096 rows crosses as its 32 KiB, not as base64 inside a string). A reader refuses a
frame longer than its bound, a stream that ends inside a frame, text that is not JSON, JSON's
``NaN``/``Infinity`` words, nesting past :data:`DEPTH`, and an array whose bytes are not where its
entry says: each is a :class:`WireError`, which the engine charges to the worker that sent it.

Values (:func:`encode`, :func:`decode`) are JSON data with tagged objects for what JSON lacks:

* ``None``, ``bool``, ``str`` and lists as themselves; an integer as a JSON integer of at most
  :data:`INT_BITS` bits (numpy integers included, read as ``int``);
* a float as a JSON number, and NaN and the infinities as ``{"f": "nan" | "inf" | "-inf"}``
  (a player's value may be any float; the verifier's commit rejects what it must);
* ``{"t": [...]}`` a tuple, ``{"d": [[key, value], ...]}`` a dict, ``{"b": base64}`` bytes,
  ``{"q": [numerator, denominator]}`` a ``Fraction``;
* ``{"a": [offset, size], "dtype": name, "shape": [...]}`` a numpy array of a bool, integer or
  float dtype, its bytes at ``offset`` after the JSON (decoded read-only, as committed bit buffers
  are, by :func:`loads`); an array of objects as the list of its items;
* ``{"dist": [[outcome, weight], ...]}`` a mixed move (:class:`~debatekit.prob.Dist`);
* ``{"dc": name, "v": [fields...]}`` one of the frozen dataclasses that protocols hand players or
  players send (:data:`TYPES`: bisection's ``Config``, a committed ``Invalid`` word, a judgement's
  ``Question``, a :class:`Handle` to an object the engine keeps, prover-estimator's ``Situation``),
  rebuilt through its own constructor.

Anything else does not cross: :func:`encode` raises :class:`WireError` naming its type (a player
that sends it forfeits). A batch protocol's arrays cross as arrays, one row per debate.
"""

from __future__ import annotations

import base64
import json
import math
import os
import struct
import threading
from dataclasses import dataclass, fields
from fractions import Fraction
from typing import Any

import numpy as np

from debatekit.engine.boundary import Invalid
from debatekit.machine.turing import Config
from debatekit.oracle import Question
from debatekit.prob import Dist
from debatekit.protocols.prover_estimator import Situation

DEPTH = 64
"""How deeply values may nest."""
INT_BITS = 256
"""The widest integer that crosses (a wider one is a malformed frame)."""
HEADER = struct.Struct(">I")
ALIGN = 8
"""Each array's bytes start at a multiple of it (numpy reads them in place)."""


@dataclass(frozen=True)
class Handle:
    """A view the engine keeps and a player reads only through it (stochastic debate's
    ``StepView``): ``index`` names it among the call's handles; the step ``t`` of ``steps``, its
    ``kind``, the live ``rows`` (None: those sent last) and the reads answered ``ahead`` (by name)
    are sent at once; the rest the worker asks for, each ask answered by the engine
    (:mod:`debatekit.engine.isolation`)."""

    index: int
    t: int
    steps: int
    kind: str
    rows: Any
    ahead: dict


TYPES: dict[str, type] = {kind.__name__: kind for kind in (Config, Invalid, Question, Handle, Situation)}
"""The dataclasses and named tuples that cross, by name: what the protocols hand players and take back."""
_NAMES = {kind: name for name, kind in TYPES.items()}
_FIELDS = {kind: getattr(kind, "_fields", None) or tuple(f.name for f in fields(kind)) for kind in TYPES.values()}
"""Each type's fields in order (a named tuple's ``_fields``, a dataclass's fields)."""
_DTYPES = frozenset(
    ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64")
)
_DTYPE_NAMES = {np.dtype(name): name for name in _DTYPES}
"""By dtype object: numpy's ``dtype.name`` costs microseconds on every read."""
_ITEMSIZE = {name: np.dtype(name).itemsize for name in _DTYPES}
_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class WireError(ValueError):
    """A frame or value that breaks the format: its sender's fault."""


class Blob:
    """An array in encoded data, its bytes placed after the frame's JSON by :func:`dumps`."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray):
        self.array = array

    def __eq__(self, other: object) -> bool:
        mine = self.array
        return (
            type(other) is Blob
            and (mine.dtype, mine.shape) == (other.array.dtype, other.array.shape)
            and mine.tobytes() == other.array.tobytes()
        )

    __hash__ = None  # type: ignore[assignment]


def encode(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON data in the format above, or :class:`WireError`."""
    if depth > DEPTH:
        raise WireError(f"a value nested deeper than {DEPTH}")
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if kind is float:  # the exact types first: a batch's messages are mostly these
        return value if math.isfinite(value) else _non_finite(value)
    if kind is int:
        return _bounded(value)
    if kind is list:
        return [encode(v, depth + 1) for v in value]
    if kind is np.ndarray:
        dtype = _DTYPE_NAMES.get(value.dtype)
        if dtype is None:
            return encode(value.tolist(), depth)
        return Blob(value)
    if kind is dict:
        return {"d": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    if kind is tuple:
        return {"t": [encode(v, depth + 1) for v in value]}
    if isinstance(value, int | np.integer):  # a subclass's own methods are never called
        return _bounded(int.__int__(value) if isinstance(value, int) else int(value))
    if kind is np.bool_:
        return bool(value)
    if isinstance(value, float | np.floating):
        number = float.__float__(value) if isinstance(value, float) else float(value)
        return number if math.isfinite(number) else _non_finite(number)
    if kind is bytes:
        return {"b": base64.b64encode(value).decode()}
    if kind is Fraction:
        return {"q": [encode(value.numerator, depth + 1), encode(value.denominator, depth + 1)]}
    if kind is Dist:
        return {"dist": [[encode(o, depth + 1), encode(w, depth + 1)] for o, w in value.items()]}
    name = _NAMES.get(kind)
    if name is not None:
        return {"dc": name, "v": [encode(getattr(value, f), depth + 1) for f in _FIELDS[kind]]}
    raise WireError(f"a {kind.__name__} cannot be sent (plain data only: numbers, strings, lists, tuples, arrays)")


def _bounded(number: int) -> int:
    if number.bit_length() > INT_BITS:
        raise WireError(f"an integer of {number.bit_length()} bits (at most {INT_BITS} cross)")
    return number


def _non_finite(number: float) -> dict:
    return {"f": "nan" if number != number else ("inf" if number > 0 else "-inf")}


def decode(data: Any, depth: int = 0) -> Any:
    """The value :func:`encode` made ``data`` from, as :func:`loads` read it, or :class:`WireError`
    (the data read without trusting it: every tag checked, integers bounded; arrays were checked
    against their bytes by :func:`loads`)."""
    if depth > DEPTH:
        raise WireError(f"a value nested deeper than {DEPTH}")
    kind = type(data)
    if data is None or kind is bool or kind is str or kind is float or kind is np.ndarray:
        return data
    if kind is int:
        if data.bit_length() > INT_BITS:
            raise WireError(f"an integer of {data.bit_length()} bits (at most {INT_BITS} cross)")
        return data
    if kind is list:
        return [decode(v, depth + 1) for v in data]
    if kind is not dict or len(data) not in (1, 2):
        raise WireError(f"not a value of the format: {type(data).__name__}")
    try:
        return _tagged(data, depth)
    except WireError:
        raise
    except (TypeError, ValueError, KeyError, ZeroDivisionError, OverflowError) as err:
        raise WireError(f"a malformed {'/'.join(data)} value ({type(err).__name__}: {err})") from None


def _tagged(data: dict, depth: int) -> Any:
    if "t" in data and len(data) == 1:
        return tuple(decode(v, depth + 1) for v in _list(data["t"]))
    if "f" in data and len(data) == 1:
        return _NON_FINITE[data["f"]]
    if "d" in data and len(data) == 1:
        return {decode(k, depth + 1): decode(v, depth + 1) for k, v in map(_pair, _list(data["d"]))}
    if "b" in data and len(data) == 1:
        return base64.b64decode(_str(data["b"]), validate=True)
    if "q" in data and len(data) == 1:
        numerator, denominator = map(_int, _list(data["q"]))
        return Fraction(decode(numerator), decode(denominator))
    if "dist" in data and len(data) == 1:
        pairs = [(decode(o, depth + 1), _weight(decode(w, depth + 1))) for o, w in map(_pair, _list(data["dist"]))]
        return Dist(pairs)
    if "dc" in data and "v" in data and len(data) == 2:
        kind = TYPES[_str(data["dc"])]
        values = [decode(v, depth + 1) for v in _list(data["v"])]
        if len(values) != len(_FIELDS[kind]):
            raise WireError(f"a {kind.__name__} of {len(values)} fields")
        return kind(*values)
    raise WireError(f"an unknown tag {sorted(data)}")


def _list(value: Any) -> list:
    if type(value) is not list:
        raise WireError(f"a {type(value).__name__} where a list belongs")
    return value


def _pair(value: Any) -> list:
    if type(value) is not list or len(value) != 2:
        raise WireError("a pair that is not a list of two")
    return value


def _str(value: Any) -> str:
    if type(value) is not str:
        raise WireError(f"a {type(value).__name__} where a string belongs")
    return value


def _int(value: Any) -> int:
    if type(value) is not int:
        raise WireError(f"a {type(value).__name__} where an integer belongs")
    return value


def _weight(value: Any) -> int | float | Fraction:
    if type(value) not in (int, float, Fraction):
        raise WireError(f"a mixed move's weight that is a {type(value).__name__}")
    return value


def _refuse_constant(name: str) -> Any:
    raise WireError(f"JSON's {name} (non-finite floats are tagged)")


def dumps(message: Any) -> bytes:
    """A message (JSON data made by :func:`encode`, under tags of the caller's) as one frame."""
    blobs: list[np.ndarray] = []
    at = 0

    def place(value: Any) -> dict:
        nonlocal at
        if type(value) is not Blob:
            raise TypeError(f"a {type(value).__name__} in encoded data")
        array = value.array
        entry = {"a": [at, array.nbytes], "dtype": _DTYPE_NAMES[array.dtype], "shape": list(array.shape)}
        blobs.append(array)
        at += -(-array.nbytes // ALIGN) * ALIGN
        return entry

    text = json.JSONEncoder(separators=(",", ":"), allow_nan=False, default=place).encode(message).encode()
    text += b" " * (-(len(text) + HEADER.size) % ALIGN)  # the arrays' bytes start aligned
    parts = [b"", HEADER.pack(len(text)), text]
    for array in blobs:
        parts.append(np.ascontiguousarray(array).data)
        parts.append(bytes(-array.nbytes % ALIGN))
    parts[0] = HEADER.pack(HEADER.size + len(text) + at)  # the frame's length first: its bytes joined once
    return b"".join(parts)


def loads(payload: bytes) -> Any:
    """A frame's payload as JSON data, its arrays read-only numpy arrays over the payload's bytes,
    or :class:`WireError`."""
    if len(payload) < HEADER.size:
        raise WireError("a frame shorter than its header")
    (size,) = HEADER.unpack_from(payload)
    start = HEADER.size + size
    if start > len(payload):
        raise WireError(f"a frame whose JSON runs past its end ({size} bytes)")
    _READING.arrays = memoryview(payload)[start:]
    try:
        return _DECODER.decode(bytes(payload[HEADER.size : start]).decode())
    except WireError:
        raise
    except (ValueError, RecursionError) as err:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise WireError(f"a frame that is not JSON ({type(err).__name__})") from None
    finally:
        _READING.arrays = None


def _array(entry: dict) -> Any:
    """A JSON object of the frame :func:`loads` reads: an array's entry becomes the array, read-only
    over the frame's bytes; any other object is left as it is (:func:`decode` reads it)."""
    if len(entry) != 3 or "a" not in entry:
        return entry
    arrays = _READING.arrays
    try:
        (offset, nbytes), dtype = map(_int, _list(entry["a"])), _str(entry["dtype"])
        shape = [_int(n) for n in _list(entry["shape"])]
    except (TypeError, ValueError, KeyError):
        raise WireError("a malformed array entry") from None
    if dtype not in _DTYPES or len(shape) > DEPTH or any(n < 0 for n in shape):
        raise WireError(f"an array of dtype {dtype!r} and shape {shape}")
    if offset < 0 or offset + nbytes > len(arrays) or nbytes != math.prod(shape) * _ITEMSIZE[dtype]:
        raise WireError(f"an array of shape {shape} whose {nbytes} bytes at {offset} are not in the frame")
    array = np.frombuffer(arrays[offset : offset + nbytes], dtype=dtype).reshape(shape)
    if dtype == "bool":  # a byte other than 0 or 1 is True, and reads as 1 everywhere after
        array = array.view(np.uint8) != 0
        array.flags.writeable = False
    return array


_READING = threading.local()
"""The arrays' bytes of the frame :func:`loads` reads on this thread."""
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, object_hook=_array)
"""Made once: a decoder's scanner costs microseconds to build."""


def read_frame(fd: int, limit: int) -> Any | None:
    """The next frame's message from ``fd``, blocking; None at the end of the stream before a frame."""
    head = _read_exactly(fd, HEADER.size, at_start=True)
    if head is None:
        return None
    (size,) = HEADER.unpack(head)
    if size > limit:
        raise WireError(f"a frame of {size} bytes (at most {limit})")
    return loads(_read_exactly(fd, size) or b"")


def _read_exactly(fd: int, size: int, at_start: bool = False) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, left)
        if not chunk:
            if at_start and left == size:
                return None
            raise WireError("the stream ended inside a frame")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def write_frame(fd: int, message: Any) -> None:
    """``message`` written to ``fd`` as one frame, blocking."""
    data = memoryview(dumps(message))
    while data:
        data = data[os.write(fd, data) :]
