"""Spot max prices: above the organisation's cap (SPOT-001) or too low to be fulfilled
(SPOT-002)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from policies.base import Context, Remediation, policy
from policies.common import money, rate, to_price
from policies.format_fixes import with_formats
from scanner.compute import SPOT, SpotOffer, kinds_with
from scanner.kinds.facts import SPOT_PRICES
from scanner.model import Resource, Result, Severity, Status, Unknown
from scanner.model.money import Component, build_savings
from scanner.pricing.prices import Price, price, region_of

# The cap is the organisation's share of the on-demand list price, and what spot can cost is
# the spot market's price: never discounted (docs/purchase-options.md).
LIST_PRICE = "list price"
SPOT_KINDS = kinds_with(SPOT)  # every kind that may request spot capacity
ADVICE = (
    "AWS advises against setting a max price: spot instances are charged the current spot price, "
    "never the max, and a low max price only gets capacity interrupted more often. This "
    "organisation caps anyway so that a spike in spot prices can never cost more than the cap "
    "(a runaway pool of large GPU instances at on-demand prices is a budget incident).")


def spot_offers(resource: Resource, ctx: Context) -> tuple[SpotOffer, ...] | Unknown:
    """The spot capacity the resource requests; () when it requests none (not applicable: a
    Capacity Block or a targeted reservation requests none), or when what it configures cannot
    be bought (a configuration AWS rejects: a notice, ASG-004 judges it)."""
    view = ctx.compute.of(resource)
    if view is None:
        return ()
    if view.purchase.rejected:
        ctx.notice(resource, "not judged: its purchase configuration is rejected by AWS "
                             "(see ASG-004)")
        return ()
    return view.purchase.spot


def _on_demand(instance_type: Any, resource: Resource, ctx: Context) -> Price | None:
    """The on-demand price of a type where the resource runs: its region's catalogue price,
    else us-east-1's (the basis says which); None when the type is not known."""
    if not isinstance(instance_type, str):
        return None
    return price(instance_type, region_of(resource), catalog=ctx.catalog)


def _od_usd(instance_type: Any, resource: Resource, ctx: Context) -> float | None:
    found = _on_demand(instance_type, resource, ctx)
    return found.usd_hour if found is not None else None


def _offer_rows(offers: tuple[SpotOffer, ...], resource: Resource,
                ctx: Context) -> list[dict[str, Any]]:
    rows = []
    for o in offers:
        rows.append({"instance_type": o.instance_type if isinstance(o.instance_type, str)
                     else None, "max_price": o.max_price if not isinstance(o.max_price, Unknown)
                     else None, "on_demand_usd_hour": _od_usd(o.instance_type, resource, ctx),
                     "count": o.count, "count_basis": o.count_basis or None,
                     "path": o.path})
    return rows


@policy(
    id="SPOT-001",
    title="Spot max price above the organisation's cap",
    severity=Severity.MEDIUM,
    kinds=SPOT_KINDS,
    description="A spot max price may be at most max_price_ratio x the on-demand price of the "
                "instance type (every override type of a group). With require_explicit_cap, no "
                "max price counts as the on-demand price (AWS's default). A SPOT Batch compute "
                "environment's BidPercentage is that share of each type's on-demand price "
                "(absent: 100 %). A SPOT EKS node group has no max price to set: not judged.",
    remediation=with_formats("SPOT-001", Remediation(
        text="Set the spot max price to at most max_price_ratio x on-demand. " + ADVICE,
        terraform='instance_market_options {\n  market_type = "spot"\n  spot_options {\n'
                  '    max_price = "0.70"  # <= 0.7 x on-demand of the type\n  }\n}',
        cloudformation="InstanceMarketOptions:\n  MarketType: spot\n  SpotOptions:\n"
                       '    MaxPrice: "0.70"',
        by_kind={"batch.compute_environment": Remediation(
            text="Set the compute environment's bid percentage to at most max_price_ratio x 100. "
                 + ADVICE,
            terraform="compute_resources {\n  bid_percentage = 70\n}",
            cloudformation="ComputeResources:\n  BidPercentage: 70")})),
    params={"max_price_ratio": 0.7, "require_explicit_cap": True},
)
def spot_001(resource: Resource, ctx: Context) -> Iterator[Result]:
    offers = spot_offers(resource, ctx)
    if offers == ():
        return
    if isinstance(offers, Unknown):
        yield ctx.result(resource, Status.UNKNOWN, f"spot settings not known: {offers.reason}")
        return
    ratio = float(ctx.params["max_price_ratio"])
    explicit = bool(ctx.params["require_explicit_cap"])
    failing: list[tuple[SpotOffer, float, float, float]] = []
    unpriced: list[SpotOffer] = []  # fail by the rule alone; no catalogue price for a saving
    missing_price: list[str] = []
    unknown: list[str] = []
    for o in offers:
        od = _od_usd(o.instance_type, resource, ctx)
        if o.max_price_percent is not None or to_price(o.max_price) is None:
            # No max price (the on-demand price applies) or a percentage of on-demand: the
            # verdict is the ratio's alone, whatever the price; only the saving needs it.
            share = _share_of_on_demand(o, explicit)
            if isinstance(share, Unknown):
                unknown.append(f"max price not known: {share.reason}")
            elif share is not None and share > ratio + 1e-9:
                if od is None:
                    unpriced.append(o)
                else:
                    failing.append((o, share * od, ratio * od, od))
            continue
        price = to_price(o.max_price)
        if isinstance(price, Unknown):
            unknown.append(f"max price not known: {price.reason}")
            continue
        if not isinstance(o.instance_type, str):
            unknown.append(_type_unknown(o))
            continue
        if od is None:
            missing_price.append(o.instance_type)
            continue
        cap = ratio * od
        if price > cap + 1e-9:  # type: ignore[operator]
            failing.append((o, float(price), cap, od))  # type: ignore[arg-type]
    evidence = {"offers": _offer_rows(offers, resource, ctx), "max_price_ratio": ratio,
                "require_explicit_cap": explicit}
    if failing:
        yield _fail_001(resource, ctx, failing, ratio, evidence)
    elif unpriced:
        yield _fail_001_unpriced(resource, ctx, unpriced, ratio, evidence)
    elif unknown:
        yield ctx.result(resource, Status.UNKNOWN, unknown[0], evidence=evidence)
    elif missing_price:
        yield ctx.result(resource, Status.UNKNOWN,
                         f"no catalogue price for {', '.join(sorted(set(missing_price)))} to "
                         "compare the max price with", evidence=evidence)
    else:
        yield ctx.result(resource, Status.PASS, f"spot max price within {ratio:g} x on-demand",
                         evidence=evidence)


