"""``gpuaudit catalog refresh``: regional on-demand prices from the AWS Price List API.

One paginated GetProducts walk per catalogue instance type and region (service AmazonEC2;
TERM_MATCH filters instanceType, regionCode, operatingSystem=Linux, tenancy=Shared,
preInstalledSw=NA, capacitystatus=Used), through the read-only client factory. Of the products
returned, the shared-tenancy box usage without a licence (``usagetype`` ``*BoxUsage:<type>``,
``licenseModel`` "No License required" where given) is kept, and its OnDemand hourly USD price
read. The result is the catalogue with that region's prices set (a type the region does not
offer loses any old price there), the region listed and the publication date as ``as_of``.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from scanner.aws.collectors.base import Call
from scanner.catalog import BASE_REGION, Catalog

PRICING_REGION = "us-east-1"  # where the Price List API answers
SERVICE_CODE = "AmazonEC2"
# What `catalog refresh` calls (gpuaudit iam-policy lists it in a statement of its own).
CATALOG_CALLS = (Call("pricing", "GetProducts", ("catalog.prices",)),)


class RefreshError(Exception):
    """The Price List API answer could not be used (the message says which type and why)."""


def filters(instance_type: str, region: str) -> list[dict[str, str]]:
    terms = {"instanceType": instance_type, "regionCode": region, "operatingSystem": "Linux",
             "tenancy": "Shared", "preInstalledSw": "NA", "capacitystatus": "Used"}
    return [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in terms.items()]


def request(instance_type: str, region: str) -> dict[str, Any]:
    return {"ServiceCode": SERVICE_CODE, "Filters": filters(instance_type, region),
            "FormatVersion": "aws_v1", "MaxResults": 100}


def on_demand_price(items: Iterable[Any], instance_type: str) -> tuple[float | None, str | None]:
    """(USD per hour, publication date) of the Linux shared box usage among ``items``."""
    found: list[tuple[float, str | None]] = []
    for raw in items:
        try:
            item = json.loads(raw) if isinstance(raw, str) else raw
            attrs = item["product"]["attributes"]
        except (ValueError, KeyError, TypeError) as exc:
            raise RefreshError(f"{instance_type}: a PriceList item is not a product: {exc}") \
                from exc
        if attrs.get("instanceType") != instance_type:
            continue
        if "BoxUsage" not in str(attrs.get("usagetype", "BoxUsage")):
            continue
        if attrs.get("licenseModel", "No License required") != "No License required":
            continue
        for term in (item.get("terms") or {}).get("OnDemand", {}).values():
            for dim in (term.get("priceDimensions") or {}).values():
                if str(dim.get("unit", "")).lower() not in ("hrs", "hours"):
                    continue
                try:
                    usd = float((dim.get("pricePerUnit") or {})["USD"])
                except (KeyError, TypeError, ValueError) as exc:
                    raise RefreshError(f"{instance_type}: no USD price: {exc}") from exc
                if usd > 0:
                    found.append((usd, item.get("publicationDate")))
    if not found:
        return None, None
    return min(found)


Pages = Callable[[dict[str, Any]], Iterable[dict[str, Any]]]


def refresh(catalog: Catalog, regions: Iterable[str], pages: Pages,
            types: Iterable[str] | None = None, source: str = "AWS Price List API") -> Catalog:
    """``catalog`` with the prices of ``regions`` read through ``pages`` (GetProducts pages)."""
    instances = dict(catalog.instances)
    dates: list[str] = []
    done = list(regions)
    for region in done:
        for name in sorted(types or catalog.instances):
            spec = instances.get(name)
            if spec is None:
                continue
            items = [i for page in pages(request(name, region)) for i in
                     page.get("PriceList") or []]
            usd, published = on_demand_price(items, name)
            prices = {r: p for r, p in spec.prices.items() if r != region}
            # the region's old price goes, and its date with it
            price_dates = {r: d for r, d in spec.price_dates.items() if r != region}
            if usd is not None:
                prices[region] = usd
                price_dates[region] = str(published)[:10] if published else \
                    dt.date.today().isoformat()
            if published:
                dates.append(str(published)[:10])
            us_east_1 = prices.get(BASE_REGION) if region == BASE_REGION else spec.price_usd_hour
            instances[name] = replace(spec, prices=prices, price_usd_hour=us_east_1,
                                      price_dates=price_dates)
    as_of = max(dates) if dates else dt.date.today().isoformat()
    all_regions = tuple(sorted({*catalog.regions, *done}))
    note = f"{', '.join(done)} from the {source} ({as_of})"
    price_source = f"{catalog.price_source}; {note}" if catalog.price_source else note
    return replace(catalog, instances=instances, regions=all_regions, as_of=as_of,
                   price_source=price_source,
                   source=catalog.source.split(" + refreshed")[0] + f" + refreshed: {note}")
