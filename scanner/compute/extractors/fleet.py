"""``ec2.fleet``: an EC2 Fleet: target capacity by purchase option and launch template
configurations with overrides (type, subnet, max price)."""

from __future__ import annotations

from typing import Any

from scanner.compute.index import Views
from scanner.compute.launch import placement, subnet_values
from scanner.compute.registry import LAUNCHES, PLACES, SPOT, extractor
from scanner.compute.values import as_list, to_int
from scanner.compute.view import (
    MIXED,
    ON_DEMAND,
    Attr,
    Capacity,
    ComputeView,
    Network,
    Purchase,
    SpotOffer,
    TemplateUse,
    Types,
)
from scanner.compute.view import SPOT as SPOT_OPTION
from scanner.kinds.facts import SPOT_PRICES
from scanner.model import Resource, Unknown

TARGET = "TargetCapacitySpecification"


@extractor("ec2.fleet", provides=(LAUNCHES, PLACES, SPOT), reads=("ec2.launch_template",),
           rank=7)
def fleet(r: Resource, views: Views) -> ComputeView:
    configs = [c for c in as_list(r.get("LaunchTemplateConfigs")) if isinstance(c, dict)]
    types: list[Any] = []
    subnets: list[Any] = []
    uses: list[TemplateUse] = []
    per_config: list[list[dict[str, Any]]] = []
    attached = False
    for c in configs:
        lt = views.template(c.get("LaunchTemplateSpecification"), r.scope)
        lt_type = (views.template_spec(lt).instance_type.value if lt is not None
                   else Unknown("launch template not found"))
        overrides = [o for o in as_list(c.get("Overrides")) if isinstance(o, dict)]
        over_types = [o.get("InstanceType") for o in overrides
                      if o.get("InstanceType") is not None]
        over_subnets = [o.get("SubnetId") for o in overrides if o.get("SubnetId") is not None]
        subnets.extend(over_subnets)
        if not over_subnets and lt is not None:  # the template's network interfaces place it
            lt_spec = views.template_spec(lt)
            subnets.extend(s.value for s in lt_spec.subnets)
            attached = attached or lt_spec.attached_interface
        types.extend(over_types or [lt_type])
        if lt is not None:
            uses.append(TemplateUse(lt, tuple(over_types)))
        per_config.append(overrides or [{"InstanceType": lt_type}])
    types = [t for t in types if t is not None] or [Unknown("no instance type")]

    spec = r.get(TARGET) or {}
    offers: tuple[SpotOffer, ...] = ()
    spot = total = None
    if isinstance(spec, dict):
        total = to_int(spec.get("TotalTargetCapacity"))
        spot = to_int(spec.get("SpotTargetCapacity"))
        default = str(spec.get("DefaultTargetCapacityType") or "").lower()
        if (isinstance(spot, int) and spot > 0) or default == "spot":
            count = spot if isinstance(spot, int) and spot > 0 else None
            offers = tuple(
                SpotOffer(o.get("InstanceType"), o.get("MaxPrice"),
                          f"LaunchTemplateConfigs[{i}].Overrides.MaxPrice", count)
                for i, overrides in enumerate(per_config) for o in overrides)
    prices = r.get(SPOT_PRICES.attribute)
    return ComputeView(
        r, types=Types(tuple(types)),
        capacity=Capacity(desired=Attr(total, f"{TARGET}.TotalTargetCapacity")),
        purchase=Purchase(spot=offers, maybe_spot=bool(offers),
                          option=_fleet_option(total, spot, bool(offers)),
                          option_path=TARGET,
                          current_spot_prices=prices if isinstance(prices, dict) else None),
        network=Network(placed=True, subnets=placement(subnet_values(subnets), (), views.index,
                                                       r.scope, attached_interface=attached),
                        subnets_path="LaunchTemplateConfigs"),
        templates=tuple(uses))


def _fleet_option(total: Any, spot: Any, any_spot: bool) -> str | Unknown:
    if isinstance(total, Unknown):
        return total
    if not any_spot:
        return ON_DEMAND
    if isinstance(total, int) and isinstance(spot, int) and 0 < spot < total:
        return MIXED
    return SPOT_OPTION
