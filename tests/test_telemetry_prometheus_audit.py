"""``audit --prometheus-url``: a live audit (``gpuaudit audit`` as a subprocess against a moto
server in its own process) reads the DCGM utilization of the GPU instances it found from a real
Prometheus server (backfilled with ``promtool tsdb create-blocks-from openmetrics``), matched by
instance id (an ``instance_id`` label from EC2 service discovery), private DNS name
(dcgm-exporter's ``Hostname``) or private IP (a scrape target ``instance``, port aside), beside
CloudWatch: the busier of two sources is judged, an unreachable server leaves the instances
UNKNOWN, never "no telemetry"."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.live_server import FAKE_CREDENTIALS, MotoProcess, clean_aws_env
from tests.test_telemetry_prometheus import _binaries, _free_port

ROOT = Path(__file__).resolve().parents[1]
END = 1768435200  # 2026-01-15T00:00:00Z
END_TEXT = "2026-01-15T00:00:00Z"
HOURS = 48
STEP = 900
REGION = "us-east-1"
AMI = "ami-12c6146b"


def _client(service: str, url: str) -> Any:
    import boto3

    return boto3.client(service, region_name=REGION, endpoint_url=url,
                        aws_access_key_id=FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
                        aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
                        aws_session_token=FAKE_CREDENTIALS["AWS_SESSION_TOKEN"])


def _util_series(labels: str, util: Any) -> list[str]:
    return [f"DCGM_FI_DEV_GPU_UTIL{{{labels}}} {util(t):g} {t}"
            for t in range(END - HOURS * 3600, END, STEP)]


def _labels(n: int, **extra: str) -> str:
    base = {"gpu": "0", "UUID": f"GPU-5e2d7a1c-0b3f-4c6d-8e9a-{n:012x}", "device": "nvidia0",
            "modelName": "NVIDIA A10G", **extra}
    return ",".join(f'{k}="{v}"' for k, v in base.items())


def _prometheus(work: Path, exposition: str) -> tuple[subprocess.Popen[bytes], str]:
    prometheus, promtool = _binaries()
    source = work / "dcgm.om"
    source.write_text(exposition)
    tsdb = work / "tsdb"
    made = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(source),
                           str(tsdb)], capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stdout + made.stderr
    config = work / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1h\nscrape_configs: []\n")
    port = _free_port()
    log = (work / "prometheus.log").open("wb")
    proc = subprocess.Popen([prometheus, f"--config.file={config}", f"--storage.tsdb.path={tsdb}",
                             f"--web.listen-address=127.0.0.1:{port}",
                             "--storage.tsdb.retention.time=100y"],
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(url + "/-/ready", timeout=5) as answer:
                if answer.status == 200:
                    return proc, url
        except OSError:
            pass
        assert proc.poll() is None, (work / "prometheus.log").read_text()
        assert time.monotonic() < deadline, "prometheus not ready in 120 s"
        time.sleep(0.5)


def _put_cwagent(url: str, iid: str, util: float) -> None:
    dims = [{"Name": "InstanceId", "Value": iid}, {"Name": "index", "Value": "0"},
            {"Name": "name", "Value": "NVIDIA A10G"}, {"Name": "host", "Value": "ip-cw"}]
    points = []
    for h in range(HOURS):
        stamp = END - (HOURS - h) * 3600 + 1800
        for metric, value in (("nvidia_smi_utilization_gpu", util),
                              ("nvidia_smi_memory_used", 5000.0),
                              ("nvidia_smi_memory_total", 23028.0)):
            points.append({"MetricName": metric, "Dimensions": dims, "Timestamp": stamp,
                           "Value": value})
    cw = _client("cloudwatch", url)
    for i in range(0, len(points), 100):
        cw.put_metric_data(Namespace="CWAgent", MetricData=points[i:i + 100])


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("audit-prometheus")
    with MotoProcess(work / "moto.log") as moto:
        ec2 = _client("ec2", moto.url)
        names = ("by_dns", "by_id", "by_ip", "both", "silent", "copies")
        made = ec2.run_instances(ImageId=AMI, MinCount=len(names), MaxCount=len(names),
                                 InstanceType="g5.xlarge")["Instances"]
        inst = dict(zip(names, made, strict=True))
        ids = {n: i["InstanceId"] for n, i in inst.items()}
        idle = lambda t: 1.0 + (t // 3600) % 3  # noqa: E731 - 1-3 %, idle
        lines = [
            *_util_series(_labels(1, Hostname=inst["by_dns"]["PrivateDnsName"]), idle),
            *_util_series(_labels(2, Hostname="gpu-node-b", instance_id=ids["by_id"]),
                          lambda t: 60.0 + (t // 3600) % 7),
            *_util_series(_labels(3, instance=f"{inst['by_ip']['PrivateIpAddress']}:9400",
                                  job="dcgm"), idle),
            *_util_series(_labels(4, Hostname=inst["both"]["PrivateDnsName"]), idle),
            *_util_series(_labels(5, Hostname="ip-10-9-9-9.ec2.internal"), idle),
            # --kubernetes-virtual-gpus: the device's 1-3 % copied to three pods (not 3-9 %)
            *(line for v, pod in enumerate(("whisper-infer-5f7b9c-2kq8d", "embed-api-6d4c8b-x9r4t",
                                            "thumbnailer-7b9f6d-p2m5n"))
              for line in _util_series(_labels(6, Hostname=inst["copies"]["PrivateDnsName"],
                                               vgpu=str(v), namespace="inference", pod=pod),
                                       idle)),
        ]
        exposition = "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n" + "\n".join(lines) + "\n# EOF\n"
        _put_cwagent(moto.url, ids["both"], 50.0)  # CloudWatch says busy, DCGM idle
        proc, url = _prometheus(work, exposition)
        try:
            yield {"moto": moto.url, "prometheus": url, "ids": ids, "work": work}
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


def _audit(fleet: dict[str, Any], prometheus_url: str, name: str) -> dict[str, Any]:
    out = fleet["work"] / f"{name}.json"
    env = clean_aws_env(extra={"GPUAUDIT_TELEMETRY_END": END_TEXT, "PYTHONPATH": str(ROOT)})
    run = subprocess.run([sys.executable, "-m", "scanner", "audit", "--endpoint-url",
                          fleet["moto"], "--region", REGION, "--prometheus-url", prometheus_url,
                          "--policy", "RS-001", "--policy", "RS-002", "--policy", "RS-003",
                          "--format", "json", "-o", str(out), "--quiet"],
                         capture_output=True, text=True, timeout=600, cwd=fleet["work"], env=env,
                         stdin=subprocess.DEVNULL)
    assert out.exists(), run.stdout + run.stderr
    report = json.loads(out.read_text())
    report["exit"] = run.returncode
    return report


def _verdicts(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(f["policy_id"], f["resource"]["id"]): f for f in report["findings"]}


def test_rs_verdicts_from_prometheus_beside_cloudwatch(fleet: dict[str, Any]) -> None:
    report = _audit(fleet, fleet["prometheus"], "ok")
    ids = fleet["ids"]
    assert report["errors"] == []
    found = _verdicts(report)
    status = {(p, i): found[(p, i)]["status"] for p, i in found}
    # idle in DCGM, matched by DNS name / by IP (port aside); the pods' copies counted once
    for name in ("by_dns", "by_ip", "copies"):
        idle = found[("RS-002", ids[name])]
        assert idle["status"] == "FAIL" and idle["savings"]["usd_month"] == 734.38
        assert ("RS-003", ids[name]) not in status  # measured: RS-003 passes (not shown)
    # by an instance_id label: busy, so no idle saving
    assert ("RS-002", ids["by_id"]) not in status  # PASS is not in the JSON findings
    # CloudWatch says 50 %, DCGM 1-3 %: the busier is judged, never an idle saving
    assert ("RS-002", ids["both"]) not in status
    assert status[("RS-003", ids["silent"])] == "FAIL"  # measured by neither
    assert report["summary"]["savings_usd_month"] == pytest.approx(3 * 734.38, abs=0.01)
    notices = [n["message"] for n in report["notices"]]
    assert f"{ids['both']}: measured by cloudwatch and Prometheus; the busier, cloudwatch, " \
           "is judged" in notices
    assert any("1 Prometheus host(s) match no running GPU instance" in n
               and "ip-10-9-9-9.ec2.internal" in n for n in notices)


def test_an_unreachable_prometheus_is_an_error_and_unknown_not_unmeasured(
        fleet: dict[str, Any]) -> None:
    report = _audit(fleet, f"http://127.0.0.1:{_free_port()}", "down")
    ids = fleet["ids"]
    assert report["exit"] == 2 and len(report["errors"]) == 1
    assert "cannot read Prometheus" in report["errors"][0]["reason"]
    found = _verdicts(report)
    for name in ("by_dns", "by_ip", "by_id", "silent"):
        assert found[("RS-003", ids[name])]["status"] == "UNKNOWN"
        assert found[("RS-002", ids[name])]["status"] == "UNKNOWN"
        assert "could not be read" in found[("RS-002", ids[name])]["message"]
    # CloudWatch measured it (busy): still judged on that
    assert ("RS-002", ids["both"]) not in found and ("RS-003", ids["both"]) not in found
    assert report["summary"]["savings_usd_month"] == 0.0
