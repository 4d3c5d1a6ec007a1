"""Amazon EKS: managed node groups (ListClusters, then ListNodegroups and DescribeNodegroup per
cluster and node group, a few at a time).

The answer is camelCase; the model spells it as CloudFormation does (``ScalingConfig``,
``InstanceTypes``, ``Resources.AutoScalingGroups[].Name``). The node group's id is
``CLUSTER/NODEGROUP``, its name the node group's name. The Auto Scaling group EKS runs it in is
read by the autoscaling collector and judged at the node group (scanner.compute.ownership).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from scanner.aws.collectors.base import Call, Collector, RegionContext
from scanner.aws.normalize import make, pascal_keys, tags_of, without
from scanner.model import Resource

NODEGROUP = "eks.nodegroup"
AT_ONCE = 4  # per-cluster and per-node-group calls in flight in one region

T = TypeVar("T")
R = TypeVar("R")


def each(items: Sequence[T], fn: Callable[[T], R]) -> list[R]:
    """``fn`` of every item, a few side by side, in order."""
    if len(items) <= 1:
        return [fn(i) for i in items]
    with ThreadPoolExecutor(max_workers=min(AT_ONCE, len(items))) as pool:
        return list(pool.map(fn, items))


def run(ctx: RegionContext) -> None:
    clusters = ctx.list("eks", "ListClusters", "clusters")
    if clusters is None:
        return
    names = [c for c in clusters if isinstance(c, str)]
    listed = each(names, lambda c: ctx.list("eks", "ListNodegroups", "nodegroups",
                                            clusterName=c))
    pairs = [(c, n) for c, ngs in zip(names, listed, strict=True) for n in ngs or ()
             if isinstance(n, str)]
    answers = each(pairs, lambda p: ctx.call("eks", "DescribeNodegroup", clusterName=p[0],
                                             nodegroupName=p[1]))
    for answer in answers:
        item = (answer or {}).get("nodegroup")
        if isinstance(item, dict):
            ctx.add(nodegroup(ctx, item))


def nodegroup(ctx: RegionContext, item: dict[str, Any]) -> Resource:
    attrs: dict[str, Any] = pascal_keys(without(item, "tags", "health", "createdAt",
                                                "modifiedAt"))
    name = str(item.get("nodegroupName") or "")
    cluster = str(item.get("clusterName") or "")
    return make(ctx, NODEGROUP, f"{cluster}/{name}", attrs, tags=tags_of(item.get("tags")),
                name=name or None, arn=item.get("nodegroupArn"))


COLLECTOR = Collector(
    name="eks",
    calls=(
        Call("eks", "ListClusters", (NODEGROUP,)),
        Call("eks", "ListNodegroups", (NODEGROUP,)),
        Call("eks", "DescribeNodegroup", (NODEGROUP,)),
    ),
    run=run,
)
