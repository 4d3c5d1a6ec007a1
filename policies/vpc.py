"""VPC isolation of GPU compute: S3 gateway endpoint (VPC-001), its route table coverage
(VPC-002), endpoint policies (VPC-003) and public IPs (VPC-004)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

from policies.base import Context, Remediation, policy
from policies.common import (
    COMPUTE_KINDS,
    NETWORK_KINDS,
    OBSERVED_EGRESS,
    OBSERVED_ENDPOINT_ROUTES,
    OBSERVED_ENDPOINTS,
    OBSERVED_PUBLIC_ROUTES,
    as_list,
    describe,
    ref_text,
)
from policies.yaml_kinds import HEAD, NODE_GROUP, NODE_POOL, QUEUE
from scanner.compute import LAUNCHES, PLACES, Attr, Placement, VpcNotKnown, kinds_with
from scanner.compute.launch import decisive
from scanner.model import Ref, Resource, Result, Severity, Status, Unknown
from scanner.model.graph import doubt, first_doubt

S3_SERVICE = re.compile(r"^com\.amazonaws\.[^.]+\.s3$")
# What places capacity into subnets (a template alone does not): VPC-001 says on it when the
# VPC it runs in cannot be told.
PLACING_KINDS = kinds_with(LAUNCHES, PLACES)


def is_s3_gateway(endpoint: Resource) -> bool | Unknown:
    name = endpoint.get("ServiceName")
    etype = endpoint.get("VpcEndpointType")
    if isinstance(name, Unknown):
        return name
    if isinstance(etype, Unknown):
        return etype
    gateway = etype is None or str(etype).lower() == "gateway"
    return gateway and isinstance(name, str) and bool(S3_SERVICE.match(name))


def _s3_gateways(vpc: Resource,
                 ctx: Context) -> tuple[list[Resource], list[Resource], list[Resource]]:
    """The VPC's S3 gateway endpoints: those that certainly exist, those that may not exist,
    and the endpoints that may be one (service name or type not known)."""
    known: list[Resource] = []
    maybe: list[Resource] = []
    unknown: list[Resource] = []
    for ep in ctx.index.endpoints_of_vpc(vpc):
        verdict = is_s3_gateway(ep)
        if verdict is True:
            (known if doubt(ep) is None else maybe).append(ep)
        elif isinstance(verdict, Unknown):
            unknown.append(ep)
    return known, maybe, unknown


def _hosted(placements: list[Placement]) -> tuple[list[Placement], Unknown | None]:
    """The GPU compute to judge on: the placements certainly there; when none is, all of them
    and the doubt (a verdict then holds only if one of them exists)."""
    certain = [p for p in placements if p.doubt is None]
    if certain:
        return certain, None
    return placements, placements[0].doubt


def _compute_evidence(placements: list[Placement]) -> list[dict[str, Any]]:
    out = []
    for p in placements[:20]:
        row: dict[str, Any] = {"resource": p.compute.id, "kind": p.compute.kind,
                               "instance_types": p.types}
        if p.doubt is not None:
            row["may_not_exist"] = p.doubt.reason
        out.append(row)
    return out


S3_ENDPOINT_TF = '''resource "aws_vpc_endpoint" "s3" {
  vpc_id            = aws_vpc.main.id
  service_name      = "com.amazonaws.${var.region}.s3"
  vpc_endpoint_type = "Gateway"
  route_table_ids   = [aws_route_table.private.id]
}'''
S3_ENDPOINT_CFN = '''S3Endpoint:
  Type: AWS::EC2::VPCEndpoint
  Properties:
    VpcId: !Ref VPC
    ServiceName: !Sub com.amazonaws.${AWS::Region}.s3
    VpcEndpointType: Gateway
    RouteTableIds: [!Ref PrivateRouteTable]'''


# The fix of an UNKNOWN on GPU compute whose VPC cannot be told.
VPC_NOT_KNOWN_FIX = Remediation(
    text="Let the scan see the VPC this compute runs in: scan the code that declares its subnets "
         "and VPC together with it, or give the subnet references their values (--var, "
         "--var-file, --cfn-param); then give that VPC an S3 gateway endpoint if it has none.",
    terraform=S3_ENDPOINT_TF, cloudformation=S3_ENDPOINT_CFN)


@policy(
    id="VPC-001",
    title="VPC hosting GPU compute has no S3 gateway endpoint",
    severity=Severity.MEDIUM,
    category="security",
    kinds=("ec2.vpc", *PLACING_KINDS),
    needs=COMPUTE_KINDS + NETWORK_KINDS,
    observed_needs=OBSERVED_EGRESS,
    description="GPU workloads move datasets and checkpoints to and from S3; without a gateway "
                "endpoint that traffic goes through a NAT gateway (cost per GB) or the internet "
                "gateway, and leaves the VPC. Judged on the VPC; GPU compute whose VPC cannot be "
                "told (its subnets come from a variable, another stack or module, or are ids no "
                "file declares) is UNKNOWN on the compute itself, naming what did not resolve: "
                "once per resource, and never PASS or FAIL on a VPC it may or may not run in.",
    remediation=Remediation(
        text="Add an S3 gateway endpoint to the VPC and associate it with the route tables of "
             "the subnets that run GPU compute (gateway endpoints are free).",
        terraform=S3_ENDPOINT_TF, cloudformation=S3_ENDPOINT_CFN,
        by_kind={k: VPC_NOT_KNOWN_FIX for k in PLACING_KINDS}),
)
def vpc_001(vpc: Resource, ctx: Context) -> Iterator[Result]:
    if vpc.kind != "ec2.vpc":
        yield from _vpc_not_known(vpc, ctx)
        return
    placements = ctx.compute.gpu_compute_by_vpc().get(id(vpc))
    if not placements:
        return
    hosted, maybe_hosted = _hosted(placements)
    known, maybe, unknown = _s3_gateways(vpc, ctx)
    evidence: dict[str, Any] = {"gpu_compute": _compute_evidence(placements),
                                "s3_gateway_endpoints": [e.id for e in known]}
    if maybe:
        evidence["s3_gateway_endpoints_that_may_not_exist"] = [e.id for e in maybe]
    if known:
        yield ctx.result(vpc, Status.PASS, "the VPC has an S3 gateway endpoint",
                         evidence=evidence, doubt=maybe_hosted)
    elif maybe:
        yield ctx.result(vpc, Status.UNKNOWN,
                         # cast: each of maybe has a doubt (_s3_gateways sorts them so)
                         f"its only S3 gateway endpoint may not exist: "
                         f"{cast(Unknown, doubt(maybe[0])).reason}",
                         evidence=evidence)
    elif unknown:
        yield ctx.result(vpc, Status.UNKNOWN,
                         f"endpoint {unknown[0].id} may be an S3 gateway: its service name or "
                         "type is not known", evidence=evidence)
    else:
        egress = _egress(vpc, hosted, ctx)
        evidence["default_routes"] = sorted({e.kind for e in egress})
        evidence["egress"] = [e.row() for e in egress[:20]]
        yield ctx.result(vpc, Status.FAIL,
                         f"VPC hosts GPU compute ({describe(hosted[0].compute)}"
                         f"{' and others' if len(hosted) > 1 else ''}) and has no S3 gateway "
                         f"endpoint: {_egress_text(egress)}", evidence=evidence,
                         doubt=maybe_hosted)


def _vpc_not_known(compute: Resource, ctx: Context) -> Iterator[Result]:
    """GPU compute some of whose capacity runs in a VPC the scan cannot tell: UNKNOWN on the
    compute, naming the subnet references that did not resolve (the VPCs its other subnets
    place it in are judged on themselves)."""
    unplaced: VpcNotKnown | None = ctx.compute.gpu_compute_of_unknown_vpc().get(id(compute))
    if unplaced is None:
        return
    p = unplaced.placement
    why = unplaced.why
    shown = why[0] + (f" (and {len(why) - 1} more)" if len(why) > 1 else "")
    evidence: dict[str, Any] = {"gpu_compute": _compute_evidence([p]),
                                "vpc_not_known": list(why)}
    named = [ref_text(r) for r in p.unresolved if not isinstance(r, Unknown)]
    if named:
        evidence["subnets_not_in_the_scan"] = list(dict.fromkeys(named))[:20]
    view = ctx.compute.of(compute)
    path = view.network.subnets_path if view is not None and view.network is not None else ""
    if unplaced.vpcs:
        names = [v.id for v in unplaced.vpcs]
        evidence["vpcs_it_runs_in"] = names[:20]
        yield ctx.result(compute, Status.UNKNOWN,
                         f"part of this GPU compute may run in a VPC that is not known "
                         f"({shown}): whether that VPC has an S3 gateway endpoint cannot be told "
                         f"(its other subnets place it in {', '.join(names[:3])}"
                         f"{' and others' if len(names) > 3 else ''}, judged there)"
                         f"{_maybe(p)}", path=path, evidence=evidence)
        return
    here = [] if unplaced.default_vpc else ctx.index.of_kind("ec2.vpc", compute.scope)
    if unplaced.default_vpc:
        where = ""
    elif here:
        evidence["vpcs_it_may_run_in"] = [v.id for v in here[:20]]
        where = (f"; it may run in {'one of ' if len(here) > 1 else ''}"
                 f"{', '.join(v.id for v in here[:3])}{' and others' if len(here) > 3 else ''}"
                 f"{',' if len(here) > 1 else ''} or in a VPC outside the scan")
    else:
        where = "; no VPC beside it is in the scan"
    yield ctx.result(compute, Status.UNKNOWN,
                     f"the VPC this GPU compute runs in is not known ({shown}): whether it has "
                     f"an S3 gateway endpoint cannot be told{where}{_maybe(p)}", path=path,
                     evidence=evidence)


def _maybe(p: Placement) -> str:
    """What else is not known of the compute (whether it is GPU compute, whether it exists)."""
    return f"; also, {p.doubt.reason}" if p.doubt is not None and p.doubt.reason else ""


@dataclass(frozen=True)
class Egress:
    """Where one GPU subnet sends 0.0.0.0/0 (what S3 traffic takes without a gateway
    endpoint): ``kind`` "NAT", "internet gateway", "other", "none" or "not known", the route
    table and the target as found."""

    kind: str
    subnet: str
    table: str = ""
    target: str = ""  # "NAT gateway nat-0abc", "internet gateway igw-1", "transit gateway …"
    why: str = ""  # for "not known": what is not known

    def row(self) -> dict[str, Any]:
        return {"subnet": self.subnet, "route_table": self.table or None, "egress": self.kind,
                "target": self.target or None, "not_known": self.why or None}


_TARGETS = (("NatGatewayId", "NAT gateway"), ("GatewayId", "gateway"),
            ("TransitGatewayId", "transit gateway"), ("NetworkInterfaceId", "network interface"),
            ("InstanceId", "instance"), ("VpcPeeringConnectionId", "peering connection"),
            ("VpcEndpointId", "VPC endpoint"), ("CarrierGatewayId", "carrier gateway"),
            ("LocalGatewayId", "local gateway"), ("CoreNetworkArn", "core network"))


def _target(route: dict[str, Any]) -> str:
    for key, label in _TARGETS:
        value = route.get(key)
        if isinstance(value, Ref) and value.attr in (None, "id"):
            value = value.target  # aws_nat_gateway.nat.id: the gateway itself
        if value is not None:
            return f"{label} {ref_text(value) if not isinstance(value, Unknown) else '(not known)'}"
    return "a target not given"


def _table_name(table: Resource | str) -> str:
    return table.id if isinstance(table, Resource) else "the VPC's main route table"


def _egress(vpc: Resource, placements: list[Placement], ctx: Context) -> list[Egress]:
    """Where each GPU subnet of this VPC sends 0.0.0.0/0, as found."""
    out: list[Egress] = []
    subnets = {id(s): s for p in placements for s in p.subnets
               if ctx.index.vpc_of_subnet(s) is vpc}
    for subnet in subnets.values():
        table = ctx.index.route_table_of_subnet(subnet)
        if table is None or isinstance(table, Unknown):
            why = table.reason if isinstance(table, Unknown) else "its route table is not known"
            out.append(Egress("not known", subnet.id, why=why))
            continue
        found: list[Egress] = []
        for route, maybe in ctx.index.routes_of(table):
            dest = route.get("DestinationCidrBlock")
            if isinstance(dest, Unknown):  # may be the default route
                found.append(Egress("not known", subnet.id, _table_name(table), _target(route),
                                    why=f"a route's destination is not known ({dest.reason})"
                                    if dest.reason else "a route's destination is not known"))
                continue
            if dest != "0.0.0.0/0":
                continue
            target = _target(route)
            gateway = ctx.index.is_internet_gateway(route.get("GatewayId"), subnet.scope)
            if maybe is not None:  # a route that may not exist
                kind, why = "not known", f"the route may not exist ({maybe.reason})"
            elif route.get("NatGatewayId") is not None:
                kind, why = "NAT", ""
            elif gateway is True:
                kind, why = "internet gateway", ""
                target = target.replace("gateway ", "internet gateway ", 1)
            elif isinstance(gateway, Unknown):
                kind, why = "not known", gateway.reason
            else:
                kind, why = "other", ""
            found.append(Egress(kind, subnet.id, _table_name(table), target, why))
        out.extend(found or [Egress("none", subnet.id, _table_name(table))])
    return out or [Egress("not known", "", why="the GPU subnets of this VPC are not known")]


_CONSEQUENCE = {
    "NAT": "S3 traffic pays NAT processing",
    "internet gateway": "S3 traffic goes out over the internet gateway",
    "other": "S3 traffic leaves the VPC by that route",
    "none": "no route out: S3 is reachable from it only through an endpoint",
    "not known": "where S3 traffic goes is not known here",
}


def _egress_text(egress: list[Egress]) -> str:
    """What was found, grouped by where it goes: "subnet-a routes 0.0.0.0/0 through NAT
    gateway nat-1: S3 traffic pays NAT processing"."""
    order = ("NAT", "internet gateway", "other", "not known", "none")
    groups: dict[tuple[str, str, str], list[str]] = {}
    for e in sorted(egress, key=lambda e: order.index(e.kind)):
        key = (e.kind, e.target if e.kind != "none" else e.table, e.why)
        groups.setdefault(key, [])
        if e.subnet not in groups[key]:
            groups[key].append(e.subnet)
    parts = []
    for (kind, what, why), subnets in groups.items():
        who = (f"subnet {subnets[0]}" if len(subnets) == 1
               else f"subnets {', '.join(subnets[:3])}"
               + (f" and {len(subnets) - 3} more" if len(subnets) > 3 else ""))
        if not subnets or subnets == [""]:
            who = "its GPU subnets"
        if kind == "none":
            found = f"{who} use{'s' if len(subnets) == 1 else ''} {what}, which has no " \
                    "0.0.0.0/0 route"
        elif kind == "not known":
            found = f"for {who}, {why}"
        else:
            via = "through" if kind == "NAT" else "to"
            found = f"{who} route{'s' if len(subnets) == 1 else ''} 0.0.0.0/0 {via} {what}"
        parts.append(f"{found}: {_CONSEQUENCE[kind]}")
    return "; ".join(parts)


