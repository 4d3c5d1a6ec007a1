"""``price(instance_type, region, market)``: the $/h of one unit of capacity, and how it was
found (the catalogue's price in that region, else its us-east-1 price, said so; a live spot
price, else the design's estimate of ``spot_price_ratio`` x on-demand, said so)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scanner.catalog import BASE_REGION, Catalog, default_catalog
from scanner.model import Resource

SPOT_PRICE_RATIO = 0.35  # the design's estimate of spot against on-demand
MIN_SPOT_FRACTION = 0.01  # a "spot price" below 1 % of on-demand is not a price (moto's constant)
ON_DEMAND, SPOT = "on-demand", "spot"


@dataclass(frozen=True)
class Price:
    instance_type: str
    region: str | None
    market: str  # "on-demand" | "spot"
    usd_hour: float | None  # None: no price known
    basis: str  # where the rate comes from, for the saving's basis text
    estimated: bool = False  # True: a spot estimate, or another region's price

    @property
    def known(self) -> bool:
        return self.usd_hour is not None


def region_of(resource: Resource) -> str | None:
    """The region a resource's capacity is priced in: where it was observed (live), else where
    its IaC says it deploys (CloudFormation --region, the Terraform aws provider's region), else
    None (priced at us-east-1, and the basis says the region is not known)."""
    prov = resource.provenance
    return prov.region or prov.pricing_region


def on_demand(instance_type: str, region: str | None, catalog: Catalog) -> Price:
    where = region or BASE_REGION
    value = catalog.regional_price(instance_type, where)
    if value is not None:
        return Price(instance_type, region, ON_DEMAND, value,
                     f"on-demand {instance_type} {where}{_dated(catalog, instance_type, where)}"
                     + ("" if region else " (region not known)"))
    base = catalog.regional_price(instance_type, BASE_REGION)
    if base is not None:
        return Price(instance_type, region, ON_DEMAND, base,
                     f"on-demand {instance_type} us-east-1"
                     f"{_dated(catalog, instance_type, BASE_REGION)}; the catalogue has no "
                     f"{where} price (gpuaudit catalog refresh --region {where})", estimated=True)
    return Price(instance_type, region, ON_DEMAND, None,
                 f"no catalogue price for {instance_type}")


def _dated(catalog: Catalog, instance_type: str, region: str) -> str:
    """`` (price of 2026-07-20)``: the date of the catalogue's price in ``region``."""
    date = catalog.price_date(instance_type, region)
    return f" (price of {date})" if date else ""


def _spot_value(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if out > 0 else None


def price(
    instance_type: str,
    region: str | None,
    market: str = ON_DEMAND,
    *,
    catalog: Catalog | None = None,
    spot_prices: Mapping[str, Any] | None = None,
    spot_price_ratio: float = SPOT_PRICE_RATIO,
) -> Price:
    """The price of one ``instance_type`` unit in ``region`` on ``market``.

    ``spot_prices``: current spot prices read live ({type: price}, as AWS spells them); a spot
    price below 1 % of on-demand counts as missing, and the estimate is used instead."""
    catalog = catalog or default_catalog()
    od = on_demand(instance_type, region, catalog)
    if market != SPOT:
        return od
    live = _spot_value((spot_prices or {}).get(instance_type))
    if live is not None and (od.usd_hour is None or live >= MIN_SPOT_FRACTION * od.usd_hour):
        return Price(instance_type, region, SPOT, live,
                     f"current spot {instance_type} {region or ''} (DescribeSpotPriceHistory)"
                     .replace("  ", " "))
    if od.usd_hour is None:
        return Price(instance_type, region, SPOT, None, od.basis)
    ignored = (f"; the live spot price {live:g} $/h is below 1% of on-demand and was ignored"
               if live is not None else "")
    return Price(instance_type, region, SPOT, spot_price_ratio * od.usd_hour,
                 f"spot {instance_type} estimated at {spot_price_ratio:g} x {od.basis}{ignored}",
                 estimated=True)
