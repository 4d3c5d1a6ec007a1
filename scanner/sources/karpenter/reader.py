"""Karpenter manifest files: every NodePool and EC2NodeClass of a YAML (or JSON) file of one or
more documents; the other documents (a Deployment, a ConfigMap) are skipped quietly.

A file that is clearly Karpenter (a Karpenter ``apiVersion`` and a ``NodePool`` /
``EC2NodeClass`` kind in its text) but does not parse is an input error naming the line; a
document that does not parse is an error only when its own text is a Karpenter object. A Helm
chart template (``{{ ... }}`` actions) is not a manifest: a notice says to scan what
``helm template`` renders. ``${VAR}`` placeholders (``templatefile``, ``envsubst``) read as
UNKNOWN. YAML anchors and aliases are accepted, as kubectl accepts them, within the budget of
:mod:`scanner.sources.yaml_documents.reader`.
"""

from __future__ import annotations

import re
from pathlib import Path

from scanner.model import InputError, Notice, Provenance, SourceKind, SourceResult
from scanner.safe_read import ReadError, read_regular
from scanner.sources.karpenter.objects import Problems, karpenter_kind, objects_in, translate
from scanner.sources.karpenter.sniff import clearly_karpenter
from scanner.sources.yaml_documents.holes import without_placeholders
from scanner.sources.yaml_documents.reader import MAX_BYTES, YamlError, decode, load_documents

_HELM_ACTION = re.compile(r"^\s*\{\{-?\s*(?:if|range|with|define|include|template|end)\b",
                          re.MULTILINE)
HELM_TEMPLATE = ("a Helm chart template ({{ ... }} actions), not a manifest: not scanned; scan "
                 "what `helm template` renders")


def read_if_manifests(path: Path) -> SourceResult | None:
    """The Karpenter objects of a file; None when it holds none and is not clearly
    Karpenter (any other YAML or JSON). Never raises."""
    try:
        return _read(path)
    except (RecursionError, ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
        # a bug must not cost the user the rest of the run; the fuzz test looks for these
        return SourceResult(errors=[InputError(str(path), "internal error while reading "
                                               f"manifests: {type(exc).__name__}: {exc}")])


def _read(path: Path) -> SourceResult | None:
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
    clearly = clearly_karpenter(text)
    if _HELM_ACTION.search(text):
        if not clearly:
            return None
        result.notices.append(Notice(where, HELM_TEMPLATE))
        return result
    try:
        loaded = load_documents(text)
    except YamlError as exc:
        if not clearly:
            return None
        result.errors.append(InputError(where, exc.reason, exc.line))
        return result
    lines = text.splitlines()
    problems = Problems(where)
    found = False
    for doc in loaded.documents:
        if doc.error is not None:
            if clearly_karpenter("\n".join(lines[doc.start_line - 1:doc.end_line])):
                problems.error(doc.error.reason, doc.error.line or doc.start_line)
                found = True
            continue
        for obj in objects_in(doc.value):
            if karpenter_kind(obj) is None:
                continue
            found = True
            span = loaded.lines_of(obj) or (doc.start_line, doc.end_line)
            prov = Provenance(SourceKind.KARPENTER, file=where, start_line=span[0],
                              end_line=span[1])
            r = translate(obj, rid=None, provenance=prov, scope=where, problems=problems,
                          lines=loaded.lines_of, clean=without_placeholders)
            if r is not None:
                result.resources.append(r)
    if loaded.error is not None and (found or clearly):
        problems.error(loaded.error.reason, loaded.error.line)
        found = True
    if not found:
        return None
    result.errors.extend(problems.errors)
    result.notices.extend(problems.notices)
    _unique_ids(result)
    return result


def _unique_ids(result: SourceResult) -> None:
    """Two objects of the same kind and name in one file: the second gets ``#2`` (kubectl
    would apply the last over the first; both are judged)."""
    seen: dict[str, int] = {}
    for r in result.resources:
        n = seen.get(r.id, 0) + 1
        seen[r.id] = n
        if n > 1:
            r.id = f"{r.id}#{n}"
