"""The network: VPCs, subnets, route tables and routes, internet gateways, VPC endpoints."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scanner.model import Ref, Unknown
from scanner.sources.terraform.translate.coerce import Attrs, _blocks, _pairs, _put


def _vpc(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (
        ("cidr_block", "CidrBlock"),
        ("instance_tenancy", "InstanceTenancy"),
        ("enable_dns_support", "EnableDnsSupport"),
        ("enable_dns_hostnames", "EnableDnsHostnames"),
        ("default_route_table_id", "DefaultRouteTableId"),
        ("main_route_table_id", "MainRouteTableId"),
    ))
    return "ec2.vpc", a, None, ()


def _subnet(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (
        ("vpc_id", "VpcId"),
        ("cidr_block", "CidrBlock"),
        ("availability_zone", "AvailabilityZone"),
        ("availability_zone_id", "AvailabilityZoneId"),
        ("map_public_ip_on_launch", "MapPublicIpOnLaunch"),
    ))
    return "ec2.subnet", a, None, ()


_ROUTE = (
    ("cidr_block", "DestinationCidrBlock"),
    ("destination_cidr_block", "DestinationCidrBlock"),
    ("ipv6_cidr_block", "DestinationIpv6CidrBlock"),
    ("destination_ipv6_cidr_block", "DestinationIpv6CidrBlock"),
    ("destination_prefix_list_id", "DestinationPrefixListId"),
    ("gateway_id", "GatewayId"),
    ("nat_gateway_id", "NatGatewayId"),
    ("transit_gateway_id", "TransitGatewayId"),
    ("vpc_endpoint_id", "VpcEndpointId"),
    ("network_interface_id", "NetworkInterfaceId"),
    ("vpc_peering_connection_id", "VpcPeeringConnectionId"),
    ("egress_only_gateway_id", "EgressOnlyInternetGatewayId"),
    ("carrier_gateway_id", "CarrierGatewayId"),
    ("local_gateway_id", "LocalGatewayId"),
    ("core_network_arn", "CoreNetworkArn"),
)


def _routes(value: Any) -> Any:
    blocks = _blocks(value)
    if blocks is None or isinstance(blocks, Unknown):
        return blocks
    return [b if isinstance(b, Unknown) else _pairs({}, b, _ROUTE) for b in blocks]


def _route_table(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (("vpc_id", "VpcId"),))
    _put(a, "Routes", _routes(v.get("route")))
    return "ec2.route_table", a, None, ()


def _default_route_table(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (("vpc_id", "VpcId"),))
    _put(a, "Routes", _routes(v.get("route")))
    a["Main"] = True
    table = v.get("default_route_table_id")
    if isinstance(table, Ref) and "VpcId" not in a:  # aws_vpc.x.default_route_table_id
        a["VpcId"] = Ref(table.target, "id")
    aliases = (table,) if isinstance(table, str) and table else ()
    return "ec2.route_table", a, None, aliases


def _route(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (("route_table_id", "RouteTableId"), *_ROUTE))
    return "ec2.route", a, None, ()


def _route_table_association(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (("route_table_id", "RouteTableId"),
                       ("subnet_id", "SubnetId"),
                       ("gateway_id", "GatewayId")))
    return "ec2.route_table_association", a, None, ()


def _main_route_table_association(
        v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (("vpc_id", "VpcId"), ("route_table_id", "RouteTableId")))
    return "ec2.main_route_table_association", a, None, ()


def _internet_gateway(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    return "ec2.internet_gateway", _pairs({}, v, (("vpc_id", "VpcId"),)), None, ()


def _internet_gateway_attachment(
        v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (("vpc_id", "VpcId"),
                       ("internet_gateway_id", "InternetGatewayId")))
    return "ec2.gateway_attachment", a, None, ()


def _vpc_endpoint(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (
        ("vpc_id", "VpcId"),
        ("service_name", "ServiceName"),
        ("vpc_endpoint_type", "VpcEndpointType"),
        ("route_table_ids", "RouteTableIds"),
        ("subnet_ids", "SubnetIds"),
        ("security_group_ids", "SecurityGroupIds"),
        ("private_dns_enabled", "PrivateDnsEnabled"),
        ("policy", "PolicyDocument"),
    ))
    return "ec2.vpc_endpoint", a, None, ()


def _vpc_endpoint_route_table_association(
        v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (("vpc_endpoint_id", "VpcEndpointId"),
                       ("route_table_id", "RouteTableId")))
    return "ec2.vpc_endpoint_route_table_association", a, None, ()


def _vpc_endpoint_policy(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (("vpc_endpoint_id", "VpcEndpointId"),
                       ("policy", "PolicyDocument")))
    return "ec2.vpc_endpoint_policy", a, None, ()
