"""``autoscaling.group``: capacity, the mixed instances policy (types, on-demand base and
percentage, spot allocation strategy and max price), subnets, and the launch template or
configuration it launches from. Spot requested through a launch template alone is the
template's offer (reported there), not the group's. The group EKS runs a managed node group in
(live) has an empty view: the node group is judged (scanner.compute.ownership)."""

from __future__ import annotations

from typing import Any

from scanner.compute.index import Views
from scanner.compute.launch import LaunchSpec, decisive, placement, subnet_values
from scanner.compute.purchase import (
    REJECTED_SPOT_TEMPLATE,
    capacity_text,
    group_option,
    group_split,
    reservation_option,
)
from scanner.compute.registry import GROUP, LAUNCHES, MEASURED, PLACES, SPOT, extractor
from scanner.compute.values import as_list, to_int, to_price
from scanner.compute.view import (
    ON_DEMAND,
    Attr,
    Capacity,
    ComputeView,
    GpuRequirement,
    Network,
    Purchase,
    Split,
    SpotOffer,
    TemplateUse,
    Types,
)
from scanner.compute.view import SPOT as SPOT_OPTION
from scanner.kinds.facts import SPOT_PRICES
from scanner.model import Resource, Unknown, dig

MIP = "MixedInstancesPolicy"
DIST = f"{MIP}.InstancesDistribution"


@extractor("autoscaling.group", provides=(LAUNCHES, PLACES, SPOT, GROUP, MEASURED),
           reads=("ec2.launch_template", "autoscaling.launch_configuration"), rank=4)
def autoscaling_group(r: Resource, views: Views) -> ComputeView:
    if not r.declared:
        from scanner.compute.ownership import owner_of_group

        owner = owner_of_group(r, views.index)
        if owner is not None:  # EKS's group for a node group: judged at the node group
            return ComputeView(r, managed_by=owner, active=False, running=False)
    a = r.attrs
    lt = views.template(dig(a, f"{MIP}.LaunchTemplate.LaunchTemplateSpecification"), r.scope)
    if lt is None:
        lt = views.template(r.get("LaunchTemplate"), r.scope)
    lc = views.configuration(r.get("LaunchConfigurationName"), r.scope)
    lt_spec = views.template_spec(lt) if lt is not None else None
    lc_spec = views.template_spec(lc) if lc is not None else None

    overrides = dig(a, f"{MIP}.LaunchTemplate.Overrides")
    types, override_types, requirement = _types(overrides, lt_spec, lc_spec)

    capacity = Capacity(
        desired=Attr(to_int(r.get("DesiredCapacity")), "DesiredCapacity"),
        min=Attr(to_int(r.get("MinSize")), "MinSize"),
        max=Attr(to_int(r.get("MaxSize")), "MaxSize"),
        weights=tuple((o.get("InstanceType"), o.get("WeightedCapacity"))
                      for o in as_list(overrides) if isinstance(o, dict)))
    base = Attr(dig(a, f"{DIST}.OnDemandBaseCapacity"), f"{DIST}.OnDemandBaseCapacity")
    percent = Attr(dig(a, f"{DIST}.OnDemandPercentageAboveBaseCapacity"),
                   f"{DIST}.OnDemandPercentageAboveBaseCapacity")
    mip = r.get(MIP)
    template_spot: bool | Unknown = False
    if lt_spec is not None:
        template_spot = lt_spec.spot_market
    elif lc is not None and to_price(lc.get("SpotPrice")) is not None:
        template_spot = True
    split = group_split(capacity, mip if isinstance(mip, Unknown) or (
        isinstance(mip, dict) and mip) else None, all_spot=template_spot, base=base,
        percent=percent)

    rejected = ""
    if isinstance(mip, dict) and mip and lt is not None and lt_spec is not None and \
            lt_spec.spot_market is True:
        rejected = REJECTED_SPOT_TEMPLATE.format(group=r.id, template=lt.id)
    spot = _spot_offers(r, split, types) if mip and not rejected else ()

    network = _network(r, views, ((lt, lt_spec), (lc, lc_spec)))
    uses = []
    if lt is not None:
        uses.append(TemplateUse(lt, tuple(override_types)))
    if lc is not None:
        uses.append(TemplateUse(lc))
    template_option: str | Unknown = ON_DEMAND
    template_path = ""
    for template, tspec in ((lt, lt_spec), (lc, lc_spec)):
        if template is not None and tspec is not None:
            template_option = tspec.option if template is lt else (
                SPOT_OPTION if template_spot is True else ON_DEMAND)
            template_path = f"{template.id}: {tspec.option_path}" if tspec.option_path else ""
            break
    has_mip = isinstance(mip, Unknown) or (isinstance(mip, dict) and bool(mip))
    option, option_path = group_option(
        split, template_option, template_path,
        reservation_option(r.get("CapacityReservationSpecification"),
                           "CapacityReservationSpecification"),
        DIST if has_mip else "")
    if rejected:
        option, option_path = Unknown("AWS rejects its purchase configuration"), DIST
    prices = r.get(SPOT_PRICES.attribute)
    purchase = Purchase(
        option=option, option_path=option_path, rejected=rejected,
        mixed_policy=isinstance(mip, dict) and bool(mip),
        spot=spot, split=split, on_demand_base=base, on_demand_percent=percent,
        strategy=Attr(dig(a, f"{DIST}.SpotAllocationStrategy"), f"{DIST}.SpotAllocationStrategy"),
        maybe_spot=bool(mip) or (lt_spec is not None and lt_spec.spot_market is not False),
        current_spot_prices=prices if isinstance(prices, dict) else None,
        split_path=DIST, pools_path=MIP)
    return ComputeView(r, types=Types(tuple(types), requirement), capacity=capacity,
                       purchase=purchase,
                       network=network, templates=tuple(uses), members=views.members_of(r))


