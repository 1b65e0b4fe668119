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
import struct
import threading
from dataclasses import fields
from fractions import Fraction
from typing import Any, NamedTuple

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


class Handle(NamedTuple):
    """A view the engine keeps and a player reads only through it (stochastic debate's
    ``StepView``): ``index`` names it among the call's handles; the step ``t`` of ``steps``, its
    ``kind``, the live ``rows`` (None: those sent last) and the reads answered ``ahead`` (by name)
    are sent at once; the rest the worker asks for, each ask answered by the engine
    (:mod:`debatekit.engine.isolation`). A named tuple: made once per call of a batch."""

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


def dumps(message: Any) -> list[bytes | memoryview]:
    """A message (JSON data made by :func:`encode`, under tags of the caller's) as a frame's bytes,
    in parts of unsigned bytes (the arrays' own buffers among them, written where the frame goes
    without a join)."""
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
    parts: list[bytes | memoryview] = [HEADER.pack(len(text)), text]
    for array in blobs:
        parts.append(_bytes_of(array))
        parts.append(bytes(-array.nbytes % ALIGN))
    return parts


def _bytes_of(array: np.ndarray) -> memoryview:
    """An array's bytes in order, as unsigned bytes (copied only where it is not contiguous)."""
    if array.flags.c_contiguous and array.size:  # a view of its memory, at once
        return array.data.cast("B")
    return np.ascontiguousarray(array).reshape(-1).data.cast("B")


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
    return _arrived(np.frombuffer(arrays[offset : offset + nbytes], dtype=dtype).reshape(shape))


def _arrived(array: np.ndarray) -> np.ndarray:
    """An array read over a frame's bytes, as it is handed on: a bool array's bytes other than 0 or
    1 read as True (and as 1 everywhere after), read-only as the bytes it was read over."""
    if array.dtype == np.bool_:
        array = array.view(np.uint8) != 0
        array.flags.writeable = False
    return array


_READING = threading.local()
"""The arrays' bytes of the frame :func:`loads` reads on this thread."""
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, object_hook=_array)
"""Made once: a decoder's scanner costs microseconds to build."""


# -- the packed form: a batch's call and its reply, without JSON --

JSON, PACKED = 0, 1
"""A frame's kinds: the JSON form above, or the packed form of a call and its reply."""
Frame = tuple[int, list]
"""A frame to send: its kind and its bytes in parts."""
AHEAD = ("estimate", "random", "probabilities")
"""The reads answered ahead, by their code in the packed form."""
_CODES = sorted(_DTYPES)
"""The dtypes that cross, by their code in the packed form."""
_DTYPE_CODES = {np.dtype(name): code for code, name in enumerate(_CODES)}
_CALL = struct.Struct("<24s16s3qBBBB4B3B5x7q")
"""A packed call's one header: the method's name, the view's kind; its step t, steps and the samples
of the estimate answered ahead; which of the view's arrays are present (rows, estimate, random,
probabilities: a bit each), how many arguments follow the view, their kinds and the arrays' dtype
codes (0: None, else 1 + the dtype's code); then each array's length. The arrays' bytes follow, in
that order, each 8-byte aligned."""
_REPLY = struct.Struct("<5BB2xq")
"""A packed reply's header: its tag, the count of reads answered ahead it made and their codes, its
array's dtype code and length. The array's bytes follow."""
_T_REPLY = 0xA5
_AHEAD_KEYS = frozenset(AHEAD)
_NO_ESTIMATE = (0, None)


def framed(message: Any) -> Frame:
    """A message of JSON data (:func:`encode`'s, under the caller's tags) as a frame to send."""
    return JSON, dumps(message)


def _code(array: Any) -> int:
    """1 + the dtype code of a one-dimensional array that crosses packed; 0 for anything else."""
    if type(array) is not np.ndarray or array.ndim != 1:
        return 0
    return _DTYPE_CODES.get(array.dtype, -1) + 1


