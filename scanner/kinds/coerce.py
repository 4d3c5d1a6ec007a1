"""Coerce a resource's attributes to the schema's types, path by path.

A source gives the conversion of a scalar (``convert(type, key, value)``: CloudFormation turns
"2" into 2 and reports garbage; see ``scanner.sources.cloudformation.reader``); this walk decides
which conversion applies where, from the kind's declared attributes. Attributes the schema does
not declare are carried as given, and so are ``None``, :class:`~scanner.model.Unknown` and
:class:`~scanner.model.Ref` values (except a ``Ref`` where a list of ids is declared: the source
decides whether it becomes a one-item list).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

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
