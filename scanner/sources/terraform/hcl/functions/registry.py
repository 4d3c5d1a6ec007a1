"""The function table and what every family shares: the registration decorators, argument
checks, the guard that turns an opaque part into Unknown, sets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scanner.model import Ref, Unknown
from scanner.sources.terraform.hcl.values import (
    MAX_ITEMS,
    BudgetExceeded,
    EvalError,
    Lazy,
    TSet,
    as_unknown,
    charge,
    first_opaque,
    is_opaque,
    type_name,
)

FUNCTIONS: dict[str, Callable[..., Any]] = {}


def value_fn(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Needs fully known arguments."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any) -> Any:
            for a in args:
                o = first_opaque(a)
                if o is not None:
                    return as_unknown(o)
            return fn(*args)

        for n in names:
            FUNCTIONS[n] = wrapper
        return fn

    return deco


def struct_fn(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Needs known arguments at the top level only; elements may be unknown."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any) -> Any:
            for a in args:
                if is_opaque(a):
                    return as_unknown(a)
            return fn(*args)

        for n in names:
            FUNCTIONS[n] = wrapper
        return fn

    return deco


def raw_fn(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Handles unknown arguments itself."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        for n in names:
            FUNCTIONS[n] = fn
        return fn

    return deco


def _list(v: Any, what: str = "argument") -> list[Any]:
    if isinstance(v, list):
        return v
    if isinstance(v, Lazy):
        items = v.items()
        if isinstance(items, Unknown):
            raise _Opaque(items)
        return [x for _, x in items]
    raise EvalError(f"{what} must be a list, not a {type_name(v)}")


def _map(v: Any, what: str = "argument") -> dict[str, Any]:
    if isinstance(v, dict):
        return v
    if isinstance(v, Lazy):
        items = v.items()
        if isinstance(items, Unknown):
            raise _Opaque(items)
        return {str(k): x for k, x in items}
    raise EvalError(f"{what} must be a map or object, not a {type_name(v)}")


class _Opaque(Exception):
    def __init__(self, unknown: Unknown) -> None:
        super().__init__(unknown.reason)
        self.unknown = unknown


def _guard(fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any) -> Any:
        try:
            return fn(*args)
        except _Opaque as exc:
            return exc.unknown

    return wrapper


def _size(n: int) -> None:
    if n > MAX_ITEMS:
        raise BudgetExceeded(f"collection too large ({n:,} elements; limit {MAX_ITEMS:,})")


def _hashable(v: Any) -> Any:
    charge()
    if isinstance(v, dict):
        return ("d", tuple(sorted((k, _hashable(x)) for k, x in v.items())))
    if isinstance(v, list):
        return ("l", tuple(_hashable(x) for x in v))
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, (int, float)):
        return ("n", v)
    return ("o", v) if isinstance(v, (str, Ref, Unknown)) or v is None else ("x", id(v))


def make_set(items: list[Any]) -> TSet:
    seen: set[Any] = set()
    out: list[Any] = []
    for x in items:
        h = _hashable(x)
        if h not in seen:
            seen.add(h)
            out.append(x)
    if all(isinstance(x, str) for x in out) or all(
        isinstance(x, (int, float)) and not isinstance(x, bool) for x in out
    ):
        out.sort()
    return TSet(out)
