"""Auto Scaling group purchase mix: on-demand share (ASG-001) and spot diversification (ASG-002)."""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from typing import Any

from policies.base import Context, Remediation, policy
from policies.common import describe, rate
from policies.yaml_kinds import NODE_GROUP, NODE_POOL, QUEUE
from scanner.compute import GROUP, POOLS, SpotPools, kinds_with, reads_of
from scanner.compute.purchase import setting_for
from scanner.model import Resource, Result, Savings, Severity, Status, Unknown
from scanner.model.money import HOURS_PER_MONTH, Component, build_savings, usd_text
from scanner.pricing.prices import SPOT, price, region_of
from scanner.pricing.rates import paid

GROUP_KINDS = kinds_with(GROUP)  # every kind with an on-demand / spot split
ASG_NEEDS = reads_of(GROUP_KINDS)  # the launch templates and configurations groups read
# ASG-002 also judges spot pools without a group split (a NodePool, a managed node group, a
# ParallelCluster queue): every kind whose view can hold SpotPools.
POOL_KINDS = tuple(dict.fromkeys(GROUP_KINDS + kinds_with(POOLS)))
POOL_NEEDS = reads_of(POOL_KINDS)


@policy(
    id="ASG-001",
    title="On-demand share of an Auto Scaling group outside the band",
    severity=Severity.MEDIUM,
    category="cost",
    kinds=GROUP_KINDS,
    needs=ASG_NEEDS,
    description="The on-demand share at desired capacity (AWS's rounding: base, then the "
                "percentage above base rounded up) must lie within on_demand_percent "
                "[min, max], bounds inclusive: the 70% spot / 30% on-demand mix. With gpu_only "
                "(the default) only GPU groups are judged; a group whose instance types are not "
                "known is judged, and gets UNKNOWN rather than FAIL. A group whose size can "
                "never hold a split inside the band (MaxSize 1 or 2 for 20-40%) gets a notice, "
                "not a verdict. EKS managed node groups and AWS Batch compute environments buy "
                "one option by construction (CapacityType, Type: all on-demand or all spot, the "
                "mix is made across them) and are not judged. Above the band, the saving moves "
                "on-demand units to spot down to the on-demand count inside the band closest to "
                "the group's (evidence target_on_demand, and the setting that gives it); a group "
                "whose current size holds no count inside the band (2 instances: 0, 50 or 100%) "
                "FAILs with no saving, and the message names the nearest size that holds one.",
    remediation=Remediation(
        text="Use a mixed instances policy with OnDemandPercentageAboveBaseCapacity inside the "
             "band (30 for the 70/30 mix) and a small OnDemandBaseCapacity.",
        terraform="mixed_instances_policy {\n  instances_distribution {\n"
                  "    on_demand_base_capacity                  = 0\n"
                  "    on_demand_percentage_above_base_capacity = 30\n"
                  '    spot_allocation_strategy                 = "price-capacity-optimized"\n'
                  "  }\n  launch_template { ... }\n}",
        cloudformation="MixedInstancesPolicy:\n  InstancesDistribution:\n"
                       "    OnDemandBaseCapacity: 0\n"
                       "    OnDemandPercentageAboveBaseCapacity: 30\n"
                       "    SpotAllocationStrategy: price-capacity-optimized"),
    fixes={
        NODE_GROUP: ("Use an instancesDistribution with onDemandPercentageAboveBaseCapacity inside"
                     " the band (30 for the 70/30 mix) and a small onDemandBaseCapacity."),
    },
    params={"on_demand_percent": {"min": 20, "max": 40}, "spot_price_ratio": 0.35,
            "gpu_only": True},
)
def asg_001(asg: Resource, ctx: Context) -> Iterator[Result]:
    view = ctx.compute.of(asg)
    if view is None:
        return
    if view.purchase.fixed_market:
        return  # one purchase option by construction (a node group, a compute environment)
    if not judged_on_its_mix(asg, ctx):
        return
    gpu = view.types.gpu()
    gpu_only = bool(ctx.params["gpu_only"])
    if gpu_only and gpu is False:
        return  # the organisation applies the mix to GPU groups only
    cap = view.purchase.split
    if cap is None:
        return
    if isinstance(cap, Unknown):
        yield ctx.result(asg, Status.UNKNOWN, f"capacity settings not known: {cap.reason}")
        return
    band = ctx.params["on_demand_percent"]
    lo, hi = float(band["min"]), float(band["max"])
    share = share_percent(cap.on_demand, cap.desired)
    unit = "capacity units" if cap.weighted else "instances"
    evidence: dict[str, Any] = {
        "desired": cap.desired, "desired_from": cap.basis, "on_demand": cap.on_demand,
        "on_demand_share_percent": round(share, 2), "band_percent": [lo, hi], "unit": unit}
    if in_band(cap.on_demand, cap.desired, lo, hi):
        yield ctx.result(asg, Status.PASS, f"on-demand share {share:.0f}% within {lo:g}-{hi:g}%",
                         evidence=evidence)
        return
    largest = view.capacity.max.value if view.capacity is not None else None
    if isinstance(largest, int) and not isinstance(largest, bool) and \
            not can_hold_a_split(largest, lo, hi):
        ctx.notice(asg, f"not judged: at most {largest} {_one(unit, largest)} (MaxSize "
                        f"{largest}), and no on-demand/spot split of so few lies within "
                        f"{lo:g}-{hi:g}% (its share is {share:.0f}%)")
        return
    side = "above" if share > hi else "below"
    message = (f"on-demand share {share:.0f}% ({cap.on_demand} of {cap.desired} {unit}) is "
               f"{side} the {lo:g}-{hi:g}% band")
    target = compliant_on_demand(cap.desired, cap.on_demand, lo, hi)
    savings = None
    if target is None:  # still outside the band, but no split of this size is inside it
        message += "; " + _no_split_text(cap, unit, lo, hi, view.capacity, side == "above")
        evidence["target_on_demand"] = None
        if side == "above":
            evidence["saving_why_none"] = (
                f"no split of {cap.desired} {unit} is inside the {lo:g}-{hi:g}% band, so no "
                "on-demand-to-spot move of this size complies and no saving is counted")
    else:
        evidence["target_on_demand"] = target
        evidence["target_share_percent"] = round(share_percent(target, cap.desired), 2)
        base, percent = setting_for(cap.desired, target)  # AWS's rounding gives the target
        evidence["target_setting"] = {"on_demand_base_capacity": base,
                                      "on_demand_percentage_above_base_capacity": percent}
        if side == "above":  # below the band, more on-demand costs money: no saving
            savings = _mix_savings(asg, ctx, cap.desired, cap.on_demand, target, unit)
    if isinstance(largest, Unknown):  # fixed at one or two (not judged), or free to grow?
        yield ctx.result(asg, Status.UNKNOWN, f"{message}, and whether the group can grow to a "
                         f"size that holds a split in the band is not known (MaxSize: "
                         f"{largest.reason})", path=view.purchase.split_path, evidence=evidence)
        return
    if gpu_only and isinstance(gpu, Unknown):  # judged only if GPU: not known, so not a FAIL
        yield ctx.result(asg, Status.UNKNOWN, f"{message}, and whether it is GPU compute is "
                         f"not known ({gpu.reason})", path=view.purchase.split_path,
                         evidence=evidence)
        return
    prepaid = view.purchase.prepaid
    if isinstance(prepaid, Unknown):  # a Capacity Block or reservation is not judged
        yield ctx.result(asg, Status.UNKNOWN, f"{message}, and whether its capacity is prepaid "
                         f"(a Capacity Block or a targeted reservation) is not known "
                         f"({prepaid.reason})", path=view.purchase.split_path,
                         evidence=evidence)
        return
    yield ctx.result(asg, Status.FAIL, message, path=view.purchase.split_path,
                     evidence=evidence, savings=savings)


