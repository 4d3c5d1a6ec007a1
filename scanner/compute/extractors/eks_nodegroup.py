"""``eks.nodegroup``: an EKS managed node group: its instance types (its own, else its launch
template's, else EKS's default), its scaling config, its capacity type, its subnets, and its
node volume.

One capacity type for the whole group (ON_DEMAND, SPOT or CAPACITY_BLOCK): the on-demand/spot
split is all one or all the other by construction, and a SPOT group has no max price (EKS
offers none), so it makes no spot offer; EKS allocates spot capacity with a capacity-aware
strategy, never lowest-price. Without a launch template the node volume (DiskSize GiB) sets no
encryption: the account's encryption by default decides it. Live, the Auto Scaling group EKS
runs the nodes in is read too; its members are the node group's (scanner.compute.ownership).
"""

from __future__ import annotations

from typing import Any

from scanner.compute.index import Views
from scanner.compute.launch import LaunchSpec, decisive, placement, subnet_values
from scanner.compute.purchase import group_split
from scanner.compute.registry import DEVICES, GROUP, LAUNCHES, MEASURED, PLACES, extractor
from scanner.compute.values import as_list, to_int
from scanner.compute.view import (
    CAPACITY_BLOCK,
    NOT_SET,
    ON_DEMAND,
    Attr,
    Capacity,
    ComputeView,
    Device,
    GpuRequirement,
    Network,
    Purchase,
    TemplateUse,
    Types,
)
from scanner.compute.view import SPOT as SPOT_OPTION
from scanner.model import Resource, Unknown

DEFAULT_TYPE = "t3.medium"  # EKS's instance type when neither the group nor its template names one
DEFAULT_DISK_GIB = 20
EKS_SPOT_STRATEGY = "capacity-optimized or price-capacity-optimized (chosen by EKS)"
# AMI types for GPU or Neuron nodes (AL2_x86_64_GPU, AL2023_x86_64_NVIDIA, AL2023_x86_64_NEURON,
# BOTTLEROCKET_x86_64_NVIDIA, BOTTLEROCKET_ARM_64_NVIDIA, …)
GPU_AMI_MARKS = ("_GPU", "NVIDIA", "NEURON")
GONE = ("DELETING", "CREATE_FAILED", "DELETE_FAILED")


@extractor("eks.nodegroup", provides=(LAUNCHES, PLACES, GROUP, DEVICES, MEASURED),
           reads=("ec2.launch_template",), rank=8)
