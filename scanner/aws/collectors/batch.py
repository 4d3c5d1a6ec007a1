"""AWS Batch: compute environments (one paginated DescribeComputeEnvironments walk).

The answer is camelCase; the model spells it as CloudFormation does (``ComputeResources``,
``MaxvCpus``, ``BidPercentage``). The compute environment's id is its name.
"""

from __future__ import annotations

from typing import Any

from scanner.aws.collectors.base import Call, Collector, RegionContext
from scanner.aws.normalize import make, pascal_keys, tags_of, without
from scanner.model import Resource

COMPUTE_ENVIRONMENT = "batch.compute_environment"


def run(ctx: RegionContext) -> None:
    ctx.lists("batch", ("DescribeComputeEnvironments", "computeEnvironments",
                        compute_environment))


def compute_environment(ctx: RegionContext, item: dict[str, Any]) -> Resource:
    attrs: dict[str, Any] = pascal_keys(without(item, "tags"))
    resources = attrs.get("ComputeResources")
    if isinstance(resources, dict):
        resources.pop("Tags", None)  # the instances' tags, not the environment's
    name = str(item.get("computeEnvironmentName") or "")
    return make(ctx, COMPUTE_ENVIRONMENT, name or str(item.get("computeEnvironmentArn")), attrs,
                tags=tags_of(item.get("tags")), name=name or None,
                arn=item.get("computeEnvironmentArn"))


COLLECTOR = Collector(
    name="batch",
    calls=(Call("batch", "DescribeComputeEnvironments", (COMPUTE_ENVIRONMENT,)),),
    run=run,
)
