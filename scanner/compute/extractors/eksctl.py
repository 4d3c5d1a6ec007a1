"""``eksctl.node_group``: an eksctl node group.

Unmanaged (``nodeGroups``): an Auto Scaling group that eksctl builds; its
``instancesDistribution`` is the group's mixed instances policy, so the split, the spot offers
(``maxPrice``) and the pools are judged exactly as an Auto Scaling group's (``group_split``).
Without one, the group is all on-demand.

Managed (``managedNodeGroups``): an EKS managed node group. One capacity type for the whole
group (``spot``), no spot max price (EKS sets none) and a spot allocation strategy EKS chooses:
no on-demand/spot split to judge, only the diversity of its spot pools.

Purchase option (both): ``instanceMarketOptions.marketType: capacity-block`` is a Capacity
Block, and ``capacityReservation`` (``capacityReservationTarget.capacityReservationID`` or
``…ResourceGroupARN``, ``capacityReservationPreference``) a capacity reservation, read as a
launch template's (``scanner.compute.purchase.market_option``): prepaid capacity has no
on-demand/spot band and no spot saving. Otherwise spot (``spot: true``, or an unmanaged
group's split) or on-demand.

Storage: the root volume eksctl maps (``volumeEncrypted``; absent: not set, the account's
default encryption decides) and the ``additionalVolumes``; with a launch template of the user's
(managed), the template's, which is not in the file. Network: without ``privateNetworking``
eksctl places the nodes in the public subnets; in a VPC eksctl creates, those assign public IPs
(eksctl sets ``MapPublicIpOnLaunch`` on them) and private ones do not; in an existing VPC the
subnets are the ones named (ids), judged when the scan holds them.
"""

from __future__ import annotations

from typing import Any

from scanner.compute.index import Views
from scanner.compute.purchase import group_option, group_split, market_option
from scanner.compute.registry import DEVICES, GROUP, LAUNCHES, PLACES, POOLS, SPOT, extractor
from scanner.compute.values import as_list, iter_dicts, to_int
from scanner.compute.view import (
    ON_DEMAND,
    Attr,
    Capacity,
    ComputeView,
    Device,
    GpuRequirement,
    Network,
    Purchase,
    SpotOffer,
    SpotPools,
    Types,
)
from scanner.compute.view import (
    SPOT as SPOT_OPTION,
)
from scanner.model import Resource, Unknown

DIST = "InstancesDistribution"
DEFAULT_TYPE = "m5.large"  # eksctl's default node type
DEFAULT_COUNT = 2  # eksctl's default node count when no size is given
PUBLIC_FALSE_NOTE = ("privateNetworking is false: eksctl launches the nodes into the public "
                     "subnets of the VPC it creates, which assign public IPs")
PRIVATE_NOTE = "privateNetworking is true: the private subnets of the VPC eksctl creates"
PUBLIC_NOTE = ("privateNetworking is not set: eksctl launches the nodes into the public subnets "
               "of the VPC it creates, which assign public IPs")


@extractor("eksctl.node_group", provides=(LAUNCHES, PLACES, SPOT, GROUP, POOLS, DEVICES),
           rank=40)
def node_group(r: Resource, views: Views) -> ComputeView:
    managed = r.get("Managed") is True
    dist = r.get(DIST)
    types = _types(r, managed, dist)
    capacity = _capacity(r)
    purchase = _managed_purchase(r, types) if managed else _unmanaged_purchase(
        r, types, capacity, dist)
    return ComputeView(r, types=types, capacity=capacity, purchase=purchase,
                       devices=_devices(r, managed), network=_network(r))


SELECTED = "chosen by eksctl's instanceSelector when the group is created"


