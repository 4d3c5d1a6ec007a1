"""``ec2.launch_template``: what it says itself, completed by its consumers.

A template without an instance type launches the types its consumers name (a group's overrides,
an instance's type), or the types its ``InstanceRequirements`` choose by attributes (then the
types stay unknown and the requirement carries the GPU fact). Its root volume comes from the AMI
when no mapping replaces it (none at all, or data volumes only); that fact is decided here,
unless every consumer sets its own root device (then it is decided, and reported, on each
consumer). Live, the volumes themselves carry
the encryption state.
"""

from __future__ import annotations

from typing import Any

from scanner.compute.index import Views
from scanner.compute.purchase import capacity_text
from scanner.compute.registry import DEVICES, LAUNCHES, SPOT, extractor
from scanner.compute.view import (
    ComputeView,
    Device,
    Network,
    Purchase,
    SpotOffer,
    TemplateUse,
    Types,
)
from scanner.kinds.facts import SPOT_PRICES
from scanner.model import Resource, Unknown
from scanner.model.graph import doubt


@extractor("ec2.launch_template", provides=(LAUNCHES, SPOT, DEVICES), rank=2)
def launch_template(r: Resource, views: Views) -> ComputeView:
    spec = views.own_spec(r)
    uses = views.uses_of(r)
    own_type = spec.instance_type.value
    if own_type is not None:
        types: list[Any] = [own_type]
    else:
        types = [t for _view, use in uses for t in use.types if t is not None]

    requirement = spec.requirement if own_type is None else None
    if spec.spot_market is True:
        offered = types or [Unknown("instance types chosen by attributes (InstanceRequirements)"
                                    if requirement is not None
                                    else "no instance type in the template")]
        count, basis = consumer_capacity(uses)
        spot: tuple[SpotOffer, ...] | Unknown = tuple(
            SpotOffer(t, spec.spot_max_price.value, spec.spot_max_price.path, count,
                      count_basis=basis)
            for t in dict.fromkeys(offered))
    else:
        spot = spec.spot_market if isinstance(spec.spot_market, Unknown) else ()

    devices: tuple[Device, ...] = ()
    if r.declared:
        # When no mapping replaces it (none at all, or data volumes only), the root volume
        # comes from the AMI: decided here, unless every consumer sets its own root device
        # (then each consumer decides, and is judged, alone).
        overridden = bool(uses) and all(use.sets_root_device for _v, use in uses)
        devices = spec.devices if overridden else spec.devices_or_root()

    prices = r.get(SPOT_PRICES.attribute)
    return ComputeView(
        r, types=Types(tuple(types), requirement),
        purchase=Purchase(spot=spot, maybe_spot=spec.spot_market is not False,
                          option=spec.option, option_path=spec.option_path,
                          current_spot_prices=prices if isinstance(prices, dict) else None),
        devices=devices, network=Network(placed=False, public_ip=spec.public_ip))


NO_CONSUMER = "no group or instance in the scan launches it"


def consumer_capacity(uses: list[tuple[ComputeView, TemplateUse]]) -> tuple[int | None, str]:
    """The spot capacity a spot template's offer stands for: the capacity of its consumers that
    take their market from it (a group at its split's capacity, desired, else MinSize, and
    MaxSize when desired is 0; an instance as one), each consumer once, and the basis saying
    whose. Consumers judged on their own spot settings (their own market options, a group's
    mixed instances policy, a fleet's overrides), a configuration AWS rejects, a group's member
    and capacity that is gone are not counted here. None: a consumer's size is not known."""
    parts: list[str] = []
    total = 0
    unknown: list[str] = []
    skipped: list[str] = []
    for view, _use in uses:
        r = view.resource
        if view.managed_by is not None or not view.active:
            continue
        if view.purchase.rejected:
            skipped.append(f"{r.id} is not counted: AWS rejects this template in its mixed "
                           "instances policy (ASG-004)")
            continue
        if view.purchase.spot != ():  # its own offers (or their Unknown) are judged on it
            skipped.append(f"{r.id} is judged on its own spot settings")
            continue
        why = doubt(r)
        if why is not None:  # never assumed to exist, nor not to
            unknown.append(why.reason)
            continue
        if view.capacity is None:
            if not r.declared and (r.get("AutoScalingGroupName") or not view.running):
                continue  # a group's member (counted at the group), or not running
            total += 1
            parts.append(f"{r.id}: 1 instance")
            continue
        split = view.purchase.split
        if view.capacity.desired.path.endswith("vCpus"):  # AWS Batch: vCPUs, not instances
            unknown.append(f"{r.id}: capacity in vCPUs, not instances")
        elif isinstance(split, Unknown):
            unknown.append(f"{r.id}: capacity not known ({split.reason})")
        elif split is None:
            parts.append(f"{r.id}: 0 (MaxSize 0)")
        else:
            total += split.desired
            parts.append(f"{r.id}: {capacity_text(split)}")
    if unknown:
        return None, _listed(unknown + parts + skipped, "; ")
    if not parts:
        return 0, _listed(skipped, "; ") or NO_CONSUMER
    return total, _listed(parts, " + ")


MAX_CONSUMERS_LISTED = 20  # consumers named in a basis; the count covers them all


def _listed(items: list[str], sep: str) -> str:
    shown = sep.join(items[:MAX_CONSUMERS_LISTED])
    more = len(items) - MAX_CONSUMERS_LISTED
    return f"{shown}{sep}{more} more" if more > 0 else shown
