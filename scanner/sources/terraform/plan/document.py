"""Reading a plan file as one document: the bytes, the text, the JSON (skipping the members that
are not needed where terraform's layout allows it), and the planned resources in it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scanner.inputs.numbers import NOT_FINITE
from scanner.inputs.safe_read import ReadError, decode_text, read_regular
from scanner.model import InputError, Unknown
from scanner.sources.terraform.plan.config import MAX_MODULE_DEPTH

_ADDRESS = re.compile(r'"address"\s*:\s*"((?:[^"\\]|\\.)*)"')
_WS = re.compile(r"[ \t\r\n]*")
MAX_PLAN_BYTES = 2 << 30
# Top-level members that are not needed (after_unknown's information is in planned_values).
_SKIPPABLE = frozenset({"resource_changes", "resource_drift", "output_changes", "prior_state"})


def _skip_ws(text: str, i: int) -> int:
    return _WS.match(text, i).end()  # type: ignore[union-attr]


def _members(text: str, i: int, dec: json.JSONDecoder, out: dict[str, Any],
             stop: frozenset[str]) -> tuple[int, str | None]:
    """Decode `"key": value` members of the top-level object from i (just after "{" or ",").

    Returns (index, key) of the first member whose key is in `stop` (value not decoded), or
    (index after the closing "}", None)."""
    first = True
    while True:
        i = _skip_ws(text, i)
        if text.startswith("}", i):
            return i + 1, None
        if not first:
            if not text.startswith(",", i):
                raise ValueError("expected ','")
            i = _skip_ws(text, i + 1)
        first = False
        key, j = dec.raw_decode(text, i)
        if not isinstance(key, str):
            raise ValueError("expected a key")
        j = _skip_ws(text, j)
        if not text.startswith(":", j):
            raise ValueError("expected ':'")
        if key in stop:
            return i, key
        out[key], i = dec.raw_decode(text, _skip_ws(text, j + 1))


def _decode_fast(text: str) -> dict[str, Any] | None:
    """planned_values, configuration and the small members, without the skippable ones.

    Walks the top-level object from the start until a skippable member (after planned_values),
    then resumes at the last `"configuration"` key, which is checked to be top-level: the rest of
    the text must decode as members up to the closing brace and the end. None: not this layout.
    """
    dec = json.JSONDecoder(parse_constant=_constant)
    out: dict[str, Any] = {}
    i = _skip_ws(text, 0)
    if not text.startswith("{", i):
        return None
    i, key = _members(text, i + 1, dec, out, _SKIPPABLE)
    if key is None:
        return out if text[i:].strip() == "" else None  # nothing to skip: all decoded
    if "planned_values" not in out:
        return None
    end = len(text)
    for _ in range(8):
        k = text.rfind('"configuration"', i, end)
        if k < 0:
            return None
        end = k
        b = k - 1
        while b > i and text[b] in " \t\r\n":
            b -= 1
        if text[b] != ",":
            continue
        tail: dict[str, Any] = {}
        try:
            j, stop = _members(text, k, dec, tail, frozenset())
        except ValueError:
            continue
        if stop is None and text[j:].strip() == "" and "configuration" in tail:
            out.update(tail)
            return out
    return None


def _constant(name: str) -> Unknown:
    """NaN, Infinity, -Infinity: not JSON, but Python's json module accepts them."""
    return Unknown(f"{NOT_FINITE} ({name})")