def _types(r: Resource, managed: bool, dist: Any) -> Types:
    selector = r.get("InstanceSelector")
    listed: list[Any] = []
    if not managed and isinstance(dist, dict) and dist.get("InstanceTypes") is not None:
        listed = as_list(dist.get("InstanceTypes"))
    elif isinstance(dist, Unknown):
        listed = [dist]
    elif managed and r.get("InstanceTypes") is not None:
        listed = as_list(r.get("InstanceTypes"))
    itype = r.get("InstanceType")
    if not listed and itype is not None and itype != "mixed":
        listed = [itype]
    if not listed and isinstance(selector, Unknown):
        return Types((selector,))
    if not listed and isinstance(selector, dict) and selector:
        return Types((), selector_requirement(selector))
    if not listed:
        if managed and r.get("LaunchTemplate") is not None:
            return Types((Unknown("the instance type of its launch template (not in the "
                                  "file)"),))
        listed = [DEFAULT_TYPE]
    return Types(tuple(t if isinstance(t, str | Unknown) else Unknown(f"{t!r} is not an "
                                                                        "instance type")
                       for t in listed))


def selector_requirement(selector: dict[str, Any]) -> GpuRequirement:
    """What an ``instanceSelector`` says about GPUs: ``gpus`` 1 or more asks for GPU types,
    ``gpus: 0`` excludes them, and without ``gpus`` it asks for none (vCPUs, memory and the
    CPU architecture only: judged as what it asks for, CPU compute, as a launch template's
    InstanceRequirements without accelerator attributes is)."""
    path = "InstanceSelector.gpus"
    if "gpus" not in selector or selector["gpus"] is None:
        asked = ", ".join(f"{k} {v}" for k, v in selector.items()
                          if isinstance(v, str | int | float))
        return GpuRequirement(False, "InstanceSelector",
                              f"no gpus ({asked or 'no criteria'}): types without GPUs asked")
    gpus = to_int(selector["gpus"])
    if isinstance(gpus, Unknown):
        return GpuRequirement(Unknown(f"instanceSelector.gpus is not known: {gpus.reason}"),
                              path)
    if gpus is None or gpus < 0:
        return GpuRequirement(Unknown(f"instanceSelector.gpus {selector['gpus']!r} is not a "
                                      "GPU count"), path)
    return GpuRequirement(gpus >= 1, path, f"gpus {gpus}")


def _offered(types: Types) -> tuple[Any, ...]:
    """The types spot capacity is offered for: those named, else one that is not known."""
    return types.values or (Unknown(SELECTED),)


def _capacity(r: Resource) -> Capacity:
    """The sizes, with eksctl's defaults for those left out: minSize = desiredCapacity (else 2),
    maxSize = desiredCapacity (else minSize), desiredCapacity = minSize."""
    desired, low, high = (to_int(r.get(k)) for k in ("DesiredCapacity", "MinSize", "MaxSize"))
    path, low_path, high_path = "DesiredCapacity", "MinSize", "MaxSize"
    if desired is None and low is None and high is None:
        desired, path = DEFAULT_COUNT, "DesiredCapacity (eksctl's default: 2)"
    if low is None:
        low, low_path = (desired, "MinSize (eksctl's default: desiredCapacity)") \
            if desired is not None else (DEFAULT_COUNT, "MinSize (eksctl's default: 2)")
    if high is None:
        high, high_path = (desired, "MaxSize (eksctl's default: desiredCapacity)") \
            if desired is not None else (low, "MaxSize (eksctl's default: minSize)")
    if desired is None:
        desired, path = low, "DesiredCapacity (eksctl's default: minSize)"
    return Capacity(desired=Attr(desired, path), min=Attr(low, low_path),
                    max=Attr(high, high_path))


