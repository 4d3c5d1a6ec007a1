"""An index over normalized resources: resolve references and answer the joins policies ask.

Source-agnostic: a reference is either a :class:`Ref` (IaC address / logical id) or a literal
string (live id, name, ARN, or an id hard-coded in IaC). Resolution stays inside one scope.

A resource that may not exist (``Resource.exists`` Unknown: an unknown count / for_each /
condition) is never taken as present or as absent: the joins below return what depends on one
with its :func:`doubt` (a route, an endpoint's route table), or an Unknown in place of the answer
(a subnet's route table decided by an association that may not exist), and the policies judge
with it (``Result.doubt``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from scanner.model import Ref, Resource, Unknown

MAIN_TABLE_ATTRS = frozenset({"default_route_table_id", "main_route_table_id", "DefaultRouteTable"})

Route = tuple[dict[str, Any], Unknown | None]  # a route's attributes, and its doubt


def first_doubt(*doubts: Unknown | None) -> Unknown | None:
    """The first of these doubts that is one (an Unknown is falsy: ``a or b`` would skip it)."""
    return next((d for d in doubts if d is not None), None)


def doubt(*resources: Resource | str | None) -> Unknown | None:
    """Why one of these resources may not exist (the first one's reason); None when each of
    them certainly exists (a string, a synthetic main-table key, or None adds no doubt)."""
    for r in resources:
        if isinstance(r, Resource) and r.exists is not True:
            why = r.exists.reason if isinstance(r.exists, Unknown) and r.exists.reason \
                else "not known"
            noun = r.kind.rsplit(".", 1)[-1].replace("_", " ").replace("vpc", "VPC")
            return Unknown(f"{noun} {r.id} may not exist ({why})")
    return None


class ResourceIndex:
    def __init__(self, resources: Iterable[Resource]) -> None:
        self.resources: list[Resource] = list(resources)
        self._by_kind: dict[str, list[Resource]] = defaultdict(list)
        self._by_key: dict[tuple[str, str], list[Resource]] = defaultdict(list)
        self._by_base: dict[tuple[str, str], list[Resource]] = defaultdict(list)
        self._scope_kind: dict[tuple[str, str], list[Resource]] = defaultdict(list)
        for r in self.resources:
            self._by_kind[r.kind].append(r)
            self._scope_kind[(r.scope, r.kind)].append(r)
            self._by_key[(r.scope, r.id)].append(r)
            for alias in r.aliases:
                if alias != r.id:
                    self._by_key[(r.scope, alias)].append(r)
            base = r.id.rsplit("[", 1)[0] if r.id.endswith("]") else None
            if base:
                self._by_base[(r.scope, base)].append(r)
        self._memo: dict[str, Any] = {}
        self._kind_hits: dict[tuple[str, str, str], list[Resource]] = {}

    # -- lookups -----------------------------------------------------------------------------

    def of_kind(self, kind: str, scope: str | None = None) -> list[Resource]:
        if scope is None:
            return self._by_kind.get(kind, [])
        return self._scope_kind.get((scope, kind), [])

    def resolve_all(self, value: Any, scope: str, kind: str | None = None) -> list[Resource]:
        """Every resource a reference value names (a Ref without index names all instances)."""
        if isinstance(value, Ref):
            key = value.target
        elif isinstance(value, str) and value:
            key = value
        else:
            return []
        found = self._by_key.get((scope, key)) or self._by_base.get((scope, key)) or []
        if kind is None or not found:
            return found
        if len(found) == 1:
            return found if found[0].kind == kind else []
        cache_key = (scope, key, kind)
        hit = self._kind_hits.get(cache_key)
        if hit is None:
            hit = self._kind_hits[cache_key] = [r for r in found if r.kind == kind]
        return hit

    def resolve(self, value: Any, scope: str, kind: str | None = None) -> Resource | None:
        found = self.resolve_all(value, scope, kind)
        return found[0] if found else None

    def same(self, value: Any, resource: Resource) -> bool:
        """Does a reference value name this resource?"""
        return any(r is resource for r in self.resolve_all(value, resource.scope))

    # -- network joins ------------------------------------------------------------------------

    def vpc_of_subnet(self, subnet: Resource) -> Resource | None:
        return self.resolve(subnet.get("VpcId"), subnet.scope, "ec2.vpc")

    def default_subnets(self, scope: str, zones: Iterable[Any] = ()) -> list[Resource]:
        """The default subnets of the scope's default VPC (``DefaultForAz``, as observed live),
        in these Availability Zones when they are known; [] when the scope holds none."""
        defaults = self._lazy("default_subnets", self._default_subnets).get(scope, [])
        if not defaults:
            return []
        wanted = [z for z in zones if isinstance(z, str)]
        if any(not isinstance(z, str) for z in zones):
            wanted = []  # a zone that is not known: any default subnet may be the one
        return [s for s in defaults if not wanted or s.get("AvailabilityZone") in wanted]

    def _default_subnets(self) -> dict[str, list[Resource]]:
        out: dict[str, list[Resource]] = defaultdict(list)
        for s in self.of_kind("ec2.subnet"):
            if s.get("DefaultForAz") is True:
                out[s.scope].append(s)
        return out

    # Reverse maps, built once on first use: a join per resource must not walk every resource
    # of the other kind (a 50,000-resource plan is one scope).

    def _lazy(self, key: str, build: Any) -> Any:
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]

    def memo(self, key: str, build: Callable[[], Any]) -> Any:
        """Something derived from the whole index, built once on first use (e.g. the compute
        views every policy of an evaluation shares)."""
        return self._lazy(key, build)

    def _main_tables(self) -> dict[int, tuple[Resource, Unknown | None]]:
        """The VPC's main table, and the doubt on it being the main one."""
        def build() -> dict[int, tuple[Resource, Unknown | None]]:
            out: dict[int, tuple[Resource, Unknown | None]] = {}
            for rt in self.of_kind("ec2.route_table"):
                if rt.get("Main") is True:
                    for vpc in self.resolve_all(rt.get("VpcId"), rt.scope, "ec2.vpc"):
                        out[id(vpc)] = (rt, doubt(rt))
            for assoc in self.of_kind("ec2.main_route_table_association"):
                rt = self.resolve(assoc.get("RouteTableId"), assoc.scope, "ec2.route_table")
                if rt is not None:
                    for vpc in self.resolve_all(assoc.get("VpcId"), assoc.scope, "ec2.vpc"):
                        out[id(vpc)] = (rt, doubt(assoc, rt))
            return out

        return self._lazy("main_tables", build)

    def main_route_table(self, vpc: Resource) -> Resource | str:
        """The VPC's main route table: a resource when declared/observed, else a synthetic key."""
        hit = self._main_tables().get(id(vpc))
        return hit[0] if hit is not None else f"main:{vpc.scope}:{vpc.id}"

    def route_table_key(self, value: Any, scope: str) -> Resource | str | None:
        """Resolve a route table reference, including 'the VPC's main table' references."""
        if isinstance(value, Ref) and value.attr in MAIN_TABLE_ATTRS:
            vpc = self.resolve(value, scope, "ec2.vpc")
            return self.main_route_table(vpc) if vpc is not None else None
        return self.resolve(value, scope, "ec2.route_table")

    def _subnet_tables(self) -> dict[int, tuple[Resource | str | None, Unknown | None]]:
        """The subnet's explicitly associated table, and the doubt on that association."""
        def build() -> dict[int, tuple[Resource | str | None, Unknown | None]]:
            out: dict[int, tuple[Resource | str | None, Unknown | None]] = {}
            for rt in self.of_kind("ec2.route_table"):
                for a in rt.get("Associations") or []:
                    if isinstance(a, dict):
                        for subnet in self.resolve_all(a.get("SubnetId"), rt.scope, "ec2.subnet"):
                            out[id(subnet)] = (rt, doubt(rt))
            for assoc in self.of_kind("ec2.route_table_association"):
                for subnet in self.resolve_all(assoc.get("SubnetId"), assoc.scope, "ec2.subnet"):
                    table = self.route_table_key(assoc.get("RouteTableId"), assoc.scope)
                    out[id(subnet)] = (table, doubt(assoc, table))
            return out

        return self._lazy("subnet_tables", build)

    def route_table_of_subnet(self, subnet: Resource) -> Resource | str | Unknown | None:
        """Explicit association, else the VPC's main table; None when the VPC is unknown; an
        Unknown when the association (or main-table association) that decides it, or the
        table, may not exist."""
        hit = self._subnet_tables().get(id(subnet))
        if hit is not None:
            table, why = hit
            return Unknown(f"the subnet's route table is not known: {why.reason}") \
                if why is not None else table
        vpc = self.vpc_of_subnet(subnet)
        if vpc is None:
            return None
        main = self._main_tables().get(id(vpc))
        if main is not None and main[1] is not None:
            return Unknown(f"the VPC's main route table is not known: {main[1].reason}")
        return self.main_route_table(vpc)

    def _separate_routes(self) -> dict[int | str, list[Route]]:
        def build() -> dict[int | str, list[Route]]:
            out: dict[int | str, list[Route]] = defaultdict(list)
            for route in self.of_kind("ec2.route"):
                table = self.route_table_key(route.get("RouteTableId"), route.scope)
                if table is None:
                    continue
                # a route on aws_vpc.x.main_route_table_id targets the VPC's main table, which
                # may be known only by its synthetic key
                out[table if isinstance(table, str) else id(table)].append(
                    (route.attrs, doubt(route)))
            return out

        return self._lazy("routes", build)

    def routes_of(self, table: Resource | str) -> list[Route]:
        """Inline routes plus separate route resources that target this table (a synthetic
        main-table key has only the separate routes declared on it), each with its doubt (the
        route resource, or the table of an inline route, may not exist)."""
        if isinstance(table, str):
            return list(self._separate_routes().get(table, []))
        why = doubt(table)
        inline = table.get("Routes")
        if isinstance(inline, Unknown):
            # routes not known (dynamic "route" blocks over a variable with no value): there
            # may be a default route to anything, an internet gateway too
            return [({"DestinationCidrBlock": "0.0.0.0/0",
                      "GatewayId": Unknown(f"the routes of {table.id} are not known"
                                           f"{f': {inline.reason}' if inline.reason else ''}")},
                     why), *self._separate_routes().get(id(table), [])]
        routes = [(r, why) for r in (inline or []) if isinstance(r, dict)]
        return routes + self._separate_routes().get(id(table), [])

    def is_internet_gateway(self, value: Any, scope: str) -> bool | Unknown:
        """Does a route target an internet gateway? Unknown when the target is not known or
        is an internet gateway that may not exist."""
        if isinstance(value, Unknown):
            return Unknown(f"the route's gateway is not known: {value.reason}") \
                if value.reason else Unknown("the route's gateway is not known")
        if isinstance(value, str) and value.startswith("igw-"):
            return True
        gateway = self.resolve(value, scope, "ec2.internet_gateway")
        if gateway is None:
            return False
        why = doubt(gateway)
        return True if why is None else why

    def _endpoint_assocs(self) -> dict[int, list[tuple[Resource | str | None, Unknown | None]]]:
        def build() -> dict[int, list[tuple[Resource | str | None, Unknown | None]]]:
            out: dict[int, list[tuple[Resource | str | None, Unknown | None]]] = defaultdict(list)
            for assoc in self.of_kind("ec2.vpc_endpoint_route_table_association"):
                table = self.route_table_key(assoc.get("RouteTableId"), assoc.scope)
                for ep in self.resolve_all(assoc.get("VpcEndpointId"), assoc.scope,
                                           "ec2.vpc_endpoint"):
                    out[id(ep)].append((table, doubt(assoc, table)))
            return out

        return self._lazy("endpoint_assocs", build)

    def endpoint_route_tables(
            self, endpoint: Resource) -> list[tuple[Resource | str | None, Unknown | None]]:
        """The route tables the endpoint covers (None: a reference that resolves to nothing),
        each with its doubt: the association that adds it, or the table, may not exist."""
        key = f"ep_tables:{id(endpoint)}"
        if key in self._memo:
            return self._memo[key]
        tables: list[Resource | str | None] = []
        ids = endpoint.get("RouteTableIds")
        if isinstance(ids, Unknown):  # which tables (route_table_ids = var.x) is not known
            tables.append(None)
        for value in ids if isinstance(ids, list) else []:
            if isinstance(value, Ref) and value.attr is None:
                hits = self.resolve_all(value, endpoint.scope, "ec2.route_table")
                tables.extend(hits or [None])
            else:
                tables.append(self.route_table_key(value, endpoint.scope))
        out = [(t, doubt(t)) for t in tables] + self._endpoint_assocs().get(id(endpoint), [])
        self._memo[key] = out
        return out

    def _endpoints_by_vpc(self) -> dict[int, list[Resource]]:
        def build() -> dict[int, list[Resource]]:
            out: dict[int, list[Resource]] = defaultdict(list)
            for ep in self.of_kind("ec2.vpc_endpoint"):
                for vpc in self.resolve_all(ep.get("VpcId"), ep.scope, "ec2.vpc"):
                    out[id(vpc)].append(ep)
            return out

        return self._lazy("endpoints_by_vpc", build)

    def endpoint_policy(self, endpoint: Resource) -> tuple[Any, Unknown | None]:
        """The endpoint's policy: inline, else from a separate endpoint-policy resource; and
        the doubt on it (that resource may not exist: then the endpoint has no policy)."""
        inline = endpoint.get("PolicyDocument")
        if inline is not None:
            return inline, None

        def build() -> dict[int, tuple[Any, Unknown | None]]:
            out: dict[int, tuple[Any, Unknown | None]] = {}
            for pol in self.of_kind("ec2.vpc_endpoint_policy"):
                for ep in self.resolve_all(pol.get("VpcEndpointId"), pol.scope,
                                           "ec2.vpc_endpoint"):
                    out[id(ep)] = (pol.get("PolicyDocument"), doubt(pol))
            return out

        return self._lazy("endpoint_policies", build).get(id(endpoint), (None, None))

    def endpoints_of_vpc(self, vpc: Resource) -> Iterator[Resource]:
        yield from self._endpoints_by_vpc().get(id(vpc), [])

    def launch_template_of(self, spec: Any, scope: str) -> Resource | None:
        """Resolve a LaunchTemplateSpecification-like dict {LaunchTemplateId|LaunchTemplateName}."""
        if not isinstance(spec, dict):
            return None
        for key in ("LaunchTemplateId", "LaunchTemplateName"):
            value = spec.get(key)
            if value is not None and not isinstance(value, Unknown):
                hit = self.resolve(value, scope, "ec2.launch_template")
                if hit is not None:
                    return hit
        return None