def eks_nodegroup(r: Resource, views: Views) -> ComputeView:
    spec = r.get("LaunchTemplate")
    lt = None
    if isinstance(spec, dict):
        lt = views.template({"LaunchTemplateId": spec.get("Id"),
                             "LaunchTemplateName": spec.get("Name")}, r.scope)
    lt_spec = views.template_spec(lt) if lt is not None else None

    own = r.get("InstanceTypes")
    types, requirement = _types(r, own, spec, lt, lt_spec)

    scaling = r.get("ScalingConfig")
    if isinstance(scaling, Unknown):
        capacity = Capacity(desired=Attr(scaling, "ScalingConfig"),
                            min=Attr(scaling, "ScalingConfig"), max=Attr(scaling, "ScalingConfig"))
    else:
        sc = scaling if isinstance(scaling, dict) else {}
        capacity = Capacity(
            desired=Attr(to_int(sc.get("DesiredSize")), "ScalingConfig.DesiredSize"),
            min=Attr(to_int(sc.get("MinSize")), "ScalingConfig.MinSize"),
            max=Attr(to_int(sc.get("MaxSize")), "ScalingConfig.MaxSize"))

    market = r.get("CapacityType")
    spot: bool | Unknown = market if isinstance(market, Unknown) else (
        isinstance(market, str) and market.strip().upper() == "SPOT")
    split = group_split(capacity, None, all_spot=spot, base=NOT_SET, percent=NOT_SET)
    option, option_path = nodegroup_option(market, spot, r, lt, lt_spec)
    purchase = Purchase(
        option=option, option_path=option_path,
        spot=(),  # no max price to judge: EKS offers none
        split=split, fixed_market=True, maybe_spot=spot is not False,
        strategy=Attr(EKS_SPOT_STRATEGY if spot is True else None, "CapacityType"),
        split_path="CapacityType", pools_path="InstanceTypes")

    devices: tuple[Device, ...] = ()
    if r.declared and not spec:
        size = r.get("DiskSize")
        gib = size if isinstance(size, int) and not isinstance(size, bool) else DEFAULT_DISK_GIB
        devices = (Device("DiskSize", f"the node volume ({gib} GiB, no launch template)",
                          None),)

    inherited: tuple[Attr, ...] = ()
    if lt is not None and lt_spec is not None:
        flag = decisive(lt_spec.public_ip)
        if flag is not None:
            inherited = (Attr(flag.value, f"{lt.id}: {flag.path}"),)
    raw = r.get("Subnets")
    subnets = (raw,) if isinstance(raw, Unknown) else subnet_values(as_list(raw))
    network = Network(placed=True, subnets=placement(subnets, (), views.index, r.scope),
                      subnets_path="Subnets", inherited_public_ip=inherited)

    members: list[str] = []
    if not r.declared:
        from scanner.compute.ownership import groups_of, tagged_members

        for group in groups_of(r, views.index):
            members.extend(views.members_of(group))
        members.extend(tagged_members(r, views.index))
    status = r.get("Status")
    uses = (TemplateUse(lt, tuple(t for t in as_list(own) if isinstance(t, str))),) \
        if lt is not None else ()
    return ComputeView(
        r, types=Types(tuple(types), requirement), capacity=capacity, purchase=purchase,
        devices=devices, network=network, templates=uses,
        members=tuple(dict.fromkeys(members)),
        active=r.declared or status not in GONE, running=r.declared or status not in GONE)


def _types(r: Resource, own: Any, spec: Any, lt: Resource | None, lt_spec: LaunchSpec | None
           ) -> tuple[list[Any], GpuRequirement | None]:
    """The node group's instance types: its own, else its launch template's, else EKS's default
    for its AMI type (a GPU AMI type says GPU even when the type is not known)."""
    requirement = None
    if isinstance(own, Unknown):
        types: list[Any] = [own]
    elif [t for t in as_list(own) if t is not None]:
        types = [t for t in as_list(own) if t is not None]
    elif lt_spec is not None and lt_spec.instance_type.value is not None:
        types = [lt_spec.instance_type.value]
    elif spec and lt is None:
        types = [Unknown("the instance type may be its launch template's, and the template is "
                         "not in the scan")]
    else:  # no type here nor in the template: EKS's default for the AMI type
        ami = r.get("AmiType")
        if isinstance(ami, Unknown):
            types = [Unknown(f"no instance type, and the AMI type is not known ({ami.reason})")]
        elif isinstance(ami, str) and any(m in ami.upper() for m in GPU_AMI_MARKS):
            types = [Unknown(f"no instance type: EKS picks its default for AMI type {ami}")]
            requirement = GpuRequirement(True, "AmiType", f"AmiType {ami}")
        else:
            types = [DEFAULT_TYPE]
    return types, requirement


def nodegroup_option(market: Any, spot: bool | Unknown, r: Resource, lt: Resource | None,
                     lt_spec: Any) -> tuple[str | Unknown, str]:
    """CapacityType decides (ON_DEMAND, SPOT, CAPACITY_BLOCK); on-demand nodes launched from a
    template that targets a reservation run in it."""
    if isinstance(spot, Unknown):
        return spot, "CapacityType"
    if spot:
        return SPOT_OPTION, "CapacityType"
    if isinstance(market, str) and market.strip().upper() == "CAPACITY_BLOCK":
        return CAPACITY_BLOCK, "CapacityType"
    if lt is not None and lt_spec is not None and lt_spec.option not in (SPOT_OPTION, ON_DEMAND):
        path = f"{lt.id}: {lt_spec.option_path}" if lt_spec.option_path else ""
        return lt_spec.option, path
    return ON_DEMAND, ""
