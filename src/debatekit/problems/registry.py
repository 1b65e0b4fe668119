"""Built-in problems: a plain dict of :class:`Problem` filled by the ``@problem`` decorator.

A problem makes an :class:`Instance` of a given size whose answer is the requested truth,
reproducibly from a numpy generator. A problem may declare parameters (a frozen dataclass of
:func:`~debatekit.params.param` fields, set with ``-P NAME=VALUE``); its maker then takes the
chosen values as a fourth argument. An instance carries each form of the computation that its
protocols need: a transcript machine (cross-examination), a Turing machine (bisection), and for
witness problems the honest prover's witness (Theorem 7.1).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, fields
from enum import Enum
from typing import Any

import numpy as np

from debatekit.machine.decomposition import Decomposition
from debatekit.machine.levelled import LevelledCircuit
from debatekit.machine.transcript import TranscriptMachine
from debatekit.machine.turing import TuringMachine
from debatekit.oracle import NO_ORACLE, Oracle, outside_debate
from debatekit.params import NoParams

_MEMO_LOCK = threading.Lock()
"""Guards the making of an instance's per-key memo locks."""


class Feature(Enum):
    """What a problem's instances carry, which a protocol may need (``ProtocolSpec.needs``): a
    problem supports every protocol whose needs its features include."""

    TRANSCRIPT = "transcript"
    """A transcript machine M with M(x) (and a witness, Theorem 7.1) the answer: ``Instance.machine``."""
    DETERMINISTIC = "deterministic"
    """Every judgement the verifier could ask is certain (P[yes] in {0, 1}; Theorems 5.1 and 5.3)."""
    LIPSCHITZ = "lipschitz"
    """K of Definition 6.1 is known (``Instance.lipschitz``; Theorem 6.2)."""
    TURING = "turing"
    """A Turing machine deciding x: ``Instance.turing`` (Theorem 5.1)."""
    CIRCUIT = "circuit"
    """An oracle-free circuit over x and the provers' alternating rounds: ``Instance.machine`` is a
    ``Circuit`` (Lemma 8 of the query-complexity paper)."""
    LEVELLED = "levelled"
    """Its levelled AND/OR form: ``Instance.levelled`` (Theorem 5 of the query-complexity paper)."""
    DECOMPOSITION = "decomposition"
    """A recursive decomposition M_D: ``Instance.decomposition`` (Definition 5.1)."""


class InstanceError(ValueError):
    """No instance exists for these arguments (size out of range, or no such answer)."""


