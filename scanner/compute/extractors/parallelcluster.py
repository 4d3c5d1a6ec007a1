"""ParallelCluster v3: ``parallelcluster.queue``, ``parallelcluster.head_node`` and
``parallelcluster.shared_storage``.

A queue launches its compute resources' instance types (``InstanceType``, ``Instances``, or an
AWS Batch queue's ``InstanceTypes``) into ``Networking.SubnetIds``; ``AssignPublicIp`` is its
explicit public-IP setting (absent: the subnet decides). With ``CapacityType: SPOT`` each
compute resource is a spot fleet: its max price is ``SpotPrice`` (absent: the on-demand price,
ParallelCluster's default) or, for AWS Batch, ``SpotBidPercentage`` % of on-demand (absent:
100 %), and its pools are its instance types with the queue's ``AllocationStrategy`` (absent:
lowest-price; an AWS Batch queue has none: Batch's BEST_FIT, lowest price first). A queue has no
on-demand/spot split: one capacity type for all of it.

Storage: the root volumes (``LocalStorage.RootVolume.Encrypted``, absent = true,
ParallelCluster's default) and the shared EBS volumes (``EbsSettings.Encrypted``, absent =
true); an existing volume (``VolumeId``) is not described by the configuration.
"""

from __future__ import annotations

from typing import Any

from scanner.compute.extractors.batch_compute_environment import expand
from scanner.compute.index import Views
from scanner.compute.launch import subnet_values
from scanner.compute.purchase import reservation_option
from scanner.compute.registry import DEVICES, LAUNCHES, PLACES, POOLS, SPOT, extractor
from scanner.compute.values import as_list, iter_dicts
from scanner.compute.view import (
    CAPACITY_BLOCK,
    ON_DEMAND,
    RESERVATION_TARGETED,
    Attr,
    ComputeView,
    Device,
    Network,
    Purchase,
    SpotOffer,
    SpotPools,
    Types,
)
from scanner.compute.view import SPOT as SPOT_OPTION
from scanner.model import Resource, Unknown, dig

ROOT = "ComputeSettings.LocalStorage.RootVolume"
DEFAULT = "encrypted by default (ParallelCluster's default)"


