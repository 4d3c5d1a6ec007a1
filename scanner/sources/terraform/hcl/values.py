"""The values of the HCL evaluator and the operations on them that need no evaluation.

Values: ``str``, ``int``/``float``, ``bool``, ``None`` (null), ``list``, :class:`TSet` (a set),
``dict`` (objects and maps), :class:`~scanner.model.Unknown` (not knowable statically, with a
reason), :class:`~scanner.model.Ref` (another resource's attribute, known only after apply) and
:class:`Lazy` objects (resources and module calls, resolved on access by :mod:`.modules`).
Shared by :mod:`.expressions` (the evaluator) and :mod:`.functions` (the built-in functions), so
that neither imports the other's internals: the evaluator imports the functions, never the
other way round. The work budget lives here too.
"""

from __future__ import annotations

import math
from typing import Any

from scanner.inputs.numbers import parse_decimal, parse_integer
from scanner.model import Ref, Unknown

# The budgets: every amplification a small file can ask for is bounded, per root module.
MAX_ITEMS = 100_000  # no collection may grow beyond this (range, for, setproduct …)
MAX_STRING = 16 * 1024 * 1024  # no string may grow beyond this (characters)
MAX_DECODE = 5 * 1024 * 1024  # jsondecode / yamldecode input, as a source file
STRING_BUDGET = 256 * 1024 * 1024  # characters of strings built in all, per root module
WORK_BUDGET = 5_000_000  # units of work (iterations, value nodes walked) per root module
INSTANCE_BUDGET = 50_000  # resource and module instances (count / for_each), per root module
MAX_NUMBER = 2**53  # a number leaving the evaluator beyond ±this is Unknown (no AWS value is)
MAX_INTERNAL = 1.7976931348623157e308  # numbers inside: finite, and ints no bigger than floats
NEVER_NULL = frozenset({"id", "arn"})  # computed attributes never null once applied


class EvalError(Exception):
    """What terraform would report as an error while evaluating an expression."""


class BudgetExceeded(EvalError):
    """Past one of the budgets above: the value is an input error naming the expression (never
    an Unknown that ``try`` / ``can`` could turn into a fallback value)."""

    reported = False  # set once an InputError names where it happened
    quiet = False  # the work budget, once spent: everything after fails alike, unreported


_LEFT = WORK_BUDGET
_STRING_LEFT = STRING_BUDGET
_INSTANCES_LEFT = INSTANCE_BUDGET
# The strings of values terraform marks sensitive (sensitive variables and outputs,
# sensitive()), and strings functions derived from them, per root module: the report redacts
# every string that contains one.
SENSITIVE: set[str] = set()


def reset_budget(units: int = WORK_BUDGET, strings: int = STRING_BUDGET,
                 instances: int = INSTANCE_BUDGET) -> None:
    """Start new budgets (one set per root module): hostile or absurd code (nested loops,
    values that double at each step, modules fanned out) stops with BudgetExceeded instead of
    hanging or exhausting memory."""
    global _LEFT, _STRING_LEFT, _INSTANCES_LEFT
    _LEFT = units
    _STRING_LEFT = strings
    _INSTANCES_LEFT = instances
    SENSITIVE.clear()
    for forget in ON_RESET:
        forget()


ON_RESET: list[Any] = []  # what else is per root module (the functions' caches): cleared too


def mark_sensitive(v: Any, depth: int = 0) -> None:
    """Record every string leaf of v as sensitive, and a map's keys (terraform marks the whole
    value: ``for_each = var.secret_map`` names instances by them); empty strings redact
    nothing."""
    if isinstance(v, str):
        if v:
            SENSITIVE.add(v)
    elif depth < 32 and isinstance(v, (list, dict)):
        if isinstance(v, dict):
            SENSITIVE.update(k for k in v if isinstance(k, str) and k)
        for x in v.values() if isinstance(v, dict) else v:
            mark_sensitive(x, depth + 1)


def holds_sensitive(v: Any) -> bool:
    """Whether a string leaf of v contains a sensitive string (True too when v is too big to
    look through: a value derived from it is then treated as secret)."""
    stack = [v]
    seen = 0
    while stack:
        x = stack.pop()
        seen += 1
        if seen > 10_000:
            return True
        if isinstance(x, str):
            # a short secret (a chunk: substr(var.secret, 0, 3)) taints the same string only:
            # as a part of every other string it would taint most of them
            if x in SENSITIVE or any(len(s) >= SHORT_SECRET and s in x for s in SENSITIVE):
                return True
        elif isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return False


SHORT_SECRET = 4  # scanner.findings.redact.MIN_SENSITIVE: shorter secrets are not found in reports
_SHORT: list[Any] = [0, frozenset()]  # (len(SENSITIVE) when computed, the short ones)


