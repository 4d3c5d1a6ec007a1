"""``autoscaling.launch_configuration``: a launch specification with a spot price."""

from __future__ import annotations

from scanner.compute.index import Views
from scanner.compute.launch import launch_spec
from scanner.compute.registry import DEVICES, LAUNCHES, SPOT, extractor
from scanner.compute.view import ComputeView, Network, Purchase, SpotOffer, Types
from scanner.kinds.facts import SPOT_PRICES
from scanner.model import Resource, Unknown


@extractor("autoscaling.launch_configuration", provides=(LAUNCHES, SPOT, DEVICES), rank=3)
def launch_configuration(r: Resource, views: Views) -> ComputeView:
    spec = launch_spec(r.attrs)
    itype = r.get("InstanceType")
    price = r.attrs.get("SpotPrice")
    spot = () if price is None or price == "" else (
        SpotOffer(r.attrs.get("InstanceType"), price, "SpotPrice", None),)
    prices = r.get(SPOT_PRICES.attribute)
    return ComputeView(
        r, types=Types((itype,) if itype is not None else (Unknown("no instance type"),)),
        purchase=Purchase(spot=spot, maybe_spot=bool(spot),
                          current_spot_prices=prices if isinstance(prices, dict) else None),
        devices=spec.devices_or_root() if r.declared else (),
        network=Network(placed=False, public_ip=spec.public_ip))
