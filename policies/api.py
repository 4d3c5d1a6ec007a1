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
from dataclasses import replace
from typing import Any

from policies.base import CATEGORIES as ALL_CATEGORIES
from policies.base import REGISTRY, Check, Context, Policy, Remediation
from policies.base import policy as _builtin_policy
from scanner.catalog import family_of, is_gpu_type
from scanner.compute import ComputeView, Purchase, SpotOffer, Types
from scanner.model import Resource, Result, Savings, Severity, Status, Unknown

API_VERSION = 1
CATEGORIES = tuple(c for c in ALL_CATEGORIES if c != "compliance")  # the built-ins' own

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


# Policies not built in are Policies like the others (their ``origin`` says where they are
# declared); the name stays for plugins written against API version 1.
UserPolicy = Policy


def with_origin(pol: Policy, *, docs_url: str = "", compliance: Mapping[str, Any] | None = None,
                origin: str = "") -> Policy:
    """``pol`` as declared outside gpuaudit: its documentation, framework mappings, origin."""
    return replace(pol, docs_url=docs_url, origin=origin,
                   compliance={str(k): tuple(str(c) for c in v)
                               for k, v in (compliance or {}).items()})


def policy(*, id: str, category: str = "operations", docs_url: str = "",
           compliance: Mapping[str, Any] | None = None,
           **kwargs: Any) -> Callable[[Check], Check]:
    """``policies.base.policy`` (id, title, severity, kinds, description, remediation, needs,
    observed_needs, params, enabled_by_default, sources, fixes) with the metadata of a policy
    that is not built in: ``category`` (security, cost or operations), ``docs_url`` (the help
    URI of SARIF rules and reports) and ``compliance`` ({framework: [control id, ...]})."""
    if category not in CATEGORIES:
        raise ValueError(f"policy {id}: category must be one of {', '.join(CATEGORIES)}")
    register_builtin = _builtin_policy(id=id, category=category, **kwargs)

    def register(fn: Check) -> Check:
        register_builtin(fn)
        REGISTRY[id] = with_origin(REGISTRY[id], docs_url=docs_url, compliance=compliance,
                                   origin=getattr(fn, "__module__", ""))
        return fn

    return register
