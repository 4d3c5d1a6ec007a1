"""The launch specification: the one shape behind an instance's own attributes, a launch
template's ``LaunchTemplateData``, a launch configuration, a spot request's
``LaunchSpecification`` and a spot fleet's ``LaunchSpecifications[]`` (instance type, block
device mappings, network interfaces, public IP flag, market options). Extractors read it here once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scanner.compute.purchase import market_option
from scanner.compute.values import as_list, iter_dicts, ordinal
from scanner.compute.view import Attr, Device, GpuRequirement
from scanner.model import Ref, Unknown, dig
from scanner.model.graph import ResourceIndex

ROOT_FROM_AMI = "root (from the AMI)"
# The device name the Terraform sources give an instance's root_block_device: the one mapping
# that certainly is the root device (other names depend on the AMI).
ROOT_DEVICE = "root"
# The names a mapping overrides the AMI's root volume with: the two names EC2 reserves for the
# root device (/dev/xvda: Amazon Linux, Bottlerocket, most HVM AMIs; /dev/sda1: Ubuntu, RHEL,
# Windows), with or without /dev/. Any other name is a data volume, and the root volume comes
# from the AMI beside it; a name that is not known may be either.
ROOT_NAMES = frozenset({ROOT_DEVICE, "/dev/xvda", "/dev/sda1", "xvda", "sda1"})


@dataclass(frozen=True, eq=False)
class LaunchSpec:
    instance_type: Attr
    mappings: Any  # BlockDeviceMappings as given: None (absent), a list, or Unknown
    devices: tuple[Device, ...]  # the devices the mappings declare (no synthetic root)
    mappings_path: str
    public_ip: tuple[Attr, ...]  # AssociatePublicIpAddress settings, own flag first
    subnets: tuple[Attr, ...]  # SubnetId, then each network interface's SubnetId
    attached_interface: bool  # a network interface given by id (an existing ENI)
    spot_market: bool | Unknown  # InstanceMarketOptions.MarketType is spot
    spot_max_price: Attr  # InstanceMarketOptions.SpotOptions.MaxPrice
    zone: Any  # AvailabilityZone (or Placement.AvailabilityZone)
    where: str = ""  # " of the second launch specification" when there are several
    requirement: GpuRequirement | None = None  # InstanceRequirements: types chosen by attributes
    # The purchase option (scanner.compute.purchase.market_option) and the attribute deciding it
    option: str | Unknown = "on-demand"
    option_path: str = ""

    @property
    def maps_root(self) -> bool | Unknown:
        """Does one of its EBS mappings override the AMI's root volume? (see ``maps_root``)"""
        return maps_root(self.mappings)

    @property
    def sets_root_device(self) -> bool:
        return self.maps_root is True

    def devices_or_root(self) -> tuple[Device, ...]:
        """The declared devices, and the root volume from the AMI (Encrypted unset: the
        account's default decides) when no mapping is the root device: no mapping at all, or
        data volumes only. When whether one is the root is not known (a device name that is
        not known), the AMI's root volume is that Unknown."""
        return with_root(self.devices, self.mappings, self.mappings_path, self.where)


def unknown_spec(why: Unknown, prefix: str, where: str = "") -> LaunchSpec:
    """A specification that is not known as a whole (a template version that could not be
    read, a template that may not exist): every fact it would give is that Unknown, never an
    absence."""
    path = prefix.rstrip(".")
    mappings_path = f"{prefix}BlockDeviceMappings"
    return LaunchSpec(
        instance_type=Attr(why, f"{prefix}InstanceType"), mappings=why,
        devices=(Device(mappings_path, f"every block device mapping{where}", why),),
        mappings_path=mappings_path, public_ip=(Attr(why, path),),
        subnets=(Attr(why, f"{prefix}NetworkInterfaces"),),
        attached_interface=False, spot_market=why,
        spot_max_price=Attr(why, f"{prefix}InstanceMarketOptions.SpotOptions.MaxPrice"),
        zone=None, where=where, option=why, option_path=f"{prefix}InstanceMarketOptions")


