"""The compute views of one evaluation, built once per resource and shared by every policy,
and the joins several policies ask of them (GPU compute per subnet and per VPC, GPU compute whose
VPC is not known, the consumers of a launch template)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from scanner.compute import registry
from scanner.compute.launch import DEFAULT_VPC, LaunchSpec, launch_spec, unknown_spec
from scanner.compute.view import ComputeView, TemplateUse
from scanner.model import Ref, Resource, Unknown
from scanner.model.graph import ResourceIndex, doubt

_T = TypeVar("_T")

TEMPLATE = "ec2.launch_template"
CONFIGURATION = "autoscaling.launch_configuration"


@dataclass(eq=False)
class Placement:
    """GPU compute placed into subnets: the resource, its GPU types, its resolved subnets and
    the subnet references that resolve to nothing in its scope. ``doubt``: why it may not be
    there (the compute may not exist; in the joins per subnet and per VPC, also: every subnet
    through which it is there may not exist); None when it certainly is."""

    compute: Resource
    types: list[str]
    subnets: list[Resource]
    unresolved: list[Any]
    doubt: Unknown | None = None

    def through(self, subnets: list[Resource]) -> Placement:
        """This placement as seen from some of its subnets (one subnet's, one VPC's): doubted
        when the compute, or every one of these subnets, may not exist."""
        if self.doubt is not None:
            return self
        doubts = [doubt(s) for s in subnets]
        if not doubts or any(d is None for d in doubts):
            return self
        return replace(self, doubt=doubts[0])


@dataclass(frozen=True, eq=False)
class VpcNotKnown:
    """GPU compute (some of) whose capacity lands in a VPC that cannot be told: ``why``, one
    line per subnet reference that places it nowhere in the scan (a reference that resolves to
    no subnet, a subnet whose VPC is not in the scan, no subnet named at all); ``vpcs``: the
    VPCs its other subnets place it in (empty when its VPC is not known at all);
    ``default_vpc``: it names no subnet and lands in the default VPC (which no IaC declares, so
    it is none of the VPCs of the scan)."""

    placement: Placement
    why: tuple[str, ...]
    vpcs: tuple[Resource, ...] = ()
    default_vpc: bool = False


# At most this many reasons are kept per resource (a plan can list hundreds of subnet ids).
MAX_REASONS = 20


class Views:
    def __init__(self, index: ResourceIndex) -> None:
        self.index = index
        self._views: dict[int, ComputeView | None] = {}
        self._building: set[int] = set()
        self._specs: dict[int, LaunchSpec] = {}
        self._uses: dict[int, list[tuple[ComputeView, TemplateUse]]] | None = None
        self._memo: dict[str, Any] = {}

    # -- views ----------------------------------------------------------------------------------

    def of(self, resource: Resource) -> ComputeView | None:
        """The resource's compute view (None for a kind without an extractor)."""
        key = id(resource)
        if key in self._views:
            return self._views[key]
        ext = registry.get(resource.kind)
        if ext is None:
            self._views[key] = None
            return None
        if key in self._building:
            raise RuntimeError(f"compute view of {resource.id} depends on itself")
        self._building.add(key)
        try:
            view: ComputeView = ext.extract(resource, self)  # registry.Extract: typed loosely
        finally:
            self._building.discard(key)
        self._views[key] = view
        return view

    def warm(self) -> Views:
        """Every resource's view built now (before the policies are shared out among forked
        processes, which then inherit them instead of each building them again)."""
        for kind in registry.registered():
            for r in self.index.of_kind(kind):
                self.of(r)
        return self

    # -- what extractors may read -------------------------------------------------------------

    def template(self, spec: Any, scope: str) -> Resource | None:
        """The launch template a LaunchTemplateSpecification-like dict names."""
        return self.index.launch_template_of(spec, scope)

    def configuration(self, name: Any, scope: str) -> Resource | None:
        return self.index.resolve(name, scope, CONFIGURATION)

    def template_spec(self, template: Resource) -> LaunchSpec:
        """The launch specification a consumer reads from a launch template (or configuration):
        what it says, without its consumers, so that building a consumer's view never needs the
        template's. A template that may not exist (unknown count / for_each / condition) gives
        a specification whose every fact is that Unknown: a consumer never leans on it."""
        why = doubt(template)
        if why is None:
            return self.own_spec(template)
        key = -id(template)
        spec = self._specs.get(key)
        if spec is None:
            spec = self._specs[key] = unknown_spec(why, _prefix(template))
        return spec

    def own_spec(self, template: Resource) -> LaunchSpec:
        """A launch template's (or configuration's) own launch specification, as it says it
        (what its own view is built from, whether or not it exists)."""
        key = id(template)
        spec = self._specs.get(key)
        if spec is None:
            data = template.get("LaunchTemplateData") if template.kind == TEMPLATE \
                else template.attrs
            spec = self._specs[key] = launch_spec(
                data if isinstance(data, dict | Unknown) else {}, _prefix(template))
        return spec

    def uses_of(self, template: Resource) -> list[tuple[ComputeView, TemplateUse]]:
        """Every view that launches from this template (or configuration), with its use."""
        if self._uses is None:
            uses: dict[int, list[tuple[ComputeView, TemplateUse]]] = {}
            for kind, ext in registry.registered().items():
                if TEMPLATE not in ext.reads and CONFIGURATION not in ext.reads:
                    continue
                for r in self.index.of_kind(kind):
                    view = self.of(r)
                    if view is None:
                        continue
                    for use in view.templates:
                        uses.setdefault(id(use.template), []).append((view, use))
            self._uses = uses
        return self._uses.get(id(template), [])

    # -- joins for policies -------------------------------------------------------------------

    def subnets_of(self, ref: Any, scope: str) -> list[Resource]:
        """The subnets a view's subnet reference names: a reference resolved in the scope, or
        a subnet the extractor resolved itself (selected by tags, possibly in another scope)."""
        if isinstance(ref, Resource):
            return [ref] if ref.kind == "ec2.subnet" else []
        return self.index.resolve_all(ref, scope, "ec2.subnet")

    def _lazy(self, key: str, build: Callable[[], _T]) -> _T:
        if key not in self._memo:
            self._memo[key] = build()
        built: _T = self._memo[key]  # what build made: one build per key
        return built

    def owner_of(self, resource: Resource) -> Resource | None:
        """Where the capacity of ``resource`` is judged and priced when not on itself: a member
        instance's group (or that group's EKS node group), an EKS-owned group's node group."""
        from scanner.compute.ownership import capacity_owner

        return capacity_owner(resource, self.index)

    def members_of(self, group: Resource) -> tuple[str, ...]:
        """Instance ids of a group's members: its own list (live) and the instances in its
        scope that name it (the ``aws:autoscaling:groupName`` tag, live)."""
        def build() -> dict[tuple[str, str], list[str]]:
            out: dict[tuple[str, str], list[str]] = {}
            for inst in self.index.of_kind("ec2.instance"):
                name = inst.get("AutoScalingGroupName")
                if isinstance(name, str) and name:
                    out.setdefault((inst.scope, name), []).append(inst.id)
            return out

        naming = self._lazy("members", build)
        ids = [str(i.get("InstanceId")) for i in group.get("Instances") or []
               if isinstance(i, dict) and i.get("InstanceId")]
        for name in dict.fromkeys(n for n in (group.id, group.name) if n):
            ids += naming.get((group.scope, name), [])
        return tuple(dict.fromkeys(ids))

    def gpu_placements(self) -> list[Placement]:
        """Every active resource that places GPU compute into subnets, with its subnets.

        Compute whose types are not known (a variable without a value, a data source, an
        attribute requirement that may ask for GPUs) is placed too, doubted: a verdict that
        leans on it alone is UNKNOWN, never PASS or FAIL, and never silence."""
        def build() -> list[Placement]:
            out: list[Placement] = []
            for kind in registry.kinds_with(registry.LAUNCHES, registry.PLACES):
                for r in self.index.of_kind(kind):
                    view = self.of(r)
                    if view is None or not view.active:
                        continue
                    gpu = view.types.gpu()
                    if gpu is False:
                        continue
                    maybe = doubt(r)
                    if isinstance(gpu, Unknown) and maybe is None:
                        maybe = Unknown(f"whether {r.id} launches GPUs is not known"
                                        f"{f' ({gpu.reason})' if gpu.reason else ''}")
                    subnets: list[Resource] = []
                    unresolved: list[Any] = []
                    for ref in view.network.subnets if view.network else ():
                        hits = self.subnets_of(ref, r.scope)
                        if hits:
                            subnets.extend(hits)
                        else:
                            unresolved.append(ref)
                    out.append(Placement(r, view.types.gpu_types(), subnets, unresolved,
                                         maybe))
            return out

        return self._lazy("gpu_placements", build)

    def gpu_compute_by_subnet(self) -> dict[int, list[Placement]]:
        def build() -> dict[int, list[Placement]]:
            out: dict[int, list[Placement]] = {}
            for p in self.gpu_placements():
                for s in {id(s): s for s in p.subnets}.values():
                    out.setdefault(id(s), []).append(p.through([s]))
            return out

        return self._lazy("by_subnet", build)

    def gpu_compute_by_vpc(self) -> dict[int, list[Placement]]:
        def build() -> dict[int, list[Placement]]:
            out: dict[int, list[Placement]] = {}
            for p in self.gpu_placements():
                vpcs: dict[int, list[Resource]] = {}
                for s in p.subnets:
                    vpc = self.index.vpc_of_subnet(s)
                    if vpc is not None:
                        vpcs.setdefault(id(vpc), []).append(s)
                for key, subnets in vpcs.items():
                    out.setdefault(key, []).append(p.through(subnets))
            return out

        return self._lazy("by_vpc", build)

    def gpu_compute_of_unknown_vpc(self) -> dict[int, VpcNotKnown]:
        """The GPU placements (by ``id`` of the compute resource) some of whose capacity lands
        in a VPC the scan cannot tell: what places it in no VPC of the scan, and the VPCs its
        other subnets place it in. A placement every subnet of which is in a VPC of the scan is
        not here. Capacity that names no subnet and takes none from the service (a HyperPod
        cluster without VpcConfig runs in SageMaker's own VPC) has no VPC of the user's."""
        def build() -> dict[int, VpcNotKnown]:
            out: dict[int, VpcNotKnown] = {}
            for p in self.gpu_placements():
                view = self.of(p.compute)
                net = view.network if view is not None else None
                if net is None or not net.placed:
                    continue
                why = [_unresolved_text(ref) for ref in p.unresolved
                       if isinstance(ref, Unknown)]
                named = [ref for ref in p.unresolved if not isinstance(ref, Unknown)]
                if named:
                    why.append(_not_in_scan_text(named))
                vpcs: dict[int, Resource] = {}
                for s in {id(s): s for s in p.subnets}.values():
                    vpc = self.index.vpc_of_subnet(s)
                    if vpc is not None:
                        vpcs.setdefault(id(vpc), vpc)
                    else:
                        why.append(_vpc_not_known_text(s))
                if not p.subnets and not p.unresolved:
                    why.append("it launches with an existing network interface, whose subnet is "
                               "not known here" if net.attached_interface else
                               "it names no subnet: the VPC it launches into is not in the scan")
                if why:
                    default = bool(p.unresolved) and all(
                        isinstance(r, Unknown) and r.reason == DEFAULT_VPC for r in p.unresolved)
                    out[id(p.compute)] = VpcNotKnown(
                        p, tuple(dict.fromkeys(why))[:MAX_REASONS], tuple(vpcs.values()),
                        default_vpc=default and not p.subnets)
            return out

        return self._lazy("unknown_vpc", build)


