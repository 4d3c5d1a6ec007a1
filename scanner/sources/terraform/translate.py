"""Terraform resource type -> normalized Resource (docs/resource-model.md).

Shared by both Terraform sources (HCL and plan JSON). ``values`` are a resource's attributes in
the shape of terraform's plan JSON: snake_case keys, nested blocks as lists of dicts (a single
dict is accepted too), where any value at any depth may be an :class:`Unknown` or a :class:`Ref`.
Both pass through untouched. Each translator maps names (and the shapes AWS and Terraform spell
differently); every real value is then coerced to the type the kind schema (``scanner/kinds``)
declares for it, the same types the CloudFormation reader coerces to:

- booleans become ``bool`` (launch templates spell them "true"/"false"/"" in plans);
- counts and sizes become ``int`` ("2" -> 2);
- prices stay as given (AWS uses strings; a number becomes its string form); ``""`` is dropped
  except for an ASG's ``spot_max_price`` (AWS's explicit "cap at the on-demand price");
- other empty strings mean "not set" and are dropped (terraform's zero value for unset strings);
- sets of ids become lists, and a single ``Ref`` where a list is expected becomes ``[Ref]``.

Absent or ``None`` means "not set": the AWS default applies. The only provider default filled in
is ``aws_ebs_encryption_by_default.enabled`` (true when omitted), because the HCL source cannot
know it otherwise. Stdlib only (the pre-commit path imports this).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from scanner.inputs.numbers import parse_decimal, parse_integer, sane_number, sane_number_text
from scanner.kinds import schema
from scanner.kinds import types as kt
from scanner.kinds.coerce import coerce_fields
from scanner.kinds.types import FieldType
from scanner.model import InputError, Notice, Provenance, Ref, Resource, Skip, Unknown

Attrs = dict[str, Any]
# A translator returns (kind, attrs, name, extra aliases).
Translator = Callable[[Mapping[str, Any]], tuple[str, Attrs, Any, tuple[str, ...]]]

_OPAQUE = (Unknown, Ref)
_SCHEMA = schema()


# -- coercions ------------------------------------------------------------------------------------
#
# Translators map names only; every value is then coerced to the type the kind schema declares
# for it (scanner/kinds, the same types CloudFormation is coerced to), by ``_coerce``.


def _s(value: Any) -> Any:
    """A string-ish value; "" is terraform's "unset"."""
    if value is None or value == "":
        return None
    return value


def _bool(value: Any) -> Any:
    """A bool as terraform converts one: the strings "true"/"1" and "false"/"0" exactly; a
    number is no bool (terraform refuses ``encrypted = 1`` and ``encrypted = "TRUE"``)."""
    if value is None or isinstance(value, bool | Unknown | Ref):
        return value
    if isinstance(value, str):
        if value == "":
            return None
        if value in ("true", "1"):
            return True
        if value in ("false", "0"):
            return False
    return Unknown(f"not a boolean: {str(value)[:40]!r}")


def _int(value: Any) -> Any:
    if value is None or isinstance(value, Unknown | Ref):
        return value
    if isinstance(value, bool):
        return Unknown(f"not a number: {value!r}")
    if isinstance(value, int):
        return sane_number(value)
    if isinstance(value, float):
        value = sane_number(value)
        return int(value) if isinstance(value, float) and value.is_integer() else value
    if isinstance(value, str):
        text = value.strip()
        if text == "":
            return None
        if len(text) > 32:
            return Unknown(f"not a usable number: {text[:20]}… ({len(text):,} characters)")
        try:
            return sane_number(parse_integer(text))
        except ValueError:
            try:
                number = sane_number(parse_decimal(text))
            except ValueError:
                return Unknown(f"not a number: {value!r}")
            if isinstance(number, Unknown):
                return number
            return int(number) if number.is_integer() else number
    return Unknown(f"not a number: {value!r}")


def _price(value: Any) -> Any:
    """Prices stay as given (strings, like the AWS API); numbers become their string form;
    "" is terraform's "unset" (a spot fleet launch specification then uses the fleet's price).
    A price that spells a non-finite or absurdly large number is Unknown."""
    if isinstance(value, bool):
        return Unknown(f"not a price: {value!r}")
    if isinstance(value, int | float):
        checked = sane_number(value)
        return checked if isinstance(checked, Unknown) else str(value)
    if isinstance(value, str):
        return None if value == "" else sane_number_text(value)
    return value