@policy(
    id="VPC-002",
    title="GPU subnet's route table is not covered by the VPC's S3 gateway endpoint",
    severity=Severity.MEDIUM,
    category="security",
    kinds=("ec2.subnet",),
    needs=COMPUTE_KINDS + NETWORK_KINDS,
    observed_needs=OBSERVED_ENDPOINT_ROUTES,
    description="A subnet that runs GPU compute must use a route table (its explicit association, "
                "else the VPC's main table) that the S3 gateway endpoint is associated with. "
                "Judged where the VPC has an S3 gateway endpoint: without one VPC-001 says it, and "
                "where the VPC (or the subnet) of GPU compute is not known VPC-001's UNKNOWN on "
                "the compute says it.",
    remediation=Remediation(
        text="Add the subnet's route table to the S3 gateway endpoint's route tables.",
        terraform='resource "aws_vpc_endpoint_route_table_association" "gpu" {\n'
                  '  vpc_endpoint_id = aws_vpc_endpoint.s3.id\n'
                  '  route_table_id  = aws_route_table.gpu.id\n}',
        cloudformation="RouteTableIds: [!Ref GpuRouteTable]  # on the AWS::EC2::VPCEndpoint"),
)
def vpc_002(subnet: Resource, ctx: Context) -> Iterator[Result]:
    placements = ctx.compute.gpu_compute_by_subnet().get(id(subnet))
    if not placements:
        return
    vpc = ctx.index.vpc_of_subnet(subnet)
    if vpc is None:
        return
    _hosted_here, maybe_hosted = _hosted(placements)
    known, maybe, _unknown = _s3_gateways(vpc, ctx)
    if not known and not maybe:
        return  # VPC-001 says it
    table = ctx.index.route_table_of_subnet(subnet)
    covered: list[tuple[Any, Unknown | None]] = []
    unresolved = False
    for ep in known + maybe:
        for t, why in ctx.index.endpoint_route_tables(ep):
            if t is None:
                unresolved = True
            else:
                covered.append((t, first_doubt(doubt(ep), why)))
    table_name = table.id if isinstance(table, Resource) else table
    evidence = {"route_table": "main route table" if isinstance(table, str) else table_name,
                "endpoints": [e.id for e in known + maybe],
                "endpoint_route_tables": sorted(
                    "main route table" if isinstance(t, str) else t.id for t, _w in covered),
                "gpu_compute": _compute_evidence(placements)}
    if isinstance(table, Resource | str):
        matches = [why for t, why in covered if t is table or t == table]
    else:
        matches = []
    # without an S3 gateway endpoint that certainly exists, VPC-002 may not apply at all
    no_endpoint = doubt(maybe[0]) if not known else None
    if matches and any(why is None for why in matches):
        yield ctx.result(subnet, Status.PASS, "the subnet's route table is covered by the S3 "
                         "gateway endpoint", evidence=evidence, doubt=maybe_hosted)
    elif isinstance(table, Unknown):
        yield ctx.result(subnet, Status.UNKNOWN, f"cannot resolve the subnet's route table: "
                         f"{table.reason}", evidence=evidence)
    elif matches:
        yield ctx.result(subnet, Status.UNKNOWN, "the subnet's route table is covered only if "
                         # cast: no match is None here (the branch above takes that)
                         f"this exists: {cast(Unknown, matches[0]).reason}", evidence=evidence)
    elif table is None or unresolved:
        yield ctx.result(subnet, Status.UNKNOWN, "cannot resolve the subnet's route table or "
                         "the endpoint's route tables", evidence=evidence)
    else:
        which = ("the VPC's main route table" if isinstance(table, str)
                 else f"route table {table_name}")
        yield ctx.result(subnet, Status.FAIL,
                         f"GPU subnet uses {which}, which the S3 gateway endpoint "
                         f"{(known + maybe)[0].id} does not cover", path="RouteTableId",
                         evidence=evidence, doubt=first_doubt(maybe_hosted, no_endpoint))


