"""Read a CloudFormation template (YAML or JSON) into plain Python values, with line numbers.

* Short-form tags (``!Ref``, ``!GetAtt A.B``, ``!Sub`` ...) become the long forms
  (``{"Ref": ...}``, ``{"Fn::GetAtt": ["A", "B"]}``, ``{"Fn::Sub": ...}``).
* YAML anchors and aliases are refused (CloudFormation does not support them), so an alias bomb
  never expands. Nesting depth and file size are limited.
* Timestamps are not resolved (``AWSTemplateFormatVersion: 2010-09-09`` stays a string).
* JSON (``{`` first) is parsed with the json module; line spans come from a cheap token scan.
* A key written twice in one mapping is refused (CloudFormation rejects such templates).
* Numbers that are not finite or absurdly large (``.nan``, ``1e308``) become
  :class:`~scanner.model.Unknown` (:mod:`scanner.inputs.numbers`).
* UTF-8, and UTF-16 / UTF-32 with a byte-order mark, are read.

Every problem is a :class:`TemplateError` with a reason and, where known, a 1-based line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from scanner.inputs.numbers import TOO_LARGE, sane_number
from scanner.inputs.safe_read import decode_text
from scanner.inputs.yaml_compose import Composer, last_line, mark_line, scalar
from scanner.model import Unknown

MAX_BYTES = 10 * 1024 * 1024
MAX_DEPTH = 100

SHORT_TAGS: dict[str, str] = {
    "!Ref": "Ref",
    "!Condition": "Condition",
    "!GetAtt": "Fn::GetAtt",
    "!Sub": "Fn::Sub",
    "!Join": "Fn::Join",
    "!Select": "Fn::Select",
    "!Split": "Fn::Split",
    "!If": "Fn::If",
    "!Equals": "Fn::Equals",
    "!Not": "Fn::Not",
    "!And": "Fn::And",
    "!Or": "Fn::Or",
    "!FindInMap": "Fn::FindInMap",
    "!GetAZs": "Fn::GetAZs",
    "!ImportValue": "Fn::ImportValue",
    "!Base64": "Fn::Base64",
    "!Cidr": "Fn::Cidr",
    "!Transform": "Fn::Transform",
    "!ToJsonString": "Fn::ToJsonString",
    "!Length": "Fn::Length",
    # Rules-only functions
    "!Contains": "Fn::Contains",
    "!EachMemberEquals": "Fn::EachMemberEquals",
    "!EachMemberIn": "Fn::EachMemberIn",
    "!RefAll": "Fn::RefAll",
    "!ValueOf": "Fn::ValueOf",
    "!ValueOfAll": "Fn::ValueOfAll",
}


class TemplateError(Exception):
    """The template cannot be read."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


@dataclass
class LoadedTemplate:
    """A parsed template: its data, and where each resource sits (1-based, inclusive lines)."""

    data: Any
    resource_lines: dict[str, tuple[int, int]] = field(default_factory=dict)
    resources_line: int | None = None  # the line of the ``Resources`` key



# An anchor (&name) or alias (*name) token could start here; only then do we scan events.
_ANCHOR_HINT = re.compile(r"(?:^|[\s\[{,])[&*][^\s,\[\]{}]", re.MULTILINE)


def load_bytes(data: bytes) -> LoadedTemplate:
    """Parse template bytes. Raises :class:`TemplateError`."""
    if len(data) > MAX_BYTES:
        raise TemplateError(f"file is larger than the {MAX_BYTES // (1024 * 1024)} MiB limit")
    try:
        text = decode_text(data)
    except UnicodeDecodeError as exc:
        if b"\x00" in data:
            raise TemplateError(
                "binary file (contains NUL bytes)", _line_of(data, data.index(b"\x00"))
            ) from None
        if exc.encoding.replace("_", "-").lower() != "utf-8":
            raise TemplateError(f"not {exc.encoding.upper()} text ({exc.reason})") from None
        raise TemplateError(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x})", _line_of(data, exc.start)
        ) from None
    if "\x00" in text:
        raise TemplateError("binary file (contains NUL bytes)", text.count("\n", 0,
                                                                         text.index("\x00")) + 1)
    return load_text(text)


def load_text(text: str) -> LoadedTemplate:
    """Parse template text (YAML, or JSON when it starts with ``{``)."""
    if len(text) > MAX_BYTES:
        raise TemplateError(f"file is larger than the {MAX_BYTES // (1024 * 1024)} MiB limit")
    if text.lstrip()[:1] == "{":
        try:
            return _load_json(text)
        except _NotJson as exc:
            try:  # flow-style YAML also starts with "{"
                return _load_yaml(text)
            except TemplateError:
                raise TemplateError(exc.reason, exc.line) from None
    return _load_yaml(text)


