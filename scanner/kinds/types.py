"""The types of the resource model's attributes: a small language the kind declarations use.

A type knows its name in the docs (``bool``, ``int``, ``list`` …); the sources coerce values to
it (``scanner.kinds.coerce`` for CloudFormation, ``scanner.sources.terraform.translate`` for
Terraform), so the same attribute is the same type whichever source produced it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar


@dataclass(frozen=True)
class FieldType:
    doc: str = field(default="", kw_only=True)  # a note for the docs, e.g. "live"
    label: ClassVar[str] = ""  # how the docs name the type ("" = a plain string, not shown)


@dataclass(frozen=True)
class Str(FieldType):
    """A string as AWS spells it (names, ids, enums)."""


@dataclass(frozen=True)
class AsGiven(FieldType):
    """Carried as the source gives it (no policy reads inside it)."""

    label: ClassVar[str] = "as given"


@dataclass(frozen=True)
class Bool(FieldType):
    label: ClassVar[str] = "bool"


@dataclass(frozen=True)
class Int(FieldType):
    label: ClassVar[str] = "int"


@dataclass(frozen=True)
class Num(FieldType):
    """A number that may be fractional (a weighted capacity)."""

    label: ClassVar[str] = "number"


@dataclass(frozen=True)
class Price(FieldType):
    """A price in $/h, kept as AWS spells it (a string such as "0.50"); policies parse it."""

    label: ClassVar[str] = "price"


@dataclass(frozen=True)
class Json(FieldType):
    """A JSON document (a policy), parsed into a dict by the sources."""

    label: ClassVar[str] = "dict"


@dataclass(frozen=True)
class Ref(FieldType):
    """A reference to a resource of one of ``kinds``: its id, name or ARN, or a ``Ref``."""

    kinds: tuple[str, ...] = ()


@dataclass(frozen=True)
class Ids(FieldType):
    """A list of references or ids; a comma-separated string becomes a list."""

    kinds: tuple[str, ...] = ()
    label: ClassVar[str] = "list"


@dataclass(frozen=True)
class Obj(FieldType):
    """A nested object (a block) with its own attributes."""

    fields: Mapping[str, FieldType] = field(default_factory=dict)


@dataclass(frozen=True)
class List(FieldType):
    """A list of items of one type (usually objects: ``BlockDeviceMappings[]``)."""

    item: FieldType = field(default_factory=Str)


@dataclass(frozen=True)
class Map(FieldType):
    """A mapping of strings to values of one type (``{instance type: price}``)."""

    value: FieldType = field(default_factory=Str)
    label: ClassVar[str] = "map"
