"""``karpenter.node_pool`` and ``karpenter.ec2_node_class``.

A NodePool launches capacity: its requirements decide the instance types (named, or chosen by
family, size, GPU count … : the GPU fact and how many types it can draw from) and the capacity
types (spot when allowed: Karpenter prefers spot over on-demand and allocates it with
price-capacity-optimized; it sets no spot max price, so SPOT-001/002 have nothing to judge). It
lands in the subnets its EC2NodeClass selects (by tag or id) and takes that class's public-IP
setting. An EC2NodeClass holds the storage: its block device mappings, else Karpenter's default
mappings for the AMI family, which are encrypted (the Custom family has none: the AMI's own).
"""

from __future__ import annotations

import os
from typing import Any

from scanner.compute.index import Views
from scanner.compute.launch import block_devices, with_root
from scanner.compute.registry import DEVICES, LAUNCHES, PLACES, POOLS, extractor
from scanner.compute.view import (
    MIXED,
    ON_DEMAND,
    RESERVATION_TARGETED,
    SPOT,
    Attr,
    ComputeView,
    Device,
    GpuRequirement,
    Network,
    Purchase,
    SpotPools,
    TemplateUse,
    Types,
)
from scanner.model import Resource, Unknown

NODE_CLASS = "karpenter.ec2_node_class"
CAPACITY_TYPE = "karpenter.sh/capacity-type"  # scanner.compute.node_requirements.CAPACITY_TYPE
STRATEGY = "price-capacity-optimized"
AUTO_MODE_GROUP = "eks.amazonaws.com"
_ALIAS_FAMILIES = {"al2": "AL2", "al2023": "AL2023", "bottlerocket": "Bottlerocket",
                   "windows2019": "Windows2019", "windows2022": "Windows2022",
                   "windows2025": "Windows2025"}


@extractor("karpenter.node_pool", provides=(LAUNCHES, PLACES, POOLS), reads=(NODE_CLASS,),
           rank=30)
def node_pool(r: Resource, views: Views) -> ComputeView:
    # imported here: the pre-commit path registers this extractor but rarely meets a NodePool
    from scanner.compute import node_requirements as nr
    from scanner.compute import subnet_selection

    reqs = nr.parse(r.get("Requirements"))
    fact = nr.gpu_fact(reqs)
    bounds = nr.type_bounds(reqs)
    types = Types(bounds.named, GpuRequirement(fact.gpu, fact.path, fact.detail))

    caps = nr.capacity_types(reqs)
    spot: bool | Unknown = caps if isinstance(caps, Unknown) else "spot" in caps
    pools: tuple[SpotPools, ...] = ()
    if spot is not False:
        fallback = not isinstance(caps, Unknown) and bool(caps - {"spot"})
        pools = (SpotPools(
            spot=spot, types=bounds.named, fewest=bounds.fewest if bounds.fewest else None,
            most=bounds.most,
            strategy=Attr(STRATEGY, "", note="Karpenter allocates spot capacity with "
                                              "price-capacity-optimized"),
            default_strategy=STRATEGY, chosen_by_service=True, path="Requirements",
            note="on-demand when spot is not available" if fallback else ""),)

    node_class, why = _node_class(r, views)
    templates: tuple[TemplateUse, ...] = ()
    if node_class is None:
        network = Network(placed=True, subnets=(why,), subnets_path="NodeClassRef")
    else:
        terms = node_class.get("SubnetSelectorTerms")
        flag = node_class.get("AssociatePublicIpAddress")
        inherited = (Attr(flag, f"{node_class.id}: AssociatePublicIpAddress",
                          note="its EC2NodeClass sets associatePublicIPAddress: true"),) \
            if flag is not None else ()
        network = Network(
            placed=True, subnets_path=f"{node_class.id}: SubnetSelectorTerms",
            subnets=views.index.memo(
                f"karpenter-subnets:{id(node_class)}",
                lambda: subnet_selection.select(terms, node_class.scope, views.index)),
            inherited_public_ip=inherited)
        # the class is the pool's launch template: its storage is judged there
        templates = (TemplateUse(node_class, bounds.named),)
    option, option_path = _option(caps, bool(reqs.of(nr.CAPACITY_TYPE)))
    return ComputeView(r, types=types, purchase=Purchase(pools=pools, maybe_spot=spot is not False,
                                                         option=option, option_path=option_path),
                       network=network, templates=templates)


