"""The protocols debatekit runs, by name: one line each, the name and where its
:class:`~debatekit.protocols.spec.ProtocolSpec` is (``module:attr``), loaded on first use, so that
``--help`` and shell completion read the names without importing a protocol (or numpy).

``attr`` is the spec, or a function of no arguments that builds it. A built-in tree protocol's
spec is beside its strategy table (``players/X.SPEC``: the table imports the rules of
``protocols/X``, never the other way). A protocol of one's own (a test's, a user's package) is one more
line, :func:`register`, by ``module:attr`` or with the spec itself; from then on it is in
:data:`PROTOCOLS` like a built-in one: ``debatekit run`` and the API play it, ``replay`` and
``--resume`` read its records, ``solve`` searches it, and every problem whose
:attr:`~debatekit.problems.registry.Problem.features` include what it ``needs`` supports it
(:func:`protocols_of`).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the specs import numpy; this module is read by --help
    from debatekit.problems.registry import Problem
    from debatekit.protocols.spec import ProtocolSpec

BUILTIN = {
    "cross-exam": "debatekit.players.cross_exam:SPEC",
    "bisection": "debatekit.players.bisection:SPEC",
    "stochastic": "debatekit.protocols.stochastic.spec:SPEC",
    "circuit-cross-exam": "debatekit.players.circuit_cross_exam:SPEC",
    "kw": "debatekit.players.kw:SPEC",
    "prover-estimator": "debatekit.catalog:PROVER_ESTIMATOR",
    "naive-recursive": "debatekit.catalog:NAIVE_RECURSIVE",
}
"""The built-in protocols, in the order ``--help`` lists them."""

_WHERE: dict[str, str | ProtocolSpec] = dict(BUILTIN)
_LOADED: dict[str, ProtocolSpec] = {}


def register(name: str, where: str | ProtocolSpec) -> None:
    """Add protocol ``name``: ``where`` is ``module:attr`` (loaded on first use) or the spec
    itself, whose ``name`` must be ``name``. A name already registered is refused."""
    if name in _WHERE:
        raise ValueError(f"protocol {name!r} is registered already")
    if not isinstance(where, str) and where.name != name:
        raise ValueError(f"the spec registered as {name!r} is named {where.name!r}")
    _WHERE[name] = where


def unregister(name: str) -> None:
    """Remove a protocol :func:`register` added (a test's, once it is done); built-ins stay."""
    if name in BUILTIN:
        raise ValueError(f"{name} is built in")
    del _WHERE[name]
    _LOADED.pop(name, None)


def names() -> tuple[str, ...]:
    """Every registered protocol's name, built-ins first; imports none of them."""
    return tuple(_WHERE)


def _load(name: str) -> ProtocolSpec:
    from debatekit.protocols.spec import ProtocolSpec

    where = _WHERE[name]
    if isinstance(where, str):
        module, _, attr = where.partition(":")
        found = getattr(importlib.import_module(module), attr)
        where = found if isinstance(found, ProtocolSpec) else found()
    if not isinstance(where, ProtocolSpec) or where.name != name:
        raise TypeError(f"protocol {name!r} is registered as {_WHERE[name]!r}, which is not its ProtocolSpec")
    return where


class Protocols(Mapping[str, "ProtocolSpec"]):
    """The registry as a read-only mapping, name to spec; a spec is loaded when first looked up."""

    def __getitem__(self, name: str) -> ProtocolSpec:
        if name not in _WHERE:
            raise KeyError(name)
        if name not in _LOADED:
            _LOADED[name] = _load(name)
        return _LOADED[name]

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(_WHERE))

    def __len__(self) -> int:
        return len(_WHERE)

    def __contains__(self, name: object) -> bool:
        return name in _WHERE

    def __repr__(self) -> str:
        return f"Protocols({', '.join(_WHERE)})"


PROTOCOLS = Protocols()
"""Every registered protocol, by name."""


def protocols_of(problem: Problem) -> tuple[str, ...]:
    """The registered protocols whose needs ``problem``'s features meet, in the registry's order."""
    return tuple(name for name, spec in PROTOCOLS.items() if spec.needs <= problem.features)
