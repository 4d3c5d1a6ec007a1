"""`gpuaudit report compliance` and `scan --compliance`: the per-control status of a report,
on the demo's report (a sandbox account and the bundled IaC) and on small hand-made ones."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reports.compliance_report import evaluate
from scanner.findings.schema import validate_report

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "scanner" / "cli" / "demo" / "examples"


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scanner", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300, check=False)


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    run = _cli("demo", "--output-dir", str(out))
    assert run.returncode == 0, run.stderr
    return out / "report.json"


def _control(section: dict[str, Any], cid: str) -> dict[str, Any]:
    return next(c for c in section["controls"] if c["id"] == cid)


def test_every_finding_of_the_demo_carries_its_controls(demo_report: Path) -> None:
    doc = json.loads(demo_report.read_text())
    assert validate_report(doc) == []
    assert all("compliance" in f for f in doc["findings"])
    ebs2 = next(f for f in doc["findings"] if f["policy_id"] == "EBS-002")
    assert ebs2["compliance"]["cis-aws-foundations-3.0"] == ["2.2.1"]
    asg4 = [f for f in doc["findings"] if f["policy_id"] == "ASG-004"]
    assert all(f["compliance"] == {} for f in asg4)


def test_report_compliance_on_the_demo(demo_report: Path) -> None:
    run = _cli("report", "compliance", str(demo_report), "--framework", "cis-aws-foundations-3.0",
               "--format", "json")
    assert run.returncode == 0, run.stderr
    section = json.loads(run.stdout)
    c221 = _control(section, "2.2.1")
    assert c221["status"] == "FAIL"  # us-east-1 has encryption by default off
    failing = {(e["policy_id"], e["resource"]) for e in c221["failing"]}
    assert ("EBS-002", "123456789012/us-east-1") in failing
    assert any(p == "EBS-001" and "datasets-scratch" in r for p, r in failing)
    # a passing resource is not listed as failing (us-west-2 has it on)
    assert ("EBS-002", "123456789012/us-west-2") not in failing
    assert all(e["link"].endswith(f"/docs/policies/{e['policy_id']}.md")
               for e in c221["failing"])
    assert _control(section, "1.4")["status"] == "NOT_COVERED"
    assert section["counts"] == {"FAIL": 1, "NOT_COVERED": 61}

    nist = json.loads(_cli("report", "compliance", str(demo_report), "--framework",
                           "nist-800-53-r5", "--format", "json").stdout)
    # EBS-003 is off by default: it did not run, so SC-12 is not evaluated, never PASS
    sc12 = _control(nist, "SC-12")
    assert sc12["status"] == "UNKNOWN" and "not evaluated" in sc12["why"]

    md = _cli("report", "compliance", str(demo_report), "--framework", "soc2")
    assert md.returncode == 0
    assert "| CC6.1 |" in md.stdout and "**FAIL**" in md.stdout and "not covered" in md.stdout
    page = _cli("report", "compliance", str(demo_report), "--framework", "finops", "--format",
                "html")
    assert page.stdout.startswith("<!DOCTYPE html>") and "workload-optimization" in page.stdout
    assert "<script" not in page.stdout


def _doc(by_policy: dict[str, dict[str, int]], findings: list[dict[str, Any]] | None = None,
         errors: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"summary": {"by_policy": by_policy}, "findings": findings or [],
            "errors": errors or []}


def test_status_of_a_control_from_the_results() -> None:
    passing = evaluate(_doc({"EBS-001": {"PASS": 3}, "EBS-002": {"PASS": 1}}),
                       "cis-aws-foundations-3.0")
    assert _control(passing, "2.2.1")["status"] == "PASS"
    # one FAIL among passes is a FAIL
    failing = evaluate(_doc({"EBS-001": {"PASS": 3, "FAIL": 1}, "EBS-002": {"PASS": 1}}),
                       "cis-aws-foundations-3.0")
    assert _control(failing, "2.2.1")["status"] == "FAIL"
    # ERROR and UNKNOWN are never a PASS
    err = evaluate(_doc({"EBS-001": {"PASS": 3}, "EBS-002": {"ERROR": 1}}),
                   "cis-aws-foundations-3.0")
    assert _control(err, "2.2.1")["status"] == "ERROR"
    unk = evaluate(_doc({"EBS-001": {"PASS": 3, "UNKNOWN": 1}}), "cis-aws-foundations-3.0")
    assert _control(unk, "2.2.1")["status"] == "UNKNOWN"
    # an input that could not be read: the passes may rest on what was not read
    unread = evaluate(_doc({"EBS-001": {"PASS": 3}},
                           errors=[{"kind": "input", "path": "x.tf", "reason": "bad"}]),
                      "cis-aws-foundations-3.0")
    assert _control(unread, "2.2.1")["status"] == "UNKNOWN"
    # nothing evaluated
    none = evaluate(_doc({}), "cis-aws-foundations-3.0")
    assert _control(none, "2.2.1")["status"] == "UNKNOWN"
    # suppressed only: the accepted exceptions are said
    sup = evaluate(_doc({"EBS-002": {"SUPPRESSED": 2}}), "cis-aws-foundations-3.0")
    assert _control(sup, "2.2.1")["status"] == "PASS"
    assert "2 suppressed" in _control(sup, "2.2.1")["why"]


def test_a_policys_own_mapping_puts_it_under_the_control() -> None:
    finding = {"id": "f1", "policy_id": "USR-001", "status": "FAIL", "message": "m",
               "resource": {"id": "r", "kind": "ec2.instance"}, "location": None,
               "compliance": {"soc2": ["CC6.2"]}}
    section = evaluate(_doc({"USR-001": {"FAIL": 1}}, [finding]), "soc2")
    cc62 = _control(section, "CC6.2")
    assert cc62["status"] == "FAIL" and cc62["policies"] == ["USR-001"]
    assert [e["finding_id"] for e in cc62["failing"]] == ["f1"]
    assert _control(section, "CC6.3")["status"] == "NOT_COVERED"


def test_scan_compliance_adds_the_section_to_the_reports(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = _cli("scan", str(EXAMPLES), "--compliance", "cis-aws-foundations-3.0",
               "--compliance", "soc2", "--format", "json", "--format", "markdown",
               "--format", "html", "--output-dir", str(out), "--quiet", "--fail-on", "none")
    assert run.returncode == 0, run.stderr
    doc = json.loads((out / "report.json").read_text())
    assert validate_report(doc) == []
    assert [s["framework"] for s in doc["compliance"]] == ["cis-aws-foundations-3.0", "soc2"]
    assert _control(doc["compliance"][0], "2.2.1")["status"] == "FAIL"
    md = (out / "report.md").read_text()
    assert "### Compliance: CIS Amazon Web Services Foundations Benchmark 3.0.0" in md
    assert "cis-aws-foundations-3.0: 2.2.1" in md  # the failing finding's own controls
    html = (out / "report.html").read_text()
    assert "Compliance: SOC 2 Trust Services Criteria" in html
    bad = _cli("scan", str(EXAMPLES), "--compliance", "cis-9")
    assert bad.returncode == 2 and "unknown compliance framework 'cis-9'" in bad.stderr


def test_report_compliance_of_an_unreadable_report(tmp_path: Path) -> None:
    broken = tmp_path / "r.json"
    broken.write_text("{not json", encoding="utf-8")
    run = _cli("report", "compliance", str(broken), "--framework", "soc2")
    assert run.returncode == 2 and str(broken) in run.stderr and "Traceback" not in run.stderr


def test_every_format_shows_a_findings_controls() -> None:
    """A report written before findings carried them (the samples have no ``compliance``) gets
    them from the mapping; every renderer shows them."""
    import xml.etree.ElementTree as ET

    from reports import render
    from tests.report_samples import sample

    doc = sample("iac")
    ebs = next(f for f in doc["findings"] if f["policy_id"] == "EBS-001"
               and f["status"] == "FAIL")
    assert "compliance" not in ebs
    sarif = json.loads(render("sarif", doc))
    result = next(r for r in sarif["runs"][0]["results"] if r["ruleId"] == "EBS-001")
    assert result["properties"]["compliance"]["cis-aws-foundations-3.0"] == ["2.2.1"]
    spot = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "SPOT-001"]
    assert all("cis-aws-foundations-3.0" not in r["properties"].get("compliance", {})
               for r in spot)
    junit = ET.fromstring(render("junit", doc))
    texts = [el.text or "" for el in junit.iter("failure")]
    assert any("compliance: cis-aws-foundations-3.0: 2.2.1;" in t for t in texts)
    md = render("markdown", doc)
    row = next(line for line in md.splitlines() if line.startswith("| high | EBS-001"))
    assert row.rstrip(" |").endswith("pci-dss-4.0: 3.5.1; soc2: CC6.1")
    html = render("html", doc)
    assert "cis-aws-foundations-3.0: 2.2.1" in html
