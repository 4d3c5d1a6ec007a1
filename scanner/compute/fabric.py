"""The network fabric of multi-node capacity (NET-001): whether its instances get EFA
interfaces, whether they launch into a cluster placement group, and how many nodes it can
grow to. Per kind, because each spells these differently:

- an Auto Scaling group, an EKS managed node group, an instance: EFA is a network interface
  of type ``efa`` (or ``efa-only``) in its own or its launch template's ``NetworkInterfaces``;
  the placement group is the group's ``PlacementGroup``, the instance's, or the template's
  ``Placement.GroupName``, and counts when that group's ``Strategy`` is ``cluster``;
- an eksctl node group: ``efaEnabled: true`` makes every interface EFA and eksctl creates a
  cluster placement group for it; ``placement.group`` names an existing one;
- a ParallelCluster queue: each compute resource's ``Efa.Enabled``, and the ``PlacementGroup``
  of its own ``Networking`` or else the queue's (``Enabled``, or an ``Id`` / ``Name``);
  ``MaxCount`` absent is 10;
- a Karpenter NodePool: Karpenter gives EFA interfaces to the nodes it launches for pods that
  request ``vpc.amazonaws.com/efa`` (a pod's resources, not the NodePool's), and supports no
  placement groups; its size is bounded by ``limits``, not a node count: not known.

Values are True/False, an :class:`Unknown` naming why, with the attribute path each came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scanner.compute.index import Views
from scanner.compute.values import as_list, to_int
from scanner.compute.view import ComputeView
from scanner.model import Ref, Resource, Unknown
from scanner.model.graph import doubt

EFA_TYPES = frozenset({"efa", "efa-only"})
PLACEMENT_GROUP = "ec2.placement_group"
PCLUSTER_MAX_COUNT = 10  # ParallelCluster's default MaxCount of a compute resource


@dataclass(frozen=True, eq=False)
class Fabric:
    """One capacity's fabric: ``nodes`` the most instances it can hold (int, None: not set and
    no default, or an Unknown)."""

    efa: bool | Unknown
    efa_path: str
    placement: bool | Unknown
    placement_path: str
    nodes: int | Unknown | None
    nodes_path: str
    name: str = ""  # which part, when a resource holds several (a compute resource)
    types: tuple[Any, ...] = ()  # its instance types, when they differ from the view's


def fabrics(view: ComputeView, views: Views) -> list[Fabric]:
    """The fabrics of a resource's capacity ([] for a kind that has none to judge)."""
    r = view.resource
    if r.kind == "eksctl.node_group":
        return [_eksctl(r, view)]
    if r.kind == "parallelcluster.queue":
        return _pcluster(r)
    if r.kind == "karpenter.node_pool":
        return [Fabric(
            Unknown("Karpenter attaches EFA interfaces to the nodes it launches for pods that "
                    "request vpc.amazonaws.com/efa, which the NodePool does not say"), "",
            False, "", Unknown("a NodePool is bounded by its limits, not by a node count"),
            "Limits")]
    if r.kind in ("autoscaling.group", "eks.nodegroup", "ec2.instance"):
        return [_launched(r, view, views)]
    return []


def _template_data(view: ComputeView) -> tuple[Resource | None, Any]:
    if not view.templates:
        return None, None
    lt = view.templates[0].template
    why = doubt(lt)
    if why is not None:
        return lt, why
    data = lt.get("LaunchTemplateData") if lt.kind == "ec2.launch_template" else None
    return lt, data


def _efa_of(interfaces: Any) -> bool | Unknown | None:
    """True when an interface is EFA, an Unknown when one may be, None when none is listed."""
    if interfaces is None:
        return None
    if isinstance(interfaces, Unknown):
        return interfaces
    maybe: Unknown | None = None
    for ni in as_list(interfaces):
        if isinstance(ni, Unknown):
            maybe = maybe or ni
            continue
        kind = ni.get("InterfaceType") if isinstance(ni, dict) else None
        if isinstance(kind, Unknown):
            maybe = maybe or kind
        elif isinstance(kind, str) and kind.lower() in EFA_TYPES:
            return True
    return maybe if maybe is not None else False