def judged_on_its_mix(resource: Resource, ctx: Context) -> bool:
    """Whether a group's on-demand/spot mix can be judged: not when AWS rejects its purchase
    configuration (ASG-004 says so), not for prepaid capacity (a Capacity Block, a targeted
    reservation: paid whether it runs or not, so the band does not apply and no spot saving
    exists); both are notices. An option not known is left to the split (UNKNOWN there)."""
    # union-attr: not None, asg_001 (the only caller) returned when the view was None
    purchase = ctx.compute.of(resource).purchase  # type: ignore[union-attr]
    if purchase.rejected:
        ctx.notice(resource, "not judged: its purchase configuration is rejected by AWS "
                             "(see ASG-004)")
        return False
    if purchase.prepaid is True:
        where = f" ({purchase.option_path})" if purchase.option_path else ""
        ctx.notice(resource, f"not judged: {purchase.option} capacity{where} is prepaid; the "
                             "on-demand/spot band does not apply and no spot saving exists")
        return False
    return True


def _one(unit: str, n: int) -> str:
    return unit[:-1] if n == 1 and unit.endswith("s") else unit


def can_hold_a_split(largest: int, lo: float, hi: float) -> bool:
    """Can a group of at most ``largest`` units ever have an on-demand share within [lo, hi]?
    (k of d on-demand, for some size d <= largest.) A group fixed at one or two instances
    cannot hold the default 20-40 % band: 0, 50 or 100 %."""
    if largest >= 100:  # every band at least 1 % wide holds some k/d with d <= 100
        return True
    return any(in_band(k, d, lo, hi) for d in range(1, largest + 1) for k in range(d + 1))


