"""String functions: ``format``, ``join``, ``split``, ``replace``, ``regex`` and the rest.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from typing import Any

from scanner.sources.terraform.hcl.functions.encoding import _json
from scanner.sources.terraform.hcl.functions.registry import (
    _list,
    _size,
    value_fn,
)
from scanner.sources.terraform.hcl.values import (
    MAX_ITEMS,
    BudgetExceeded,
    EvalError,
    charge,
    check_string,
    to_bool,
    to_number,
    to_str,
)

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
            whole = int(to_number(a)) if not isinstance(a, str) else None
            if whole is None:
                s = a.encode().hex() if verb == "x" else a.encode().hex().upper()
            else:
                s = format(whole, verb)
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
