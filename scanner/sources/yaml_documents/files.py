"""A YAML file as its format's reader sees it: the documents of that format, and the line of
each value read from it (:mod:`.dispatch` reads the file and hands it over)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scanner.model import InputError
from scanner.sources.yaml_documents.reader import (
    Document,
    Loaded,
)


@dataclass
class ConfigFile:
    where: str
    documents: list[Document] = field(default_factory=list)  # the documents of the format
    loaded: Loaded | None = None
    errors: list[InputError] = field(default_factory=list)
    # the lines of every value when they are not the file's own (a configuration embedded in
    # another file: a CloudFormation resource's span)
    span: tuple[int, int] | None = None

    def lines_of(self, value: Any) -> tuple[int, int] | None:
        return self.loaded.lines_of(value) if self.loaded is not None else self.span

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
