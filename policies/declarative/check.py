"""The check of a declarative policy: select by the compute view, evaluate the condition in
three values, and say which path decided."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from policies.base import Check, Context
from policies.declarative.conditions import Node, shown
from policies.declarative.fields import FIELDS, TAGS, read_attribute, read_tag
from scanner.model import Resource, Result, Status, Unknown

SELECTORS = {"gpu": "compute.gpu", "spot": "compute.spot"}


def lookup(resource: Resource, view: Any, ctx: Context, path: str) -> Any:
    fld = FIELDS.get(path)
    if fld is not None:
        return fld.read(resource, view, ctx.catalog)
    if path.startswith(TAGS):
        return read_tag(resource, path[len(TAGS):], view)
    return read_attribute(resource, path)


def make_check(policy_id: str, node: Node, selector: Mapping[str, bool],
               uses_view: bool) -> Check:
    def check(resource: Resource, ctx: Context) -> Iterator[Result]:
        view = ctx.compute.of(resource) if uses_view else None
        if view is not None and (view.managed_by is not None or not view.active):
            return  # judged at the resource that owns its capacity (never twice)
        evidence: dict[str, Any] = {}
        for key, want in selector.items():
            path = SELECTORS[key]
            got = lookup(resource, view, ctx, path)
            evidence[path] = shown(got)
            if isinstance(got, Unknown):
                yield ctx.result(resource, Status.UNKNOWN,
                                 f"{policy_id} applies where {path} is {str(want).lower()}, "
                                 f"and that is not known: {got.reason or 'not known'}",
                                 evidence=evidence)
                return
            if bool(got) is not want:
                return  # not selected: no result at all
        read: dict[str, Any] = {}
        out = node.evaluate(lambda p: lookup(resource, view, ctx, p), read)
        evidence.update(read)
        if out.holds is None:
            status, message = Status.UNKNOWN, f"cannot tell: {out.why}"
        elif out.holds:
            status, message = Status.PASS, f"holds: {out.why}" if out.why else "holds"
        else:
            status, message = Status.FAIL, out.why
        yield ctx.result(resource, status, message, evidence={"read": evidence,
                                                                "decided_by": out.path})

    return check
