"""Evaluate HCL expressions (the AST of :mod:`hcl_parse`) to plain Python values.

Values: ``str``, ``int``/``float``, ``bool``, ``None`` (null), ``list``, :class:`TSet` (a set),
``dict`` (objects and maps), :class:`~scanner.model.Unknown` (not knowable statically, with a
reason),
:class:`~scanner.model.Ref` (another resource's attribute, known only after apply) and
:class:`Lazy` objects (resources and module calls, resolved on access by :mod:`hcl_modules`).

Anything the evaluator does not support becomes ``Unknown(reason)``; it never guesses. Where
terraform itself would fail (an index out of range, a missing attribute) an :class:`EvalError`
is raised; ``try``/``can`` catch it, the caller turns it into ``Unknown``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

from scanner.model import Ref, Unknown
from scanner.sources.hcl_parse import (
    Binary,
    Call,
    Cond,
    Expr,
    ForExpr,
    Lit,
    ObjectExpr,
    Postfix,
    Template,
    TFor,
    TIf,
    Traversal,
    TupleExpr,
    Unary,
)

MAX_ITEMS = 100_000  # no collection may grow beyond this (range, for, setproduct …)
MAX_STRING = 16 * 1024 * 1024  # no string may grow beyond this
WORK_BUDGET = 5_000_000  # units of work (iterations, value nodes walked) per root module
NEVER_NULL = frozenset({"id", "arn"})  # computed attributes never null once applied


class EvalError(Exception):
    """What terraform would report as an error while evaluating an expression."""


_LEFT = WORK_BUDGET


def reset_budget(units: int = WORK_BUDGET) -> None:
    """Start a new work budget (one per root module): hostile or absurd code (nested loops,
    values that double at each step) stops with an EvalError instead of hanging."""
    global _LEFT
    _LEFT = units


def budget_exhausted() -> bool:
    return _LEFT < 0


def charge(units: int = 1) -> None:
    global _LEFT
    _LEFT -= units
    if _LEFT < 0:
        raise EvalError("evaluation stopped: too much work (a runaway expression?)")


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
        return [apply_ops(self, ops, scope)]

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
    if isinstance(x, float):
        if math.isnan(x) or math.isinf(x):
            raise EvalError("number is not finite")
        if x.is_integer() and abs(x) < 2**63:
            return int(x)
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
            return norm_number(float(v)) if not v.strip().lstrip("-").isdigit() else int(v)
        except ValueError:
            raise EvalError(f"cannot convert {v!r} to a number") from None
    raise EvalError(f"a {type_name(v)} is not a number")


def to_bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if v == "true":
        return True
    if v == "false":
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


# ---------------------------------------------------------------------------------------------
# the evaluator
# ---------------------------------------------------------------------------------------------

FUNCTIONS: dict[str, Callable[..., Any]] = {}
SPECIAL_FUNCTIONS: dict[str, Callable[[list[Expr], Scope, bool], Any]] = {}


def evaluate(expr: Expr, scope: Scope) -> Any:
    return _DISPATCH[type(expr)](expr, scope)


def _lit(e: Lit, scope: Scope) -> Any:
    return e.value


def _template(e: Template, scope: Scope) -> Any:
    parts = e.parts
    if len(parts) == 1 and isinstance(parts[0], Expr):
        return evaluate(parts[0], scope)  # "${x}" yields x itself, unconverted
    out: list[str] = []
    r = _render(parts, scope, out)
    if r is not None:
        return r
    text = "".join(out)
    if len(text) > MAX_STRING:
        raise EvalError("string too long")
    return text


def _render(parts: list[Any], scope: Scope, out: list[str]) -> Unknown | None:
    for p in parts:
        if isinstance(p, str):
            out.append(p)
        elif isinstance(p, TIf):
            c = evaluate(p.cond, scope)
            if is_opaque(c):
                return as_unknown(c)
            r = _render(p.then if to_bool(c) else p.other, scope, out)
            if r is not None:
                return r
        elif isinstance(p, TFor):
            pairs = iter_pairs(evaluate(p.coll, scope))
            if isinstance(pairs, Unknown):
                return pairs
            charge(len(pairs))
            for k, v in pairs:
                b = {p.vvar: v}
                if p.kvar:
                    b[p.kvar] = k
                r = _render(p.body, scope.child(b), out)
                if r is not None:
                    return r
        else:
            v = evaluate(p, scope)
            if is_opaque(v) or isinstance(v, Lazy):
                return as_unknown(v)
            s = to_str(v)
            charge(len(s) >> 10)
            out.append(s)
    return None


def _tuple(e: TupleExpr, scope: Scope) -> Any:
    return [evaluate(x, scope) for x in e.items]


def _object(e: ObjectExpr, scope: Scope) -> Any:
    out: dict[str, Any] = {}
    for k, v in e.items:
        if isinstance(k, str):
            key = k
        else:
            kv = evaluate(k, scope)
            if is_opaque(kv):
                return as_unknown(kv)
            key = to_str(kv)
        out[key] = evaluate(v, scope)
    return out


def _traversal(e: Traversal, scope: Scope) -> Any:
    b = scope.bindings
    if e.root in b:
        return apply_ops(b[e.root], e.ops, scope)
    value, used = scope.resolver.resolve(e.root, e.ops, scope)
    if used < len(e.ops):
        return apply_ops(value, e.ops[used:], scope)
    return value


def _postfix(e: Postfix, scope: Scope) -> Any:
    return apply_ops(evaluate(e.base, scope), e.ops, scope)


def apply_ops(v: Any, ops: tuple[Any, ...], scope: Scope) -> Any:
    for op in ops:
        kind = op[0]
        if kind == "a":
            v = get_attr(v, op[1])
        elif kind == "i":
            v = get_index(v, evaluate(op[1], scope))
        else:
            v = splat(v, op[2], scope)
        if isinstance(v, Unknown):
            return v
    return v


def get_attr(v: Any, name: str) -> Any:
    if isinstance(v, dict):
        if name in v:
            return v[name]
        raise EvalError(f'object has no attribute "{name}"')
    if isinstance(v, Lazy):
        return v.get_attr(name)
    if isinstance(v, Unknown):
        return v
    if isinstance(v, Ref):
        return Unknown(f"{v}.{name} is known only after apply")
    if v is None:
        raise EvalError(f'attempt to get attribute "{name}" from a null value')
    raise EvalError(f'a {type_name(v)} has no attribute "{name}"')


def get_index(v: Any, key: Any) -> Any:
    if isinstance(key, Unknown):
        return key
    if isinstance(key, Ref):
        return as_unknown(key)
    if isinstance(v, list):
        if isinstance(v, TSet):
            raise EvalError("elements of a set cannot be indexed")
        n = to_number(key)
        if not isinstance(n, int) and not float(n).is_integer():
            raise EvalError("index must be a whole number")
        i = int(n)
        if i < 0 or i >= len(v):
            raise EvalError(f"index {i} out of range for a list of {len(v)} elements")
        return v[i]
    if isinstance(v, dict):
        k = to_str(key)
        if k in v:
            return v[k]
        raise EvalError(f'no element with key "{k}"')
    if isinstance(v, Lazy):
        return v.index(key)
    if isinstance(v, Unknown):
        return v
    if isinstance(v, Ref):
        return Unknown(f"{v}[{key!r}] is known only after apply")
    if v is None:
        raise EvalError("attempt to index a null value")
    raise EvalError(f"a {type_name(v)} cannot be indexed")


def splat(v: Any, ops: tuple[Any, ...], scope: Scope) -> Any:
    if isinstance(v, Unknown):
        return v
    if isinstance(v, Ref):
        return as_unknown(v)
    if v is None:
        return []
    if isinstance(v, Lazy):
        return v.splat(ops, scope)
    if isinstance(v, list):
        return [apply_ops(x, ops, scope) for x in v]
    return [apply_ops(v, ops, scope)]


def _cond(e: Cond, scope: Scope) -> Any:
    c = evaluate(e.cond, scope)
    if is_opaque(c) or isinstance(c, Lazy):
        # Undecidable: known only if both branches agree.
        try:
            a = evaluate(e.then, scope)
            b = evaluate(e.other, scope)
        except EvalError:
            return as_unknown(c)
        if first_opaque(a) is None and equal(a, b) is True:
            return a
        return as_unknown(c)
    return evaluate(e.then if to_bool(c) else e.other, scope)


def _unary(e: Unary, scope: Scope) -> Any:
    v = evaluate(e.operand, scope)
    if is_opaque(v):
        return as_unknown(v)
    if e.op == "!":
        return not to_bool(v)
    return norm_number(-to_number(v))


def _binary(e: Binary, scope: Scope) -> Any:
    op = e.op
    if op == "&&" or op == "||":
        short = op == "||"  # the value that decides alone
        a = evaluate(e.left, scope)
        if not is_opaque(a) and to_bool(a) is short:
            return short
        b = evaluate(e.right, scope)
        if not is_opaque(b) and to_bool(b) is short:
            return short
        if is_opaque(a):
            return as_unknown(a)
        if is_opaque(b):
            return as_unknown(b)
        return not short
    a = evaluate(e.left, scope)
    b = evaluate(e.right, scope)
    if op == "==":
        return equal(a, b)
    if op == "!=":
        r = equal(a, b)
        return (not r) if isinstance(r, bool) else r
    if is_opaque(a):
        return as_unknown(a)
    if is_opaque(b):
        return as_unknown(b)
    x = to_number(a)
    y = to_number(b)
    if op == "+":
        return norm_number(x + y)
    if op == "-":
        return norm_number(x - y)
    if op == "*":
        return norm_number(x * y)
    if op == "/":
        if y == 0:
            raise EvalError("division by zero")
        return norm_number(x / y)
    if op == "%":
        if y == 0:
            raise EvalError("modulo by zero")
        return norm_number(math.fmod(x, y))
    if op == ">":
        return x > y
    if op == ">=":
        return x >= y
    if op == "<":
        return x < y
    if op == "<=":
        return x <= y
    raise EvalError(f"unsupported operator {op}")


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


def _for(e: ForExpr, scope: Scope) -> Any:
    coll = evaluate(e.coll, scope)
    if isinstance(coll, Lazy):
        symbolic = getattr(coll, "symbolic_for", None)
        if symbolic is not None:
            r = symbolic(e, scope)
            if r is not None:
                return r
    pairs = iter_pairs(coll)
    if isinstance(pairs, Unknown):
        return pairs
    if len(pairs) > MAX_ITEMS:
        raise EvalError("collection too large")
    charge(len(pairs))
    if e.key is None:
        out: list[Any] = []
        for s in _for_scopes(e, scope, pairs):
            if isinstance(s, Unknown):
                return s
            out.append(evaluate(e.value, s))
        return out
    obj: dict[str, Any] = {}
    for s in _for_scopes(e, scope, pairs):
        if isinstance(s, Unknown):
            return s
        kv = evaluate(e.key, s)
        if is_opaque(kv):
            return as_unknown(kv)
        key = to_str(kv)
        val = evaluate(e.value, s)
        if e.group:
            obj.setdefault(key, []).append(val)
        elif key in obj:
            raise EvalError(f'duplicate key "{key}" in a for expression')
        else:
            obj[key] = val
    return obj


def _for_scopes(e: ForExpr, scope: Scope, pairs: Any) -> Iterator[Scope | Unknown]:
    """The scope of each element the ``if`` keeps; an unknown condition yields that Unknown
    (the whole for expression is then unknown)."""
    for k, v in pairs:
        s = for_scope(e, scope, k, v)
        if e.cond is not None:
            c = evaluate(e.cond, s)
            if is_opaque(c):
                yield as_unknown(c)
                return
            if not to_bool(c):
                continue
        yield s


def for_scope(e: ForExpr, scope: Scope, key: Any, value: Any) -> Scope:
    """The scope of one element of ``for k, v in ...``: ``v`` (and ``k`` when named) bound."""
    bound = {e.vvar: value}
    if e.kvar:
        bound[e.kvar] = key
    return scope.child(bound)


def _call(e: Call, scope: Scope) -> Any:
    name = e.name
    special = SPECIAL_FUNCTIONS.get(name)
    if special is not None:
        return special(e.args, scope, e.expand)
    fn = FUNCTIONS.get(name)
    if fn is None:
        if "::" in name:
            return Unknown(f"provider function {name} is not evaluated")
        return Unknown(f"function {name}() is not supported")
    args = [evaluate(a, scope) for a in e.args]
    if e.expand and args:
        last = args.pop()
        if is_opaque(last):
            return as_unknown(last)
        if not isinstance(last, list):
            raise EvalError("the last argument before ... must be a list")
        args.extend(last)
    return fn(*args)


_DISPATCH: dict[type, Callable[[Any, Scope], Any]] = {
    Lit: _lit,
    Template: _template,
    TupleExpr: _tuple,
    ObjectExpr: _object,
    Traversal: _traversal,
    Postfix: _postfix,
    Call: _call,
    Cond: _cond,
    Unary: _unary,
    Binary: _binary,
    ForExpr: _for,
}


def materialize(v: Any) -> Any:
    """Replace lazy objects by what they stand for (a Ref or Unknown); sets become lists."""
    charge()
    if isinstance(v, dict):
        return {k: materialize(x) for k, x in v.items()}
    if isinstance(v, GroupRefs):
        return v.ref
    if isinstance(v, list):
        return [materialize(x) for x in v]
    if isinstance(v, Lazy):
        return v.materialize()
    return v


def safe_evaluate(expr: Expr, scope: Scope) -> tuple[Any, str | None]:
    """Evaluate; a terraform-level error becomes Unknown and its message is returned."""
    try:
        return evaluate(expr, scope), None
    except EvalError as exc:
        return Unknown(f"evaluation error: {exc}"), str(exc)
    except RecursionError:
        return Unknown("expression nested too deeply"), "expression nested too deeply"
    except (ValueError, TypeError, OverflowError, ArithmeticError, KeyError, IndexError) as exc:
        return Unknown(f"evaluation error: {exc}"), str(exc)


# Register the function library (kept in its own module).
from scanner.sources import hcl_funcs as _funcs  # noqa: E402

FUNCTIONS.update(_funcs.FUNCTIONS)
SPECIAL_FUNCTIONS.update(_funcs.SPECIAL_FUNCTIONS)
