"""Read a configuration file that may or may not be of a given YAML format: the documents that
are, or nothing (another YAML file), or an input error naming the line (a file whose text is
clearly of the format but that cannot be read)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.model import InputError
from scanner.safe_read import ReadError, read_regular
from scanner.sources.yaml_documents.reader import (
    MAX_BYTES,
    Document,
    Loaded,
    YamlError,
    decode,
    load_documents,
)


@dataclass
class ConfigFile:
    where: str
    documents: list[Document] = field(default_factory=list)  # the documents of the format
    loaded: Loaded | None = None
    errors: list[InputError] = field(default_factory=list)

    def lines_of(self, value: Any) -> tuple[int, int] | None:
        return self.loaded.lines_of(value) if self.loaded is not None else None

    def line(self, value: Any, parent: Any = None, key: str | int | None = None,
             default: int = 1) -> int:
        """The line of ``value``: its own span, else the line of its key in ``parent`` (or of
        its item), else ``default``."""
        span = self.lines_of(value)
        if span is not None:
            return span[0]
        if self.loaded is not None and parent is not None:
            found = self.loaded.line_of_key(parent, key) if isinstance(key, str) else \
                self.loaded.line_of_item(parent, key) if isinstance(key, int) else None
            if found is not None:
                return found
        return default


def read_config_file(path: Path, *, clearly: Callable[[str], bool],
                     is_config: Callable[[Any], bool]) -> ConfigFile | None:
    """``clearly``: the text test that makes a file that does not parse an input error;
    ``is_config``: the structural test of a document."""
    where = str(path)
    out = ConfigFile(where)
    try:
        data = read_regular(path, limit=MAX_BYTES)
    except ReadError as exc:
        out.errors.append(InputError(where, f"cannot read file: {exc.reason}"))
        return out
    try:
        text = decode(data)
    except YamlError as exc:
        out.errors.append(InputError(where, exc.reason, exc.line))
        return out
    is_clear = clearly(text)
    try:
        loaded = load_documents(text)
    except YamlError as exc:
        if not is_clear:
            return None
        out.errors.append(InputError(where, exc.reason, exc.line))
        return out
    out.loaded = loaded
    lines = text.splitlines()
    for doc in loaded.documents:
        if doc.error is not None:
            if clearly("\n".join(lines[doc.start_line - 1:doc.end_line])):
                out.errors.append(InputError(where, doc.error.reason,
                                             doc.error.line or doc.start_line))
            continue
        if is_config(doc.value):
            out.documents.append(doc)
    if loaded.error is not None and (out.documents or is_clear):
        out.errors.append(InputError(where, loaded.error.reason, loaded.error.line))
    if not out.documents and not out.errors:
        return None
    return out
