"""An index over normalized resources: resolve references and answer the joins policies ask.

Source-agnostic: a reference is either a :class:`Ref` (IaC address / logical id) or a literal
string (live id, name, ARN, or an id hard-coded in IaC). Resolution stays inside one scope.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from scanner.model import Ref, Resource, Unknown

MAIN_TABLE_ATTRS = frozenset({"default_route_table_id", "main_route_table_id", "DefaultRouteTable"})


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
            base = r.id.split("[", 1)[0] if r.id.endswith("]") else None
            if base:
                self._by_base[(r.scope, base)].append(r)
        self._memo: dict[str, Any] = {}

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
        if kind is not None:
            found = [r for r in found if r.kind == kind]
        return found

    def resolve(self, value: Any, scope: str, kind: str | None = None) -> Resource | None:
        found = self.resolve_all(value, scope, kind)
        return found[0] if found else None

    def same(self, value: Any, resource: Resource) -> bool:
        """Does a reference value name this resource?"""
        return any(r is resource for r in self.resolve_all(value, resource.scope))

    # -- network joins ------------------------------------------------------------------------

    def vpc_of_subnet(self, subnet: Resource) -> Resource | None:
        return self.resolve(subnet.get("VpcId"), subnet.scope, "ec2.vpc")

    def main_route_table(self, vpc: Resource) -> Resource | str:
        """The VPC's main route table: a resource when declared/observed, else a synthetic key."""
        key = f"main:{vpc.scope}:{vpc.id}"
        if key in self._memo:
            return self._memo[key]
        found: Resource | str = key
        for rt in self.of_kind("ec2.route_table", vpc.scope):
            if rt.get("Main") is True and self.same(rt.get("VpcId"), vpc):
                found = rt
        for assoc in self.of_kind("ec2.main_route_table_association", vpc.scope):
            if self.same(assoc.get("VpcId"), vpc):
                rt = self.resolve(assoc.get("RouteTableId"), vpc.scope, "ec2.route_table")
                if rt is not None:
                    found = rt
        self._memo[key] = found
        return found

    def route_table_key(self, value: Any, scope: str) -> Resource | str | None:
        """Resolve a route table reference, including 'the VPC's main table' references."""
        if isinstance(value, Ref) and value.attr in MAIN_TABLE_ATTRS:
            vpc = self.resolve(value, scope, "ec2.vpc")
            return self.main_route_table(vpc) if vpc is not None else None
        return self.resolve(value, scope, "ec2.route_table")

    def route_table_of_subnet(self, subnet: Resource) -> Resource | str | None:
        """Explicit association, else the VPC's main table; None when the VPC is unknown."""
        memo = f"rt:{subnet.scope}:{subnet.id}"
        if memo in self._memo:
            return self._memo[memo]
        result: Resource | str | None = None
        for assoc in self._associations(subnet.scope):
            if self.same(assoc.get("SubnetId"), subnet):
                result = self.route_table_key(assoc.get("RouteTableId"), subnet.scope)
                break
        if result is None:
            for rt in self.of_kind("ec2.route_table", subnet.scope):
                for a in rt.get("Associations") or []:
                    if isinstance(a, dict) and self.same(a.get("SubnetId"), subnet):
                        result = rt
        if result is None:
            vpc = self.vpc_of_subnet(subnet)
            result = self.main_route_table(vpc) if vpc is not None else None
        self._memo[memo] = result
        return result

    def _associations(self, scope: str) -> list[Resource]:
        return self.of_kind("ec2.route_table_association", scope)

    def routes_of(self, table: Resource | str) -> list[dict[str, Any]]:
        """Inline routes plus separate route resources that target this table."""
        if isinstance(table, str):
            return []
        routes = [r for r in (table.get("Routes") or []) if isinstance(r, dict)]
        for route in self.of_kind("ec2.route", table.scope):
            if self.route_table_key(route.get("RouteTableId"), table.scope) is table:
                routes.append(route.attrs)
        return routes

    def is_internet_gateway(self, value: Any, scope: str) -> bool:
        if isinstance(value, str) and value.startswith("igw-"):
            return True
        return self.resolve(value, scope, "ec2.internet_gateway") is not None

    def endpoint_route_tables(self, endpoint: Resource) -> list[Resource | str | None]:
        tables: list[Resource | str | None] = []
        ids = endpoint.get("RouteTableIds")
        for value in ids if isinstance(ids, list) else []:
            if isinstance(value, Ref) and value.attr is None:
                hits = self.resolve_all(value, endpoint.scope, "ec2.route_table")
                tables.extend(hits or [None])
            else:
                tables.append(self.route_table_key(value, endpoint.scope))
        for assoc in self.of_kind("ec2.vpc_endpoint_route_table_association", endpoint.scope):
            if self.same(assoc.get("VpcEndpointId"), endpoint):
                tables.append(self.route_table_key(assoc.get("RouteTableId"), endpoint.scope))
        return tables

    def endpoints_of_vpc(self, vpc: Resource) -> Iterator[Resource]:
        for ep in self.of_kind("ec2.vpc_endpoint", vpc.scope):
            if self.same(ep.get("VpcId"), vpc):
                yield ep

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