def share_percent(on_demand: int, desired: int) -> float:
    """The on-demand share, in percent, of ``on_demand`` of ``desired`` units."""
    return 100.0 * on_demand / desired


def in_band(on_demand: int, desired: int, lo: float, hi: float) -> bool:
    """ASG-001's verdict: ``on_demand`` of ``desired`` units lies within [lo, hi] percent, bounds
    inclusive. The one home of that predicate: the verdict, the sizes that can hold a split and
    the target a saving is priced at all ask it."""
    return lo <= share_percent(on_demand, desired) <= hi


def compliant_on_demand(desired: int, on_demand: int, lo: float, hi: float) -> int | None:
    """The on-demand count of ``desired`` units inside the band that is closest to
    ``on_demand``: above the band its upper edge (the fewest units moved to spot), below it its
    lower edge. None when no count in 0..desired is inside the band (0, 50 or 100 % of two
    instances for 20-40 %). The in-band counts are consecutive (the share grows with the count),
    so each edge is found by bisection on the verdict's own predicate."""
    if desired <= 0:
        return None
    ks = range(desired + 1)
    first = bisect.bisect_left(ks, True, key=lambda k: share_percent(k, desired) >= lo)
    last = bisect.bisect_right(ks, False, key=lambda k: share_percent(k, desired) > hi) - 1
    if first > last or not in_band(first, desired, lo, hi):
        return None
    return min(max(on_demand, first), last)


def nearest_size_with_a_split(desired: int, lo: float, hi: float, smallest: int = 1,
                              largest: int | None = None) -> int | None:
    """The size closest to ``desired`` (ties: the larger), within [smallest, largest], that holds
    an on-demand count inside the band; None when none within 200 of it does."""
    smallest = max(smallest, 1)
    for step in range(1, 201):
        for d in (desired + step, desired - step):
            if smallest <= d and (largest is None or d <= largest) and \
                    compliant_on_demand(d, 0, lo, hi) is not None:
                return d
    return None


