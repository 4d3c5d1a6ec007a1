"""The condition language of declarative policies, evaluated in three values (Kleene logic).

A condition says what must hold: true is PASS, false is FAIL, not known is UNKNOWN (naming the
path and why). ``all``: false if any part is false, else not known if any part is, else true.
``any``: true if any part is true, else not known if any part is, else false. ``not`` turns true
and false round and leaves not known as it is.

A test reads one path. When the path gives several values (a list: each instance type of a mixed
group, each block device) the test must hold for every one of them: one value that fails is
false whatever the others are; else one value not known is not known. An absent value (not
set) satisfies only ``exists: false`` and ``not_in``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scanner.model import Unknown

OPERATORS = ("equals", "in", "not_in", "matches", "exists", "gt", "ge", "lt", "le")
NUMERIC = {"gt": (lambda a, b: a > b, ">"), "ge": (lambda a, b: a >= b, ">="),
           "lt": (lambda a, b: a < b, "<"), "le": (lambda a, b: a <= b, "<=")}
MAX_SHOWN = 20  # values of one path shown in a message or the evidence
MAX_BRIEF = 120  # characters of a value a message quotes


@dataclass
class Outcome:
    """``holds``: True, False or None (not known). ``why``: the test that decided, in words;
    ``unknown``: the path and reason of what could not be known; ``read``: every path's
    values (for the evidence)."""

    holds: bool | None
    why: str = ""
    path: str = ""
    read: dict[str, Any] = field(default_factory=dict)


Lookup = Callable[[str], Any]


class Node:
    def evaluate(self, lookup: Lookup, read: dict[str, Any]) -> Outcome:
        raise NotImplementedError

    def paths(self) -> list[str]:
        raise NotImplementedError


class All(Node):
    def __init__(self, parts: list[Node]) -> None:
        self.parts = parts

    def evaluate(self, lookup: Lookup, read: dict[str, Any]) -> Outcome:
        first_unknown: Outcome | None = None
        held: list[Outcome] = []
        for part in self.parts:
            out = part.evaluate(lookup, read)
            if out.holds is False:
                return out
            if out.holds is None and first_unknown is None:
                first_unknown = out
            held.append(out)
        if first_unknown is not None:
            return first_unknown
        return Outcome(True, "; ".join(o.why for o in held if o.why))

    def paths(self) -> list[str]:
        return [p for part in self.parts for p in part.paths()]


class Any_(Node):
    def __init__(self, parts: list[Node]) -> None:
        self.parts = parts

    def evaluate(self, lookup: Lookup, read: dict[str, Any]) -> Outcome:
        first_unknown: Outcome | None = None
        failed: list[Outcome] = []
        for part in self.parts:
            out = part.evaluate(lookup, read)
            if out.holds is True:
                return out
            if out.holds is None and first_unknown is None:
                first_unknown = out
            failed.append(out)
        if first_unknown is not None:
            return first_unknown
        return Outcome(False, "none holds: " + "; ".join(o.why for o in failed),
                       failed[0].path if failed else "")

    def paths(self) -> list[str]:
        return [p for part in self.parts for p in part.paths()]


class Not(Node):
    def __init__(self, part: Node) -> None:
        self.part = part

    def evaluate(self, lookup: Lookup, read: dict[str, Any]) -> Outcome:
        out = self.part.evaluate(lookup, read)
        if out.holds is None:
            return out
        return Outcome(not out.holds, f"not ({out.why})", out.path)

    def paths(self) -> list[str]:
        return self.part.paths()


class Test(Node):
    def __init__(self, path: str, op: str, expected: Any, regex: Any = None) -> None:
        self.path = path
        self.op = op
        self.expected = expected
        self.regex = regex

    def paths(self) -> list[str]:
        return [self.path]

    def evaluate(self, lookup: Lookup, read: dict[str, Any]) -> Outcome:
        value = lookup(self.path)
        read[self.path] = shown(value)
        if isinstance(value, Unknown):
            return Outcome(None, f"{self.path} is not known: {value.reason or 'not known'}",
                           self.path)
        if self.op == "exists":
            present = value is not None
            if isinstance(value, list):
                unknown = [v for v in value if isinstance(v, Unknown)]
                if not self.expected and unknown:
                    return Outcome(None, f"{self.path} is not known: {_why(unknown[0])}",
                                   self.path)
            ok = present is self.expected
            return Outcome(ok, f"{self.path} {'is' if present else 'is not'} set", self.path)
        if value is None:
            ok = self.op == "not_in"
            return Outcome(ok, f"{self.path} is not set", self.path)
        values = value if isinstance(value, list) else [value]
        unknown_one: Unknown | None = None
        for item in values:
            if isinstance(item, Unknown):
                unknown_one = unknown_one or item
                continue
            ok, said = self._one(item)
            if not ok:
                return Outcome(False, said, self.path)
        if unknown_one is not None:
            return Outcome(None, f"{self.path} is not known: {_why(unknown_one)}", self.path)
        return Outcome(True, f"{self.path} {self._words()}", self.path)

    def _words(self) -> str:
        if self.op in NUMERIC:
            return f"{NUMERIC[self.op][1]} {self.expected}"
        if self.op in ("in", "not_in"):
            return f"{self.op.replace('_', ' ')} {_list(self.expected)}"
        if self.op == "matches":
            return f"matches {self.expected!r}"
        return f"equals {self.expected!r}"

    def _one(self, item: Any) -> tuple[bool, str]:
        if self.op == "equals":
            ok = same(item, self.expected)
            return ok, f"{self.path} is {brief(item)!r}, not {self.expected!r}"
        if self.op == "in":
            ok = any(same(item, e) for e in self.expected)
            return ok, f"{self.path} {brief(item)!r} is not in {_list(self.expected)}"
        if self.op == "not_in":
            ok = not any(same(item, e) for e in self.expected)
            return ok, f"{self.path} {brief(item)!r} is in {_list(self.expected)}"
        if self.op == "matches":
            if not isinstance(item, str | int | float) or isinstance(item, bool):
                return False, f"{self.path} is {brief(item)!r}, not text"
            ok = self.regex.search(str(item)) is not None
            return ok, f"{self.path} {brief(item)!r} does not match {self.expected!r}"
        fn, sign = NUMERIC[self.op]
        number = as_number(item)
        if number is None:
            return False, f"{self.path} is {brief(item)!r}, not a number"
        ok = bool(fn(number, float(self.expected)))
        return ok, f"{self.path} is {_num(number)}, not {sign} {_num(float(self.expected))}"


def _why(u: Unknown) -> str:
    return u.reason or "not known"


def _num(x: float) -> str:
    return str(int(x)) if x.is_integer() else str(x)


def _list(values: list[Any]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def as_number(value: Any) -> float | None:
    """An int, a float or the text of one ("0.50", as AWS spells prices); never a bool."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str) and len(value) <= 64:
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def same(value: Any, expected: Any) -> bool:
    """Equality across the spellings sources use: "true"/True, "2"/2, "0.50"/0.5."""
    if isinstance(expected, bool):
        if isinstance(value, bool):
            return value is expected
        return isinstance(value, str) and value.strip().lower() == str(expected).lower()
    if isinstance(expected, int | float):
        number = as_number(value)
        return number is not None and number == float(expected)
    if isinstance(value, bool):
        return str(value).lower() == str(expected).lower()
    if isinstance(value, int | float):
        number = as_number(expected)
        return number is not None and number == float(value)
    return isinstance(value, str) and value == expected