def root_from_ami(mappings_path: str, where: str = "", encrypted: Any = None) -> Device:
    return Device(f"{mappings_path}(root)", ROOT_FROM_AMI + where, encrypted)


def with_root(devices: tuple[Device, ...], mappings: Any, mappings_path: str,
              where: str = "") -> tuple[Device, ...]:
    """``devices`` (those ``mappings`` declare), and the AMI's root volume beside them when no
    mapping replaces it (Encrypted unset: the account's default decides; an Unknown when
    whether one replaces it is not known)."""
    root = maps_root(mappings)
    if root is True or isinstance(mappings, Unknown):
        return devices
    encrypted = root if isinstance(root, Unknown) else None
    return (*devices, root_from_ami(mappings_path, where, encrypted))


def maps_root(mappings: Any) -> bool | Unknown:
    """Does a BlockDeviceMappings list override the AMI's root volume? True when an EBS mapping
    has a root device name (``ROOT_NAMES``) or says it is the root (Karpenter's
    ``rootVolume``); an Unknown when none does but a mapping, or an EBS mapping's device name,
    is not known (it may be the root); else False (no mapping, or data volumes only: the root
    volume comes from the AMI)."""
    if isinstance(mappings, Unknown):
        return mappings
    unknown: Unknown | None = None
    value: Any  # the mapping not known, or its device name that is not a string
    for i, m in enumerate(as_list(mappings)):
        if isinstance(m, Unknown):
            what, value = f"the {ordinal(i)} block device mapping is not known", m
        elif not isinstance(m, dict) or "Ebs" not in m:
            continue  # an instance-store or NoDevice mapping never holds the root volume
        elif m.get("RootVolume") is True:
            return True
        elif isinstance(m.get("DeviceName"), str):
            if m["DeviceName"].strip() in ROOT_NAMES:
                return True
            continue
        else:
            value = m.get("DeviceName")
            what = (f"the device name of the {ordinal(i)} block device mapping is "
                    + ("not given" if value is None else "not known"))
        if unknown is None:
            reason = f" ({value.reason})" if isinstance(value, Unknown) and value.reason else ""
            unknown = Unknown("whether a mapping replaces the AMI's root volume is not known: "
                              f"{what}{reason}")
    return False if unknown is None else unknown


EMPTY: dict[str, Any] = {}


def launch_spec(data: Any, prefix: str = "", where: str = "") -> LaunchSpec:
    """Read a launch specification. ``prefix`` is its attribute path ("", "LaunchTemplateData.",
    …); ``where`` ends a device's name when there are several specifications
    (" of the second launch specification")."""
    if isinstance(data, Unknown):
        return unknown_spec(data, prefix, where)
    d = data if isinstance(data, dict) else EMPTY
    nis_path = f"{prefix}NetworkInterfaces"
    flags = [Attr(d.get("AssociatePublicIpAddress"), f"{prefix}AssociatePublicIpAddress")]
    subnets = [Attr(d.get("SubnetId"), f"{prefix}SubnetId")]
    attached = False
    nis = d.get("NetworkInterfaces")
    if isinstance(nis, Unknown):  # dynamic "network_interfaces" over a value not known
        flags.append(Attr(nis, nis_path))
        subnets.append(Attr(nis, nis_path))
    for i, ni in iter_dicts(nis):
        flags.append(Attr(ni.get("AssociatePublicIpAddress"),
                          f"{nis_path}[{i}].AssociatePublicIpAddress"))
        subnets.append(Attr(ni.get("SubnetId"), f"{nis_path}[{i}].SubnetId"))
        if ni.get("NetworkInterfaceId") is not None:
            attached = True
    market = dig(d, "InstanceMarketOptions.MarketType")
    spot: bool | Unknown = market if isinstance(market, Unknown) else (
        isinstance(market, str) and market.lower() == "spot")
    option, option_path = market_option(market, d.get("CapacityReservationSpecification"),
                                        prefix)
    mappings_path = f"{prefix}BlockDeviceMappings"
    mappings = d.get("BlockDeviceMappings")
    zone = d.get("AvailabilityZone")
    if zone is None:
        zone = dig(d, "Placement.AvailabilityZone")
    return LaunchSpec(
        instance_type=Attr(d.get("InstanceType"), f"{prefix}InstanceType"),
        mappings=mappings,
        devices=tuple(block_devices(mappings, mappings_path, where)),
        mappings_path=mappings_path,
        public_ip=tuple(f for f in flags if f.value is not None),
        subnets=tuple(s for s in subnets if s.value is not None),
        attached_interface=attached,
        spot_market=spot,
        spot_max_price=Attr(dig(d, "InstanceMarketOptions.SpotOptions.MaxPrice"),
                            f"{prefix}InstanceMarketOptions.SpotOptions.MaxPrice"),
        zone=zone,
        where=where,
        requirement=_requirement(d.get("InstanceRequirements"), prefix),
        option=option,
        option_path=option_path,
    )


