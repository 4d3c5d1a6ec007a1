"""Current spot prices of the instance types that this region's spot capacity asks for.

One paginated DescribeSpotPriceHistory walk per region (``StartTime`` = now returns the latest
price per type and Availability Zone), after the other collectors: the types come from the
launch templates, Auto Scaling groups, launch configurations, spot requests and fleets already
read, and the running spot instances (RS-* price their capacity at the spot price). Each of
those resources gets ``CurrentSpotPrices`` ``{type: price}``, the lowest current
price over the region's zones (below it a max price cannot be fulfilled anywhere), as AWS
spells prices (strings).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from scanner.aws.collectors.base import Call, Collector, RegionContext
from scanner.kinds import facts, schema

# The declared fact "current spot prices" (SPOT-002, live: "below the current spot price"): its
# name (what the Call feeds and policies need), the attribute it adds, and the kinds that carry
# it, all from the kind schema.
SPOT_PRICES = facts.SPOT_PRICES.name
ATTRIBUTE = facts.SPOT_PRICES.attribute
SPOT_CAPABLE = frozenset(schema().kinds_with_fact(SPOT_PRICES))
PRODUCTS = ["Linux/UNIX", "Linux/UNIX (Amazon VPC)"]
_CHUNK = 100


def run(ctx: RegionContext) -> None:
    resources = [r for r in ctx.result.resources if r.kind in SPOT_CAPABLE
                 or (r.kind == "ec2.instance" and r.get("InstanceLifecycle") == "spot")]
    types = sorted({t for r in resources for t in _instance_types(r.attrs)})
    if not types:
        return
    lowest: dict[str, float] = {}
    spelled: dict[str, str] = {}
    now = dt.datetime.now(dt.timezone.utc)
    for i in range(0, len(types), _CHUNK):
        items = ctx.list(
            "ec2",
            "DescribeSpotPriceHistory",
            "SpotPriceHistory",
            InstanceTypes=types[i : i + _CHUNK],
            ProductDescriptions=PRODUCTS,
            StartTime=now,
        )
        if items is None:
            return  # recorded: a Gap on SPOT_PRICES
        for item in items:
            itype, price = item.get("InstanceType"), item.get("SpotPrice")
            if price is None:
                continue
            try:
                value = float(price)
            except (TypeError, ValueError):
                continue
            if isinstance(itype, str) and (itype not in lowest or value < lowest[itype]):
                lowest[itype], spelled[itype] = value, str(price)
    if ctx.closed:
        return  # past the audit's deadline: the result was taken without the prices
    for r in resources:
        wanted = {t: spelled[t] for t in sorted(_instance_types(r.attrs)) if t in spelled}
        r.attrs[ATTRIBUTE] = wanted or {}
    # resources that launch through a template get the template's types too
    region_prices = dict(sorted(spelled.items()))
    for r in resources:
        if r.kind == "autoscaling.group":
            r.attrs[ATTRIBUTE] = region_prices


def _instance_types(value: Any) -> set[str]:
    out: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "InstanceType" and isinstance(item, str) and item:
                out.add(item)
            else:
                out |= _instance_types(item)
    elif isinstance(value, list):
        for item in value:
            out |= _instance_types(item)
    return out


COLLECTOR = Collector(
    name="spot_prices",
    calls=(Call("ec2", "DescribeSpotPriceHistory", (SPOT_PRICES,)),),
    run=run,
    # prices the instance types of everything spot-capable the others found
    after=("instances", "launch_templates", "autoscaling", "spot"),
)
