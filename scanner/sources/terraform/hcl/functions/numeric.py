"""Numeric functions: ``abs``, ``ceil``, ``floor``, ``log``, ``pow``, ``parseint`` ….
"""

from __future__ import annotations

import math
from typing import Any

from scanner.sources.terraform.hcl.functions.registry import (
    value_fn,
)
from scanner.sources.terraform.hcl.values import (
    EvalError,
    norm_number,
    to_number,
    to_str,
)

# numbers
# ---------------------------------------------------------------------------------------------


@value_fn("abs")
def f_abs(n: Any) -> Any:
    return abs(to_number(n))


@value_fn("ceil")
def f_ceil(n: Any) -> Any:
    return math.ceil(to_number(n))


@value_fn("floor")
def f_floor(n: Any) -> Any:
    return math.floor(to_number(n))


@value_fn("log")
def f_log(n: Any, base: Any) -> Any:
    return norm_number(math.log(to_number(n), to_number(base)))


@value_fn("pow")
def f_pow(a: Any, b: Any) -> Any:
    x, y = to_number(a), to_number(b)
    if abs(y) > 1024:
        raise EvalError("pow: exponent too large")
    return norm_number(math.pow(x, y))


@value_fn("signum")
def f_signum(n: Any) -> Any:
    x = to_number(n)
    return (x > 0) - (x < 0)


@value_fn("parseint")
def f_parseint(s: Any, base: Any) -> Any:
    text = to_str(s)
    radix = int(to_number(base))
    # Python's int() also takes blanks, "_" and a 0x/0o/0b prefix; terraform takes only an
    # optional sign and the base's ASCII digits
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not 2 <= radix <= 62 or not digits or not digits.isascii() or not digits.isalnum() \
            or any(int(c, 36) >= radix for c in digits.lower()):
        raise EvalError(f"parseint: cannot parse {text[:40]!r} in base {radix}")
    try:
        return int(text, radix)
    except ValueError as exc:
        raise EvalError(f"parseint: {exc}") from None


# ---------------------------------------------------------------------------------------------
