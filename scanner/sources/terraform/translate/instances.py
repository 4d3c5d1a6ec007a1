"""EC2 instances, launch templates, launch configurations and EBS volumes and defaults; the
pieces they share with fleets and groups (block devices, market options, capacity
reservations, launch template specifications, instance requirements)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scanner.model import Unknown
from scanner.sources.terraform.translate.coerce import (
    Attrs,
    _blocks,
    _bool,
    _int,
    _is_map,
    _list,
    _one,
    _pairs,
    _put,
    _s,
    _sub,
)

# -- shared pieces --------------------------------------------------------------------------------

_EBS = (
    ("encrypted", "Encrypted"),
    ("kms_key_id", "KmsKeyId"),
    ("volume_size", "VolumeSize"),
    ("volume_type", "VolumeType"),
    ("iops", "Iops"),
    ("throughput", "Throughput"),
    ("snapshot_id", "SnapshotId"),
    ("delete_on_termination", "DeleteOnTermination"),
)


def _instance_devices(v: Mapping[str, Any]) -> Any:
    """aws_instance-style root/ebs/ephemeral blocks -> BlockDeviceMappings (root first)."""
    out: list[Any] = []
    root = _one(v.get("root_block_device"))
    if isinstance(root, Unknown):
        out.append({"DeviceName": "root", "Ebs": root})
    elif root is not None:
        out.append({"DeviceName": "root", "Ebs": _pairs({}, root, _EBS)})
    ebs = _blocks(v.get("ebs_block_device"))
    if isinstance(ebs, Unknown):
        return ebs
    for block in ebs or ():
        if isinstance(block, Unknown):
            out.append({"Ebs": block})
            continue
        m: Attrs = {}
        _put(m, "DeviceName", _s(block.get("device_name")))
        m["Ebs"] = _pairs({}, block, _EBS)
        out.append(m)
    eph = _blocks(v.get("ephemeral_block_device"))
    for block in eph if isinstance(eph, list) else ():
        if _is_map(block):
            out.append(_pairs({}, block, (("device_name", "DeviceName"),
                                          ("virtual_name", "VirtualName"),
                                          ("no_device", "NoDevice"))))
    return out or None


def _market_options(v: Mapping[str, Any]) -> Any:
    block = _one(v.get("instance_market_options"))
    if block is None or isinstance(block, Unknown):
        return block
    out = _pairs({}, block, (("market_type", "MarketType"),))
    spot = _sub(block.get("spot_options"), (
        ("max_price", "MaxPrice"),
        ("spot_instance_type", "SpotInstanceType"),
        ("instance_interruption_behavior", "InstanceInterruptionBehavior"),
        ("valid_until", "ValidUntil"),
        ("block_duration_minutes", "BlockDurationMinutes"),
    ))
    _put(out, "SpotOptions", spot)
    return out or None


def _capacity_reservation(v: Mapping[str, Any], *, group: bool = False) -> Any:
    """``capacity_reservation_specification { capacity_reservation_preference,
    capacity_reservation_target { ... } }``: an instance's or a launch template's (one id or
    resource group ARN), or an Auto Scaling group's (lists of them)."""
    block = _one(v.get("capacity_reservation_specification"))
    if block is None or isinstance(block, Unknown):
        return block
    out = _pairs({}, block, (("capacity_reservation_preference",
                              "CapacityReservationPreference"),))
    target_keys = (("capacity_reservation_ids", "CapacityReservationIds"),
                   ("capacity_reservation_resource_group_arns",
                    "CapacityReservationResourceGroupArns")) if group else (
        ("capacity_reservation_id", "CapacityReservationId"),
        ("capacity_reservation_resource_group_arn", "CapacityReservationResourceGroupArn"))
    _put(out, "CapacityReservationTarget",
         _sub(block.get("capacity_reservation_target"), target_keys))
    return out or None


_LT_SPEC = (
    ("id", "LaunchTemplateId"),
    ("launch_template_id", "LaunchTemplateId"),
    ("name", "LaunchTemplateName"),
    ("launch_template_name", "LaunchTemplateName"),
    ("version", "Version"),
)


