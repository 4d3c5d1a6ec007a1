# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""EKS Container Insights GPU and Neuron metrics (namespace ``ContainerInsights``) read by the
live collector from moto (PutMetricData in batches of 100, a frozen window end): per-GPU series
where ``GpuDevice`` is published, else the node's average bounded by its GPU count; Neuron nodes
measured too, never left silent; the right-sizing verdicts that follow."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest

from scanner.aws.collect import collect
from scanner.aws.registry import DEFAULT_KINDS
from scanner.aws.targets import TargetSpec
from scanner.engine.evaluate import evaluate
from scanner.telemetry import COVERAGE, TELEMETRY
from tests.aws_helpers import AMI, REGION, aws, aws_env, client  # noqa: F401 - fixtures

END = dt.datetime(2026, 1, 15, tzinfo=dt.timezone.utc)
END_TEXT = "2026-01-15T00:00:00Z"
HOURS = 40
BATCH = 100
CLUSTER = "ml-prod"
RS = ("RS-001", "RS-002", "RS-003")


def _node_dims(iid: str, node: str) -> list[dict[str, str]]:
    return [{"Name": "ClusterName", "Value": CLUSTER}, {"Name": "InstanceId", "Value": iid},
            {"Name": "NodeName", "Value": node}]


def _points(metric: str, dims: list[dict[str, str]], value: Any) -> Iterator[dict[str, Any]]:
    for h in range(HOURS):
        stamp = END - dt.timedelta(hours=HOURS - h) + dt.timedelta(minutes=30)
        yield {"MetricName": metric, "Dimensions": dims, "Timestamp": stamp,
               "Value": float(value(h) if callable(value) else value)}


def _put(points: list[dict[str, Any]]) -> None:
    cw = client("cloudwatch")
    for i in range(0, len(points), BATCH):
        cw.put_metric_data(Namespace="ContainerInsights", MetricData=points[i:i + BATCH])


def _run(instance_type: str) -> str:
    return str(client("ec2").run_instances(ImageId=AMI, MinCount=1, MaxCount=1,
                                           InstanceType=instance_type)
               ["Instances"][0]["InstanceId"])


