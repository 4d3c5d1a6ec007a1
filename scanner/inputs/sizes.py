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
    characters. Stops as soon as it knows: the cost is at most ``limit`` steps. (A loop over an
    explicit stack: one call per resource attribute of every scan, a nested function call and a
    generator per node took 4% of a large HCL scan.)"""
    left = limit
    stack: list[tuple[Any, int]] = [(value, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        v, depth = pop()
        if depth > MAX_DEPTH:
            return True
        if isinstance(v, str):
            left -= len(v) + 1
            if left < 0:
                return True
            continue
        left -= 1
        if left < 0:
            return True
        if isinstance(v, dict):
            for k, x in reversed(v.items()):
                push((x, depth + 1))
                push((k, depth + 1))
        elif isinstance(v, list | tuple):
            for x in reversed(v):
                push((x, depth + 1))
    return False


def written_size(value: Any, limit: int) -> int:
    """How many characters ``value`` is written out (as :func:`exceeds` counts them), or
    ``limit + 1`` once it is known to be more than ``limit``: at most ``limit`` steps."""
    left = [limit]
    return limit + 1 if _over(value, 0, left) else limit - left[0]


def _over(v: Any, depth: int, left: list[int]) -> bool:
    # module-level and recursive: a nested function that calls itself is a reference cycle,
    # which the one-shot CLI (its cyclic collector off) would keep for the rest of the run
    if depth > MAX_DEPTH:
        left[0] = -1
        return True
    left[0] -= len(v) + 1 if isinstance(v, str) else 1
    if left[0] < 0:
        return True
    if isinstance(v, dict):
        return any(_over(k, depth + 1, left) or _over(x, depth + 1, left)
                   for k, x in v.items())
    if isinstance(v, list | tuple):
        return any(_over(x, depth + 1, left) for x in v)
    return False


def cut_text(text: str, limit: int) -> str:
    """``text`` up to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters]"


def bounded(value: Any, budget: int, *, items: int = 200) -> Any:
    """A copy of ``value`` written out in at most about ``budget`` characters: long strings cut,
    lists past ``items`` cut, and once the budget is spent the rest replaced by a marker."""
    return _Bound(budget, items).walk(value, 0)


def bound(value: Any, budget: int, *, items: int = 200) -> tuple[Any, bool]:
    """:func:`bounded`'s copy, and whether it differs from ``value`` written out (something was
    cut or replaced by a marker, or a tuple became a list)."""
    walk = _Bound(budget, items)
    out = walk.walk(value, 0)
    return out, walk.cut


class _Bound:
    """:func:`bounded`'s walk (a class, not a nested function calling itself: that is a
    reference cycle per call, kept for the run by the one-shot CLI, whose collector is off)."""

    __slots__ = ("cut", "items", "left")

    def __init__(self, budget: int, items: int) -> None:
        self.left = budget
        self.items = items
        self.cut = False  # the copy differs from the value written out

    def walk(self, v: Any, depth: int) -> Any:
        if self.left <= 0:
            self.cut = True
            return "… (cut: too large to report)"
        if isinstance(v, str):
            out = cut_text(v, max(self.left, 64))
            if out is not v:
                self.cut = True
            self.left -= len(out) + 1
            return out
        self.left -= 1
        if depth > MAX_DEPTH:
            self.cut = True
            return "… (cut: nested too deeply)"
        if isinstance(v, dict):
            walk = self.walk
            return {k: walk(x, depth + 1) for k, x in v.items()}
        if isinstance(v, list | tuple):
            walk = self.walk
            out_list = [walk(x, depth + 1) for x in list(v)[:self.items]]
            if len(v) > self.items or type(v) is not list:
                out_list.append(f"… [{len(v) - self.items:,} more items]")
            if len(v) > self.items or type(v) is not list:
                self.cut = True
            return out_list
        return v