def _override_requirement(overrides: Any) -> Any:
    """The GPU requirement of the first override that chooses types by attributes."""
    for i, o in enumerate(as_list(overrides)):
        if isinstance(o, dict) and o.get("InstanceRequirements") is not None:
            from scanner.compute.requirements import gpu_requirement

            req = gpu_requirement(o["InstanceRequirements"],
                                  f"{MIP}.LaunchTemplate.Overrides[{i}].InstanceRequirements")
            if req is not None:
                return req
    return None


def _types(overrides: Any, lt_spec: LaunchSpec | None, lc_spec: LaunchSpec | None
           ) -> tuple[list[Any], list[Any], GpuRequirement | None]:
    """(instance types, the overrides' types, the GPU requirement by attributes): the mixed
    instances policy's overrides, else the launch template's or configuration's type."""
    override_types: list[Any] = []
    requirement = None
    if isinstance(overrides, Unknown):
        types: list[Any] = [overrides]
    else:
        override_types = [o.get("InstanceType") for o in as_list(overrides)
                          if isinstance(o, dict) and o.get("InstanceType") is not None]
        requirement = _override_requirement(overrides)
        types = list(override_types)
        if not types and requirement is None:
            if lt_spec is not None:
                types = [lt_spec.instance_type.value]
                if types == [None] and lt_spec.requirement is not None:
                    types, requirement = [], lt_spec.requirement
            elif lc_spec is not None:
                types = [lc_spec.instance_type.value]
            else:
                types = [Unknown("launch template or configuration not found")]
    types = [t for t in types if t is not None] or (
        [] if requirement is not None else [Unknown("no instance type")])
    return types, override_types, requirement


def _network(r: Resource, views: Views,
             templates: tuple[tuple[Resource | None, LaunchSpec | None], ...]) -> Network:
    """Where the group launches, and the public-IP setting its template or configuration gives
    (the first that decides)."""
    inherited: tuple[Attr, ...] = ()
    for template, tspec in templates:
        flag = decisive(tspec.public_ip) if tspec is not None else None
        if template is not None and flag is not None:
            inherited = (Attr(flag.value, f"{template.id}: {flag.path}"),)
            break
    zones = r.get("VPCZoneIdentifier")
    subnets = (zones,) if isinstance(zones, Unknown) else subnet_values(as_list(zones))
    azs = r.get("AvailabilityZones")
    zone_list = (azs,) if isinstance(azs, Unknown) else tuple(as_list(azs))
    network = Network(placed=True, subnets_path="VPCZoneIdentifier", zones=zone_list,
                      subnets=placement(subnets, zone_list, views.index, r.scope),
                      inherited_public_ip=inherited)
    return network


def _spot_offers(r: Resource, split: Split | Unknown | None, types: list[Any]
                 ) -> tuple[SpotOffer, ...] | Unknown:
    """What the mixed instances policy offers to spot: each type at the group's max price."""
    if isinstance(split, Unknown):
        return split
    if split is None or split.spot <= 0:
        return ()
    price = dig(r.attrs, f"{DIST}.SpotMaxPrice")
    offered = types or [Unknown("instance types chosen by attributes (InstanceRequirements)")]
    basis = f"{split.spot} spot of {capacity_text(split)}"
    return tuple(SpotOffer(t, price, f"{DIST}.SpotMaxPrice", split.spot, count_basis=basis)
                 for t in dict.fromkeys(offered))
