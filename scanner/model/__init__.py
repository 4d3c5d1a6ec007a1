"""The one resource model every source produces and every policy reads.

Attribute names follow the AWS API / CloudFormation spelling (PascalCase). A value that cannot be
known statically is an :class:`Unknown` (``UNKNOWN`` or one carrying a reason), never a guess.
A value that refers to another resource whose id is only known after apply is a :class:`Ref`.
"""

from __future__ import annotations

import enum
import functools
import math
from dataclasses import dataclass, field
from typing import Any


class Status(str, enum.Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    UNKNOWN = "UNKNOWN"
    ERROR = "ERROR"
    SUPPRESSED = "SUPPRESSED"


class Severity(str, enum.Enum):
    CRITICAL = "critical"
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
    INFO = "info"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]

    @classmethod
    def parse(cls, text: str) -> Severity:
        return cls(text.strip().lower())


_SEVERITY_RANK = {
    Severity.CRITICAL: 4,
    Severity.HIGH: 3,
    Severity.MEDIUM: 2,
    Severity.LOW: 1,
    Severity.INFO: 0,
}


@dataclass(frozen=True)
class Unknown:
    """A value that cannot be known statically. Falsy, and never equal to a real value."""

    reason: str = ""

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"UNKNOWN({self.reason})" if self.reason else "UNKNOWN"


UNKNOWN = Unknown()


def is_unknown(value: Any) -> bool:
    return isinstance(value, Unknown)


@dataclass(frozen=True)
class Ref:
    """A reference to another resource (by address / logical id / live id), optionally to one of
    its attributes, e.g. ``Ref("aws_vpc.main", "default_route_table_id")``."""

    target: str
    attr: str | None = None

    def __str__(self) -> str:
        return f"{self.target}.{self.attr}" if self.attr else self.target


class SourceKind(str, enum.Enum):
    TERRAFORM_PLAN = "terraform_plan"
    TERRAFORM_HCL = "terraform_hcl"
    CLOUDFORMATION = "cloudformation"
    KARPENTER = "karpenter"
    EKSCTL = "eksctl"
    PARALLELCLUSTER = "parallelcluster"
    AWS = "aws"


@dataclass(frozen=True, slots=True)
class Provenance:
    source: SourceKind
    file: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    module: str | None = None  # Terraform module path ("module.a.module.b"), "" for root
    account: str | None = None
    region: str | None = None
    arn: str | None = None
    # IaC: the region it would be deployed in as far as the input says (CloudFormation
    # --region, the Terraform aws provider's region), used only to price it. Not ``region``:
    # that one is where a resource was observed, part of every finding's identity.
    pricing_region: str | None = None
    # Terraform: the aws provider configuration that creates it ("aws": the root module's
    # default; "aws.west"; "?" when it cannot be told). Account-wide settings (EBS encryption
    # by default) cover only what the same configuration creates. None: not Terraform.
    provider: str | None = None


@dataclass(frozen=True)
class Skip:
    """An inline suppression found in the source (CloudFormation Metadata, HCL comment, tag)."""

    policy_id: str
    reason: str
    by: str  # where it was written, e.g. "Metadata" / "comment at main.tf:12" / "tag gpuaudit:skip"
    expires: str | None = None


@dataclass(slots=True)
class Resource:
    """One normalized resource.

    ``id`` is the identity used in findings: Terraform address, CloudFormation logical id, or live
    id. ``scope`` groups resources that share account-level settings and naming (a Terraform root
    module directory, a CloudFormation template, an ``account/region``); references resolve within
    it. ``declared`` is True for IaC (the desired state), False for observed live state.
    ``exists`` is True, or an :class:`Unknown` when IaC cannot say whether the resource will
    exist (an unknown ``count`` / ``for_each``, a CloudFormation condition that cannot be
    decided): no policy gives it PASS or FAIL, and what leans on it is UNKNOWN too.
    """

    kind: str
    id: str
    attrs: dict[str, Any]
    provenance: Provenance
    scope: str
    name: str | None = None
    tags: dict[str, str] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()  # other strings that refer to it: live id, name, ARN
    skips: tuple[Skip, ...] = ()
    declared: bool = True
    exists: bool | Unknown = True
    # Why tags absent from ``tags`` may still be set (a tags map, or a tag's value, known only
    # at apply); None when the tags are known. Sources that can tell set it.
    tags_unknown: Unknown | None = None

    def get(self, path: str, default: Any = None) -> Any:
        """Dotted lookup, e.g. ``get("LaunchTemplateData.InstanceMarketOptions.MarketType")``."""
        if "." not in path:
            value = self.attrs.get(path)
            return default if value is None else value
        return dig(self.attrs, path, default)


def dig(value: Any, path: str, default: Any = None) -> Any:
    """Walk a dotted path through dicts; UNKNOWN anywhere on the way yields that UNKNOWN."""
    cur = value
    for part in _split(path):
        if type(cur) is dict:
            cur = cur.get(part)
            if cur is None:
                return default
        elif isinstance(cur, Unknown):
            return cur
        else:
            return default
    return cur


@functools.lru_cache(maxsize=1024)
def _split(path: str) -> tuple[str, ...]:
    return tuple(path.split("."))


# Two kinds of money, never added together: a saving (what a change saves each month) and an
# exposure (what a setting allows to be overspent in the worst case).
EXPOSURE_KINDS = frozenset({"overspend_cap"})


