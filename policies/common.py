"""What several policies share: the kinds they judge (from the compute registry), the network
kinds they read, and how money and names are written in messages."""

from __future__ import annotations

from typing import Any

from scanner.catalog import HOURS_PER_MONTH
from scanner.compute import LAUNCHES, kinds_with
from scanner.compute.values import as_list, iter_dicts, to_int, to_price
from scanner.model import Ref, Resource

__all__ = ["COMPUTE_KINDS", "NETWORK_KINDS", "as_list", "count_text", "describe",
           "iter_dicts", "money", "monthly", "rate", "ref_text", "to_int", "to_price"]

# Every kind whose view names instance types (or a GPU requirement): compute.
COMPUTE_KINDS = kinds_with(LAUNCHES)
NETWORK_KINDS = ("ec2.vpc", "ec2.subnet", "ec2.route_table", "ec2.route",
                 "ec2.route_table_association", "ec2.main_route_table_association",
                 "ec2.internet_gateway", "ec2.gateway_attachment", "ec2.vpc_endpoint",
                 "ec2.vpc_endpoint_route_table_association", "ec2.vpc_endpoint_policy")
# What the VPC policies read of an observed (live) account, each exactly: a kind that could not
# be read there makes the policies that read it ERROR, and only those. Every one places GPU
# compute (the compute kinds, subnets, their VPC); then VPC-003 reads the endpoints, VPC-002
# the endpoints and route tables, VPC-004 the route tables and internet gateways, VPC-001 the
# endpoints, and the route tables and internet gateways its message names (where S3 traffic
# goes without an endpoint: a NAT gateway, the internet gateway, no route).
OBSERVED_PLACEMENT = COMPUTE_KINDS + ("ec2.subnet", "ec2.vpc")
OBSERVED_ENDPOINTS = OBSERVED_PLACEMENT + ("ec2.vpc_endpoint",)
OBSERVED_ENDPOINT_ROUTES = OBSERVED_ENDPOINTS + ("ec2.route_table",)
OBSERVED_PUBLIC_ROUTES = OBSERVED_PLACEMENT + ("ec2.route_table", "ec2.internet_gateway")
OBSERVED_EGRESS = OBSERVED_ENDPOINTS + ("ec2.route_table", "ec2.internet_gateway")


def money(x: float) -> str:
    return f"{x:,.2f}"


def rate(x: float) -> str:
    return f"{x:.4f}".rstrip("0").rstrip(".") if x else "0"


def describe(r: Resource) -> str:
    return (r.name and r.name != r.id and f"{r.id} ({r.name})") or r.id


def count_text(count: int | None, unit: str = "instance") -> str:
    """The multiplier of a basis: " x 3 instances", or " per instance" when the count is unknown."""
    if count is None:
        return f" per {unit}"
    return f" x {count} {unit}{'s' if count != 1 else ''}"


def monthly(rate_per_hour: float, count: int | None) -> float:
    return rate_per_hour * HOURS_PER_MONTH * (count if count is not None else 1)


def ref_text(value: Any) -> str:
    if isinstance(value, Ref):
        return str(value)
    if isinstance(value, Resource):
        return value.id
    return repr(value) if not isinstance(value, str) else value