def _list(value: Any) -> Any:
    """A list of scalars (ids, names): sets become lists; a lone Ref or string a 1-item list."""
    if value is None or isinstance(value, Unknown):
        return value
    if isinstance(value, Ref):
        return [value]
    if isinstance(value, list | tuple | set | frozenset):
        return [v for v in value if v is not None and v != ""]
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return Unknown(f"not a list: {value!r}")


def _blocks(value: Any) -> Any:
    """Nested blocks: a list of dicts, an Unknown, or None."""
    if value is None or isinstance(value, Unknown):
        return value
    if isinstance(value, Ref):
        return Unknown(f"block given as a reference to {value}")
    if isinstance(value, list):
        return [b for b in value if isinstance(b, dict | Unknown) or _is_map(b)]
    if _is_map(value):
        return [value]
    if isinstance(value, tuple):
        return [b for b in value if isinstance(b, Mapping | Unknown)]
    return Unknown(f"not a block: {value!r}")


def _one(value: Any) -> Any:
    """A single nested block (MaxItems 1): a dict, an Unknown, or None."""
    blocks = _blocks(value)
    if isinstance(blocks, Unknown):
        return blocks
    if not blocks:
        return None
    return blocks[0]


def _json_doc(value: Any) -> Any:
    """A policy document: JSON text parsed into a dict."""
    if value is None or value == "" or isinstance(value, Unknown | Ref | dict):
        return None if value == "" else value
    if isinstance(value, str):
        try:
            doc = json.loads(value)
        except ValueError:
            return Unknown("policy document is not valid JSON")
        return doc if isinstance(doc, dict) else Unknown("policy document is not a JSON object")
    return Unknown(f"not a policy document: {type(value).__name__}")


def _price_or_explicit_unset(value: Any) -> Any:
    # "" reaches here only where a translator kept it on purpose (an ASG's spot_max_price: AWS's
    # explicit "cap at the on-demand price"); elsewhere _pairs drops it as terraform's "unset".
    return value if value == "" else _price(value)


_CONVERTERS: dict[type[FieldType], Callable[[Any], Any]] = {
    kt.Bool: _bool, kt.Int: _int, kt.Num: _int, kt.Price: _price_or_explicit_unset,
    kt.Ids: _list, kt.Json: _json_doc}


def _convert(t: FieldType, _key: str, value: Any) -> Any:
    conv = _CONVERTERS.get(type(t))
    return value if conv is None else conv(value)


def _coerce(kind: str, attrs: Attrs) -> Attrs:
    """The attributes with each value coerced to its declared type (docs/resource-model.md)."""
    return coerce_fields(_SCHEMA.fields(kind), attrs, _convert)


def _put(d: Attrs, key: str, value: Any) -> None:
    if value is not None:
        d[key] = value


def _pairs(d: Attrs, src: Mapping[str, Any], spec: tuple[tuple[str, str], ...]) -> Attrs:
    """d[aws_key] = src[tf_key] for each (tf_key, aws_key) that is set ("" is terraform's
    "unset"). The value is coerced to its declared type afterwards (see ``_coerce``)."""
    get = src.get
    for tf_key, aws_key in spec:
        value = get(tf_key)
        if value is None or value == "":
            continue
        d[aws_key] = value
    return d


def _sub(src: Mapping[str, Any], spec: tuple[tuple[str, str], ...]) -> Any:
    """Translate one optional nested block with a flat spec; None when absent or empty."""
    block = _one(src)
    if block is None or isinstance(block, Unknown):
        return block
    out = _pairs({}, block, spec)
    return out or None


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
    ))
    _put(a, "LaunchTemplate", _lt_spec(v.get("launch_template")))
    _put(a, "MixedInstancesPolicy", _mixed_policy(v.get("mixed_instances_policy")))
    _put(a, "CapacityReservationSpecification", _capacity_reservation(v, group=True))
    name = _s(v.get("name"))
    _put(a, "AutoScalingGroupName", name)
    return "autoscaling.group", a, name, ()


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
    _put(a, "OnDemandOptions", _sub(v.get("on_demand_options"), (
        ("allocation_strategy", "AllocationStrategy"),)))
    _put(a, "LaunchTemplateConfigs", _template_configs(v.get("launch_template_config"),
                                                       "override", ("max_price", "MaxPrice")))
    return "ec2.fleet", a, None, ()