def hide_short_secrets(v: Any, depth: int = 0) -> Any:
    """``v`` with every string that is a sensitive value too short for a report's redaction to
    find (``substr(var.secret, 0, 3)``: shorter than :data:`SHORT_SECRET`) made UNKNOWN, so
    that it never reaches a report. ``v`` itself when there is none (no copy)."""
    if _SHORT[0] != len(SENSITIVE):
        _SHORT[:] = [len(SENSITIVE), frozenset(s for s in SENSITIVE if len(s) < SHORT_SECRET)]
    short = _SHORT[1]
    if not short:
        return v
    return _hide(v, short, depth)


def _hide(v: Any, short: frozenset[str], depth: int) -> Any:
    if isinstance(v, str):
        return Unknown("a sensitive value") if v in short else v
    if depth > 32:
        return v
    if isinstance(v, dict):
        return {k: _hide(x, short, depth + 1) for k, x in v.items() if k not in short}
    if isinstance(v, list):
        return type(v)(_hide(x, short, depth + 1) for x in v) if isinstance(v, TSet) else \
            [_hide(x, short, depth + 1) for x in v]
    return v


def string_leaves(v: Any, out: set[str], depth: int = 0) -> set[str]:
    if isinstance(v, str):
        out.add(v)
    elif depth < 32 and isinstance(v, (list, dict)):
        if isinstance(v, dict):
            out.update(k for k in v if isinstance(k, str))
        for x in v.values() if isinstance(v, dict) else v:
            string_leaves(x, out, depth + 1)
    return out


def budget_exhausted() -> bool:
    return _LEFT < 0


def work_used() -> int:
    """Units of work charged since the last reset (for tests and benchmarks)."""
    return WORK_BUDGET - _LEFT


def charge(units: int = 1) -> None:
    global _LEFT
    first = _LEFT >= 0
    _LEFT -= units
    if _LEFT < 0:
        exc = BudgetExceeded(
            f"evaluation stopped: too much work (more than {WORK_BUDGET:,} steps in this root "
            "module; a runaway expression?)"
        )
        exc.reported = exc.quiet = not first
        raise exc


def check_string(length: int) -> None:
    """Refuse, before building it, a string longer than MAX_STRING."""
    if length > MAX_STRING:
        raise BudgetExceeded(
            f"string too long ({length:,} characters; limit {MAX_STRING:,})"
        )


def charge_string(length: int) -> None:
    """Count a string built (the total per root module is bounded too)."""
    global _STRING_LEFT
    check_string(length)
    _STRING_LEFT -= length
    if _STRING_LEFT < 0:
        raise BudgetExceeded(
            f"evaluation stopped: more than {STRING_BUDGET:,} characters of strings built in "
            "this root module"
        )


def charge_instances(n: int, what: str) -> None:
    """Count resource or module instances; past the budget, ``what`` is an input error."""
    global _INSTANCES_LEFT
    if n > _INSTANCES_LEFT:
        raise BudgetExceeded(
            f"{what}: {n:,} more instances would exceed the limit of {INSTANCE_BUDGET:,} "
            "resource and module instances per root module"
        )
    _INSTANCES_LEFT -= n


class TSet(list):  # type: ignore[type-arg]
    """A set value (``toset``, ``set(...)`` variables): a list without duplicates."""


class GroupRefs(list):  # type: ignore[type-arg]
    """The ids of every instance of a resource with count / for_each (``aws_subnet.a[*].id``):
    a list of per-instance Refs that can be indexed and iterated, and that stands for one
    ``Ref`` to the whole group when it ends up in a resource's values."""

    def __init__(self, items: list[Any], ref: Ref) -> None:
        super().__init__(items)
        self.ref = ref


class Lazy:
    """A value resolved on access: a resource, a group of resource instances, a module call."""

    def get_attr(self, name: str) -> Any:
        raise EvalError(f'unsupported attribute "{name}"')

    def index(self, key: Any) -> Any:
        raise EvalError("this value cannot be indexed")

    def splat(self, ops: tuple[Any, ...], scope: Scope) -> Any:
        """The splat's result, or None: apply the operations to the whole value (one item)."""
        return None

    def items(self) -> list[tuple[Any, Any]] | Unknown:
        raise EvalError("this value cannot be iterated")

    def materialize(self) -> Any:
        return Unknown("a whole resource or module object")


class Scope:
    """Names visible to an expression: local bindings (for-expression and iterator variables,
    count/each) over a resolver (the module instance) that knows var/local/resources/…"""

    __slots__ = ("bindings", "resolver")

    def __init__(self, resolver: Any, bindings: dict[str, Any] | None = None) -> None:
        self.resolver = resolver
        self.bindings = bindings or {}

    def child(self, extra: dict[str, Any]) -> Scope:
        b = dict(self.bindings)
        b.update(extra)
        return Scope(self.resolver, b)


class _NoReferences:
    def resolve(self, root: str, ops: tuple[Any, ...], scope: Scope) -> tuple[Any, int]:
        raise EvalError(f'"{root}" cannot be referenced here (only literal values are allowed)')


