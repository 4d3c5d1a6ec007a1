"""What several policies ask of compute resources: instance types, placement, spot offers."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from policies.base import Context
from scanner.catalog import HOURS_PER_MONTH, is_gpu_type
from scanner.model import Ref, Resource, Unknown, dig, is_unknown

COMPUTE_KINDS = (
    "ec2.instance",
    "ec2.launch_template",
    "autoscaling.launch_configuration",
    "autoscaling.group",
    "ec2.spot_request",
    "ec2.spot_fleet",
    "ec2.fleet",
)
# Kinds that place capacity into subnets (a launch template or configuration alone does not).
PLACED_KINDS = ("ec2.instance", "autoscaling.group", "ec2.spot_request", "ec2.spot_fleet",
                "ec2.fleet")
NETWORK_KINDS = ("ec2.vpc", "ec2.subnet", "ec2.route_table", "ec2.route",
                 "ec2.route_table_association", "ec2.main_route_table_association",
                 "ec2.internet_gateway", "ec2.gateway_attachment", "ec2.vpc_endpoint",
                 "ec2.vpc_endpoint_route_table_association", "ec2.vpc_endpoint_policy")


def as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return list(value)
    return [value]


def to_price(value: Any) -> float | Unknown | None:
    """A max price as AWS spells it ("0.50", 0.5). None for absent, null or ""."""
    if isinstance(value, Unknown):
        return value
    if value is None or value == "":
        return None
    try:
        price = float(value)
    except (TypeError, ValueError, OverflowError):
        return Unknown(f"max price {str(value)[:40]!r} is not a usable number")
    if not math.isfinite(price) or not 0 <= price <= 1e9:
        return Unknown(f"bad price {value!r}")
    return price


def to_int(value: Any) -> int | Unknown | None:
    if isinstance(value, Unknown):
        return value
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return Unknown(f"{value!r} is not a number")
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return Unknown(f"{value!r} is not a number")
    if not math.isfinite(number) or abs(number) > 1e15:
        return Unknown("not a finite number" if not math.isfinite(number) else "too large")
    return int(number)


def money(x: float) -> str:
    return f"{x:,.2f}"


def rate(x: float) -> str:
    return f"{x:.4f}".rstrip("0").rstrip(".") if x else "0"


# -- launch templates and instance types ---------------------------------------------------------


def lt_data(resource: Resource | None) -> dict[str, Any]:
    if resource is None:
        return {}
    data = resource.get("LaunchTemplateData")
    return data if isinstance(data, dict) else {}


def launch_template_of(resource: Resource, ctx: Context) -> Resource | None:
    """The launch template a compute resource uses (ASG: the mixed policy's or its own)."""
    idx = ctx.index
    if resource.kind == "autoscaling.group":
        spec = dig(resource.attrs,
                   "MixedInstancesPolicy.LaunchTemplate.LaunchTemplateSpecification")
        hit = idx.launch_template_of(spec, resource.scope)
        if hit is not None:
            return hit
        return idx.launch_template_of(resource.get("LaunchTemplate"), resource.scope)
    if resource.kind == "ec2.instance":
        return idx.launch_template_of(resource.get("LaunchTemplate"), resource.scope)
    return None


def launch_configuration_of(resource: Resource, ctx: Context) -> Resource | None:
    if resource.kind != "autoscaling.group":
        return None
    return ctx.index.resolve(resource.get("LaunchConfigurationName"), resource.scope,
                             "autoscaling.launch_configuration")


def _fleet_configs(resource: Resource) -> list[dict[str, Any]]:
    if resource.kind == "ec2.spot_fleet":
        configs = dig(resource.attrs, "SpotFleetRequestConfig.LaunchTemplateConfigs")
        return [c for c in as_list(configs) if isinstance(c, dict)]
    if resource.kind == "ec2.fleet":
        return [c for c in as_list(resource.get("LaunchTemplateConfigs")) if isinstance(c, dict)]
    return []


def instance_types(resource: Resource, ctx: Context) -> list[Any]:
    """Every instance type the resource can launch (values may be Unknown)."""
    kind = resource.kind
    types: list[Any] = []
    if kind == "ec2.instance":
        t = resource.get("InstanceType")
        if t is None:
            t = lt_data(launch_template_of(resource, ctx)).get("InstanceType")
        types = [t]
    elif kind == "ec2.launch_template":
        t = lt_data(resource).get("InstanceType")
        types = [t] if t is not None else _lt_user_types(resource, ctx)
    elif kind == "autoscaling.launch_configuration":
        types = [resource.get("InstanceType")]
    elif kind == "autoscaling.group":
        overrides = dig(resource.attrs, "MixedInstancesPolicy.LaunchTemplate.Overrides")
        if is_unknown(overrides):
            return [overrides]
        types = [o.get("InstanceType") for o in as_list(overrides) if isinstance(o, dict)]
        types = [t for t in types if t is not None]
        if not types:
            lt = launch_template_of(resource, ctx)
            if lt is not None:
                types = [lt_data(lt).get("InstanceType")]
            else:
                lc = launch_configuration_of(resource, ctx)
                types = [lc.get("InstanceType")] if lc is not None else [
                    Unknown("launch template or configuration not found")]
    elif kind == "ec2.spot_request":
        types = [dig(resource.attrs, "LaunchSpecification.InstanceType")]
    elif kind in ("ec2.spot_fleet", "ec2.fleet"):
        for spec in as_list(dig(resource.attrs, "SpotFleetRequestConfig.LaunchSpecifications")):
            if isinstance(spec, dict):
                types.append(spec.get("InstanceType"))
        for cfg in _fleet_configs(resource):
            over = [o.get("InstanceType") for o in as_list(cfg.get("Overrides"))
                    if isinstance(o, dict) and o.get("InstanceType") is not None]
            if over:
                types.extend(over)
            else:
                lt = ctx.index.launch_template_of(cfg.get("LaunchTemplateSpecification"),
                                                  resource.scope)
                types.append(lt_data(lt).get("InstanceType") if lt else
                             Unknown("launch template not found"))
    return [t for t in types if t is not None] or ([Unknown("no instance type")]
                                                     if kind != "ec2.launch_template" else [])


def _lt_user_types(lt: Resource, ctx: Context) -> list[Any]:
    users = ctx.memo.get("lt_users")
    if users is None:
        users = {}
        for kind in ("autoscaling.group", "ec2.instance"):
            for r in ctx.index.of_kind(kind):
                t = launch_template_of(r, ctx)
                if t is not None:
                    users.setdefault(id(t), []).append(r)
        ctx.memo["lt_users"] = users
    types: list[Any] = []
    for user in users.get(id(lt), []):
        if user.kind == "autoscaling.group":
            overrides = dig(user.attrs, "MixedInstancesPolicy.LaunchTemplate.Overrides")
            types.extend(o.get("InstanceType") for o in as_list(overrides)
                         if isinstance(o, dict) and o.get("InstanceType") is not None)
        elif user.get("InstanceType") is not None:
            types.append(user.get("InstanceType"))
    return types


def gpu_verdict(types: list[Any]) -> bool | Unknown:
    """True if any type is GPU compute; Unknown if none is but some are unknown; else False."""
    if any(is_gpu_type(t) for t in types):
        return True
    unknowns = [t for t in types if isinstance(t, Unknown) or not isinstance(t, str)]
    if unknowns:
        first = unknowns[0]
        return first if isinstance(first, Unknown) else Unknown("instance type not known")
    return False


def gpu_types(types: list[Any]) -> list[str]:
    return sorted({t for t in types if is_gpu_type(t)})


# -- placement ---------------------------------------------------------------------------------


def subnet_refs(resource: Resource, ctx: Context) -> list[Any]:
    kind = resource.kind
    refs: list[Any] = []
    if kind == "ec2.instance":
        refs = [resource.get("SubnetId")]
        refs += [n.get("SubnetId") for n in as_list(resource.get("NetworkInterfaces"))
                 if isinstance(n, dict)]
        lt = launch_template_of(resource, ctx)
        refs += [n.get("SubnetId") for n in as_list(lt_data(lt).get("NetworkInterfaces"))
                 if isinstance(n, dict)]
    elif kind == "autoscaling.group":
        v = resource.get("VPCZoneIdentifier")
        refs = [v] if is_unknown(v) else as_list(v)
    elif kind == "ec2.spot_request":
        spec = resource.get("LaunchSpecification") or {}
        if isinstance(spec, dict):
            refs = [spec.get("SubnetId")] + [n.get("SubnetId") for n in
                                             as_list(spec.get("NetworkInterfaces"))
                                             if isinstance(n, dict)]
    elif kind in ("ec2.spot_fleet", "ec2.fleet"):
        for spec in as_list(dig(resource.attrs, "SpotFleetRequestConfig.LaunchSpecifications")):
            if isinstance(spec, dict):
                refs.append(spec.get("SubnetId"))
        for cfg in _fleet_configs(resource):
            refs += [o.get("SubnetId") for o in as_list(cfg.get("Overrides"))
                     if isinstance(o, dict)]
    out: list[Any] = []
    for ref in refs:
        if isinstance(ref, str) and "," in ref:
            out.extend(part.strip() for part in ref.split(",") if part.strip())
        elif ref is not None:
            out.append(ref)
    return out


@dataclass
class Placement:
    compute: Resource
    types: list[str]
    subnets: list[Resource]
    unresolved: list[Any]


def gpu_placements(ctx: Context) -> list[Placement]:
    """Every placed compute resource whose types include GPU compute, with its subnets."""
    cached = ctx.memo.get("gpu_placements")
    if cached is not None:
        return cached
    out: list[Placement] = []
    for kind in PLACED_KINDS:
        for r in ctx.index.of_kind(kind):
            if not r.declared and kind == "ec2.instance" and r.get("State") in (
                "terminated", "shutting-down"):
                continue
            types = instance_types(r, ctx)
            if gpu_verdict(types) is not True:
                continue
            subnets: list[Resource] = []
            unresolved: list[Any] = []
            for ref in subnet_refs(r, ctx):
                hits = ctx.index.resolve_all(ref, r.scope, "ec2.subnet")
                if hits:
                    subnets.extend(hits)
                else:
                    unresolved.append(ref)
            out.append(Placement(r, gpu_types(types), subnets, unresolved))
    ctx.memo["gpu_placements"] = out
    return out


def gpu_compute_by_subnet(ctx: Context) -> dict[int, list[Placement]]:
    cached = ctx.memo.get("by_subnet")
    if cached is None:
        cached = {}
        for p in gpu_placements(ctx):
            for s in {id(s): s for s in p.subnets}.values():
                cached.setdefault(id(s), []).append(p)
        ctx.memo["by_subnet"] = cached
    return cached


def gpu_compute_by_vpc(ctx: Context) -> dict[int, list[Placement]]:
    cached = ctx.memo.get("by_vpc")
    if cached is None:
        cached = {}
        for p in gpu_placements(ctx):
            vpcs = {}
            for s in p.subnets:
                vpc = ctx.index.vpc_of_subnet(s)
                if vpc is not None:
                    vpcs[id(vpc)] = vpc
            for key in vpcs:
                cached.setdefault(key, []).append(p)
        ctx.memo["by_vpc"] = cached
    return cached


def describe(r: Resource) -> str:
    return (r.name and r.name != r.id and f"{r.id} ({r.name})") or r.id


# -- capacity and spot ---------------------------------------------------------------------------


def lt_market_is_spot(data: dict[str, Any]) -> bool | Unknown:
    market = dig(data, "InstanceMarketOptions.MarketType")
    if isinstance(market, Unknown):
        return market
    return isinstance(market, str) and market.lower() == "spot"


@dataclass
class Capacity:
    desired: int
    on_demand: int
    weighted: bool
    basis: str  # how desired was chosen


def asg_capacity(asg: Resource, ctx: Context) -> Capacity | Unknown | None:
    """On-demand units at desired capacity, per the design's rule. None = not applicable."""
    desired = to_int(asg.get("DesiredCapacity"))
    basis = "DesiredCapacity"
    if desired is None:
        desired, basis = to_int(asg.get("MinSize")), "MinSize (no DesiredCapacity)"
    if isinstance(desired, Unknown):
        return desired
    if not desired:
        desired, basis = to_int(asg.get("MaxSize")), "MaxSize (desired is 0)"
        if isinstance(desired, Unknown):
            return desired
        if not desired:
            return None
    mip = asg.get("MixedInstancesPolicy")
    if isinstance(mip, Unknown):
        return mip
    overrides = as_list(dig(asg.attrs, "MixedInstancesPolicy.LaunchTemplate.Overrides"))
    weighted = any(isinstance(o, dict) and o.get("WeightedCapacity") not in (None, "", 1, "1")
                   for o in overrides)
    if isinstance(mip, dict) and mip:
        dist = mip.get("InstancesDistribution") or {}
        if isinstance(dist, Unknown):
            return dist
        base = to_int(dist.get("OnDemandBaseCapacity")) if isinstance(dist, dict) else None
        pct = (to_int(dist.get("OnDemandPercentageAboveBaseCapacity"))
               if isinstance(dist, dict) else None)
        if isinstance(base, Unknown):
            return base
        if isinstance(pct, Unknown):
            return pct
        base = base or 0
        pct = 100 if pct is None else pct
        od = min(base, desired) + math.ceil(max(desired - base, 0) * pct / 100)
        return Capacity(desired, od, weighted, basis)
    lt = launch_template_of(asg, ctx)
    spot = lt_market_is_spot(lt_data(lt)) if lt is not None else False
    if lt is None:
        lc = launch_configuration_of(asg, ctx)
        if lc is not None and to_price(lc.get("SpotPrice")) is not None:
            spot = True
    if isinstance(spot, Unknown):
        return spot
    return Capacity(desired, 0 if spot else desired, weighted, basis)


@dataclass
class SpotOffer:
    """Spot capacity of one instance type with the max price that applies to it."""

    instance_type: Any
    max_price: Any  # raw value
    path: str
    count: int | None  # instances (or capacity units), None = per instance


def spot_offers(resource: Resource, ctx: Context) -> list[SpotOffer] | Unknown:
    """The spot capacity a resource requests; [] when it requests none (not applicable)."""
    kind = resource.kind
    a = resource.attrs
    if kind == "ec2.instance":
        if not resource.declared:
            return []
        spot = lt_market_is_spot(a)
        if spot is not True:
            return spot if isinstance(spot, Unknown) else []
        return [SpotOffer(resource.get("InstanceType"),
                          dig(a, "InstanceMarketOptions.SpotOptions.MaxPrice"),
                          "InstanceMarketOptions.SpotOptions.MaxPrice", 1)]
    if kind == "ec2.launch_template":
        data = lt_data(resource)
        spot = lt_market_is_spot(data)
        if spot is not True:
            return spot if isinstance(spot, Unknown) else []
        types = instance_types(resource, ctx) or [Unknown("no instance type in the template")]
        return [SpotOffer(t, dig(data, "InstanceMarketOptions.SpotOptions.MaxPrice"),
                          "LaunchTemplateData.InstanceMarketOptions.SpotOptions.MaxPrice", None)
                for t in dict.fromkeys(types)]
    if kind == "autoscaling.launch_configuration":
        price = a.get("SpotPrice")
        if price is None or price == "":
            return []
        return [SpotOffer(a.get("InstanceType"), price, "SpotPrice", None)]
    if kind == "autoscaling.group":
        mip = a.get("MixedInstancesPolicy")
        if not mip:
            return []  # spot via a launch template is reported on the template
        cap = asg_capacity(resource, ctx)
        if isinstance(cap, Unknown):
            return cap
        if cap is None or cap.desired - cap.on_demand <= 0:
            return []
        price = dig(a, "MixedInstancesPolicy.InstancesDistribution.SpotMaxPrice")
        return [SpotOffer(t, price, "MixedInstancesPolicy.InstancesDistribution.SpotMaxPrice",
                          cap.desired - cap.on_demand)
                for t in dict.fromkeys(instance_types(resource, ctx))]
    if kind == "ec2.spot_request":
        count = to_int(a.get("InstanceCount"))
        return [SpotOffer(dig(a, "LaunchSpecification.InstanceType"), a.get("SpotPrice"),
                          "SpotPrice", count if isinstance(count, int) else 1)]
    if kind == "ec2.spot_fleet":
        return _spot_fleet_offers(resource, ctx)
    if kind == "ec2.fleet":
        return _ec2_fleet_offers(resource, ctx)
    return []


def _spot_fleet_offers(resource: Resource, ctx: Context) -> list[SpotOffer]:
    cfg = resource.get("SpotFleetRequestConfig") or {}
    if not isinstance(cfg, dict):
        return []
    total = to_int(cfg.get("TargetCapacity"))
    od = to_int(cfg.get("OnDemandTargetCapacity")) or 0
    count = total - od if isinstance(total, int) and isinstance(od, int) else None
    if count is not None and count <= 0:
        return []
    default_price = cfg.get("SpotPrice")
    offers: list[SpotOffer] = []
    for i, spec in enumerate(as_list(cfg.get("LaunchSpecifications"))):
        if isinstance(spec, dict):
            price = spec.get("SpotPrice")
            path = f"SpotFleetRequestConfig.LaunchSpecifications[{i}].SpotPrice"
            if price is None:
                price, path = default_price, "SpotFleetRequestConfig.SpotPrice"
            offers.append(SpotOffer(spec.get("InstanceType"), price, path, count))
    for i, c in enumerate(as_list(cfg.get("LaunchTemplateConfigs"))):
        if not isinstance(c, dict):
            continue
        overrides = [o for o in as_list(c.get("Overrides")) if isinstance(o, dict)]
        if not overrides:
            lt = ctx.index.launch_template_of(c.get("LaunchTemplateSpecification"), resource.scope)
            overrides = [{"InstanceType": lt_data(lt).get("InstanceType") if lt else
                          Unknown("launch template not found")}]
        for o in overrides:
            price = o.get("SpotPrice")
            path = f"SpotFleetRequestConfig.LaunchTemplateConfigs[{i}].Overrides.SpotPrice"
            if price is None:
                price, path = default_price, "SpotFleetRequestConfig.SpotPrice"
            offers.append(SpotOffer(o.get("InstanceType"), price, path, count))
    return offers


def _ec2_fleet_offers(resource: Resource, ctx: Context) -> list[SpotOffer]:
    spec = resource.get("TargetCapacitySpecification") or {}
    if not isinstance(spec, dict):
        return []
    spot = to_int(spec.get("SpotTargetCapacity"))
    default = str(spec.get("DefaultTargetCapacityType") or "").lower()
    if not (isinstance(spot, int) and spot > 0) and default != "spot":
        return []
    count = spot if isinstance(spot, int) and spot > 0 else None
    offers: list[SpotOffer] = []
    for i, c in enumerate(_fleet_configs(resource)):
        overrides = [o for o in as_list(c.get("Overrides")) if isinstance(o, dict)]
        if not overrides:
            lt = ctx.index.launch_template_of(c.get("LaunchTemplateSpecification"), resource.scope)
            overrides = [{"InstanceType": lt_data(lt).get("InstanceType") if lt else
                          Unknown("launch template not found")}]
        for o in overrides:
            offers.append(SpotOffer(o.get("InstanceType"), o.get("MaxPrice"),
                                    f"LaunchTemplateConfigs[{i}].Overrides.MaxPrice", count))
    return offers


def count_text(count: int | None, unit: str = "instance") -> str:
    """The multiplier of a basis: " x 3 instances", or " per instance" when the count is unknown."""
    if count is None:
        return f" per {unit}"
    return f" x {count} {unit}{'s' if count != 1 else ''}"


def monthly(rate_per_hour: float, count: int | None) -> float:
    return rate_per_hour * HOURS_PER_MONTH * (count if count is not None else 1)


def iter_dicts(value: Any) -> Iterator[dict[str, Any]]:
    for item in as_list(value):
        if isinstance(item, dict):
            yield item


def ref_text(value: Any) -> str:
    if isinstance(value, Ref):
        return str(value)
    return repr(value) if not isinstance(value, str) else value