def _eks_node_group(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (
        ("node_group_name", "NodegroupName"),
        ("cluster_name", "ClusterName"),
        ("capacity_type", "CapacityType"),
        ("ami_type", "AmiType"),
        ("subnet_ids", "Subnets"),
        ("disk_size", "DiskSize"),
        ("node_role_arn", "NodeRole"),
        ("labels", "Labels"),
        ("version", "Version"),
        ("release_version", "ReleaseVersion"),
    ))
    types = _list(v.get("instance_types"))
    if types:
        a["InstanceTypes"] = types
    _put(a, "ScalingConfig", _sub(v.get("scaling_config"), (
        ("desired_size", "DesiredSize"), ("min_size", "MinSize"), ("max_size", "MaxSize"))))
    _put(a, "LaunchTemplate", _sub(v.get("launch_template"), (
        ("id", "Id"), ("name", "Name"), ("version", "Version"))))
    _put(a, "RemoteAccess", _sub(v.get("remote_access"), (
        ("ec2_ssh_key", "Ec2SshKey"), ("source_security_group_ids", "SourceSecurityGroups"))))
    name = _s(v.get("node_group_name"))
    return "eks.nodegroup", a, name, ()


def _batch_compute_environment(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (
        ("compute_environment_name", "ComputeEnvironmentName"),
        ("type", "Type"),
        ("state", "State"),
        ("service_role", "ServiceRole"),
    ))
    block = _one(v.get("compute_resources"))
    if isinstance(block, Unknown):
        a["ComputeResources"] = block
    elif block is not None:
        cr = _pairs({}, block, (
            ("type", "Type"),
            ("allocation_strategy", "AllocationStrategy"),
            ("bid_percentage", "BidPercentage"),
            ("min_vcpus", "MinvCpus"),
            ("max_vcpus", "MaxvCpus"),
            ("desired_vcpus", "DesiredvCpus"),
            ("subnets", "Subnets"),
            ("security_group_ids", "SecurityGroupIds"),
            ("instance_role", "InstanceRole"),
            ("image_id", "ImageId"),
            ("placement_group", "PlacementGroup"),
            ("spot_iam_fleet_role", "SpotIamFleetRole"),
            ("ec2_key_pair", "Ec2KeyPair"),
        ))
        types = _list(block.get("instance_type"))
        if types:
            cr["InstanceTypes"] = types
        _put(cr, "LaunchTemplate", _lt_spec(block.get("launch_template")))
        ec2 = _blocks(block.get("ec2_configuration"))
        if ec2:
            cr["Ec2Configuration"] = ec2
        a["ComputeResources"] = cr
    name = _s(v.get("compute_environment_name"))
    return "batch.compute_environment", a, name, ()


# The awscc provider (Cloud Control) spells a CloudFormation type's properties in snake_case and
# writes nested properties as attributes (objects and lists of objects), not blocks.
_AWSCC_VPC_CONFIG = (("security_group_ids", "SecurityGroupIds"), ("subnets", "Subnets"))
_AWSCC_EBS_VOLUME = (("volume_size_in_gb", "VolumeSizeInGB"),
                     ("volume_kms_key_id", "VolumeKmsKeyId"), ("root_volume", "RootVolume"))


def _awscc_instance_groups(value: Any) -> Any:
    """awscc ``instance_groups`` / ``restricted_instance_groups`` -> the CloudFormation
    ``InstanceGroups`` shape (the properties the kind declares; the rest is left out)."""
    groups = _blocks(value)
    if not isinstance(groups, list):
        return groups
    out: list[Any] = []
    for g in groups:
        if not _is_map(g):
            out.append(g)
            continue
        a = _pairs({}, g, (
            ("instance_group_name", "InstanceGroupName"),
            ("instance_type", "InstanceType"),
            ("instance_count", "InstanceCount"),
            ("execution_role", "ExecutionRole"),
            ("threads_per_core", "ThreadsPerCore"),
            ("training_plan_arn", "TrainingPlanArn"),
        ))
        _put(a, "LifeCycleConfig", _sub(g.get("life_cycle_config"), (
            ("on_create", "OnCreate"), ("source_s3_uri", "SourceS3Uri"))))
        configs = _blocks(g.get("instance_storage_configs"))
        if isinstance(configs, Unknown):
            a["InstanceStorageConfigs"] = configs
        elif configs:
            a["InstanceStorageConfigs"] = [
                c if isinstance(c, Unknown) else
                {"EbsVolumeConfig": _sub(c.get("ebs_volume_config"), _AWSCC_EBS_VOLUME)}
                for c in configs]
        _put(a, "OverrideVpcConfig", _sub(g.get("override_vpc_config"), _AWSCC_VPC_CONFIG))
        out.append(a)
    return out


