"""``ec2.spot_request``: one spot request and its launch specification."""

from __future__ import annotations

from scanner.compute.index import Views
from scanner.compute.launch import launch_spec, placement, subnet_values
from scanner.compute.registry import DEVICES, LAUNCHES, PLACES, SPOT, extractor
from scanner.compute.values import to_int
from scanner.compute.view import SPOT as SPOT_OPTION
from scanner.compute.view import ComputeView, Network, Purchase, SpotOffer, Types
from scanner.kinds.facts import SPOT_PRICES
from scanner.model import Resource, Unknown

SPEC = "LaunchSpecification"


@extractor("ec2.spot_request", provides=(LAUNCHES, PLACES, SPOT, DEVICES), rank=5)
def spot_request(r: Resource, views: Views) -> ComputeView:
    spec = launch_spec(r.get(SPEC), f"{SPEC}.")
    itype = spec.instance_type.value
    count = to_int(r.get("InstanceCount"))
    offer = SpotOffer(itype, r.get("SpotPrice"), "SpotPrice",
                      count if isinstance(count, int) else 1)
    prices = r.get(SPOT_PRICES.attribute)
    zones = (spec.zone,) if spec.zone is not None else ()
    return ComputeView(
        r, types=Types((itype,) if itype is not None else (Unknown("no instance type"),)),
        purchase=Purchase(option=SPOT_OPTION, spot=(offer,), maybe_spot=True,
                          current_spot_prices=prices if isinstance(prices, dict) else None),
        devices=spec.devices_or_root() if r.declared else (),
        network=Network(placed=True, subnets=placement(
                            subnet_values(s.value for s in spec.subnets), zones, views.index,
                            r.scope, attached_interface=spec.attached_interface),
                        subnets_path=f"{SPEC}.SubnetId", zones=zones,
                        public_ip=spec.public_ip, attached_interface=spec.attached_interface))
