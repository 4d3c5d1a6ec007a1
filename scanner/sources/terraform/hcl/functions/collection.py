"""Structural collection functions (``length``, ``concat``, ``merge``, ``lookup`` …) and the set
and numeric-list ones (``setunion``, ``sort``, ``sum`` …).
"""

from __future__ import annotations

import math
from typing import Any

from scanner.model import Ref, Unknown
from scanner.sources.terraform.hcl.functions.registry import (
    _guard,
    _hashable,
    _list,
    _map,
    _Opaque,
    _size,
    make_set,
    raw_fn,
    struct_fn,
    value_fn,
)
from scanner.sources.terraform.hcl.values import (
    MAX_ITEMS,
    EvalError,
    Lazy,
    as_unknown,
    charge,
    equal,
    is_opaque,
    norm_number,
    to_bool,
    to_number,
    to_str,
    type_name,
)

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
    start: int | float
    stop: int | float
    step: int | float
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