def _no_split_text(cap: Any, unit: str, lo: float, hi: float, capacity: Any,
                   above: bool) -> str:
    """Why a group outside the band has no target: no split of its size is inside the band;
    the nearest size (within its MinSize and MaxSize, where known) that holds one."""
    desired = cap.desired
    shares = ""
    if desired <= 10:
        listed = [f"{share_percent(k, desired):.0f}%" for k in range(desired + 1)]
        shares = f" ({', '.join(listed[:-1])} or {listed[-1]})"
    text = f"no split of {desired} {_one(unit, desired)} is inside the band{shares}"
    if above:
        text += ", so no saving is counted"
    bounds = [getattr(capacity, "min", None), getattr(capacity, "max", None)]
    smallest, largest = (b.value if b is not None and isinstance(b.value, int)
                         and not isinstance(b.value, bool) else None for b in bounds)
    size = nearest_size_with_a_split(desired, lo, hi, smallest or 1, largest)
    if size is None:
        return f"{text}: resize the group or widen the band"
    k = compliant_on_demand(size, cap.on_demand, lo, hi)
    assert k is not None  # nearest_size_with_a_split found one
    return (f"{text}: a desired capacity of {size} holds one ({k} on-demand, "
            f"{share_percent(k, size):.0f}%), or widen the band")


def _mix_savings(asg: Resource, ctx: Context, desired: int, od: int, target: int,
                 unit: str) -> Savings | None:
    """The saving of moving ``od - target`` units to spot; ``target`` is an in-band count
    (compliant_on_demand), never a split the policy would fail."""
    excess = od - target
    if excess <= 0:
        return None
    region = region_of(asg)
    spot_prices = asg.get("CurrentSpotPrices") if isinstance(asg.get("CurrentSpotPrices"),
                                                              dict) else None
    ratio = float(ctx.params["spot_price_ratio"])
    # union-attr: not None, asg_001 (the only caller) returned when the view was None
    types = ctx.compute.of(asg).types.values  # type: ignore[union-attr]
    account = asg.provenance.account
    priced = sorted((ctx.pricing.on_demand(p.usd_hour, t, account).usd_hour, t)
                    for t in dict.fromkeys(types) if isinstance(t, str)
                    and (p := price(t, region, catalog=ctx.catalog)).usd_hour is not None)
    if not priced:
        return None
    cheapest, name = priced[0]
    on_demand = paid(price(name, region, catalog=ctx.catalog), ctx.pricing, account)
    spot = paid(price(name, region, SPOT, catalog=ctx.catalog, spot_prices=spot_prices,
                      spot_price_ratio=ratio), ctx.pricing, account)
    if spot.usd_hour is None or on_demand.usd_hour is None or \
            on_demand.usd_hour <= spot.usd_hour:
        return None  # at the rate paid, spot saves nothing
    one = "capacity unit" if unit == "capacity units" else "instance"
    notes = [f"{on_demand.basis}; {spot.basis}"]
    if len(priced) > 1:
        top, top_name = priced[-1]
        top_spot = price(top_name, region, SPOT, catalog=ctx.catalog, spot_prices=spot_prices,
                         spot_price_ratio=ratio).usd_hour or 0.0
        notes.append(f"on-demand {rate(cheapest)}-{rate(top)} $/h across the override types, "
                     f"the cheapest counted (up to "
                     f"{usd_text(excess * max(top - top_spot, 0.0) * HOURS_PER_MONTH)} "
                     "$/month)")
    return build_savings(
        [Component(on_demand.usd_hour, spot.usd_hour, excess, unit=one,
                   note=f"moved from on-demand to spot ({od} on-demand now, {target} of "
                        f"{desired} = {share_percent(target, desired):.0f}%, inside the band)")],
        kind="spot_mix", note="; ".join(notes))