def _may_host(endpoint: Resource, ctx: Context) -> Unknown | None:
    """Why the endpoint's VPC may host GPU compute it is not known to host: GPU compute in its
    scope whose VPC is not known at all may run there (the default VPC is none of the scan's)."""
    def build() -> dict[str, VpcNotKnown]:
        first: dict[str, VpcNotKnown] = {}
        for u in ctx.compute.gpu_compute_of_unknown_vpc().values():
            if not u.vpcs and not u.default_vpc:
                first.setdefault(u.placement.compute.scope, u)
        return first

    unplaced = ctx.index.memo("vpc003:unplaced", build).get(endpoint.scope)
    if unplaced is None:
        return None
    return Unknown(f"whether its VPC hosts GPU compute is not known: the VPC of "
                   f"{describe(unplaced.placement.compute)} is not known ({unplaced.why[0]})")


def _is_star(value: Any) -> bool:
    if value == "*":
        return True
    if isinstance(value, list):
        return any(_is_star(v) for v in value)
    if isinstance(value, dict):
        return any(_is_star(v) for v in value.values())
    return False


def _allows_everything(statement: dict[str, Any]) -> bool | Unknown:
    for key in ("Effect", "Principal", "Action", "Condition"):
        if isinstance(value := statement.get(key), Unknown):
            return value
    if str(statement.get("Effect", "")).lower() != "allow" or statement.get("Condition"):
        return False
    actions = as_list(statement.get("Action"))
    # "*", "s3:*" or any other whole-service wildcard ("dynamodb:*") on an interface endpoint
    wide_action = any(a == "*" or a.endswith(":*") for a in actions if isinstance(a, str))
    return bool(wide_action and _is_star(statement.get("Principal")))


