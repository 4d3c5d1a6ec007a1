"""Networking: VPCs, subnets, route tables (associations, main table), internet gateways, VPC
endpoints with their policy documents parsed. One paginated walk per call per region; the joins
(subnet → route table → endpoint) happen in memory in scanner.model.graph."""

from __future__ import annotations

import json
from typing import Any

from scanner.aws.collectors.base import Call, Collector, RegionContext
from scanner.aws.normalize import ec2_arn, make, tags_of, without
from scanner.model import Resource, Unknown

VPC = "ec2.vpc"
SUBNET = "ec2.subnet"
ROUTE_TABLE = "ec2.route_table"
INTERNET_GATEWAY = "ec2.internet_gateway"
VPC_ENDPOINT = "ec2.vpc_endpoint"


def run(ctx: RegionContext) -> None:
    ctx.lists(
        "ec2",
        ("DescribeVpcs", "Vpcs", vpc),
        ("DescribeSubnets", "Subnets", subnet),
        ("DescribeRouteTables", "RouteTables", route_table),
        ("DescribeInternetGateways", "InternetGateways", internet_gateway),
        ("DescribeVpcEndpoints", "VpcEndpoints", endpoint),
    )


def vpc(ctx: RegionContext, item: dict[str, Any]) -> Resource:
    vid = str(item["VpcId"])
    return make(
        ctx,
        VPC,
        vid,
        without(item, "Tags"),
        tags=tags_of(item.get("Tags")),
        arn=ec2_arn(ctx, "vpc", vid),
    )


def subnet(ctx: RegionContext, item: dict[str, Any]) -> Resource:
    sid = str(item["SubnetId"])
    attrs = without(item, "Tags")
    attrs["MapPublicIpOnLaunch"] = bool(item.get("MapPublicIpOnLaunch", False))
    return make(
        ctx,
        SUBNET,
        sid,
        attrs,
        tags=tags_of(item.get("Tags")),
        arn=item.get("SubnetArn") or ec2_arn(ctx, "subnet", sid),
    )


def route_table(ctx: RegionContext, item: dict[str, Any]) -> Resource:
    rid = str(item["RouteTableId"])
    attrs = without(item, "Tags")
    associations = [dict(a) for a in item.get("Associations") or []]
    for a in associations:
        a["Main"] = bool(a.get("Main", False))
    attrs["Associations"] = associations
    attrs["Routes"] = [dict(r) for r in item.get("Routes") or []]
    attrs["Main"] = any(a["Main"] for a in associations)
    return make(
        ctx,
        ROUTE_TABLE,
        rid,
        attrs,
        tags=tags_of(item.get("Tags")),
        arn=ec2_arn(ctx, "route-table", rid),
    )


def internet_gateway(ctx: RegionContext, item: dict[str, Any]) -> Resource:
    gid = str(item["InternetGatewayId"])
    attrs = without(item, "Tags")
    attached = [a.get("VpcId") for a in item.get("Attachments") or [] if a.get("VpcId")]
    if attached:
        attrs["VpcId"] = attached[0]
    return make(
        ctx,
        INTERNET_GATEWAY,
        gid,
        attrs,
        tags=tags_of(item.get("Tags")),
        arn=ec2_arn(ctx, "internet-gateway", gid),
    )


def endpoint(ctx: RegionContext, item: dict[str, Any]) -> Resource:
    eid = str(item["VpcEndpointId"])
    attrs = without(item, "Tags")
    attrs["RouteTableIds"] = list(item.get("RouteTableIds") or [])
    document = item.get("PolicyDocument")
    if isinstance(document, str) and document.strip():
        try:
            attrs["PolicyDocument"] = json.loads(document)
        except ValueError as exc:
            attrs["PolicyDocument"] = Unknown(f"the endpoint policy is not valid JSON: {exc}")
            ctx.notice(eid, f"endpoint policy document is not valid JSON ({exc}); left UNKNOWN")
    elif not document:
        attrs.pop("PolicyDocument", None)
    return make(
        ctx,
        VPC_ENDPOINT,
        eid,
        attrs,
        tags=tags_of(item.get("Tags")),
        arn=ec2_arn(ctx, "vpc-endpoint", eid),
    )


COLLECTOR = Collector(
    name="vpc",
    calls=(
        Call("ec2", "DescribeVpcs", (VPC,)),
        Call("ec2", "DescribeSubnets", (SUBNET,)),
        Call("ec2", "DescribeRouteTables", (ROUTE_TABLE,)),
        Call("ec2", "DescribeInternetGateways", (INTERNET_GATEWAY,)),
        Call("ec2", "DescribeVpcEndpoints", (VPC_ENDPOINT,)),
    ),
    run=run,
)
