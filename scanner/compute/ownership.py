"""Capacity that one resource declares and another runs: an EKS managed node group and the Auto
Scaling group EKS creates for it (live, both are read; the node group is where the capacity is
configured and judged, the group only runs it). One place says who owns what, for the compute
views (an owned group's view is empty, its members are the node group's) and for the money
totals (``scanner.pricing.overlap``: an amount on the group or a member is the node group's).

Live only: EKS names the group in the node group's ``Resources.AutoScalingGroups`` and tags it
(and the nodes) ``eks:nodegroup-name`` / ``eks:cluster-name``. A declared Auto Scaling group
(IaC) is the user's own, whatever its tags say.
"""

from __future__ import annotations

from typing import Any

from scanner.model import Resource
from scanner.model.graph import ResourceIndex

NODEGROUP = "eks.nodegroup"
GROUP = "autoscaling.group"
INSTANCE = "ec2.instance"
EKS_NODEGROUP_TAG = "eks:nodegroup-name"
EKS_CLUSTER_TAG = "eks:cluster-name"


def _nodegroups(index: ResourceIndex) -> dict[str, Any]:
    def build() -> dict[str, Any]:
        by_group: dict[tuple[str, str], Resource] = {}
        by_name: dict[tuple[str, str, str], Resource] = {}
        for ng in index.of_kind(NODEGROUP):
            if ng.declared:
                continue
            resources = ng.get("Resources")
            groups = resources.get("AutoScalingGroups") if isinstance(resources, dict) else None
            for g in groups if isinstance(groups, list) else ():
                name = g.get("Name") if isinstance(g, dict) else None
                if isinstance(name, str) and name:
                    by_group.setdefault((ng.scope, name), ng)
            cluster, name = ng.get("ClusterName"), ng.get("NodegroupName") or ng.name
            if isinstance(name, str):
                by_name.setdefault((ng.scope, str(cluster or ""), name), ng)
        return {"by_group": by_group, "by_name": by_name}

    return index.memo("ownership:nodegroups", build)  # type: ignore[no-any-return]


def _tagged_nodegroup(r: Resource, index: ResourceIndex) -> Resource | str | None:
    name = r.tags.get(EKS_NODEGROUP_TAG)
    if not name:
        return None
    cluster = r.tags.get(EKS_CLUSTER_TAG, "")
    found = _nodegroups(index)["by_name"].get((r.scope, cluster, name))
    return found if found is not None else f"EKS node group {cluster}/{name}".replace(" /", " ")


def owner_of_group(group: Resource, index: ResourceIndex) -> Resource | str | None:
    """The EKS node group that owns a live Auto Scaling group: the node group itself when it
    was read, else a description of it (the group is EKS's all the same); None: the user's."""
    if group.declared:
        return None
    by_group = _nodegroups(index)["by_group"]
    for name in dict.fromkeys(n for n in (group.id, group.name) if n):
        hit = by_group.get((group.scope, name))
        if hit is not None:
            return hit
    return _tagged_nodegroup(group, index)


def groups_of(nodegroup: Resource, index: ResourceIndex) -> list[Resource]:
    """The Auto Scaling groups (read, in its scope) that run a live node group's nodes."""
    out: list[Resource] = []
    resources = nodegroup.get("Resources")
    groups = resources.get("AutoScalingGroups") if isinstance(resources, dict) else None
    for g in groups if isinstance(groups, list) else ():
        hit = index.resolve(g.get("Name") if isinstance(g, dict) else None, nodegroup.scope,
                            GROUP)
        if hit is not None and hit not in out:
            out.append(hit)
    return out


def tagged_members(nodegroup: Resource, index: ResourceIndex) -> list[str]:
    """Instance ids that EKS tagged as this live node group's nodes."""
    def build() -> dict[tuple[str, str, str], list[str]]:
        out: dict[tuple[str, str, str], list[str]] = {}
        for inst in index.of_kind(INSTANCE):
            name = inst.tags.get(EKS_NODEGROUP_TAG)
            if name and not inst.declared:
                key = (inst.scope, inst.tags.get(EKS_CLUSTER_TAG, ""), name)
                out.setdefault(key, []).append(inst.id)
        return out

    if nodegroup.declared:
        return []
    members = index.memo("ownership:tagged_members", build)
    name = nodegroup.get("NodegroupName") or nodegroup.name
    return list(members.get((nodegroup.scope, str(nodegroup.get("ClusterName") or ""),
                             str(name)), []))


def capacity_owner(resource: Resource, index: ResourceIndex) -> Resource | None:
    """Where the capacity of ``resource`` is judged and priced, when elsewhere: a member
    instance's group (or that group's node group), an owned group's node group."""
    if resource.kind == GROUP:
        owner = owner_of_group(resource, index)
        return owner if isinstance(owner, Resource) else None
    if resource.kind != INSTANCE:
        return None
    name = resource.get("AutoScalingGroupName")
    group = index.resolve(name, resource.scope, GROUP) if isinstance(name, str) and name \
        else None
    if group is not None:
        return capacity_owner(group, index) or group
    if resource.declared:
        return None
    tagged = _tagged_nodegroup(resource, index)
    return tagged if isinstance(tagged, Resource) else None
