"""How much text a value stands for, counted the way it would be written out.

A value built from references is small in memory and huge once written: a 6 KB parameter
referenced from sixty thousand list items, or a 1 MiB file read once and listed a thousand
times, is a few hundred kilobytes of objects and a gigabyte of report. Sources check what they
produce against a budget (:func:`exceeds`) and the report bounds what it writes
(:func:`bounded`), so a small hostile input can never amplify into a large output.
"""

from __future__ import annotations

from typing import Any

MAX_DEPTH = 64


def exceeds(value: Any, limit: int) -> bool:
    """Whether ``value`` written out (strings, plus one per node) is more than ``limit``
    characters. Stops as soon as it knows: the cost is at most ``limit`` steps."""
    left = [limit]

    def walk(v: Any, depth: int) -> bool:
        if depth > MAX_DEPTH:
            return True
        left[0] -= len(v) + 1 if isinstance(v, str) else 1
        if left[0] < 0:
            return True
        if isinstance(v, dict):
            return any(walk(k, depth + 1) or walk(x, depth + 1) for k, x in v.items())
        if isinstance(v, list | tuple):
            return any(walk(x, depth + 1) for x in v)
        return False

    return walk(value, 0)


def written_size(value: Any, limit: int) -> int:
    """How many characters ``value`` is written out (as :func:`exceeds` counts them), or
    ``limit + 1`` once it is known to be more than ``limit``: at most ``limit`` steps."""
    left = [limit]

    def walk(v: Any, depth: int) -> bool:
        if depth > MAX_DEPTH:
            left[0] = -1
            return True
        left[0] -= len(v) + 1 if isinstance(v, str) else 1
        if left[0] < 0:
            return True
        if isinstance(v, dict):
            return any(walk(k, depth + 1) or walk(x, depth + 1) for k, x in v.items())
        if isinstance(v, list | tuple):
            return any(walk(x, depth + 1) for x in v)
        return False

    return limit + 1 if walk(value, 0) else limit - left[0]


def cut_text(text: str, limit: int) -> str:
    """``text`` up to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters]"


def bounded(value: Any, budget: int, *, items: int = 200) -> Any:
    """A copy of ``value`` written out in at most about ``budget`` characters: long strings cut,
    lists past ``items`` cut, and once the budget is spent the rest replaced by a marker."""
    left = [budget]

    def walk(v: Any, depth: int) -> Any:
        if left[0] <= 0:
            return "… (cut: too large to report)"
        if isinstance(v, str):
            out = cut_text(v, max(left[0], 64))
            left[0] -= len(out) + 1
            return out
        left[0] -= 1
        if depth > MAX_DEPTH:
            return "… (cut: nested too deeply)"
        if isinstance(v, dict):
            return {k: walk(x, depth + 1) for k, x in v.items()}
        if isinstance(v, list | tuple):
            out_list = [walk(x, depth + 1) for x in list(v)[:items]]
            if len(v) > items:
                out_list.append(f"… [{len(v) - items:,} more items]")
            return out_list
        return v

    return walk(value, 0)