@policy(
    id="VPC-003",
    title="VPC endpoint policy allows everything",
    severity=Severity.LOW,
    category="security",
    kinds=("ec2.vpc_endpoint",),
    needs=COMPUTE_KINDS + NETWORK_KINDS,
    observed_needs=OBSERVED_ENDPOINTS,
    description="An endpoint in a VPC with GPU compute must have a policy narrower than full "
                "access: no policy, or an Allow of * (or s3:*, or any service:*) to * without a "
                "Condition, fails. An endpoint of a VPC no GPU compute is known to run in, beside "
                "GPU compute whose VPC is not known, is UNKNOWN: it applies if that compute runs "
                "there.",
    remediation=Remediation(
        text="Attach an endpoint policy that allows only the buckets (and principals) the "
             "workloads need, or add a Condition such as aws:PrincipalOrgID.",
        terraform='policy = jsonencode({Statement = [{Effect = "Allow", Principal = "*",\n'
                  '  Action = ["s3:GetObject", "s3:PutObject"],\n'
                  '  Resource = ["arn:aws:s3:::training-data/*"]}]})',
        cloudformation="PolicyDocument:\n  Statement:\n    - Effect: Allow\n      Principal: '*'\n"
                       "      Action: [s3:GetObject, s3:PutObject]\n"
                       "      Resource: arn:aws:s3:::training-data/*"),
)
def vpc_003(endpoint: Resource, ctx: Context) -> Iterator[Result]:
    vpc = ctx.index.resolve(endpoint.get("VpcId"), endpoint.scope, "ec2.vpc")
    placements = ctx.compute.gpu_compute_by_vpc().get(id(vpc)) if vpc is not None else None
    if placements:
        _hosted_here, maybe_hosted = _hosted(placements)
    else:
        # no GPU compute is known to run in its VPC; GPU compute beside it whose VPC is not
        # known may: a verdict then holds only if it does (UNKNOWN, never silence)
        maybe_hosted = _may_host(endpoint, ctx)
        if maybe_hosted is None:
            return
    doc, maybe_doc = ctx.index.endpoint_policy(endpoint)
    # a FAIL holds whether or not a separate policy resource exists (without it: no policy);
    # a PASS on its document holds only if it exists
    fail_doubt, pass_doubt = maybe_hosted, first_doubt(maybe_hosted, maybe_doc)
    if isinstance(doc, Unknown):
        yield ctx.result(endpoint, Status.UNKNOWN, f"endpoint policy not known: {doc.reason}",
                         path="PolicyDocument")
        return
    if doc is None or doc == "" or doc == {}:
        yield ctx.result(endpoint, Status.FAIL, "endpoint has no policy: full access to the "
                         "service for any principal", path="PolicyDocument",
                         evidence={"PolicyDocument": None}, doubt=fail_doubt)
        return
    if not isinstance(doc, dict):
        yield ctx.result(endpoint, Status.UNKNOWN, "endpoint policy is not a JSON object",
                         path="PolicyDocument")
        return
    statements = doc.get("Statement")
    if isinstance(statements, Unknown):
        yield ctx.result(endpoint, Status.UNKNOWN, "endpoint policy statements not known",
                         path="PolicyDocument.Statement")
        return
    unknown = None
    for i, st in enumerate(as_list(statements)):
        if not isinstance(st, dict):
            continue
        verdict = _allows_everything(st)
        if verdict is True:
            yield ctx.result(endpoint, Status.FAIL, "endpoint policy allows every action to "
                             "every principal without a condition",
                             path=f"PolicyDocument.Statement[{i}]", evidence={"statement": st},
                             doubt=fail_doubt)
            return
        if isinstance(verdict, Unknown):
            unknown = verdict
    if unknown is not None:
        yield ctx.result(endpoint, Status.UNKNOWN, f"a policy statement is not known: "
                         f"{unknown.reason}", path="PolicyDocument")
    else:
        yield ctx.result(endpoint, Status.PASS, "endpoint policy is restricted",
                         evidence={"statements": len(as_list(statements))}, doubt=pass_doubt)


