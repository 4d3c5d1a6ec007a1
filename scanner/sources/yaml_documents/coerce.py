"""Coerce the attributes read from a YAML configuration to the types the kind schema declares
(``scanner/kinds``): ``"true"`` → True, ``"2"`` → 2; a value that cannot be coerced is UNKNOWN
with the reason, and a notice says so."""

from __future__ import annotations

from typing import Any

from scanner.kinds import schema
from scanner.kinds.coerce import Notice, coerce_fields, garbage, to_bool, to_int, to_number
from scanner.kinds.types import Bool, FieldType, Ids, Int, List, Map, Num, Price, Str
from scanner.model import Unknown
from scanner.sane_numbers import sane_number, sane_number_text


def coerce(kind: str, attrs: dict[str, Any], notice: Notice) -> dict[str, Any]:
    fields = schema().fields(kind)

    def convert(t: FieldType, key: str, value: Any) -> Any:
        if isinstance(t, Bool):
            return to_bool(key, value, notice)
        if isinstance(t, Int):
            return to_int(key, value, notice)
        if isinstance(t, Num):
            return to_number(key, value, notice)
        if isinstance(t, Price):
            return _price(key, value, notice)
        if isinstance(t, Ids):
            if isinstance(value, str):
                return [p.strip() for p in value.split(",") if p.strip()]
            return value
        return value

    return _shapes(fields, coerce_fields(fields, attrs, convert), notice)


def _shapes(fields: dict[str, FieldType], attrs: dict[str, Any], notice: Notice,
            where: str = "") -> dict[str, Any]:
    """A list written as a scalar, a block written as a list: Unknown, with a notice (the
    coercion above leaves shapes as they are)."""
    out = dict(attrs)
    for key, value in attrs.items():
        t = fields.get(key)
        if t is None or value is None or isinstance(value, Unknown):
            continue
        if isinstance(t, List) and not isinstance(value, list):
            out[key] = garbage(where + key, value, "a list", notice)
        elif isinstance(t, Map) and not isinstance(value, dict):
            out[key] = garbage(where + key, value, "a mapping", notice)
        elif isinstance(t, List) and hasattr(t.item, "fields"):
            out[key] = [_shapes(dict(t.item.fields), v, notice, f"{where}{key}[].")  # type: ignore[attr-defined]
                        if isinstance(v, dict) else v for v in value]
        elif hasattr(t, "fields") and not isinstance(t, Str):
            if isinstance(value, dict):
                out[key] = _shapes(dict(t.fields), value, notice, f"{where}{key}.")  # type: ignore[attr-defined]
            else:
                out[key] = garbage(where + key, value, "a mapping", notice)
    return out


def _price(key: str, value: Any, notice: Notice) -> Any:
    """Prices stay text as AWS spells them; a number becomes its text."""
    if isinstance(value, bool):
        return garbage(key, value, "a price", notice)
    if isinstance(value, int | float):
        checked = sane_number(value)
        return garbage(key, value, "a usable price", notice) if isinstance(checked, Unknown) \
            else str(value)
    if isinstance(value, str):
        if isinstance(sane_number_text(value), Unknown):
            return garbage(key, value, "a usable price", notice)
        return value
    return garbage(key, value, "a price", notice)
