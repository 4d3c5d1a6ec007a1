"""Karpenter manifest files: every NodePool and EC2NodeClass of a YAML (or JSON) file of one or
more documents. Read alone (:func:`read_if_manifests`) the other documents are skipped
quietly; ``gpuaudit scan`` reads a file with every YAML format
(:mod:`scanner.sources.yaml_documents.dispatch`), so an eksctl or ParallelCluster document
beside the NodePools is read too and a Deployment or ConfigMap is named in a notice.

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
from typing import Any

from scanner.model import TEMPLATE_NOT_READ, Provenance, Resource, SourceKind, SourceResult
from scanner.sources.karpenter.objects import Problems, karpenter_kind, objects_in, translate
from scanner.sources.karpenter.sniff import clearly_karpenter
from scanner.sources.yaml_documents.dispatch import YamlFormat, read_yaml_file
from scanner.sources.yaml_documents.files import ConfigFile
from scanner.sources.yaml_documents.holes import without_placeholders
from scanner.sources.yaml_documents.reader import Document

_HELM_ACTION = re.compile(r"^\s*\{\{-?\s*(?:if|range|with|define|include|template|end)\b",
                          re.MULTILINE)
HELM_TEMPLATE = (f"{TEMPLATE_NOT_READ}: a Helm chart template ({{{{ ... }}}} actions), not a "
                 "manifest; scan what `helm template` renders")


def is_karpenter_document(value: Any) -> bool:
    return any(karpenter_kind(obj) is not None for obj in objects_in(value))


def _helm(text: str) -> str | None:
    return HELM_TEMPLATE if _HELM_ACTION.search(text) else None


def read_documents(file: ConfigFile, docs: list[Document], result: SourceResult) -> None:
    """The Karpenter objects of the documents (a document may be a ``kind: List``)."""
    where = file.where
    problems = Problems(where)
    first = len(result.resources)
    for doc in docs:
        for obj in objects_in(doc.value):
            if karpenter_kind(obj) is None:
                continue
            span = file.lines_of(obj) or (doc.start_line, doc.end_line)
            prov = Provenance(SourceKind.KARPENTER, file=where, start_line=span[0],
                              end_line=span[1])
            r = translate(obj, rid=None, provenance=prov, scope=where, problems=problems,
                          lines=file.lines_of, clean=without_placeholders)
            if r is not None:
                result.resources.append(r)
    result.errors.extend(problems.errors)
    result.notices.extend(problems.notices)
    _unique_ids(result.resources[first:])


FORMAT = YamlFormat("Karpenter NodePool / EC2NodeClass", clearly_karpenter,
                    is_karpenter_document, read_documents, refuses=_helm)


def read_if_manifests(path: Path) -> SourceResult | None:
    """The Karpenter objects of a file; None when it holds none and is not clearly
    Karpenter (any other YAML or JSON). Never raises."""
    return read_yaml_file(path, only=(FORMAT,))


def _unique_ids(resources: list[Resource]) -> None:
    """Two objects of the same kind and name in one file: the second gets ``#2`` (kubectl
    would apply the last over the first; both are judged)."""
    seen: dict[str, int] = {}
    for r in resources:
        n = seen.get(r.id, 0) + 1
        seen[r.id] = n
        if n > 1:
            r.id = f"{r.id}#{n}"