# -- VPC-004 -------------------------------------------------------------------------------------


def _setting(flag: Attr | None) -> tuple[Any, str, str, Any]:
    """The setting's verdict, path, note, and what the evidence shows at its path (what is
    written there when the verdict is derived from it: then not the verdict itself)."""
    if flag is None:
        return None, "", "", None
    return flag.value, flag.path, flag.note, flag.shown if flag.derived else flag.value


def _public_subnet(subnet: Resource, ctx: Context) -> bool | Unknown:
    """MapPublicIpOnLaunch and a 0.0.0.0/0 route to an internet gateway."""
    mapping = subnet.get("MapPublicIpOnLaunch")
    if isinstance(mapping, Unknown):
        return mapping
    if mapping is not True:
        return False
    table = ctx.index.route_table_of_subnet(subnet)
    if table is None:
        return Unknown("the subnet's route table is not known")
    if isinstance(table, Unknown):
        return table
    maybe: Unknown | None = None  # a default route to an internet gateway that may not exist
    for route, why in ctx.index.routes_of(table):
        if route.get("DestinationCidrBlock") != "0.0.0.0/0" or route.get("NatGatewayId"):
            continue
        gateway = ctx.index.is_internet_gateway(route.get("GatewayId"), subnet.scope)
        if gateway is False:
            continue
        why = first_doubt(why, gateway if isinstance(gateway, Unknown) else None)
        if why is None:
            return True
        maybe = first_doubt(maybe, why)
    return False if maybe is None else maybe


