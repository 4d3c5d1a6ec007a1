"""Numbers from an input file, made safe at the door.

A template or plan may hold ``.nan``, ``.inf``, ``NaN``, ``1e308`` or an integer of thousands of
digits. None is a real size, count or price; each would crash arithmetic later, or be written as
``Infinity`` (not JSON). Both IaC readers and the Terraform translators pass numbers through
:func:`sane_number`, which turns them into :class:`~scanner.model.Unknown` with the reason.
"""

from __future__ import annotations

import math
import re
from typing import Any

from scanner.model import Unknown

# Larger than any size, count, capacity or price in AWS (2**53 is where floats lose integers).
MAX_MAGNITUDE = 10**15
NOT_FINITE = "not a finite number"
TOO_LARGE = "too large (more than 1e15)"
# Numbers as AWS, CloudFormation and terraform spell them in text. Python's int() and float()
# also take "1_000", "١٢" (any Unicode digits) and surrounding blanks, which none of them accept.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INTEGER = re.compile(r"[+-]?[0-9]+")
# One shared (frozen) Unknown per reason: an input of a million absurd numbers holds a million
# references to it, not a million objects.
_NOT_FINITE = Unknown(NOT_FINITE)
_TOO_LARGE = Unknown(TOO_LARGE)


def parse_decimal(text: str) -> float:
    """The number ``text`` spells in ASCII decimal (``0.5``, ``1e3``); ValueError otherwise."""
    if _DECIMAL.fullmatch(text) is None:
        raise ValueError(f"not a decimal number: {text[:40]!r}")
    return float(text)


def parse_integer(text: str) -> int:
    """The integer ``text`` spells in ASCII digits; ValueError otherwise."""
    if _INTEGER.fullmatch(text) is None:
        raise ValueError(f"not an integer: {text[:40]!r}")
    return int(text)


def sane_number(value: Any) -> Any:
    """``value`` itself, unless it is a non-finite or absurdly large number: then Unknown."""
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return _NOT_FINITE
        if abs(value) > MAX_MAGNITUDE:
            return _TOO_LARGE
    elif isinstance(value, int) and not -MAX_MAGNITUDE <= value <= MAX_MAGNITUDE:
        return _TOO_LARGE
    return value


def sane_number_text(text: str) -> Any:
    """A number written as text ("0.5", "1e308", "nan"): the text, or Unknown when the number it
    spells is not finite or absurdly large. Text that is not a number is returned as it is."""
    try:
        number = float(text)
    except (TypeError, ValueError, OverflowError):
        return text
    checked = sane_number(number)
    return checked if isinstance(checked, Unknown) else text
