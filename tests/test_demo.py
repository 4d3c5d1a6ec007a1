"""`gpuaudit demo`: a whole audit of a sandbox account (moto in-process) plus the bundled IaC
examples: its sandbox, its totals, and without moto. The whole demo runs from a fresh
non-editable install in tests/test_packaging.py, checked by ``check_demo_report`` here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from policies import all_policies
from scanner.findings.schema import validate_report

ROOT = Path(__file__).resolve().parents[1]
SARIF_SCHEMA = ROOT / "tests" / "fixtures" / "sarif" / "sarif-schema-2.1.0.json"
ACCOUNT = "123456789012"
EAST, WEST = "us-east-1", "us-west-2"


def live_results(doc: dict[str, Any]) -> set[tuple[str, str, str, str]]:
    """(policy, region, resource name or id, status) of the sandbox account's results."""
    return {
        (f["policy_id"], f["resource"]["region"], f["resource"]["name"] or f["resource"]["id"],
         f["status"])
        for f in doc["findings"] if f["resource"].get("account") == ACCOUNT
    }


def check_demo_report(out: Path) -> dict[str, Any]:
    """What any run of the demo must have written, reasoned from the seeded estate."""
    doc = json.loads((out / "report.json").read_text())
    assert validate_report(doc) == []
    assert doc["errors"] == []
    results = live_results(doc)
    expected = {
        ("EBS-001", EAST, "datasets-scratch", "FAIL"),  # CreateVolume without encryption
        ("EBS-001", EAST, "notebook-idle-root", "FAIL"),  # the image's unencrypted root
        ("EBS-001", EAST, "train-exp-7-root", "FAIL"),
        ("EBS-001", EAST, "checkpoints", "PASS"),
        ("EBS-001", WEST, "serving-models", "PASS"),
        ("EBS-002", EAST, f"{ACCOUNT}/{EAST}", "FAIL"),  # encryption by default off
        ("EBS-002", WEST, f"{ACCOUNT}/{WEST}", "PASS"),  # and on
        ("SPOT-001", EAST, "inference-spot", "FAIL"),  # 1.10 > 0.7 x 1.212 $/h
        ("SPOT-001", EAST, "batch-spot", "FAIL"),  # no bid = on-demand
        ("SPOT-001", EAST, "inference", "FAIL"),  # spot share > 0, no SpotMaxPrice
        ("SPOT-001", WEST, "serving-spot", "PASS"),  # 0.45 within [0.20, 0.56]
        ("ASG-001", EAST, "llm-training", "FAIL"),  # 4 of 4 on demand
        ("ASG-001", EAST, "inference", "PASS"),  # 2 of 6 at MaxSize: 33 %
        ("VPC-001", EAST, "training", "FAIL"),  # GPU compute, no S3 gateway endpoint
    }
    assert expected <= results, sorted(expected - results)
    wrong = {(p, r, n, s) for p, r, n, s in results
             if (p, r, n, "FAIL" if s == "PASS" else "PASS") in expected}
    assert wrong == set()  # no resource has both verdicts
    catalogue = all_policies()
    if "RS-002" in catalogue:  # the right-sizing policies, once they exist
        assert ("RS-002", EAST, "notebook-idle", "FAIL") in results
    if "RS-001" in catalogue:
        assert ("RS-001", EAST, "train-exp-7", "FAIL") in results
    asg = next(f for f in doc["findings"]
               if f["policy_id"] == "ASG-001" and f["resource"]["name"] == "llm-training")
    assert asg["savings"]["usd_month"] > 0 and "x 730 h" in asg["savings"]["basis"]
    assert doc["summary"]["savings_usd_month"] > 0
    # the bundled IaC examples were scanned too, with their file locations
    iac = {(f["policy_id"], f["resource"]["id"], f["status"]) for f in doc["findings"]
           if f.get("location")}
    assert ("EBS-001", "aws_ebs_volume.models", "FAIL") in iac
    assert ("ASG-001", "TrainingGroup", "FAIL") in iac
    assert set(doc["inputs"]) == {"accounts", "paths", "regions"}
    assert doc["inputs"]["regions"] == [EAST, WEST]
    html = (out / "report.html").read_text()
    assert "datasets-scratch" in html and "<script src" not in html
    return doc


def check_sarif(out: Path) -> None:
    import jsonschema

    log = json.loads((out / "report.sarif").read_text())
    schema = json.loads(SARIF_SCHEMA.read_text())
    assert [e.message for e in jsonschema.Draft4Validator(schema).iter_errors(log)] == []
    assert {r["ruleId"] for r in log["runs"][0]["results"]} >= {"EBS-001", "SPOT-001", "ASG-001"}


# settings of the machine that would break or leak a real audit
HOSTILE_ENV = {"AWS_PROFILE": "no-such-profile", "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
               "AWS_REGION": "eu-north-1", "AWS_ACCESS_KEY_ID": "AKIAREALLOOKINGKEY00"}


def test_the_sandbox_keeps_the_machine_s_aws_settings_out_and_is_undone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the demo's sandbox no AWS setting of the machine reaches a client (a profile that
    does not exist, an endpoint, a region, a key), and afterwards the environment is the
    machine's again. (The whole demo under these settings: tests/test_packaging.py.)"""
    import boto3

    from scanner.cli.demo import sandbox

    for name, value in HOSTILE_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "missing-config"))
    before = dict(os.environ)
    with sandbox(tmp_path):
        assert not {"AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_REGION"} & set(os.environ)
        sts = boto3.client("sts")
        assert sts.meta.region_name == "us-east-1"
        assert sts.get_caller_identity()["Account"] == ACCOUNT  # moto, not the endpoint
        assert boto3.client("ec2").describe_instances()["Reservations"] == []
    assert dict(os.environ) == before


def test_demo_without_moto_says_how_to_get_it(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "sys.modules['moto'] = None  # as if the demo extra were not installed\n"
        "from scanner.cli.main import main\n"
        f"sys.argv = ['gpuaudit', 'demo', '--output-dir', {str(tmp_path / 'out')!r}]\n"
        "main()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2
    assert "pip install 'gpuaudit[demo]'" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "out").exists()


def test_demo_totals_are_the_reports_totals_each_capacity_counted_once() -> None:
    from scanner.cli.demo import totals

    def fail(kind: str, usd: float, counted: bool = True) -> dict[str, Any]:
        return {"status": "FAIL", "savings": {"kind": kind, "usd_month": usd, "counted": counted}}

    doc = {"summary": {"by_status": {"FAIL": 3}, "by_policy": {"SPOT-001": {"FAIL": 3}},
                       "resources": 3, "savings_usd_month": 100.0, "exposure_usd_month": 300.0},
           "findings": [fail("overspend_cap", 300.0),  # a launch template
                        fail("overspend_cap", 200.0, counted=False),  # its group: same capacity
                        fail("rightsize", 100.0)],
           "inputs": {}, "errors": []}
    line = next(x for x in totals(doc) if x.startswith("Estimated saving"))
    assert "$100.00/month" in line and "$300.00/month of overspend" in line, line
