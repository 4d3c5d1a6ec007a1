"""Spot instance requests, spot fleet requests and EC2 fleets."""

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
    _put,
    _sub,
)
from scanner.sources.terraform.translate.instances import (
    _instance_devices,
    _instance_like,
    _lt_spec,
    _public_ip_interface,
)


def _spot_instance_request(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    spec = _instance_like(v)
    _public_ip_interface(spec)
    a = _pairs({}, v, (
        ("spot_price", "SpotPrice"),
        ("spot_type", "Type"),
        ("instance_interruption_behavior", "InstanceInterruptionBehavior"),
        ("valid_until", "ValidUntil"),
        ("launch_group", "LaunchGroup"),
        ("block_duration_minutes", "BlockDurationMinutes"),
    ))
    a["InstanceCount"] = 1  # one terraform resource is one instance request
    a["LaunchSpecification"] = spec
    return "ec2.spot_request", a, None, ()


def _spot_fleet_spec(b: Any) -> Any:
    if isinstance(b, Unknown):
        return b
    spec = _pairs({}, b, (
        ("instance_type", "InstanceType"),
        ("ami", "ImageId"),
        ("subnet_id", "SubnetId"),
        ("availability_zone", "AvailabilityZone"),
        ("spot_price", "SpotPrice"),
        ("weighted_capacity", "WeightedCapacity"),
        ("associate_public_ip_address", "AssociatePublicIpAddress"),
        ("key_name", "KeyName"),
        ("iam_instance_profile", "IamInstanceProfile"),
        ("vpc_security_group_ids", "SecurityGroupIds"),
        ("ebs_optimized", "EbsOptimized"),
    ))
    _put(spec, "BlockDeviceMappings", _instance_devices(b))
    _public_ip_interface(spec)
    return spec


def _template_configs(value: Any, overrides_key: str, price_key: tuple[str, str]) -> Any:
    blocks = _blocks(value)
    if blocks is None or isinstance(blocks, Unknown):
        return blocks
    out: list[Any] = []
    for cfg in blocks:
        if isinstance(cfg, Unknown):
            out.append(cfg)
            continue
        row: Attrs = {}
        _put(row, "LaunchTemplateSpecification", _lt_spec(cfg.get("launch_template_specification")))
        overrides = _blocks(cfg.get(overrides_key))
        if isinstance(overrides, Unknown):
            row["Overrides"] = overrides
        elif overrides:
            row["Overrides"] = [o if isinstance(o, Unknown) else _pairs({}, o, (
                ("instance_type", "InstanceType"),
                ("subnet_id", "SubnetId"),
                ("availability_zone", "AvailabilityZone"),
                (price_key[0], price_key[1]),
                ("weighted_capacity", "WeightedCapacity"),
                ("priority", "Priority"),
            )) for o in overrides]
        out.append(row)
    return out or None


def _spot_fleet_request(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    cfg = _pairs({}, v, (
        ("spot_price", "SpotPrice"),
        ("target_capacity", "TargetCapacity"),
        ("on_demand_target_capacity", "OnDemandTargetCapacity"),
        ("allocation_strategy", "AllocationStrategy"),
        ("on_demand_allocation_strategy", "OnDemandAllocationStrategy"),
        ("fleet_type", "Type"),
        ("iam_fleet_role", "IamFleetRole"),
        ("instance_pools_to_use_count", "InstancePoolsToUseCount"),
        ("instance_interruption_behaviour", "InstanceInterruptionBehavior"),
        ("valid_until", "ValidUntil"),
    ))
    specs = _blocks(v.get("launch_specification"))
    if isinstance(specs, Unknown):
        cfg["LaunchSpecifications"] = specs
    elif specs:
        cfg["LaunchSpecifications"] = [_spot_fleet_spec(b) for b in specs]
    _put(cfg, "LaunchTemplateConfigs", _template_configs(v.get("launch_template_config"),
                                                         "overrides", ("spot_price", "SpotPrice")))
    _put(cfg, "SpotMaintenanceStrategies", _maintenance(v.get("spot_maintenance_strategies")))
    return "ec2.spot_fleet", {"SpotFleetRequestConfig": cfg}, None, ()


def _ec2_fleet(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (("type", "Type"),))
    _put(a, "TargetCapacitySpecification", _sub(v.get("target_capacity_specification"), (
        ("total_target_capacity", "TotalTargetCapacity"),
        ("on_demand_target_capacity", "OnDemandTargetCapacity"),
        ("spot_target_capacity", "SpotTargetCapacity"),
        ("default_target_capacity_type", "DefaultTargetCapacityType"),
        ("target_capacity_unit_type", "TargetCapacityUnitType"))))
    _put(a, "SpotOptions", _sub(v.get("spot_options"), (
        ("allocation_strategy", "AllocationStrategy"),
        ("instance_interruption_behavior", "InstanceInterruptionBehavior"),
        ("instance_pools_to_use_count", "InstancePoolsToUseCount"))))
    spot_options = _one(v.get("spot_options"))
    if isinstance(a.get("SpotOptions"), dict) and _is_map(spot_options):
        _put(a["SpotOptions"], "MaintenanceStrategies",
             _maintenance(spot_options.get("maintenance_strategies")))
    _put(a, "OnDemandOptions", _sub(v.get("on_demand_options"), (
        ("allocation_strategy", "AllocationStrategy"),)))
    _put(a, "LaunchTemplateConfigs", _template_configs(v.get("launch_template_config"),
                                                       "override", ("max_price", "MaxPrice")))
    return "ec2.fleet", a, None, ()

def _maintenance(value: Any) -> Any:
    """A fleet's ``spot_maintenance_strategies`` / ``maintenance_strategies`` block."""
    block = _one(value)
    if block is None or isinstance(block, Unknown):
        return block
    rebalance = _sub(block.get("capacity_rebalance"), (
        ("replacement_strategy", "ReplacementStrategy"), ("termination_delay", "TerminationDelay")))
    return {"CapacityRebalance": rebalance} if rebalance is not None else None
