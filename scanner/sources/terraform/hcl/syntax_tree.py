"""The HCL syntax tree the parser builds and the evaluator reads: bodies of attributes and
blocks with line numbers, expressions as a handful of node classes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_DEPTH = 200  # expression nesting deeper than this is refused (no Python recursion errors)


class ParseError(Exception):
    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


# ---------------------------------------------------------------------------------------------
# AST
# ---------------------------------------------------------------------------------------------


class Expr:
    __slots__ = ()


class Lit(Expr):
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Lit({self.value!r})"


class TIf:
    __slots__ = ("cond", "other", "then")

    def __init__(self, cond: Expr, then: list[Any], other: list[Any]) -> None:
        self.cond = cond
        self.then = then
        self.other = other


class TFor:
    __slots__ = ("body", "coll", "kvar", "vvar")

    def __init__(self, kvar: str | None, vvar: str, coll: Expr, body: list[Any]) -> None:
        self.kvar = kvar
        self.vvar = vvar
        self.coll = coll
        self.body = body


class Template(Expr):
    """parts: str literals, Exprs (interpolations), TIf / TFor directives."""

    __slots__ = ("parts",)

    def __init__(self, parts: list[Any]) -> None:
        self.parts = parts

    def __repr__(self) -> str:
        return f"Template({self.parts!r})"


class TupleExpr(Expr):
    __slots__ = ("items",)

    def __init__(self, items: list[Expr]) -> None:
        self.items = items


class ObjectExpr(Expr):
    """items: (key, value); a key is a str (bare identifier) or an Expr."""

    __slots__ = ("items",)

    def __init__(self, items: list[tuple[str | Expr, Expr]]) -> None:
        self.items = items


# Traversal operations: ("a", name) get attribute; ("i", Expr) index; ("s", full, ops) splat
Op = tuple[Any, ...]


class Traversal(Expr):
    """A root variable followed by operations: ``var.x[0].y``."""

    __slots__ = ("ops", "root")

    def __init__(self, root: str, ops: tuple[Op, ...]) -> None:
        self.root = root
        self.ops = ops

    def __repr__(self) -> str:
        return f"Traversal({self.root!r}, {self.ops!r})"


class Postfix(Expr):
    """Operations applied to a computed value: ``(expr).x``, ``f(x)[0]``, ``[1, 2][0]``."""

    __slots__ = ("base", "ops")

    def __init__(self, base: Expr, ops: tuple[Op, ...]) -> None:
        self.base = base
        self.ops = ops


class Call(Expr):
    __slots__ = ("args", "expand", "name")

    def __init__(self, name: str, args: list[Expr], expand: bool) -> None:
        self.name = name
        self.args = args
        self.expand = expand


class Cond(Expr):
    __slots__ = ("cond", "other", "then")

    def __init__(self, cond: Expr, then: Expr, other: Expr) -> None:
        self.cond = cond
        self.then = then
        self.other = other


class Unary(Expr):
    __slots__ = ("op", "operand")

    def __init__(self, op: str, operand: Expr) -> None:
        self.op = op
        self.operand = operand


class Binary(Expr):
    __slots__ = ("left", "op", "right")

    def __init__(self, op: str, left: Expr, right: Expr) -> None:
        self.op = op
        self.left = left
        self.right = right


class ForExpr(Expr):
    __slots__ = ("coll", "cond", "group", "key", "kvar", "value", "vvar")

    def __init__(
        self,
        kvar: str | None,
        vvar: str,
        coll: Expr,
        key: Expr | None,
        value: Expr,
        cond: Expr | None,
        group: bool,
    ) -> None:
        self.kvar = kvar
        self.vvar = vvar
        self.coll = coll
        self.key = key  # None for a tuple-producing for
        self.value = value
        self.cond = cond
        self.group = group


@dataclass
class Attribute:
    name: str
    expr: Expr
    line: int
    end_line: int


@dataclass
class Block:
    type: str
    labels: list[str]
    body: Body
    start_line: int
    end_line: int


@dataclass
class Body:
    attrs: dict[str, Attribute] = field(default_factory=dict)
    blocks: list[Block] = field(default_factory=list)
    duplicates: list[Attribute] = field(default_factory=list)


@dataclass
class Comment:
    line: int
    end_line: int
    text: str


@dataclass
class ParsedFile:
    body: Body
    skip_comments: list[Comment]
    comment_only_lines: frozenset[int]
