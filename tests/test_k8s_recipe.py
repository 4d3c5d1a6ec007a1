"""The Kubernetes Indexed Job recipe (examples/ci/kubernetes/gpuaudit-nightly.yaml): its
manifests say what the script needs, and the pods' script, run as parallel local processes with
the JOB_COMPLETION_INDEX Kubernetes gives each pod, audits a moto server in shards that pod 0
merges into the report an unsharded audit gives; a missing shard fails the merge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml

from tests.live_server import MotoProcess, clean_aws_env

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "examples" / "ci" / "kubernetes" / "gpuaudit-nightly.yaml"
REGIONS = ("us-east-1", "us-west-2", "eu-west-1", "ap-southeast-2")


def _docs() -> dict[str, dict[str, Any]]:
    return {d["kind"]: d for d in yaml.safe_load_all(RECIPE.read_text(encoding="utf-8"))}


def test_the_manifests_are_an_indexed_job_with_its_merge() -> None:
    docs = _docs()
    assert set(docs) == {"ServiceAccount", "ConfigMap", "PersistentVolumeClaim", "CronJob"}
    config = docs["ConfigMap"]["data"]
    job = docs["CronJob"]["spec"]["jobTemplate"]["spec"]
    shards = int(config["SHARDS"])
    assert job["completionMode"] == "Indexed"
    assert job["completions"] == job["parallelism"] == shards  # pod 0 waits for the others
    pod = job["template"]["spec"]
    assert pod["serviceAccountName"] == docs["ServiceAccount"]["metadata"]["name"]
    assert "eks.amazonaws.com/role-arn" in docs["ServiceAccount"]["metadata"]["annotations"]
    (container,) = pod["containers"]
    env = {e["name"]: e for e in container["env"]}
    assert env["JOB_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.labels['job-name']"
    config_name = docs["ConfigMap"]["metadata"]["name"]
    assert container["envFrom"] == [{"configMapRef": {"name": config_name}}]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert mounts["reports"] == env["REPORTS"]["value"]
    assert "bash /etc/gpuaudit/shard.sh" in container["args"][0]
    assert mounts["script"] == "/etc/gpuaudit"
    assert docs["PersistentVolumeClaim"]["spec"]["accessModes"] == ["ReadWriteMany"]
    check = subprocess.run(["bash", "-n"], input=config["shard.sh"], text=True,
                           capture_output=True)
    assert check.returncode == 0, check.stderr


@pytest.fixture(scope="module")
def moto(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with MotoProcess(tmp_path_factory.mktemp("moto") / "moto.log") as server:
        for region in ("us-east-1", "eu-west-1"):
            ec2 = boto3.client("ec2", region_name=region, endpoint_url=server.url,
                               aws_access_key_id="testing", aws_secret_access_key="testing")
            ec2.create_volume(AvailabilityZone=f"{region}a", Size=100, Encrypted=False)
            ec2.create_volume(AvailabilityZone=f"{region}b", Size=10, Encrypted=True)
        yield server


Pods = dict[int, subprocess.CompletedProcess[str]]


def _pods(tmp_path: Path, moto: Any, indices: list[int], *, shards: int = 4,
          wait: int = 120, job: str = "gpuaudit-nightly-1") -> Pods:
    script = tmp_path / "shard.sh"
    script.write_text(_docs()["ConfigMap"]["data"]["shard.sh"])
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "gpuaudit"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m scanner "$@"\n')
    shim.chmod(0o755)
    env = clean_aws_env(home=tmp_path, extra={
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT),
        "AWS_DEFAULT_REGION": "us-east-1", "REPORTS": str(tmp_path / "reports"),
        "JOB_NAME": job, "SHARDS": str(shards), "MERGE_WAIT_SECONDS": str(wait),
        "GPUAUDIT_TARGET": f"--endpoint-url {moto.url} --deterministic",
        "GPUAUDIT_REGIONS": ",".join(REGIONS), "GPUAUDIT_TELEMETRY_END": "2026-01-15T00:00:00Z"})
    procs = {i: subprocess.Popen(["bash", str(script)], env={**env, "JOB_COMPLETION_INDEX": str(i)},
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in indices}
    out = {}
    for i, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=300)
        out[i] = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    return out


def _verdicts(doc: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return sorted((f["policy_id"], f["resource"]["region"] or "", f["resource"]["id"], f["status"])
                  for f in doc["findings"])


def test_shards_as_parallel_pods_merge_into_the_whole_audit(tmp_path: Path, moto: Any) -> None:
    pods = _pods(tmp_path, moto, [0, 1, 2, 3])
    assert [pods[i].returncode for i in (1, 2, 3)] == [0, 0, 0], [p.stderr for p in pods.values()]
    assert pods[0].returncode == 1, pods[0].stderr  # an unencrypted volume: FAIL high
    run = tmp_path / "reports" / "gpuaudit-nightly-1"
    shard_files = sorted(p.name for p in run.glob("shard-*.json"))
    assert shard_files == [f"shard-{k}.json" for k in (1, 2, 3, 4)]
    merged = json.loads((run / "report" / "report.json").read_text())
    assert {p.name for p in (run / "report").iterdir()} == {"report.json", "report.html",
                                                            "report.sarif"}
    whole = subprocess.run(
        [sys.executable, "-m", "scanner", "audit", "--endpoint-url", moto.url, "--regions",
         ",".join(REGIONS), "--format", "json", "--deterministic", "--fail-on", "none", "--quiet"],
        env=clean_aws_env(home=tmp_path, extra={"PYTHONPATH": str(ROOT),
                                                "AWS_DEFAULT_REGION": "us-east-1",
                                                "GPUAUDIT_TELEMETRY_END": "2026-01-15T00:00:00Z"}),
        capture_output=True, text=True, timeout=300)
    assert whole.returncode == 0, whole.stderr
    single = json.loads(whole.stdout)
    assert _verdicts(merged) == _verdicts(single)
    assert [v for v in _verdicts(merged) if v[0] == "EBS-001" and v[3] == "FAIL"] != []
    assert {r for _, r, _, _ in _verdicts(merged)} >= set(REGIONS)


def test_a_missing_shard_fails_the_merge(tmp_path: Path, moto: Any) -> None:
    pods = _pods(tmp_path, moto, [0, 1, 2], wait=1, job="gpuaudit-nightly-2")
    assert pods[0].returncode == 2
    assert "only 3 of 4 shard reports" in pods[0].stderr