def _types_of(cr: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    if cr.get("InstanceType") is not None:
        out.append(cr["InstanceType"])
    instances = cr.get("Instances")
    if isinstance(instances, Unknown):
        out.append(instances)
    for _i, item in iter_dicts(instances):
        if item.get("InstanceType") is not None:
            out.append(item["InstanceType"])
    types = cr.get("InstanceTypes")
    out.extend(types if isinstance(types, list) else [types] if types is not None else [])
    return [_one_type(t) for t in out]


def _one_type(value: Any) -> Any:
    """An instance type as written, or Unknown for a value of another shape (a list, a
    mapping: never a value that breaks a set)."""
    if isinstance(value, str | Unknown):
        return value
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    return Unknown(f"{shown} is not an instance type")


@extractor("parallelcluster.queue", provides=(LAUNCHES, PLACES, SPOT, POOLS, DEVICES), rank=50)
def queue(r: Resource, views: Views) -> ComputeView:
    crs = r.get("ComputeResources")
    batch = r.get("Scheduler") == "awsbatch"
    per_cr: list[tuple[int, dict[str, Any], list[Any]]] = [
        (i, cr, _types_of(cr)) for i, cr in iter_dicts(crs)]
    types: list[Any] = [t for _i, _cr, ts in per_cr for t in ts]
    if isinstance(crs, Unknown):
        types = [crs]
    elif not types:
        types = [Unknown("no instance type in its compute resources")]

    capacity = r.get("CapacityType")
    spot: tuple[SpotOffer, ...] | Unknown = ()
    pools: tuple[SpotPools, ...] = ()
    if isinstance(capacity, Unknown):
        spot = capacity
        pools = (SpotPools(spot=capacity),)
    elif isinstance(capacity, str) and capacity.upper() == "SPOT":
        offers: list[SpotOffer] = []
        pool_list: list[SpotPools] = []
        for i, cr, ts in per_cr:
            name = cr.get("Name")
            for t in dict.fromkeys(ts):
                if batch:
                    pct = cr.get("SpotBidPercentage")
                    offers.append(SpotOffer(t, None, f"ComputeResources[{i}].SpotBidPercentage",
                                            None, max_price_percent=100 if pct is None else pct))
                else:
                    offers.append(SpotOffer(t, cr.get("SpotPrice"),
                                            f"ComputeResources[{i}].SpotPrice", None))
            label = f"compute resource {name}" if isinstance(name, str) else ""
            if not batch:
                pool_list.append(SpotPools(
                    spot=True, types=tuple(ts), strategy=Attr(r.get("AllocationStrategy"),
                                                              "AllocationStrategy"),
                    path=f"ComputeResources[{i}]", name=label))
            else:
                pool_list.append(_batch_pools(ts, i, label))
        spot = tuple(offers) if offers else Unknown("no compute resource")
        pools = tuple(pool_list)

    net = r.get("Networking")
    subnet_ids = dig(net, "SubnetIds") if isinstance(net, dict) else net
    subnets = (subnet_ids,) if isinstance(subnet_ids, Unknown) else subnet_values(
        as_list(subnet_ids))
    if not subnets:
        subnets = (Unknown("the queue names no subnet"),)
    assign = dig(net, "AssignPublicIp") if isinstance(net, dict) else None
    flags = (Attr(assign, "Networking.AssignPublicIp", note="AssignPublicIp is true"),) \
        if assign is not None else ()
    network = Network(placed=True, subnets=subnets, subnets_path="Networking.SubnetIds",
                      public_ip=flags)
    option, option_path = _option(capacity, r.get("CapacityReservationTarget"), per_cr)
    return ComputeView(r, types=Types(tuple(types)),
                       purchase=Purchase(spot=spot, pools=pools,
                                         maybe_spot=spot != (), option=option,
                                         option_path=option_path),
                       devices=(_root(r.get(ROOT), ROOT, "the compute nodes' root volume"),),
                       network=network)


def _option(capacity: Any, target: Any, per_cr: list[tuple[int, dict[str, Any], list[Any]]]
            ) -> tuple[str | Unknown, str]:
    """A queue's purchase option: its CapacityType (SPOT, CAPACITY_BLOCK; absent: ONDEMAND),
    and for on-demand capacity a reservation target of the queue's, or of every compute
    resource's (reservation-targeted, prepaid)."""
    if isinstance(capacity, Unknown):
        return capacity, "CapacityType"
    kind = capacity.strip().upper() if isinstance(capacity, str) else "ONDEMAND"
    if kind == "SPOT":
        return SPOT_OPTION, "CapacityType"
    if kind == "CAPACITY_BLOCK":
        return CAPACITY_BLOCK, "CapacityType"
    if kind != "ONDEMAND":
        return Unknown(f"CapacityType {str(capacity)[:40]!r} is not one ParallelCluster knows"), \
            "CapacityType"
    own = reservation_option({"CapacityReservationTarget": target}, "")[0] \
        if target is not None else None
    if own is not None:
        return own, "CapacityReservationTarget"
    targets = [reservation_option({"CapacityReservationTarget": cr.get(
        "CapacityReservationTarget")}, "")[0] for _i, cr, _ts in per_cr
        if cr.get("CapacityReservationTarget") is not None]
    if per_cr and len(targets) == len(per_cr) and all(t == RESERVATION_TARGETED for t in targets):
        return RESERVATION_TARGETED, "ComputeResources[].CapacityReservationTarget"
    return ON_DEMAND, ""


def _batch_pools(entries: list[Any], i: int, label: str) -> SpotPools:
    """An AWS Batch queue's compute resource: a SPOT compute environment that ParallelCluster
    creates without an allocation strategy, so AWS Batch's default BEST_FIT (lowest price
    first) draws from its types (a family or ``optimal`` stands for several)."""
    types, several = expand(entries)
    named = {t for t in types if isinstance(t, str)}
    certain = len(named) == len(types)
    return SpotPools(
        spot=True, types=tuple(types),
        fewest=(max(len(named), 2) if several else len(named)) if certain else None,
        most=None if several or not certain else len(named),
        default_strategy="lowest-price", path=f"ComputeResources[{i}].InstanceTypes",
        name=label, note="AWS Batch's default allocation BEST_FIT, which ParallelCluster "
                         "does not change, takes the lowest-priced type first")


def _root(volume: Any, path: str, name: str) -> Device:
    if isinstance(volume, Unknown):
        return Device(path, name, volume)
    encrypted = volume.get("Encrypted") if isinstance(volume, dict) else None
    if encrypted is None:
        return Device(path, f"{name}, {DEFAULT}", True)
    kms = volume.get("KmsKeyId") if isinstance(volume, dict) else None
    snapshot = volume.get("SnapshotId") if isinstance(volume, dict) else None
    return Device(f"{path}.Encrypted", name, encrypted, kms, snapshot=snapshot,
                  snapshot_path=f"{path}.SnapshotId")


@extractor("parallelcluster.head_node", provides=(LAUNCHES, PLACES, DEVICES), rank=51)
def head_node(r: Resource, views: Views) -> ComputeView:
    itype = r.get("InstanceType")
    net = r.get("Networking")
    subnet = dig(net, "SubnetId") if isinstance(net, dict) else net
    eip = dig(net, "ElasticIp") if isinstance(net, dict) else None
    flags: tuple[Attr, ...] = ()
    if eip is True or (isinstance(eip, str) and eip.lower() not in ("false", "")):
        flags = (Attr(True, "Networking.ElasticIp",
                      note="ElasticIp gives the head node a public Elastic IP"),)
    elif isinstance(eip, Unknown):
        flags = (Attr(eip, "Networking.ElasticIp"),)
    return ComputeView(
        r, types=Types((_one_type(itype) if itype is not None else Unknown("no instance type"),)),
        devices=(_root(r.get("LocalStorage.RootVolume"), "LocalStorage.RootVolume",
                       "the head node's root volume"),),
        network=Network(placed=True, subnets=(subnet,) if subnet is not None else
                        (Unknown("the head node names no subnet"),),
                        subnets_path="Networking.SubnetId", public_ip=flags))


@extractor("parallelcluster.shared_storage", provides=(DEVICES,), rank=52)
def shared_storage(r: Resource, views: Views) -> ComputeView:
    ebs = r.get("EbsSettings")
    name = f"shared EBS volume {r.name or r.id}"
    if isinstance(ebs, dict) and ebs.get("VolumeId") is not None:
        device = Device("EbsSettings.VolumeId", name, Unknown(
            f"an existing volume ({ebs['VolumeId']}): its encryption is not in the "
            "configuration"))
    else:
        device = _root(ebs, "EbsSettings", name)
    return ComputeView(r, devices=(device,))
