"""No instance counted twice: which capacity each amount is about, and the report totals.

Each amount carries the capacity keys it is about (filled in by the engine from the resource):

- an Auto Scaling group: the group, or (live) the EKS managed node group it runs;
- an instance that is a member of a group in the same scope: the group (its capacity is the
  group's; RS-* evaluate members at the group and never on their own), or the group's node group;
- a launch template: every group, node group, Batch compute environment and instance in the
  scope that launches it (the template's money is the money of the capacity it launches), or
  the template itself when nothing does;
- anything else: itself.

The totals add the two classes apart (a saving and an exposure are never added together) and,
within a class, count amounts from the largest down, leaving out any amount whose capacity was
already counted: RS-002's full price and ASG-001's spot mix on one group count once (the larger),
a template's exposure and its group's count once. A finding keeps its own amount; one left out
of the total is marked ``"counted": false``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from scanner.model import Finding, Resource, SourceKind, dig
from scanner.model.graph import ResourceIndex

CLASSES = ("saving", "exposure")


def _key(r: Resource) -> str:
    prov = r.provenance
    if prov.source is SourceKind.AWS:
        where = f"{prov.account or ''}/{prov.region or ''}"
    else:
        where = _display(r.scope)
    return f"{where}/{r.kind}/{r.id}"


def _display(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel.replace(os.sep, "/")


def _template_users(template: Resource, index: ResourceIndex) -> list[Resource]:
    """The capacity that launches from ``template`` (from the map of every template's users,
    built once per index: one pass over the consumers, not one per template)."""
    users: dict[int, list[Resource]] = index.memo("template_users",
                                                  lambda: _users_by_template(index))
    return users.get(id(template), [])


def _users_by_template(index: ResourceIndex) -> dict[int, list[Resource]]:
    from scanner.compute.ownership import capacity_owner

    out: dict[int, list[Resource]] = {}

    def add(specs: Sequence[Any], r: Resource, owner: bool) -> None:
        found = {id(t): t for s in specs if s
                 for t in (index.launch_template_of(s, r.scope),) if t is not None}
        if found:
            user = (capacity_owner(r, index) or r) if owner else r
            for key in found:
                out.setdefault(key, []).append(user)

    for group in index.of_kind("autoscaling.group"):
        add((dig(group.attrs, "MixedInstancesPolicy.LaunchTemplate."
                              "LaunchTemplateSpecification"), group.get("LaunchTemplate")),
            group, owner=True)
    for ng in index.of_kind("eks.nodegroup"):
        spec = ng.get("LaunchTemplate")
        if isinstance(spec, dict):
            add(({"LaunchTemplateId": spec.get("Id"), "LaunchTemplateName": spec.get("Name")},),
                ng, owner=False)
    for env in index.of_kind("batch.compute_environment"):
        add((dig(env.attrs, "ComputeResources.LaunchTemplate"),), env, owner=False)
    for instance in index.of_kind("ec2.instance"):
        add((instance.get("LaunchTemplate"),), instance, owner=True)
    return out


def _takes_its_market(user: Resource, index: ResourceIndex) -> bool:
    """Whether a template's user is priced on the template (its spot exposure counts the
    user's capacity), not on spot settings of its own (its own money, about its own capacity;
    see ``consumer_capacity`` in scanner.compute.extractors.launch_template)."""
    from scanner.compute import views

    view = index.memo("overlap_views", lambda: views(index)).of(user)
    # its own offers, when known; offers not known keep it (never counted twice)
    return view is None or not (isinstance(view.purchase.spot, tuple) and view.purchase.spot)


def capacity_of(resource: Resource, index: ResourceIndex) -> tuple[str, ...]:
    """The capacity keys of the money found on ``resource``."""
    if resource.kind in ("ec2.instance", "autoscaling.group"):
        from scanner.compute.ownership import capacity_owner

        return (_key(capacity_owner(resource, index) or resource),)
    if resource.kind == "ec2.launch_template":
        users = [u for u in _template_users(resource, index) if _takes_its_market(u, index)]
        return tuple(sorted({_key(u) for u in users})) or (_key(resource),)
    return (_key(resource),)


def with_capacity(finding: Finding, resource: Resource, index: ResourceIndex) -> Finding:
    if finding.savings is None:
        return finding
    savings = replace(finding.savings, capacity=capacity_of(resource, index))
    return replace(finding, savings=savings)


def _keys(f: dict[str, Any]) -> list[str]:
    keys = (f.get("savings") or {}).get("capacity")
    if isinstance(keys, list) and keys:
        return [str(k) for k in keys]
    res = f.get("resource") or {}
    return [f"{res.get('account') or ''}/{res.get('region') or ''}/{res.get('kind')}/"
            f"{res.get('id')}"]


def money_class(savings: dict[str, Any]) -> str:
    cls = savings.get("class")
    if cls in CLASSES:
        return str(cls)
    return "exposure" if savings.get("kind") == "overspend_cap" else "saving"


def totals(findings: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The two totals of FAIL findings (as report dicts), each capacity counted once per class;
    marks the findings left out with ``savings.counted = false`` (and clears stale marks)."""
    amounts: dict[str, float] = dict.fromkeys(CLASSES, 0.0)
    left_out = 0
    ranked = []
    for f in findings:
        sav = f.get("savings")
        if not isinstance(sav, dict):
            continue
        sav.pop("counted", None)
        if f.get("status") == "FAIL":
            ranked.append(f)
    ranked.sort(key=lambda f: (-float(f["savings"].get("usd_month") or 0), str(f.get("id"))))
    seen: dict[str, set[str]] = {c: set() for c in CLASSES}
    for f in ranked:
        sav = f["savings"]
        cls = money_class(sav)
        keys = _keys(f)
        if any(k in seen[cls] for k in keys):
            sav["counted"] = False
            left_out += 1
            continue
        seen[cls].update(keys)
        amounts[cls] += float(sav.get("usd_month") or 0)
    return {"savings_usd_month": round(amounts["saving"], 2),
            "exposure_usd_month": round(amounts["exposure"], 2),
            "overlapping_not_counted": left_out}
