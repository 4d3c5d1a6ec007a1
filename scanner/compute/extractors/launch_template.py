"""``ec2.launch_template``: what it says itself, completed by its consumers.

A template without an instance type launches the types its consumers name (a group's overrides,
an instance's type), or the types its ``InstanceRequirements`` choose by attributes (then the
types stay unknown and the requirement carries the GPU fact). Its root volume comes from the AMI
when no mapping replaces it (none at all, or data volumes only); that fact is decided here,
unless every consumer sets its own root device (then it is decided, and reported, on each
consumer). Live, the volumes themselves carry
the encryption state.
"""

from __future__ import annotations

from typing import Any

from scanner.compute.index import Views
from scanner.compute.registry import DEVICES, LAUNCHES, SPOT, extractor
from scanner.compute.view import ComputeView, Device, Network, Purchase, SpotOffer, Types
from scanner.kinds.facts import SPOT_PRICES
from scanner.model import Resource, Unknown


@extractor("ec2.launch_template", provides=(LAUNCHES, SPOT, DEVICES), rank=2)
def launch_template(r: Resource, views: Views) -> ComputeView:
    spec = views.own_spec(r)
    uses = views.uses_of(r)
    own_type = spec.instance_type.value
    if own_type is not None:
        types: list[Any] = [own_type]
    else:
        types = [t for _view, use in uses for t in use.types if t is not None]

    requirement = spec.requirement if own_type is None else None
    if spec.spot_market is True:
        offered = types or [Unknown("instance types chosen by attributes (InstanceRequirements)"
                                    if requirement is not None
                                    else "no instance type in the template")]
        spot: tuple[SpotOffer, ...] | Unknown = tuple(
            SpotOffer(t, spec.spot_max_price.value, spec.spot_max_price.path, None)
            for t in dict.fromkeys(offered))
    else:
        spot = spec.spot_market if isinstance(spec.spot_market, Unknown) else ()

    devices: tuple[Device, ...] = ()
    if r.declared:
        # When no mapping replaces it (none at all, or data volumes only), the root volume
        # comes from the AMI: decided here, unless every consumer sets its own root device
        # (then each consumer decides, and is judged, alone).
        overridden = bool(uses) and all(use.sets_root_device for _v, use in uses)
        devices = spec.devices if overridden else spec.devices_or_root()

    prices = r.get(SPOT_PRICES.attribute)
    return ComputeView(
        r, types=Types(tuple(types), requirement),
        purchase=Purchase(spot=spot, maybe_spot=spec.spot_market is not False,
                          option=spec.option, option_path=spec.option_path,
                          current_spot_prices=prices if isinstance(prices, dict) else None),
        devices=devices, network=Network(placed=False, public_ip=spec.public_ip))
