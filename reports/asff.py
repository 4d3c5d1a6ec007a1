"""AWS Security Finding Format (ASFF, SchemaVersion 2018-10-08) for AWS Security Hub.

One ASFF finding per report finding, for a custom integration: ProductArn
``arn:aws:securityhub:{region}:{account}:product/{account}/default``. The Id is stable per policy
and resource (the finding's fingerprint), so importing the same report twice updates the same
findings instead of adding new ones. Compliance.Status: FAIL -> FAILED, PASS -> PASSED (with
Workflow RESOLVED and RecordState ARCHIVED, so Security Hub resolves a fixed finding), UNKNOWN ->
WARNING, ERROR -> NOT_AVAILABLE, SUPPRESSED -> FAILED with Workflow SUPPRESSED.
RelatedRequirements come from the compliance mappings (``framework/control``).

The account and region of each finding: its resource's, else the ones given (``gpuaudit report
send-securityhub`` gives the caller's), else the report's only audited account and first region.
An IaC finding of a report that names no account gets ``000000000000``: the file is then a
preview, and send-securityhub always sets the real account. Nothing here calls AWS.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any, TextIO

from reports.common import (
    by_status,
    live_name,
    location_label,
    resource_label,
    run_time,
    write_json_array,
)
from reports.policy_meta import describe
from scanner.compliance import finding_controls

SCHEMA_VERSION = "2018-10-08"
NO_ACCOUNT = "000000000000"
DEFAULT_REGION = "us-east-1"
COMPLIANCE_STATUS = {"FAIL": "FAILED", "PASS": "PASSED", "UNKNOWN": "WARNING",
                     "ERROR": "NOT_AVAILABLE", "SUPPRESSED": "FAILED"}
WORKFLOW = {"PASS": "RESOLVED", "SUPPRESSED": "SUPPRESSED"}
SEVERITY = {"critical": "CRITICAL", "high": "HIGH", "medium": "MEDIUM", "low": "LOW",
            "info": "INFORMATIONAL"}
# gpuaudit resource kinds -> ASFF resource types (the rest are "Other")
RESOURCE_TYPE = {
    "autoscaling.group": "AwsAutoScalingAutoScalingGroup",
    "autoscaling.launch_configuration": "AwsAutoScalingLaunchConfiguration",
    "ec2.instance": "AwsEc2Instance",
    "ec2.volume": "AwsEc2Volume",
    "ec2.vpc": "AwsEc2Vpc",
    "ec2.subnet": "AwsEc2Subnet",
    "ec2.launch_template": "AwsEc2LaunchTemplate",
    "ec2.ebs_defaults": "AwsAccount",
    "eks.cluster": "AwsEksCluster",
}
# ASFF's limits (a longer value makes Security Hub reject the finding)
MAX_TITLE, MAX_DESCRIPTION, MAX_RECOMMENDATION = 256, 1024, 512
MAX_REQUIREMENTS, MAX_PRODUCT_FIELD = 32, 2048
MAX_ID = 512


def _cut(text: Any, limit: int) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def product_arn(region: str, account: str) -> str:
    return f"arn:aws:securityhub:{region}:{account}:product/{account}/default"


def finding_id(finding: dict[str, Any]) -> str:
    """Stable per policy and resource: the policy id and the finding's fingerprint."""
    return _cut(f"gpuaudit/{finding.get('policy_id')}/{finding.get('id')}", MAX_ID)


def related_requirements(finding: dict[str, Any]) -> list[str]:
    out = [f"{fid}/{cid}" for fid, ids in finding_controls(finding).items() for cid in ids]
    return out[:MAX_REQUIREMENTS]


def _types(finding: dict[str, Any], category: str) -> list[str]:
    out = []
    if category == "security":
        out.append("Software and Configuration Checks/AWS Security Best Practices")
    for fid in finding_controls(finding):  # the id as classifier: a name may hold a "/"
        out.append(f"Software and Configuration Checks/Industry and Regulatory Standards/{fid}")
    return out or ["Software and Configuration Checks"]


def resource_uid(finding: dict[str, Any]) -> str:
    """A resource's identity that does not move with an edit: its ARN; for IaC, its file and
    address (no line numbers); else account/region/id."""
    res = finding.get("resource") or {}
    if res.get("arn"):
        return str(res["arn"])
    file = (finding.get("location") or {}).get("file")
    if file:
        return f"{file}:{res.get('address') or res.get('id')}"
    return live_name(res) or "?"