@policy(
    id="ASG-002",
    title="Spot pools of an Auto Scaling group are not diversified",
    severity=Severity.LOW,
    category="cost",
    kinds=POOL_KINDS,
    needs=POOL_NEEDS,
    description="A group with spot capacity needs at least min_instance_types instance types and "
                "an allocation strategy other than lowest-price (the default when absent). A "
                "SPOT EKS node group is judged on its instance types (EKS picks a "
                "capacity-aware strategy); a SPOT Batch compute environment on its types (a "
                "family stands for its sizes) and its allocation strategy (BEST_FIT, the "
                "default, and BEST_FIT_PROGRESSIVE pick the lowest price first). The same holds "
                "for spot pools without a group split (a Karpenter NodePool whose types are "
                "chosen by requirements counts the types they admit; a service that chooses the "
                "strategy itself, such as Karpenter, passes on the strategy).",
    remediation=Remediation(
        text="Add override instance types of similar size (e.g. g5.2xlarge, g6.2xlarge) and use "
             "price-capacity-optimized allocation.",
        terraform='override { instance_type = "g5.2xlarge" }\n'
                  'override { instance_type = "g6.2xlarge" }\n'
                  'spot_allocation_strategy = "price-capacity-optimized"',
        cloudformation="Overrides:\n  - InstanceType: g5.2xlarge\n  - InstanceType: g6.2xlarge\n"
                       "SpotAllocationStrategy: price-capacity-optimized",
        by_kind={
            "eks.nodegroup": Remediation(
                text="List several instance types of similar size in the SPOT node group "
                     "(EKS then spreads it over their spot pools).",
                terraform='instance_types = ["g5.2xlarge", "g6.2xlarge", "g4dn.2xlarge"]',
                cloudformation="InstanceTypes: [g5.2xlarge, g6.2xlarge, g4dn.2xlarge]"),
            "batch.compute_environment": Remediation(
                text="Use SPOT_PRICE_CAPACITY_OPTIMIZED allocation and several instance types "
                     "(or families) in the SPOT compute environment.",
                terraform='compute_resources {\n'
                          '  allocation_strategy = "SPOT_PRICE_CAPACITY_OPTIMIZED"\n'
                          '  instance_type       = ["g5", "g6"]\n}',
                cloudformation="ComputeResources:\n"
                               "  AllocationStrategy: SPOT_PRICE_CAPACITY_OPTIMIZED\n"
                               "  InstanceTypes: [g5, g6]"),
        }),
    fixes={
        NODE_POOL: ("Allow more instance types for spot: list several in "
                    "node.kubernetes.io/instance-type, or choose by instance-family / instance-"
                    "size / instance-gpu-count instead of one type."),
        NODE_GROUP: ("List at least two instance types (instanceTypes, or "
                     "instancesDistribution.instanceTypes) and set spotAllocationStrategy: price-"
                     "capacity-optimized."),
        QUEUE: ("List several types under the compute resource's Instances and set the queue's "
                "AllocationStrategy: capacity-optimized."),
    },
    params={"min_instance_types": 2},
)
def asg_002(asg: Resource, ctx: Context) -> Iterator[Result]:
    view = ctx.compute.of(asg)
    if view is None:
        return
    if view.purchase.pools:
        yield from _pools_002(asg, ctx, view.purchase.pools)
        return
    if view.purchase.rejected:  # prepaid capacity is judged on any spot its split holds
        ctx.notice(asg, "not judged: its purchase configuration is rejected by AWS "
                        "(see ASG-004)")
        return
    cap = view.purchase.split
    if cap is None:
        return
    if isinstance(cap, Unknown):
        if view.purchase.maybe_spot:
            yield ctx.result(asg, Status.UNKNOWN, f"capacity settings not known: {cap.reason}")
        return
    if cap.desired - cap.on_demand <= 0:
        return
    types = view.types.values
    if any(not isinstance(t, str) for t in types):
        yield ctx.result(asg, Status.UNKNOWN, "instance types not known")
        return
    distinct = sorted(set(types))
    configured = view.purchase.strategy
    strategy = configured.value
    if isinstance(strategy, Unknown):
        yield ctx.result(asg, Status.UNKNOWN, f"allocation strategy not known: {strategy.reason}")
        return
    strategy = strategy or view.purchase.default_strategy
    minimum = int(ctx.params["min_instance_types"])
    evidence: dict[str, Any] = {"instance_types": distinct, "spot_allocation_strategy": strategy,
                                "spot_units": cap.desired - cap.on_demand}
    # Types chosen by attributes, or a name that stands for several types (a Batch family,
    # "optimal"): diversified by construction.
    several = view.types.requirement is not None and not distinct
    several = several or bool(view.types.families & set(distinct))
    if several:
        evidence["several_types"] = sorted(view.types.families & set(distinct)) or \
            "chosen by attributes (InstanceRequirements)"
    problems = []
    if len(distinct) < minimum and not several:
        problems.append(f"{len(distinct)} instance type{'s' if len(distinct) != 1 else ''} "
                        f"(at least {minimum} needed)")
    if strategy in view.purchase.price_first:
        problems.append(f"allocation strategy {strategy}"
                        + ("" if configured.value else " (the default)"))
    if problems:
        yield ctx.result(asg, Status.FAIL, "spot pools not diversified: " + "; ".join(problems),
                         path=view.purchase.pools_path, evidence=evidence)
    else:
        count = "instance types chosen by attributes" if several and not distinct else \
            f"{len(distinct)} instance type{'s' if len(distinct) != 1 else ''}" + (
                f" ({', '.join(sorted(view.types.families & set(distinct)))} "
                "stands for several)" if several else "")
        yield ctx.result(asg, Status.PASS, f"{count}, {strategy}", evidence=evidence)