def _launched(r: Resource, view: ComputeView, views: Views) -> Fabric:
    lt, data = _template_data(view)
    # its own network interfaces replace the template's; without them the template's apply
    own = _efa_of(r.get("NetworkInterfaces"))
    efa: bool | Unknown = own if own is not None else False
    efa_path = "NetworkInterfaces"
    if own is None and lt is not None:
        inherited = data if isinstance(data, Unknown) else _efa_of(
            data.get("NetworkInterfaces") if isinstance(data, dict) else None)
        efa = inherited if inherited is not None else False
        efa_path = f"{lt.id}: LaunchTemplateData.NetworkInterfaces"
    group, group_path = r.get("PlacementGroup"), "PlacementGroup"
    if group is None and isinstance(data, dict):
        group = (data.get("Placement") or {}).get("GroupName") \
            if isinstance(data.get("Placement"), dict) else None
        group_path = f"{lt.id}: LaunchTemplateData.Placement.GroupName" if lt else group_path
    elif group is None and isinstance(data, Unknown):
        group = data
    placement = _cluster_group(group, r.scope, views)
    if r.kind == "ec2.instance":
        nodes: int | Unknown | None = 1
        nodes_path = "a single instance"
    else:
        cap = view.capacity
        nodes = cap.max.value if cap is not None else None
        nodes_path = cap.max.path if cap is not None else "MaxSize"
        if not isinstance(nodes, int | Unknown):
            nodes = to_int(nodes) if nodes is not None else None
            if nodes is not None and not isinstance(nodes, int | Unknown):
                nodes = Unknown(f"not a number: {nodes!r}")
    return Fabric(efa, efa_path, placement, group_path, nodes, nodes_path)


def _cluster_group(group: Any, scope: str, views: Views) -> bool | Unknown:
    """Is the named placement group a cluster one?"""
    if group is None or group == "":
        return False
    if isinstance(group, Unknown):
        return group
    found = views.index.resolve_all(group, scope, PLACEMENT_GROUP)
    if not found and isinstance(group, str) and not views.index.of_kind(PLACEMENT_GROUP):
        # live: placement groups are not read, only named
        return Unknown(f"placement group {group[:80]}: its strategy is not read here (cluster, "
                       "spread or partition)")
    if len(found) != 1:
        what = str(group) if isinstance(group, Ref | str) else repr(group)
        return Unknown(f"placement group {what[:80]} is not in the scan: its strategy is not "
                       "known")
    pg = found[0]
    why = doubt(pg)
    if why is not None:
        return why
    strategy = pg.get("Strategy")
    if isinstance(strategy, Unknown):
        return strategy
    return isinstance(strategy, str) and strategy.lower() == "cluster"


def _eksctl(r: Resource, view: ComputeView) -> Fabric:
    enabled = r.get("EfaEnabled")
    efa: bool | Unknown = enabled if isinstance(enabled, Unknown) else enabled is True
    group = r.get("Placement.Group")
    if efa is True:
        placement: bool | Unknown = True  # eksctl creates a cluster placement group
        path = "EfaEnabled (eksctl creates a cluster placement group)"
    elif isinstance(group, Unknown):
        placement, path = group, "Placement.Group"
    else:
        placement, path = bool(group), "Placement.Group"
    cap = view.capacity
    nodes = cap.max.value if cap is not None else None
    return Fabric(efa, "EfaEnabled", placement, path,
                  nodes if isinstance(nodes, int | Unknown) else None,
                  cap.max.path if cap is not None else "MaxSize")


def _pg_enabled(pg: Any) -> bool | Unknown | None:
    """A ParallelCluster PlacementGroup section: None when absent."""
    if pg is None:
        return None
    if isinstance(pg, Unknown) or not isinstance(pg, dict):
        return pg if isinstance(pg, Unknown) else Unknown("PlacementGroup is not a mapping")
    on = pg.get("Enabled")
    if isinstance(on, Unknown):
        return on
    if on is not None:
        return on is True
    return bool(pg.get("Id") or pg.get("Name"))


def _pcluster(r: Resource) -> list[Fabric]:
    queue_pg = _pg_enabled(r.get("Networking.PlacementGroup"))
    out: list[Fabric] = []
    resources = r.get("ComputeResources")
    if isinstance(resources, Unknown):
        return [Fabric(resources, "ComputeResources", resources, "ComputeResources",
                       resources, "ComputeResources")]
    for i, cr in enumerate(as_list(resources)):
        if not isinstance(cr, dict):
            continue
        base = f"ComputeResources[{i}]"
        enabled = (cr.get("Efa") or {}).get("Enabled") if isinstance(cr.get("Efa"), dict) \
            else cr.get("Efa")
        efa: bool | Unknown = enabled if isinstance(enabled, Unknown) else enabled is True
        own = _pg_enabled((cr.get("Networking") or {}).get("PlacementGroup")
                          if isinstance(cr.get("Networking"), dict) else None)
        if own is not None:
            placement: bool | Unknown = own
            path = f"{base}.Networking.PlacementGroup"
        else:
            placement = queue_pg if queue_pg is not None else False
            path = "Networking.PlacementGroup"
        count = cr.get("MaxCount")
        nodes: int | Unknown | None = PCLUSTER_MAX_COUNT if count is None else (
            count if isinstance(count, int | Unknown) else Unknown(f"MaxCount {count!r}"))
        types = tuple(t for t in [cr.get("InstanceType"),
                                  *[x.get("InstanceType") for x in as_list(cr.get("Instances"))
                                    if isinstance(x, dict)]] if t is not None)
        out.append(Fabric(efa, f"{base}.Efa.Enabled", placement, path, nodes,
                          f"{base}.MaxCount" + (" (absent: 10)" if count is None else ""),
                          name=str(cr.get("Name") or base), types=types))
    return out