def pack_call(name: str, args: list) -> Frame | None:
    """``name(*args)`` in the packed form (one header, then the arrays' bytes), where the first
    argument is a :class:`Handle` of one-dimensional arrays and the rest (at most three) such
    arrays or None: a batch's call; None for any other (the call crosses as JSON)."""
    if not 0 < len(args) <= 4 or type(args[0]) is not Handle:
        return None
    view = args[0]
    ahead = view.ahead
    if view.index or type(ahead) is not dict or not ahead.keys() <= _AHEAD_KEYS:
        return None
    n, estimate = ahead.get("estimate", _NO_ESTIMATE)
    codes, lengths, sent, mask = [0] * 7, [0] * 7, [], 0
    for k, array in enumerate((view.rows, estimate, ahead.get("random"), ahead.get("probabilities"), *args[1:])):
        if array is None:
            continue
        code = _code(array)
        if not code:
            return None
        codes[k], lengths[k], mask = code, len(array), mask | 1 << k
        sent.append(array)
    text, kind = name.encode(), view.kind.encode()
    if len(text) > 24 or len(kind) > 16 or type(n) is not int:
        return None
    head = _CALL.pack(text, kind, view.t, view.steps, n, mask & 15, len(args) - 1, 0, 0, *codes, *lengths)
    return PACKED, _with_arrays(head, sent)


def _with_arrays(head: bytes, arrays: list) -> list:
    parts: list = [head]
    for array in arrays:
        parts.append(_bytes_of(array))
        if array.nbytes % ALIGN:
            parts.append(bytes(-array.nbytes % ALIGN))
    return parts


def unpack_call(payload: bytes) -> tuple[str, list]:
    """A packed call's method name and arguments (its arrays read-only over ``payload``), or
    :class:`WireError`."""
    try:
        text, kind, t, steps, n, mask, extra, _, _, *rest = _CALL.unpack_from(payload)
    except struct.error:
        raise WireError("a packed call shorter than its header") from None
    codes, lengths = rest[:7], rest[7:]
    at, values = _CALL.size, []
    for k in range(4 + min(extra, 3)):
        if not (mask >> k & 1 if k < 4 else codes[k]):  # absent from the view, or an argument None
            values.append(None)
            continue
        array, at = _packed_array(payload, at, codes[k], lengths[k])
        values.append(array)
    _end(payload, at)
    try:
        name, kind = text.rstrip(b"\0").decode(), kind.rstrip(b"\0").decode()
    except UnicodeDecodeError:
        raise WireError("a packed text that is not UTF-8") from None
    ahead = {}
    if values[1] is not None:
        ahead["estimate"] = [n, values[1]]
    if values[2] is not None:
        ahead["random"] = values[2]
    if values[3] is not None:
        ahead["probabilities"] = values[3]
    return name, [Handle(0, t, steps, kind, values[0], ahead), *values[4:]]


def pack_reply(used: list[str], value: Any) -> Frame | None:
    """A call's result in the packed form, with the reads answered ahead the player made (``used``),
    when it is a one-dimensional array of a dtype that crosses; None when it is not (the reply
    crosses as JSON)."""
    code = _code(value)
    if not code or len(used) > len(AHEAD) or not all(name in AHEAD for name in used):
        return None
    codes = [AHEAD.index(name) for name in used] + [0] * (len(AHEAD) - len(used))
    return PACKED, _with_arrays(_REPLY.pack(_T_REPLY, len(used), *codes, code, len(value)), [value])


def unpack_reply(payload: bytes) -> tuple[list[str], np.ndarray]:
    """A packed reply's reads answered ahead that the player made, and its array (read-only over
    ``payload``), or :class:`WireError`: what a worker sends is read without trusting it."""
    try:
        tag, count, *codes, code, length = _REPLY.unpack_from(payload)
    except struct.error:
        raise WireError("a packed reply shorter than its header") from None
    if tag != _T_REPLY or count > len(AHEAD) or any(c >= len(AHEAD) for c in codes):
        raise WireError("a packed reply whose header is not one")
    value, at = _packed_array(payload, _REPLY.size, code, length)
    _end(payload, at)
    return [AHEAD[c] for c in codes[:count]], value


def _packed_array(data: bytes, at: int, code: int, length: int) -> tuple[np.ndarray, int]:
    """The one-dimensional array of ``length`` items of dtype code ``code`` - 1 at ``at``, and where
    the next starts."""
    if not 1 <= code <= len(_CODES) or length < 0:
        raise WireError(f"a packed array of dtype code {code} and length {length}")
    dtype = _CODES[code - 1]
    nbytes = length * _ITEMSIZE[dtype]
    if at + nbytes > len(data):
        raise WireError(f"a packed array of shape [{length}] whose bytes are not in the frame")
    return _arrived(np.frombuffer(data, dtype=dtype, count=length, offset=at)), at + nbytes + -nbytes % ALIGN


def _end(data: bytes, at: int) -> None:
    if at != len(data):
        raise WireError("a packed frame with bytes past its last array")