def brief(value: Any) -> Any:
    """A value as a message shows it: long text only by its length (the evidence has it)."""
    if isinstance(value, str) and len(value) > MAX_BRIEF:
        return f"<text of {len(value)} characters>"
    return shown(value)


def shown(value: Any) -> Any:
    """A value as a report may show it: JSON types, long text and lists cut."""
    if isinstance(value, Unknown):
        return f"UNKNOWN: {value.reason}" if value.reason else "UNKNOWN"
    if isinstance(value, list):
        return [shown(v) for v in value[:MAX_SHOWN]]
    if isinstance(value, str):  # whole: the report's redaction sees it whole, then bounds it
        return value
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, Mapping):
        return "{…}"
    return str(value)[:200]


def compile_condition(doc: Any, compile_regex: Callable[[str], Any]) -> Node:
    """A condition (already valid against the JSON Schema) as a tree of nodes."""
    if "all" in doc:
        return All([compile_condition(d, compile_regex) for d in doc["all"]])
    if "any" in doc:
        return Any_([compile_condition(d, compile_regex) for d in doc["any"]])
    if "not" in doc:
        return Not(compile_condition(doc["not"], compile_regex))
    op = next(k for k in doc if k != "path")
    expected = doc[op]
    regex = compile_regex(expected) if op == "matches" else None
    return Test(doc["path"], op, expected, regex)
