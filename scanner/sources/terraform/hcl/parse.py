"""Parse HCL (Terraform native syntax) with tree-sitter into a small AST.

The AST keeps only what the evaluator needs: bodies of attributes and blocks with line numbers,
and expressions as a handful of node classes. A file whose tree contains an ERROR or MISSING node
is an input error (tree-sitter recovers from errors, terraform does not), reported with the line
of the first error.
"""

from __future__ import annotations

import re
from typing import Any

from tree_sitter import Node

from scanner.sources.terraform.hcl.convert import (
    _KEYWORDS,
    NUMBER_TOO_LARGE,
    _Converter,
    _first_error,
    _fix_exponents,
    _parser,
    _template,
)
from scanner.sources.terraform.hcl.syntax_tree import (
    MAX_DEPTH,
    Attribute,
    Binary,
    Block,
    Body,
    Call,
    Comment,
    Cond,
    Expr,
    ForExpr,
    Lit,
    ObjectExpr,
    Op,
    ParsedFile,
    ParseError,
    Postfix,
    Template,
    TFor,
    TIf,
    Traversal,
    TupleExpr,
    Unary,
)

_COMMENT_LINE = re.compile(r"\s*(#|//|/\*|\*)")
# After a closing brace at column 0: the rest of a line that is that lone brace.
_LINE_REST = re.compile(rb"[ \t]*(?:\r?\n|\Z)")


def _top_close_ends(src: bytes) -> list[int]:
    """The end offsets (after the newline) of the lines that are a lone ``}`` at column 0."""
    out: list[int] = []
    match = _LINE_REST.match
    pos = 0 if src[:1] == b"}" else src.find(b"\n}")
    while pos >= 0:
        brace = pos if pos == 0 and src[:1] == b"}" else pos + 1
        m = match(src, brace + 1)
        if m is not None:
            out.append(m.end())
        pos = src.find(b"\n}", brace)
    return out


# A whole line ``name = "text"`` / ``name = 12`` / ``name = true`` at column 0: an attribute
# whose AST is known without tree-sitter (the expression fast paths of _Converter.expression).
_SIMPLE_LINE = re.compile(
    rb'([A-Za-z_][A-Za-z0-9_-]*)[ \t]*=[ \t]*("[^"\\$%\x00-\x1f\x7f]*"|-?(?:0|[1-9][0-9]{0,15})'
    rb"|true|false|null)[ \t]*(?:\r?\n|\Z)"
)
_NOT_NAMES = frozenset({b"true", b"false", b"null", b"for", b"in", b"if", b"else", b"endif",
                        b"endfor"})
MAX_PIECE = 65536  # bigger pieces are parsed but not kept in the cache


def _chunk_items(
    src: bytes, start: int, end: int, row: int, cache: dict[Any, Any]
) -> tuple[Attribute | Block, ...] | None:
    """The top-level attributes and blocks of src[start:end] (which starts at a line start,
    on line row + 1); None when the piece does not parse cleanly on its own. Leading simple
    attribute lines (variables files) are taken without tree-sitter; the rest is looked up in
    the cache, else parsed alone with tree-sitter's included ranges so that positions are
    those of the whole file."""
    piece = src[start:end]
    key = ("chunk", row, piece)
    hit = cache.get(key)
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    m = _SIMPLE_LINE.match(src, start, end)
    if m is None or m.group(1) in _NOT_NAMES:
        return _parse_piece(src, start, end, row, cache, key)
    head: list[Attribute | Block] = []
    while m is not None and m.group(1) not in _NOT_NAMES:
        raw = m.group(2)
        expr = cache.get(raw)
        if expr is None:
            if raw[:1] == b'"':
                expr = Lit(raw[1:-1].decode("utf-8"))
            else:
                expr = Lit(_KEYWORDS[raw] if raw in _KEYWORDS else int(raw))
            cache[raw] = expr
        head.append(Attribute(m.group(1).decode("ascii"), expr, row + 1, row + 1))
        start = m.end()
        row += 1
        if start >= end:
            return tuple(head)
        m = _SIMPLE_LINE.match(src, start, end)
    rest = cache.get(("chunk", row, src[start:end]))
    if rest is None:
        rest = _parse_piece(src, start, end, row, cache, ("chunk", row, src[start:end]))
        if rest is None:
            return None
    return (*head, *rest)