def literal_scope(bindings: dict[str, Any] | None = None) -> Scope:
    """A scope with no var/local/resource names: for tfvars, defaults and tests."""
    return Scope(_NoReferences(), bindings)


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def is_opaque(v: Any) -> bool:
    """Unknown or a Ref: a value whose content is not known now."""
    return isinstance(v, (Unknown, Ref))


def as_unknown(v: Any) -> Unknown:
    if isinstance(v, Unknown):
        return v
    if isinstance(v, Ref):
        return Unknown(f"{v} is known only after apply")
    return Unknown("a whole resource or module object")


def first_opaque(v: Any, depth: int = 0) -> Any:
    """The first Unknown / Ref / Lazy anywhere inside v, else None."""
    if isinstance(v, (Unknown, Ref, Lazy)):
        return v
    if depth > 64:
        return None
    charge()
    if isinstance(v, dict):
        for x in v.values():
            r = first_opaque(x, depth + 1)
            if r is not None:
                return r
    elif isinstance(v, list):
        for x in v:
            r = first_opaque(x, depth + 1)
            if r is not None:
                return r
    return None


def type_name(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, TSet):
        return "set"
    if isinstance(v, list):
        return "list"
    if isinstance(v, dict):
        return "object"
    return "object"


def norm_number(x: float | int) -> int | float:
    """A number fit to go on: finite (terraform has no NaN or infinity: it errs where they
    would appear), ints no bigger than the largest float (no giant-integer arithmetic)."""
    if isinstance(x, float):
        if math.isnan(x) or math.isinf(x):
            raise EvalError("number is not finite")
        if x.is_integer() and abs(x) < 2**63:
            return int(x)
    elif not -MAX_INTERNAL <= x <= MAX_INTERNAL:
        raise EvalError("number too large")
    return x


def fmt_number(x: int | float) -> str:
    if isinstance(x, float):
        if x.is_integer() and abs(x) < 1e21:
            return str(int(x))
        r = repr(x)
        return r
    return str(x)


def to_number(v: Any) -> int | float:
    if isinstance(v, bool):
        raise EvalError("a bool is not a number")
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, str):
        try:
            if v.strip().lstrip("-").isdigit():
                return norm_number(parse_integer(v))
            return norm_number(parse_decimal(v))
        except ValueError:
            raise EvalError(f"cannot convert {_quote(v)} to a number") from None
    raise EvalError(f"a {type_name(v)} is not a number")


def _quote(v: str) -> str:
    return repr(v) if len(v) <= 40 else repr(v[:40]) + "…"


def to_bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if v == "true" or v == "1":  # terraform's string-to-bool conversion, exactly
        return True
    if v == "false" or v == "0":
        return False
    raise EvalError(f"a {type_name(v)} is not a bool")


def to_str(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return fmt_number(v)
    if v is None:
        raise EvalError("null value cannot be used as a string")
    raise EvalError(f"a {type_name(v)} cannot be used as a string")


def equal(a: Any, b: Any) -> Any:
    """HCL ==: True / False, or Unknown when it cannot be decided."""
    charge()
    if a is None or b is None:
        if a is None and b is None:
            return True
        other = b if a is None else a
        if isinstance(other, Unknown):
            return other
        if isinstance(other, Ref):
            if other.attr is None or other.attr in NEVER_NULL:
                return False  # a resource's id / arn is never null once applied
            return as_unknown(other)
        return False
    if is_opaque(a):
        return as_unknown(a)
    if is_opaque(b):
        return as_unknown(b)
    if isinstance(a, Lazy) or isinstance(b, Lazy):
        return Unknown("comparison of whole resource objects")
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return False
        if isinstance(a, TSet) != isinstance(b, TSet):
            return False
        pending: Any = True
        for x, y in zip(a, b, strict=True):
            r = equal(x, y)
            if r is False:
                return False
            if r is not True:
                pending = r
        return pending
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return False
        pending = True
        for k in a:
            r = equal(a[k], b[k])
            if r is False:
                return False
            if r is not True:
                pending = r
        return pending
    return False


def iter_pairs(coll: Any) -> list[tuple[Any, Any]] | Unknown:
    """(key, value) pairs of a collection, maps in lexical key order; Unknown if unknowable."""
    if isinstance(coll, Unknown):
        return coll
    if isinstance(coll, Ref):
        return as_unknown(coll)
    if isinstance(coll, list):
        if isinstance(coll, TSet):
            return [(x, x) for x in coll]
        return list(enumerate(coll))
    if isinstance(coll, dict):
        return [(k, coll[k]) for k in sorted(coll)]
    if isinstance(coll, Lazy):
        return coll.items()
    if coll is None:
        raise EvalError("a null value cannot be iterated")
    raise EvalError(f"a {type_name(coll)} cannot be iterated")