# --------------------------------------------------------------------------------------- JSON


class _NotJson(TemplateError):
    pass


_JSON_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[{}\[\]:]')


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _json_int(text: str) -> Any:
    # json's own int() refuses more than 4,300 digits with a ValueError; never build those
    return Unknown(TOO_LARGE) if len(text) > 17 else sane_number(int(text))


def _json_float(text: str) -> Any:
    return sane_number(float(text))


def _json_constant(text: str) -> Any:  # NaN, Infinity, -Infinity
    return sane_number(float(text))


def _load_json(text: str) -> LoadedTemplate:
    try:
        data = json.loads(text, object_pairs_hook=_pairs, parse_int=_json_int,
                          parse_float=_json_float, parse_constant=_json_constant)
    except json.JSONDecodeError as exc:
        raise _NotJson(f"JSON syntax error: {exc.msg}", exc.lineno) from None
    except _DuplicateKey as exc:
        raise TemplateError(
            f"duplicate key {exc.key!r} (CloudFormation rejects a key written twice)",
            _json_duplicate_line(text, exc.key),
        ) from None
    except RecursionError:
        raise _NotJson(f"nesting deeper than {MAX_DEPTH} levels") from None
    _check_depth(data)
    lines, res_line = _json_resource_lines(text) if isinstance(data, dict) else ({}, None)
    return LoadedTemplate(data, lines, res_line)


def _check_depth(value: Any) -> None:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        cur, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise TemplateError(f"nesting deeper than {MAX_DEPTH} levels")
        if isinstance(cur, dict):
            stack.extend((v, depth + 1) for v in cur.values())
        elif isinstance(cur, list):
            stack.extend((v, depth + 1) for v in cur)


def _json_resource_lines(text: str) -> tuple[dict[str, tuple[int, int]], int | None]:
    """Line spans of the top-level ``Resources`` entries, from a string/bracket token scan."""
    spans: dict[str, tuple[int, int]] = {}
    res_line: int | None = None
    depth = 0
    line, pos = 1, 0
    last_str, last_str_line = "", 0
    in_resources = expect_resources = False
    current: tuple[str, int] | None = None
    for m in _JSON_TOKEN.finditer(text):
        start = m.start()
        line += text.count("\n", pos, start)
        pos = start
        tok = m.group()
        if tok[0] == '"':
            last_str, last_str_line = tok, line
            expect_resources = False
            continue
        if tok == ":":
            if depth == 1 and last_str == '"Resources"':
                res_line, expect_resources = last_str_line, True
                continue
            elif depth == 2 and in_resources:
                current = (_json_str(last_str), last_str_line)
                spans[current[0]] = (last_str_line, last_str_line)
        elif tok in "{[":
            depth += 1
            in_resources = in_resources or (expect_resources and tok == "{")
        else:
            if depth == 3 and current is not None:
                spans[current[0]] = (current[1], line)
            elif depth == 2:
                in_resources = False
            depth -= 1
        last_str = ""
        expect_resources = False
    return spans, res_line


def _json_duplicate_line(text: str, key: str) -> int | None:
    """The line of the second ``key`` written in one JSON object (a token scan)."""
    stack: list[set[str]] = []
    line, pos = 1, 0
    last: str | None = None
    for m in _JSON_TOKEN.finditer(text):
        tok = m.group()
        if tok[0] == '"':
            last = tok
            continue
        if tok in "{[":
            stack.append(set())
        elif tok in "}]":
            if stack:
                stack.pop()
        elif tok == ":" and last is not None and stack:
            name = _json_str(last)
            if name == key and name in stack[-1]:
                line += text.count("\n", pos, m.start())
                return line
            stack[-1].add(name)
        last = None
    return None


def _json_str(token: str) -> str:
    try:
        value = json.loads(token)
    except ValueError:
        return token.strip('"')
    return value if isinstance(value, str) else token


# --------------------------------------------------------------------------------------- YAML