def _option(caps: frozenset[str] | Unknown, required: bool) -> tuple[str | Unknown, str]:
    """The purchase option of the capacity types a NodePool allows: spot, on-demand, both
    (mixed: spot first), reserved alone (its EC2NodeClass's capacity reservations: prepaid);
    reserved with others is not known (reservations first, then the others when none has
    room: decided at launch)."""
    path = f"Requirements[{CAPACITY_TYPE}]" if required else ""
    if isinstance(caps, Unknown):
        return caps, path or "Requirements"
    if caps == {"spot"}:
        return SPOT, path
    if caps == {"on-demand"}:
        return ON_DEMAND, path
    if caps == {"reserved"}:
        return RESERVATION_TARGETED, path
    if caps == {"spot", "on-demand"}:
        return MIXED, path
    if not caps:
        return Unknown("its requirements allow no capacity type"), path
    return Unknown("reserved capacity first, then " + " or ".join(sorted(caps - {"reserved"}))
                   + " when no reservation has room: which is bought is decided at launch"), path


def _node_class(r: Resource, views: Views) -> tuple[Resource | None, Unknown]:
    ref = r.get("NodeClassRef")
    if isinstance(ref, Unknown):
        return None, Unknown(f"its nodeClassRef is not known: {ref.reason}")
    name = ref.get("Name") if isinstance(ref, dict) else None
    if isinstance(name, Unknown):
        return None, Unknown(f"the EC2NodeClass it names is not known: {name.reason}")
    if not isinstance(name, str) or not name:
        return None, Unknown("it names no EC2NodeClass")
    group = ref.get("Group") if isinstance(ref, dict) else None
    if isinstance(group, str) and group.strip() == AUTO_MODE_GROUP:
        # EKS Auto Mode's NodeClass (eks.amazonaws.com/v1): its subnets and storage are EKS's
        # own settings, not an EC2NodeClass's
        return None, Unknown(f"it uses the EKS Auto Mode NodeClass {name}, whose subnets "
                             "gpuaudit does not read")
    found = views.index.resolve(name, r.scope, NODE_CLASS)
    if found is not None:
        return found, Unknown("")
    # Manifests are applied to a cluster together, not file by file: the class may be in
    # another file beside this one, or the only one of its name in the scan.
    named = [c for c in views.index.of_kind(NODE_CLASS) if c.name == name]
    here = os.path.dirname(r.provenance.file or r.scope)
    beside = [c for c in named if os.path.dirname(c.provenance.file or c.scope) == here]
    for group in (beside, named):
        if len(group) == 1:
            return group[0], Unknown("")
        if len(group) > 1:
            files = sorted({c.provenance.file or c.scope for c in group})
            return None, Unknown(f"{len(group)} EC2NodeClasses named {name} are in the scan "
                                 f"({', '.join(files[:3])}): which one it uses is not known")
    return None, Unknown(f"its EC2NodeClass {name} is not in the scan")


@extractor(NODE_CLASS, provides=(DEVICES,), rank=31)
def ec2_node_class(r: Resource, views: Views) -> ComputeView:
    maps = r.get("BlockDeviceMappings")
    devices: tuple[Device, ...]
    if maps is None:
        devices = (_default_device(r),)
    else:  # its own mappings replace Karpenter's defaults: the AMI's root volume unless one is
        devices = with_root(tuple(block_devices(maps, "BlockDeviceMappings")), maps,
                            "BlockDeviceMappings")
    return ComputeView(r, devices=devices)


def _default_device(r: Resource) -> Device:
    family = _ami_family(r)
    path = "BlockDeviceMappings"
    if isinstance(family, Unknown):
        return Device(path, "Karpenter's default block device mappings", Unknown(
            f"they depend on the AMI family, which is not known: {family.reason}"))
    if family is not None and family.lower() == "custom":
        return Device(f"{path}(root)", "root (from the AMI: the Custom AMI family has no "
                                       "default block device mappings)", None)
    return Device(path, "Karpenter's default block device mappings (encrypted for "
                        f"{family or 'every AMI family but Custom'})", True)


def _ami_family(r: Resource) -> Any:
    family = r.get("AmiFamily")
    if family is not None:
        return family
    terms = r.get("AmiSelectorTerms")
    if isinstance(terms, Unknown):
        return terms
    for t in terms if isinstance(terms, list) else []:
        alias = t.get("alias") if isinstance(t, dict) else None
        if isinstance(alias, Unknown):
            return alias
        if isinstance(alias, str):
            known = _ALIAS_FAMILIES.get(alias.split("@", 1)[0].lower())
            return known if known else Unknown(f"AMI alias {alias!r} is not known")
    return None