@policy(
    id="VPC-004",
    title="GPU compute gets a public IP address",
    severity=Severity.HIGH,
    category="security",
    kinds=COMPUTE_KINDS,
    needs=NETWORK_KINDS,
    observed_needs=OBSERVED_PUBLIC_ROUTES,
    description="GPU instances must not be reachable from the internet: an explicit "
                "AssociatePublicIpAddress fails on its own; a subnet's MapPublicIpOnLaunch fails "
                "when that subnet routes 0.0.0.0/0 to an internet gateway; live, a public IP.",
    remediation=Remediation(
        text="Run GPU compute in private subnets behind NAT (or no egress), set "
             "AssociatePublicIpAddress to false, and reach it through SSM or a bastion.",
        terraform="associate_public_ip_address = false\n"
                  "# and in aws_subnet: map_public_ip_on_launch = false",
        cloudformation="NetworkInterfaces:\n  - DeviceIndex: 0\n"
                       "    AssociatePublicIpAddress: false"),
    fixes={
        NODE_POOL: ("Set associatePublicIPAddress: false on its EC2NodeClass and select only "
                    "private subnets in subnetSelectorTerms."),
        NODE_GROUP: "Set privateNetworking: true (the nodes then run in the private subnets).",
        QUEUE: "Set Networking.AssignPublicIp: false and use private subnets behind NAT.",
        HEAD: ("Set HeadNode.Networking.ElasticIp: false and reach the head node through SSM or a "
               "bastion."),
    },
)
def vpc_004(resource: Resource, ctx: Context) -> Iterator[Result]:
    view = ctx.compute.of(resource)
    if view is None or view.network is None or not view.network.public_ip_applies:
        return
    gpu = view.types.gpu()
    if gpu is False:
        return
    net = view.network
    evidence: dict[str, Any] = {"instance_types": view.types.known()}
    if net.observed is not None:  # the address itself was observed (live)
        if gpu is not True or not view.active:
            return
        ip = net.observed.address
        evidence[net.observed.path] = ip
        if ip:
            yield ctx.result(resource, Status.FAIL, f"GPU instance has public IP {ip}",
                             path=net.observed.path, evidence=evidence)
        else:
            yield ctx.result(resource, Status.PASS, "no public IP", evidence=evidence)
        return
    verdict, path, note, shown = _setting(decisive(net.public_ip))
    how = "its own setting"
    if verdict is None and net.placed:
        verdict, path, note, shown = _setting(decisive(net.inherited_public_ip))
        how = "its launch template / configuration"
    if view.launch_template is not None:
        evidence["launch_template"] = view.launch_template.id
    if verdict is True:
        evidence[path] = shown
        yield _gated(ctx, resource, gpu, Status.FAIL,
                     f"{note or 'AssociatePublicIpAddress is true'} ({how})", path, evidence)
        return
    if isinstance(verdict, Unknown):
        yield _gated(ctx, resource, gpu, Status.UNKNOWN,
                     f"AssociatePublicIpAddress not known: {verdict.reason}", path, evidence)
        return
    if verdict is None and not net.placed:
        # A launch template that sets no public IP itself assigns nothing: whether capacity
        # gets one is decided where it lands, and judged on the groups and instances that
        # launch it (with their subnets). A PASS here would read as a clean bill.
        return
    if verdict is False or not net.placed:
        if gpu is True:
            said = note if note and shown is not verdict \
                else f"AssociatePublicIpAddress is false: {path}"
            yield ctx.result(resource, Status.PASS, f"no public IP is assigned ({said})",
                             path=path, evidence=evidence | {path: shown})
        return
    public, unknown, certain, maybe_subnet = _landing_subnets(resource, net.subnets, ctx)
    evidence["public_subnets"] = public
    evidence["subnets"] = sorted({ref_text(r) for r in net.subnets if not isinstance(r, Unknown)})
    if public:
        yield _gated(ctx, resource, gpu, Status.FAIL,
                     f"launches into public subnet {public[0]} (MapPublicIpOnLaunch and a "
                     "0.0.0.0/0 route to an internet gateway)", "SubnetId", evidence)
    elif unknown is not None:
        yield _gated(ctx, resource, gpu, Status.UNKNOWN,
                     f"cannot tell whether the subnet is public: {unknown.reason}", "SubnetId",
                     evidence)
    elif gpu is True:
        yield ctx.result(resource, Status.PASS, "no public IP is assigned", evidence=evidence,
                         doubt=None if certain else maybe_subnet)


