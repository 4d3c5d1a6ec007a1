"""`gpuaudit report send-securityhub` against a moto server's Security Hub: batches of 100,
idempotent (stable Ids), PASS sent as PASSED and archived, and the only write gpuaudit makes."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from scanner.aws.clients import check_declarable
from scanner.aws.securityhub import SendRefused, client
from tests.live_server import MotoProcess, clean_aws_env

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "scanner" / "cli" / "demo" / "examples"
REGION = "eu-west-1"
MOTO_ACCOUNT = "123456789012"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def moto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MotoProcess]:
    with MotoProcess(tmp_path_factory.mktemp("moto") / "moto.log") as server:
        yield server


@pytest.fixture()
def hub(moto: MotoProcess) -> Iterator[Any]:
    moto.reset()
    session = boto3.session.Session(aws_access_key_id="testing",
                                    aws_secret_access_key="testing", region_name=REGION)
    yield session.client("securityhub", endpoint_url=moto.url)
    moto.reset()


@pytest.fixture(scope="module")
def big_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled examples' report (PASS listed), its findings repeated to 250 with distinct
    fingerprints: three batches."""
    out = tmp_path_factory.mktemp("scan")
    run = subprocess.run([sys.executable, "-m", "scanner", "scan", str(EXAMPLES), "--format",
                          "json", "-o", str(out / "one.json"), "--quiet", "--include-passed",
                          "--fail-on", "none"], capture_output=True, text=True, cwd=ROOT,
                         timeout=300, check=False, env=clean_aws_env())
    assert run.returncode == 0, run.stderr
    doc = json.loads((out / "one.json").read_text())
    base = doc["findings"]
    assert any(f["status"] == "PASS" for f in base) and any(f["status"] == "FAIL" for f in base)
    findings = []
    for i in range(250):
        f = copy.deepcopy(base[i % len(base)])
        f["id"] = f"{f['id']}-{i}"
        findings.append(f)
    doc["findings"] = findings
    path = out / "report.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _send(report: Path, moto: MotoProcess) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scanner", "report", "send-securityhub", str(report), "--region",
         REGION, "--endpoint-url", moto.url], capture_output=True, text=True, cwd=ROOT,
        timeout=300, check=False, env=clean_aws_env())


def _all(hub: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for page in hub.get_paginator("get_findings").paginate():
        out += page["Findings"]
    return out


def test_import_twice_leaves_one_finding_per_finding(big_report: Path, moto: MotoProcess,
                                                     hub: Any) -> None:
    first = _send(big_report, moto)
    assert first.returncode == 0, first.stderr
    assert "250 finding(s) imported, 0 failed" in first.stdout
    assert [ln for ln in first.stderr.splitlines() if "sent" in ln] == [
        "gpuaudit: sent 100/250", "gpuaudit: sent 200/250", "gpuaudit: sent 250/250"]
    after_one = _all(hub)
    assert len(after_one) == 250
    second = _send(big_report, moto)
    assert second.returncode == 0, second.stderr
    after_two = _all(hub)
    assert len(after_two) == 250  # updated in place: the Ids are stable
    assert {f["Id"] for f in after_two} == {f["Id"] for f in after_one}
    doc = json.loads(big_report.read_text())
    by_id = {f"gpuaudit/{f['policy_id']}/{f['id']}": f for f in doc["findings"]}
    for found in after_two:
        mine = by_id[found["Id"]]
        assert found["AwsAccountId"] == MOTO_ACCOUNT  # the caller's account (STS)
        assert found["ProductArn"] == (f"arn:aws:securityhub:{REGION}:{MOTO_ACCOUNT}:product/"
                                       f"{MOTO_ACCOUNT}/default")
        assert found["GeneratorId"] == mine["policy_id"]
        if mine["status"] == "PASS":
            assert found["Compliance"]["Status"] == "PASSED"
            assert found["RecordState"] == "ARCHIVED"
            assert found["Workflow"]["Status"] == "RESOLVED"
        elif mine["status"] == "FAIL":
            assert found["Compliance"]["Status"] == "FAILED"
            assert found["RecordState"] == "ACTIVE"


def test_a_fixed_finding_is_resolved_on_the_next_send(big_report: Path, moto: MotoProcess,
                                                      hub: Any, tmp_path: Path) -> None:
    doc = json.loads(big_report.read_text())
    failing = next(f for f in doc["findings"] if f["status"] == "FAIL")
    doc["findings"] = [failing]
    doc["summary"]["by_status"] = {"FAIL": 1}
    one = tmp_path / "one.json"
    one.write_text(json.dumps(doc), encoding="utf-8")
    assert _send(one, moto).returncode == 0
    fixed = copy.deepcopy(doc)
    fixed["findings"][0]["status"] = "PASS"
    fixed["summary"]["by_status"] = {"PASS": 1}
    later = tmp_path / "later.json"
    later.write_text(json.dumps(fixed), encoding="utf-8")
    assert _send(later, moto).returncode == 0
    (found,) = _all(hub)
    assert found["Compliance"]["Status"] == "PASSED" and found["RecordState"] == "ARCHIVED"


def test_the_send_client_makes_only_its_one_write(moto: MotoProcess) -> None:
    session = boto3.session.Session(aws_access_key_id="testing",
                                    aws_secret_access_key="testing", region_name=REGION)
    hub = client("securityhub", region=REGION, endpoint_url=moto.url, session=session)
    with pytest.raises(SendRefused, match="securityhub:GetFindings is not allowed"):
        hub.get_findings()
    with pytest.raises(SendRefused):
        hub.delete_insight(InsightArn="arn:aws:securityhub:eu-west-1:1:insight/1")
    # the audit's read-only factory can never be given the write
    with pytest.raises(ValueError, match="not a read operation"):
        check_declarable("securityhub", "BatchImportFindings")


def test_send_errors_are_clear(tmp_path: Path, moto: MotoProcess) -> None:
    broken = tmp_path / "r.json"
    broken.write_text("[]", encoding="utf-8")
    run = _send(broken, moto)
    assert run.returncode == 2 and str(broken) in run.stderr and "Traceback" not in run.stderr


def test_iam_policy_send_is_separate_from_the_audits() -> None:
    def cli(*args: str) -> str:
        run = subprocess.run([sys.executable, "-m", "scanner", "iam-policy", *args],
                             capture_output=True, text=True, cwd=ROOT, timeout=120, check=True)
        return run.stdout

    send = json.loads(cli("--send"))
    assert [a for s in send["Statement"] for a in s["Action"]] == [
        "securityhub:BatchImportFindings"]
    audit = json.loads(cli())
    actions = [a for s in audit["Statement"] for a in s["Action"]]
    assert not any(a.startswith("securityhub:") for a in actions)
