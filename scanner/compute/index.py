"""The compute views of one evaluation, built once per resource and shared by every policy,
and the joins several policies ask of them (GPU compute per subnet and per VPC, the consumers
of a launch template)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from scanner.compute import registry
from scanner.compute.launch import LaunchSpec, launch_spec, unknown_spec
from scanner.compute.view import ComputeView, TemplateUse
from scanner.model import Resource, Unknown
from scanner.model.graph import ResourceIndex, doubt

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
            view = ext.extract(resource, self)
        finally:
            self._building.discard(key)
        self._views[key] = view
        return view

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
                    for use in view.templates if view is not None else ():
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

    def _lazy(self, key: str, build: Callable[[], Any]) -> Any:
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]

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


def _prefix(template: Resource) -> str:
    return "LaunchTemplateData." if template.kind == TEMPLATE else ""


def views(index: ResourceIndex) -> Views:
    """New compute views over ``index``; keep the object: each view is built once, on first
    use (the policies' Context keeps one per evaluation)."""
    return Views(index)
