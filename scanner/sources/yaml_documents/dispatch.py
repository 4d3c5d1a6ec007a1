"""One YAML file, every document of it, each read by the format it is: a Karpenter manifest, an
eksctl ``ClusterConfig``, a ParallelCluster cluster configuration, in any mix and any order
(``kubectl apply -f`` and the EKS blueprints keep a NodePool and the cluster's config in one
file). The file is read and parsed once; each format claims the documents whose structure is
its own (:class:`YamlFormat`), reads them, and every other document that holds something is
named in a notice (file, line, its ``kind``): a document gpuaudit does not read is never
dropped in silence.

Enters: a path. Leaves: a :class:`~scanner.model.SourceResult`, or None for a file that holds
no document of these formats and whose text is clearly none of them. The formats register here
by name (imported only when a file of theirs is scanned).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scanner.inputs.safe_read import ReadError, read_regular
from scanner.model import TEMPLATE_NOT_READ, InputError, Notice, SourceResult
from scanner.sources.yaml_documents.files import ConfigFile
from scanner.sources.yaml_documents.holes import template_action
from scanner.sources.yaml_documents.reader import (
    MAX_BYTES,
    Document,
    YamlError,
    decode,
    load_documents,
)

# Each module declares FORMAT (a YamlFormat); the order is the order formats claim documents.
FORMAT_MODULES = ("scanner.sources.karpenter.reader", "scanner.sources.eksctl.reader",
                  "scanner.sources.parallelcluster.reader")
MAX_NAMED = 20  # documents of other kinds named one by one per file; the rest are counted


@dataclass(frozen=True)
class YamlFormat:
    """A format read from YAML documents.

    ``clearly``: the text test that makes a document (or the whole file) that does not parse
    an input error rather than YAML of another kind; ``claims``: the structural test of one
    document's value; ``read``: reads the documents claimed, into the result;
    ``refuses``: the notice for a whole text it does not read (a Helm chart template), or
    None."""

    name: str
    clearly: Callable[[str], bool]
    claims: Callable[[Any], bool]
    read: Callable[[ConfigFile, list[Document], SourceResult], None]
    refuses: Callable[[str], str | None] | None = None


def formats() -> tuple[YamlFormat, ...]:
    return tuple(importlib.import_module(m).FORMAT for m in FORMAT_MODULES)


def read_yaml_file(path: Path, only: Sequence[YamlFormat] | None = None) -> SourceResult | None:
    """Every document of ``path`` of the formats (all of them, or ``only`` these: then the
    other documents are skipped quietly, as that format's own reader does). Never raises."""
    chosen = tuple(only) if only is not None else formats()
    try:
        return _read(path, chosen, name_others=only is None)
    except (RecursionError, ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
        # a bug must not cost the user the rest of the run; the fuzz tests look for these
        names = " / ".join(f.name for f in chosen)
        return SourceResult(errors=[InputError(str(path), f"internal error while reading the "
                                               f"{names}: {type(exc).__name__}: {exc}")])


def _read(path: Path, chosen: tuple[YamlFormat, ...], *, name_others: bool
          ) -> SourceResult | None:
    where = str(path)
    result = SourceResult()
    try:
        data = read_regular(path, limit=MAX_BYTES)
    except ReadError as exc:
        result.errors.append(InputError(where, f"cannot read file: {exc.reason}"))
        return result
    try:
        text = decode(data)
    except YamlError as exc:
        result.errors.append(InputError(where, exc.reason, exc.line))
        return result
    clear = [f for f in chosen if f.clearly(text)]
    action = template_action(text)
    for f in clear:
        refusal = f.refuses(text) if f.refuses is not None else None
        if refusal is not None:
            result.notices.append(Notice(where, refusal, action[0] if action else None))
            return result
    try:
        loaded = load_documents(text)
    except YamlError as exc:
        if not clear:
            return None
        result.errors.append(InputError(where, exc.reason, exc.line))
        return result

    def not_read(error: YamlError, own: str) -> None:
        """What did not parse: an input error, or, where its text has template actions, a
        notice that the template was not read (it is YAML only once rendered)."""
        acted = template_action(own)
        if acted is None:
            result.errors.append(InputError(where, error.reason, error.line))
            return
        at = f"line {error.line}: " if error.line else ""
        result.notices.append(Notice(where, (
            f"{TEMPLATE_NOT_READ}: {acted[1]} (line {acted[0]}) is filled in when it is "
            f"rendered, and until then the file is not YAML ({at}{error.reason}); render it "
            "(`helm template`, or the tool that fills it in) and scan what it renders"),
            error.line or acted[0]))
    file = ConfigFile(where, loaded=loaded)
    lines = text.splitlines()
    claimed: dict[str, list[Document]] = {f.name: [] for f in chosen}
    others: list[Document] = []
    for doc in loaded.documents:
        if doc.error is not None:
            own = "\n".join(lines[doc.start_line - 1:doc.end_line])
            if any(f.clearly(own) for f in chosen):
                not_read(YamlError(doc.error.reason, doc.error.line or doc.start_line), own)
            continue
        owner = next((f for f in chosen if f.claims(doc.value)), None)
        if owner is not None:
            claimed[owner.name].append(doc)
        elif doc.value is not None:
            others.append(doc)
    found = any(claimed.values())
    for f in chosen:
        if claimed[f.name]:
            file.documents = claimed[f.name]
            f.read(file, claimed[f.name], result)
    if loaded.error is not None and (found or clear):
        rest = lines[(loaded.documents[-1].end_line if loaded.documents else 0):]
        not_read(loaded.error, "\n".join(rest))
    if not found and not result.errors and not result.notices:
        return None
    if found and action is not None:
        result.notices.append(Notice(where, (
            f"a template ({action[1]} at line {action[0]}): what its actions fill in is "
            "UNKNOWN, never judged as written; scan what it renders (`helm template`, or the "
            "tool that fills it in) for a full judgement"), action[0]))
    if name_others:
        _name_others(where, others, chosen, result)
    return result


def _name_others(where: str, others: list[Document], chosen: tuple[YamlFormat, ...],
                 result: SourceResult) -> None:
    readable = ", ".join(f.name for f in chosen)
    for doc in others[:MAX_NAMED]:
        result.notices.append(Notice(
            where, f"the document at line {doc.start_line} ({_what(doc.value)}) is not of a "
                   f"kind gpuaudit reads ({readable}): not scanned", doc.start_line))
    if len(others) > MAX_NAMED:
        rest = others[MAX_NAMED:]
        result.notices.append(Notice(
            where, f"{len(rest):,} more documents (lines {rest[0].start_line}-"
                   f"{rest[-1].end_line}) are not of a kind gpuaudit reads: not scanned",
            rest[0].start_line))


def _what(value: Any) -> str:
    """A document as a person recognises it: its kind and apiVersion, or its shape."""
    if isinstance(value, dict):
        kind, api = value.get("kind"), value.get("apiVersion")
        parts = [f"{k} {str(v)[:60]}" for k, v in (("kind", kind), ("apiVersion", api))
                 if isinstance(v, str | int | float) and not isinstance(v, bool)]
        if parts:
            return ", ".join(parts)
        keys = [str(k)[:30] for k in list(value)[:3]]
        return "a mapping of " + ", ".join(keys) + (", ..." if len(value) > 3 else "") \
            if keys else "an empty mapping"
    if isinstance(value, list):
        return f"a list of {len(value)} item(s)"
    return f"the text {str(value)[:40]!r}"
