"""CloudWatch metrics exported as a Metric Stream's JSON lines (what Firehose writes to S3): the
Container Insights and CWAgent GPU metrics read by the live rules, node averages bounded, the
rest skipped, bad records refused with the line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scanner.telemetry.files import TelemetryFileError, parse_file
from scanner.telemetry.history import load_utilization

END = 1768435200  # 2026-01-15T00:00:00Z
HOURS = 36


def record(namespace: str, metric: str, dims: dict[str, str], t: int, mean: float,
           top: float | None = None, unit: str = "Percent") -> str:
    return json.dumps({
        "metric_stream_name": "gpu-fleet-stream", "account_id": "123456789012",
        "region": "us-east-1", "namespace": namespace, "metric_name": metric,
        "dimensions": dims, "timestamp": t * 1000,
        "value": {"max": top if top is not None else mean, "min": mean / 2,
                  "sum": mean * 4, "count": 4.0}, "unit": unit})


def stream() -> str:
    lines = []
    node = {"ClusterName": "ml-prod", "InstanceId": "i-0aaa", "NodeName": "ip-10-0-6-1"}
    typed = {"ClusterName": "ml-prod", "InstanceId": "i-0bbb", "NodeName": "ip-10-0-6-2",
             "InstanceType": "g6.12xlarge"}
    untyped = {"ClusterName": "ml-prod", "InstanceId": "i-0ccc", "NodeName": "ip-10-0-6-3"}
    for h in range(HOURS):
        t = END - (HOURS - h) * 3600 + 60
        for g in range(2):
            dims = node | {"GpuDevice": f"nvidia{g}"}
            lines.append(record("ContainerInsights", "node_gpu_utilization", dims, t,
                                40.0 if g else 0.0, 70.0 if g else 0.0))
            lines.append(record("ContainerInsights", "node_gpu_memory_used", dims, t,
                                8 * 2**30, unit="Bytes"))
        lines.append(record("ContainerInsights", "node_gpu_utilization", node, t, 20.0))
        lines.append(record("ContainerInsights", "node_gpu_utilization", typed, t, 3.0))
        lines.append(record("ContainerInsights", "node_gpu_utilization", untyped, t,
                            0.0 if h < HOURS - 1 else 1.0))
        lines.append(record("ContainerInsights", "node_cpu_utilization", typed, t, 50.0))
        lines.append(record("ContainerInsights", "node_gpu_utilization",
                            {"ClusterName": "ml-prod"}, t, 9.0))
        lines.append(record("CWAgent", "nvidia_smi_utilization_gpu",
                            {"InstanceId": "i-0ddd", "index": "0", "host": "h"}, t, 2.0, 4.0))
    return "\n".join(lines) + "\n"


def test_metric_stream_gpu_records(tmp_path: Path) -> None:
    path = tmp_path / "stream.json"
    path.write_text(stream())
    fmt, members = parse_file(path)
    assert fmt == "cloudwatch-metric-stream"
    assert sorted(members) == ["i-0aaa", "i-0bbb", "i-0ccc", "i-0ddd"]
    per_gpu = members["i-0aaa"]
    assert sorted(per_gpu) == ["nvidia0", "nvidia1"]  # its node average is not read beside
    assert set(per_gpu["nvidia1"].util_mean.values()) == {40.0}
    assert set(per_gpu["nvidia1"].util_max.values()) == {70.0}
    assert set(per_gpu["nvidia0"].mem_used_max.values()) == {8192.0}
    four = members["i-0bbb"]
    assert len(four) == 4 and {v for g in four.values() for v in g.util_max.values()} == {12.0}
    (unknown,) = members["i-0ccc"].values()  # no InstanceType: busy wherever above 0
    assert max(unknown.util_max.values()) == 100.0 and min(unknown.util_max.values()) == 0.0
    assert set(members["i-0ddd"]["0"].util_max.values()) == {4.0}


def test_metric_stream_by_key(tmp_path: Path) -> None:
    path = tmp_path / "stream.json"
    path.write_text(stream())
    loaded = load_utilization([f"i-0bbb={path}"], 14)
    assert loaded.errors == []
    members = loaded.records["i-0bbb"]["Members"]
    assert {m["Id"] for m in members} == {"i-0aaa", "i-0bbb", "i-0ccc", "i-0ddd"}


@pytest.mark.parametrize(("edit", "words"), [
    ({"value": {"max": 140.0, "sum": 4, "count": 1}}, "above 100"),
    ({"value": 3}, "not an object"),
    ({"timestamp": 1768435200}, "between 2000 and 2100"),
    ({"value": {"max": "x", "sum": 4, "count": 1}}, "not a measurement"),
])
def test_bad_records_name_the_line(tmp_path: Path, edit: dict[str, Any], words: str) -> None:
    good = stream().splitlines()[0]
    bad = json.loads(good) | edit
    path = tmp_path / "stream.json"
    path.write_text(good + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(TelemetryFileError) as err:
        parse_file(path)
    assert err.value.line == 2 and words in err.value.reason