def _requirement(value: Any, prefix: str) -> GpuRequirement | None:
    if value is None:
        return None
    from scanner.compute.requirements import gpu_requirement  # rare: not on the import path

    return gpu_requirement(value, f"{prefix}InstanceRequirements")


def block_devices(value: Any, path: str, where: str = "") -> list[Device]:
    """The EBS devices of a BlockDeviceMappings list (instance-store mappings carry none)."""
    if isinstance(value, Unknown):
        return [Device(path, f"every block device mapping{where}", value)]
    out: list[Device] = []
    for i, m in enumerate(as_list(value)):
        if isinstance(m, Unknown):  # a mapping not known (a dynamic block over unknowns)
            out.append(Device(f"{path}[{i}]", _device_name(None, i, where), m))
            continue
        if not isinstance(m, dict):
            continue
        ebs = m.get("Ebs")
        name = _device_name(m.get("DeviceName"), i, where)
        if isinstance(ebs, Unknown):
            out.append(Device(f"{path}[{i}].Ebs", name, ebs))
        elif isinstance(ebs, dict):
            out.append(Device(f"{path}[{i}].Ebs", name, ebs.get("Encrypted"),
                              ebs.get("KmsKeyId"), snapshot=ebs.get("SnapshotId"),
                              snapshot_path=f"{path}[{i}].Ebs.SnapshotId"))
    return out


def _device_name(name: Any, position: int, where: str) -> str:
    if isinstance(name, str) and name:
        return name
    if isinstance(name, Ref):
        return str(name)
    return f"the {ordinal(position)} block device mapping{where}"


def decisive(flags: tuple[Attr, ...]) -> Attr | None:
    """The setting that decides among several AssociatePublicIpAddress flags: the first true or
    unknown one, else the first false one, else None (none set)."""
    for f in flags:
        if f.value is True or isinstance(f.value, Unknown):
            return f
    for f in flags:
        if f.value is False:
            return f
    return None


def subnet_values(values: Any) -> tuple[Any, ...]:
    """Subnet references as a flat tuple: a comma-separated string is split (live
    ``VPCZoneIdentifier``, CloudFormation lists joined by hand), absent ones are dropped."""
    out: list[Any] = []
    for ref in values:
        if isinstance(ref, str) and "," in ref:
            out.extend(part.strip() for part in ref.split(",") if part.strip())
        elif ref is not None:
            out.append(ref)
    return tuple(out)


DEFAULT_VPC = ("no subnet is given: it launches into the default VPC, whose default subnets "
               "assign public IPs, and the default VPC is not in the scan")


def placement(subnets: tuple[Any, ...], zones: tuple[Any, ...], index: ResourceIndex,
              scope: str, *, attached_interface: bool = False) -> tuple[Any, ...]:
    """The subnets capacity lands in. Without a subnet (only Availability Zones, or nothing)
    EC2 uses the default VPC: its default subnets in those zones when the scope holds them
    (observed live), else an Unknown saying so. An existing network interface brings its own
    subnet (and no public IP is assigned to it at launch)."""
    if subnets or attached_interface:
        return subnets
    defaults = index.default_subnets(scope, zones)
    if defaults:
        return tuple(s.id for s in defaults)
    return (Unknown(DEFAULT_VPC),)
