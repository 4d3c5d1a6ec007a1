"""Does an EventBridge event pattern match EC2's spot interruption events (SPOT-003)?

EventBridge matches an event when every field the pattern names matches: a list of values
(any one), content filters (``prefix``, ``suffix``, ``anything-but``, ``equals-ignore-case``,
``wildcard``, ``exists``), nested objects, and ``$or``. Only ``source`` and ``detail-type``
decide here; a pattern that also filters on other fields (``detail``, ``region``) still
matches some of the events and counts (the evidence names those fields).
"""

from __future__ import annotations

from typing import Any

from scanner.model import Ref, Unknown

SOURCE = "aws.ec2"
INTERRUPTION = "EC2 Spot Instance Interruption Warning"
REBALANCE = "EC2 Instance Rebalance Recommendation"
EVENTS = (INTERRUPTION, REBALANCE)
MAX_OR = 64  # $or branches walked per pattern, nested ones included (a budget)


def matches(pattern: Any) -> tuple[tuple[str, ...], tuple[str, ...]] | Unknown:
    """(the interruption events the pattern matches, the other fields it filters on); an
    Unknown when the pattern is not known or uses a filter this does not read. Nested ``$or``
    branches count against one budget of ``MAX_OR`` per pattern, spent before each is walked."""
    return _matches(pattern, [MAX_OR])


def _matches(pattern: Any, budget: list[int]) -> tuple[tuple[str, ...], tuple[str, ...]] | Unknown:
    if isinstance(pattern, Unknown):
        return Unknown(f"its event pattern is not known ({pattern.reason})"
                       if pattern.reason else "its event pattern is not known")
    if isinstance(pattern, Ref):
        return Unknown(f"its event pattern is built from {pattern}, known only after apply")
    if not isinstance(pattern, dict):
        return Unknown("its event pattern is not a JSON object")
    branches = pattern.get("$or")
    if branches is not None:
        if not isinstance(branches, list):
            return Unknown("its event pattern's $or is not a list")
        budget[0] -= len(branches)
        if budget[0] < 0:
            return Unknown(f"its event pattern has more than {MAX_OR} $or branches (not read)")
        rest = {k: v for k, v in pattern.items() if k != "$or"}
        hit: list[str] = []
        others: list[str] = []
        for b in branches:
            if not isinstance(b, dict):
                return Unknown("its event pattern's $or is not read")
            found = _matches({**rest, **b}, budget)
            if isinstance(found, Unknown):
                return found
            hit.extend(e for e in found[0] if e not in hit)
            others.extend(f for f in found[1] if f not in others)
        return tuple(hit), tuple(others)
    source = _field(pattern.get("source"), SOURCE)
    if isinstance(source, Unknown):
        return source
    if not source:
        return (), ()
    events: list[str] = []
    for event in EVENTS:
        matched = _field(pattern.get("detail-type"), event)
        if isinstance(matched, Unknown):
            return matched
        if matched:
            events.append(event)
    filters = tuple(sorted(k for k in pattern if k not in ("source", "detail-type")))
    return tuple(events), filters


def _field(spec: Any, value: str) -> bool | Unknown:
    """Does a pattern field match ``value``? Absent: it matches anything."""
    if spec is None:
        return True
    if isinstance(spec, Unknown):
        return Unknown("a value of its event pattern is not known")
    if not isinstance(spec, list):
        return Unknown("its event pattern has a field that is not a list")
    unknown: Unknown | None = None
    for item in spec:
        found = _one(item, value)
        if found is True:
            return True
        if isinstance(found, Unknown):
            unknown = found
    return unknown if unknown is not None else False


def _one(item: Any, value: str) -> bool | Unknown:
    if isinstance(item, str):
        return item == value
    if not isinstance(item, dict) or len(item) != 1:
        return False if not isinstance(item, dict) else Unknown(
            "its event pattern has a filter that is not read")
    ((op, arg),) = item.items()
    if op == "prefix":
        inner = _ci(arg)
        if isinstance(inner, tuple):
            return value.lower().startswith(inner[0].lower())
        return isinstance(arg, str) and value.startswith(arg)
    if op == "suffix":
        inner = _ci(arg)
        if isinstance(inner, tuple):
            return value.lower().endswith(inner[0].lower())
        return isinstance(arg, str) and value.endswith(arg)
    if op == "equals-ignore-case":
        return isinstance(arg, str) and arg.lower() == value.lower()
    if op == "wildcard":
        import fnmatch  # only here: the pre-commit path does not pay for it

        return isinstance(arg, str) and fnmatch.fnmatchcase(value, arg.replace("[", "[[]"))
    if op == "exists":
        return arg is True
    if op == "anything-but":
        if isinstance(arg, str):
            return arg != value
        if isinstance(arg, list):
            return value not in arg
        if isinstance(arg, dict) and len(arg) == 1:
            negated = _one(arg, value)
            return negated if isinstance(negated, Unknown) else not negated
    return Unknown(f"its event pattern uses the filter {str(op)[:40]!r}, which is not read")


def _ci(arg: Any) -> tuple[str] | None:
    """``{"equals-ignore-case": "x"}`` inside prefix / suffix."""
    if isinstance(arg, dict) and isinstance(arg.get("equals-ignore-case"), str):
        return (arg["equals-ignore-case"],)
    return None