def _read(path: Path) -> tuple[dict[str, Any], str] | InputError:
    spath = str(path)
    try:
        data = read_regular(path, limit=MAX_PLAN_BYTES)
    except ReadError as exc:
        return InputError(spath, f"cannot read: {exc.reason}")
    if data.startswith(b"PK\x03\x04"):
        return InputError(spath, "a binary Terraform plan file, not JSON: convert it with "
                                 "`terraform show -json PLANFILE > plan.json`")
    try:
        text = decode_text(data)  # UTF-8; UTF-16 from PowerShell's `>`
    except UnicodeDecodeError as exc:
        if b"\x00" in data[:8192]:
            return InputError(spath, "a binary file, not a Terraform plan JSON")
        return InputError(spath, f"not {exc.encoding.upper()} text: {exc.reason}",
                          line=data.count(b"\n", 0, exc.start) + 1)
    del data
    if "\x00" in text[:8192]:
        return InputError(spath, "a binary file, not a Terraform plan JSON")
    if not text.strip():
        return InputError(spath, "empty file, not a Terraform plan")
    doc: Any = None
    try:
        doc = _decode_fast(text)
    except (ValueError, RecursionError):
        doc = None
    if doc is None:
        try:
            doc = json.loads(text, parse_constant=_constant)
        except json.JSONDecodeError as exc:
            truncated = " (truncated?)" if exc.pos >= len(text.rstrip()) else ""
            return InputError(spath, f"invalid JSON: {exc.msg}{truncated}", line=exc.lineno)
        except RecursionError:
            return InputError(spath, "invalid JSON: nested too deeply")
        except ValueError as exc:  # an integer of more than 4,300 digits
            return InputError(spath, f"invalid JSON: {str(exc).split(';')[0]}")
    if not isinstance(doc, dict) or "format_version" not in doc:
        return InputError(spath, "not a Terraform plan: no format_version")
    if "planned_values" not in doc and "resource_changes" not in doc:
        what = " (a state file?)" if "values" in doc else ""
        return InputError(spath, f"not a Terraform plan: no planned_values{what}")
    version = doc.get("format_version")
    if not isinstance(version, str) or not version.startswith("1."):
        return InputError(spath, f"unsupported plan format_version {version!r} (expected 1.x)")
    return doc, text


def _iter_planned(root: Any, problems: list[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(module instance address, resource) for every planned resource, child modules included.
    What does not have the shape terraform writes is added to ``problems`` (naming the key)."""
    stack: list[tuple[Any, str, int]] = [(root, "planned_values.root_module", 0)]
    while stack:
        module, key, depth = stack.pop()
        if not isinstance(module, dict):
            problems.append(f"{key} is {_json_type(module)}, not an object")
            continue
        if depth > MAX_MODULE_DEPTH:
            problems.append(f"{key}: modules nested more than {MAX_MODULE_DEPTH} deep are not "
                            "read")
            continue
        address = module.get("address") if depth else ""
        address = address if isinstance(address, str) else ""
        resources = module.get("resources", [])
        if not isinstance(resources, list):
            problems.append(f"{key}.resources is {_json_type(resources)}, not a list")
            resources = []
        for i, r in enumerate(resources):
            if isinstance(r, dict):
                yield address, r
            else:
                problems.append(f"{key}.resources[{i}] is {_json_type(r)}, not an object")
        children = module.get("child_modules", [])
        if not isinstance(children, list):
            problems.append(f"{key}.child_modules is {_json_type(children)}, not a list")
            continue
        for i in range(len(children) - 1, -1, -1):
            stack.append((children[i], f"{key}.child_modules[{i}]", depth + 1))


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "not JSON"


def _from_changes(changes: Any, problems: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """A plan without planned_values: the `after` of each resource change."""
    out: list[tuple[str, dict[str, Any]]] = []
    if not isinstance(changes, list):
        problems.append(f"resource_changes is {_json_type(changes)}, not a list")
        return out
    for i, rc in enumerate(changes):
        if not isinstance(rc, dict):
            problems.append(f"resource_changes[{i}] is {_json_type(rc)}, not an object")
            continue
        if "deposed" in rc:
            continue
        change = rc.get("change")
        after = change.get("after") if isinstance(change, dict) else None
        if isinstance(after, dict):
            module = rc.get("module_address")
            marks = change.get("after_sensitive") if isinstance(change, dict) else None
            out.append((module if isinstance(module, str) else "",
                        {**rc, "values": after, "sensitive_values": marks}))
    return out


def _plan_lines(text: str) -> dict[str, int] | None:
    """First line of each address in the plan text; None when the JSON is on one line."""
    if text.count("\n", 0, len(text) - 1) == 0:
        return None
    lines: dict[str, int] = {}
    line, last = 1, 0
    for m in _ADDRESS.finditer(text):
        raw = m.group(1)
        try:
            addr = json.loads(f'"{raw}"') if "\\" in raw else raw
        except ValueError:
            continue
        if addr not in lines:
            line += text.count("\n", last, m.start())
            last = m.start()
            lines[addr] = line
    return lines

