"""Auto Scaling: groups (mixed instances, launch template refs), launch configurations, policies,
and lifecycle hooks (DescribeLifecycleHooks per group, a few at a time, only when they are needed).

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
LIFECYCLE_HOOK = "autoscaling.lifecycle_hook"

_DISTRIBUTION_INTS = ("OnDemandBaseCapacity", "OnDemandPercentageAboveBaseCapacity")


def run(ctx: RegionContext) -> None:
    groups, _configs, _policies = ctx.lists(
        "autoscaling",
        ("DescribeAutoScalingGroups", "AutoScalingGroups", group),
        ("DescribeLaunchConfigurations", "LaunchConfigurations", launch_configuration),
        ("DescribePolicies", "ScalingPolicies", scaling_policy),
    )
    if ctx.wants(LIFECYCLE_HOOK):
        lifecycle_hooks(ctx, groups)


def lifecycle_hooks(ctx: RegionContext, groups: list[dict[str, Any]] | None) -> None:
    """DescribeLifecycleHooks takes one group: one call per group (``AT_ONCE`` in flight)."""
    from scanner.aws.collectors.eks import each

    if groups is None:  # the groups could not be read: neither can their hooks
        why = next((e.reason for e in ctx.result.errors
                    if e.path.endswith("autoscaling:DescribeAutoScalingGroups")), "")
        ctx.record_failure("autoscaling:DescribeLifecycleHooks",
                           "not attempted: the Auto Scaling groups could not be read"
                           + (f" ({why})" if why else ""), (LIFECYCLE_HOOK,))
        ctx.settle(("autoscaling", "DescribeLifecycleHooks"))
        return
    names = [str(g["AutoScalingGroupName"]) for g in groups if g.get("AutoScalingGroupName")]
    answers = each(names, lambda n: ctx.call("autoscaling", "DescribeLifecycleHooks",
                                             AutoScalingGroupName=n))
    for answer in answers:
        for item in (answer or {}).get("LifecycleHooks") or []:
            if isinstance(item, dict) and item.get("LifecycleHookName"):
                ctx.add(lifecycle_hook(ctx, item))


def lifecycle_hook(ctx: RegionContext, item: dict[str, Any]) -> Resource:
    group_name = str(item.get("AutoScalingGroupName") or "")
    name = str(item["LifecycleHookName"])
    attrs = dict(item)
    if "HeartbeatTimeout" in attrs:
        attrs["HeartbeatTimeout"] = to_int(attrs["HeartbeatTimeout"])
    return make(ctx, LIFECYCLE_HOOK, f"{group_name}/{name}", attrs, name=name)


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
        # the hooks are read per group: without the groups there are none to read
        Call("autoscaling", "DescribeAutoScalingGroups", (GROUP, LIFECYCLE_HOOK)),
        Call("autoscaling", "DescribeLaunchConfigurations", (LAUNCH_CONFIGURATION,)),
        Call("autoscaling", "DescribePolicies", (SCALING_POLICY,)),
        Call("autoscaling", "DescribeLifecycleHooks", (LIFECYCLE_HOOK,)),
    ),
    run=run,
)
