"""Read a YAML file of one or more documents into plain values, with line numbers.

* Documents are composed one at a time (libyaml), so a syntax error in the third document
  keeps the first two; the error names its line.
* Anchors and aliases are accepted (Kubernetes, eksctl and ParallelCluster accept them) and
  expanded against :data:`MAX_VALUES` values per file, aliases counted each time they are
  used: an alias bomb stops at the budget with an error naming the line. The expansion is
  worked out on the composed nodes before anything is built (an alias is the node it names,
  so each node is sized once): a bomb is refused in time linear in its text, not after a
  million values were built. A merge key (``<<: *base``) merges as YAML 1.1 says (keys
  written in the mapping win).
* A key written twice in one mapping is an error of that document (Kubernetes' strict decoding
  refuses it); the other documents are still read.
* Nesting deeper than :data:`MAX_DEPTH` is an error; a file over :data:`MAX_BYTES` is refused.
* Timestamps stay text; numbers that are not finite or absurdly large become
  :class:`~scanner.model.Unknown`; a custom tag (``!Foo``) keeps the plain value.
* UTF-8, and UTF-16 / UTF-32 with a byte-order mark.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from scanner.inputs.safe_read import decode_text
from scanner.inputs.yaml_compose import MERGE, Composer, last_line, mark_line, scalar
from scanner.model import Unknown

MAX_BYTES = 10 * 1024 * 1024
MAX_DEPTH = 100
MAX_VALUES = 1_000_000  # values built per file, alias expansions included
MAX_DOCUMENTS = 10_000


class YamlError(Exception):
    """The text (or one document of it) cannot be read; ``line`` is 1-based when known."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


@dataclass
class Document:
    """One document: its value (None for an empty document), its lines (1-based, inclusive),
    and the error that stopped it being read (its value is then None)."""

    value: Any
    start_line: int
    end_line: int
    error: YamlError | None = None


@dataclass
class Loaded:
    """The documents read, in order; ``error``: what stopped the reading of the rest of the
    file (a syntax error, the value budget), after ``documents``."""

    documents: list[Document] = field(default_factory=list)
    error: YamlError | None = None
    spans: dict[int, tuple[int, int]] = field(default_factory=dict)  # id(dict|list) -> lines
    # the line of each key of a mapping, and of each item of a list (for scalars, which have
    # no identity of their own)
    key_lines: dict[int, dict[str, int]] = field(default_factory=dict)
    item_lines: dict[int, list[int]] = field(default_factory=dict)

    def lines_of(self, value: Any) -> tuple[int, int] | None:
        """The line span of a mapping or list read from the text (None for anything else)."""
        return self.spans.get(id(value))

    def line_of_key(self, mapping: Any, key: str) -> int | None:
        return self.key_lines.get(id(mapping), {}).get(key)

    def line_of_item(self, items: Any, index: int) -> int | None:
        lines = self.item_lines.get(id(items))
        return lines[index] if lines is not None and 0 <= index < len(lines) else None


def decode(data: bytes) -> str:
    """The text of a YAML file (raises :class:`YamlError` for binary or undecodable bytes)."""
    if len(data) > MAX_BYTES:
        raise YamlError(f"file is larger than the {MAX_BYTES // (1024 * 1024)} MiB limit")
    try:
        text = decode_text(data)
    except UnicodeDecodeError as exc:
        if b"\x00" in data:
            raise YamlError("binary file (contains NUL bytes)",
                            data.count(b"\n", 0, data.index(b"\x00")) + 1) from None
        if exc.encoding.replace("_", "-").lower() != "utf-8":
            raise YamlError(f"not {exc.encoding.upper()} text ({exc.reason})") from None
        raise YamlError(f"not UTF-8 text (byte 0x{data[exc.start]:02x})",
                        data.count(b"\n", 0, exc.start) + 1) from None
    if "\x00" in text:
        raise YamlError("binary file (contains NUL bytes)",
                        text.count("\n", 0, text.index("\x00")) + 1)
    return text


