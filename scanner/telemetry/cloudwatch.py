"""CloudWatch agent NVIDIA metrics (namespace ``CWAgent``): discover, fetch, aggregate locally.

- Discovery: one paginated ListMetrics walk per metric name. Dimension sets vary with the agent
  configuration (``index``, ``name``, ``host``, ``InstanceId`` when ``append_dimensions`` adds it);
  series are grouped by ``InstanceId`` and ``index`` (never by ``host``: a host name says nothing
  about which instance it was), exact duplicates (moto lists some twice) are dropped, and a GPU
  published under several dimension sets is fetched under each and merged.
- Fetch: per GPU, the hourly Average and Maximum of ``nvidia_smi_utilization_gpu``, the hourly
  Maximum of ``nvidia_smi_memory_used`` and one Maximum of ``nvidia_smi_memory_total`` over the
  whole window (1 data point). The queries are packed into the fewest GetMetricData calls that
  the limits allow (500 queries and 100,800 data points per call; the long series are spread
  evenly so that the one-point ones fit beside them, which meets the lower bound
  ``max(ceil(queries / 500), ceil(points / 100800))`` for these sizes); a NextToken is followed
  all the same.
- Aggregate: p50 and p95 of the hourly means, the maximum of the hourly maxima, peak memory used,
  hours of data, a trend of 6-hour points (``scanner.telemetry.aggregate``). Percentiles are
  computed here, never asked of CloudWatch.
"""

from __future__ import annotations

import datetime as dt
import heapq
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from scanner.telemetry.aggregate import HOUR, Trend, Window, gpu_stats, usage_record

NAMESPACE = "CWAgent"
UTIL, MEM_USED, MEM_TOTAL = (
    "nvidia_smi_utilization_gpu", "nvidia_smi_memory_used", "nvidia_smi_memory_total")
METRICS = (UTIL, MEM_USED, MEM_TOTAL)
MAX_QUERIES = 500
MAX_POINTS = 100_800
NODE = "node"  # the index of a node-level series (the average over the node's accelerators)


@dataclass(frozen=True)
class MetricSource:
    """One family of utilization metrics in CloudWatch: where, what, per which device."""

    name: str  # the record's Source
    namespace: str
    util: str  # percent
    mem_used: str | None
    mem_total: str | None
    index_dim: str  # the dimension naming the device (absent: a node-level series)
    mem_scale: float = 1.0  # one unit of the memory metrics in MiB

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(m for m in (self.util, self.mem_used, self.mem_total) if m)


CWAGENT = MetricSource("cloudwatch", NAMESPACE, UTIL, MEM_USED, MEM_TOTAL, "index")
# EKS Container Insights with enhanced observability (the CloudWatch Observability add-on):
# memory in bytes; per GPU with GpuDevice, else per node (ClusterName, InstanceId, NodeName)
CONTAINER_INSIGHTS = MetricSource("container-insights", "ContainerInsights",
                                  "node_gpu_utilization", "node_gpu_memory_used",
                                  "node_gpu_memory_total", "GpuDevice", 1 / 1048576)
NEURON_INSIGHTS = MetricSource("container-insights-neuron", "ContainerInsights",
                               "node_neuroncore_utilization",
                               "node_neuroncore_memory_usage_total", None, "NeuronCore",
                               1 / 1048576)


class MetricsReader(Protocol):
    """The two CloudWatch reads; None when the call failed (the caller recorded why)."""

    def list_metrics(self, metric_name: str,
                     namespace: str = NAMESPACE) -> list[dict[str, Any]] | None: ...

    def get_metric_data(self, queries: list[dict[str, Any]], start: dt.datetime,
                        end: dt.datetime) -> list[dict[str, Any]] | None: ...


Dims = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Query:
    id: str
    instance: str
    index: str
    metric: str
    stat: str
    period: int
    dims: Dims
    points: int
    namespace: str = NAMESPACE

    def as_api(self) -> dict[str, Any]:
        return {"Id": self.id, "ReturnData": True, "MetricStat": {
            "Metric": {"Namespace": self.namespace, "MetricName": self.metric,
                       "Dimensions": [{"Name": k, "Value": v} for k, v in self.dims]},
            "Period": self.period, "Stat": self.stat}}


@dataclass
class Discovery:
    # (instance id, gpu index) -> metric name -> distinct dimension sets
    series: dict[tuple[str, str], dict[str, list[Dims]]]
    without_instance: int = 0  # series that carry no InstanceId (cannot be tied to one)
    listed: int = 0


