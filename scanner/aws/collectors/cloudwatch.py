"""GPU utilization of the region's running NVIDIA instances from the CloudWatch agent's metrics.

Runs only when a right-sizing policy is enabled (its kinds are RS-*'s), after the instances are
read: ListMetrics (one walk per metric name) and the fewest GetMetricData calls the limits allow
(``scanner.telemetry.cloudwatch``). It adds one ``telemetry.gpu_utilization`` resource per
instance with data and one ``telemetry.coverage`` marker for the region; a failed call leaves a
Gap on both (RS-* give ERROR there, never "no telemetry").

The window is the last ``lookback_days`` of complete hours (``audit --lookback-days``, default
14), ending now or at ``GPUAUDIT_TELEMETRY_END`` (RFC 3339; reproducible runs and tests).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from scanner.aws.collectors.base import Call, Collector, RegionContext
from scanner.aws.normalize import make
from scanner.catalog import is_gpu_type, is_neuron_type
from scanner.telemetry import COVERAGE, TELEMETRY


@dataclass
class Settings:
    lookback_days: float = 14.0


SETTINGS = Settings()


def configure(*, lookback_days: float) -> None:
    """Set by `gpuaudit audit` before collecting (one audit per process)."""
    SETTINGS.lookback_days = float(lookback_days)


def _now() -> float:
    from scanner.telemetry.aggregate import telemetry_end

    return telemetry_end()


class _Reader:
    def __init__(self, ctx: RegionContext) -> None:
        self.ctx = ctx

    def list_metrics(self, metric_name: str,
                     namespace: str = "CWAgent") -> list[dict[str, Any]] | None:
        return self.ctx.list("cloudwatch", "ListMetrics", "Metrics", Namespace=namespace,
                             MetricName=metric_name)

    def get_metric_data(self, queries: list[dict[str, Any]], start: dt.datetime,
                        end: dt.datetime) -> list[dict[str, Any]] | None:
        return self.ctx.list("cloudwatch", "GetMetricData", "MetricDataResults",
                             MetricDataQueries=queries, StartTime=start, EndTime=end,
                             ScanBy="TimestampAscending")


def run(ctx: RegionContext) -> None:
    """CWAgent NVIDIA metrics for the running NVIDIA instances; Container Insights GPU metrics
    for those without them (EKS nodes); Container Insights Neuron metrics for Neuron ones."""
    from scanner.telemetry.cloudwatch import (
        CONTAINER_INSIGHTS,
        CWAGENT,
        NEURON_INSIGHTS,
        Collected,
        collect_usage,
        devices_of,
        live_window,
    )

    running = [r for r in ctx.result.resources
               if r.kind == "ec2.instance" and r.scope == ctx.scope
               and r.get("State") == "running" and is_gpu_type(r.get("InstanceType"))]
    types = {r.id: r.get("InstanceType") for r in running}
    nvidia = sorted(i for i, t in types.items() if not is_neuron_type(t))
    neuron = sorted(i for i, t in types.items() if is_neuron_type(t))
    days = SETTINGS.lookback_days
    window = live_window(_now(), days)
    reader = _Reader(ctx)
    runs: list[Collected] = []
    collected = collect_usage(reader, nvidia, window, days) if nvidia else None
    if nvidia and collected is None:
        return  # a call failed: recorded as an error and a Gap on both kinds
    records = dict(collected.records) if collected else {}
    runs += [collected] if collected else []
    for source, ids in ((CONTAINER_INSIGHTS, [i for i in nvidia if i not in records]),
                        (NEURON_INSIGHTS, neuron)):
        if not ids:
            continue
        devices = {i: devices_of(types[i], neuron=source is NEURON_INSIGHTS) for i in ids}
        more = collect_usage(reader, ids, window, days, source, devices)
        if more is None:
            return
        records |= more.records
        runs.append(more)
    for iid, record in sorted(records.items()):
        ctx.add(make(ctx, TELEMETRY, f"telemetry:{iid}", {"Target": iid, **record}))
        if iid in neuron:  # measured, and said: RS-* judge NVIDIA types only
            top = max((g.get("UtilMax") or 0.0 for m in record["Members"] for g in m["Gpus"]),
                      default=0.0)
            ctx.notice("cloudwatch", f"{iid} ({types[iid]}): NeuronCore utilization at most "
                                     f"{top:g} % over {record['Hours']} hours of the last "
                                     f"{days:g} days (Container Insights); the right-sizing "
                                     "policies do not judge Neuron instances")
    attrs: dict[str, Any] = {"Source": "cloudwatch", "LookbackDays": days,
                             "Instances": len(nvidia) + len(neuron)}
    if runs:
        attrs |= {"Series": sum(r.series for r in runs),
                  "GetMetricDataCalls": sum(r.calls for r in runs),
                  "MinimumCalls": sum(r.minimum for r in runs)}
    if collected is not None and collected.without_instance:
        ctx.notice("cloudwatch", f"{collected.without_instance} {CWAGENT.namespace} NVIDIA "
                                 "series carry no InstanceId dimension and cannot be tied to an "
                                 "instance (add append_dimensions to the agent configuration)")
    ctx.add(make(ctx, COVERAGE, f"telemetry-coverage:{ctx.scope}", attrs))


COLLECTOR = Collector(
    name="cloudwatch",
    calls=(
        Call("cloudwatch", "ListMetrics", (TELEMETRY, COVERAGE)),
        Call("cloudwatch", "GetMetricData", (TELEMETRY, COVERAGE)),
    ),
    run=run,
    after=("instances",),  # the running GPU instances whose metrics it reads
)
