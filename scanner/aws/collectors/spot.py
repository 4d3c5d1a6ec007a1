"""Spot capacity outside Auto Scaling: spot instance requests, spot fleet requests, EC2 fleets.

Requests and fleets that no longer hold or seek capacity (cancelled, closed, failed, deleted)
are left out: they cost nothing and a finding on them would be stale. User data in launch
specifications is never kept.
"""

from __future__ import annotations

from typing import Any

from scanner.aws.collectors.base import Call, Collector, RegionContext
from scanner.aws.normalize import ec2_arn, make, tags_of, to_int, without
from scanner.model import Resource

SPOT_REQUEST = "ec2.spot_request"
SPOT_FLEET = "ec2.spot_fleet"
FLEET = "ec2.fleet"

CLOSED_REQUEST_STATES = frozenset({"cancelled", "closed", "failed"})
CLOSED_SPOT_FLEET_STATES = frozenset({"cancelled", "cancelled_terminating", "failed"})
CLOSED_FLEET_STATES = frozenset({"deleted", "deleted_terminating", "failed"})


def run(ctx: RegionContext) -> None:
    ctx.lists(
        "ec2",
        ("DescribeSpotInstanceRequests", "SpotInstanceRequests", _open_request),
        ("DescribeSpotFleetRequests", "SpotFleetRequestConfigs", _open_spot_fleet),
        ("DescribeFleets", "Fleets", _open_fleet),
    )


def _open_request(ctx: RegionContext, item: dict[str, Any]) -> Resource | None:
    return None if item.get("State") in CLOSED_REQUEST_STATES else spot_request(ctx, item)


def _open_spot_fleet(ctx: RegionContext, item: dict[str, Any]) -> Resource | None:
    closed = item.get("SpotFleetRequestState") in CLOSED_SPOT_FLEET_STATES
    return None if closed else spot_fleet(ctx, item)


def _open_fleet(ctx: RegionContext, item: dict[str, Any]) -> Resource | None:
    return None if item.get("FleetState") in CLOSED_FLEET_STATES else fleet(ctx, item)


def spot_request(ctx: RegionContext, item: dict[str, Any]) -> Resource:
    rid = str(item["SpotInstanceRequestId"])
    attrs = without(item, "Tags")
    attrs["InstanceCount"] = 1  # one request per instance once described
    attrs["LaunchSpecification"] = without(item.get("LaunchSpecification") or {}, "UserData")
    return make(
        ctx,
        SPOT_REQUEST,
        rid,
        attrs,
        tags=tags_of(item.get("Tags")),
        arn=ec2_arn(ctx, "spot-instances-request", rid),
    )


def spot_fleet(ctx: RegionContext, item: dict[str, Any]) -> Resource:
    rid = str(item["SpotFleetRequestId"])
    attrs = without(item, "Tags")
    config = dict(item.get("SpotFleetRequestConfig") or {})
    for key in ("TargetCapacity", "OnDemandTargetCapacity"):
        if key in config:
            config[key] = to_int(config[key])
    config["LaunchSpecifications"] = [
        _weighted(without(spec, "UserData")) for spec in config.get("LaunchSpecifications") or []
    ]
    config["LaunchTemplateConfigs"] = [
        _lt_config(c) for c in config.get("LaunchTemplateConfigs") or []
    ]
    attrs["SpotFleetRequestConfig"] = config
    return make(
        ctx,
        SPOT_FLEET,
        rid,
        attrs,
        tags=tags_of(item.get("Tags")),
        arn=ec2_arn(ctx, "spot-fleet-request", rid),
    )


def fleet(ctx: RegionContext, item: dict[str, Any]) -> Resource:
    rid = str(item["FleetId"])
    attrs = without(item, "Tags", "Instances", "Errors")
    spec = dict(item.get("TargetCapacitySpecification") or {})
    for key in ("TotalTargetCapacity", "OnDemandTargetCapacity", "SpotTargetCapacity"):
        if key in spec:
            spec[key] = to_int(spec[key])
    attrs["TargetCapacitySpecification"] = spec
    attrs["LaunchTemplateConfigs"] = [
        _lt_config(c) for c in item.get("LaunchTemplateConfigs") or []
    ]
    return make(
        ctx, FLEET, rid, attrs, tags=tags_of(item.get("Tags")), arn=ec2_arn(ctx, "fleet", rid)
    )


def _weighted(spec: dict[str, Any]) -> dict[str, Any]:
    if "WeightedCapacity" in spec:
        spec = dict(spec)
        spec["WeightedCapacity"] = to_int(spec["WeightedCapacity"])
    return spec


def _lt_config(config: dict[str, Any]) -> dict[str, Any]:
    out = dict(config)
    out["Overrides"] = [_weighted(dict(o)) for o in config.get("Overrides") or []]
    return out


COLLECTOR = Collector(
    name="spot",
    calls=(
        Call("ec2", "DescribeSpotInstanceRequests", (SPOT_REQUEST,)),
        Call("ec2", "DescribeSpotFleetRequests", (SPOT_FLEET,)),
        Call("ec2", "DescribeFleets", (FLEET,)),
    ),
    run=run,
)