def discover(reader: MetricsReader, instances: Iterable[str],
             source: MetricSource = CWAGENT) -> Discovery | None:
    wanted = set(instances)
    found = Discovery({})
    for name in source.metrics:
        metrics = reader.list_metrics(name, source.namespace)
        if metrics is None:
            return None
        seen: set[Dims] = set()  # dimension sets, order-free
        for m in metrics:
            # kept in the order listed (moto matches a query's dimensions only in that order)
            dims: Dims = tuple((str(d.get("Name")), str(d.get("Value")))
                               for d in m.get("Dimensions") or [])
            same = tuple(sorted(dims))
            if same in seen:
                continue  # the same series listed twice
            seen.add(same)
            found.listed += 1
            labels = dict(dims)
            iid = labels.get("InstanceId")
            index = labels.get(source.index_dim) or (NODE if source is not CWAGENT else None)
            if iid is None or index is None:
                if source is CWAGENT or "ClusterName" not in labels or len(labels) > 1:
                    found.without_instance += 1  # (ClusterName alone: the cluster's figure)
                continue
            if iid in wanted:
                found.series.setdefault((iid, index), {}).setdefault(name, []).append(dims)
    # a node's own devices where published: its node-level average is then not needed
    per_device = {iid for iid, index in found.series if index != NODE}
    for key in [k for k in found.series if k[1] == NODE and k[0] in per_device]:
        del found.series[key]
    return found


def plan_queries(found: Discovery, window: Window,
                 source: MetricSource = CWAGENT) -> list[Query]:
    hours = window.hours
    whole = window.end - window.start
    queries: list[Query] = []
    for (iid, index), metrics in sorted(found.series.items()):
        for name, stat, period, points in ((source.util, "Average", HOUR, hours),
                                           (source.util, "Maximum", HOUR, hours),
                                           (source.mem_used, "Maximum", HOUR, hours),
                                           (source.mem_total, "Maximum", whole, 1)):
            for dims in metrics.get(name or "", []):
                queries.append(Query(f"q{len(queries)}", iid, index, str(name), stat, period,
                                     dims, points, source.namespace))
    return queries


def minimum_calls(queries: Sequence[Query]) -> int:
    """The fewest GetMetricData calls the limits allow for these queries."""
    if not queries:
        return 0
    return max(math.ceil(len(queries) / MAX_QUERIES),
               math.ceil(sum(q.points for q in queries) / MAX_POINTS))


def batches(queries: Sequence[Query]) -> list[list[Query]]:
    """The queries in as few calls as the limits allow: for n calls from the lower bound up,
    each query (largest first) goes to the call with the most points left (so the long series
    spread evenly and every call keeps room for the one-point ones); the first n that holds
    them all is used."""
    if not queries:
        return []
    ordered = sorted(queries, key=lambda q: (-q.points, q.id))
    n = minimum_calls(queries)
    while True:
        placed = _spread(ordered, n)
        if placed is not None:
            return [call for call in placed if call]
        n += 1


def _spread(ordered: Sequence[Query], n: int) -> list[list[Query]] | None:
    calls: list[list[Query]] = [[] for _ in range(n)]
    heap = [(-MAX_POINTS, i) for i in range(n)]  # (-points left, call), most room first
    left_q = [MAX_QUERIES] * n
    for q in ordered:
        while heap and left_q[heap[0][1]] == 0:
            heapq.heappop(heap)  # a call with no query left takes nothing more
        if not heap or -heap[0][0] < q.points:
            return None
        neg_left, i = heapq.heappop(heap)
        calls[i].append(q)
        left_q[i] -= 1
        heapq.heappush(heap, (neg_left + q.points, i))
    return calls


# (timestamps as epoch seconds, values); the timestamps are a range when the series is every
# period of its span (the usual case: only the first and last timestamps are converted).
Series = tuple[Sequence[int], list[float]]


def _epoch(t: Any) -> int:
    return int(t.timestamp()) if hasattr(t, "timestamp") else int(t)


def _times(stamps: Sequence[Any], period: int) -> Sequence[int]:
    if not stamps:
        return range(0)
    first = _epoch(stamps[0])
    if len(stamps) == 1:
        return range(first, first + 1)
    last = _epoch(stamps[-1])
    if last - first == (len(stamps) - 1) * period:
        # increasing, distinct and period-aligned (one query's answer): every slot is there
        return range(first, last + 1, period)
    return [_epoch(t) for t in stamps]


def fetch(reader: MetricsReader, calls: list[list[Query]],
          window: Window) -> dict[str, Series] | None:
    start = dt.datetime.fromtimestamp(window.start, dt.timezone.utc)
    end = dt.datetime.fromtimestamp(window.end, dt.timezone.utc)
    out: dict[str, Series] = {}
    for call in calls:
        results = reader.get_metric_data([q.as_api() for q in call], start, end)
        if results is None:
            return None
        parse(results, call, out)
    return out


def parse(results: Iterable[dict[str, Any]], call: Sequence[Query],
          out: dict[str, Series]) -> None:
    """The MetricDataResults of one call (all its pages: a query's points may span pages)."""
    period = {q.id: q.period for q in call}
    for r in results:
        times = _times(r.get("Timestamps") or [], period.get(r["Id"], HOUR))
        values = list(r.get("Values") or [])
        have = out.get(r["Id"])
        if have is None:
            out[r["Id"]] = (times, values)
        else:
            merged = sorted(zip([*have[0], *times], [*have[1], *values], strict=True))
            out[r["Id"]] = ([t for t, _ in merged], [v for _, v in merged])


