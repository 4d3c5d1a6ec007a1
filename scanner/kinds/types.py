"""The types of the resource model's attributes: a small language the kind declarations use.

A type knows its name in the docs (``bool``, ``int``, ``list`` …); the sources coerce values to
it (``scanner.kinds.coerce`` for CloudFormation, ``scanner.sources.terraform.translate`` for
Terraform), so the same attribute is the same type whichever source produced it.

Plain classes, not dataclasses: they are created at import on the pre-commit path, where each
dataclass costs its generated methods.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar


class FieldType:
    label: ClassVar[str] = ""  # how the docs name the type ("" = a plain string, not shown)
    __slots__ = ("doc",)

    def __init__(self, *, doc: str = "") -> None:
        self.doc = doc  # a note for the docs, e.g. "live"

    def _args(self) -> dict[str, Any]:
        return {"doc": self.doc} if self.doc else {}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._args().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._args() == self._args()

    # assignment: object's __hash__ is a method; None makes these unhashable (eq by value)
    __hash__ = None  # type: ignore[assignment]


class Str(FieldType):
    """A string as AWS spells it (names, ids, enums)."""

    __slots__ = ()


class AsGiven(FieldType):
    """Carried as the source gives it (no policy reads inside it)."""

    label = "as given"
    __slots__ = ()


class Bool(FieldType):
    label = "bool"
    __slots__ = ()


class Int(FieldType):
    label = "int"
    __slots__ = ()


class Num(FieldType):
    """A number that may be fractional (a weighted capacity)."""

    label = "number"
    __slots__ = ()


class Price(FieldType):
    """A price in $/h, kept as AWS spells it (a string such as "0.50"); policies parse it."""

    label = "price"
    __slots__ = ()


class Json(FieldType):
    """A JSON document (a policy), parsed into a dict by the sources."""

    label = "dict"
    __slots__ = ()


class _Referring(FieldType):
    __slots__ = ("kinds",)

    def __init__(self, *, kinds: tuple[str, ...] = (), doc: str = "") -> None:
        super().__init__(doc=doc)
        self.kinds = kinds

    def _args(self) -> dict[str, Any]:
        return {**super()._args(), "kinds": self.kinds}


class Ref(_Referring):
    """A reference to a resource of one of ``kinds``: its id, name or ARN, or a ``Ref``."""

    __slots__ = ()


class Ids(_Referring):
    """A list of references or ids; a comma-separated string becomes a list."""

    label = "list"
    __slots__ = ()


class Obj(FieldType):
    """A nested object (a block) with its own attributes."""

    __slots__ = ("fields",)

    def __init__(self, fields: Mapping[str, FieldType] | None = None, *, doc: str = "") -> None:
        super().__init__(doc=doc)
        self.fields: Mapping[str, FieldType] = fields or {}

    def _args(self) -> dict[str, Any]:
        return {**super()._args(), "fields": dict(self.fields)}


class List(FieldType):
    """A list of items of one type (usually objects: ``BlockDeviceMappings[]``)."""

    __slots__ = ("item",)

    def __init__(self, item: FieldType | None = None, *, doc: str = "") -> None:
        super().__init__(doc=doc)
        self.item = item if item is not None else Str()

    def _args(self) -> dict[str, Any]:
        return {**super()._args(), "item": self.item}


class Map(FieldType):
    """A mapping of strings to values of one type (``{instance type: price}``)."""

    label = "map"
    __slots__ = ("value",)

    def __init__(self, value: FieldType | None = None, *, doc: str = "") -> None:
        super().__init__(doc=doc)
        self.value = value if value is not None else Str()

    def _args(self) -> dict[str, Any]:
        return {**super()._args(), "value": self.value}
