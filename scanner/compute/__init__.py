"""One compute view per resource, computed once by the extractor its kind registered.

Enters: the normalized resources of one evaluation (a ``scanner.model.graph.ResourceIndex``).
Leaves: a :class:`~scanner.compute.view.ComputeView` per compute (or storage) resource: its
instance types or GPU requirement, capacity, purchase option, storage devices, subnets and
public-IP settings, and the launch templates it uses; plus the joins policies share (GPU compute
per subnet and per VPC, and the GPU compute whose VPC the scan cannot tell, with why).

Policies read only these views and the network graph. A new compute kind is one module in
``scanner/compute/extractors/`` (found by discovery) that registers its extractor with the
capabilities its view provides; every policy that asks for those capabilities then judges it.
"""

from __future__ import annotations

from scanner.compute.index import Placement, Views, VpcNotKnown, views
from scanner.compute.registry import (
    DEVICES,
    DEVICES_LIVE,
    GROUP,
    LAUNCHES,
    MEASURED,
    PLACES,
    POOLS,
    SPOT,
    extractor,
    kinds_with,
    reads_of,
)
from scanner.compute.view import (
    Attr,
    Capacity,
    ComputeView,
    Device,
    GpuRequirement,
    Network,
    Observed,
    Purchase,
    Split,
    SpotOffer,
    SpotPools,
    TemplateUse,
    Types,
)

__all__ = [
    "DEVICES",
    "DEVICES_LIVE",
    "GROUP",
    "LAUNCHES",
    "MEASURED",
    "PLACES",
    "POOLS",
    "SPOT",
    "Attr",
    "Capacity",
    "ComputeView",
    "Device",
    "GpuRequirement",
    "Network",
    "Observed",
    "Placement",
    "Purchase",
    "Split",
    "SpotOffer",
    "SpotPools",
    "TemplateUse",
    "Types",
    "Views",
    "VpcNotKnown",
    "extractor",
    "kinds_with",
    "reads_of",
    "views",
]