def _pools_002(resource: Resource, ctx: Context, pools: tuple[SpotPools, ...]) -> Iterator[Result]:
    """ASG-002 on spot pools judged on their own (no group split)."""
    minimum = int(ctx.params["min_instance_types"])
    failing: list[tuple[SpotPools, list[str]]] = []
    unknown: list[str] = []
    rows: list[dict[str, Any]] = []
    for pool in pools:
        if pool.spot is False:
            continue
        label = f"{pool.name}: " if pool.name else ""
        if isinstance(pool.spot, Unknown):
            unknown.append(f"{label}whether it requests spot capacity is not known: "
                           f"{pool.spot.reason}")
            continue
        named = [t for t in pool.types if isinstance(t, str)]
        all_named = bool(pool.types) and len(named) == len(pool.types)
        fewest = pool.fewest if pool.fewest is not None else \
            (len(set(named)) if all_named else None)
        most = pool.most if pool.most is not None else (len(set(named)) if all_named else None)
        strategy = pool.strategy.value
        rows.append({"pool": pool.name or None, "instance_types": sorted(set(named)),
                     "at_least": fewest, "at_most": most,
                     "spot_allocation_strategy": strategy if isinstance(strategy, str)
                     else pool.default_strategy if strategy is None else None})
        problems: list[str] = []
        if most is not None and most < minimum:
            problems.append(f"at most {most} instance type{'s' if most != 1 else ''} (at least "
                            f"{minimum} needed)")
        elif fewest is None or fewest < minimum:
            unknown.append(f"{label}how many instance types it can draw from is not known "
                           f"(at least {minimum} needed; {fewest or 0} certain)")
        if isinstance(strategy, Unknown):
            unknown.append(f"{label}allocation strategy not known: {strategy.reason}")
        elif not pool.chosen_by_service and (strategy or pool.default_strategy) == \
                "lowest-price":
            problems.append("allocation strategy lowest-price"
                            + ("" if strategy else " (the default)"))
        if problems:
            failing.append((pool, problems))
    if not rows and not unknown:
        return
    evidence: dict[str, Any] = {"pools": rows}
    if failing:
        pool, problems = failing[0]
        label = f"{pool.name}: " if pool.name else ""
        note = f" ({pool.note})" if pool.note else ""
        yield ctx.result(resource, Status.FAIL, f"{label}spot pools not diversified{note}: "
                         + "; ".join(problems), path=pool.path, evidence=evidence)
    elif unknown:
        yield ctx.result(resource, Status.UNKNOWN, unknown[0], evidence=evidence)
    else:
        chosen = [p.strategy.note for p in pools if p.chosen_by_service and p.strategy.note]
        configured = sorted({str(r["spot_allocation_strategy"]) for r in rows
                             if r["spot_allocation_strategy"]})
        how = chosen[0] if chosen else ", ".join(configured)
        yield ctx.result(resource, Status.PASS, "at least "
                         f"{min(r['at_least'] for r in rows)} instance types"
                         + (f"; {how}" if how else ""), evidence=evidence)