def _parse_piece(
    src: bytes, start: int, end: int, row: int, cache: dict[Any, Any], key: Any
) -> tuple[Attribute | Block, ...] | None:
    from tree_sitter import Point, Range

    piece = src[start:end]

    nl = piece.rfind(b"\n")
    end_point = Point(row + piece.count(b"\n"), len(piece) - nl - 1)
    parser = _parser()
    parser.included_ranges = [Range(Point(row, 0), end_point, start, end)]
    try:
        tree = parser.parse(src)
    finally:
        parser.included_ranges = _FULL_RANGE
    root = tree.root_node
    if root.has_error:
        return None
    conv = _Converter(src, cache)
    items: list[Attribute | Block] = []
    try:
        for body_node in root.children:
            if body_node.type != "body":
                continue
            for child in body_node.children:
                t = child.type
                if t == "attribute":
                    items.append(conv.attribute(child))
                elif t == "block":
                    items.append(conv.block(child))
    except (ParseError, RecursionError):
        return None
    out = tuple(items)
    if end - start <= MAX_PIECE:
        cache[key] = out
    return out


_FULL_RANGE: list[Any] = []


def _parse_chunked(src: bytes, cache: dict[Any, Any]) -> Body | None:
    """Parse a file piece by piece, split after each line that is a lone ``}``, with the pieces
    cached by (first line, text): stamped-out stacks repeat most of their blocks, and
    tree-sitter is the slowest step. A piece that is not a clean sequence of complete top-level
    items by itself (a split inside a heredoc or a comment, a syntax error) gives None: the
    caller then parses the whole file, which also reports errors exactly as before."""
    if not _FULL_RANGE:
        _FULL_RANGE.extend(_parser().included_ranges)
    ends = _top_close_ends(src)
    if not ends or ends[-1] < len(src):
        ends.append(len(src))
    body = Body()
    start = 0
    row = 0
    for end in ends:
        items = _chunk_items(src, start, end, row, cache)
        if items is None:
            return None
        for it in items:
            if isinstance(it, Block):
                body.blocks.append(it)
            elif it.name in body.attrs:
                body.duplicates.append(it)
            else:
                body.attrs[it.name] = it
        row += src.count(b"\n", start, end)
        start = end
    return body


def parse_hcl(
    src: bytes, *, want_skips: bool = True, cache: dict[bytes, Expr] | None = None
) -> ParsedFile:
    """Parse HCL source; raise ParseError(reason, line) for any syntax error."""
    if cache is not None and not (want_skips and b"gpuaudit:skip" in src):
        chunked = _parse_chunked(src, cache)
        if chunked is not None:
            return ParsedFile(chunked, [], frozenset())
    tree = _parser().parse(src)
    root = tree.root_node
    for _ in range(8):
        if not root.has_error:
            break
        fixed = _fix_exponents(src, root)
        if fixed is None:
            break
        src = fixed
        tree = _parser().parse(src)
        root = tree.root_node
    if root.has_error:
        err = _first_error(root)
        line = err.start_point[0] + 1
        if err.is_missing:
            raise ParseError(f"syntax error: missing {err.type}", line)
        snippet = src[err.start_byte : min(err.end_byte, err.start_byte + 40)]
        text = snippet.decode("utf-8", "replace").split("\n")[0].strip()
        raise ParseError(f"syntax error near {text!r}" if text else "syntax error", line)
    conv = _Converter(src, cache)
    body_node = next((c for c in root.children if c.type == "body"), None)
    try:
        body = conv.body(body_node)
    except RecursionError:
        raise ParseError("expression nested too deeply") from None
    skips: list[Comment] = []
    comment_lines: frozenset[int] = frozenset()
    if want_skips and b"gpuaudit:skip" in src:
        skips = _skip_comments(src, root)
        text = src.decode("utf-8")
        comment_lines = frozenset(
            n + 1 for n, ln in enumerate(text.split("\n")) if _COMMENT_LINE.match(ln)
        )
    return ParsedFile(body, skips, comment_lines)


