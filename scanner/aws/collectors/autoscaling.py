"""Auto Scaling: groups (mixed instances, launch template refs), launch configurations, policies.

Live ``VPCZoneIdentifier`` is a comma-separated string; the model wants a list. Counts become ints
(``WeightedCapacity`` is a string in the API). Launch configuration user data is never kept.
"""

from __future__ import annotations

from typing import Any

from scanner.aws.collectors.base import Call, Collector, RegionContext
from scanner.aws.normalize import make, tags_of, to_int, without
from scanner.model import Resource

GROUP = "autoscaling.group"
LAUNCH_CONFIGURATION = "autoscaling.launch_configuration"
SCALING_POLICY = "autoscaling.scaling_policy"

_DISTRIBUTION_INTS = ("OnDemandBaseCapacity", "OnDemandPercentageAboveBaseCapacity")


def run(ctx: RegionContext) -> None:
    ctx.lists(
        "autoscaling",
        ("DescribeAutoScalingGroups", "AutoScalingGroups", group),
        ("DescribeLaunchConfigurations", "LaunchConfigurations", launch_configuration),
        ("DescribePolicies", "ScalingPolicies", scaling_policy),
    )


def group(ctx: RegionContext, item: dict[str, Any]) -> Resource:
    name = str(item["AutoScalingGroupName"])
    attrs = without(item, "Tags")
    for key in ("MinSize", "MaxSize", "DesiredCapacity", "DefaultCooldown"):
        if key in attrs:
            attrs[key] = to_int(attrs[key])
    zones = item.get("VPCZoneIdentifier")
    attrs["VPCZoneIdentifier"] = [z.strip() for z in str(zones or "").split(",") if z.strip()]
    if isinstance(item.get("MixedInstancesPolicy"), dict):
        attrs["MixedInstancesPolicy"] = mixed_instances_policy(item["MixedInstancesPolicy"])
    attrs["CapacityRebalance"] = bool(item.get("CapacityRebalance", False))
    attrs["Instances"] = [
        {
            k: i.get(k)
            for k in (
                "InstanceId",
                "InstanceType",
                "AvailabilityZone",
                "LifecycleState",
                "HealthStatus",
                "LaunchTemplate",
                "LaunchConfigurationName",
                "WeightedCapacity",
            )
            if k in i
        }
        for i in item.get("Instances") or []
    ]
    return make(
        ctx,
        GROUP,
        name,
        attrs,
        tags=tags_of(item.get("Tags")),
        name=name,
        arn=item.get("AutoScalingGroupARN"),
    )


def mixed_instances_policy(policy: dict[str, Any]) -> dict[str, Any]:
    out = dict(policy)
    lt = dict(policy.get("LaunchTemplate") or {})
    if "Overrides" in lt:
        overrides = []
        for o in lt.get("Overrides") or []:
            o = dict(o)
            if "WeightedCapacity" in o:
                o["WeightedCapacity"] = to_int(o["WeightedCapacity"])
            overrides.append(o)
        lt["Overrides"] = overrides
    if lt:
        out["LaunchTemplate"] = lt
    dist = dict(policy.get("InstancesDistribution") or {})
    for key in _DISTRIBUTION_INTS:
        if key in dist:
            dist[key] = to_int(dist[key])
    if dist:
        out["InstancesDistribution"] = dist
    return out


def launch_configuration(ctx: RegionContext, item: dict[str, Any]) -> Resource:
    name = str(item["LaunchConfigurationName"])
    attrs = without(item, "UserData")
    if "AssociatePublicIpAddress" in attrs:
        attrs["AssociatePublicIpAddress"] = bool(attrs["AssociatePublicIpAddress"])
    return make(
        ctx, LAUNCH_CONFIGURATION, name, attrs, name=name, arn=item.get("LaunchConfigurationARN")
    )


def scaling_policy(ctx: RegionContext, item: dict[str, Any]) -> Resource:
    group_name = str(item.get("AutoScalingGroupName") or "")
    name = str(item["PolicyName"])
    attrs = dict(item)
    return make(
        ctx, SCALING_POLICY, f"{group_name}/{name}", attrs, name=name, arn=item.get("PolicyARN")
    )


COLLECTOR = Collector(
    name="autoscaling",
    calls=(
        Call("autoscaling", "DescribeAutoScalingGroups", (GROUP,)),
        Call("autoscaling", "DescribeLaunchConfigurations", (LAUNCH_CONFIGURATION,)),
        Call("autoscaling", "DescribePolicies", (SCALING_POLICY,)),
    ),
    run=run,
)
