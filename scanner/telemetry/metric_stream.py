"""CloudWatch metrics exported as files: a CloudWatch Metric Stream's JSON output (Firehose to
S3, one record per line: ``namespace``, ``metric_name``, ``dimensions``, ``timestamp`` in ms,
``value`` with ``max``/``min``/``sum``/``count``, ``unit``).

Read from it: the metrics ``scanner.telemetry.cloudwatch`` reads live, with the same rules —
CWAgent ``nvidia_smi_*`` per ``InstanceId`` and ``index``; Container Insights ``node_gpu_*`` per
``InstanceId`` and ``GpuDevice`` (else the node's average, bounded by its GPU count from the
``InstanceType`` dimension, or taken as 100 % busy when that count is unknown and the average is
above 0: never a lower utilization than a GPU can have had) and ``node_neuroncore_*`` per
``NeuronCore``. Memory in bytes (Container Insights) is turned into MiB. Other records (other
namespaces, other metrics, the cluster's own figures) are skipped.
"""

from __future__ import annotations

import json
import math
from typing import Any

from scanner.telemetry.aggregate import GpuHours, plausible_time
from scanner.telemetry.cloudwatch import (
    CONTAINER_INSIGHTS,
    CWAGENT,
    NEURON_INSIGHTS,
    NODE,
    MetricSource,
)
from scanner.telemetry.members import Members, TelemetryFileError

SOURCES = (CWAGENT, CONTAINER_INSIGHTS, NEURON_INSIGHTS)
# looked up by a record's (namespace, metric_name), either of which may be missing (None)
_BY_METRIC: dict[tuple[Any, Any], tuple[MetricSource, str]] = {
    (s.namespace, m): (s, m) for s in SOURCES for m in s.metrics}
MAX_RECORDS = 5_000_000  # lines of one file


def _number(value: Any, what: str, path: str, line: int) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(
            value) or value < 0:
        raise TelemetryFileError(path, f"metric stream {what}: {value!r:.30} is not a "
                                       "measurement", line)
    return float(value)


def parse_metric_stream(text: str, path: str) -> Members:
    # (instance, device) -> hourly points; node-level devices are expanded at the end
    gpus: dict[tuple[str, str], GpuHours] = {}
    counts: dict[tuple[str, str], dict[int, int]] = {}
    node_devices: dict[str, int | None] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if number > MAX_RECORDS:
            raise TelemetryFileError(path, f"more than {MAX_RECORDS:,} records: over the "
                                           "budget of one file", number)
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise TelemetryFileError(path, f"not a metric stream record: "
                                           f"{getattr(exc, 'msg', exc)}", number) from None
        if not isinstance(record, dict):
            raise TelemetryFileError(path, "not a metric stream record (a JSON object)", number)
        found = _BY_METRIC.get((record.get("namespace"), record.get("metric_name")))
        if found is None:
            continue
        source, metric = found
        dims = record.get("dimensions") or {}
        if not isinstance(dims, dict):
            raise TelemetryFileError(path, "dimensions is not an object", number)
        iid = dims.get("InstanceId")
        if not iid:
            continue  # the cluster's figure, or a series tied to no instance
        index = str(dims.get(source.index_dim) or (NODE if source is not CWAGENT else ""))
        if not index:
            continue
        stamp = record.get("timestamp")
        try:
            t = plausible_time(_number(stamp, "timestamp", path, number) / 1000.0,
                               f"timestamp {stamp!r:.20} (ms)")
        except ValueError as exc:
            raise TelemetryFileError(path, f"metric stream {exc}", number) from None
        value = record.get("value")
        if not isinstance(value, dict):
            raise TelemetryFileError(path, "value is not an object (max, min, sum, count)",
                                     number)
        count = _number(value.get("count", 1), "count", path, number) or 1.0
        mean = _number(value.get("sum", 0), "sum", path, number) / count
        top = _number(value.get("max", mean), "max", path, number)
        key = (str(iid), index)
        gpu = gpus.get(key) or gpus.setdefault(key, GpuHours(index))
        hour_counts = counts.setdefault(key, {})
        if metric == source.util:
            if top > 100.0 + 1e-6:
                raise TelemetryFileError(path, f"{metric} {top:g} is above 100 %", number)
            gpu.add_sample(t, mean, None, None, hour_counts)
            hour = int(t // 3600) * 3600
            gpu.util_max[hour] = max(gpu.util_max.get(hour, top), top)
        elif metric == source.mem_used:
            gpu.add_sample(t, None, top * source.mem_scale, None, hour_counts)
        elif metric == source.mem_total:
            gpu.mem_total = max(gpu.mem_total or 0.0, top * source.mem_scale)
        if index == NODE:
            node_devices.setdefault(str(iid), _device_count(dims.get("InstanceType"),
                                                            source is NEURON_INSIGHTS))
    members: Members = {}
    per_device = {iid for iid, index in gpus if index != NODE}
    for (iid, index), gpu in sorted(gpus.items()):
        if index != NODE:
            members.setdefault(iid, {})[index] = gpu
        elif iid not in per_device:
            for i, copy in enumerate(_bounded(gpu, node_devices.get(iid))):
                members.setdefault(iid, {})[str(i)] = copy
    if not members:
        raise TelemetryFileError(path, "no GPU or Neuron utilization records of an instance "
                                       "(CWAgent nvidia_smi_*, ContainerInsights node_gpu_* or "
                                       "node_neuroncore_*)")
    return members


def _device_count(instance_type: Any, neuron: bool) -> int | None:
    from scanner.telemetry.cloudwatch import devices_of

    return devices_of(instance_type, neuron=neuron)


def _bounded(node: GpuHours, devices: int | None) -> list[GpuHours]:
    """The node's average as ``devices`` devices, each at that many times it (at most 100 %);
    with the count unknown, one device at 100 % wherever the average is above 0."""
    scale = float(devices) if devices else math.inf

    def bound(v: float) -> float:
        return 0.0 if v == 0 else min(v * scale, 100.0)

    out = []
    for i in range(devices or 1):
        copy = GpuHours(str(i), {h: bound(v) for h, v in node.util_mean.items()},
                        {h: bound(v) for h, v in node.util_max.items()},
                        dict(node.mem_used_max), node.mem_total)
        copy.source = f"{devices} x the node's average" if devices else \
            "the node's average, its GPU count unknown (busy wherever above 0)"
        out.append(copy)
    return out
