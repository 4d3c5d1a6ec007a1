"""Sensitive values of a plan: their text is collected (the report redacts it) and short ones
are made UNKNOWN so that they never reach a report."""

from __future__ import annotations

from typing import Any

from scanner.model import Unknown


def _sensitive(value: Any, marks: Any, out: set[str]) -> None:
    """Add to ``out`` the text of every value that ``marks`` (terraform's ``sensitive_values``
    shape: ``true`` for a sensitive value, objects and lists mirroring the value) marks."""
    if not marks:
        return  # most resources: {} or only empty objects and lists
    short: set[Any] = set()
    stack = [(value, marks)]
    while stack:
        cur, mark = stack.pop()
        if mark is True:
            _all_text(cur, out)
        elif type(mark) is dict:
            if type(cur) is dict:
                for k, m in mark.items():
                    if m is True and _too_short(cur.get(k)):
                        short.add(cur[k])
                        cur[k] = _HIDDEN
                    elif m:
                        stack.append((cur.get(k), m))
        elif type(mark) is list and type(cur) is list:
            for i, (v, m) in enumerate(zip(cur, mark, strict=False)):
                if m is True and _too_short(v):
                    short.add(v)
                    cur[i] = _HIDDEN
                elif m:
                    stack.append((v, m))
    if short:
        _hide_copies(value, short)


# A report's redaction finds only secrets of at least this many characters
# (scanner.findings.redact's MIN_SENSITIVE): a shorter sensitive value (terraform marks a
# substr() of a secret too) is made UNKNOWN here, so that it never reaches a report.
_SHORT_SECRET = 4
_HIDDEN = Unknown("a sensitive value")


def _hide_copies(value: Any, short: set[Any], depth: int = 0) -> None:
    """The same short secrets where terraform does not mark them (the AWS provider's
    ``tags_all`` repeats ``tags`` unmarked): made UNKNOWN too."""
    if depth > 32:
        return
    items = value.items() if isinstance(value, dict) else \
        enumerate(value) if isinstance(value, list) else ()
    for k, v in list(items):
        if isinstance(v, dict | list):
            _hide_copies(v, short, depth + 1)
        elif not isinstance(v, bool) and isinstance(v, str | int | float) and v in short:
            value[k] = _HIDDEN


def _too_short(v: Any) -> bool:
    if isinstance(v, str):
        return 0 < len(v) < _SHORT_SECRET
    return isinstance(v, int | float) and not isinstance(v, bool) and len(str(v)) < _SHORT_SECRET


def _all_text(value: Any, out: set[str]) -> None:
    stack = [value]
    while stack:
        cur = stack.pop()
        if isinstance(cur, str):
            out.add(cur)
        elif isinstance(cur, int | float) and not isinstance(cur, bool):
            out.add(str(cur))
        elif isinstance(cur, dict):
            stack.extend(cur.keys())  # a sensitive map's keys are secret too
            stack.extend(cur.values())
        elif isinstance(cur, list):
            stack.extend(cur)



def _sensitive_variables(doc: dict[str, Any], out: set[str]) -> None:
    """Root module variables declared ``sensitive = true``: their values in the plan."""
    config = doc.get("configuration")
    root = config.get("root_module") if isinstance(config, dict) else None
    declared = root.get("variables") if isinstance(root, dict) else None
    given = doc.get("variables")
    if not isinstance(declared, dict) or not isinstance(given, dict):
        return
    for name, decl in declared.items():
        if isinstance(decl, dict) and decl.get("sensitive") is True:
            entry = given.get(name)
            if isinstance(entry, dict):
                _all_text(entry.get("value"), out)


def _sensitive_changes(changes: Any, out: set[str]) -> None:
    """``before_sensitive`` / ``after_sensitive`` of the resource changes (when decoded)."""
    for rc in changes if isinstance(changes, list) else ():
        change = rc.get("change") if isinstance(rc, dict) else None
        if isinstance(change, dict):
            _sensitive(change.get("before"), change.get("before_sensitive"), out)
            _sensitive(change.get("after"), change.get("after_sensitive"), out)

