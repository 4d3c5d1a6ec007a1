"""Evaluate HCL expressions (the AST of :mod:`.parse`) to the values of :mod:`.values`.

The built-in functions come from :mod:`.functions`; ``try`` and ``can``, which see their
arguments unevaluated, live here.

Anything the evaluator does not support becomes ``Unknown(reason)``; it never guesses. Where
terraform itself would fail (an index out of range, a missing attribute) an :class:`EvalError`
is raised; ``try``/``can`` catch it, the caller turns it into ``Unknown``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from typing import Any

from scanner.model import Ref, Unknown
from scanner.sources.terraform.hcl.functions import FUNCTIONS, file_text, make_set
from scanner.sources.terraform.hcl.parse import (
    Binary,
    Call,
    Cond,
    Expr,
    ForExpr,
    Lit,
    ObjectExpr,
    ParseError,
    Postfix,
    Template,
    TFor,
    TIf,
    Traversal,
    TupleExpr,
    Unary,
    parse_template,
)
from scanner.sources.terraform.hcl.values import (
    MAX_ITEMS,
    MAX_NUMBER,
    SENSITIVE,
    BudgetExceeded,
    EvalError,
    GroupRefs,
    Lazy,
    Scope,
    TSet,
    as_unknown,
    charge,
    charge_string,
    check_string,
    equal,
    first_opaque,
    holds_sensitive,
    is_opaque,
    iter_pairs,
    literal_scope,
    norm_number,
    string_leaves,
    to_bool,
    to_number,
    to_str,
    type_name,
)

# ---------------------------------------------------------------------------------------------
# the evaluator
# ---------------------------------------------------------------------------------------------

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
    r = _render(parts, scope, out, [0])
    if r is not None:
        return r
    text = "".join(out)
    if SENSITIVE and text not in SENSITIVE and holds_sensitive(out):
        SENSITIVE.add(text)  # "x-${substr(var.secret, 0, 3)}": derived from a secret
    return text


def _render(parts: list[Any], scope: Scope, out: list[str], size: list[int],
            holes: Callable[[Unknown], str] | None = None) -> Unknown | None:
    """Append the template's text to out; every piece is counted against the string budgets
    as it comes (a loop that repeats a big string stops before it is built). ``holes``: an
    interpolation that is not known is written as the token it returns instead of making the
    whole text unknown (see :mod:`.holes`)."""
    for p in parts:
        if isinstance(p, str):
            size[0] += len(p)
            check_string(size[0])
            charge_string(len(p))
            out.append(p)
        elif isinstance(p, TIf):
            c = evaluate(p.cond, scope)
            if is_opaque(c):
                return as_unknown(c)
            r = _render(p.then if to_bool(c) else p.other, scope, out, size, holes)
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
                r = _render(p.body, scope.child(b), out, size, holes)
                if r is not None:
                    return r
        else:
            v = evaluate(p, scope)
            if is_opaque(v) or isinstance(v, Lazy):
                if holes is None:
                    return as_unknown(v)
                out.append(holes(as_unknown(v)))
                continue
            s = to_str(v)
            size[0] += len(s)
            check_string(size[0])
            charge_string(len(s))
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
        items = v.splat(ops, scope)
        return [apply_ops(v, ops, scope)] if items is None else items
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
    take = to_bool(c)
    chosen = evaluate(e.then if take else e.other, scope)
    if SENSITIVE and _secret_condition(e.cond, scope, 0):
        # var.secret == "x" ? "a" : "b": which branch was taken tells about the secret
        SENSITIVE.update(s for s in string_leaves(chosen, set()) if s)
    if type(chosen) is list or (
        isinstance(chosen, (int, float)) and not isinstance(chosen, bool)
    ) or isinstance(chosen, bool):
        return _unify(chosen, e.other if take else e.then, scope)
    return chosen


def _secret_condition(cond: Expr, scope: Scope, depth: int) -> bool:
    """Whether a condition reads a sensitive value: its operands (through ``!``, ``&&``,
    ``==`` …), evaluated again (only in a root module that has secrets)."""
    if depth > 8:
        return True
    if isinstance(cond, Binary):
        return _secret_condition(cond.left, scope, depth + 1) or \
            _secret_condition(cond.right, scope, depth + 1)
    if isinstance(cond, Unary):
        return _secret_condition(cond.operand, scope, depth + 1)
    try:
        return holds_sensitive(evaluate(cond, scope))
    except EvalError:
        return False


def _unify(chosen: Any, other_expr: Expr, scope: Scope) -> Any:
    """Terraform gives both results of a conditional one type (the branch not taken still
    counts, its errors do not): ``c ? toset(["a"]) : []`` is an empty *set* when c is false,
    ``c ? 1 : "x"`` is the string "1". Only the conversions that change a value here are
    made: a tuple next to a set becomes a set, a number or bool next to a string a string."""
    try:
        other = evaluate(other_expr, scope)
    except BudgetExceeded:
        raise
    except (EvalError, RecursionError):
        return chosen
    if isinstance(chosen, list):
        if not isinstance(other, TSet):
            return chosen
        if any(isinstance(x, str) for x in other):
            chosen = [x if isinstance(x, str) or is_opaque(x) else _str_or(x) for x in chosen]
        if any(is_opaque(x) for x in chosen):
            return next(as_unknown(x) for x in chosen if is_opaque(x))
        return make_set(chosen)
    if isinstance(other, str):
        return to_str(chosen)
    return chosen


def _str_or(x: Any) -> Any:
    try:
        return to_str(x)
    except EvalError:
        return x


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
    try:
        r = fn(*args)
    except EvalError:
        raise
    except _PYTHON_ERRORS as exc:  # a function's own failure is terraform's error, named
        raise EvalError(f"{name}(): {type(exc).__name__}: {exc}") from None
    # every function result counts: strings against the string budgets, collections as work
    t = type(r)
    if t is str:
        charge_string(len(r))
    elif t is list or t is dict or t is TSet:
        charge(len(r))
    if SENSITIVE and holds_sensitive(args):
        _derived_sensitive(r, args)
    return r


def _derived_sensitive(result: Any, args: list[Any]) -> None:
    """A function of a sensitive value gives a sensitive value (terraform's marks): the strings
    it made (``upper(var.password)``, ``base64encode(...)``) are recorded; strings it only
    passed through (``merge``, ``lookup`` of another key) are not."""
    given = string_leaves(args, set())
    for s in string_leaves(result, set()):
        if s and s not in given:
            SENSITIVE.add(s)


_PYTHON_ERRORS = (ValueError, TypeError, OverflowError, ArithmeticError, KeyError, IndexError,
                  UnicodeError, AttributeError)


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


@functools.lru_cache(maxsize=256)
def _too_large(v: float) -> Unknown:
    """One Unknown per number (frozen, so shared): a million copies of 1e308 in a list are a
    million references to it, not a million objects with their text (500 MiB)."""
    return Unknown(f"number too large: {v:.6g}")


def materialize(v: Any) -> Any:
    """Replace lazy objects by what they stand for (a Ref or Unknown); sets become lists;
    numbers no AWS value can be (beyond ±2**53) become Unknown."""
    charge()
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v if -MAX_NUMBER <= v <= MAX_NUMBER else _too_large(v)
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
    except BudgetExceeded:
        raise
    except EvalError as exc:
        return Unknown(f"evaluation error: {exc}"), str(exc)
    except RecursionError:
        return Unknown("expression nested too deeply"), "expression nested too deeply"
    except (ValueError, TypeError, OverflowError, ArithmeticError, KeyError, IndexError) as exc:
        return Unknown(f"evaluation error: {exc}"), str(exc)




# ---------------------------------------------------------------------------------------------
# functions that see their arguments unevaluated
# ---------------------------------------------------------------------------------------------

_CAUGHT = (EvalError, ValueError, TypeError, OverflowError, ArithmeticError, KeyError, IndexError)


def _try(args: list[Expr], scope: Scope, expand: bool) -> Any:
    if not args:
        raise EvalError("try() needs at least one argument")
    last: Exception | None = None
    for a in args:
        try:
            return evaluate(a, scope)
        except BudgetExceeded:
            raise  # past a budget, a fallback value would be a guess
        except _CAUGHT as exc:
            last = exc
    raise EvalError(f"no argument of try() could be evaluated: {last}")


def _can(args: list[Expr], scope: Scope, expand: bool) -> Any:
    if len(args) != 1:
        raise EvalError("can() takes one argument")
    try:
        v = evaluate(args[0], scope)
    except BudgetExceeded:
        raise
    except _CAUGHT:
        return False
    if isinstance(v, Unknown):
        return v
    return True


SPECIAL_FUNCTIONS["try"] = _try
SPECIAL_FUNCTIONS["can"] = _can

_IN_TEMPLATEFILE: list[str] = []


def _templatefile(path: Any, variables: Any = None, *extra: Any) -> Any:
    """``templatefile(path, vars)``: the file (inside the scanned tree) rendered as a template
    with only ``vars`` in scope, as terraform does; not from within another templatefile."""
    if extra:
        raise EvalError("templatefile() takes a path and a map of variables")
    if _IN_TEMPLATEFILE:
        raise EvalError("templatefile() cannot be called from a template file")
    text = file_text(path, "templatefile")
    if isinstance(text, Unknown):
        return text
    if variables is None:
        variables = {}
    if is_opaque(variables):
        return as_unknown(variables)
    if not isinstance(variables, dict):
        raise EvalError("templatefile(): the variables must be a map or object")
    try:
        expr = parse_template(text)
    except ParseError as exc:
        raise EvalError(f"templatefile(): {exc.reason}") from None
    _IN_TEMPLATEFILE.append(to_str(path))
    try:
        return evaluate(expr, literal_scope(dict(variables)))
    finally:
        _IN_TEMPLATEFILE.pop()


FUNCTIONS["templatefile"] = _templatefile
