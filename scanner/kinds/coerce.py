"""Coerce a resource's attributes to the schema's types, path by path.

A source gives the conversion of a scalar (``convert(type, key, value)``: CloudFormation turns
"2" into 2 and reports garbage; see ``scanner.sources.cloudformation.reader``; the scalar
converters the text formats share are at the end of this module); this walk decides
which conversion applies where, from the kind's declared attributes. Attributes the schema does
not declare are carried as given, and so are ``None``, :class:`~scanner.model.Unknown` and
:class:`~scanner.model.Ref` values (except a ``Ref`` where a list of ids is declared: the source
decides whether it becomes a one-item list).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from scanner.inputs.numbers import parse_decimal, parse_integer, sane_number
from scanner.kinds.types import AsGiven, FieldType, Ids, Json, List, Map, Obj, Str
from scanner.kinds.types import Ref as RefTo
from scanner.model import Ref, Unknown

Convert = Callable[[FieldType, str, Any], Any]
_UNCHANGED = (Str, AsGiven, RefTo)


def coerce_fields(fields: Mapping[str, FieldType], attrs: dict[str, Any],
                  convert: Convert) -> dict[str, Any]:
    return {k: (_walk(fields[k], k, v, convert) if k in fields else v) for k, v in attrs.items()}


def _walk(t: FieldType, key: str, value: Any, convert: Convert) -> Any:
    if value is None or isinstance(value, Unknown) or isinstance(t, _UNCHANGED):
        return value
    if isinstance(value, Ref) and not isinstance(t, Ids):  # a lone Ref may be a list's only id
        return value
    if isinstance(t, Obj):
        return coerce_fields(t.fields, value, convert) if isinstance(value, dict) else value
    if isinstance(t, List):
        return [_walk(t.item, key, v, convert) for v in value] if isinstance(value, list) \
            else value
    if isinstance(t, Map):
        return {k: _walk(t.value, k, v, convert) for k, v in value.items()} \
            if isinstance(value, dict) else value
    if isinstance(value, list) and not isinstance(t, Ids | Json):
        return [_walk(t, key, v, convert) for v in value]
    return convert(t, key, value)


# -- scalars written as text (CloudFormation, the YAML formats) ------------------------------------

Notice = Callable[[str], None]


def garbage(key: str, value: Any, what: str, notice: Notice) -> Unknown:
    """``value`` of ``key`` is not ``what``: a notice, and Unknown with the reason."""
    shown = repr(value)
    if len(shown) > 80:
        shown = shown[:60] + f"… ({len(shown):,} characters)"
    notice(f"{key} {shown} is not {what}; treated as unknown")
    return Unknown(f"{key} {shown} is not {what}")


def to_bool(key: str, value: Any, notice: Notice) -> Any:
    """A boolean, or "true"/"false" in any case."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return garbage(key, value, "a boolean", notice)


def to_int(key: str, value: Any, notice: Notice) -> Any:
    """An integer, a whole float, or ASCII digits; absurdly large ones are Unknown."""
    if isinstance(value, bool):
        return garbage(key, value, "an integer", notice)
    if isinstance(value, int):
        number: Any = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and len(value.strip()) <= 17:
        try:
            number = parse_integer(value.strip())
        except ValueError:
            return garbage(key, value, "an integer", notice)
    else:
        return garbage(key, value, "an integer", notice)
    checked = sane_number(number)
    if isinstance(checked, Unknown):
        return garbage(key, value, "a usable integer", notice)
    return checked


def to_number(key: str, value: Any, notice: Notice) -> Any:
    """A number, or ASCII decimal text; an int when whole; absurd ones are Unknown."""
    if isinstance(value, bool):
        return garbage(key, value, "a number", notice)
    if isinstance(value, int | float):
        number: float = value
    else:
        try:
            number = parse_decimal(str(value).strip())
        except ValueError:
            return garbage(key, value, "a number", notice)
    if isinstance(sane_number(number), Unknown):
        return garbage(key, value, "a usable number", notice)
    return int(number) if float(number).is_integer() else number
