"""Type conversion and identity: ``tostring``, ``tonumber``, ``tobool``, ``sensitive``.
"""

from __future__ import annotations

from typing import Any

from scanner.model import Ref
from scanner.sources.terraform.hcl.functions.registry import (
    raw_fn,
)
from scanner.sources.terraform.hcl.values import (
    EvalError,
    as_unknown,
    is_opaque,
    mark_sensitive,
    to_bool,
    to_number,
    to_str,
    type_name,
)

# ---------------------------------------------------------------------------------------------
# type conversion and identity
# ---------------------------------------------------------------------------------------------


@raw_fn("tostring")
def f_tostring(v: Any) -> Any:
    if is_opaque(v) or v is None:
        return as_unknown(v) if isinstance(v, Ref) else v
    if isinstance(v, (list, dict)):
        raise EvalError(f"cannot convert a {type_name(v)} to a string")
    return to_str(v)


@raw_fn("tonumber")
def f_tonumber(v: Any) -> Any:
    if is_opaque(v) or v is None:
        return as_unknown(v) if isinstance(v, Ref) else v
    return to_number(v)


@raw_fn("tobool")
def f_tobool(v: Any) -> Any:
    if is_opaque(v) or v is None:
        return as_unknown(v) if isinstance(v, Ref) else v
    return to_bool(v)


@raw_fn("sensitive")
def f_sensitive(v: Any) -> Any:
    mark_sensitive(v)
    return v


@raw_fn("nonsensitive")
def f_identity(v: Any) -> Any:
    return v  # what was marked stays redacted: a report is no place to reveal it
