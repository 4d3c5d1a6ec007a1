# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""CWAgent NVIDIA metrics: discovery, the fewest GetMetricData calls, local aggregation, and the
live collector against moto (frozen window end), including a denied read."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from scanner.aws.collect import collect
from scanner.aws.registry import DEFAULT_KINDS
from scanner.aws.targets import TargetSpec
from scanner.engine.evaluate import evaluate
from scanner.telemetry import COVERAGE, TELEMETRY
from scanner.telemetry.aggregate import Window
from scanner.telemetry.cloudwatch import (
    MAX_POINTS,
    MAX_QUERIES,
    Discovery,
    Query,
    batches,
    collect_usage,
    minimum_calls,
    plan_queries,
)
from tests.aws_helpers import (  # noqa: F401 - fixtures
    AMI,
    REGION,
    Fault,
    aws,
    aws_env,
    client,
    declared_only,
    query_error,
    session_maker,
)
from tests.rightsizing_seed import END, END_TEXT, seed_cloudwatch

RS_KINDS = DEFAULT_KINDS | {TELEMETRY, COVERAGE}
WINDOW = Window(int(END.timestamp()) - 14 * 86400, int(END.timestamp()))


def _queries(gpus: int, *, hourly: int = 3, small: int = 1, hours: int = 336) -> list[Query]:
    out = []
    for g in range(gpus):
        for k in range(hourly + small):
            points = hours if k < hourly else 1
            out.append(Query(f"q{len(out)}", f"i-{g // 4}", str(g % 4), "m", "Average", 3600,
                             (), points))
    return out


@pytest.mark.parametrize(("gpus", "hours"), [(1, 336), (4000, 336), (333, 336), (700, 24),
                                             (10, 2000), (1200, 1)])
def test_batches_meet_the_lower_bound_and_the_limits(gpus: int, hours: int) -> None:
    queries = _queries(gpus, hours=hours)
    calls = batches(queries)
    assert len(calls) == minimum_calls(queries)
    assert sorted(q.id for c in calls for q in c) == sorted(q.id for q in queries)
    for call in calls:
        assert len(call) <= MAX_QUERIES
        assert sum(q.points for q in call) <= MAX_POINTS


def test_the_benchmark_size_needs_41_calls() -> None:
    # 1,000 instances x 4 GPUs x (3 hourly series of 336 points + 1 single point)
    queries = _queries(4000)
    assert minimum_calls(queries) == 41 == len(batches(queries))


class FakeReader:
    """Answers ListMetrics from a list and GetMetricData in pages of ``page`` results."""

    def __init__(self, metrics: dict[str, list[dict[str, Any]]], page: int = 2) -> None:
        self.metrics = metrics
        self.page = page
        self.calls = 0

    def list_metrics(self, metric_name: str, namespace: str = "CWAgent") -> list[dict[str, Any]]:
        return self.metrics.get(metric_name, [])

    def get_metric_data(self, queries: list[dict[str, Any]], start: dt.datetime,
                        end: dt.datetime) -> list[dict[str, Any]]:
        self.calls += 1
        out = []
        for q in queries:
            times = [start + dt.timedelta(hours=h) for h in range(10)]
            values = [float(h) for h in range(10)]
            # a query's points split over two pages (NextToken), as AWS may do
            out.append({"Id": q["Id"], "Timestamps": times[:5], "Values": values[:5]})
            out.append({"Id": q["Id"], "Timestamps": times[5:], "Values": values[5:]})
        return out


def _metric(name: str, **dims: str) -> dict[str, Any]:
    return {"Namespace": "CWAgent", "MetricName": name,
            "Dimensions": [{"Name": k, "Value": v} for k, v in dims.items()]}