def _resource(finding: dict[str, Any], region: str) -> dict[str, Any]:
    res = finding.get("resource") or {}
    kind = str(res.get("kind") or "")
    out: dict[str, Any] = {"Type": RESOURCE_TYPE.get(kind, "Other"),
                           "Id": _cut(resource_uid(finding), MAX_ID),
                           "Partition": "aws", "Region": str(res.get("region") or region)}
    details = {k: _cut(v, 256) for k, v in (("gpuaudit/kind", kind),
                                            ("gpuaudit/resource", resource_label(res)))
               if v}
    out["Details"] = {"Other": details}
    return out


def _time(doc: dict[str, Any]) -> str:
    stamp = doc.get("generated_at")
    if isinstance(stamp, str) and stamp:
        return stamp
    return run_time().strftime("%Y-%m-%dT%H:%M:%SZ")


def _defaults(doc: dict[str, Any], account: str | None,
              region: str | None) -> tuple[str | None, str]:
    inputs = doc.get("inputs") or {}
    accounts = inputs.get("accounts") or []
    regions = inputs.get("regions") or []
    acct = account or (str(accounts[0]) if len(accounts) == 1 else None)
    return acct, region or (str(regions[0]) if regions else DEFAULT_REGION)


def to_asff(finding: dict[str, Any], *, account: str, region: str,
            when: str, force_account: bool = False) -> dict[str, Any]:
    """One ASFF finding. ``force_account``: every finding goes to ``account`` (Security Hub
    takes a custom integration's findings for the caller's own account only)."""
    res = finding.get("resource") or {}
    acct = account if force_account else str(res.get("account") or account)
    reg = region if force_account else str(res.get("region") or region)
    status = str(finding.get("status"))
    pid = str(finding.get("policy_id"))
    sev = str(finding.get("severity"))
    meta = describe(pid, title=str(finding.get("title") or pid), severity=sev)
    rem = finding.get("remediation") or {}
    label = "INFORMATIONAL" if status == "PASS" else SEVERITY.get(sev, "MEDIUM")
    compliance: dict[str, Any] = {"Status": COMPLIANCE_STATUS.get(status, "NOT_AVAILABLE")}
    requirements = related_requirements(finding)
    if requirements:
        compliance["RelatedRequirements"] = requirements
    fields = {"gpuaudit/policy_id": pid, "gpuaudit/status": status,
              "gpuaudit/fingerprint": str(finding.get("id")),
              "gpuaudit/location": location_label(finding)}
    sav = finding.get("savings")
    if isinstance(sav, dict) and sav.get("usd_month") is not None:
        fields["gpuaudit/usd_month"] = str(sav.get("usd_month"))
    return {
        "SchemaVersion": SCHEMA_VERSION,
        "Id": finding_id(finding),
        "ProductArn": product_arn(reg, acct),
        "ProductName": "gpuaudit",
        "CompanyName": "gpuaudit",
        "GeneratorId": pid,
        "AwsAccountId": acct,
        "Region": reg,
        "Types": _types(finding, meta.category),
        "CreatedAt": when,
        "UpdatedAt": when,
        "Severity": {"Label": label, "Original": sev},
        "Title": _cut(f"{pid} {finding.get('title') or meta.title}", MAX_TITLE),
        "Description": _cut(finding.get("message") or meta.description or pid, MAX_DESCRIPTION),
        "Remediation": {"Recommendation": {
            "Text": _cut(rem.get("text") or f"See {meta.help_uri}", MAX_RECOMMENDATION),
            "Url": meta.help_uri}},
        "SourceUrl": meta.help_uri,
        "ProductFields": {k: _cut(v, MAX_PRODUCT_FIELD) for k, v in fields.items()},
        "Resources": [_resource(finding, reg)],
        "Compliance": compliance,
        "Workflow": {"Status": WORKFLOW.get(status, "NEW")},
        "RecordState": "ARCHIVED" if status == "PASS" else "ACTIVE",
    }


def build(doc: dict[str, Any], *, account: str | None = None, region: str | None = None,
          force_account: bool = False) -> list[dict[str, Any]]:
    return list(iter_asff(doc, account=account, region=region, force_account=force_account))


def iter_asff(doc: dict[str, Any], *, account: str | None = None, region: str | None = None,
              force_account: bool = False) -> Iterator[dict[str, Any]]:
    acct, reg = _defaults(doc, account, region)
    when = _time(doc)
    for f in by_status(doc.get("findings") or []):
        yield to_asff(f, account=acct or NO_ACCOUNT, region=reg, when=when,
                      force_account=force_account)


def write(doc: dict[str, Any], out: TextIO) -> None:
    """The findings as a JSON array (what BatchImportFindings takes, in batches of 100),
    written a finding at a time."""
    write_json_array(iter_asff(doc), out)


def render(doc: dict[str, Any]) -> str:
    buf = io.StringIO()
    write(doc, buf)
    return buf.getvalue()