def test_container_insights_gpu_and_neuron_metrics(aws: None, monkeypatch: Any) -> None:
    monkeypatch.setenv("GPUAUDIT_TELEMETRY_END", END_TEXT)
    per_gpu, idle, bounded, inf2, trn1 = (_run("g5.12xlarge"), _run("g5.xlarge"),
                                          _run("g6.12xlarge"), _run("inf2.xlarge"),
                                          _run("trn1.2xlarge"))
    points: list[dict[str, Any]] = []
    node = "ip-10-0-5-21.ec2.internal"
    for g in range(4):  # the g5.12xlarge publishes each GPU (GpuDevice), one of them busy
        dims = [*_node_dims(per_gpu, node), {"Name": "GpuDevice", "Value": f"nvidia{g}"}]
        points += _points("node_gpu_utilization", dims, (lambda h: 55 + h % 20) if g == 2 else 0)
        points += _points("node_gpu_memory_used", dims, 17 * 2**30 if g == 2 else 2**20)
        points += _points("node_gpu_memory_total", dims, 23028 * 2**20)
    points += _points("node_gpu_utilization", _node_dims(per_gpu, node), lambda h: 14 + h % 5)
    # the g5.xlarge: only its node's figure, at 1-2 %: idle
    points += _points("node_gpu_utilization", _node_dims(idle, "ip-10-0-5-22.ec2.internal"),
                      lambda h: 1 + h % 2)
    points += _points("node_gpu_memory_used", _node_dims(idle, "ip-10-0-5-22.ec2.internal"),
                      300 * 2**20)
    # the g6.12xlarge (4 GPUs): a node average of 3 % may be one GPU at 12 %: not idle
    points += _points("node_gpu_utilization", _node_dims(bounded, "ip-10-0-5-23.ec2.internal"),
                      3)
    # the inf2.xlarge: its NeuronCores idle
    points += _points("node_neuroncore_utilization",
                      _node_dims(inf2, "ip-10-0-5-24.ec2.internal"), 0.4)
    # the trn1.2xlarge publishes each NeuronCore: core 1 trains at 60-80 %, core 0 idles
    for core in range(2):
        dims = [*_node_dims(trn1, "ip-10-0-5-25.ec2.internal"),
                {"Name": "NeuronCore", "Value": str(core)}]
        points += _points("node_neuroncore_utilization", dims,
                          (lambda h: 60 + h % 21) if core else 0)
        points += _points("node_neuroncore_memory_usage_total", dims,
                          9 * 2**30 if core else 0)
    # the cluster's own figure (ClusterName only): belongs to no instance, no notice either
    points += _points("node_gpu_utilization", [{"Name": "ClusterName", "Value": CLUSTER}], 9)
    _put(points)

    result = collect(TargetSpec(regions=(REGION,)), kinds=DEFAULT_KINDS | {TELEMETRY, COVERAGE})
    assert result.errors == []
    assert result.notices == []  # the Neuron instances are judged (RS-002), not only said
    records = {r.get("Target"): r for r in result.resources if r.kind == TELEMETRY}
    assert set(records) == {per_gpu, idle, bounded, inf2, trn1}

    gpus = records[per_gpu].get("Members")[0]["Gpus"]
    assert [g["Index"] for g in gpus] == ["nvidia0", "nvidia1", "nvidia2", "nvidia3"]
    assert gpus[2]["UtilMax"] == 74.0 and gpus[2]["MemUsedMaxMiB"] == 17408.0
    assert gpus[2]["MemTotalMiB"] == 23028.0 and {g["UtilMax"] for g in gpus[:2]} == {0.0}
    assert records[per_gpu].get("Source") == "container-insights"
    assert "NodeLevel" not in gpus[0]  # the node's average is not read beside its GPUs

    (one,) = records[idle].get("Members")[0]["Gpus"]
    assert (one["UtilMax"], one["MemUsedMaxMiB"], one["Hours"]) == (2.0, 300.0, HOURS)
    four = records[bounded].get("Members")[0]["Gpus"]
    assert len(four) == 4 and {g["UtilMax"] for g in four} == {12.0}
    assert all("NodeLevel" in g for g in four)
    neuron = records[inf2].get("Members")[0]["Gpus"]
    assert records[inf2].get("Source") == "container-insights-neuron"
    assert len(neuron) == 2 and {g["UtilMax"] for g in neuron} == {0.8}  # 2 cores x 0.4 %

    cores = records[trn1].get("Members")[0]["Gpus"]
    assert [(g["Index"], g["UtilMax"], g["MemUsedMaxMiB"]) for g in cores] == [
        ("0", 0.0, 0.0), ("1", 80.0, 9216.0)]

    coverage = next(r for r in result.resources if r.kind == COVERAGE)
    assert coverage.get("Instances") == 5

    findings = evaluate(result.resources, policy_ids=RS)
    status = {(f.policy_id, f.resource["id"]): f.status.value for f in findings}
    assert status[("RS-002", idle)] == "FAIL"  # idle on its node figure
    assert status[("RS-002", bounded)] == "PASS"  # the average does not prove every GPU idle
    assert status[("RS-002", per_gpu)] == "PASS"
    assert status[("RS-003", per_gpu)] == "PASS"
    # the idle inf2 (0.4 % on its node figure, 2 cores: at most 0.8 %) at its full price
    inf2_idle = next(f for f in findings if (f.policy_id, f.resource["id"]) == ("RS-002", inf2))
    assert inf2_idle.status.value == "FAIL" and inf2_idle.savings is not None
    assert inf2_idle.savings.usd_month == pytest.approx(0.7582 * 730, abs=0.01)
    assert "every Neuron device at or below 5%" in inf2_idle.message
    # the trn1 with one busy core is not idle; no move is computed between Neuron types
    assert status[("RS-002", trn1)] == "PASS" and status[("RS-003", trn1)] == "PASS"
    assert ("RS-001", trn1) not in status and ("RS-001", inf2) not in status


@pytest.mark.parametrize("with_cwagent", [True, False])
def test_cwagent_metrics_are_preferred_and_container_insights_only_asked_without(
        aws: None, monkeypatch: Any, with_cwagent: bool) -> None:
    monkeypatch.setenv("GPUAUDIT_TELEMETRY_END", END_TEXT)
    iid = _run("g5.xlarge")
    _put(list(_points("node_gpu_utilization", _node_dims(iid, "n"), 50)))
    if with_cwagent:
        dims = [{"Name": "InstanceId", "Value": iid}, {"Name": "index", "Value": "0"}]
        client("cloudwatch").put_metric_data(Namespace="CWAgent", MetricData=list(
            _points("nvidia_smi_utilization_gpu", dims, 3))[:BATCH])
    result = collect(TargetSpec(regions=(REGION,)), kinds=DEFAULT_KINDS | {TELEMETRY, COVERAGE})
    record = next(r for r in result.resources if r.kind == TELEMETRY)
    gpu = record.get("Members")[0]["Gpus"][0]
    assert (record.get("Source"), gpu["UtilMax"]) == (
        ("cloudwatch", 3.0) if with_cwagent else ("container-insights", 50.0))
    row = next(c for c in result.coverage if c["service"] == "cloudwatch")
    # CWAgent: 3 ListMetrics (+1 GetMetricData); Container Insights only when CWAgent had none
    assert row["calls"] == (4 if with_cwagent else 3 + 3 + 1)
