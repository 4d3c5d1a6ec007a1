"""Auto Scaling groups: the group, its mixed instances policy and its ``tag`` blocks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scanner.model import Unknown
from scanner.sources.terraform.translate.coerce import (
    Attrs,
    _blocks,
    _is_map,
    _one,
    _pairs,
    _price,
    _put,
    _s,
)
from scanner.sources.terraform.translate.instances import (
    _capacity_reservation,
    _instance_requirements,
    _lt_spec,
)
from scanner.sources.terraform.translate.scaling import _lifecycle_hooks

_DISTRIBUTION = (
    ("on_demand_allocation_strategy", "OnDemandAllocationStrategy"),
    ("on_demand_base_capacity", "OnDemandBaseCapacity"),
    ("on_demand_percentage_above_base_capacity", "OnDemandPercentageAboveBaseCapacity"),
    ("spot_allocation_strategy", "SpotAllocationStrategy"),
    ("spot_instance_pools", "SpotInstancePools"),
)


def _mixed_policy(value: Any) -> Any:
    block = _one(value)
    if block is None or isinstance(block, Unknown):
        return block
    out: Attrs = {}
    dist = _one(block.get("instances_distribution"))
    if isinstance(dist, Unknown):
        out["InstancesDistribution"] = dist
    elif dist is not None:
        d = _pairs({}, dist, _DISTRIBUTION)
        if d.get("SpotInstancePools") in (0, "0"):  # the provider's "unset"
            del d["SpotInstancePools"]
        max_price = dist.get("spot_max_price")
        if max_price is not None:  # "" kept: AWS's "cap at on-demand", set explicitly
            d["SpotMaxPrice"] = "" if max_price == "" else _price(max_price)
        out["InstancesDistribution"] = d
    lt = _one(block.get("launch_template"))
    if isinstance(lt, Unknown):
        out["LaunchTemplate"] = lt
    elif lt is not None:
        lt_out: Attrs = {}
        _put(lt_out, "LaunchTemplateSpecification",
             _lt_spec(lt.get("launch_template_specification")))
        overrides = _blocks(lt.get("override"))
        if isinstance(overrides, Unknown):
            lt_out["Overrides"] = overrides
        elif overrides:
            rows: list[Any] = []
            for o in overrides:
                if isinstance(o, Unknown):
                    rows.append(o)
                    continue
                row = _pairs({}, o, (("instance_type", "InstanceType"),
                                     ("weighted_capacity", "WeightedCapacity")))
                _put(row, "LaunchTemplateSpecification",
                     _lt_spec(o.get("launch_template_specification")))
                _put(row, "InstanceRequirements",
                     _instance_requirements(o.get("instance_requirements")))
                rows.append(row)
            lt_out["Overrides"] = rows
        out["LaunchTemplate"] = lt_out
    return out or None


def _asg_tags(v: Mapping[str, Any]) -> dict[str, str]:
    tags: dict[str, str] = {}
    blocks = v.get("tag")
    for block in blocks if isinstance(blocks, list | tuple) else ():
        if _is_map(block):
            key, value = block.get("key"), block.get("value")
            if isinstance(key, str) and isinstance(value, str):
                tags[key] = value
    return tags


def _autoscaling_group(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (
        ("min_size", "MinSize"),
        ("max_size", "MaxSize"),
        ("desired_capacity", "DesiredCapacity"),
        ("vpc_zone_identifier", "VPCZoneIdentifier"),
        ("availability_zones", "AvailabilityZones"),
        ("launch_configuration", "LaunchConfigurationName"),
        ("capacity_rebalance", "CapacityRebalance"),
        ("health_check_type", "HealthCheckType"),
        ("target_group_arns", "TargetGroupARNs"),
        ("placement_group", "PlacementGroup"),
    ))
    _put(a, "LaunchTemplate", _lt_spec(v.get("launch_template")))
    _put(a, "MixedInstancesPolicy", _mixed_policy(v.get("mixed_instances_policy")))
    _put(a, "CapacityReservationSpecification", _capacity_reservation(v, group=True))
    _put(a, "LifecycleHookSpecificationList",
         _lifecycle_hooks(v.get("initial_lifecycle_hook")))  # see the scaling block below
    name = _s(v.get("name"))
    _put(a, "AutoScalingGroupName", name)
    return "autoscaling.group", a, name, ()