def _landing_subnets(resource: Resource, refs: tuple[Any, ...], ctx: Context
                     ) -> tuple[list[str], Unknown | None, bool, Unknown | None]:
    """Of the subnets a launch lands in: the public ones, why it is not known whether one is
    public, whether one certainly exists, and why the others may not exist."""
    public: list[str] = []
    unknown: Unknown | None = None
    certain = False  # a subnet it lands in that certainly exists
    maybe_subnet: Unknown | None = None
    for ref in refs:
        if isinstance(ref, Unknown):  # e.g. no subnet: the default VPC, not in the scan
            unknown = unknown or ref
            continue
        subnets = ctx.compute.subnets_of(ref, resource.scope)
        if not subnets:
            unknown = unknown or Unknown(f"subnet {ref_text(ref)} is not in the scan")
        for subnet in subnets:
            p = _public_subnet(subnet, ctx)
            why = doubt(subnet)
            certain = certain or why is None
            maybe_subnet = first_doubt(maybe_subnet, why)
            if p is True and why is not None:  # public, if it exists
                unknown = Unknown(f"{why.reason}, and it is public")
            elif p is True:
                public.append(subnet.id)
            elif isinstance(p, Unknown):
                unknown = p
    return public, unknown, certain, maybe_subnet


def _gated(ctx: Context, resource: Resource, gpu: bool | Unknown, status: Status, message: str,
           path: str, evidence: dict[str, Any]) -> Result:
    """A finding that holds only if the compute is GPU: UNKNOWN when its type is not known."""
    if gpu is True:
        return ctx.result(resource, status, message, path=path, evidence=evidence)
    reason = gpu.reason if isinstance(gpu, Unknown) else ""
    return ctx.result(resource, Status.UNKNOWN,
                      f"{message}, and whether it is GPU compute is not known ({reason})",
                      path=path, evidence=evidence)