def _lt_spec(value: Any) -> Any:
    spec = _sub(value, _LT_SPEC)
    if isinstance(spec, dict) and spec.get("LaunchTemplateId") == "unknown":
        # The AWS provider plans launch_template_id = "unknown" when only a name is given.
        del spec["LaunchTemplateId"]
        spec = spec or None
    return spec


def _instance_like(v: Mapping[str, Any]) -> Attrs:
    """The instance arguments shared by aws_instance and aws_spot_instance_request."""
    a = _pairs({}, v, (
        ("instance_type", "InstanceType"),
        ("ami", "ImageId"),
        ("subnet_id", "SubnetId"),
        ("associate_public_ip_address", "AssociatePublicIpAddress"),
        ("availability_zone", "AvailabilityZone"),
        ("key_name", "KeyName"),
        ("iam_instance_profile", "IamInstanceProfile"),
        ("vpc_security_group_ids", "SecurityGroupIds"),
        ("security_groups", "SecurityGroups"),
        ("private_ip", "PrivateIpAddress"),
        ("tenancy", "Tenancy"),
        ("ebs_optimized", "EbsOptimized"),
        ("placement_group", "PlacementGroup"),
    ))
    nis = _blocks(v.get("network_interface"))
    if isinstance(nis, Unknown):
        a["NetworkInterfaces"] = nis
    elif nis:
        a["NetworkInterfaces"] = [
            b if isinstance(b, Unknown) else _pairs({}, b, (
                ("device_index", "DeviceIndex"),
                ("network_interface_id", "NetworkInterfaceId"),
                ("network_card_index", "NetworkCardIndex"),
                ("delete_on_termination", "DeleteOnTermination"),
            )) for b in nis]
    _put(a, "BlockDeviceMappings", _instance_devices(v))
    _put(a, "InstanceMarketOptions", _market_options(v))
    _put(a, "CapacityReservationSpecification", _capacity_reservation(v))
    _put(a, "LaunchTemplate", _lt_spec(v.get("launch_template")))
    return a


def _public_ip_interface(spec: Attrs) -> None:
    """AWS puts a launch specification's public IP flag on the primary network interface."""
    flag = spec.get("AssociatePublicIpAddress")
    if flag is None:
        return
    nis = spec.get("NetworkInterfaces")
    if isinstance(nis, Unknown):
        return
    nis = list(nis or [])
    if any(isinstance(n, dict) and n.get("DeviceIndex") in (0, "0") for n in nis):
        return
    primary: Attrs = {"DeviceIndex": 0, "AssociatePublicIpAddress": flag}
    _put(primary, "SubnetId", spec.get("SubnetId"))
    spec["NetworkInterfaces"] = [primary, *nis]


# -- per type -------------------------------------------------------------------------------------


def _ebs_volume(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (
        ("encrypted", "Encrypted"),
        ("kms_key_id", "KmsKeyId"),
        ("size", "Size"),
        ("type", "VolumeType"),
        ("availability_zone", "AvailabilityZone"),
        ("iops", "Iops"),
        ("throughput", "Throughput"),
        ("snapshot_id", "SnapshotId"),
        ("multi_attach_enabled", "MultiAttachEnabled"),
    ))
    return "ec2.volume", a, None, ()