@dataclass(frozen=True)
class Savings:
    usd_month: float
    basis: str
    kind: str  # "overspend_cap" | "spot_mix" | "rightsize" | "idle" | "storage_tiering"
    # The capacity the money is about (the engine fills it in): amounts of one class on the
    # same capacity overlap, and the report totals count only the largest (scanner.pricing).
    capacity: tuple[str, ...] = ()

    @property
    def money_class(self) -> str:
        return "exposure" if self.kind in EXPOSURE_KINDS else "saving"

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"usd_month": round(self.usd_month, 2), "basis": self.basis,
                               "kind": self.kind, "class": self.money_class}
        if self.capacity:
            out["capacity"] = list(self.capacity)
        return out


@dataclass(frozen=True)
class Result:
    """What a policy says about one resource (and optionally one attribute path of it)."""

    status: Status
    message: str
    resource: Resource
    path: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)
    savings: Savings | None = None
    # Why the verdict may not hold: it leans on a resource that may not exist (unknown count /
    # for_each / condition). The engine turns such a PASS or FAIL into UNKNOWN, saying so.
    doubt: Unknown | None = None


class UsageError(Exception):
    """Bad options or config: exit 2 with this message, nothing scanned."""


@dataclass(frozen=True)
class InputError:
    """An input that could not be read: a file, or an (account, region, service)."""

    path: str
    reason: str
    line: int | None = None
    kind: str = "input"  # "input" | "aws" | "config"

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "path": self.path, "reason": self.reason}
        if self.line is not None:
            d["line"] = self.line
        return d


# How the notice of a templated file that was not read begins (a Helm chart template, a Jinja
# configuration): the reports count them in their coverage line, never a silent pass.
TEMPLATE_NOT_READ = "not read, a template"


@dataclass(frozen=True)
class Notice:
    """Something the user should know that does not change the exit code."""

    path: str
    message: str
    line: int | None = None

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"path": self.path, "message": self.message}
        if self.line is not None:
            d["line"] = self.line
        return d


@dataclass(frozen=True)
class Gap:
    """Resources of ``kinds`` in ``scope`` could not be read (live: a denied or failed call).

    Every enabled policy that reads one of those kinds (``observed_needs``) gives no PASS, FAIL
    or UNKNOWN in the scope: its results there are ERROR naming ``reason``
    (scanner.engine.evaluate), so
    that a failed call is never mistaken for "no resources" or for what was not read.
    """

    scope: str
    kinds: tuple[str, ...]
    reason: str
    account: str | None = None
    region: str | None = None
    # IaC: a root module (``scope``, the resources' scope) that was not read whole (a file that
    # does not parse, a module not found, instances past the budget). No verdict of any policy
    # on its resources: what is missing could be anything the verdict leans on.
    iac: bool = False


@dataclass
class SourceResult:
    """What one source returns after reading its inputs."""

    resources: list[Resource] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    coverage: list[dict[str, Any]] = field(default_factory=list)  # live: per account/region/service
    # Values the input marks secret (Terraform ``sensitive``, a plan's ``sensitive_values``,
    # CloudFormation ``NoEcho``): every string of a report that contains one is redacted.
    sensitive: set[str] = field(default_factory=set)

    def extend(self, other: SourceResult) -> None:
        self.resources.extend(other.resources)
        self.errors.extend(other.errors)
        self.notices.extend(other.notices)
        self.gaps.extend(other.gaps)
        self.coverage.extend(other.coverage)
        self.sensitive.update(other.sensitive)


@dataclass(frozen=True, slots=True)
class Finding:
    """A Result dressed for reporting: policy metadata, identity, location, suppression."""

    id: str
    policy_id: str
    title: str
    severity: Severity
    status: Status
    message: str
    resource: dict[str, Any]  # kind, id, name, address, arn, account, region, tags
    location: dict[str, Any] | None  # file, start_line, end_line (IaC)
    evidence: dict[str, Any]
    remediation: dict[str, Any]  # text, terraform, cloudformation
    savings: Savings | None
    suppression: dict[str, Any] | None  # by, reason, expires
    source: str = "gpuaudit"  # the tool whose check made it: "gpuaudit" or "checkov"
    also_reported_by: tuple[str, ...] = ()  # other tools' ids that report the same fact

    def as_dict(self) -> dict[str, Any]:
        d = self._as_dict()
        if self.source != "gpuaudit":
            d["source"] = self.source
        if self.also_reported_by:
            d["also_reported_by"] = list(self.also_reported_by)
        return d

    def _as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "policy_id": self.policy_id,
            "title": self.title,
            "severity": self.severity.value,
            "status": self.status.value,
            "message": self.message,
            "resource": self.resource,
            "location": self.location,
            "evidence": jsonable(self.evidence),
            "remediation": self.remediation,
            "savings": None if self.savings is None else self.savings.as_dict(),
            "suppression": self.suppression,
        }


_PLAIN = (str, int, bool)


def jsonable(value: Any) -> Any:
    """Evidence as plain JSON: Unknown → "UNKNOWN (reason)", Ref → "${address}"; never NaN or
    Infinity (not JSON)."""
    if value is None or type(value) in _PLAIN:
        return value
    if isinstance(value, Unknown):
        return f"UNKNOWN ({value.reason})" if value.reason else "UNKNOWN"
    if isinstance(value, Ref):
        return "${" + str(value) + "}"
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = [jsonable(v) for v in value]
        return sorted(items, key=str) if isinstance(value, set | frozenset) else items
    if isinstance(value, float) and not math.isfinite(value):
        return "UNKNOWN (not a finite number)"  # NaN and Infinity are not JSON
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)