@policy(
    id="ASG-004",
    title="Spot launch template inside a mixed instances policy (AWS rejects it)",
    severity=Severity.HIGH,
    category="cost",
    kinds=("autoscaling.group",),
    needs=("ec2.launch_template",),
    description="A group with a mixed instances policy chooses spot and on-demand itself (its "
                "instances distribution); its launch template must not request spot "
                "(InstanceMarketOptions MarketType spot). AWS rejects the group at create and "
                "update time (\"Incompatible launch template\"), so the configuration cannot "
                "be deployed as written. Judged on GPU groups with a mixed instances policy "
                "(a rejected group of any kind fails); ASG-001, ASG-002 and "
                "SPOT-* do not judge them (no spot numbers are computed from a configuration "
                "that cannot exist) and the template's own spot exposure does not count them.",
    remediation=Remediation(
        text="Remove instance_market_options from the launch template and set the spot share "
             "and max price in the group's instances_distribution.",
        terraform="# in the aws_launch_template: remove instance_market_options { ... }\n"
                  "mixed_instances_policy {\n  instances_distribution {\n"
                  "    on_demand_percentage_above_base_capacity = 30\n"
                  '    spot_allocation_strategy                 = "price-capacity-optimized"\n'
                  "  }\n}",
        cloudformation="# in LaunchTemplateData: remove InstanceMarketOptions\n"
                       "MixedInstancesPolicy:\n  InstancesDistribution:\n"
                       "    OnDemandPercentageAboveBaseCapacity: 30\n"
                       "    SpotAllocationStrategy: price-capacity-optimized"),
    fixes={
    },
)
def asg_004(asg: Resource, ctx: Context) -> Iterator[Result]:
    view = ctx.compute.of(asg)
    if view is None or not view.purchase.mixed_policy:
        return
    if view.types.gpu() is False and not view.purchase.rejected:
        return  # GPU compute is what is judged; a rejected group is said whatever it runs
    template = view.launch_template
    evidence: dict[str, Any] = {
        "launch_template": template.id if template is not None else None,
        "mixed_instances_policy": view.purchase.split_path}
    if view.purchase.rejected:
        yield ctx.result(asg, Status.FAIL, view.purchase.rejected,
                         path=view.purchase.pools_path,
                         evidence=evidence | {"launch_template_market_type": "spot"})
        return
    if template is None:
        yield ctx.result(asg, Status.UNKNOWN, "its launch template is not in the scan: whether "
                         "it requests spot is not known", evidence=evidence)
        return
    tview = ctx.compute.of(template)
    option = tview.purchase.option if tview is not None else Unknown("not a launch template")
    if isinstance(option, Unknown) or option == "spot":  # spot, and it may not exist
        reason = option.reason if isinstance(option, Unknown) else "it may not exist"
        yield ctx.result(asg, Status.UNKNOWN, f"whether launch template {template.id} requests "
                         f"spot is not known ({reason})", evidence=evidence)
        return
    yield ctx.result(asg, Status.PASS, f"launch template {describe(template)} requests no spot "
                     f"({option}); the mixed instances policy sets the split",
                     evidence=evidence | {"launch_template_purchase_option": option})