def load_documents(data: bytes | str) -> Loaded:
    """Every document of a YAML text. Raises :class:`YamlError` only when nothing can be read
    at all (binary, undecodable or oversized input); later problems end up in ``error``."""
    text = decode(data) if isinstance(data, bytes) else data
    if len(text) > MAX_BYTES:
        raise YamlError(f"text is larger than the {MAX_BYTES // (1024 * 1024)} MiB limit")
    loaded = Loaded()
    builder = _Builder(loaded.spans, loaded.key_lines, loaded.item_lines)
    has_aliases = "&" in text  # an alias needs an anchor
    composer = Composer(text)
    try:
        while True:
            try:
                if not composer.check_node():
                    break
                node = composer.get_node()
            except yaml.MarkedYAMLError as exc:
                mark = exc.problem_mark or exc.context_mark
                problem = exc.problem or exc.context or "syntax error"
                loaded.error = YamlError(f"YAML syntax error: {problem}", mark_line(mark))
                break
            except yaml.YAMLError as exc:
                loaded.error = YamlError(f"YAML error: {exc}")
                break
            except RecursionError:
                loaded.error = YamlError(f"nesting deeper than {MAX_DEPTH} levels")
                break
            if len(loaded.documents) >= MAX_DOCUMENTS:
                loaded.error = YamlError(f"more than {MAX_DOCUMENTS:,} documents",
                                         mark_line(node.start_mark) if node else None)
                break
            if node is None:
                continue
            start = mark_line(node.start_mark) or 1
            end = max(start, last_line(node))
            try:
                if has_aliases:
                    builder.rehearse(node)
                value = builder.build(node)
            except YamlError as exc:
                loaded.documents.append(Document(None, start, end, exc))
                if builder.spent:
                    loaded.error = exc
                    break
                continue
            loaded.documents.append(Document(value, start, end))
    finally:
        dispose = getattr(composer, "dispose", None)
        if dispose is not None:
            dispose()
    return loaded


