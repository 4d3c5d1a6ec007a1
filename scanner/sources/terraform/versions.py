"""Terraform module version constraints (``version = "~> 20.0"``), as terraform reads them for
registry modules (hashicorp/go-version): comma-separated terms, each ``=``, ``!=``, ``>``,
``>=``, ``<``, ``<=`` or ``~>`` (the rightmost given segment may grow) before a version; a
bare version means ``=``. The newest matching version is chosen; a pre-release only when a
term names it exactly."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_VERSION = re.compile(r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?"
                      r"(?:\+[0-9A-Za-z.-]+)?$")
_TERM = re.compile(r"^\s*(=|!=|>=|<=|>|<|~>)?\s*(\S+)\s*$")
MAX_CONSTRAINT = 256


class VersionError(ValueError):
    """A version or constraint that is not one."""


@dataclass(frozen=True, order=False)
class Version:
    segments: tuple[int, int, int]
    given: int  # how many segments were written (~> 1.2 grows the second)
    pre: str = ""
    text: str = ""

    def key(self) -> tuple[tuple[int, int, int], int, tuple[tuple[int, int | str], ...]]:
        # a pre-release sorts before its release; its parts numerically, then by text
        parts = tuple((0, int(p)) if p.isdigit() else (1, p) for p in self.pre.split(".")) \
            if self.pre else ()
        return self.segments, 0 if self.pre else 1, parts


def parse_version(text: str) -> Version:
    m = _VERSION.match(text.strip())
    if not m:
        raise VersionError(f"not a version: {text[:64]!r}")
    nums = [int(g) for g in m.groups()[:3] if g is not None]
    given = len(nums)
    while len(nums) < 3:
        nums.append(0)
    return Version((nums[0], nums[1], nums[2]), given, m.group(4) or "", text.strip())


@dataclass(frozen=True)
class Term:
    op: str
    version: Version

    def allows(self, v: Version) -> bool:
        c = self.version
        vk, ck = v.key(), c.key()
        if self.op == "=":
            return vk == ck
        if self.op == "!=":
            return vk != ck
        if self.op == ">":
            return vk > ck
        if self.op == ">=":
            return vk >= ck
        if self.op == "<":
            return vk < ck
        if self.op == "<=":
            return vk <= ck
        # ~>: at least the constraint; the segments before the last given one equal
        if bool(c.pre) != bool(v.pre) or vk < ck:
            return False
        return v.segments[: max(c.given - 1, 0)] == c.segments[: max(c.given - 1, 0)]


def parse_constraint(text: str) -> tuple[Term, ...]:
    if len(text) > MAX_CONSTRAINT:
        raise VersionError("the version constraint is too long")
    terms = []
    for part in text.split(","):
        if not part.strip():
            raise VersionError(f"empty term in version constraint {text!r}")
        m = _TERM.match(part)
        if not m:
            raise VersionError(f"not a version constraint: {part.strip()[:64]!r}")
        terms.append(Term(m.group(1) or "=", parse_version(m.group(2))))
    return tuple(terms)


def allows(constraint: str | None, version: str) -> bool:
    """Whether a version satisfies a constraint (None or "": any release)."""
    try:
        v = parse_version(version)
    except VersionError:
        return False
    terms = parse_constraint(constraint) if constraint and constraint.strip() else ()
    if v.pre and not any(t.op == "=" and t.version.key() == v.key() for t in terms):
        return False  # terraform installs a pre-release only when it is asked for exactly
    return all(t.allows(v) for t in terms)


def newest(constraint: str | None, versions: Iterable[str]) -> str | None:
    """The newest of ``versions`` that satisfies the constraint; None when none does. Raises
    VersionError for a constraint that is not one."""
    if constraint and constraint.strip():
        parse_constraint(constraint)
    best: tuple[Version, str] | None = None
    for text in versions:
        if not isinstance(text, str) or not allows(constraint, text):
            continue
        v = parse_version(text)
        if best is None or v.key() > best[0].key():
            best = (v, text)
    return None if best is None else best[1]
