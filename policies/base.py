"""What a policy is: metadata beside a check function, registered with ``@policy``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scanner.catalog import Catalog
from scanner.compute import Views, views
from scanner.kinds import schema
from scanner.model import Notice, Resource, Result, Savings, Severity, Status, Unknown
from scanner.model.graph import ResourceIndex
from scanner.pricing.rates import LIST_PRICING, Pricing


@dataclass(frozen=True)
class Remediation:
    text: str
    terraform: str = ""
    cloudformation: str = ""
    # The remediation of a finding on a resource of one kind, where it differs (the attribute to
    # set is spelled per resource type); other kinds get this one.
    by_kind: Mapping[str, Remediation] = field(default_factory=dict)

    def for_kind(self, kind: str) -> Remediation:
        return self.by_kind.get(kind, self)

    def as_dict(self) -> dict[str, str]:
        return {"text": self.text, "terraform": self.terraform,
                "cloudformation": self.cloudformation}


@dataclass
class Context:
    index: ResourceIndex
    params: Mapping[str, Any]
    catalog: Catalog
    memo: dict[str, Any] = field(default_factory=dict)
    policy_id: str = ""
    # What a policy tells the user without a verdict (e.g. a group too small to be judged):
    # the engine adds these to the evaluation's notices; they never change the exit code.
    notices: list[tuple[Resource, Notice]] = field(default_factory=list)
    # The rate money is figured at (config ``pricing``): list prices unless configured.
    pricing: Pricing = LIST_PRICING

    @property
    def compute(self) -> Views:
        """The compute views of this evaluation (built once per resource, shared)."""
        found = self.memo.get("compute")
        if found is None or found.index is not self.index:
            found = self.memo["compute"] = views(self.index)
        return found

    def notice(self, resource: Resource, message: str) -> None:
        """Say something about a resource without a result (a notice, not a finding)."""
        prov = resource.provenance
        where = prov.file or resource.scope
        text = f"{self.policy_id} {resource.id}: {message}".lstrip()
        seen = self.memo.setdefault(f"notices:{self.policy_id}", set())
        if (where, text) not in seen:
            seen.add((where, text))
            self.notices.append((resource, Notice(where, text, prov.start_line)))

    def result(
        self,
        resource: Resource,
        status: Status,
        message: str,
        *,
        path: str = "",
        evidence: dict[str, Any] | None = None,
        savings: Savings | None = None,
        doubt: Unknown | None = None,
    ) -> Result:
        """``doubt``: why the verdict may not hold (it leans on a resource that may not exist);
        the engine then reports UNKNOWN with that reason."""
        evidence = dict(evidence or {})
        if self.policy_id.startswith(PURCHASE_POLICIES):
            evidence.update(self.purchase_evidence(resource))
        return Result(status, message, resource, path, evidence, savings, doubt)

    def purchase_evidence(self, resource: Resource) -> dict[str, Any]:
        """The purchase option of the resource's capacity (docs/purchase-options.md), for the
        evidence of every finding about how capacity is bought or sized."""
        view = self.compute.of(resource)
        if view is None:
            return {}
        p = view.purchase
        option = p.option
        out: dict[str, Any] = {
            "purchase_option": option if isinstance(option, str) else None}
        if isinstance(option, Unknown):
            out["purchase_option_unknown"] = option.reason
        if p.option_path:
            out["purchase_option_from"] = p.option_path
        return out


Check = Callable[[Resource, Context], Iterable[Result]]
# The policy families whose findings show the purchase option in their evidence.
PURCHASE_POLICIES = ("ASG-", "SPOT-", "RS-")


@dataclass(frozen=True)
class Policy:
    id: str
    title: str
    severity: Severity
    kinds: tuple[str, ...]  # the kinds it evaluates (results attach to these)
    needs: tuple[str, ...]  # every kind it reads, kinds included
    # The kinds it reads when resources are observed in an account rather than declared in IaC:
    # a live audit reads only these (and a gap in them is its ERROR). Default: ``needs``.
    observed_needs: tuple[str, ...]
    description: str
    remediation: Remediation
    params: Mapping[str, Any]
    enabled_by_default: bool
    sources: str  # "HPCL" letters of the catalogue
    check: Check

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "severity": self.severity.value,
            "kinds": list(self.kinds),
            "description": self.description,
            "remediation": self.remediation.as_dict(),
            "parameters": dict(self.params),
            "enabled_by_default": self.enabled_by_default,
            "sources": self.sources,
        }


REGISTRY: dict[str, Policy] = {}


def _observable(name: str) -> bool:
    """A declared fact, or a kind the schema says is read live."""
    s = schema()
    return name in s.facts or bool(s.kinds[name].live)


def policy(
    *,
    id: str,
    title: str,
    severity: Severity,
    kinds: tuple[str, ...],
    description: str,
    remediation: Remediation,
    needs: tuple[str, ...] = (),
    observed_needs: tuple[str, ...] | None = None,
    params: Mapping[str, Any] | None = None,
    enabled_by_default: bool = True,
    sources: str = "HPCL",
) -> Callable[[Check], Check]:
    def register(fn: Check) -> Check:
        if id in REGISTRY:
            raise ValueError(f"policy {id} registered twice")
        all_needs = tuple(dict.fromkeys(kinds + needs))
        schema().check_policy(id, kinds, all_needs)
        if observed_needs is not None and not set(observed_needs) <= set(all_needs):
            raise ValueError(f"policy {id}: observed_needs must be among its kinds and needs")
        # a kind no live audit observes (a Karpenter NodePool, an eksctl node group) is never
        # read in an account: it cannot be a gap there
        observed = tuple(n for n in (all_needs if observed_needs is None else observed_needs)
                         if _observable(n))
        REGISTRY[id] = Policy(
            id=id,
            title=title,
            severity=severity,
            kinds=kinds,
            needs=all_needs,
            observed_needs=observed,
            description=description,
            remediation=remediation,
            params=dict(params or {}),
            enabled_by_default=enabled_by_default,
            sources=sources,
            check=fn,
        )
        return fn

    return register
