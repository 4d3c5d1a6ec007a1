"""Subnets chosen by selector terms (a Karpenter EC2NodeClass's ``subnetSelectorTerms``): terms
are ORed, the tags of one term ANDed; a tag value ``*`` (or a glob with ``*``) matches, ``""``
matches any value of the key; a term ``Id`` names a subnet.

The subnets are looked for in the selector's own scope first (a Terraform root module that
declares both), then in the whole scan when the selector's scope holds none of them (a manifest
file next to the Terraform that declares the VPC): they count only when they all come from one
scope, because the same tags in two root modules leave open which account the cluster runs in.
Tags that are not known, or that no subnet in the scan carries, are UNKNOWN with the reason.
"""

from __future__ import annotations

import fnmatch
from typing import Any

from scanner.model import Ref, Resource, Unknown
from scanner.model.graph import ResourceIndex

SUBNET = "ec2.subnet"


def _tag_matches(want: str, have: str) -> bool:
    if want in ("", "*"):
        return True
    if "*" in want or "?" in want:  # EC2's filter wildcards
        return fnmatch.fnmatchcase(have, want.replace("[", "[[]"))
    return want == have


def _term_matches(term: dict[str, Any], subnet: Resource) -> bool:
    tags = term.get("Tags")
    if isinstance(tags, dict) and tags:
        for key, want in tags.items():
            have = subnet.tags.get(key)
            if have is None or not _tag_matches(str(want), have):
                return False
        return True
    return False


def describe(terms: Any) -> str:
    parts = []
    for t in terms if isinstance(terms, list) else []:
        if isinstance(t, dict):
            if isinstance(t.get("Tags"), dict):
                parts.append(", ".join(f"{k}={v}" for k, v in t["Tags"].items()))
            elif t.get("Id") is not None:
                parts.append(f"id {t['Id']}")
    return " or ".join(f"[{p}]" for p in parts) or "(none)"


def select(terms: Any, scope: str, index: ResourceIndex) -> tuple[Any, ...]:
    """The subnets the terms select: Resources, or a single Unknown saying why not."""
    if isinstance(terms, Unknown):
        return (Unknown(f"the subnet selector is not known: {terms.reason}"),)
    if not isinstance(terms, list) or not terms:
        return (Unknown("the EC2NodeClass selects no subnet"),)
    for t in terms:
        if isinstance(t, Unknown):
            return (Unknown(f"a subnet selector term is not known: {t.reason}"),)
        if isinstance(t, dict):
            for v in (t.get("Tags"), t.get("Id")):
                if isinstance(v, Unknown):
                    return (Unknown(f"the subnet selector is not known: {v.reason}"),)
            tags = t.get("Tags")
            if isinstance(tags, dict):
                for v in tags.values():
                    if isinstance(v, Unknown):
                        return (Unknown(f"a subnet selector tag is not known: {v.reason}"),)
    by_id: list[Any] = []
    tag_terms = [t for t in terms if isinstance(t, dict) and isinstance(t.get("Tags"), dict)]
    for t in terms:
        if isinstance(t, dict) and t.get("Id") is not None:
            ident = t["Id"]
            hit = index.resolve_all(ident if isinstance(ident, Ref) else str(ident), scope,
                                    SUBNET)
            by_id.extend(hit or [ident])
    chosen = _by_tags(tag_terms, scope, index) if tag_terms else []
    if isinstance(chosen, Unknown):
        return (*by_id, chosen) if by_id else (chosen,)
    out: dict[Any, Any] = {}
    for item in [*by_id, *chosen]:  # Resources compare by value: dedupe by identity
        out.setdefault(id(item) if isinstance(item, Resource) else item, item)
    return tuple(out.values())


def _by_tags(terms: list[dict[str, Any]], scope: str,
             index: ResourceIndex) -> list[Any] | Unknown:
    def matching(subnets: list[Resource]) -> list[Resource]:
        return [s for s in subnets if any(_term_matches(t, s) for t in terms)]

    here = matching(index.of_kind(SUBNET, scope))
    chosen: list[Resource] = here
    if not here:
        everywhere = matching(index.of_kind(SUBNET))
        scopes = sorted({s.scope for s in everywhere})
        shown = describe(terms)
        if not scopes:
            return Unknown(f"no subnet in the scan carries the tags {shown}")
        if len(scopes) > 1:
            return Unknown(f"subnets with the tags {shown} are declared in {len(scopes)} places "
                           f"({', '.join(scopes[:3])}{'…' if len(scopes) > 3 else ''}): which "
                           "of them the cluster uses is not known")
        chosen = everywhere
    # a term that selects none of them may select subnets the scan does not hold
    out: list[Any] = list(chosen)
    for t in terms:
        if not any(_term_matches(t, s) for s in chosen):
            out.append(Unknown(f"no subnet in the scan carries the tags {describe([t])}"))
    return out
