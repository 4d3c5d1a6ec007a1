"""Multi-node capacity on EFA-capable types without EFA interfaces or a cluster placement group
(NET-001)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from policies.base import Context, Remediation, policy
from scanner.catalog import Catalog
from scanner.compute.fabric import Fabric, fabrics
from scanner.model import Resource, Result, Severity, Status, Unknown

KINDS = ("ec2.instance", "autoscaling.group", "eks.nodegroup", "eksctl.node_group",
         "parallelcluster.queue", "karpenter.node_pool")
NEEDS = ("ec2.launch_template", "autoscaling.launch_configuration", "ec2.placement_group",
         "karpenter.ec2_node_class")
OBSERVED = ("ec2.instance", "autoscaling.group", "eks.nodegroup", "ec2.launch_template",
            "autoscaling.launch_configuration")

_TF = '''resource "aws_placement_group" "training" {
  name     = "training"
  strategy = "cluster"
}
resource "aws_launch_template" "training" {
  instance_type = "p5.48xlarge"
  placement {
    group_name = aws_placement_group.training.name
  }
  network_interfaces {
    device_index       = 0
    network_card_index = 0
    interface_type     = "efa"
  }
  # one EFA interface per network card of the type (p5.48xlarge: 32)
}'''
_CFN = '''TrainingGroup:
  Type: AWS::EC2::PlacementGroup
  Properties:
    Strategy: cluster
TrainingTemplate:
  Type: AWS::EC2::LaunchTemplate
  Properties:
    LaunchTemplateData:
      Placement:
        GroupName: !Ref TrainingGroup
      NetworkInterfaces:
        - DeviceIndex: 0
          NetworkCardIndex: 0
          InterfaceType: efa'''


def _fabric_types(types: tuple[Any, ...], catalog: Catalog,
                  min_gbps: float) -> tuple[list[tuple[str, float]], Unknown | None]:
    """The types built for a multi-node fabric (EFA, at least ``min_gbps`` of network, from the
    catalogue) and, when none is known to be, why one may be (a type not known)."""
    found: list[tuple[str, float]] = []
    maybe: Unknown | None = None
    for t in dict.fromkeys(types):
        if isinstance(t, Unknown) or not isinstance(t, str):
            maybe = maybe or (t if isinstance(t, Unknown) else Unknown("instance type not known"))
            continue
        spec = catalog.spec(t)
        if spec is None or not spec.efa:
            continue
        try:
            gbps = float(spec.network_gbps)
        except (TypeError, ValueError):
            continue
        if gbps >= min_gbps:
            found.append((t, gbps))
    return found, (None if found else maybe)


def _why(value: Any) -> str:
    return value.reason if isinstance(value, Unknown) and value.reason else "not known"


def _judge(f: Fabric) -> tuple[Status, str, str]:
    part = f"{f.name}: " if f.name else ""
    if isinstance(f.nodes, int) and f.nodes <= 1:
        return Status.PASS, f"{part}a single node ({f.nodes_path} {f.nodes})", ""
    if f.nodes is None or isinstance(f.nodes, Unknown):
        return (Status.UNKNOWN, f"{part}how many nodes it can grow to is not known "
                f"({f.nodes_path}: {_why(f.nodes)})", f.nodes_path)
    missing = []
    if f.efa is False:
        missing.append(f"no EFA interface ({f.efa_path})")
    if f.placement is False:
        missing.append("no cluster placement group" + (
            f" ({f.placement_path})" if f.placement_path else ""))
    if missing:
        return (Status.FAIL, f"{part}up to {f.nodes} nodes with " + " and ".join(missing),
                f.efa_path if f.efa is False else f.placement_path)
    if isinstance(f.efa, Unknown):
        return Status.UNKNOWN, f"{part}whether it attaches EFA is not known: {_why(f.efa)}", \
            f.efa_path
    if isinstance(f.placement, Unknown):
        return (Status.UNKNOWN, f"{part}whether it is in a cluster placement group is not "
                f"known: {_why(f.placement)}", f.placement_path)
    return Status.PASS, f"{part}EFA interfaces in a cluster placement group", ""


_RANK = {Status.FAIL: 0, Status.UNKNOWN: 1, Status.PASS: 2}


@policy(
    id="NET-001",
    title="Multi-node capacity on EFA-capable types without EFA or a cluster placement group",
    severity=Severity.LOW,
    category="cost",
    kinds=KINDS,
    needs=NEEDS,
    observed_needs=OBSERVED,
    description=(
        "Types built for multi-node training (EFA-capable with at least min_network_gbps of "
        "network, from the catalogue: p4d, p5, p5e, p6, trn1.32xlarge, trn2.48xlarge, …) carry "
        "their fabric in the hourly price. A group that can grow past one node without EFA "
        "interfaces, or outside a cluster placement group, pays for that fabric and leaves it "
        "unused: collective operations then run over TCP across racks. EFA is a network "
        "interface of type efa in the launch template (or the instance's own interfaces); "
        "eksctl efaEnabled: true (eksctl then creates a cluster placement group); "
        "ParallelCluster ComputeResources[].Efa.Enabled with a PlacementGroup on the queue or "
        "the compute resource. The placement group must have the cluster strategy (a spread "
        "or partition group fails; one not in the scan is UNKNOWN, and so is every named one in a "
        "live audit, which does not read placement groups). A group that can hold at "
        "most one instance (MaxSize 1, MaxCount 1, an instance) passes; one whose maximum "
        "size is not known is UNKNOWN. Karpenter NodePools are UNKNOWN: Karpenter attaches "
        "EFA to nodes for pods that request vpc.amazonaws.com/efa (a pod's request, not the "
        "NodePool's) and supports no placement groups, and a NodePool's size is bounded by "
        "limits, not a node count. No money is counted: the fabric is part of the hourly "
        "price whether it is used or not, and the catalogue names no cheaper type with the "
        "same GPUs and no fabric, so the finding is an unused paid capability, not a saving."),
    remediation=Remediation(
        text="Attach EFA interfaces (interface type efa) in the launch template and launch "
             "the group into a cluster placement group; for a group that does not run "
             "multi-node jobs, a type without the fabric (or MaxSize 1) costs less.",
        terraform=_TF, cloudformation=_CFN),
    params={"min_network_gbps": 400},
)
def net_001(resource: Resource, ctx: Context) -> Iterator[Result]:
    view = ctx.compute.of(resource)
    if view is None or view.managed_by is not None or not view.active:
        return
    if resource.kind == "ec2.instance" and ctx.compute.owner_of(resource) is not None:
        return  # a group's member: judged at the group
    min_gbps = float(ctx.params.get("min_network_gbps", 400))
    parts = fabrics(view, ctx.compute)
    if not parts:
        return
    rows: list[tuple[Status, str, str, Fabric, list[tuple[str, float]]]] = []
    for f in parts:
        found, maybe = _fabric_types(f.types or view.types.values, ctx.catalog, min_gbps)
        if found:
            status, message, path = _judge(f)
            rows.append((status, message, path, f, found))
        elif maybe is not None:
            rows.append((Status.UNKNOWN, f"{f.name + ': ' if f.name else ''}instance type not "
                         f"known ({_why(maybe)})", "", f, []))
    if not rows:
        return
    rows.sort(key=lambda row: _RANK[row[0]])
    status, message, path, _f, _found = rows[0]
    evidence: dict[str, Any] = {"parts": [{
        "name": f.name or None, "efa": f.efa, "efa_from": f.efa_path,
        "cluster_placement_group": f.placement, "placement_from": f.placement_path or None,
        "max_nodes": f.nodes, "max_nodes_from": f.nodes_path,
        "fabric_types": [{"instance_type": t, "network_gbps": g} for t, g in found]}
        for _s, _m, _p, f, found in rows[:20]]}
    if status is Status.FAIL:
        evidence["unused_capability"] = (
            "the EFA network of these types is part of their hourly price whether it is used "
            "or not; no saving is counted")
    yield ctx.result(resource, status, message, path=path, evidence=evidence)
