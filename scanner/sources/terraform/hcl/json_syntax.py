"""Terraform JSON syntax (``*.tf.json``, ``*.tfvars.json``) into the same AST as native HCL.

Strings are templates (``"${var.x}"``), except variable defaults, which are literal. JSON has no
block/attribute distinction without the provider schema; an object (or a list of objects) under
a key that is not a known map-valued argument (``tags``, ``tags_all`` …) is read as nested
block(s), which is what the AWS provider's nested configuration blocks are.
"""

from __future__ import annotations

import json
import re
from typing import Any

from scanner.sources.terraform.hcl.parse import (
    Attribute,
    Block,
    Body,
    Expr,
    Lit,
    ObjectExpr,
    ParseError,
    TupleExpr,
    parse_expression,
    parse_template,
)

MAP_ARGUMENTS = frozenset(
    {
        "tags",
        "tags_all",
        "default_tags",
        "labels",
        "triggers",
        "variables",
        "environment",
        "metadata",
        "parameters",
        "options",
        "providers",
        "locals",
        "value",
        "default",
        "inputs",
    }
)
_LABELS = {"resource": 2, "data": 2, "module": 1, "variable": 1, "output": 1, "provider": 1}
_EXPRESSION_KEYS = {"count", "for_each", "depends_on", "iterator"}


def _expr(value: Any, *, literal: bool = False) -> Expr:
    if isinstance(value, str):
        return Lit(value) if literal else parse_template(value)
    if isinstance(value, list):
        return TupleExpr([_expr(v, literal=literal) for v in value])
    if isinstance(value, dict):
        items: list[tuple[str | Expr, Expr]] = []
        for k, v in value.items():
            if k == "//":
                continue
            items.append((k, _expr(v, literal=literal)))
        return ObjectExpr(items)
    return Lit(value)


class _Lines:
    """Approximate line numbers for JSON keys (json has no positions): the first occurrence of
    the quoted key after a given offset."""

    def __init__(self, text: str) -> None:
        self.text = text

    def find(self, keys: list[str]) -> tuple[int, int]:
        pos = 0
        for k in keys:
            m = re.compile(re.escape(json.dumps(k)) + r"\s*:").search(self.text, pos)
            if m is None:
                return 1, 1
            pos = m.start()
        line = self.text.count("\n", 0, pos) + 1
        return line, line


def _body(obj: Any, line: int, *, block_type: str = "") -> Body:
    body = Body()
    if not isinstance(obj, dict):
        raise ParseError("a block must be a JSON object", line)
    for key, value in obj.items():
        if key == "//":
            continue
        if key == "dynamic" and isinstance(value, dict):
            for btype, spec in value.items():
                for one in spec if isinstance(spec, list) else [spec]:
                    dyn = _dynamic(btype, one, line)
                    body.blocks.append(dyn)
            continue
        if key in ("lifecycle", "provisioner", "connection"):
            continue
        if key in _EXPRESSION_KEYS and isinstance(value, str):
            # "count": "${length(var.x)}" or a bare expression for iterator
            expr = parse_template(value) if "${" in value else _maybe_traversal(value)
            body.attrs[key] = Attribute(key, expr, line, line)
            continue
        if key not in MAP_ARGUMENTS and block_type != "locals":
            if isinstance(value, dict):
                body.blocks.append(Block(key, [], _body(value, line), line, line))
                continue
            if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
                for v in value:
                    body.blocks.append(Block(key, [], _body(v, line), line, line))
                continue
        body.attrs[key] = Attribute(key, _expr(value), line, line)
    return body


def _maybe_traversal(text: str) -> Expr:
    try:
        return parse_expression(text)
    except ParseError:
        return Lit(text)


def _dynamic(btype: str, spec: Any, line: int) -> Block:
    if not isinstance(spec, dict):
        raise ParseError("a dynamic block must be a JSON object", line)
    body = Body()
    for key, value in spec.items():
        if key == "content":
            body.blocks.append(Block("content", [], _body(value, line), line, line))
        elif key == "iterator" and isinstance(value, str):
            body.attrs[key] = Attribute(key, _maybe_traversal(value), line, line)
        elif key != "//":
            body.attrs[key] = Attribute(key, _expr(value), line, line)
    return Block("dynamic", [btype], body, line, line)


_MAX_NUMBER = 1.7976931348623157e308


