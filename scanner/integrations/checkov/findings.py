"""checkov's JSON report → gpuaudit findings, and one finding where both tools say the same.

A failed checkov check becomes a finding with the checkov id as its policy id, the file and
lines checkov gives, ``source: checkov`` and a severity (checkov's own when its report has one,
else :data:`SEVERITY` for the ids we know, else medium). Its code block is never copied (it may
hold a secret). Where a checkov check and a gpuaudit policy report the same fact on the same
resource (:data:`SAME_FACT`), the gpuaudit finding is kept and lists the checkov id in
``also_reported_by``; the checkov finding is dropped.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from scanner.model import Finding, Notice, Severity, Status

SOURCE = "checkov"
DEFAULT_SEVERITY = Severity.MEDIUM
# Severities of the checkov checks that meet GPU infrastructure, when checkov's report has none
# (it has none without a Prisma Cloud key). Where a gpuaudit policy says the same, its severity.
SEVERITY: dict[str, Severity] = {
    "CKV_AWS_3": Severity.HIGH,  # EBS volume not encrypted (= EBS-001)
    "CKV_AWS_8": Severity.HIGH,  # launch configuration / instance EBS not encrypted (= EBS-001)
    "CKV_AWS_106": Severity.MEDIUM,  # EBS default encryption disabled (= EBS-002)
    "CKV_AWS_189": Severity.LOW,  # EBS volume without a customer-managed key (= EBS-003)
    "CKV_AWS_88": Severity.HIGH,  # EC2 instance has a public IP (= VPC-004 when GPU)
    "CKV_AWS_46": Severity.HIGH,  # hard-coded secrets in EC2 user data
    "CKV_AWS_79": Severity.HIGH,  # instance metadata service v1 enabled
    "CKV_AWS_341": Severity.MEDIUM,  # launch template metadata hop limit above 1
    "CKV_AWS_130": Severity.MEDIUM,  # subnet assigns public IPs by default
    "CKV_AWS_126": Severity.LOW,  # EC2 detailed monitoring disabled
    "CKV_AWS_135": Severity.LOW,  # EC2 not EBS-optimized
    "CKV_AWS_153": Severity.LOW,  # ASG does not propagate tags to its launch configuration
    "CKV_AWS_315": Severity.LOW,  # ASG does not use a launch template
}
# checkov id → the gpuaudit policy that reports the same fact when both fail on one resource.
SAME_FACT: dict[str, str] = {
    "CKV_AWS_3": "EBS-001",
    "CKV_AWS_8": "EBS-001",
    "CKV_AWS_106": "EBS-002",
    "CKV_AWS_189": "EBS-003",
    "CKV_AWS_88": "VPC-004",
}
_CFN_PREFIX = "AWS::"


def severity_of(check: Mapping[str, Any]) -> Severity:
    own = check.get("severity")
    if isinstance(own, str) and own.strip():
        try:
            return Severity.parse(own)
        except ValueError:
            pass
    return SEVERITY.get(str(check.get("check_id")), DEFAULT_SEVERITY)


def _identity(check: Mapping[str, Any]) -> tuple[str, str, bool]:
    """(kind, id, is_terraform) of the resource a check names: a Terraform address, or
    ``AWS::EC2::Volume.Vol`` → the logical id ``Vol``."""
    from scanner.integrations.checkov.kinds import kind_of

    resource = str(check.get("resource_address") or check.get("resource") or "?")
    if resource.startswith(_CFN_PREFIX) and "." in resource:
        cfn_type, _, logical_id = resource.partition(".")
        return kind_of(cfn_type), logical_id, False
    parts = [p for p in resource.split(".") if p]
    # module.a.aws_x.y / data.aws_x.y: the type is the part before the name
    tf_type = parts[-2] if len(parts) >= 2 else resource
    return kind_of(tf_type), resource, True


def to_finding(check: Mapping[str, Any], file: str | None) -> Finding:
    from scanner.engine.evaluate import display_path, fingerprint

    check_id = str(check.get("check_id"))
    kind, rid, terraform = _identity(check)
    ident = {"kind": kind, "id": rid, "name": None, "address": rid if terraform else None,
             "arn": None, "account": None, "region": None, "tags": {}}
    lines = check.get("file_line_range")
    start, end = (lines if isinstance(lines, list) and len(lines) == 2
                  and all(isinstance(n, int) and n > 0 for n in lines) else (None, None))
    location = {"file": display_path(file), "start_line": start, "end_line": end} if file \
        else None
    name = str(check.get("check_name") or check_id)
    raw_details = check.get("details")
    details = [str(d) for d in raw_details if d] if isinstance(raw_details, list) else []
    message = f"{name} (checkov {check_id})" + (": " + "; ".join(details) if details else "")
    evidence: dict[str, Any] = {"checkov_check_id": check_id}
    for key in ("bc_check_id", "guideline", "check_class"):
        if check.get(key):
            evidence[key] = str(check[key])
    result = check.get("check_result")
    keys = result.get("evaluated_keys") if isinstance(result, dict) else None
    if isinstance(keys, list) and keys:
        evidence["evaluated_keys"] = [str(k) for k in keys]
    guideline = check.get("guideline")
    remediation = {"text": f"See checkov's guideline for {check_id}"
                           + (f": {guideline}" if guideline else "."),
                   "terraform": "", "cloudformation": ""}
    return Finding(id=fingerprint(check_id, ident, ""), policy_id=check_id, title=name,
                   severity=severity_of(check), status=Status.FAIL, message=message,
                   resource=ident, location=location, evidence=evidence,
                   remediation=remediation, savings=None, suppression=None, source=SOURCE)


@dataclass
class Merged:
    findings: list[Finding]
    merged: int = 0  # checkov findings folded into a gpuaudit finding
    notices: list[Notice] = field(default_factory=list)


def _real(path: str | None) -> str:
    return os.path.realpath(path) if path else ""


def _keys(f: Finding) -> list[tuple[str, str, Any]]:
    loc = f.location or {}
    where = _real(loc.get("file"))
    keys: list[tuple[str, str, Any]] = [(f.policy_id, where, ("id", f.resource.get("id")))]
    if loc.get("start_line"):
        keys.append((f.policy_id, where, ("line", loc["start_line"])))
    return keys


def merge(ours: Iterable[Finding], theirs: Iterable[Finding]) -> Merged:
    """Our findings plus checkov's, with each same-fact pair (both failing on one resource: same
    file, and the same resource id or first line) kept once, as ours listing both ids."""
    ours = list(ours)
    index: dict[tuple[str, str, Any], int] = {}
    for i, f in enumerate(ours):
        if f.status in (Status.FAIL, Status.SUPPRESSED):
            for key in _keys(f):
                index.setdefault(key, i)
    out = Merged(ours)
    kept: list[Finding] = []
    for f in theirs:
        target = SAME_FACT.get(f.policy_id)
        hit = None
        if target is not None:
            for _pid, where, what in _keys(f):
                hit = index.get((target, where, what))
                if hit is not None:
                    break
        if hit is None:
            kept.append(f)
            continue
        mine = out.findings[hit]
        if f.policy_id not in mine.also_reported_by:
            out.findings[hit] = replace(mine, also_reported_by=tuple(
                sorted((*mine.also_reported_by, f.policy_id))))
        out.merged += 1
    out.findings = out.findings + kept
    return out
