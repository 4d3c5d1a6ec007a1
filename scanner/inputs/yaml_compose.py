"""YAML composition shared by the readers of YAML inputs (CloudFormation templates and the YAML
documents of Karpenter, eksctl and ParallelCluster): a composer with YAML 1.1's implicit types
but timestamps (kept as text), scalars made safe at the door, and the lines nodes stand on."""

from __future__ import annotations

from typing import Any, ClassVar

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from scanner.inputs.numbers import TOO_LARGE, sane_number
from scanner.model import Unknown

try:  # libyaml: composition in C (about 10x faster than the pure-Python parser)
    from yaml._yaml import CParser as _Parser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml.composer import Composer as _PyComposer
    from yaml.parser import Parser
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    class _Parser(Reader, Scanner, Parser, _PyComposer):  # type: ignore[no-redef]
        def __init__(self, stream: str) -> None:
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)
            _PyComposer.__init__(self)


TAG = "tag:yaml.org,2002:"
TIMESTAMP = TAG + "timestamp"
MERGE = TAG + "merge"
MAX_WALK = 100  # the deepest a last-line walk goes (every reader refuses deeper nesting)


class _Resolver(yaml.resolver.Resolver):
    """The YAML 1.1 implicit types minus timestamps (kept as text, as CloudFormation does)."""

    yaml_implicit_resolvers: ClassVar[dict[Any, Any]] = {
        first: [(tag, rx) for tag, rx in resolvers if tag != TIMESTAMP]
        for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
    }


class Composer(_Parser, _Resolver):  # type: ignore[misc, valid-type]
    def __init__(self, stream: str) -> None:
        _Parser.__init__(self, stream)
        _Resolver.__init__(self)


_SCALARS = yaml.constructor.SafeConstructor()


def scalar(node: ScalarNode) -> Any:
    """The value of a scalar node: int, float, bool, None or the text; a number no AWS value can
    be (non-finite, too large) is Unknown, and none of thousands of digits is ever built."""
    tag = node.tag
    if not tag.startswith(TAG):
        return node.value  # a custom tag: the plain text
    kind = tag[len(TAG):]
    try:
        if kind == "int":
            digits = node.value.lstrip("+-").replace("_", "")
            if len(digits) > 17 and not digits.startswith("0"):
                return Unknown(TOO_LARGE)
            return sane_number(_SCALARS.construct_yaml_int(node))
        if kind == "float":
            return sane_number(_SCALARS.construct_yaml_float(node))
        if kind == "bool":
            return _SCALARS.construct_yaml_bool(node)
        if kind == "null":
            return None
    except (ValueError, KeyError, TypeError):
        return node.value
    return node.value  # str, timestamp, binary, merge ("<<"), value ("=")


def mark_line(mark: Any) -> int | None:
    """The 1-based line of a YAML mark."""
    return None if mark is None else int(mark.line) + 1


def last_line(node: Node) -> int:
    """The last line holding content of ``node`` (block collections end at the next key)."""
    seen = 0
    while isinstance(node, MappingNode | SequenceNode) and not node.flow_style and node.value \
            and seen < MAX_WALK:
        last = node.value[-1]
        node = last[1] if isinstance(node, MappingNode) else last
        seen += 1
    mark = node.end_mark
    if mark.column == 0 and mark.line > node.start_mark.line:
        return int(mark.line)  # block scalars end at column 0 of the following line
    return int(mark.line) + 1
