"""The coercions shared by every Terraform translator.

Translators map names only; every value is then coerced to the type the kind schema
(``scanner/kinds``) declares for it, the same types CloudFormation is coerced to, by ``_coerce``.
``_pairs`` / ``_sub`` copy set values under their AWS names ("" is terraform's "unset");
``_blocks`` / ``_one`` read nested blocks (a list of dicts, a single dict, or an Unknown).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, TypeGuard

from scanner.inputs.numbers import parse_decimal, parse_integer, sane_number, sane_number_text
from scanner.kinds import schema
from scanner.kinds import types as kt
from scanner.kinds.coerce import coerce_fields
from scanner.kinds.types import FieldType
from scanner.model import Ref, Unknown

Attrs = dict[str, Any]
# A translator returns (kind, attrs, name, extra aliases).
Translator = Callable[[Mapping[str, Any]], tuple[str, Attrs, Any, tuple[str, ...]]]
_SCHEMA = schema()


def _s(value: Any) -> Any:
    """A string-ish value; "" is terraform's "unset"."""
    if value is None or value == "":
        return None
    return value


def _bool(value: Any) -> Any:
    """A bool as terraform converts one: the strings "true"/"1" and "false"/"0" exactly; a
    number is no bool (terraform refuses ``encrypted = 1`` and ``encrypted = "TRUE"``)."""
    if value is None or isinstance(value, bool | Unknown | Ref):
        return value
    if isinstance(value, str):
        if value == "":
            return None
        if value in ("true", "1"):
            return True
        if value in ("false", "0"):
            return False
    return Unknown(f"not a boolean: {str(value)[:40]!r}")


def _int(value: Any) -> Any:
    if value is None or isinstance(value, Unknown | Ref):
        return value
    if isinstance(value, bool):
        return Unknown(f"not a number: {value!r}")
    if isinstance(value, int):
        return sane_number(value)
    if isinstance(value, float):
        value = sane_number(value)
        return int(value) if isinstance(value, float) and value.is_integer() else value
    if isinstance(value, str):
        text = value.strip()
        if text == "":
            return None
        if len(text) > 32:
            return Unknown(f"not a usable number: {text[:20]}… ({len(text):,} characters)")
        try:
            return sane_number(parse_integer(text))
        except ValueError:
            try:
                number = sane_number(parse_decimal(text))
            except ValueError:
                return Unknown(f"not a number: {value!r}")
            if isinstance(number, Unknown):
                return number
            return int(number) if number.is_integer() else number
    return Unknown(f"not a number: {value!r}")


def _price(value: Any) -> Any:
    """Prices stay as given (strings, like the AWS API); numbers become their string form;
    "" is terraform's "unset" (a spot fleet launch specification then uses the fleet's price).
    A price that spells a non-finite or absurdly large number is Unknown."""
    if isinstance(value, bool):
        return Unknown(f"not a price: {value!r}")
    if isinstance(value, int | float):
        checked = sane_number(value)
        return checked if isinstance(checked, Unknown) else str(value)
    if isinstance(value, str):
        return None if value == "" else sane_number_text(value)
    return value


def _list(value: Any) -> Any:
    """A list of scalars (ids, names): sets become lists; a lone Ref or string a 1-item list."""
    if value is None or isinstance(value, Unknown):
        return value
    if isinstance(value, Ref):
        return [value]
    if isinstance(value, list | tuple | set | frozenset):
        return [v for v in value if v is not None and v != ""]
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return Unknown(f"not a list: {value!r}")


def _blocks(value: Any) -> Any:
    """Nested blocks: a list of dicts, an Unknown, or None."""
    if value is None or isinstance(value, Unknown):
        return value
    if isinstance(value, Ref):
        return Unknown(f"block given as a reference to {value}")
    if isinstance(value, list):
        return [b for b in value if isinstance(b, dict | Unknown) or _is_map(b)]
    if _is_map(value):
        return [value]
    if isinstance(value, tuple):
        return [b for b in value if isinstance(b, Mapping | Unknown)]
    return Unknown(f"not a block: {value!r}")


def _one(value: Any) -> Any:
    """A single nested block (MaxItems 1): a dict, an Unknown, or None."""
    blocks = _blocks(value)
    if isinstance(blocks, Unknown):
        return blocks
    if not blocks:
        return None
    return blocks[0]


def _json_doc(value: Any) -> Any:
    """A policy document: JSON text parsed into a dict."""
    if value is None or value == "" or isinstance(value, Unknown | Ref | dict):
        return None if value == "" else value
    if isinstance(value, str):
        try:
            doc = json.loads(value)
        except ValueError:
            return Unknown("policy document is not valid JSON")
        return doc if isinstance(doc, dict) else Unknown("policy document is not a JSON object")
    return Unknown(f"not a policy document: {type(value).__name__}")


def _price_or_explicit_unset(value: Any) -> Any:
    # "" reaches here only where a translator kept it on purpose (an ASG's spot_max_price: AWS's
    # explicit "cap at the on-demand price"); elsewhere _pairs drops it as terraform's "unset".
    return value if value == "" else _price(value)


_CONVERTERS: dict[type[FieldType], Callable[[Any], Any]] = {
    kt.Bool: _bool, kt.Int: _int, kt.Num: _int, kt.Price: _price_or_explicit_unset,
    kt.Ids: _list, kt.Json: _json_doc}


def _convert(t: FieldType, _key: str, value: Any) -> Any:
    conv = _CONVERTERS.get(type(t))
    return value if conv is None else conv(value)


def _coerce(kind: str, attrs: Attrs) -> Attrs:
    """The attributes with each value coerced to its declared type (docs/resource-model.md)."""
    return coerce_fields(_SCHEMA.fields(kind), attrs, _convert)


def _put(d: Attrs, key: str, value: Any) -> None:
    if value is not None:
        d[key] = value


def _pairs(d: Attrs, src: Mapping[str, Any], spec: tuple[tuple[str, str], ...]) -> Attrs:
    """d[aws_key] = src[tf_key] for each (tf_key, aws_key) that is set ("" is terraform's
    "unset"). The value is coerced to its declared type afterwards (see ``_coerce``)."""
    get = src.get
    for tf_key, aws_key in spec:
        value = get(tf_key)
        if value is None or value == "":
            continue
        d[aws_key] = value
    return d


def _sub(src: Any, spec: tuple[tuple[str, str], ...]) -> Any:
    """Translate one optional nested block with a flat spec; None when absent or empty."""
    block = _one(src)
    if block is None or isinstance(block, Unknown):
        return block
    out = _pairs({}, block, spec)
    return out or None


def _is_map(value: Any) -> TypeGuard[Mapping[Any, Any]]:
    return isinstance(value, dict) or (value is not None and isinstance(value, Mapping))