def _merged(parts: list[Series]) -> Series:
    """One series from the same GPU's series under several dimension sets (max per hour)."""
    if len(parts) == 1:
        return parts[0]  # asked for in ascending order
    merged: dict[int, float] = {}
    for times, values in parts:
        for t, v in zip(times, values, strict=False):
            merged[t] = max(merged.get(t, v), v)
    keys = sorted(merged)
    return keys, [merged[t] for t in keys]


def aggregate(queries: Sequence[Query], data: dict[str, Series], window: Window,
              lookback_days: float, source: MetricSource = CWAGENT,
              devices: Mapping[str, int | None] | None = None) -> dict[str, dict[str, Any]]:
    """``{instance id: usage record}`` for every instance with at least one point.

    A node-level series (Container Insights without a device dimension) is the average over
    the node's ``devices[instance]`` accelerators: the busiest of them is at most that many
    times the average, and each device is given that bound (never fewer used devices, never a
    lower utilization than one of them can have had)."""
    util, used, total_name = source.util, source.mem_used, source.mem_total
    # (metric or None: the source has none, stat) -> series
    by_gpu: dict[tuple[str, str], dict[tuple[str | None, str], list[Series]]] = {}
    for q in queries:
        series = data.get(q.id)
        if series and series[0]:
            by_gpu.setdefault((q.instance, q.index), {}).setdefault(
                (q.metric, q.stat), []).append(series)
    members: dict[str, list[dict[str, Any]]] = {}
    trends: dict[str, Trend] = {}
    for (iid, index), got in sorted(by_gpu.items(), key=lambda kv: (kv[0][0],
                                                                    _index_key(kv[0][1]))):
        avg = _merged(got[(util, "Average")]) if (util, "Average") in got else ([], [])
        top = _merged(got[(util, "Maximum")]) if (util, "Maximum") in got else ([], [])
        scale = source.mem_scale
        mem = [v * scale for s in got.get((used, "Maximum"), []) for v in s[1]]
        total = max((v * scale for s in got.get((total_name, "Maximum"), []) for v in s[1]),
                    default=None)
        means = avg[1] or top[1]
        times = avg[0] or top[0]
        tops = top[1] or means
        count = 1
        known = (devices or {}).get(iid)
        if index == NODE:
            # unknown count: any use may be one device's full use
            count, factor = (int(known), float(known)) if known else (1, math.inf)
            means = [0.0 if v == 0 else min(v * factor, 100.0) for v in means]
            tops = [0.0 if v == 0 else min(v * factor, 100.0) for v in tops]
        maxima = tops if len(tops) == len(means) else means
        for i in range(count):
            stats = gpu_stats(str(i) if index == NODE else index, means, tops, mem, total)
            if index == NODE:
                stats["NodeLevel"] = (f"{count} x the node's average (its busiest device's "
                                      "bound)" if known else "the node's average, its device "
                                      "count unknown: busy wherever above 0")
            members.setdefault(iid, []).append(stats)
        trend = trends.get(iid) or trends.setdefault(iid, Trend(window))
        trend.add(times, means, maxima)
    out = {}
    for iid, gpus in members.items():
        member = {"Id": iid, "Hours": max(g["Hours"] for g in gpus), "Gpus": gpus}
        out[iid] = usage_record(source.name, [member], window, trends[iid], lookback_days)
    return out


def _index_key(index: str) -> tuple[int, str]:
    return (int(index), "") if index.isdigit() else (1 << 30, index)


@dataclass
class Collected:
    records: dict[str, dict[str, Any]]
    calls: int
    minimum: int
    series: int
    without_instance: int


def collect_usage(reader: MetricsReader, instances: Iterable[str], window: Window,
                  lookback_days: float, source: MetricSource = CWAGENT,
                  devices: Mapping[str, int | None] | None = None) -> Collected | None:
    """Discover, fetch and aggregate; None when a call failed."""
    found = discover(reader, instances, source)
    if found is None:
        return None
    queries = plan_queries(found, window, source)
    calls = batches(queries)
    data = fetch(reader, calls, window) if calls else {}
    if data is None:
        return None
    return Collected(aggregate(queries, data, window, lookback_days, source, devices),
                     len(calls), minimum_calls(queries), len(queries), found.without_instance)


# NeuronCores per Neuron device, by family (a node-level average is bounded by their number)
_CORES_PER_DEVICE = {"inf1": 4, "inf2": 2, "trn1": 2, "trn1n": 2, "trn2": 8, "trn2u": 8}


def devices_of(instance_type: object, *, neuron: bool) -> int | None:
    """GPUs (or NeuronCores) of an instance type, from the catalog; None when unknown."""
    from scanner.catalog import default_catalog, family_of

    spec = default_catalog().spec(instance_type)
    if spec is None or not spec.gpu_count or not isinstance(instance_type, str):
        return None
    count = int(spec.gpu_count)
    if neuron:
        count *= _CORES_PER_DEVICE.get(family_of(instance_type), 8)
    return count


def live_window(now: float, lookback_days: float) -> Window:
    """The last ``lookback_days`` of complete hours before ``now``."""
    end = int(now // HOUR) * HOUR
    return Window(end - int(lookback_days * 86400), end)
