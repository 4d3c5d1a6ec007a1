"""``ec2.spot_fleet``: a spot fleet request (``SpotFleetRequestConfig``): launch specifications
and launch template configurations, target and on-demand capacity, the fleet's and each
specification's or override's spot price."""

from __future__ import annotations

from typing import Any

from scanner.compute.index import Views
from scanner.compute.launch import launch_spec, placement, subnet_values
from scanner.compute.registry import DEVICES, LAUNCHES, PLACES, SPOT, extractor
from scanner.compute.values import as_list, iter_dicts, ordinal, to_int
from scanner.compute.view import (
    MIXED,
    Attr,
    Capacity,
    ComputeView,
    Device,
    Network,
    Purchase,
    SpotOffer,
    TemplateUse,
    Types,
)
from scanner.compute.view import SPOT as SPOT_OPTION
from scanner.kinds.facts import SPOT_PRICES
from scanner.model import Resource, Unknown

CONFIG = "SpotFleetRequestConfig"


@extractor("ec2.spot_fleet", provides=(LAUNCHES, PLACES, SPOT, DEVICES),
           reads=("ec2.launch_template",), rank=6)
def spot_fleet(r: Resource, views: Views) -> ComputeView:
    cfg = r.get(CONFIG) or {}
    if not isinstance(cfg, dict):
        cfg = {}
    types: list[Any] = []
    devices: list[Device] = []
    subnets: list[Any] = []
    flags: list[Attr] = []
    attached = False
    specs = list(iter_dicts(cfg.get("LaunchSpecifications")))
    for i, item in specs:
        prefix = f"{CONFIG}.LaunchSpecifications[{i}]."
        where = f" of the {ordinal(i)} launch specification" if len(specs) > 1 else ""
        spec = launch_spec(item, prefix, where)
        types.append(spec.instance_type.value)
        devices.extend(spec.devices_or_root())
        subnets.extend(s.value for s in spec.subnets)
        flags.extend(spec.public_ip)
        attached = attached or spec.attached_interface

    total = to_int(cfg.get("TargetCapacity"))
    od = to_int(cfg.get("OnDemandTargetCapacity")) or 0
    count = total - od if isinstance(total, int) and isinstance(od, int) else None
    default_price = cfg.get("SpotPrice")
    offers: list[SpotOffer] = []
    for i, item in specs:
        price = item.get("SpotPrice")
        path = f"{CONFIG}.LaunchSpecifications[{i}].SpotPrice"
        if price is None:
            price, path = default_price, f"{CONFIG}.SpotPrice"
        offers.append(SpotOffer(item.get("InstanceType"), price, path, count))

    uses: list[TemplateUse] = []
    for i, c in iter_dicts(cfg.get("LaunchTemplateConfigs")):
        lt = views.template(c.get("LaunchTemplateSpecification"), r.scope)
        overrides = [o for o in as_list(c.get("Overrides")) if isinstance(o, dict)]
        over_types = [o.get("InstanceType") for o in overrides
                      if o.get("InstanceType") is not None]
        over_subnets = [o.get("SubnetId") for o in overrides if o.get("SubnetId") is not None]
        subnets.extend(over_subnets)
        if not over_subnets and lt is not None:  # the template's network interfaces place it
            lt_spec = views.template_spec(lt)
            subnets.extend(s.value for s in lt_spec.subnets)
            attached = attached or lt_spec.attached_interface
        if over_types:
            types.extend(over_types)
        else:
            types.append(views.template_spec(lt).instance_type.value if lt is not None
                         else Unknown("launch template not found"))
        if lt is not None:
            uses.append(TemplateUse(lt, tuple(over_types)))
        if not overrides:
            overrides = [{"InstanceType": views.template_spec(lt).instance_type.value
                          if lt is not None else Unknown("launch template not found")}]
        for o in overrides:
            price = o.get("SpotPrice")
            path = f"{CONFIG}.LaunchTemplateConfigs[{i}].Overrides.SpotPrice"
            if price is None:
                price, path = default_price, f"{CONFIG}.SpotPrice"
            offers.append(SpotOffer(o.get("InstanceType"), price, path, count))

    spot: tuple[SpotOffer, ...] = () if count is not None and count <= 0 else tuple(offers)
    types = [t for t in types if t is not None] or [Unknown("no instance type")]
    mixed = isinstance(od, int) and od > 0
    prices = r.get(SPOT_PRICES.attribute)
    return ComputeView(
        r, types=Types(tuple(types)),
        capacity=Capacity(desired=Attr(total, f"{CONFIG}.TargetCapacity")),
        purchase=Purchase(option=MIXED if mixed else SPOT_OPTION,
                          option_path=f"{CONFIG}.OnDemandTargetCapacity" if mixed else CONFIG,
                          spot=spot, maybe_spot=True, on_demand_base=Attr(
            od, f"{CONFIG}.OnDemandTargetCapacity"),
            current_spot_prices=prices if isinstance(prices, dict) else None),
        devices=tuple(devices) if r.declared else (),
        network=Network(placed=True, subnets=placement(subnet_values(subnets), (), views.index,
                                                       r.scope, attached_interface=attached),
                        subnets_path=f"{CONFIG}.LaunchSpecifications",
                        public_ip=tuple(flags), attached_interface=attached),
        templates=tuple(uses))
