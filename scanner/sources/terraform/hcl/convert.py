"""tree-sitter's concrete syntax tree of an HCL file, converted into the syntax tree of
:mod:`.syntax_tree` (literals unescaped, templates and heredocs, operator precedence, the fast
paths of simple attributes)."""

from __future__ import annotations

import re
from typing import Any

from tree_sitter import Language, Node, Parser

from scanner.sources.terraform.hcl.syntax_tree import (
    MAX_DEPTH,
    Attribute,
    Binary,
    Block,
    Body,
    Call,
    Cond,
    Expr,
    ForExpr,
    Lit,
    ObjectExpr,
    Op,
    ParseError,
    Postfix,
    Template,
    TFor,
    TIf,
    Traversal,
    TupleExpr,
    Unary,
)

# ---------------------------------------------------------------------------------------------
# tree-sitter → AST
# ---------------------------------------------------------------------------------------------

_PARSER: Parser | None = None


def _parser() -> Parser:
    global _PARSER
    if _PARSER is None:
        import tree_sitter_hcl

        _PARSER = Parser(Language(tree_sitter_hcl.language()))
    return _PARSER


_SIMPLE_STRING = re.compile(rb'"([^"\\$%\n]*)"\Z')
_SIMPLE_NUMBER = re.compile(rb"-?[0-9]+\Z")
_SIMPLE_TRAVERSAL = re.compile(rb"[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*\Z")
_KEYWORDS = {b"true": True, b"false": False, b"null": None}
_OPERATORS = {"!", "-", "*", "/", "%", "+", ">", ">=", "<", "<=", "==", "!=", "&&", "||"}
_POSTFIX = {"get_attr", "index", "splat"}
_PRECEDENCE = {
    "||": 1,
    "&&": 2,
    "==": 3,
    "!=": 3,
    ">": 4,
    ">=": 4,
    "<": 4,
    "<=": 4,
    "+": 5,
    "-": 5,
    "*": 6,
    "/": 6,
    "%": 6,
}
_ESCAPES = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)|\$\$\{|%%\{", re.S)
_TEMPLATE_ESCAPES = re.compile(r"\$\$\{|%%\{")
_SIMPLE_ESCAPE = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


def _unescape(text: str) -> str:
    if "\\" not in text and "$${" not in text and "%%{" not in text:
        return text

    def repl(m: re.Match[str]) -> str:
        s = m.group(0)
        if s == "$${":
            return "${"
        if s == "%%{":
            return "%{"
        e = m.group(1)
        if e in _SIMPLE_ESCAPE:
            return _SIMPLE_ESCAPE[e]
        if e[0] in "uU" and len(e) > 1:
            return chr(int(e[1:], 16))
        raise ParseError(f"invalid escape sequence \\{e}")

    return _ESCAPES.sub(repl, text)


def _heredoc_unescape(text: str) -> str:
    if "$${" not in text and "%%{" not in text:
        return text
    return _TEMPLATE_ESCAPES.sub(lambda m: "${" if m.group(0) == "$${" else "%{", text)


NUMBER_TOO_LARGE = "_gpuaudit_number_too_large"  # the function a too-large literal becomes
_MAX_NUMBER = 1.7976931348623157e308


def _number(text: str) -> int | float:
    try:
        return int(text) if len(text) < 400 else float(text)
    except ValueError:
        f = float(text)
        if f.is_integer() and abs(f) < 2**63:
            return int(f)
        return f


class _Converter:
    def __init__(self, src: bytes, cache: dict[bytes, Expr] | None = None) -> None:
        self.src = src
        self.depth = 0
        # Expressions are immutable and carry no positions: the same text gives the same AST
        # (stamped-out stacks repeat most of their expressions).
        self.cache: dict[bytes, Expr] = {} if cache is None else cache

    def text(self, node: Node) -> str:
        return self.src[node.start_byte : node.end_byte].decode("utf-8")

    # -- bodies --------------------------------------------------------------------------------

    def body(self, node: Node | None) -> Body:
        body = Body()
        if node is None:
            return body
        for child in node.children:
            t = child.type
            if t == "attribute":
                attr = self.attribute(child)
                if attr.name in body.attrs:
                    body.duplicates.append(attr)
                else:
                    body.attrs[attr.name] = attr
            elif t == "block":
                body.blocks.append(self.block(child))
        return body

    def attribute(self, node: Node) -> Attribute:
        children = node.children
        name = self.text(children[0])
        expr_node = children[-1]
        return Attribute(
            name, self.expression(expr_node), node.start_point[0] + 1, node.end_point[0] + 1
        )

    def block(self, node: Node) -> Block:
        # A block's AST depends only on its text and its first line (copy-pasted stacks repeat
        # whole blocks at the same place): reuse it.
        start = node.start_point[0]
        raw = self.src[node.start_byte : node.end_byte]
        key = ("block", start, raw)
        hit = self.cache.get(key)  # type: ignore[call-overload]
        if hit is not None:
            return hit  # type: ignore[no-any-return]
        block = self._block(node)
        if len(raw) < 65536:
            # the expressions' cache keeps blocks too, by ("block", line, text): a tuple key
            self.cache[key] = block  # type: ignore[index, assignment]
        return block

    def _block(self, node: Node) -> Block:
        children = node.children
        btype = self.text(children[0])
        labels: list[str] = []
        body_node = None
        for c in children[1:]:
            t = c.type
            if t == "string_lit":
                labels.append(self.string_lit(c))
            elif t == "identifier":
                labels.append(self.text(c))
            elif t == "body":
                body_node = c
        return Block(
            btype, labels, self.body(body_node), node.start_point[0] + 1, node.end_point[0] + 1
        )

    # -- expressions ---------------------------------------------------------------------------

    def expression(self, node: Node) -> Expr:
        # Fast paths on the raw text: most attribute values are plain literals or references.
        raw = self.src[node.start_byte : node.end_byte]
        hit = self.cache.get(raw)
        if hit is not None:
            return hit
        expr: Expr | None = None
        if len(raw) < 200:
            if raw in _KEYWORDS:
                expr = Lit(_KEYWORDS[raw])
            elif _SIMPLE_TRAVERSAL.match(raw):
                parts = raw.decode("ascii").split(".")
                expr = Traversal(parts[0], tuple(("a", p) for p in parts[1:]))
            else:
                m = _SIMPLE_STRING.match(raw)
                if m is not None:
                    expr = Lit(m.group(1).decode("utf-8"))
                elif _SIMPLE_NUMBER.match(raw):
                    expr = Lit(int(raw))
        if expr is None:
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise ParseError("expression nested too deeply", node.start_point[0] + 1)
            try:
                expr = self.sequence(node.children, node)
            finally:
                self.depth -= 1
        if len(raw) < 4096:
            self.cache[raw] = expr
        return expr

    def sequence(self, children: list[Node], where: Node) -> Expr:
        """A run of terms and operators (the grammar inlines terms into their parents)."""
        items: list[Any] = []
        i = 0
        n = len(children)
        while i < n:
            c = children[i]
            t = c.type
            if t == "comment":
                i += 1
                continue
            if t in _OPERATORS and not c.is_named:
                items.append(t)
                i += 1
                continue
            if t == "(":
                j = i + 1
                while j < n and children[j].type == "comment":
                    j += 1
                base = self.expression(children[j])
                i = j + 1
                while i < n and children[i].type != ")":
                    i += 1
                i += 1
            else:
                base = self.primary(c)
                i += 1
            ops: list[Op] = []
            while i < n and children[i].type in _POSTFIX:
                ops.extend(self.postfix_ops(children[i]))
                i += 1
            if ops:
                if isinstance(base, Traversal) and t != "(":
                    base = Traversal(base.root, base.ops + tuple(ops))
                else:
                    base = Postfix(base, tuple(ops))
            items.append(base)
        return self.operators(items, where)

    def operators(self, items: list[Any], where: Node) -> Expr:
        if len(items) == 1 and isinstance(items[0], Expr):
            return items[0]
        # Unary prefix operators, then binary operators by precedence (left-assoc).
        out: list[Any] = []
        i = 0
        expect_operand = True
        while i < len(items):
            it = items[i]
            if expect_operand:
                if isinstance(it, str):
                    j = i
                    while j < len(items) and isinstance(items[j], str):
                        j += 1
                    if j >= len(items):
                        raise ParseError("operator without operand", where.start_point[0] + 1)
                    operand: Expr = items[j]
                    for op in reversed(items[i:j]):
                        operand = Unary(op, operand)
                    out.append(operand)
                    i = j + 1
                else:
                    out.append(it)
                    i += 1
                expect_operand = False
            else:
                if not isinstance(it, str):
                    raise ParseError("missing operator", where.start_point[0] + 1)
                out.append(it)
                i += 1
                expect_operand = True
        if len(out) == 1:
            only: Expr = out[0]
            return only
        # precedence climbing over out = [e, op, e, op, e]
        pos = 0

        def climb(min_prec: int) -> Expr:
            nonlocal pos
            left: Expr = out[pos]
            pos += 1
            while pos < len(out):
                op = out[pos]
                prec = _PRECEDENCE[op]
                if prec < min_prec:
                    break
                pos += 1
                right = climb(prec + 1)
                left = Binary(op, left, right)
            return left

        return climb(0)

    def primary(self, node: Node) -> Expr:
        t = node.type
        if t == "expression":
            return self.expression(node)
        if t == "literal_value":
            return self.literal(node)
        if t == "variable_expr":
            return Traversal(self.text(node), ())
        if t == "operation":
            return self.sequence(node.children[0].children, node)
        if t in ("binary_operation", "unary_operation"):
            return self.sequence(node.children, node)
        if t == "collection_value":
            return self.collection(node.children[0])
        if t == "template_expr":
            return self.template_expr(node.children[0])
        if t == "function_call":
            return self.call(node)
        if t == "conditional":
            c, then, other = [x for x in node.children if x.type == "expression"]
            return self.conditional(c, then, self.expression(other))
        if t == "for_expr":
            return self.for_expr(node.children[0])
        raise ParseError(f"unexpected {t}", node.start_point[0] + 1)

    def conditional(self, cond: Node, then: Node, other: Expr) -> Expr:
        """tree-sitter-hcl groups ``a ? 1 : b ? 2 : 3`` as ``(a ? 1 : b) ? 2 : 3``; HCL's
        conditional is right-associative: ``a ? 1 : (b ? 2 : 3)``. Re-associate unless the
        inner conditional was written in parentheses."""
        kids = [k for k in cond.children if k.type != "comment"]
        if len(kids) == 1 and kids[0].type == "conditional":
            c1, t1, e1 = [x for x in kids[0].children if x.type == "expression"]
            return self.conditional(c1, t1, Cond(self.expression(e1), self.expression(then), other))
        return Cond(self.expression(cond), self.expression(then), other)

    def postfix(self, node: Node) -> Op:
        t = node.type
        if t == "get_attr":
            return ("a", self.text(node.children[-1]))
        if t == "index":
            inner = node.children[0]
            if inner.type == "legacy_index":
                return ("i", Lit(int(self.text(inner)[1:])))
            exprs = [c for c in inner.children if c.type == "expression"]
            return ("i", self.expression(exprs[0]))
        # splat
        inner = node.children[0]
        full = inner.type == "full_splat"
        ops = tuple(self.postfix(c) for c in inner.children if c.type in _POSTFIX)
        return ("s", full, ops)

    def postfix_ops(self, node: Node) -> list[Op]:
        """One postfix node as traversal operations. The attribute-only splat ``.*`` carries
        only attribute steps (and the legacy ``.0`` index) into each element, as hclsyntax
        parses it: in ``aws_subnet.public.*.id[count.index]`` the ``[count.index]`` indexes
        the list of ids, it is not applied to each id. The full splat ``[*]`` carries all."""
        op = self.postfix(node)
        if op[0] != "s" or op[1]:
            return [op]
        inner = node.children[0]
        steps = [c for c in inner.children if c.type in _POSTFIX]
        keep = 0
        for c in steps:
            if c.type == "get_attr" or (
                c.type == "index" and c.children[0].type == "legacy_index"
            ):
                keep += 1
            else:
                break
        if keep == len(steps):
            return [op]
        ops = op[2]
        rest: list[Op] = []
        for c in steps[keep:]:
            rest.extend(self.postfix_ops(c))
        return [("s", False, ops[:keep]), *rest]

    def literal(self, node: Node) -> Expr:
        c = node.children[0]
        t = c.type
        if t == "numeric_lit":
            text = self.text(c)
            value = _number(text)
            if not -_MAX_NUMBER <= value <= _MAX_NUMBER:  # inf, or an int past any float
                # terraform's numbers are arbitrary-precision; ours are not: an error when used
                return Call(NUMBER_TOO_LARGE, [Lit(text[:24])], False)
            return Lit(value)
        if t == "bool_lit":
            return Lit(self.text(c) == "true")
        if t == "null_lit":
            return Lit(None)
        return Lit(self.string_lit(c))

    def string_lit(self, node: Node) -> str:
        children = node.children
        if len(children) < 2:
            return ""
        raw = self.src[children[0].end_byte : children[-1].start_byte].decode("utf-8")
        return _unescape(raw)

    def collection(self, node: Node) -> Expr:
        if node.type == "tuple":
            return TupleExpr([self.expression(c) for c in node.children if c.type == "expression"])
        items: list[tuple[str | Expr, Expr]] = []
        for c in node.children:
            if c.type != "object_elem":
                continue
            exprs = [e for e in c.children if e.type == "expression"]
            key_node, val_node = exprs[0], exprs[-1]
            kc = [k for k in key_node.children if k.type != "comment"]
            key: str | Expr
            if len(kc) == 1 and kc[0].type == "variable_expr":
                key = self.text(kc[0])
            else:
                key = self.expression(key_node)
            items.append((key, self.expression(val_node)))
        return ObjectExpr(items)

    def call(self, node: Node) -> Expr:
        children = node.children
        name = self.text(children[0])
        args: list[Expr] = []
        expand = False
        for c in children:
            if c.type == "function_arguments":
                for a in c.children:
                    if a.type == "expression":
                        args.append(self.expression(a))
                    elif a.type == "ellipsis":
                        expand = True
        return Call(name, args, expand)

    def for_intro(self, node: Node) -> tuple[str | None, str, Expr]:
        idents = [self.text(c) for c in node.children if c.type == "identifier"]
        coll = next(c for c in node.children if c.type == "expression")
        if len(idents) == 2:
            return idents[0], idents[1], self.expression(coll)
        return None, idents[0], self.expression(coll)

    def for_expr(self, node: Node) -> Expr:
        kvar = vvar = None
        coll: Expr | None = None
        exprs: list[Expr] = []
        cond: Expr | None = None
        group = False
        for c in node.children:
            t = c.type
            if t == "for_intro":
                kvar, vvar, coll = self.for_intro(c)
            elif t == "expression":
                exprs.append(self.expression(c))
            elif t == "for_cond":
                cond = self.expression(next(e for e in c.children if e.type == "expression"))
            elif t == "ellipsis":
                group = True
        assert vvar is not None and coll is not None
        if node.type == "for_object_expr":
            return ForExpr(kvar, vvar, coll, exprs[0], exprs[1], cond, group)
        return ForExpr(kvar, vvar, coll, None, exprs[0], cond, False)

    # -- templates -----------------------------------------------------------------------------

    def template_expr(self, node: Node) -> Expr:
        children = node.children
        if node.type == "quoted_template":
            parts = self.template_parts(
                children[1:-1], children[0].end_byte, children[-1].start_byte, _unescape
            )
        else:
            parts = self.heredoc(node)
        return _template(parts)

    def heredoc(self, node: Node) -> list[Any]:
        children = node.children
        flush = children[0].children[0].type == "<<-" if children[0].children else False
        idents = [c for c in children if c.type == "heredoc_identifier"]
        if len(idents) < 2:
            raise ParseError("unterminated heredoc", node.start_point[0] + 1)
        src = self.src
        start = src.find(b"\n", idents[0].end_byte)
        start = idents[-1].start_byte if start < 0 else start + 1
        end = src.rfind(b"\n", 0, idents[-1].start_byte) + 1
        end = max(end, start)
        inner = [c for c in children if c.type in ("template_interpolation", "template_directive")]
        indent = 0
        if flush:
            body = src[start:end].decode("utf-8")
            widths = [len(ln) - len(ln.lstrip(" \t")) for ln in body.split("\n") if ln.strip()]
            indent = min(widths) if widths else 0
        parts = self.template_parts(inner, start, end, _heredoc_unescape, indent)
        return parts

    def template_parts(
        self,
        children: list[Node],
        start: int,
        end: int,
        unescape: Any,
        indent: int = 0,
        strip_first: bool = False,
        strip_last: bool = False,
    ) -> list[Any]:
        """Literal text is the source between interpolations/directives, not the grammar's
        template_literal nodes (which drop surrounding whitespace)."""
        parts: list[Any] = []
        pos = start
        nodes = [c for c in children if c.type in ("template_interpolation", "template_directive")]
        i = 0
        strip_next = strip_first
        while i < len(nodes):
            c = nodes[i]
            lit = self._literal_text(pos, c.start_byte, unescape, indent)
            if strip_next:
                lit = lit.lstrip()
            strip_left, strip_right = _strip_markers(self.src, c)
            if strip_left:
                lit = lit.rstrip()
            if lit:
                parts.append(lit)
            if c.type == "template_interpolation":
                e = [x for x in c.children if x.type == "expression"]
                if e:
                    parts.append(self.expression(e[0]))
                pos = c.end_byte
                i += 1
            else:
                directive, pos, strip_right = self.directive(c, unescape, indent)
                parts.append(directive)
                i += 1
            strip_next = strip_right
        lit = self._literal_text(pos, end, unescape, indent)
        if strip_next:
            lit = lit.lstrip()
        if strip_last:
            lit = lit.rstrip()
        if lit:
            parts.append(lit)
        return parts

    def _literal_text(self, a: int, b: int, unescape: Any, indent: int) -> str:
        if b <= a:
            return ""
        text = self.src[a:b].decode("utf-8")
        if indent:
            at_line_start = a == 0 or self.src[a - 1 : a] == b"\n"
            lines = text.split("\n")
            out = []
            for n, ln in enumerate(lines):
                if n > 0 or at_line_start:
                    k = 0
                    while k < indent and k < len(ln) and ln[k] in " \t":
                        k += 1
                    ln = ln[k:]
                out.append(ln)
            text = "\n".join(out)
        unescaped: str = unescape(text)
        return unescaped

    def directive(self, node: Node, unescape: Any, indent: int) -> tuple[Any, int, bool]:
        inner = node.children[0]
        kids = inner.children
        if inner.type == "template_if":
            intro = kids[0]
            cond = self.expression(next(e for e in intro.children if e.type == "expression"))
            else_at = next((k for k in kids if k.type == "template_else_intro"), None)
            end_node = kids[-1]
            body_nodes = [k for k in kids[1:-1] if k.type != "template_else_intro"]
            then_end = else_at.start_byte if else_at is not None else end_node.start_byte
            then = self.template_parts(
                [k for k in body_nodes if k.end_byte <= then_end],
                intro.end_byte,
                then_end,
                unescape,
                indent,
                _marker(self.src, intro, False),
                _marker(self.src, else_at if else_at is not None else end_node, True),
            )
            other: list[Any] = []
            if else_at is not None:
                other = self.template_parts(
                    [k for k in body_nodes if k.start_byte >= else_at.end_byte],
                    else_at.end_byte,
                    end_node.start_byte,
                    unescape,
                    indent,
                    _marker(self.src, else_at, False),
                    _marker(self.src, end_node, True),
                )
            _, sr = _strip_markers(self.src, end_node)
            return TIf(cond, then, other), node.end_byte, sr
        # template_for
        start = kids[0]
        idents = [self.text(k) for k in start.children if k.type == "identifier"]
        coll = self.expression(next(e for e in start.children if e.type == "expression"))
        end_node = kids[-1]
        body = self.template_parts(
            kids[1:-1],
            start.end_byte,
            end_node.start_byte,
            unescape,
            indent,
            _marker(self.src, start, False),
            _marker(self.src, end_node, True),
        )
        kvar, vvar = (idents[0], idents[1]) if len(idents) == 2 else (None, idents[0])
        _, sr = _strip_markers(self.src, end_node)
        return TFor(kvar, vvar, coll, body), node.end_byte, sr


def _strip_markers(src: bytes, node: Node) -> tuple[bool, bool]:
    """(strip before, strip after) for an interpolation or a whole directive."""
    return _marker(src, node, True), _marker(src, node, False)


def _marker(src: bytes, node: Node, left: bool) -> bool:
    """Whether the tag at the start (left) or end of node carries a ``~`` strip marker."""
    if left:
        i = node.start_byte + 2
    else:
        i = node.end_byte - 2
    return src[i : i + 1] == b"~"


def _template(parts: list[Any]) -> Expr:
    if not parts:
        return Lit("")
    if len(parts) == 1 and isinstance(parts[0], str):
        return Lit(parts[0])
    return Template(parts)


_EXPONENT = re.compile(rb"[eE][+-]?[0-9]")


def _fix_exponents(src: bytes, root: Node) -> bytes | None:
    """tree-sitter-hcl reads a number with an exponent only after a fraction (``1.5e3``);
    HCL also allows ``1e3`` / ``2E+10``, which it reads as the number ``1`` followed by a
    syntax error. Where a number literal is directly followed by an exponent, write ``1.0e3``
    instead (same lines: positions on other lines do not move); None when there is none."""
    at: list[int] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "numeric_lit":
            end = node.end_byte
            text = src[node.start_byte : end]
            if b"." not in text and b"e" not in text.lower() and _EXPONENT.match(src, end):
                at.append(end)
            continue
        stack.extend(node.children)
    if not at:
        return None
    out: list[bytes] = []
    pos = 0
    for end in sorted(at):
        out.append(src[pos:end])
        out.append(b".0")
        pos = end
    out.append(src[pos:])
    return b"".join(out)


def _first_error(node: Node) -> Node:
    cur = node
    while True:
        nxt = None
        for c in cur.children:
            if c.is_error or c.is_missing:
                return c
            if c.has_error:
                nxt = c
                break
        if nxt is None:
            return cur
        cur = nxt