class _Builder:
    """Composed nodes → plain values; counts every value built (alias expansions too)."""

    def __init__(self, spans: dict[int, tuple[int, int]], key_lines: dict[int, dict[str, int]],
                 item_lines: dict[int, list[int]]) -> None:
        self.spans = spans
        self.key_lines = key_lines
        self.item_lines = item_lines
        self.count = 0
        self.spent = False

    def rehearse(self, node: Node) -> None:
        """Raise the error ``build(node)`` would raise (the same reason, line and values
        counted; the budget then spent), without building anything: from the sizes of
        :class:`_Expansion` it skips every part that builds cleanly within the budget and
        walks only down to the error. Nothing is counted when the build would succeed."""
        expansion = _Expansion()
        expansion.of(node)
        start = self.count
        self._rehearse(node, 1, expansion)  # raises with the count build() would have
        self.count = start  # build() counts them again

    def _rehearse(self, node: Node, depth: int, expansion: _Expansion) -> None:
        key = id(node)
        if key not in expansion.size:
            expansion.of(node)
        if expansion.clean[key] and depth + expansion.height[key] <= MAX_DEPTH \
                and self.count + expansion.size[key] <= MAX_VALUES:
            self.count += expansion.size[key]
            return
        # as build() does, step by step
        if depth > MAX_DEPTH:
            raise YamlError(f"nesting deeper than {MAX_DEPTH} levels (a recursive alias?)",
                            mark_line(node.start_mark))
        self.count += 1
        if self.count > MAX_VALUES:
            self.spent = True
            raise YamlError(f"the file expands to more than {MAX_VALUES:,} values (YAML "
                            "aliases repeat it): not read further", mark_line(node.start_mark))
        if isinstance(node, ScalarNode):
            return
        if isinstance(node, SequenceNode):
            for child in node.value:
                self._rehearse(child, depth + 1, expansion)
            return
        if not isinstance(node, MappingNode):
            raise YamlError("unexpected YAML node", mark_line(node.start_mark))  # pragma: no cover
        keys: set[str] = set()
        for key_node, value_node in node.value:
            if isinstance(key_node, ScalarNode) and key_node.tag == MERGE:
                sources = value_node.value if isinstance(value_node, SequenceNode) \
                    else [value_node]
                for n in sources:
                    self._rehearse(n, depth + 1, expansion)
                    if not isinstance(n, MappingNode):
                        raise YamlError("a merge key (<<) needs a mapping", mark_line(n.start_mark))
                continue
            if not isinstance(key_node, ScalarNode):
                raise YamlError("a mapping key is not a plain value",
                                mark_line(key_node.start_mark))
            text = _key_text(key_node)
            if text in keys:
                raise YamlError(f"duplicate key {text!r}", mark_line(key_node.start_mark))
            keys.add(text)
            self._rehearse(value_node, depth + 1, expansion)

    def build(self, node: Node, depth: int = 1) -> Any:
        if depth > MAX_DEPTH:
            raise YamlError(f"nesting deeper than {MAX_DEPTH} levels (a recursive alias?)",
                            mark_line(node.start_mark))
        self.count += 1
        if self.count > MAX_VALUES:
            self.spent = True
            raise YamlError(f"the file expands to more than {MAX_VALUES:,} values (YAML "
                            "aliases repeat it): not read further", mark_line(node.start_mark))
        if isinstance(node, ScalarNode):
            return scalar(node)
        if isinstance(node, SequenceNode):
            items = [self.build(child, depth + 1) for child in node.value]
            self.spans[id(items)] = (mark_line(node.start_mark) or 1, last_line(node))
            self.item_lines[id(items)] = [mark_line(child.start_mark) or 1 for child in node.value]
            return items
        if isinstance(node, MappingNode):
            return self._mapping(node, depth)
        raise YamlError("unexpected YAML node", mark_line(node.start_mark))  # pragma: no cover

    def _mapping(self, node: MappingNode, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        merged: dict[str, Any] = {}
        keys: dict[str, int] = {}
        for key_node, value_node in node.value:
            if isinstance(key_node, ScalarNode) and key_node.tag == MERGE:
                for source in self._merge_sources(value_node, depth):
                    for k, v in source.items():
                        merged.setdefault(k, v)
                continue
            if not isinstance(key_node, ScalarNode):
                raise YamlError("a mapping key is not a plain value",
                                mark_line(key_node.start_mark))
            key = _key_text(key_node)
            if key in out:
                raise YamlError(f"duplicate key {key!r}", mark_line(key_node.start_mark))
            keys[key] = mark_line(key_node.start_mark) or 1
            out[key] = self.build(value_node, depth + 1)
        for k, v in merged.items():
            out.setdefault(k, v)
        self.spans[id(out)] = (mark_line(node.start_mark) or 1, last_line(node))
        self.key_lines[id(out)] = keys
        return out

    def _merge_sources(self, node: Node, depth: int) -> list[dict[str, Any]]:
        """``<<: *a`` or ``<<: [*a, *b]`` (earlier ones win)."""
        nodes = node.value if isinstance(node, SequenceNode) else [node]
        out: list[dict[str, Any]] = []
        for n in nodes:
            value = self.build(n, depth + 1)
            if not isinstance(value, dict):
                raise YamlError("a merge key (<<) needs a mapping", mark_line(n.start_mark))
            out.append(value)
        return out


_UNBOUNDED = 1 << 30  # the height of a recursive alias (deeper than any MAX_DEPTH)


class _Expansion:
    """What building each node of a document would cost, from the composed nodes alone: the
    values built (``size``, at most MAX_VALUES + 1), the nesting below it (``height``), and
    whether building it can fail for anything but depth or budget (``clean``: no duplicate
    key, no mapping key that is not a plain value, no merge of anything but a mapping). An
    alias is the very node its anchor names, so each node is worked out once (iteratively:
    no recursion limit), however often the document repeats it."""

    def __init__(self) -> None:
        self.size: dict[int, int] = {}
        self.height: dict[int, int] = {}
        self.clean: dict[int, bool] = {}

    def of(self, root: Node) -> None:
        if id(root) in self.size:
            return
        on_path: set[int] = set()
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            node, done = stack.pop()
            key = id(node)
            if done:
                on_path.discard(key)
                self._finish(node)
                continue
            if key in self.size or key in on_path:
                continue
            on_path.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(_built_children(node)[0]))

    def _finish(self, node: Node) -> None:
        children, clean = _built_children(node)
        size, height = 1, 0
        for child in children:
            ckey = id(child)
            if ckey not in self.size:  # on the path: a recursive alias
                size, height, clean = MAX_VALUES + 1, _UNBOUNDED, False
                break
            size = min(size + self.size[ckey], MAX_VALUES + 1)
            height = max(height, min(self.height[ckey] + 1, _UNBOUNDED))
            clean = clean and self.clean[ckey]
        key = id(node)
        self.size[key], self.height[key], self.clean[key] = size, height, clean


def _built_children(node: Node) -> tuple[list[Node], bool]:
    """The nodes ``_Builder.build(node)`` builds directly, in order, and whether the node
    itself builds without a structural error (see :class:`_Expansion`)."""
    if isinstance(node, ScalarNode):
        return [], True
    if isinstance(node, SequenceNode):
        return list(node.value), True
    if not isinstance(node, MappingNode):
        return [], False
    children: list[Node] = []
    clean = True
    keys: set[str] = set()
    for key_node, value_node in node.value:
        if isinstance(key_node, ScalarNode) and key_node.tag == MERGE:
            sources = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
            children.extend(sources)
            clean = clean and all(isinstance(n, MappingNode) for n in sources)
            continue
        if not isinstance(key_node, ScalarNode):
            clean = False
            continue
        text = _key_text(key_node)
        clean = clean and text not in keys
        keys.add(text)
        children.append(value_node)
    return children, clean


def _key_text(node: ScalarNode) -> str:
    value = scalar(node)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null" if node.value in ("null", "Null", "NULL", "~") else ""
    return str(node.value) if isinstance(value, Unknown) else str(value)