def _unresolved_text(ref: Unknown) -> str:
    """Why a subnet reference that is not known places capacity in no subnet of the scan."""
    if ref.reason == DEFAULT_VPC:
        return "no subnet is given: it launches into the default VPC, which is not in the scan"
    return f"its subnets are not known: {ref.reason}" if ref.reason else \
        "its subnets are not known"


def _not_in_scan_text(refs: list[Any]) -> str:
    """The subnets named (ids, references) that no subnet of the scan is: up to three by name."""
    names = list(dict.fromkeys(str(r) if isinstance(r, Ref | str) else repr(r) for r in refs))
    if len(names) == 1:
        return f"subnet {names[0]} is not in the scan"
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return f"subnets {', '.join(names[:3])}{more} are not in the scan"


def _vpc_not_known_text(subnet: Resource) -> str:
    """Why a subnet of the scan places capacity in no VPC of the scan."""
    vpc = subnet.get("VpcId")
    if isinstance(vpc, Unknown):
        return f"the VPC of subnet {subnet.id} is not known" + (f": {vpc.reason}" if vpc.reason
                                                               else "")
    if vpc is None:
        return f"subnet {subnet.id} names no VPC"
    name = str(vpc) if isinstance(vpc, Ref | str) else repr(vpc)
    return f"VPC {name} of subnet {subnet.id} is not in the scan"


def _prefix(template: Resource) -> str:
    return "LaunchTemplateData." if template.kind == TEMPLATE else ""


def views(index: ResourceIndex) -> Views:
    """New compute views over ``index``; keep the object: each view is built once, on first
    use (the policies' Context keeps one per evaluation)."""
    return Views(index)
