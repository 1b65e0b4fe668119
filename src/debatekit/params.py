"""Declared parameters of problems and protocols, set on the command line as ``-P NAME=VALUE``.

A parameter set is a frozen dataclass whose fields are the parameters, each declared with
:func:`param` (its type is the field's annotation: ``int``, ``float``, or a ``StrEnum`` of named
choices such as stochastic debate's constants; the declaration gives the default, a one-line
description and, for numbers, the admissible range). A problem or protocol with no
parameters declares :class:`NoParams`. :func:`bind` parses ``NAME=VALUE`` texts against one or
more such declarations, checks each value's type and range, and returns one instance of each,
the defaults filled in; any mistake is a :class:`ParamError` with a one-line message.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, Self, TypeVar

Value = int | float | StrEnum


class ParamError(ValueError):
    """An unknown parameter name, or a value that is not of its type or not in its range."""


@dataclass(frozen=True)
class Bounds:
    """A closed or open interval of admissible values (an absent end is unbounded)."""

    low: Value | None = None
    high: Value | None = None
    open_low: bool = False
    open_high: bool = False

    def admits(self, value: Value) -> bool:
        low_ok = self.low is None or (value > self.low if self.open_low else value >= self.low)
        high_ok = self.high is None or (value < self.high if self.open_high else value <= self.high)
        return low_ok and high_ok

    def __str__(self) -> str:
        if self.low is None and self.high is None:
            return "any"
        left = "(-inf" if self.low is None else f"{'(' if self.open_low else '['}{self.low}"
        right = "inf)" if self.high is None else f"{self.high}{')' if self.open_high else ']'}"
        return f"{left}, {right}"


def param(
    default: Value,
    description: str,
    *,
    low: Value | None = None,
    high: Value | None = None,
    open_low: bool = False,
    open_high: bool = False,
) -> Any:
    """A parameter field of a frozen dataclass: its default, description and admissible range."""
    bounds = Bounds(low, high, open_low, open_high)
    if not bounds.admits(default):
        raise ValueError(f"default {default} is outside {bounds}")
    return field(default=default, metadata={"param": (description, bounds)})


@dataclass(frozen=True)
class Param:
    """One declared parameter, as read from its dataclass field."""

    name: str
    kind: type[int] | type[float] | type[StrEnum]
    default: Value
    description: str
    bounds: Bounds

    @property
    def admitted(self) -> str:
        """What it admits, in words: its choices, or its range."""
        return "|".join(self.kind) if issubclass(self.kind, StrEnum) else str(self.bounds)

    def parse(self, text: str) -> Value:
        """The value ``text`` names, checked against the type and range (ParamError otherwise)."""
        if issubclass(self.kind, StrEnum):
            try:
                return self.kind(text.strip())
            except ValueError:
                raise ParamError(f"parameter {self.name} is one of {', '.join(self.kind)}, got {text!r}") from None
        try:
            value = self.kind(text.strip())
        except ValueError:
            raise ParamError(f"parameter {self.name} takes {self.kind.__name__}, got {text!r}") from None
        if not math.isfinite(value) or not self.bounds.admits(value):
            raise ParamError(f"parameter {self.name} must be in {self.bounds}, got {text!r}")
        return value


@dataclass(frozen=True)
class NoParams:
    """The declaration of something without parameters."""


def declared(params: type) -> tuple[Param, ...]:
    """The parameters a frozen dataclass declares, in field order."""
    hints = typing.get_type_hints(params)
    found = []
    for f in dataclasses.fields(params):
        description, bounds = f.metadata["param"]
        kind = hints[f.name]
        if kind not in (int, float) and not (isinstance(kind, type) and issubclass(kind, StrEnum)):
            raise TypeError(f"parameter {params.__name__}.{f.name} must be int, float or a StrEnum, not {kind}")
        found.append(Param(f.name, kind, f.default, description, bounds))
    return tuple(found)


def split(assignment: str) -> tuple[str, str]:
    """``NAME=VALUE`` as (name, value text)."""
    name, equals, text = assignment.partition("=")
    if not equals or not name.strip() or not text.strip():
        raise ParamError(f"a parameter is NAME=VALUE, got {assignment!r}")
    return name.strip(), text


def bind(assignments: Iterable[str], declarations: Sequence[type], owner: str) -> tuple[Any, ...]:
    """One instance of each declaration, with the values ``assignments`` set. Every name must be
    declared by exactly one of ``declarations`` and given at most once; ``owner`` names what is
    being configured, for the messages."""
    by_name: dict[str, tuple[int, Param]] = {}
    for i, declaration in enumerate(declarations):
        for p in declared(declaration):
            if p.name in by_name:
                raise ValueError(f"parameter {p.name} is declared twice for {owner}")
            by_name[p.name] = (i, p)
    values: list[dict[str, Value]] = [{} for _ in declarations]
    for assignment in assignments:
        name, text = split(assignment)
        if name not in by_name:
            known = ", ".join(by_name) or "none"
            raise ParamError(f"unknown parameter {name!r} for {owner}; its parameters: {known}")
        i, declaration = by_name[name]
        if name in values[i]:
            raise ParamError(f"parameter {name} is given twice")
        values[i][name] = declaration.parse(text)
    try:  # a declaration may check its values together in __post_init__
        return tuple(declaration(**chosen) for declaration, chosen in zip(declarations, values, strict=True))
    except ValueError as err:
        raise ParamError(str(err)) from err


class Declaring(Protocol):
    """What :class:`Settings` reads of a problem (:class:`~debatekit.problems.registry.Problem`):
    its name and its declaration. Stated here, below the problems, so this module imports none."""

    @property
    def name(self) -> str: ...

    @property
    def params(self) -> type: ...


class Configured(Protocol):
    """What :class:`Settings` reads of a protocol (:class:`~debatekit.protocols.spec.ProtocolSpec`):
    its name, its values, and itself playing others."""

    @property
    def name(self) -> str: ...

    @property
    def params(self) -> Any: ...

    def with_params(self, values: Any) -> Self: ...


C = TypeVar("C", bound=Configured)


@dataclass(frozen=True)
class Settings:
    """Parameter values by problem and by protocol name, for a job over many of them (the demo);
    an absent name plays its defaults."""

    problems: Mapping[str, Any] = field(default_factory=dict)
    protocols: Mapping[str, Any] = field(default_factory=dict)

    def problem(self, found: Declaring) -> Any:
        """The values ``found`` plays."""
        return self.problems.get(found.name, found.params())

    def protocol(self, spec: C) -> C:
        """``spec`` playing its values."""
        return spec.with_params(self.protocols.get(spec.name, spec.params))


DEFAULTS = Settings()
"""Every problem and protocol at its defaults."""


def bind_everywhere(
    assignments: Iterable[str], problems: Mapping[str, type], protocols: Mapping[str, type]
) -> Settings:
    """Each ``NAME=VALUE`` set in every declaration (of a problem or a protocol, by name) that
    has NAME; a name none of them declares is a ParamError."""
    texts: dict[str, str] = {}
    for assignment in assignments:
        name, text = split(assignment)
        if name in texts:
            raise ParamError(f"parameter {name} is given twice")
        texts[name] = text
    known = {p.name for declaration in (*problems.values(), *protocols.values()) for p in declared(declaration)}
    if unknown := sorted(texts.keys() - known):
        raise ParamError(f"unknown parameter {unknown[0]!r}; the parameters are: {', '.join(sorted(known))}")

    def each(declarations: Mapping[str, type]) -> dict[str, Any]:
        return {
            owner: bind((f"{p.name}={texts[p.name]}" for p in declared(d) if p.name in texts), (d,), owner)[0]
            for owner, d in declarations.items()
        }

    return Settings(each(problems), each(protocols))


def as_dict(params: Any) -> dict[str, Value]:
    """The values of a parameter set, by name."""
    return dataclasses.asdict(params)