def _share_of_on_demand(offer: SpotOffer, explicit: bool) -> float | Unknown | None:
    """The max price as a fraction of on-demand when it is one by its nature: a percentage
    (absent = 100 %), or no max price at all (AWS's default, the on-demand price) when the
    organisation counts that (require_explicit_cap). None: nothing to judge."""
    pct = offer.max_price_percent
    if pct is not None:
        if isinstance(pct, Unknown):
            return pct
        try:
            return float(pct) / 100.0
        except (TypeError, ValueError):
            return Unknown(f"{pct!r} is not a percentage")
    return 1.0 if explicit else None


def _type_unknown(offer: SpotOffer) -> str:
    reason = offer.instance_type.reason if isinstance(offer.instance_type, Unknown) else ""
    return f"instance type not known{': ' + reason if reason else ''}"


def _fail_001_unpriced(resource: Resource, ctx: Context, unpriced: list[SpotOffer],
                       ratio: float, evidence: dict[str, Any]) -> Result:
    """A FAIL by the rule alone: the type's on-demand price is not in the catalogue (or the
    type is not known), so no saving is estimated."""
    o = unpriced[0]
    if isinstance(o.instance_type, str):
        head = o.instance_type
        why = f"the on-demand price of {o.instance_type} is not in the catalogue"
    else:
        head, why = _type_unknown(o), "the instance type is not known"
    if o.max_price_percent is None:
        setting = "no max price: the on-demand price applies"
    else:
        setting = f"max price {o.max_price_percent}% of on-demand"
    return ctx.result(
        resource, Status.FAIL,
        f"{head}: {setting}, above the cap of {ratio:g} x on-demand ({why}: no saving is "
        "estimated)", path=o.path,
        evidence=evidence)


def _fail_001(resource: Resource, ctx: Context, failing: list[tuple[SpotOffer, float, float,
              float]], ratio: float, evidence: dict[str, Any]) -> Result:
    # One pool is filled with any of the types: count the cheapest overspend (conservative),
    # and say the range.
    over = sorted(failing, key=lambda f: f[1] - f[2])
    o, eff, cap, od = over[0]
    worst = over[-1]
    unset = o.max_price_percent is None and to_price(o.max_price) is None
    price_text = (f"no max price (= on-demand {rate(od)} $/h)" if unset
                  else f"max price {o.max_price_percent}% of on-demand ({rate(eff)} $/h)"
                  if o.max_price_percent is not None else f"max price {rate(eff)} $/h")
    notes = []
    if len(over) > 1:
        notes.append(f"overspend ranges {rate(over[0][1] - over[0][2])}-"
                     f"{rate(worst[1] - worst[2])} $/h across {len(over)} instance types, the "
                     "lowest counted")
    notes.append("worst case, if the spot price reaches the max price")
    found = _on_demand(o.instance_type, resource, ctx)
    where = found.basis if found is not None else f"on-demand {o.instance_type}"
    head = (f"{o.instance_type}: {price_text} is above the cap {rate(cap)} $/h "
            f"({ratio:g} x on-demand)")
    if o.count == 0:  # nothing launches it: a finding, no money
        why = o.count_basis or "no capacity launches it"
        return ctx.result(resource, Status.FAIL, f"{head}; no exposure is booked: {why}",
                          path=o.path, evidence=evidence)
    if o.count_basis:
        notes.insert(0, f"capacity: {o.count_basis}")
    notes.append(LIST_PRICE)
    savings = build_savings(
        [Component(eff, cap, o.count, note=f"cap = {ratio:g} x {rate(od)} $/h {where}")],
        kind="overspend_cap", note="; ".join(notes))
    return ctx.result(
        resource, Status.FAIL,
        f"{head}; up to {money(savings.usd_month)} $/month over the cap",
        path=o.path, evidence=evidence, savings=savings)


