"""Encoding and hashing: ``jsonencode`` / ``jsondecode``, ``yamldecode``, base64, ``sha256`` ….
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from typing import Any

from scanner.sources.terraform.hcl.functions.registry import (
    _size,
    value_fn,
)
from scanner.sources.terraform.hcl.values import (
    MAX_DECODE,
    MAX_STRING,
    ON_RESET,
    BudgetExceeded,
    EvalError,
    charge,
    check_string,
    norm_number,
    to_str,
)

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
        def compose_node(self, parent: Any, index: Any) -> Any:
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
