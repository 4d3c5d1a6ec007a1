"""--format asff: AWS Security Finding Format 2018-10-08 for a Security Hub custom
integration, one finding per report finding, with stable Ids."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reports import render
from reports.asff import MAX_DESCRIPTION, MAX_TITLE, build

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "scanner" / "cli" / "demo" / "examples"
ACCOUNT = "111122223333"
REQUIRED = ("SchemaVersion", "Id", "ProductArn", "GeneratorId", "AwsAccountId", "Types",
            "CreatedAt", "UpdatedAt", "Severity", "Title", "Description", "Resources")
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def _finding(status: str, **over: Any) -> dict[str, Any]:
    f = {"id": f"fp-{status.lower()}", "policy_id": "EBS-001", "title": "EBS storage is not "
         "encrypted", "severity": "high", "status": status, "message": "volume not encrypted",
         "resource": {"kind": "ec2.volume", "id": "vol-1", "name": "data", "account": ACCOUNT,
                      "region": "eu-west-1",
                      "arn": f"arn:aws:ec2:eu-west-1:{ACCOUNT}:volume/vol-1"},
         "location": None, "evidence": {}, "remediation": {"text": "Encrypt it."},
         "savings": None, "suppression": None}
    if status == "SUPPRESSED":
        f["suppression"] = {"by": "baseline", "reason": "accepted"}
    f.update(over)
    return f


def _doc(findings: list[dict[str, Any]], **over: Any) -> dict[str, Any]:
    doc = {"schema_version": 1, "tool": {"name": "gpuaudit", "version": "0.1.0"},
           "generated_at": "2026-01-02T03:04:05Z",
           "inputs": {"accounts": [ACCOUNT], "regions": ["eu-west-1"]},
           "summary": {}, "errors": [], "findings": findings}
    doc.update(over)
    return doc


@pytest.fixture(scope="module")
def iac_doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("scan") / "report.json"
    run = subprocess.run([sys.executable, "-m", "scanner", "scan", str(EXAMPLES), "--format",
                          "json", "-o", str(out), "--quiet", "--include-passed", "--fail-on",
                          "none"], capture_output=True, text=True, cwd=ROOT, timeout=300,
                         check=False)
    assert run.returncode == 0, run.stderr
    return json.loads(out.read_text())


def test_status_mapping_and_workflow() -> None:
    statuses = ["FAIL", "PASS", "UNKNOWN", "ERROR", "SUPPRESSED"]
    out = {f["ProductFields"]["gpuaudit/status"]: f
           for f in build(_doc([_finding(s) for s in statuses]))}
    assert {s: out[s]["Compliance"]["Status"] for s in statuses} == {
        "FAIL": "FAILED", "PASS": "PASSED", "UNKNOWN": "WARNING", "ERROR": "NOT_AVAILABLE",
        "SUPPRESSED": "FAILED"}
    assert out["PASS"]["Workflow"] == {"Status": "RESOLVED"}
    assert out["PASS"]["RecordState"] == "ARCHIVED"
    assert out["PASS"]["Severity"]["Label"] == "INFORMATIONAL"
    assert out["SUPPRESSED"]["Workflow"] == {"Status": "SUPPRESSED"}
    for s in ("FAIL", "UNKNOWN", "ERROR"):
        assert out[s]["Workflow"] == {"Status": "NEW"} and out[s]["RecordState"] == "ACTIVE"
    assert out["FAIL"]["Severity"] == {"Label": "HIGH", "Original": "high"}


def test_a_finding_is_whole_asff() -> None:
    (f,) = build(_doc([_finding("FAIL")]))
    for key in REQUIRED:
        assert f.get(key), key
    assert f["SchemaVersion"] == "2018-10-08"
    assert f["ProductArn"] == f"arn:aws:securityhub:eu-west-1:{ACCOUNT}:product/{ACCOUNT}/default"
    assert f["GeneratorId"] == "EBS-001" and f["AwsAccountId"] == ACCOUNT
    assert STAMP.match(f["CreatedAt"]) and STAMP.match(f["UpdatedAt"])
    assert f["Resources"] == [{
        "Type": "AwsEc2Volume", "Id": f"arn:aws:ec2:eu-west-1:{ACCOUNT}:volume/vol-1",
        "Partition": "aws", "Region": "eu-west-1",
        "Details": {"Other": {"gpuaudit/kind": "ec2.volume", "gpuaudit/resource": "vol-1 (data)"}}}]
    assert f["Remediation"]["Recommendation"]["Text"] == "Encrypt it."
    assert f["Remediation"]["Recommendation"]["Url"].endswith("/docs/policies/EBS-001.md")
    assert "cis-aws-foundations-3.0/2.2.1" in f["Compliance"]["RelatedRequirements"]
    assert "nist-800-53-r5/SC-28" in f["Compliance"]["RelatedRequirements"]
    for t in f["Types"]:  # namespace/category/classifier, never more parts
        assert 1 <= len(t.split("/")) <= 3, t
    assert "Software and Configuration Checks/AWS Security Best Practices" in f["Types"]


def test_ids_are_stable_per_policy_and_resource() -> None:
    first = build(_doc([_finding("FAIL")]))
    later = _doc([_finding("PASS", id="fp-fail", message="now encrypted")],
                 generated_at="2026-02-01T00:00:00Z")
    again = build(later)
    assert first[0]["Id"] == again[0]["Id"] == "gpuaudit/EBS-001/fp-fail"
    other = build(_doc([_finding("FAIL", id="fp-other")]))
    assert other[0]["Id"] != first[0]["Id"]


def test_long_text_is_cut_to_asffs_limits() -> None:
    f = _finding("FAIL", title="t" * 400, message="m" * 5000,
                 remediation={"text": "r" * 2000})
    (out,) = build(_doc([f]))
    assert len(out["Title"]) <= MAX_TITLE and len(out["Description"]) <= MAX_DESCRIPTION
    assert len(out["Remediation"]["Recommendation"]["Text"]) <= 512


def test_iac_findings_of_the_bundled_examples(iac_doc: dict[str, Any]) -> None:
    before = copy.deepcopy(iac_doc)
    findings = json.loads(render("asff", iac_doc))
    assert iac_doc == before  # the renderer does not change the document
    assert len(findings) == len(iac_doc["findings"])
    assert len({f["Id"] for f in findings}) == len(findings)
    ebs = [f for f in findings if f["GeneratorId"] == "EBS-001"
           and f["Compliance"]["Status"] == "FAILED"]
    ids = {f["Resources"][0]["Id"] for f in ebs}
    # file and address: an edit above the resource does not change its identity
    assert any(i.endswith("examples/terraform/main.tf:aws_ebs_volume.models") for i in ids), ids
    assert not any(re.search(r":\d+(-\d+)?:", i) for i in ids), ids
    # no account in an IaC scan: a preview account, never a made-up real-looking one
    assert {f["AwsAccountId"] for f in findings} == {"000000000000"}
    assert any(f["Compliance"]["Status"] == "PASSED" for f in findings)
