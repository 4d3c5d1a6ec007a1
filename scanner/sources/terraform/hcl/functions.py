"""Terraform's built-in functions, the pure ones, for :mod:`.expressions`.

Files (``file``, ``templatefile``, ``fileexists``, ``filebase64``, ``file*sha*``) are read
only inside the scanned tree, through the reader the source sets (:data:`FILE_READER`).

Two kinds: *structural* functions (``concat``, ``merge``, ``lookup``, ``length`` …) only need the
shape of their arguments, so lists and maps may carry Unknown / Ref elements through them;
*value* functions (``format``, ``join``, ``jsonencode``, ``cidrsubnet`` …) need every part of
every argument, and return Unknown as soon as any part is unknown. Functions that depend on the
clock, randomness, the machine or the provider (``timestamp``, ``uuid``, ``fileset``,
``provider::…``) are not evaluated: they give Unknown with a reason.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import ipaddress
import json
import math
import posixpath
import re
from collections.abc import Callable, Iterator
from typing import Any

from scanner.model import Ref, Unknown
from scanner.sources.terraform.hcl.parse import NUMBER_TOO_LARGE
from scanner.sources.terraform.hcl.values import (
    MAX_DECODE,
    MAX_ITEMS,
    MAX_STRING,
    ON_RESET,
    BudgetExceeded,
    EvalError,
    Lazy,
    TSet,
    as_unknown,
    charge,
    check_string,
    equal,
    first_opaque,
    is_opaque,
    mark_sensitive,
    norm_number,
    to_bool,
    to_number,
    to_str,
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


# ---------------------------------------------------------------------------------------------
# structural collection functions
# ---------------------------------------------------------------------------------------------


@raw_fn("length")
@_guard
def f_length(v: Any) -> Any:
    if is_opaque(v):
        return as_unknown(v)
    if isinstance(v, str):
        return len(v)
    if isinstance(v, (list, dict)):
        return len(v)
    if isinstance(v, Lazy):
        items = v.items()
        return items if isinstance(items, Unknown) else len(items)
    raise EvalError(f"length() of a {type_name(v)}")


@raw_fn("concat")
@_guard
def f_concat(*lists: Any) -> Any:
    out: list[Any] = []
    for v in lists:
        if isinstance(v, Ref):
            out.append(v)  # a whole collection of ids: keep it as one relation element
        elif isinstance(v, Unknown):
            return v
        else:
            out.extend(_list(v))
    _size(len(out))
    return out


@struct_fn("merge")
@_guard
def f_merge(*maps: Any) -> Any:
    out: dict[str, Any] = {}
    for m in maps:
        if m is None:
            continue
        out.update(_map(m))
    return out


@struct_fn("lookup")
@_guard
def f_lookup(m: Any, key: Any, *default: Any) -> Any:
    mp = _map(m)
    k = to_str(key)
    if k in mp:
        return mp[k]
    if default:
        return default[0]
    raise EvalError(f'lookup: no key "{k}" and no default')


@struct_fn("element")
@_guard
def f_element(lst: Any, idx: Any) -> Any:
    items = _list(lst)
    if not items:
        raise EvalError("element() of an empty list")
    i = int(to_number(idx))
    if i < 0:
        raise EvalError("element() index must not be negative")
    return items[i % len(items)]


@struct_fn("keys")
@_guard
def f_keys(m: Any) -> Any:
    return sorted(_map(m))


@struct_fn("values")
@_guard
def f_values(m: Any) -> Any:
    mp = _map(m)
    return [mp[k] for k in sorted(mp)]


@raw_fn("tolist")
@_guard
def f_tolist(v: Any) -> Any:
    if isinstance(v, Ref):
        return v
    if isinstance(v, Unknown) or v is None:
        return v
    return list(_list(v))


@raw_fn("toset")
@_guard
def f_toset(v: Any) -> Any:
    if isinstance(v, Ref):
        return v
    if isinstance(v, Unknown) or v is None:
        return v
    items = _list(v)
    for x in items:
        if is_opaque(x):
            return as_unknown(x)  # membership cannot be decided
    return make_set(items)


@raw_fn("tomap")
@_guard
def f_tomap(v: Any) -> Any:
    if is_opaque(v) or v is None:
        return v if not isinstance(v, Ref) else as_unknown(v)
    return dict(_map(v))


@struct_fn("flatten")
@_guard
def f_flatten(v: Any) -> Any:
    out: list[Any] = []

    def walk(x: Any, depth: int) -> None:
        if depth > 64:
            raise EvalError("flatten: nested too deeply")
        for e in x:
            charge()
            if isinstance(e, list):
                walk(e, depth + 1)
            elif isinstance(e, Unknown):
                raise _Opaque(e)  # could be a list: the shape is unknown
            else:
                out.append(e)

    walk(_list(v), 0)
    _size(len(out))
    return out


@struct_fn("compact")
@_guard
def f_compact(v: Any) -> Any:
    return [x for x in _list(v) if x is not None and x != ""]


@struct_fn("distinct")
@_guard
def f_distinct(v: Any) -> Any:
    seen: set[Any] = set()
    out: list[Any] = []
    for x in _list(v):
        h = _hashable(x)
        if h not in seen:
            seen.add(h)
            out.append(x)
    return out


@raw_fn("slice")
@_guard
def f_slice(v: Any, start: Any, end: Any) -> Any:
    if is_opaque(start) or is_opaque(end):
        return as_unknown(start if is_opaque(start) else end)
    if isinstance(v, Unknown):
        # The length is known even if the elements are not (terraform fails when the list is
        # shorter): ``slice(data.aws_availability_zones.x.names, 0, 3)`` has 3 elements.
        a, b = int(to_number(start)), int(to_number(end))
        if 0 <= a <= b and b - a <= MAX_ITEMS:
            return [v] * (b - a)
        raise EvalError("slice: invalid bounds")
    if isinstance(v, Ref):
        return as_unknown(v)
    items = _list(v)
    a, b = int(to_number(start)), int(to_number(end))
    if a < 0 or b > len(items) or a > b:
        raise EvalError(f"slice({a}, {b}) out of range for a list of {len(items)}")
    return items[a:b]


@struct_fn("reverse")
@_guard
def f_reverse(v: Any) -> Any:
    return list(reversed(_list(v)))


@struct_fn("zipmap")
@_guard
def f_zipmap(keys: Any, vals: Any) -> Any:
    ks, vs = _list(keys), _list(vals)
    if len(ks) != len(vs):
        raise EvalError("zipmap: keys and values differ in length")
    out: dict[str, Any] = {}
    for k, v in zip(ks, vs, strict=True):
        if is_opaque(k):
            return as_unknown(k)
        out[to_str(k)] = v
    return out


@struct_fn("one")
@_guard
def f_one(v: Any) -> Any:
    items = _list(v)
    if not items:
        return None
    if len(items) == 1:
        return items[0]
    raise EvalError("one(): more than one element")


@raw_fn("coalesce")
def f_coalesce(*args: Any) -> Any:
    for a in args:
        if is_opaque(a):
            return as_unknown(a)
        if a is None or a == "":
            continue
        return a
    raise EvalError("coalesce: no non-null, non-empty argument")


@raw_fn("coalescelist")
def f_coalescelist(*args: Any) -> Any:
    for a in args:
        if is_opaque(a):
            return as_unknown(a)
        if isinstance(a, list) and a:
            return a
        if not isinstance(a, list):
            raise EvalError("coalescelist: arguments must be lists")
    return []


@struct_fn("contains")
@_guard
def f_contains(v: Any, x: Any) -> Any:
    if is_opaque(x):
        return as_unknown(x)
    pending: Any = False
    for e in _list(v):
        r = equal(e, x)
        if r is True:
            return True
        if r is not False:
            pending = r
    return pending


@struct_fn("index")
@_guard
def f_index(v: Any, x: Any) -> Any:
    for i, e in enumerate(_list(v)):
        r = equal(e, x)
        if r is True:
            return i
        if r is not False:
            return r
    raise EvalError("index(): value not found")


@value_fn("range")
def f_range(*args: Any) -> Any:
    nums = [to_number(a) for a in args]
    if len(nums) == 1:
        start, stop, step = 0, nums[0], 1
    elif len(nums) == 2:
        start, stop, step = nums[0], nums[1], 1 if nums[1] >= nums[0] else -1
    elif len(nums) == 3:
        start, stop, step = nums
    else:
        raise EvalError("range() takes 1 to 3 arguments")
    if step == 0:
        raise EvalError("range() step must not be zero")
    n = max(0, math.ceil((stop - start) / step))
    _size(n)
    charge(n)
    return [norm_number(start + i * step) for i in range(n)]


@struct_fn("chunklist")
@_guard
def f_chunklist(v: Any, size: Any) -> Any:
    items = _list(v)
    n = int(to_number(size))
    if n < 0:
        raise EvalError("chunklist size must not be negative")
    if n == 0:
        return [items]
    return [items[i : i + n] for i in range(0, len(items), n)]


@value_fn("setunion")
def f_setunion(*sets: Any) -> Any:
    return make_set([x for s in sets for x in _list(s)])


@value_fn("setintersection")
def f_setintersection(first: Any, *rest: Any) -> Any:
    out = list(_list(first))
    for s in rest:
        other = {_hashable(x) for x in _list(s)}
        out = [x for x in out if _hashable(x) in other]
    return make_set(out)


@value_fn("setsubtract")
def f_setsubtract(a: Any, b: Any) -> Any:
    other = {_hashable(x) for x in _list(b)}
    return make_set([x for x in _list(a) if _hashable(x) not in other])


@value_fn("setproduct")
def f_setproduct(*sets: Any) -> Any:
    out: list[list[Any]] = [[]]
    for s in sets:
        items = _list(s)
        _size(len(out) * len(items))
        charge(len(out) * len(items))
        out = [o + [x] for o in out for x in items]
    if not sets:
        return []
    return out


@value_fn("sort")
def f_sort(v: Any) -> Any:
    return sorted(to_str(x) for x in _list(v))


@value_fn("sum")
def f_sum(v: Any) -> Any:
    items = _list(v)
    if not items:
        raise EvalError("sum() of an empty list")
    return norm_number(sum(to_number(x) for x in items))


@value_fn("max")
def f_max(*args: Any) -> Any:
    if not args:
        raise EvalError("max() needs at least one argument")
    return max(to_number(a) for a in args)


@value_fn("min")
def f_min(*args: Any) -> Any:
    if not args:
        raise EvalError("min() needs at least one argument")
    return min(to_number(a) for a in args)


@struct_fn("alltrue")
@_guard
def f_alltrue(v: Any) -> Any:
    pending: Any = True
    for x in _list(v):
        if is_opaque(x):
            pending = as_unknown(x)
        elif not to_bool(x):
            return False
    return pending


@struct_fn("anytrue")
@_guard
def f_anytrue(v: Any) -> Any:
    pending: Any = False
    for x in _list(v):
        if is_opaque(x):
            pending = as_unknown(x)
        elif to_bool(x):
            return True
    return pending


@value_fn("transpose")
def f_transpose(m: Any) -> Any:
    out: dict[str, list[str]] = {}
    for k, vs in _map(m).items():
        for v in _list(vs):
            out.setdefault(to_str(v), []).append(k)
    return {k: sorted(v) for k, v in out.items()}


@struct_fn("matchkeys")
@_guard
def f_matchkeys(values: Any, keys: Any, search: Any) -> Any:
    vs, ks = _list(values), _list(keys)
    if len(vs) != len(ks):
        raise EvalError("matchkeys: values and keys differ in length")
    wanted = {_hashable(x) for x in _list(search)}
    return [v for v, k in zip(vs, ks, strict=True) if _hashable(k) in wanted]


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


# ---------------------------------------------------------------------------------------------
# strings
# ---------------------------------------------------------------------------------------------

_FMT = re.compile(r"%([-+# 0]*)(\d+)?(?:\.(\d+))?([a-zA-Z%])")


def _format(fmt: str, args: tuple[Any, ...], size: list[int] | None = None) -> str:
    out: list[str] = []
    pos = 0
    ai = 0
    total = size if size is not None else [0]
    for m in _FMT.finditer(fmt):
        total[0] += m.start() - pos
        check_string(total[0])
        out.append(fmt[pos : m.start()])
        pos = m.end()
        flags, width, prec, verb = m.groups()
        if verb == "%":
            out.append("%")
            continue
        if ai >= len(args):
            raise EvalError("format: not enough arguments")
        a = args[ai]
        ai += 1
        if (width and int(width) > 1000) or (prec and int(prec) > 1000):
            raise EvalError("format: width too large")
        if verb in ("s", "v"):
            if verb == "v" and "#" in flags:
                s = _json(a)
            elif isinstance(a, (list, dict)):
                if verb == "s":
                    raise EvalError("format %s: a collection is not a string")
                s = _json(a)
            else:
                s = to_str(a)
            if prec:
                s = s[: int(prec)]
        elif verb == "q":
            s = json.dumps(to_str(a), ensure_ascii=False)
        elif verb == "t":
            s = "true" if to_bool(a) else "false"
        elif verb == "d":
            n = to_number(a)
            if isinstance(n, float) and not n.is_integer():
                raise EvalError("format %d: not a whole number")
            s = ("+" if "+" in flags and n >= 0 else "") + str(int(n))
        elif verb in "feEgG":
            n = to_number(a)
            p = prec if prec is not None else ("6" if verb in "feE" else "")
            s = format(float(n), ("+" if "+" in flags else "") + (f".{p}" if p else "") + verb)
        elif verb in "xXob":
            n = int(to_number(a)) if not isinstance(a, str) else None
            if n is None:
                s = a.encode().hex() if verb == "x" else a.encode().hex().upper()
            else:
                s = format(n, verb)
        else:
            raise EvalError(f"format: unsupported verb %{verb}")
        if width:
            w = int(width)
            if "-" in flags:
                s = s.ljust(w)
            elif "0" in flags and verb in "dfeEgG":
                sign = s[0] if s[:1] in "+-" else ""
                s = sign + s[len(sign) :].rjust(w - len(sign), "0")
            else:
                s = s.rjust(w)
        total[0] += len(s)
        check_string(total[0])
        out.append(s)
    total[0] += len(fmt) - pos
    check_string(total[0])
    out.append(fmt[pos:])
    if ai < len(args):
        raise EvalError("format: too many arguments")
    return "".join(out)


@value_fn("format")
def f_format(fmt: Any, *args: Any) -> Any:
    return _format(to_str(fmt), args)


@value_fn("formatlist")
def f_formatlist(fmt: Any, *args: Any) -> Any:
    n = None
    for a in args:
        if isinstance(a, list):
            if n is not None and n != len(a):
                raise EvalError("formatlist: lists differ in length")
            n = len(a)
    if n is None:
        return [_format(to_str(fmt), args)]
    size = [0]  # all the strings of the list count as one
    return [
        _format(to_str(fmt), tuple(a[i] if isinstance(a, list) else a for a in args), size)
        for i in range(n)
    ]


@value_fn("join")
def f_join(sep: Any, *lists: Any) -> Any:
    parts: list[str] = []
    glue = to_str(sep)
    total = 0
    for lst in lists:
        for x in _list(lst):
            if x is None:
                raise EvalError("join: null element")
            part = to_str(x)
            total += len(part) + (len(glue) if parts else 0)
            check_string(total)  # before the string is built
            parts.append(part)
    return glue.join(parts)


@value_fn("split")
def f_split(sep: Any, s: Any) -> Any:
    sep_s, text = to_str(sep), to_str(s)
    _size(len(text) if sep_s == "" else text.count(sep_s) + 1)
    if sep_s == "":
        return list(text)
    return text.split(sep_s)


@value_fn("lower")
def f_lower(s: Any) -> Any:
    return to_str(s).lower()


@value_fn("upper")
def f_upper(s: Any) -> Any:
    return to_str(s).upper()


@value_fn("title")
def f_title(s: Any) -> Any:
    return re.sub(r"\b[a-z]", lambda m: m.group(0).upper(), to_str(s))


@value_fn("trimspace")
def f_trimspace(s: Any) -> Any:
    return to_str(s).strip()


@value_fn("trim")
def f_trim(s: Any, chars: Any) -> Any:
    return to_str(s).strip(to_str(chars))


@value_fn("trimprefix")
def f_trimprefix(s: Any, p: Any) -> Any:
    return to_str(s).removeprefix(to_str(p))


@value_fn("trimsuffix")
def f_trimsuffix(s: Any, p: Any) -> Any:
    return to_str(s).removesuffix(to_str(p))


@value_fn("chomp")
def f_chomp(s: Any) -> Any:
    return re.sub(r"(\r\n|\n|\r)+\Z", "", to_str(s))


@value_fn("indent")
def f_indent(n: Any, s: Any) -> Any:
    text = to_str(s)
    width = int(to_number(n))
    check_string(width)
    check_string(len(text) + text.count("\n") * width)
    return text.replace("\n", "\n" + " " * width)


@value_fn("startswith")
def f_startswith(s: Any, p: Any) -> Any:
    return to_str(s).startswith(to_str(p))


@value_fn("endswith")
def f_endswith(s: Any, p: Any) -> Any:
    return to_str(s).endswith(to_str(p))


@value_fn("strcontains")
def f_strcontains(s: Any, p: Any) -> Any:
    return to_str(p) in to_str(s)


@value_fn("strrev")
def f_strrev(s: Any) -> Any:
    return to_str(s)[::-1]


@value_fn("substr")
def f_substr(s: Any, offset: Any, length: Any) -> Any:
    text = to_str(s)
    o, n = int(to_number(offset)), int(to_number(length))
    if o < 0:
        o = max(0, len(text) + o)
    if o > len(text):
        raise EvalError("substr: offset beyond the end of the string")
    return text[o:] if n < 0 else text[o : o + n]


_RE2: Any = None
_RE2_OPTIONS: Any = None


@functools.lru_cache(maxsize=256)
def _re(pattern: str) -> Any:
    """Compile with RE2, the engine terraform (Go's regexp) uses: linear time whatever the
    pattern, Go's syntax (no backreferences or lookaround, ``\\z``, ``(?P<name>…)``,
    ``(?U)``). Loaded on first use (google-re2; its import costs ~2 ms)."""
    global _RE2, _RE2_OPTIONS
    if _RE2 is None:
        import re2

        options = re2.Options()
        options.log_errors = False  # its C++ logger would write parse errors to stderr
        _RE2, _RE2_OPTIONS = re2, options
    check_string(len(pattern))
    try:
        return _RE2.compile(pattern, _RE2_OPTIONS)
    except Exception as exc:  # re2.error: the pattern is not valid RE2 (or too big)
        msg = exc.args[0] if exc.args else exc
        if isinstance(msg, bytes):
            msg = msg.decode("utf-8", "replace")
        raise EvalError(f"invalid regular expression: {msg}") from None


def _matches(rx: Any, text: str) -> Iterator[Any]:
    """The successive non-overlapping matches, as Go finds them: an empty match right after
    the previous match is not one. The work is charged by length (RE2 is linear in it); at
    most MAX_ITEMS matches (each costs microseconds in the RE2 wrapper)."""
    charge(1 + (len(text) >> 10) * (1 + (len(rx.pattern) >> 10)))
    last_end = -1
    n = 0
    for m in rx.finditer(text):
        a, b = m.span()
        if a == b and a == last_end:
            continue
        last_end = b
        n += 1
        if n > MAX_ITEMS:
            raise BudgetExceeded(f"too many matches of a regular expression (limit {MAX_ITEMS:,})")
        yield m


def _match_value(m: Any) -> Any:
    rx = m.re
    names = rx.groupindex
    if names and len(names) != rx.groups:
        raise EvalError("invalid regular expression: mixing named and unnamed capture groups")
    if names:
        return {k: m.group(k) for k in names}
    if rx.groups:
        return list(m.groups())
    return m.group(0)


@value_fn("regex")
def f_regex(pattern: Any, s: Any) -> Any:
    text = to_str(s)
    rx = _re(to_str(pattern))
    charge(1 + (len(text) >> 10))
    m = rx.search(text)
    if m is None:
        raise EvalError("regex: no match")
    return _match_value(m)


@value_fn("regexall")
def f_regexall(pattern: Any, s: Any) -> Any:
    out = []
    for m in _matches(_re(to_str(pattern)), to_str(s)):
        out.append(_match_value(m))
        _size(len(out))
    return out


_GO_TEMPLATE = re.compile(r"\$(?:\$|\{(\w+)\}|(\w+))?")


def _expand(template: str, m: Any) -> str:
    """Go's Regexp.Expand: ``$1`` / ``${1}`` / ``$name`` / ``${name}`` (the longest run of
    letters, digits and _), a missing group is empty, ``$$`` is ``$``, a lone ``$`` stays."""

    def one(t: re.Match[str]) -> str:
        name = t.group(1) or t.group(2)
        if name is None:
            return "$"
        try:
            g = m.group(int(name)) if name.isdigit() else m.group(name)
        except (IndexError, KeyError, ValueError, OverflowError):
            return ""
        return g or ""

    return _GO_TEMPLATE.sub(one, template)


@value_fn("replace")
def f_replace(s: Any, old: Any, new: Any) -> Any:
    text, o, n = to_str(s), to_str(old), to_str(new)
    if len(o) > 1 and o.startswith("/") and o.endswith("/"):
        rx = _re(o[1:-1])
        out: list[str] = []
        pos = total = 0
        for m in _matches(rx, text):
            a, b = m.span()
            piece = _expand(n, m) if "$" in n else n
            total += (a - pos) + len(piece)
            check_string(total)
            out.append(text[pos:a])
            out.append(piece)
            pos = b
        out.append(text[pos:])
        check_string(total + len(text) - pos)
        return "".join(out)
    hits = len(text) + 1 if o == "" else text.count(o)
    check_string(len(text) + hits * (len(n) - len(o)))
    return text.replace(o, n)


# ---------------------------------------------------------------------------------------------
# encoding and hashing
# ---------------------------------------------------------------------------------------------


def _json_ready(v: Any, size: list[int] | None = None) -> Any:
    """v as plain data, its encoded size estimated on the way (strings count twice: escapes)
    so that no encoder builds a string past the limit."""
    charge()
    if size is None:
        size = [0]
    size[0] += 2 * len(v) + 2 if isinstance(v, str) else 8
    check_string(size[0] // 2)
    if isinstance(v, dict):
        return {k: _json_ready(x, size) for k, x in v.items()}
    if isinstance(v, list):
        return [_json_ready(x, size) for x in v]
    return v


def _json(v: Any) -> str:
    text = json.dumps(_json_ready(v), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


@value_fn("jsonencode")
def f_jsonencode(v: Any) -> Any:
    return _json(v)


def _plain(v: Any) -> Any:
    if isinstance(v, float):
        return norm_number(v)
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def _decodable(text: str, fn: str, cost: int) -> str:
    """The text to decode, its work charged before: ``cost``: characters per unit (PyYAML's
    pure-Python loader takes about as long per character as one unit of evaluation)."""
    if len(text) > MAX_DECODE:
        raise BudgetExceeded(f"{fn}: input too large ({len(text):,} characters; limit "
                             f"{MAX_DECODE:,})")
    charge(len(text) // cost)
    return text


# Decoded texts of this root module: ``count`` over ``yamldecode(file(...))`` decodes a file
# once, not once per instance (values are never changed in place: sharing one is safe).
_DECODED: dict[tuple[str, str], Any] = {}
_DECODED_CHARS = [0]
_DECODE_CACHE_CHARS = 4 * MAX_DECODE


def _decoded(fn: str, text: str, decode: Callable[[str], Any]) -> Any:
    key = (fn, text)
    if key in _DECODED:
        return _DECODED[key]
    value = decode(text)
    if _DECODED_CHARS[0] + len(text) > _DECODE_CACHE_CHARS:
        _DECODED.clear()
        _DECODED_CHARS[0] = 0
    _DECODED[key] = value
    _DECODED_CHARS[0] += len(text)
    return value


def forget_decoded() -> None:
    """A new root module: its budget pays for its own decoding."""
    _DECODED.clear()
    _DECODED_CHARS[0] = 0


ON_RESET.append(forget_decoded)


def _count_nodes(v: Any, depth: int = 0) -> None:
    """Walk a decoded value: its nodes are work, and it is not nested beyond reason."""
    charge()
    if depth > 200:
        raise EvalError("decoded value nested too deeply")
    if isinstance(v, dict):
        _size(len(v))
        for x in v.values():
            _count_nodes(x, depth + 1)
    elif isinstance(v, list):
        _size(len(v))
        for x in v:
            _count_nodes(x, depth + 1)


@value_fn("jsondecode")
def f_jsondecode(s: Any) -> Any:
    return _decoded("jsondecode", to_str(s), _jsondecode)


def _jsondecode(text: str) -> Any:
    try:
        v = json.loads(_decodable(text, "jsondecode", 16))
    except ValueError as exc:
        raise EvalError(f"jsondecode: {exc}") from None
    except RecursionError:
        raise EvalError("jsondecode: nested too deeply") from None
    _count_nodes(v)
    return _plain(v)


@value_fn("yamldecode")
def f_yamldecode(s: Any) -> Any:
    return _decoded("yamldecode", to_str(s), _yamldecode)


def _yamldecode(text: str) -> Any:
    import yaml  # only when used

    class _NoAliases(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:  # type: ignore[override]
            if self.check_event(yaml.AliasEvent):
                raise EvalError("yamldecode: aliases are not supported")
            return super().compose_node(parent, index)

    try:
        v = yaml.load(_decodable(text, "yamldecode", 1), Loader=_NoAliases)
    except yaml.YAMLError as exc:
        raise EvalError(f"yamldecode: {exc}") from None
    except RecursionError:
        raise EvalError("yamldecode: nested too deeply") from None
    _count_nodes(v)
    return _plain(v)


@value_fn("yamlencode")
def f_yamlencode(v: Any) -> Any:
    import yaml

    size = [0]
    plain = _json_ready(v, size)
    check_string(size[0])  # YAML indents: allow for it
    charge(size[0])  # PyYAML's pure-Python dumper: about a unit of work per character
    return yaml.safe_dump(plain, sort_keys=True, default_flow_style=False)


@value_fn("csvdecode")
def f_csvdecode(s: Any) -> Any:
    import csv
    import io

    rows = []
    cells = 0
    csv.field_size_limit(MAX_STRING)  # one field may be as long as any string
    try:
        for row in csv.reader(io.StringIO(to_str(s), newline=""), strict=True):
            rows.append(row)
            cells += len(row)
            _size(cells)  # every cell becomes a value: count cells, not rows
    except csv.Error as exc:
        raise EvalError(f"csvdecode: {exc}") from None
    if not rows:
        return []
    head = rows[0]
    return [dict(zip(head, r, strict=False)) for r in rows[1:]]


@value_fn("base64encode")
def f_base64encode(s: Any) -> Any:
    raw = to_str(s).encode()
    check_string((len(raw) + 2) // 3 * 4)
    return base64.b64encode(raw).decode()


@value_fn("base64decode")
def f_base64decode(s: Any) -> Any:
    try:
        return base64.b64decode(to_str(s), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError) as exc:
        raise EvalError(f"base64decode: {exc}") from None


@value_fn("base64gzip")
def f_base64gzip(s: Any) -> Any:
    import gzip

    return base64.b64encode(gzip.compress(to_str(s).encode(), mtime=0)).decode()


@value_fn("urlencode")
def f_urlencode(s: Any) -> Any:
    from urllib.parse import quote_plus

    text = to_str(s)
    check_string(3 * len(text.encode()))
    return quote_plus(text)


def _hash(name: str, b64: bool = False) -> Callable[[Any], Any]:
    def fn(s: Any) -> Any:
        d = hashlib.new(name, to_str(s).encode())
        return base64.b64encode(d.digest()).decode() if b64 else d.hexdigest()

    return fn


for _n, _alg, _b in [
    ("md5", "md5", False),
    ("sha1", "sha1", False),
    ("sha256", "sha256", False),
    ("sha512", "sha512", False),
    ("base64sha256", "sha256", True),
    ("base64sha512", "sha512", True),
]:
    value_fn(_n)(_hash(_alg, _b))


@value_fn("uuidv5")
def f_uuidv5(ns: Any, name: Any) -> Any:
    import uuid

    spaces = {
        "dns": uuid.NAMESPACE_DNS,
        "url": uuid.NAMESPACE_URL,
        "oid": uuid.NAMESPACE_OID,
        "x500": uuid.NAMESPACE_X500,
    }
    n = to_str(ns)
    space = spaces.get(n) or uuid.UUID(n)
    return str(uuid.uuid5(space, to_str(name)))


# ---------------------------------------------------------------------------------------------
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
# networks
# ---------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1024)
def _parse_net(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    return ipaddress.ip_network(text, strict=False)


def _net(prefix: Any) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    try:
        return _parse_net(to_str(prefix))
    except ValueError as exc:
        raise EvalError(f"invalid CIDR: {exc}") from None


@value_fn("cidrsubnet")
def f_cidrsubnet(prefix: Any, newbits: Any, netnum: Any) -> Any:
    net = _net(prefix)
    nb, num = int(to_number(newbits)), int(to_number(netnum))
    return _subnet(net, nb, num)


@functools.lru_cache(maxsize=4096)
def _subnet(net: ipaddress.IPv4Network | ipaddress.IPv6Network, nb: int, num: int) -> str:
    new_len = net.prefixlen + nb
    if new_len > net.max_prefixlen or num < 0 or num >= 2**nb:
        raise EvalError("cidrsubnet: not enough address space")
    base = int(net.network_address) + (num << (net.max_prefixlen - new_len))
    return str(ipaddress.ip_network((base, new_len)))


@value_fn("cidrsubnets")
def f_cidrsubnets(prefix: Any, *newbits: Any) -> Any:
    net = _net(prefix)
    out: list[str] = []
    cur = int(net.network_address)
    end = int(net.broadcast_address) + 1
    for nb in newbits:
        plen = net.prefixlen + int(to_number(nb))
        if plen > net.max_prefixlen:
            raise EvalError("cidrsubnets: not enough address space")
        size = 1 << (net.max_prefixlen - plen)
        cur = (cur + size - 1) // size * size
        if cur + size > end:
            raise EvalError("cidrsubnets: not enough address space")
        out.append(str(ipaddress.ip_network((cur, plen))))
        cur += size
    return out


@value_fn("cidrhost")
def f_cidrhost(prefix: Any, hostnum: Any) -> Any:
    net = _net(prefix)
    n = int(to_number(hostnum))
    size = net.num_addresses
    if n < 0:
        n += size
    if n < 0 or n >= size:
        raise EvalError("cidrhost: host number out of range")
    return str(net.network_address + n)


@value_fn("cidrnetmask")
def f_cidrnetmask(prefix: Any) -> Any:
    net = _net(prefix)
    if net.version != 4:
        raise EvalError("cidrnetmask: IPv4 only")
    return str(net.netmask)


# ---------------------------------------------------------------------------------------------
# paths (string operations only; the filesystem is not read)
# ---------------------------------------------------------------------------------------------


@value_fn("basename")
def f_basename(p: Any) -> Any:
    return posixpath.basename(to_str(p).rstrip("/")) or "/"


@value_fn("dirname")
def f_dirname(p: Any) -> Any:
    return posixpath.dirname(to_str(p)) or "."


# ---------------------------------------------------------------------------------------------
# not evaluated: clock, randomness, filesystem, provider
# ---------------------------------------------------------------------------------------------


def _not_static(name: str, why: str) -> None:
    def fn(*args: Any) -> Any:
        return Unknown(f"{name}() {why}")

    FUNCTIONS[name] = fn


for _n in ("timestamp", "plantimestamp", "uuid", "bcrypt"):
    _not_static(_n, "changes on every run")
for _n in ("formatdate", "timeadd", "timecmp"):
    _not_static(_n, "is not evaluated")
for _n in ("fileset", "abspath", "pathexpand"):
    _not_static(_n, "is not evaluated (it depends on the machine)")


# ---------------------------------------------------------------------------------------------
# files: read inside the scanned tree only (the reader is set per root module by the source)
# ---------------------------------------------------------------------------------------------

FILE_READER: list[Callable[[str], Any]] = []  # [read(path) -> bytes | Unknown] while scanning


def read_file(path: Any) -> Any:
    """The bytes of a file the configuration names, or Unknown (outside the scanned tree,
    absent, no tree): never a guess."""
    if is_opaque(path):
        return as_unknown(path)
    if not FILE_READER:
        return Unknown("files are read only while scanning a directory")
    return FILE_READER[0](to_str(path))


def file_text(path: Any, fn: str = "file") -> Any:
    data = read_file(path)
    if isinstance(data, Unknown):
        return data
    check_string(len(data))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise EvalError(f"{fn}(): the file is not valid UTF-8 (use filebase64)") from None


@raw_fn("file")
def f_file(path: Any) -> Any:
    return file_text(path)


@raw_fn("fileexists")
def f_fileexists(path: Any) -> Any:
    data = read_file(path)
    if isinstance(data, Unknown):
        return Unknown(data.reason) if "does not exist" not in data.reason else False
    return True


@raw_fn("filebase64")
def f_filebase64(path: Any) -> Any:
    data = read_file(path)
    if isinstance(data, Unknown):
        return data
    check_string((len(data) + 2) // 3 * 4)
    return base64.b64encode(data).decode()


def _file_hash(name: str, b64: bool) -> Callable[[Any], Any]:
    def fn(path: Any) -> Any:
        data = read_file(path)
        if isinstance(data, Unknown):
            return data
        d = hashlib.new(name, data)
        return base64.b64encode(d.digest()).decode() if b64 else d.hexdigest()

    return fn


for _n, _alg, _b in [
    ("filemd5", "md5", False),
    ("filesha1", "sha1", False),
    ("filesha256", "sha256", False),
    ("filesha512", "sha512", False),
    ("filebase64sha256", "sha256", True),
    ("filebase64sha512", "sha512", True),
]:
    raw_fn(_n)(_file_hash(_alg, _b))
def _number_too_large(text: Any) -> Any:
    raise EvalError(f"number literal too large: {text}…")


FUNCTIONS[NUMBER_TOO_LARGE] = _number_too_large

for _n in ("type", "ephemeralasnull", "textdecodebase64", "textencodebase64", "templatestring"):
    _not_static(_n, "is not supported")



__all__ = ["FUNCTIONS", "make_set"]
