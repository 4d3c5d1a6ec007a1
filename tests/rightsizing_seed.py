"""The right-sizing estate of the done-criterion, as CloudWatch agent metrics and as a history
file with the same hourly values: a lightly used p3.8xlarge (one of four GPUs at 10-25 %, 5 GB
of memory), an idle g5.2xlarge, and a g4dn.xlarge that publishes nothing.

Timestamps are explicit (the hours before ``END``); the audit reads up to ``END`` through
``GPUAUDIT_TELEMETRY_END``, so runs are identical whatever the date.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

END = dt.datetime(2026, 1, 15, tzinfo=dt.timezone.utc)
END_TEXT = "2026-01-15T00:00:00Z"
HOURS = 72
BATCH = 100  # moto is slow with big PutMetricData batches
MACHINES = {"trainer": "p3.8xlarge", "idle": "g5.2xlarge", "dark": "g4dn.xlarge"}
TOTAL_MIB = {"p3.8xlarge": 16160.0, "g5.2xlarge": 22888.0}
GPUS = {"p3.8xlarge": 4, "g5.2xlarge": 1}


def hour(h: int) -> dt.datetime:
    """The middle of the h-th hour of the window (0 = the oldest)."""
    return END - dt.timedelta(hours=HOURS - h) + dt.timedelta(minutes=30)


def sample(instance_type: str, gpu: int, h: int) -> tuple[float, float]:
    """(utilization %, memory used MiB) of one GPU in hour h."""
    if instance_type == "p3.8xlarge":
        return (10.0 + (h * 7) % 16, 5000.0) if gpu == 0 else (0.0, 0.0)
    return float(h % 3), 300.0  # the idle g5.2xlarge: 0-2 %, a driver context of memory


def _points(instance_id: str, instance_type: str) -> Iterator[dict[str, Any]]:
    for gpu in range(GPUS.get(instance_type, 0)):
        dims = [{"Name": "InstanceId", "Value": instance_id}, {"Name": "index", "Value": str(gpu)},
                {"Name": "host", "Value": f"ip-10-0-0-{gpu}.ec2.internal"},
                {"Name": "name", "Value": "Tesla V100-SXM2-16GB"}]
        for h in range(HOURS):
            util, used = sample(instance_type, gpu, h)
            yield {"MetricName": "nvidia_smi_utilization_gpu", "Dimensions": dims,
                   "Timestamp": hour(h), "Value": util}
            yield {"MetricName": "nvidia_smi_memory_used", "Dimensions": dims,
                   "Timestamp": hour(h), "Value": used}
            if h % 24 == 0:
                yield {"MetricName": "nvidia_smi_memory_total", "Dimensions": dims,
                       "Timestamp": hour(h), "Value": TOTAL_MIB[instance_type],
                       }


def seed_cloudwatch(cloudwatch: Any, instances: dict[str, str]) -> int:
    """PutMetricData for ``{instance id: type}`` in batches; the number of points sent."""
    points = [p for iid, itype in sorted(instances.items()) for p in _points(iid, itype)]
    for i in range(0, len(points), BATCH):
        cloudwatch.put_metric_data(Namespace="CWAgent", MetricData=points[i: i + BATCH])
    return len(points)


def history(keys: dict[str, str]) -> dict[str, Any]:
    """The same hourly values as a history file, ``{key: instance type}``."""
    resources: dict[str, Any] = {}
    for key, itype in keys.items():
        if itype not in GPUS:
            continue
        resources[key] = {"gpus": [
            {"index": gpu, "memory_total_mib": TOTAL_MIB[itype],
             "samples": [[hour(h).strftime("%Y-%m-%dT%H:%M:%SZ"), *sample(itype, gpu, h)]
                         for h in range(HOURS)]}
            for gpu in range(GPUS[itype])]}
    return {"gpuaudit_utilization": 1, "end": END_TEXT, "resources": resources}


def terraform(directory: Path) -> dict[str, str]:
    """main.tf with the three machines, deployed to us-east-1 (a right-sizing move needs the
    region: the candidate type must be offered there); ``{address: type}``."""
    provider = 'provider "aws" {\n  region = "us-east-1"\n}\n'
    blocks = [provider] + [f'resource "aws_instance" "{name}" {{\n  ami           = '
                           f'"ami-12c6146b"\n  instance_type = "{itype}"\n}}\n'
                           for name, itype in MACHINES.items()]
    (directory / "main.tf").write_text("\n".join(blocks))
    return {f"aws_instance.{name}": itype for name, itype in MACHINES.items()}


def write_history(path: Path, keys: dict[str, str]) -> None:
    path.write_text(json.dumps(history(keys)))
