"""Reading AWS-typed values the way policies need them: prices, counts, lists, positions."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from scanner.inputs.numbers import parse_decimal
from scanner.model import Unknown


def as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return list(value)
    return [value]


def iter_dicts(value: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """(position, item) of each mapping in a list (other items are skipped, positions kept)."""
    for i, item in enumerate(as_list(value)):
        if isinstance(item, dict):
            yield i, item


def to_price(value: Any) -> float | Unknown | None:
    """A max price as AWS spells it ("0.50", 0.5). None for absent, null or ""."""
    if isinstance(value, Unknown):
        return value
    if value is None or value == "":
        return None
    try:
        price = parse_decimal(value.strip()) if isinstance(value, str) else float(value)
    except (TypeError, ValueError, OverflowError):
        return Unknown(f"max price {str(value)[:40]!r} is not a usable number")
    if not math.isfinite(price) or not 0 <= price <= 1e9:
        return Unknown(f"bad price {str(value)[:40]!r}")
    return price


def to_int(value: Any) -> int | Unknown | None:
    if isinstance(value, Unknown):
        return value
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return Unknown(f"{value!r} is not a number")
    try:
        number = parse_decimal(value.strip()) if isinstance(value, str) else float(value)
    except (TypeError, ValueError, OverflowError):
        return Unknown(f"{str(value)[:40]!r} is not a number")
    if not math.isfinite(number) or abs(number) > 1e15:
        return Unknown("not a finite number" if not math.isfinite(number) else "too large")
    return int(number)


_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
             "ninth", "tenth")


def ordinal(position: int) -> str:
    """0 -> "first", 1 -> "second", ... 10 -> "11th"."""
    if 0 <= position < len(_ORDINALS):
        return _ORDINALS[position]
    n = position + 1
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