def _load_yaml(text: str) -> LoadedTemplate:
    if _ANCHOR_HINT.search(text):
        _refuse_anchors(text)
    composer = Composer(text)
    try:
        root = composer.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "syntax error"
        raise TemplateError(f"YAML syntax error: {problem}", mark_line(mark)) from None
    except yaml.YAMLError as exc:
        raise TemplateError(f"YAML error: {exc}") from None
    except RecursionError:
        raise TemplateError(f"nesting deeper than {MAX_DEPTH} levels") from None
    finally:
        dispose = getattr(composer, "dispose", None)
        if dispose is not None:
            dispose()
    if root is None:
        return LoadedTemplate(None)
    data = _Builder().build(root)
    lines, res_line = _yaml_resource_lines(root, text)
    return LoadedTemplate(data, lines, res_line)


def _refuse_anchors(text: str) -> None:
    """Scan events (cheap, never expands aliases) and refuse the first anchor or alias."""
    try:
        for event in yaml.parse(text, Loader=Composer):
            if isinstance(event, yaml.AliasEvent):
                raise TemplateError(
                    f"YAML alias *{event.anchor} is not supported by CloudFormation",
                    mark_line(event.start_mark),
                )
            anchor = getattr(event, "anchor", None)
            if anchor is not None:
                raise TemplateError(
                    f"YAML anchor &{anchor} is not supported by CloudFormation",
                    mark_line(event.start_mark),
                )
    except yaml.YAMLError:
        return  # the composer reports syntax errors with their line


class _Builder:
    """Turns composed nodes into Python values; refuses shared nodes (aliases) and deep nesting."""

    def __init__(self) -> None:
        self.seen: set[int] = set()

    def build(self, node: Node, depth: int = 1) -> Any:
        if depth > MAX_DEPTH:
            raise TemplateError(
                f"nesting deeper than {MAX_DEPTH} levels", mark_line(node.start_mark)
            )
        if id(node) in self.seen:
            raise TemplateError(
                "YAML aliases are not supported by CloudFormation", mark_line(node.start_mark)
            )
        self.seen.add(id(node))
        tag = node.tag
        if isinstance(node, ScalarNode):
            value: Any = scalar(node)
        elif isinstance(node, SequenceNode):
            value = [self.build(child, depth + 1) for child in node.value]
        elif isinstance(node, MappingNode):
            value = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, ScalarNode):
                    raise TemplateError(
                        "a mapping key is not a plain value", mark_line(key_node.start_mark)
                    )
                if id(key_node) in self.seen:
                    raise TemplateError(
                        "YAML aliases are not supported by CloudFormation",
                        mark_line(key_node.start_mark),
                    )
                self.seen.add(id(key_node))
                key = str(key_node.value)
                if key in value:
                    raise TemplateError(
                        f"duplicate key {key!r} (CloudFormation rejects a key written twice)",
                        mark_line(key_node.start_mark),
                    )
                value[key] = self.build(value_node, depth + 1)
        else:  # pragma: no cover - no other node types exist
            raise TemplateError("unexpected YAML node", mark_line(node.start_mark))
        if tag.startswith("!"):
            return self._intrinsic(node, tag, value)
        return value

    def _intrinsic(self, node: Node, tag: str, value: Any) -> Any:
        name = SHORT_TAGS.get(tag)
        if name is None and tag.startswith("!Rain::"):
            raise TemplateError(
                f"{tag} is a rain directive, not CloudFormation; run `rain pkg` and scan its "
                "output",
                mark_line(node.start_mark),
            )
        if name is None:
            raise TemplateError(
                f"unsupported YAML tag {tag} (not a CloudFormation intrinsic function)",
                mark_line(node.start_mark),
            )
        if name == "Fn::GetAtt" and isinstance(value, str):
            logical_id, _, attr = value.partition(".")
            value = [logical_id, attr]
        return {name: value}


def _yaml_resource_lines(root: Node, text: str) -> tuple[dict[str, tuple[int, int]], int | None]:
    if not isinstance(root, MappingNode):
        return {}, None
    for key_node, value_node in root.value:
        if key_node.value == "Resources":
            spans: dict[str, tuple[int, int]] = {}
            if isinstance(value_node, MappingNode):
                lines = text.splitlines()
                for rkey, rvalue in value_node.value:
                    start = mark_line(rkey.start_mark) or 1
                    end = max(start, last_line(rvalue))
                    while end > start and _is_blank(lines, end):
                        end -= 1
                    spans[str(rkey.value)] = (start, end)
            return spans, mark_line(key_node.start_mark)
    return {}, None


def _is_blank(lines: list[str], line: int) -> bool:
    if line > len(lines):
        return True
    content = lines[line - 1].strip()
    return not content or content.startswith("#")


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1