def _skip_comments(src: bytes, root: Node) -> list[Comment]:
    out: list[Comment] = []
    seen: set[int] = set()
    pos = src.find(b"gpuaudit:skip")
    while pos >= 0:
        node = root.descendant_for_byte_range(pos, pos + 1)
        if node is not None and node.type == "comment" and node.start_byte not in seen:
            seen.add(node.start_byte)
            out.append(
                Comment(
                    node.start_point[0] + 1,
                    node.end_point[0] + 1,
                    src[node.start_byte : node.end_byte].decode("utf-8"),
                )
            )
        pos = src.find(b"gpuaudit:skip", pos + 1)
    return out


def parse_expression(text: str) -> Expr:
    """Parse a standalone expression (for ``--var`` values of complex types, JSON templates)."""
    src = ("__x = " + text + "\n").encode("utf-8")
    parsed = parse_hcl(src, want_skips=False)
    attr = parsed.body.attrs.get("__x")
    if attr is None or parsed.body.blocks or len(parsed.body.attrs) != 1:
        raise ParseError("not a single expression")
    return attr.expr


_TEMPLATES: dict[str, Expr] = {}  # parsed templates by text: templatefile() once per instance
_TEMPLATE_CACHE_CHARS = 64 * 1024 * 1024  # characters of template text kept parsed
_template_chars = [0]


def parse_template(text: str) -> Expr:
    """Parse a string as a template (``.tf.json`` string values): ``"a-${var.x}"``. Parsed
    once per text: ``count`` over a ``templatefile()`` renders the same file per instance."""
    if "${" not in text and "%{" not in text:
        return Lit(text)
    cached = _TEMPLATES.get(text)
    if cached is not None:
        return cached
    expr = _parse_template(text)
    if _template_chars[0] + len(text) > _TEMPLATE_CACHE_CHARS:
        _TEMPLATES.clear()
        _template_chars[0] = 0
    _TEMPLATES[text] = expr
    _template_chars[0] += len(text)
    return expr


def _parse_template(text: str) -> Expr:
    marker = "EOT_GPUAUDIT"
    while marker in text:
        marker += "_"
    src = f"__x = <<{marker}\n{text}\n{marker}\n".encode()
    parsed = parse_hcl(src, want_skips=False)
    attr = parsed.body.attrs.get("__x")
    if attr is None:
        raise ParseError("not a template")
    expr = attr.expr
    # drop the newline the heredoc adds at the end
    if isinstance(expr, Lit) and isinstance(expr.value, str) and expr.value.endswith("\n"):
        return Lit(expr.value[:-1])
    if isinstance(expr, Template) and expr.parts and isinstance(expr.parts[-1], str):
        last = expr.parts[-1][:-1] if expr.parts[-1].endswith("\n") else expr.parts[-1]
        parts = expr.parts[:-1] + ([last] if last else [])
        return _template(parts)
    return expr


__all__ = [
    "MAX_DEPTH",
    "NUMBER_TOO_LARGE",
    "Attribute",
    "Binary",
    "Block",
    "Body",
    "Call",
    "Comment",
    "Cond",
    "Expr",
    "ForExpr",
    "Lit",
    "ObjectExpr",
    "Op",
    "ParseError",
    "ParsedFile",
    "Postfix",
    "TFor",
    "TIf",
    "Template",
    "Traversal",
    "TupleExpr",
    "Unary",
    "parse_expression",
    "parse_hcl",
    "parse_template",
]
