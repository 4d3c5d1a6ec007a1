"""The stable API for policies written outside gpuaudit (Python plugins, entry-point group
``gpuaudit.policies``): the same decorator, context and result types the built-in policies use,
plus the metadata an organisation's policy carries (category, documentation URL, framework
mappings). Import from here only; docs/user-policies.md shows a whole plugin.

A plugin module registers its policies when it is imported::

    from policies.api import Context, Remediation, Severity, Status, policy

    @policy(id="ACME-001", title="...", severity=Severity.HIGH, kinds=("ec2.instance",),
            description="...", remediation=Remediation("..."), category="security",
            docs_url="https://wiki.example.com/gpu/ACME-001")
    def check(resource, ctx: Context):
        view = ctx.compute.of(resource)
        ...
        yield ctx.result(resource, Status.PASS, "...")

and is named in the plugin's packaging metadata::

    [project.entry-points."gpuaudit.policies"]
    acme = "acme_gpu_policies"
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from policies.base import REGISTRY, Check, Context, Policy, Remediation
from policies.base import policy as _builtin_policy
from scanner.catalog import family_of, is_gpu_type
from scanner.compute import ComputeView, Purchase, SpotOffer, Types
from scanner.model import Resource, Result, Savings, Severity, Status, Unknown

API_VERSION = 1
CATEGORIES = ("security", "cost", "operations")

__all__ = [
    "API_VERSION",
    "CATEGORIES",
    "Check",
    "ComputeView",
    "Context",
    "Policy",
    "Purchase",
    "Remediation",
    "Resource",
    "Result",
    "Savings",
    "Severity",
    "SpotOffer",
    "Status",
    "Types",
    "Unknown",
    "UserPolicy",
    "family_of",
    "is_gpu_type",
    "policy",
]


@dataclass(frozen=True)
class UserPolicy(Policy):
    """A policy that is not built in (a YAML file, a plugin): a Policy with the metadata the
    reports show (category, help URI) and where it was declared."""

    category: str = "operations"
    docs_url: str = ""
    compliance: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    origin: str = ""  # the file (YAML) or module (plugin) that declares it

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out.update(category=self.category, docs_url=self.docs_url or None,
                   compliance={k: list(v) for k, v in self.compliance.items()},
                   origin=self.origin)
        return out


def as_user_policy(pol: Policy, *, category: str, docs_url: str = "",
                   compliance: Mapping[str, Any] | None = None, origin: str = "") -> UserPolicy:
    base = {f.name: getattr(pol, f.name) for f in fields(Policy)}
    return UserPolicy(**base, category=category, docs_url=docs_url,
                      compliance={str(k): tuple(str(c) for c in v)
                                  for k, v in (compliance or {}).items()},
                      origin=origin)


def policy(*, id: str, category: str = "operations", docs_url: str = "",
           compliance: Mapping[str, Any] | None = None,
           **kwargs: Any) -> Callable[[Check], Check]:
    """``policies.base.policy`` (id, title, severity, kinds, description, remediation, needs,
    observed_needs, params, enabled_by_default, sources) with the metadata of a policy that is
    not built in: ``category`` (security, cost or operations), ``docs_url`` (the help URI of
    SARIF rules and reports) and ``compliance`` ({framework: [control id, ...]})."""
    if category not in CATEGORIES:
        raise ValueError(f"policy {id}: category must be one of {', '.join(CATEGORIES)}")
    register_builtin = _builtin_policy(id=id, **kwargs)

    def register(fn: Check) -> Check:
        register_builtin(fn)
        REGISTRY[id] = as_user_policy(REGISTRY[id], category=category, docs_url=docs_url,
                                      compliance=compliance,
                                      origin=getattr(fn, "__module__", ""))
        return fn

    return register