@dataclass(frozen=True)
class Instance:
    problem: str
    size: int
    truth: bool
    x: np.ndarray
    oracle: Oracle = NO_ORACLE
    machine: TranscriptMachine | None = None
    turing: TuringMachine | None = None
    witness: np.ndarray | None = None
    """The witness honest Alice sends (a satisfying assignment when one exists)."""
    lipschitz: float | None = None
    """K of Definition 6.1 (in the Lean form: every step's conditional probability may move),
    as derived in the problem's docstring; None for deterministic problems."""
    levelled: LevelledCircuit | Callable[[], LevelledCircuit] | None = None
    """The levelled AND/OR form for the KW walk (Theorem 5), or a function building it on first use."""
    decomposition: Decomposition | Callable[[], Decomposition] | None = None
    """The recursive decomposition M_D of x for prover-estimator and naive recursive debate
    (Definition 5.1), or a function building it on first use."""
    content: bytes = b""
    """What fixes the instance beyond its problem, size, truth, x and witness, hashed into its
    records' fingerprint: a plan file's bytes (the fingerprint hashes the machine's steps and an
    oracle table too; a decomposition is a function of the problem's name, size, parameters and x)."""
    file: str | None = None
    """The file the problem was read from (a plan), kept in a record's header so replay reads it again."""

    def levelled_circuit(self) -> LevelledCircuit | None:
        """The levelled form, built (once) if it was given as a function."""
        if callable(self.levelled):
            object.__setattr__(self, "levelled", self.levelled())
        return self.levelled  # type: ignore[return-value]

    def recursive_decomposition(self) -> Decomposition | None:
        """The decomposition, built (once) if it was given as a function."""
        if callable(self.decomposition):
            object.__setattr__(self, "decomposition", self.decomposition())
        return self.decomposition  # type: ignore[return-value]

    def memo(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """A value derived from the instance alone, computed once and shared by every debate on it
        (an honest prover's evaluation of the circuit, say). Arrays in it are made read-only.

        Computed once even when debates ask at the same time (one lock per key: a computation
        may ask for another key from a thread of its own), and outside any debate
        (:func:`~debatekit.oracle.outside_debate`): whatever it asks a model is no one debate's."""
        cache = self.__dict__.setdefault("_memo", {})
        if key in cache:
            return cache[key]
        with _MEMO_LOCK:
            lock = self.__dict__.setdefault("_memo_locks", {}).setdefault(key, threading.Lock())
        with lock:
            if key not in cache:
                with outside_debate():
                    value = compute()
                for array in value if isinstance(value, list | tuple) else (value,):
                    if isinstance(array, np.ndarray):
                        array.flags.writeable = False
                cache[key] = value
        return cache[key]

    def __deepcopy__(self, memo: dict) -> Instance:
        """A seat's own copy: every field, but not the memo, which holds what the seats sharing
        this instance derived from it (a trusted estimator's knowledge of its opponent, say)."""
        return type(self)(**{f.name: copy.deepcopy(getattr(self, f.name), memo) for f in fields(self)})

    def __post_init__(self) -> None:
        for array in (self.x, self.witness):  # players share the instance: none may edit it
            if array is not None:
                array.flags.writeable = False

    @property
    def answer(self) -> int:
        return int(self.truth)


Maker = Callable[[int, bool, np.random.Generator], Instance]


@dataclass(frozen=True)
class Problem:
    name: str
    description: str
    features: frozenset[Feature]
    """What its instances carry; the protocols it supports follow
    (:func:`~debatekit.protocols.registry.protocols_of`)."""
    default_size: int
    min_size: int
    max_size: int
    make: Maker
    params: type = NoParams
    """The declaration of the problem's parameters (:mod:`debatekit.params`)."""
    truths: tuple[bool, ...] = (True, False)
    """The answers its instances can have, the first the default (a plan's own answer first)."""

    def instance(self, size: int, truth: bool, rng: np.random.Generator, params: Any = None) -> Instance:
        """An instance of ``size`` with answer ``truth``; ``params`` (an instance of
        :attr:`params`) reaches the maker of a problem that declares any (None: the defaults)."""
        if not self.min_size <= size <= self.max_size:
            raise InstanceError(f"{self.name} needs {self.min_size} <= --size <= {self.max_size}, got {size}")
        if self.params is NoParams:
            return self.make(size, truth, rng)
        values = self.params() if params is None else params
        if type(values) is not self.params:
            raise TypeError(f"{self.name} takes {self.params.__name__}, got {type(values).__name__}")
        return self.make(size, truth, rng, values)  # type: ignore[call-arg]


PROBLEMS: dict[str, Problem] = {}


def problem(
    name: str,
    description: str,
    features: frozenset[Feature],
    default_size: int,
    min_size: int = 1,
    max_size: int = 2**22,
    params: type = NoParams,
):
    """Register a maker ``(size, truth, rng) -> Instance`` under ``name``, or with ``params`` (a
    declaration) ``(size, truth, rng, params) -> Instance``; sizes outside
    [min_size, max_size] are refused (the maximum keeps a run within memory and minutes)."""

    def register(make: Maker) -> Maker:
        PROBLEMS[name] = Problem(name, description, features, default_size, min_size, max_size, make, params)
        return make

    return register
