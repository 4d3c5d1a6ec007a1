"""Terraform input variables that were not read: no verdict rests on them.

``terraform plan -var-file=nope.tfvars`` (missing, or not parseable), ``-var nosuch=1`` (an
undeclared variable) and ``-var flag=maybe`` (a value that does not convert to the declared
type) all make terraform refuse to plan. Every verdict of such a root module is ERROR naming
the input, the scan exits 2, and the rest of the run (other sources) is still reported.
The fixture's root module encrypts EBS only when the environment's tfvars say so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scanner.findings.schema import validate_report

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "tf_var_inputs"
ENVS = FIXTURE / "gpu" / "envs"


def scan(*args: str) -> tuple[int, dict]:
    proc = subprocess.run(
        [sys.executable, "-m", "scanner", "scan", str(FIXTURE), *args, "--format", "json",
         "--deterministic", "--include-passed"], cwd=ROOT, capture_output=True, text=True,
        timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout, proc.stderr
    assert "Traceback" not in proc.stderr
    doc = json.loads(proc.stdout)
    assert validate_report(doc) == []
    return proc.returncode, doc


def terraform_findings(doc: dict) -> dict[tuple[str, str], dict]:
    return {(f["policy_id"], f["resource"]["id"]): f for f in doc["findings"]
            if f["resource"]["id"].startswith("aws_")}


def cfn_statuses(doc: dict) -> dict[tuple[str, str], str]:
    return {(f["policy_id"], f["resource"]["id"]): f["status"] for f in doc["findings"]
            if not f["resource"]["id"].startswith("aws_")}


def test_the_var_file_decides_the_verdicts() -> None:
    _, doc = scan()
    assert terraform_findings(doc)[("EBS-002", "aws_ebs_encryption_by_default.this")][
        "status"] == "FAIL"
    _, doc = scan("--var-file", str(ENVS / "prod.tfvars"))
    got = terraform_findings(doc)
    assert got[("EBS-002", "aws_ebs_encryption_by_default.this")]["status"] == "PASS"
    assert got[("EBS-001", "aws_instance.trainer")]["status"] == "PASS"
    assert doc["errors"] == []


@pytest.mark.parametrize(("args", "named", "line"), [
    (("--var-file", str(ENVS / "nope.tfvars")), "nope.tfvars", None),
    (("--var-file", str(ENVS / "broken.tfvars")), "broken.tfvars", 2),
    (("--var", "nosuch=1"), "--var nosuch", None),
    (("--var", "ebs_encryption=maybe"), "var.ebs_encryption", None),
    (("--var-file", str(ENVS / "prod.tfvars"), "--var-file", str(ENVS / "nope.tfvars")),
     "nope.tfvars", None),
])
def test_an_input_not_read_leaves_no_verdict_on_its_root(
        args: tuple[str, ...], named: str, line: int | None) -> None:
    code, doc = scan(*args)
    assert code == 2
    got = terraform_findings(doc)
    assert set(got) >= {("EBS-001", "aws_instance.trainer"),
                        ("EBS-002", "aws_ebs_encryption_by_default.this")}
    for key, finding in got.items():
        assert finding["status"] == "ERROR", key  # never PASS or FAIL
        assert named in finding["message"], finding["message"]
    errors = [e for e in doc["errors"] if named in e["path"] + e["reason"]]
    assert errors, doc["errors"]
    if line is not None:
        assert errors[0]["line"] == line
    # the CloudFormation template in the same run is still judged
    cfn = cfn_statuses(doc)
    assert cfn[("EBS-001", "ScratchVolume")] == "FAIL"
    assert "ERROR" not in cfn.values()


def test_a_declared_var_is_used() -> None:
    _, doc = scan("--var", "ebs_encryption=true")
    got = terraform_findings(doc)
    assert got[("EBS-002", "aws_ebs_encryption_by_default.this")]["status"] == "PASS"
    assert not [e for e in doc["errors"] if "--var" in e["path"]]
