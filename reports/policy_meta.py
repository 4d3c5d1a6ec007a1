"""What the renderers know of a policy beyond its findings: the catalogue's description, whether
it guards security or cost, and the address of its documentation page.

The report document carries each finding's title and remediation; the catalogue (``policies``)
adds the longer description that SARIF rules and the policy pages show. A policy id the
catalogue does not know (a report written by another gpuaudit version) still renders, from what
its findings say.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from scanner import __url__ as PROJECT_URL

DOCS_URL = f"{PROJECT_URL}/blob/main/docs/policies"
# Policy families by what they protect. Cost policies find money, not exposure: SARIF tags them
# "cost" and gives them no security-severity, so code scanning does not file them as security
# alerts. A family not listed here is neither ("compliance").
CATEGORY_BY_FAMILY = {
    "EBS": "security",
    "VPC": "security",
    "SPOT": "cost",
    "ASG": "cost",
    "RS": "cost",
    "COST": "cost",
}
CATEGORIES = ("security", "cost", "compliance", "operations")  # operations: user policies
INDEX = "README.md"
USER_POLICIES_URL = f"{PROJECT_URL}/blob/main/docs/user-policies.md"


@dataclass(frozen=True)
class PolicyMeta:
    id: str
    title: str
    severity: str
    category: str
    description: str
    help_uri: str


def family(policy_id: str) -> str:
    return policy_id.split("-", 1)[0].upper()


def category(policy_id: str, declared: Any = None) -> str:
    """``security``, ``cost`` or ``compliance``: what a policy declares (a ``category`` attribute),
    else what its family is."""
    if declared in CATEGORIES:
        return str(declared)
    return CATEGORY_BY_FAMILY.get(family(policy_id), "compliance")


def page_name(policy_id: str) -> str:
    """The file name of a policy's page under docs/policies/."""
    safe = "".join(ch for ch in policy_id.upper() if ch.isalnum() or ch in "-_")
    return f"{safe or 'policy'}.md"


def help_uri(policy_id: str) -> str:
    return f"{DOCS_URL}/{page_name(policy_id)}"


def catalogue() -> dict[str, PolicyMeta]:
    """Every registered policy's metadata (empty if the catalogue cannot be loaded), built-in,
    plugin and YAML alike (a policy not built in names its own documentation, ``docs_url``)."""
    try:
        from policies.discovery import generation
    except ImportError:  # pragma: no cover - the package always ships policies
        return {}
    return _catalogue(generation())


@lru_cache(maxsize=1)
def _catalogue(_generation: int) -> dict[str, PolicyMeta]:
    from policies import all_policies

    out: dict[str, PolicyMeta] = {}
    for pid, pol in all_policies().items():
        out[pid] = PolicyMeta(
            id=pid,
            title=pol.title,
            severity=pol.severity.value,
            category=category(pid, getattr(pol, "category", None)),
            description=pol.description,
            help_uri=_own_help_uri(pol) or help_uri(pid),
        )
    return out


def _own_help_uri(pol: Any) -> str:
    """A policy not built in (``origin``: its file or module): its ``docs_url``, else the page
    on policies written by users."""
    if not getattr(pol, "origin", ""):
        return ""
    return str(getattr(pol, "docs_url", "") or USER_POLICIES_URL)


def describe(policy_id: str, *, title: str, severity: str) -> PolicyMeta:
    """The catalogue's metadata of ``policy_id``, or one built from a finding's title/severity."""
    known = catalogue().get(policy_id)
    if known is not None:
        return known
    return PolicyMeta(
        id=policy_id,
        title=title,
        severity=severity,
        category=category(policy_id),
        description="",
        help_uri=f"{DOCS_URL}/{INDEX}",
    )
