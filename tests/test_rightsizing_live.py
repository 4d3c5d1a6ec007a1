"""The right-sizing done-criterion, end to end: `gpuaudit audit` against a moto server seeded
with CloudWatch agent metrics (a lightly used p3.8xlarge, an idle g5.2xlarge, a g4dn.xlarge
without metrics), and `gpuaudit scan --utilization` on a Terraform directory with the same three
machines and the same hourly values (parity: the same findings and savings)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scanner.findings.schema import validate_report
from tests.live_server import MotoProcess, clean_aws_env
from tests.rightsizing_seed import END_TEXT, MACHINES, seed_cloudwatch, terraform, write_history

ROOT = Path(__file__).resolve().parents[1]
REGION = "us-east-1"
pytestmark = pytest.mark.slow


def _run(args: list[str], env: dict[str, str], out: Path) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run([sys.executable, "-m", "scanner", *args, "--format", "json", "-o",
                           str(out), "--deterministic", "--include-passed", "--quiet"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(out.read_text())
    assert validate_report(doc) == []
    return proc.returncode, doc


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    import boto3

    work = tmp_path_factory.mktemp("rightsizing")
    env = clean_aws_env(home=work, extra={"PYTHONPATH": str(ROOT),
                                          "GPUAUDIT_TELEMETRY_END": END_TEXT})
    with MotoProcess(work / "moto.log") as server:
        kw = {"region_name": REGION, "endpoint_url": server.url,
              "aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
        ec2 = boto3.client("ec2", **kw)
        ids = {}
        for name, itype in MACHINES.items():
            ids[name] = ec2.run_instances(ImageId="ami-12c6146b", MinCount=1, MaxCount=1,
                                          InstanceType=itype)["Instances"][0]["InstanceId"]
        seed_cloudwatch(boto3.client("cloudwatch", **kw),
                        {ids[n]: t for n, t in MACHINES.items()})
        live_rc, live = _run(["audit", "--endpoint-url", server.url, "--regions", REGION],
                             env, work / "live.json")
    stack = work / "stack"
    stack.mkdir()
    keys = terraform(stack)
    write_history(stack / "history.json", keys)
    iac_rc, iac = _run(["scan", str(stack), "--utilization", str(stack / "history.json")],
                       env, work / "iac.json")
    names = {iid: name for name, iid in ids.items()} | {
        f"aws_instance.{n}": n for n in MACHINES}
    return {"live": live, "iac": iac, "names": names, "rc": (live_rc, iac_rc)}


def _rs(doc: dict[str, Any], names: dict[str, str]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(f["policy_id"], names.get(f["resource"]["id"], f["resource"]["id"])): f
            for f in doc["findings"] if f["policy_id"].startswith("RS-")}


def test_live_audit_reports_the_three_findings(reports: dict[str, Any]) -> None:
    rs = _rs(reports["live"], reports["names"])
    failing = {k: f for k, f in rs.items() if f["status"] == "FAIL"}
    assert sorted(failing) == [("RS-001", "trainer"), ("RS-002", "idle"), ("RS-003", "dark")]
    oversized = failing[("RS-001", "trainer")]
    assert 2_000 < oversized["savings"]["usd_month"] < 12.24 * 730
    # one V100 of four used: a quarter of the p3.8xlarge's host (8 vCPU, 61 GiB) is needed,
    # which a g4dn.xlarge (4 vCPU, 16 GiB) does not have
    assert oversized["evidence"]["recommended"] == "g4dn.4xlarge"
    assert oversized["evidence"]["performance_risk"]["level"] <= 2
    assert oversized["evidence"]["demand"]["gpus_used"] == 1
    assert len(oversized["evidence"]["candidates"]) == 3
    assert oversized["evidence"]["hours_of_data"] == 72
    # the idle g5.2xlarge's full monthly price, and its basis says so
    idle = failing[("RS-002", "idle")]
    assert idle["savings"]["usd_month"] == pytest.approx(1.212 * 730, abs=0.01)
    assert idle["savings"]["basis"].startswith("1.212 $/h x 730 h x 1 instance")
    # RS-002 replaces RS-001 on the idle machine; nothing is judged on the dark one
    assert ("RS-001", "idle") not in rs
    assert ("RS-001", "dark") not in rs and ("RS-002", "dark") not in rs
    summary = reports["live"]["summary"]
    assert summary["savings_usd_month"] == pytest.approx(
        oversized["savings"]["usd_month"] + idle["savings"]["usd_month"], abs=0.02)
    assert reports["rc"][0] == 1  # RS-002 is high


def test_json_carries_statistics_not_series(reports: dict[str, Any]) -> None:
    f = _rs(reports["live"], reports["names"])[("RS-001", "trainer")]
    trend = f["evidence"]["utilization_trend"]
    assert len(trend["UtilMax"]) <= 56 and trend["HoursPerPoint"] == 6
    text = json.dumps(f)
    assert len(text) < 12_000  # 72 hourly points x 4 GPUs would not fit
    gpu0 = f["evidence"]["members"][0]["gpus"][0]
    assert gpu0["UtilMax"] == 25.0 and gpu0["MemUsedMaxMiB"] == 5000.0
    assert gpu0["MemTotalMiB"] == 16160.0


def test_scan_with_history_gives_the_same_findings_and_savings(reports: dict[str, Any]) -> None:
    live = _rs(reports["live"], reports["names"])
    iac = _rs(reports["iac"], reports["names"])
    assert {k: f["status"] for k, f in iac.items()} == {k: f["status"] for k, f in live.items()}
    for key, f in live.items():
        amount = (f["savings"] or {}).get("usd_month")
        assert (iac[key]["savings"] or {}).get("usd_month") == amount, key
        assert iac[key]["evidence"].get("recommended") == f["evidence"].get("recommended")
    assert reports["iac"]["summary"]["savings_usd_month"] == \
        reports["live"]["summary"]["savings_usd_month"]
