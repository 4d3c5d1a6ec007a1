"""Amazon SageMaker HyperPod: clusters (ListClusters, then DescribeCluster per cluster, a few
at a time). The answer is already PascalCase. The cluster's id is its name.

Tags are not read (that would be a ListTags call per cluster): a ``gpuaudit:skip`` tag on a
cluster does not mute it live; the config's mute list does.
"""

from __future__ import annotations

from typing import Any

from scanner.aws.collectors.base import Call, Collector, RegionContext
from scanner.aws.collectors.eks import each
from scanner.aws.normalize import make, without
from scanner.model import Resource

CLUSTER = "sagemaker.cluster"


def run(ctx: RegionContext) -> None:
    summaries = ctx.list("sagemaker", "ListClusters", "ClusterSummaries")
    if summaries is None:
        return
    names = [s["ClusterName"] for s in summaries
             if isinstance(s, dict) and isinstance(s.get("ClusterName"), str)]
    for answer in each(names, lambda n: ctx.call("sagemaker", "DescribeCluster",
                                                 ClusterName=n)):
        if isinstance(answer, dict) and answer.get("ClusterName"):
            ctx.add(cluster(ctx, answer))


def cluster(ctx: RegionContext, item: dict[str, Any]) -> Resource:
    attrs = without(item, "ResponseMetadata", "CreationTime", "FailureMessage")
    name = str(item["ClusterName"])
    return make(ctx, CLUSTER, name, attrs, name=name, arn=item.get("ClusterArn"))


COLLECTOR = Collector(
    name="sagemaker",
    calls=(
        Call("sagemaker", "ListClusters", (CLUSTER,)),
        Call("sagemaker", "DescribeCluster", (CLUSTER,)),
    ),
    run=run,
)
