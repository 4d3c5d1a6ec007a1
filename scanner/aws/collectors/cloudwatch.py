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

    def list_metrics(self, metric_name: str) -> list[dict[str, Any]] | None:
        from scanner.telemetry.cloudwatch import NAMESPACE

        return self.ctx.list("cloudwatch", "ListMetrics", "Metrics", Namespace=NAMESPACE,
                             MetricName=metric_name)

    def get_metric_data(self, queries: list[dict[str, Any]], start: dt.datetime,
                        end: dt.datetime) -> list[dict[str, Any]] | None:
        return self.ctx.list("cloudwatch", "GetMetricData", "MetricDataResults",
                             MetricDataQueries=queries, StartTime=start, EndTime=end,
                             ScanBy="TimestampAscending")


def run(ctx: RegionContext) -> None:
    from scanner.telemetry.cloudwatch import collect_usage, live_window

    instances = sorted(
        r.id for r in ctx.result.resources
        if r.kind == "ec2.instance" and r.scope == ctx.scope and r.get("State") == "running"
        and is_gpu_type(r.get("InstanceType")) and not is_neuron_type(r.get("InstanceType")))
    days = SETTINGS.lookback_days
    window = live_window(_now(), days)
    collected = collect_usage(_Reader(ctx), instances, window, days) if instances else None
    if instances and collected is None:
        return  # a call failed: recorded as an error and a Gap on both kinds
    for iid, record in sorted((collected.records if collected else {}).items()):
        ctx.add(make(ctx, TELEMETRY, f"telemetry:{iid}", {"Target": iid, **record}))
    attrs: dict[str, Any] = {"Source": "cloudwatch", "LookbackDays": days,
                             "Instances": len(instances)}
    if collected is not None:
        attrs |= {"Series": collected.series, "GetMetricDataCalls": collected.calls,
                  "MinimumCalls": collected.minimum}
        if collected.without_instance:
            ctx.notice("cloudwatch", f"{collected.without_instance} CWAgent NVIDIA series carry "
                                     "no InstanceId dimension and cannot be tied to an instance "
                                     "(add append_dimensions to the agent configuration)")
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