def _ebs_encryption_by_default(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    enabled = v.get("enabled")
    return "ec2.ebs_defaults", {"EbsEncryptionByDefault": True if enabled is None
                                else _bool(enabled)}, None, ()


def _ebs_default_kms_key(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    return "ec2.ebs_defaults", _pairs({}, v, (("key_arn", "KmsKeyId"),)), None, ()


def _instance(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    return "ec2.instance", _instance_like(v), None, ()


_LT_NI = (
    ("associate_public_ip_address", "AssociatePublicIpAddress"),
    ("device_index", "DeviceIndex"),
    ("network_card_index", "NetworkCardIndex"),
    ("subnet_id", "SubnetId"),
    ("network_interface_id", "NetworkInterfaceId"),
    ("security_groups", "Groups"),
    ("delete_on_termination", "DeleteOnTermination"),
    ("interface_type", "InterfaceType"),
    ("private_ip_address", "PrivateIpAddress"),
)


def _lt_devices(value: Any) -> Any:
    blocks = _blocks(value)
    if blocks is None or isinstance(blocks, Unknown):
        return blocks
    out: list[Any] = []
    for block in blocks:
        if isinstance(block, Unknown):
            out.append(block)
            continue
        m = _pairs({}, block, (("device_name", "DeviceName"),
                               ("virtual_name", "VirtualName"),
                               ("no_device", "NoDevice")))
        ebs = _one(block.get("ebs"))
        if isinstance(ebs, Unknown):
            m["Ebs"] = ebs
        elif ebs is not None:
            m["Ebs"] = _pairs({}, ebs, _EBS)
        out.append(m)
    return out or None


def _launch_template(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    data = _pairs({}, v, (
        ("instance_type", "InstanceType"),
        ("image_id", "ImageId"),
        ("key_name", "KeyName"),
        ("vpc_security_group_ids", "SecurityGroupIds"),
        ("security_group_names", "SecurityGroups"),
        ("ebs_optimized", "EbsOptimized"),
    ))
    _put(data, "BlockDeviceMappings", _lt_devices(v.get("block_device_mappings")))
    _put(data, "InstanceMarketOptions", _market_options(v))
    _put(data, "CapacityReservationSpecification", _capacity_reservation(v))
    nis = _blocks(v.get("network_interfaces"))
    if isinstance(nis, Unknown):
        data["NetworkInterfaces"] = nis
    elif nis:
        data["NetworkInterfaces"] = [b if isinstance(b, Unknown) else _pairs({}, b, _LT_NI)
                                     for b in nis]
    _put(data, "IamInstanceProfile", _sub(v.get("iam_instance_profile"),
                                          (("arn", "Arn"), ("name", "Name"))))
    _put(data, "Placement", _sub(v.get("placement"), (
        ("availability_zone", "AvailabilityZone"),
        ("group_name", "GroupName"),
        ("tenancy", "Tenancy"))))
    _put(data, "InstanceRequirements", _instance_requirements(v.get("instance_requirements")))
    a: Attrs = {"LaunchTemplateData": data}
    name = _s(v.get("name"))
    _put(a, "LaunchTemplateName", name)
    _put(a, "DefaultVersionNumber", _int(v.get("default_version")))
    _put(a, "LatestVersionNumber", _int(v.get("latest_version")))
    return "ec2.launch_template", a, name, ()


_RANGES = (
    ("accelerator_count", "AcceleratorCount"),
    ("accelerator_total_memory_mib", "AcceleratorTotalMemoryMiB"),
    ("vcpu_count", "VCpuCount"),
    ("memory_mib", "MemoryMiB"),
)
_REQUIREMENT_LISTS = (
    ("accelerator_types", "AcceleratorTypes"),
    ("accelerator_manufacturers", "AcceleratorManufacturers"),
    ("accelerator_names", "AcceleratorNames"),
    ("allowed_instance_types", "AllowedInstanceTypes"),
    ("excluded_instance_types", "ExcludedInstanceTypes"),
    ("instance_generations", "InstanceGenerations"),
    ("cpu_manufacturers", "CpuManufacturers"),
)


def _instance_requirements(value: Any) -> Any:
    """An ``instance_requirements`` block: the accelerator attributes decide the GPU fact."""
    block = _one(value)
    if block is None or isinstance(block, Unknown):
        return block
    out: Attrs = {}
    for tf_key, aws_key in _REQUIREMENT_LISTS:
        items = _list(block.get(tf_key))
        if items:
            out[aws_key] = items
    for tf_key, aws_key in _RANGES:
        _put(out, aws_key, _sub(block.get(tf_key), (("min", "Min"), ("max", "Max"))))
    _pairs(out, block, (("bare_metal", "BareMetal"),
                        ("burstable_performance", "BurstablePerformance")))
    return out or None


def _launch_configuration(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (
        ("instance_type", "InstanceType"),
        ("image_id", "ImageId"),
        ("spot_price", "SpotPrice"),
        ("associate_public_ip_address", "AssociatePublicIpAddress"),
        ("key_name", "KeyName"),
        ("iam_instance_profile", "IamInstanceProfile"),
        ("security_groups", "SecurityGroups"),
        ("ebs_optimized", "EbsOptimized"),
    ))
    _put(a, "BlockDeviceMappings", _instance_devices(v))
    name = _s(v.get("name"))
    _put(a, "LaunchConfigurationName", name)
    return "autoscaling.launch_configuration", a, name, ()
