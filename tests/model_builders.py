"""Build normalized resources by hand, for policy tests that need no source."""

from __future__ import annotations

from typing import Any

from scanner.model import Provenance, Resource, SourceKind

SCOPE = "test-scope"


def res(kind: str, rid: str, declared: bool = True, scope: str = SCOPE, **attrs: Any) -> Resource:
    source = SourceKind.TERRAFORM_PLAN if declared else SourceKind.AWS
    return Resource(kind=kind, id=rid, attrs=attrs, provenance=Provenance(source, file="main.tf",
                    start_line=1, end_line=5), scope=scope, declared=declared, aliases=(rid,))