@policy(
    id="SPOT-002",
    title="Spot max price too low to be fulfilled",
    severity=Severity.MEDIUM,
    kinds=SPOT_KINDS,
    needs=(SPOT_PRICES.name,),  # live: current spot prices per type
    description="A spot max price below min_price_ratio x on-demand (or, live, below the current "
                "spot price) leaves capacity unfulfilled or constantly interrupted.",
    remediation=with_formats("SPOT-002", Remediation(
        text="Raise the max price to at least min_price_ratio x on-demand, or remove it if the "
             "organisation allows (then the on-demand price applies).",
        terraform='spot_options {\n  max_price = "0.40"\n}',
        cloudformation='SpotOptions:\n  MaxPrice: "0.40"',
        by_kind={"batch.compute_environment": Remediation(
            text="Raise the compute environment's bid percentage to at least min_price_ratio x "
                 "100.",
            terraform="compute_resources {\n  bid_percentage = 40\n}",
            cloudformation="ComputeResources:\n  BidPercentage: 40")})),
    params={"min_price_ratio": 0.25},
)
def spot_002(resource: Resource, ctx: Context) -> Iterator[Result]:
    offers = spot_offers(resource, ctx)
    if offers == ():
        return
    if isinstance(offers, Unknown):
        yield ctx.result(resource, Status.UNKNOWN, f"spot settings not known: {offers.reason}")
        return
    ratio = float(ctx.params["min_price_ratio"])
    evidence = {"offers": _offer_rows(offers, resource, ctx), "min_price_ratio": ratio}
    missing: list[str] = []
    unknown: list[str] = []
    for o in offers:
        if o.max_price_percent is not None:  # a percentage of on-demand: the ratio decides
            share = _share_of_on_demand(o, True)
            if isinstance(share, Unknown):
                unknown.append(f"max price not known: {share.reason}")
            elif share is not None and share < ratio - 1e-9:
                yield ctx.result(resource, Status.FAIL,
                                 f"max price {o.max_price_percent}% of on-demand is below "
                                 f"{ratio:g} x on-demand: likely never fulfilled", path=o.path,
                                 evidence=evidence)
                return
            continue
        price = to_price(o.max_price)
        if price is None:
            continue  # no max price: the on-demand price applies, never too low
        if isinstance(price, Unknown):
            unknown.append(f"max price not known: {price.reason}")
            continue
        if not isinstance(o.instance_type, str):
            unknown.append(_type_unknown(o))
            continue
        current = _current_spot(resource, o, ctx)
        if isinstance(current, float) and price < current:
            yield ctx.result(resource, Status.FAIL,
                             f"{o.instance_type}: max price {rate(price)} $/h is below the "
                             f"current spot price {rate(current)} $/h", path=o.path,
                             evidence=evidence | {"current_spot_price": current})
            return
        od = _od_usd(o.instance_type, resource, ctx)
        if od is None:
            missing.append(o.instance_type)
            continue
        floor = ratio * od
        if price < floor - 1e-9:
            yield ctx.result(resource, Status.FAIL,
                             f"{o.instance_type}: max price {rate(price)} $/h is below "
                             f"{ratio:g} x on-demand ({rate(floor)} $/h): likely never "
                             "fulfilled", path=o.path, evidence=evidence)
            return
    if unknown:
        yield ctx.result(resource, Status.UNKNOWN, unknown[0], evidence=evidence)
    elif missing:
        yield ctx.result(resource, Status.UNKNOWN,
                         f"no catalogue price for {', '.join(sorted(set(missing)))}",
                         evidence=evidence)
    else:
        yield ctx.result(resource, Status.PASS, "spot max price can be fulfilled",
                         evidence=evidence)


def _current_spot(resource: Resource, offer: SpotOffer, ctx: Context) -> float | None:
    view = ctx.compute.of(resource)  # live: the fact ec2.spot_prices, {type: price}
    prices = view.purchase.current_spot_prices if view is not None else None
    if isinstance(prices, dict):
        value = to_price(prices.get(offer.instance_type))
        return value if isinstance(value, float) else None
    return None