def _awscc_sagemaker_cluster(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    """``awscc_sagemaker_cluster`` (``AWS::SageMaker::Cluster`` through Cloud Control): a
    SageMaker HyperPod cluster, as its CloudFormation template would declare it."""
    a = _pairs({}, v, (("cluster_name", "ClusterName"), ("node_recovery", "NodeRecovery")))
    orchestrator = _one(v.get("orchestrator"))
    if _is_map(orchestrator):
        _put(a, "Orchestrator", {"Eks": _sub(orchestrator.get("eks"),
                                             (("cluster_arn", "ClusterArn"),))})
    for tf_key, key in (("instance_groups", "InstanceGroups"),
                        ("restricted_instance_groups", "RestrictedInstanceGroups")):
        _put(a, key, _awscc_instance_groups(v.get(tf_key)))
    _put(a, "VpcConfig", _sub(v.get("vpc_config"), _AWSCC_VPC_CONFIG))
    name = _s(v.get("cluster_name"))
    return "sagemaker.cluster", a, name, ()


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


_TRANSLATORS: dict[str, Translator] = {
    "aws_ebs_volume": _ebs_volume,
    "aws_ebs_encryption_by_default": _ebs_encryption_by_default,
    "aws_ebs_default_kms_key": _ebs_default_kms_key,
    "aws_instance": _instance,
    "aws_launch_template": _launch_template,
    "aws_launch_configuration": _launch_configuration,
    "aws_autoscaling_group": _autoscaling_group,
    "aws_spot_instance_request": _spot_instance_request,
    "aws_spot_fleet_request": _spot_fleet_request,
    "aws_ec2_fleet": _ec2_fleet,
    "aws_eks_node_group": _eks_node_group,
    "aws_batch_compute_environment": _batch_compute_environment,
    "awscc_sagemaker_cluster": _awscc_sagemaker_cluster,
    "aws_vpc": _vpc,
    "aws_subnet": _subnet,
    "aws_route_table": _route_table,
    "aws_default_route_table": _default_route_table,
    "aws_route": _route,
    "aws_route_table_association": _route_table_association,
    "aws_main_route_table_association": _main_route_table_association,
    "aws_internet_gateway": _internet_gateway,
    "aws_internet_gateway_attachment": _internet_gateway_attachment,
    "aws_vpc_endpoint": _vpc_endpoint,
    "aws_vpc_endpoint_route_table_association": _vpc_endpoint_route_table_association,
    "aws_vpc_endpoint_policy": _vpc_endpoint_policy,
}

# Kubernetes objects applied by Terraform: the Karpenter source translates them (imported only
# when a root module has one of these resources).
MANIFEST_TYPES: frozenset[str] = frozenset({"kubectl_manifest", "kubernetes_manifest",
                                            "helm_release"})
# Attributes whose text the HCL source renders with holes where parts are not known
# (scanner.sources.yaml_documents.holes), so that what is known of a manifest is still read.
HOLED_ATTRIBUTES: dict[str, tuple[str, ...]] = {"kubectl_manifest": ("yaml_body",),
                                                "helm_release": ("values",)}
SUPPORTED_TYPES: frozenset[str] = frozenset(_TRANSLATORS) | MANIFEST_TYPES


def _is_map(value: Any) -> bool:
    return isinstance(value, dict) or (value is not None and isinstance(value, Mapping))


def _tags(values: Mapping[str, Any]) -> dict[str, str]:
    tags: dict[str, str] = {}
    for key in ("tags_all", "tags"):  # explicit tags win over provider default tags
        raw = values.get(key)
        if raw and _is_map(raw):
            for k, v in raw.items():
                if isinstance(k, str) and isinstance(v, str):
                    tags[k] = v
        elif isinstance(raw, list):  # the awscc provider's tags: [{key = …, value = …}]
            for item in raw:
                if _is_map(item) and isinstance(k := item.get("key"), str) \
                        and isinstance(v := item.get("value"), str):
                    tags[k] = v
    return tags


def translate(
    tf_type: str,
    address: str,
    values: Mapping[str, Any],
    *,
    provenance: Provenance,
    scope: str,
    skips: tuple[Skip, ...] = (),
    notices: list[Notice] | None = None,
    errors: list[InputError] | None = None,
    manifests: Any = None,
) -> list[Resource]:
    """The normalized Resource(s) for one Terraform resource instance; [] for other types.
    ``notices`` / ``errors``: where a translator that reads text (a Kubernetes manifest) says
    what it could not read; ``manifests``: the root module's (or plan's)
    :class:`~scanner.sources.karpenter.terraform.ManifestBudget`."""
    if tf_type in MANIFEST_TYPES:
        from scanner.sources.karpenter.terraform import from_terraform

        found, said, wrong = from_terraform(tf_type, address, values, provenance=provenance,
                                            scope=scope, skips=skips, budget=manifests)
        if notices is not None:
            notices.extend(said)
        if errors is not None:
            errors.extend(wrong)
        return found
    fn = _TRANSLATORS.get(tf_type)
    if fn is None:
        return []
    if not _is_map(values):
        values = {}
    kind, attrs, name, extra = fn(values)
    attrs = _coerce(kind, attrs)
    tags = _tags(values)
    if tf_type == "aws_autoscaling_group":
        tags.update(_asg_tags(values))
    if not isinstance(name, str):
        name = tags.get("Name")
    aliases: list[str] = []
    for candidate in (values.get("id"), values.get("arn"), name, *extra):
        if isinstance(candidate, str) and candidate and candidate != address \
                and candidate not in aliases:
            aliases.append(candidate)
    return [Resource(kind=kind, id=address, attrs=attrs, provenance=provenance, scope=scope,
                     name=name, tags=tags, aliases=tuple(aliases), skips=tuple(skips),
                     declared=True, tags_unknown=_tags_unknown(values))]


def _tags_unknown(values: Mapping[str, Any]) -> Unknown | None:
    """Why some tags are not known: the tags map, or a tag's key or value, is known only at
    apply (``tags = var.tags``, ``Owner = var.owner``); None when every tag is known."""
    for key in ("tags", "tags_all"):
        raw = values.get(key)
        if isinstance(raw, Unknown):
            return Unknown(f"{key} is not known ({raw.reason or 'known only at apply'})")
        items = raw.items() if _is_map(raw) else ()
        if isinstance(raw, list):  # awscc: [{key = …, value = …}]
            items = [(i.get("key"), i.get("value")) for i in raw if _is_map(i)]
        for k, v in items:
            if not isinstance(k, str) or not isinstance(v, str):
                what = f"tag {k}" if isinstance(k, str) else "a tag's key"
                reason = v.reason if isinstance(v, Unknown) and v.reason else "not known"
                return Unknown(f"{what} in {key} is not known ({reason})")
    return None


def merge_ebs_defaults(resources: list[Resource]) -> list[Resource]:
    """Fold each scope's ``aws_ebs_default_kms_key`` into its ``aws_ebs_encryption_by_default``.

    Both translate to ``ec2.ebs_defaults``; the key-only one (no ``EbsEncryptionByDefault``)
    gives its ``KmsKeyId`` to the scope's encryption-by-default resource and disappears (its
    address becomes an alias). Without such a resource in the scope it stays on its own.
    Order is kept otherwise.
    """
    flags: dict[tuple[str, str | None], Resource] = {}  # by scope and provider configuration
    keys: list[Resource] = []
    for r in resources:
        if r.kind == "ec2.ebs_defaults":
            if "EbsEncryptionByDefault" in r.attrs:
                flags.setdefault((r.scope, r.provenance.provider), r)
            else:
                keys.append(r)
    if not keys:
        return resources
    merged: set[int] = set()
    for key in keys:
        target = flags.get((key.scope, key.provenance.provider))
        if target is None:
            continue
        if "KmsKeyId" in key.attrs and target.attrs.get("KmsKeyId") is None:
            target.attrs["KmsKeyId"] = key.attrs["KmsKeyId"]
        target.aliases = (*target.aliases, key.id)
        target.skips = (*target.skips, *key.skips)
        merged.add(id(key))
    return [r for r in resources if id(r) not in merged]
