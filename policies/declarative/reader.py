"""A policy file as data, with the line of every value: YAML (JSON is YAML), read like any input
(a regular file within a budget), no anchors or aliases, no custom tags, no key twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

MAX_FILE_BYTES = 256 * 1024
MAX_NODES = 20_000  # values in one policy file
MAX_DEPTH = 32

Lines = dict[tuple[Any, ...], int]


class FileProblem(Exception):
    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


def read_policy_file(path: Path) -> tuple[Any, Lines]:
    from scanner.inputs.safe_read import ReadError, decode_text, read_regular

    try:
        text = decode_text(read_regular(path, limit=MAX_FILE_BYTES))
    except ReadError as exc:
        raise FileProblem(f"cannot read: {exc.reason}") from None
    except UnicodeDecodeError as exc:
        raise FileProblem(f"not {exc.encoding.upper()} text") from None
    try:
        _check_events(text)
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise FileProblem(f"not valid YAML: {exc.problem or exc.context or 'syntax error'}",
                          mark.line + 1 if mark is not None else None) from None
    except yaml.YAMLError as exc:
        raise FileProblem(f"not valid YAML: {type(exc).__name__}") from None
    if node is None:
        raise FileProblem("empty file", 1)
    lines: Lines = {}
    return _value(node, (), lines), lines


def _check_events(text: str) -> None:
    depth = 0
    count = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        line = event.start_mark.line + 1 if event.start_mark is not None else None
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise FileProblem("YAML anchors and aliases are not allowed in a policy file", line)
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise FileProblem(f"nested deeper than {MAX_DEPTH} levels", line)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
        elif isinstance(event, yaml.DocumentStartEvent) and count:
            raise FileProblem("one policy per file (a second YAML document)", line)
        if isinstance(event, yaml.NodeEvent):
            count += 1
            if count > MAX_NODES:
                raise FileProblem(f"more than {MAX_NODES:,} values", line)


_SCALARS = yaml.constructor.SafeConstructor()
_STANDARD = ("tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
             "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null")


def _value(node: Node, where: tuple[Any, ...], lines: Lines) -> Any:
    line = node.start_mark.line + 1
    lines[where] = line
    if isinstance(node, MappingNode):
        if node.tag != "tag:yaml.org,2002:map":
            raise FileProblem(f"tag {node.tag} is not allowed", line)
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                raise FileProblem("a key must be plain text (no merge keys)",
                                  key_node.start_mark.line + 1)
            key = str(key_node.value)
            if key in out:
                raise FileProblem(f"key {key!r} written twice", key_node.start_mark.line + 1)
            out[key] = _value(value_node, (*where, key), lines)
        return out
    if isinstance(node, SequenceNode):
        if node.tag != "tag:yaml.org,2002:seq":
            raise FileProblem(f"tag {node.tag} is not allowed", line)
        return [_value(item, (*where, i), lines) for i, item in enumerate(node.value)]
    assert isinstance(node, ScalarNode)
    if node.tag not in _STANDARD:
        if node.tag.startswith("tag:yaml.org,2002:"):
            return str(node.value)  # a timestamp, binary …: kept as the text written
        raise FileProblem(f"tag {node.tag} is not allowed", line)
    if node.tag == "tag:yaml.org,2002:int" and len(node.value) > 30:
        raise FileProblem("a number too long", line)
    value = _SCALARS.construct_object(node)
    return value


def line_of(lines: Lines, where: tuple[Any, ...]) -> int | None:
    """The line of the value at ``where``, else of its nearest parent."""
    for n in range(len(where), -1, -1):
        if where[:n] in lines:
            return lines[where[:n]]
    return None
