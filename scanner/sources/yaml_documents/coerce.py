"""Coerce the attributes read from a YAML configuration to the types the kind schema declares
(``scanner/kinds``): ``"true"`` → True, ``"2"`` → 2; a value that cannot be coerced is UNKNOWN
with the reason, and a notice says so."""

from __future__ import annotations

from typing import Any

from scanner.inputs.numbers import sane_number, sane_number_text
from scanner.kinds import schema
from scanner.kinds.coerce import Notice, coerce_fields, garbage, to_bool, to_int, to_number
from scanner.kinds.types import (
    AsGiven,
    Bool,
    FieldType,
    Ids,
    Int,
    Json,
    List,
    Map,
    Num,
    Obj,
    Price,
    Str,
)
from scanner.kinds.types import Ref as RefTo
from scanner.model import Ref, Unknown


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

    return shapes(fields, coerce_fields(fields, attrs, convert), notice)


_SCALARS = (Str, Int, Bool, Num, Price)


def shapes(fields: dict[str, FieldType], attrs: dict[str, Any], notice: Notice,
           where: str = "") -> dict[str, Any]:
    """Values of the wrong shape, as the kind schema declares it, become Unknown with a notice
    naming the key: a list written where one value is expected (``InstanceTypes:
    [["p3.2xlarge"]]``, ``MaxSize: [4]``), a mapping where a list or a value is, a value where
    a list or a mapping is (the coercion leaves shapes as they are). Shared by every source
    that reads text formats (CloudFormation, eksctl, Karpenter, ParallelCluster)."""
    out = dict(attrs)
    for key, value in attrs.items():
        t = fields.get(key)
        if t is not None:
            out[key] = _shape(t, where + key, value, notice)
    return out


def _shape(t: FieldType, path: str, value: Any, notice: Notice) -> Any:
    if value is None or isinstance(value, Unknown | Ref) or isinstance(t, AsGiven | Json):
        return value
    if isinstance(t, Ids):
        return value if isinstance(value, list | str) else garbage(path, value, "a list of ids",
                                                                     notice)
    if isinstance(t, List):
        if not isinstance(value, list):
            return garbage(path, value, "a list", notice)
        return [_shape(t.item, f"{path}[{i}]", v, notice) for i, v in enumerate(value)]
    if isinstance(t, Map):
        if not isinstance(value, dict):
            return garbage(path, value, "a mapping", notice)
        return {k: _shape(t.value, f"{path}.{k}", v, notice) for k, v in value.items()}
    if isinstance(t, Obj):
        if not isinstance(value, dict):
            return garbage(path, value, "a mapping", notice)
        return shapes(dict(t.fields), value, notice, f"{path}.")
    if isinstance(t, (*_SCALARS, RefTo)) and isinstance(value, list | dict):
        return garbage(path, value, "a single value", notice)
    return value


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
