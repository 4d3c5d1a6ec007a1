"""--format ocsf: OCSF Compliance Finding events (class_uid 2003) built with py-ocsf-models,
loaded back with it."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from reports import render

ComplianceFinding = pytest.importorskip(
    "py_ocsf_models.events.findings.compliance_finding").ComplianceFinding


def _finding(status: str, pid: str = "EBS-001", **over: Any) -> dict[str, Any]:
    f = {"id": f"fp-{status.lower()}-{pid}", "policy_id": pid, "title": "EBS storage is not "
         "encrypted", "severity": "high", "status": status, "message": "volume not encrypted",
         "resource": {"kind": "ec2.volume", "id": "vol-1", "name": None,
                      "account": "111122223333", "region": "eu-west-1",
                      "arn": "arn:aws:ec2:eu-west-1:111122223333:volume/vol-1"},
         "location": None, "evidence": {}, "remediation": {"text": "Encrypt it."},
         "savings": None, "suppression": None}
    f.update(over)
    return f


def _doc(findings: list[dict[str, Any]]) -> dict[str, Any]:
    return {"schema_version": 1, "tool": {"name": "gpuaudit", "version": "0.1.0"},
            "generated_at": "2026-01-02T03:04:05Z", "inputs": {"accounts": ["111122223333"]},
            "summary": {}, "errors": [], "findings": findings}


def test_events_load_back_as_ocsf_compliance_findings() -> None:
    statuses = ["FAIL", "PASS", "UNKNOWN", "ERROR", "SUPPRESSED"]
    events = json.loads(render("ocsf", _doc([_finding(s) for s in statuses])))
    assert len(events) == len(statuses)
    by_status = {}
    for raw in events:
        event = ComplianceFinding.model_validate(raw)  # raises if not a valid event
        assert event.class_uid == 2003 and event.category_uid == 2
        assert event.type_uid == 200301
        by_status[raw["status_code"]] = event
    # compliance.status_id: 1 Pass, 2 Warning, 3 Fail, 0 Unknown
    assert {s: int(by_status[s].compliance.status_id) for s in statuses} == {
        "FAIL": 3, "PASS": 1, "UNKNOWN": 2, "ERROR": 0, "SUPPRESSED": 3}
    assert by_status["SUPPRESSED"].status == "Suppressed"
    assert by_status["PASS"].status == "Resolved"
    fail = by_status["FAIL"]
    assert "cis-aws-foundations-3.0/2.2.1" in fail.compliance.requirements
    assert "CIS Amazon Web Services Foundations Benchmark" in fail.compliance.standards
    assert fail.finding_info.uid == "fp-fail-EBS-001"
    assert fail.resources[0].uid == "arn:aws:ec2:eu-west-1:111122223333:volume/vol-1"
    assert int(fail.severity_id) == 4  # High
    assert fail.time == 1767323045


def test_a_policy_with_no_mapping_has_no_requirements() -> None:
    (raw,) = json.loads(render("ocsf", _doc([_finding("FAIL", pid="ASG-004",
                                                      severity="high")])))
    event = ComplianceFinding.model_validate(raw)
    assert event.compliance.requirements == [] and event.compliance.control == "ASG-004"


def test_without_py_ocsf_models_it_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from reports.ocsf import OcsfUnavailable
    from scanner.run.pipeline import UsageError

    monkeypatch.setitem(sys.modules, "py_ocsf_models.events.findings.compliance_finding", None)
    with pytest.raises(OcsfUnavailable, match=r"pip install 'gpuaudit\[ocsf\]'") as info:
        render("ocsf", _doc([_finding("FAIL")]))
    assert isinstance(info.value, UsageError)  # the CLI says it and exits 2
