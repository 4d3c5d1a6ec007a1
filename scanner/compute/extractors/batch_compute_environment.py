"""``batch.compute_environment``: an AWS Batch compute environment's EC2 or Spot compute
resources: instance types (a family such as ``p4d`` stands for every size the catalogue lists of
it), vCPU limits, subnets, launch template, allocation strategy and bid percentage.

One purchase option for the whole environment (EC2 or SPOT): there is no split to configure.
A SPOT environment's max price is ``BidPercentage`` % of each type's on-demand price (absent:
100 %). Without a launch template the instances boot the ECS-optimized AMI, whose root volume
sets no encryption: the account's encryption by default decides it. Fargate environments and
unmanaged ones (no compute resources) launch no EC2 capacity of their own: an empty view.
"""

from __future__ import annotations

import functools
from typing import Any

from scanner.catalog import default_catalog, family_of
from scanner.compute.index import Views
from scanner.compute.launch import decisive, placement, subnet_values
from scanner.compute.registry import DEVICES, GROUP, LAUNCHES, PLACES, SPOT, extractor
from scanner.compute.values import as_list, to_int
from scanner.compute.view import (
    Attr,
    Capacity,
    ComputeView,
    Device,
    Network,
    Purchase,
    Split,
    SpotOffer,
    TemplateUse,
    Types,
)
from scanner.model import Resource, Unknown

CR = "ComputeResources"
# Batch's names for "let Batch choose": several CPU families each (c, m, r).
CHOOSERS = frozenset({"optimal", "default_x86_64", "default_arm64"})
DEFAULT_STRATEGY = "BEST_FIT"
# Batch strategies that prefer the lowest-priced type (the spot equivalent of lowest-price).
PRICE_FIRST = ("BEST_FIT", "BEST_FIT_PROGRESSIVE")


@functools.lru_cache(maxsize=1)
def _families() -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for name in default_catalog().instances:
        out.setdefault(family_of(name), []).append(name)
    return {k: tuple(sorted(v)) for k, v in out.items()}


def expand(entries: list[Any]) -> tuple[list[Any], frozenset[str]]:
    """Instance types, with a family (``g5``) replaced by the sizes the catalogue lists; the
    entries that stand for several types the catalogue does not list (``optimal``, a family it
    does not know) are kept as they are, and returned apart."""
    types: list[Any] = []
    several: set[str] = set()
    for e in entries:
        if isinstance(e, str) and "." not in e:
            sizes = _families().get(e.strip())
            if sizes:
                types.extend(sizes)
                continue
            several.add(e)
        types.append(e)
    return list(dict.fromkeys(types)), frozenset(several)


def _one_type(value: Any) -> Any:
    """An entry of InstanceTypes: a name, or Unknown for anything else (a nested list, a
    mapping: never a value that breaks a set)."""
    if isinstance(value, str | Unknown):
        return value
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    return Unknown(f"{CR}.InstanceTypes: {shown} is not an instance type")


@extractor("batch.compute_environment", provides=(LAUNCHES, PLACES, SPOT, GROUP, DEVICES),
           reads=("ec2.launch_template",), rank=9)
def batch_compute_environment(r: Resource, views: Views) -> ComputeView:
    cr = r.get(CR)
    if isinstance(cr, Unknown):
        return ComputeView(r, types=Types((cr,)), purchase=Purchase(spot=cr, split=cr,
                                                                    fixed_market=True),
                           network=Network(placed=True, subnets=(cr,), subnets_path=CR))
    if not isinstance(cr, dict):
        return ComputeView(r)  # unmanaged: its instances are the user's own
    ctype = cr.get("Type")
    if isinstance(ctype, str) and ctype.strip().upper().startswith("FARGATE"):
        return ComputeView(r)  # Fargate: no EC2 instance of its own
    spot: bool | Unknown = ctype if isinstance(ctype, Unknown) else (
        isinstance(ctype, str) and ctype.strip().upper() == "SPOT")
    if ctype is None:
        spot = Unknown(f"{CR}.Type is not given")

    spec = cr.get("LaunchTemplate")
    lt = views.template(spec, r.scope) if isinstance(spec, dict) else None
    lt_spec = views.template_spec(lt) if lt is not None else None
    raw = cr.get("InstanceTypes")
    several: frozenset[str] = frozenset()
    if isinstance(raw, Unknown):
        types: list[Any] = [raw]
    else:
        types, several = expand([_one_type(t) for t in as_list(raw) if t is not None])
        if not types and lt_spec is not None and lt_spec.instance_type.value is not None:
            types = [lt_spec.instance_type.value]
    types = types or [Unknown("no instance type")]

    capacity = Capacity(
        desired=Attr(to_int(cr.get("DesiredvCpus")), f"{CR}.DesiredvCpus"),
        min=Attr(to_int(cr.get("MinvCpus")), f"{CR}.MinvCpus"),
        max=Attr(to_int(cr.get("MaxvCpus")), f"{CR}.MaxvCpus"))
    vcpus = capacity.max.value
    split: Split | Unknown | None
    if isinstance(vcpus, Unknown):
        split = vcpus
    elif isinstance(spot, Unknown):
        split = spot
    elif not vcpus:
        split = None  # holds no capacity
    else:
        split = Split(vcpus, 0 if spot else vcpus, True, "MaxvCpus (vCPUs)")

    offers: tuple[SpotOffer, ...] | Unknown = ()
    if isinstance(spot, Unknown):
        offers = spot
    elif spot and split is not None:
        bid = cr.get("BidPercentage")
        pct: Any = 100 if bid is None else (bid if isinstance(bid, Unknown) else to_int(bid))
        offers = tuple(SpotOffer(t, None, f"{CR}.BidPercentage", None, max_price_percent=pct)
                       for t in types)
    purchase = Purchase(
        spot=offers, split=split, fixed_market=True, maybe_spot=spot is not False,
        strategy=Attr(cr.get("AllocationStrategy"), f"{CR}.AllocationStrategy"),
        default_strategy=DEFAULT_STRATEGY, price_first=PRICE_FIRST,
        split_path=f"{CR}.Type", pools_path=f"{CR}.InstanceTypes")

    devices: tuple[Device, ...] = ()
    if r.declared and not spec:
        devices = (Device(f"{CR}(root)", "the root volume (from the ECS-optimized AMI)", None),)
    inherited: tuple[Attr, ...] = ()
    if lt is not None and lt_spec is not None:
        flag = decisive(lt_spec.public_ip)
        if flag is not None:
            inherited = (Attr(flag.value, f"{lt.id}: {flag.path}"),)
    subnet_raw = cr.get("Subnets")
    subnets = (subnet_raw,) if isinstance(subnet_raw, Unknown) \
        else subnet_values(as_list(subnet_raw))
    network = Network(placed=True, subnets=placement(subnets, (), views.index, r.scope),
                      subnets_path=f"{CR}.Subnets", inherited_public_ip=inherited)
    uses = (TemplateUse(lt, tuple(t for t in types if isinstance(t, str))),) \
        if lt is not None else ()
    return ComputeView(r, types=Types(tuple(types), families=several), capacity=capacity,
                       purchase=purchase, devices=devices, network=network, templates=uses)