def test_discovery_groups_by_instance_and_index_never_host() -> None:
    util = "nvidia_smi_utilization_gpu"
    reader = FakeReader({util: [
        _metric(util, InstanceId="i-1", index="0", host="a"),
        _metric(util, InstanceId="i-1", index="0", host="a"),  # listed twice
        _metric(util, host="a", index="1"),  # no InstanceId: cannot be tied to one
        _metric(util, InstanceId="i-9", index="0"),  # not an instance of this audit
    ]})
    got = collect_usage(reader, ["i-1"], WINDOW, 14)
    assert got is not None
    assert got.series == 2 and got.without_instance == 1  # Average + Maximum of one GPU
    record = got.records["i-1"]
    gpu = record["Members"][0]["Gpus"][0]
    assert gpu["Hours"] == 10 and gpu["UtilMax"] == 9.0  # both pages of each query
    assert gpu["MemUsedMaxMiB"] is None and gpu["MemTotalMiB"] is None
    assert reader.calls == 1


def test_a_gpu_under_two_dimension_sets_is_fetched_under_both_and_merged() -> None:
    found = Discovery({("i-1", "0"): {"nvidia_smi_utilization_gpu": [
        (("InstanceId", "i-1"), ("index", "0")),
        (("InstanceId", "i-1"), ("host", "b"), ("index", "0"))]}})
    queries = plan_queries(found, WINDOW)
    assert len(queries) == 4  # Average and Maximum under each dimension set


def test_collector_reads_moto_with_a_frozen_window(aws: None, monkeypatch: Any) -> None:
    monkeypatch.setenv("GPUAUDIT_TELEMETRY_END", END_TEXT)
    ec2 = client("ec2")
    p3 = ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1,
                           InstanceType="p3.8xlarge")["Instances"][0]["InstanceId"]
    seed_cloudwatch(client("cloudwatch"), {p3: "p3.8xlarge"})
    result = collect(TargetSpec(regions=(REGION,)), kinds=RS_KINDS)
    assert result.errors == []
    record = next(r for r in result.resources if r.kind == TELEMETRY)
    assert record.get("Target") == p3 and record.get("Hours") == 72
    assert record.get("End") == END_TEXT
    gpus = record.get("Members")[0]["Gpus"]
    assert [g["Index"] for g in gpus] == ["0", "1", "2", "3"]
    assert (gpus[0]["UtilMax"], gpus[0]["MemUsedMaxMiB"], gpus[0]["MemTotalMiB"]) == \
        (25.0, 5000.0, 16160.0)
    coverage = next(r for r in result.resources if r.kind == COVERAGE)
    assert coverage.get("GetMetricDataCalls") == coverage.get("MinimumCalls") == 1
    row = next(c for c in result.coverage if c["service"] == "cloudwatch")
    assert row["status"] == "ok" and row["calls"] == 4  # 3 ListMetrics + 1 GetMetricData


def test_the_collector_runs_only_when_utilization_is_wanted(aws: None) -> None:
    ec2 = client("ec2")
    ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1, InstanceType="g5.xlarge")
    result = collect(TargetSpec(regions=(REGION,)), kinds=DEFAULT_KINDS)
    assert not [c for c in result.coverage if c["service"] == "cloudwatch"]
    assert not [r for r in result.resources if r.kind in (TELEMETRY, COVERAGE)]


def test_denied_metrics_are_an_error_never_no_telemetry(aws: None) -> None:
    ec2 = client("ec2")
    ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1, InstanceType="g5.xlarge")
    fault = Fault(403, query_error("AccessDenied", "not authorized to cloudwatch:ListMetrics"))
    result = collect(TargetSpec(regions=(REGION,)), kinds=RS_KINDS,
                     session_maker=session_maker({"before-send.cloudwatch.ListMetrics": fault}))
    assert [e.path.rsplit("/", 1)[-1] for e in result.errors] == ["cloudwatch:ListMetrics"]
    assert not [r for r in result.resources if r.kind in (TELEMETRY, COVERAGE)]
    findings = evaluate(result.resources, policy_ids=["RS-001", "RS-002", "RS-003"],
                        gaps=result.gaps)
    assert {(f.policy_id, f.status.value) for f in findings} == {
        ("RS-001", "ERROR"), ("RS-002", "ERROR"), ("RS-003", "ERROR")}