def _finite_float(text: str) -> float:
    f = float(text)
    if not -_MAX_NUMBER <= f <= _MAX_NUMBER:
        raise ValueError(f"number too large: {text[:24]}")
    return f


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(f"duplicate key {key[:80]!r} (terraform rejects an argument written "
                         "twice; a last-wins reading would hide the first)")
        self.key = key


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are distinct (json.loads would keep the last silently)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise _DuplicateKey(k)
            seen.add(k)
    return out


def _loads(text: str) -> Any:
    try:
        return json.loads(text, parse_float=_finite_float, parse_constant=_no_constant,
                          object_pairs_hook=_unique)
    except _DuplicateKey as exc:
        quoted = json.dumps(exc.key)
        first = text.find(quoted)
        second = text.find(quoted, first + 1) if first >= 0 else -1
        line = text.count("\n", 0, second) + 1 if second >= 0 else None
        raise ParseError(f"invalid JSON: {exc}", line) from None


def parse_tf_json(text: str) -> Body:
    """A ``.tf.json`` document as a top-level Body of blocks."""
    try:
        doc = _loads(text)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        raise ParseError(f"invalid JSON: {exc}", line) from None
    if not isinstance(doc, dict):
        raise ParseError("a .tf.json file must hold a JSON object", 1)
    lines = _Lines(text)
    top = Body()
    for btype, content in doc.items():
        if btype == "//":
            continue
        nlabels = _LABELS.get(btype, 0)
        for item in content if isinstance(content, list) else [content]:
            _collect(top, btype, item, nlabels, [], lines)
    return top


def _collect(
    top: Body, btype: str, obj: Any, nlabels: int, labels: list[str], lines: _Lines
) -> None:
    if nlabels == 0:
        line, _ = lines.find([btype, *labels]) if labels else lines.find([btype])
        if btype == "locals":
            if not isinstance(obj, dict):
                raise ParseError("locals must be a JSON object", line)
            body = Body()
            for k, v in obj.items():
                if k != "//":
                    body.attrs[k] = Attribute(k, _expr(v), line, line)
            top.blocks.append(Block(btype, labels, body, line, line))
            return
        if btype == "variable":
            top.blocks.append(Block(btype, labels, _variable(obj, line), line, line))
            return
        if btype == "output":
            body = Body()
            if isinstance(obj, dict):
                for k, v in obj.items():
                    if k != "//":
                        body.attrs[k] = Attribute(k, _expr(v), line, line)
            top.blocks.append(Block(btype, labels, body, line, line))
            return
        if btype == "module":
            body = Body()
            if isinstance(obj, dict):
                for k, v in obj.items():
                    if k in _EXPRESSION_KEYS and isinstance(v, str) and "${" not in v:
                        body.attrs[k] = Attribute(k, _maybe_traversal(v), line, line)
                    elif k != "//":
                        body.attrs[k] = Attribute(k, _expr(v), line, line)
            top.blocks.append(Block(btype, labels, body, line, line))
            return
        top.blocks.append(Block(btype, labels, _body(obj, line, block_type=btype), line, line))
        return
    if not isinstance(obj, dict):
        raise ParseError(f"{btype} must be a JSON object", 1)
    for label, inner in obj.items():
        if label == "//":
            continue
        for item in inner if isinstance(inner, list) else [inner]:
            _collect(top, btype, item, nlabels - 1, [*labels, label], lines)


def _variable(obj: Any, line: int) -> Body:
    body = Body()
    if not isinstance(obj, dict):
        return body
    for k, v in obj.items():
        if k == "default":
            body.attrs[k] = Attribute(k, _expr(v, literal=True), line, line)
        elif k == "type" and isinstance(v, str):
            body.attrs[k] = Attribute(k, _maybe_traversal(v), line, line)
        elif k in ("nullable", "sensitive", "description"):
            body.attrs[k] = Attribute(k, _expr(v, literal=True), line, line)
    return body


def parse_tfvars_json(text: str) -> dict[str, Any]:
    try:
        doc = _loads(text)
    except ValueError as exc:
        raise ParseError(f"invalid JSON: {exc}", getattr(exc, "lineno", None)) from None
    if not isinstance(doc, dict):
        raise ParseError("a .tfvars.json file must hold a JSON object", 1)
    return {k: v for k, v in doc.items() if k != "//"}
