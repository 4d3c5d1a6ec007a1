"""EC2 instances: type, state, network placement, public IP, block devices, market, tags."""

from __future__ import annotations

from typing import Any

from scanner.aws.collectors.base import Call, Collector, RegionContext
from scanner.aws.normalize import ec2_arn, make, tags_of, without
from scanner.model import Resource

INSTANCE = "ec2.instance"
GONE = frozenset({"terminated"})

LT_ID_TAG = "aws:ec2launchtemplate:id"
LT_VERSION_TAG = "aws:ec2launchtemplate:version"
ASG_TAG = "aws:autoscaling:groupName"


def run(ctx: RegionContext) -> None:
    reservations = ctx.list("ec2", "DescribeInstances", "Reservations")
    if reservations is None:
        return
    for reservation in reservations:
        for item in reservation.get("Instances") or []:
            if (item.get("State") or {}).get("Name") in GONE:
                continue
            ctx.add(instance(ctx, item))


def join_volumes(ctx: RegionContext) -> None:
    """Once the region's collectors are done: the volumes' own facts (encryption, size, type,
    key) into the instances' block devices, when the ebs collector read them."""
    volumes: dict[str, dict[str, Any]] = ctx.shared.get("volumes", {})
    if not volumes:
        return
    for resource in ctx.result.resources:
        if resource.kind == INSTANCE and resource.scope == ctx.scope:
            for mapping in resource.attrs.get("BlockDeviceMappings") or []:
                join_volume(mapping["Ebs"], volumes)


def instance(ctx: RegionContext, item: dict[str, Any]) -> Resource:
    iid = str(item["InstanceId"])
    tags = tags_of(item.get("Tags"))
    attrs = without(item, "Tags", "State", "NetworkInterfaces", "BlockDeviceMappings")
    state = item.get("State") or {}
    attrs["State"] = state.get("Name")
    attrs["StateCode"] = state.get("Code")
    attrs["AvailabilityZone"] = (item.get("Placement") or {}).get("AvailabilityZone")
    # Live truth about public exposure is the address itself; the flag mirrors it so that a
    # policy reading the IaC flag sees the same answer (and ignores the subnet default).
    attrs["AssociatePublicIpAddress"] = bool(item.get("PublicIpAddress"))
    attrs["NetworkInterfaces"] = [network_interface(n) for n in item.get("NetworkInterfaces") or []]
    attrs["BlockDeviceMappings"] = [
        {"DeviceName": b.get("DeviceName"), "Ebs": dict(b.get("Ebs") or {})}
        for b in item.get("BlockDeviceMappings") or []
    ]
    if tags.get(LT_ID_TAG):
        attrs["LaunchTemplate"] = {
            "LaunchTemplateId": tags[LT_ID_TAG],
            "Version": tags.get(LT_VERSION_TAG),
        }
    if tags.get(ASG_TAG):
        attrs["AutoScalingGroupName"] = tags[ASG_TAG]
    return make(ctx, INSTANCE, iid, attrs, tags=tags, arn=ec2_arn(ctx, "instance", iid))


def network_interface(item: dict[str, Any]) -> dict[str, Any]:
    public_ip = (item.get("Association") or {}).get("PublicIp")
    out: dict[str, Any] = {
        "NetworkInterfaceId": item.get("NetworkInterfaceId"),
        "DeviceIndex": (item.get("Attachment") or {}).get("DeviceIndex"),
        "SubnetId": item.get("SubnetId"),
        "VpcId": item.get("VpcId"),
        "AssociatePublicIpAddress": bool(public_ip),
        "InterfaceType": item.get("InterfaceType"),
    }
    if public_ip:
        out["PublicIp"] = public_ip
    return {k: v for k, v in out.items() if v is not None}


def join_volume(ebs: dict[str, Any], volumes: dict[str, dict[str, Any]]) -> None:
    vol = volumes.get(str(ebs.get("VolumeId")))
    if vol is not None:
        ebs["Encrypted"] = vol.get("Encrypted")
        ebs["VolumeSize"] = vol.get("Size")
        ebs["VolumeType"] = vol.get("VolumeType")
        if vol.get("KmsKeyId"):
            ebs["KmsKeyId"] = vol["KmsKeyId"]


COLLECTOR = Collector(
    name="instances",
    calls=(Call("ec2", "DescribeInstances", (INSTANCE,)),),
    run=run,
    finish=join_volumes,
)