def _unmanaged_purchase(r: Resource, types: Types, capacity: Capacity, dist: Any) -> Purchase:
    base = Attr(dist.get("OnDemandBaseCapacity") if isinstance(dist, dict) else None,
                f"{DIST}.OnDemandBaseCapacity")
    percent = Attr(dist.get("OnDemandPercentageAboveBaseCapacity")
                   if isinstance(dist, dict) else None,
                   f"{DIST}.OnDemandPercentageAboveBaseCapacity")
    has_dist = isinstance(dist, Unknown) or (isinstance(dist, dict) and bool(dist))
    split = group_split(capacity, dist if has_dist else None, all_spot=False, base=base,
                        percent=percent)
    spot: tuple[SpotOffer, ...] | Unknown = ()
    if has_dist:
        if isinstance(split, Unknown):
            spot = split
        elif split is not None and split.spot > 0:
            price = dist.get("MaxPrice") if isinstance(dist, dict) else None
            spot = tuple(SpotOffer(t, price, f"{DIST}.MaxPrice", split.spot)
                         for t in dict.fromkeys(_offered(types)))
    strategy = dist.get("SpotAllocationStrategy") if isinstance(dist, dict) else dist
    own, own_path = _market(r)
    option, option_path = group_option(split, own, own_path, (ON_DEMAND, ""),
                                       DIST if has_dist else "")
    return Purchase(spot=spot, split=split, on_demand_base=base, on_demand_percent=percent,
                    strategy=Attr(strategy, f"{DIST}.SpotAllocationStrategy"),
                    maybe_spot=has_dist, split_path=DIST, pools_path=DIST,
                    option=option, option_path=option_path)


# eksctl's spelling of a launch template's market and reservation settings
_RESERVATION_KEYS = {"capacityReservationID": "CapacityReservationId",
                     "capacityReservationResourceGroupARN": "CapacityReservationResourceGroupArn"}
_PATHS = (("CapacityReservationSpecification", "CapacityReservation"),
          ("CapacityReservationPreference", "capacityReservationPreference"),
          ("CapacityReservationTarget", "capacityReservationTarget"),
          ("CapacityReservationId", "capacityReservationID"),
          ("CapacityReservationResourceGroupArn", "capacityReservationResourceGroupARN"),
          ("MarketType", "marketType"))


def _market(r: Resource) -> tuple[Any, str]:
    """The node group's own purchase option (its ``instanceMarketOptions`` and
    ``capacityReservation``, eksctl's spelling) and the attribute that decides it."""
    markets = r.get("InstanceMarketOptions")
    market = markets.get("marketType") if isinstance(markets, dict) else (
        markets if isinstance(markets, Unknown) else None)
    option, path = market_option(market, _reservation(r.get("CapacityReservation")))
    for theirs, ours in _PATHS:
        path = path.replace(theirs, ours)
    return option, path


def _reservation(spec: Any) -> Any:
    """``capacityReservation`` as a launch template's ``CapacityReservationSpecification``; a
    target that names neither a reservation nor a resource group eksctl knows is not known."""
    if not isinstance(spec, dict):
        return spec if isinstance(spec, Unknown) else None
    out: dict[str, Any] = {}
    if "capacityReservationPreference" in spec:
        out["CapacityReservationPreference"] = spec["capacityReservationPreference"]
    target = spec.get("capacityReservationTarget")
    if isinstance(target, dict):
        named = {ours: target[theirs] for theirs, ours in _RESERVATION_KEYS.items()
                 if theirs in target}
        if not named and any(v not in (None, "", []) for v in target.values()):
            named = {"CapacityReservationId": Unknown(
                "capacityReservationTarget names no capacityReservationID or "
                "capacityReservationResourceGroupARN")}
        unknown = next((v for v in named.values() if isinstance(v, Unknown)), None)
        out["CapacityReservationTarget"] = unknown if unknown is not None else named
    elif target is not None:
        out["CapacityReservationTarget"] = target
    return out


def _managed_purchase(r: Resource, types: Types) -> Purchase:
    spot = r.get("Spot")
    if spot is not True and not isinstance(spot, Unknown):
        option, path = _market(r)
        return Purchase(option=option, option_path=path)
    pools = (SpotPools(
        spot=spot, types=_offered(types),
        strategy=Attr("capacity-optimized", "", note="EKS allocates a managed node group's "
                                                     "spot capacity (capacity-optimized)"),
        default_strategy="capacity-optimized", chosen_by_service=True,
        path="InstanceTypes" if r.get("InstanceTypes") is not None else "InstanceType"),)
    return Purchase(pools=pools, maybe_spot=True,
                    option=spot if isinstance(spot, Unknown) else SPOT_OPTION, option_path="Spot")


def _devices(r: Resource, managed: bool) -> tuple[Device, ...]:
    if managed and r.get("LaunchTemplate") is not None:
        lt = r.get("LaunchTemplate")
        ident = lt.get("Id") if isinstance(lt, dict) else None
        return (Device("LaunchTemplate", "the volumes of its launch template",
                       Unknown(f"its launch template {ident or ''} is not in the file".replace(
                           "  ", " "))),)
    volume = r.get("VolumeName") or "/dev/xvda"
    out = [Device("VolumeEncrypted", str(volume) if isinstance(volume, str) else "root",
                  r.get("VolumeEncrypted"), r.get("VolumeKmsKeyID"),
                  snapshot=r.get("SnapshotID"), snapshot_path="SnapshotID")]
    for i, v in iter_dicts(r.get("AdditionalVolumes")):
        name = v.get("VolumeName")
        out.append(Device(f"AdditionalVolumes[{i}].VolumeEncrypted",
                          name if isinstance(name, str) else f"additional volume {i + 1}",
                          v.get("VolumeEncrypted"), v.get("VolumeKmsKeyID"),
                          snapshot=v.get("SnapshotID"),
                          snapshot_path=f"AdditionalVolumes[{i}].SnapshotID"))
    return tuple(out)


def _network(r: Resource) -> Network:
    private = r.get("PrivateNetworking")
    vpc = r.get("Vpc")
    if isinstance(private, Unknown):
        return Network(placed=True, public_ip=(Attr(private, "PrivateNetworking"),))
    topology = "private" if private is True else "public"
    existing = isinstance(vpc, dict) and (vpc.get("id") is not None
                                          or vpc.get("subnets") is not None)
    if isinstance(vpc, Unknown):
        return Network(placed=True, subnets=(vpc,), subnets_path="Vpc")
    if not existing:
        # eksctl creates the VPC: public subnets map public IPs, private ones route via NAT
        note = PRIVATE_NOTE if private is True else PUBLIC_FALSE_NOTE if private is False \
            else PUBLIC_NOTE
        return Network(placed=True, public_ip=(Attr(private is not True, "PrivateNetworking",
                                                    note=note, derived=True, shown=private),))
    subnets = vpc.get("subnets") if isinstance(vpc, dict) else None
    named = r.get("Subnets")
    return Network(placed=True, subnets=_subnet_ids(subnets, topology, named),
                   subnets_path="Subnets" if named is not None else f"Vpc.subnets.{topology}")


def _subnet_ids(subnets: Any, topology: str, named: Any) -> tuple[Any, ...]:
    """The subnet ids a node group lands in: the names it lists (keys of ``vpc.subnets.<topology>``
    or ids), else every subnet of its topology."""
    if isinstance(subnets, Unknown):
        return (subnets,)
    section = subnets.get(topology) if isinstance(subnets, dict) else None
    if isinstance(section, Unknown):
        return (section,)
    section = section if isinstance(section, dict) else {}
    def ident(entry: Any, key: str) -> Any:
        if isinstance(entry, dict) and entry.get("id") is not None:
            return entry["id"]
        if isinstance(entry, Unknown):
            return entry
        return Unknown(f"subnet {key} of the VPC section has no id (eksctl looks it up by "
                       "CIDR or zone)")

    if isinstance(named, Unknown):
        return (named,)
    if named:
        out = []
        for n in as_list(named):
            for topo in (topology, "private" if topology == "public" else "public"):
                sec = subnets.get(topo) if isinstance(subnets, dict) else None
                if isinstance(sec, dict) and isinstance(n, str) and n in sec:
                    out.append(ident(sec[n], n))
                    break
            else:
                out.append(n)
        return tuple(out)
    if not section:
        return (Unknown(f"the VPC section names no {topology} subnet"),)
    return tuple(ident(v, k) for k, v in section.items())
